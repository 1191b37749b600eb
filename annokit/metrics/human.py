"""Calibration to human judgement distributions (Baan et al. 2022) and proper scores.

Per-item measures compare a model distribution ``f(x)`` with the human
distribution ``pi(x)`` (normalised vote counts) on the same label order:

- EntCE, signed ``H(f(x)) - H(pi(x))`` in **nats** (Baan et al. 2022, Eq. 5; their
  code uses the natural log; dataset statistics elsewhere in annokit are in bits);
- RankCS, whether the model ranks the classes as humans do (Eq. 6);
- DistCE, ``TVD(f(x), pi(x))`` (Eq. 7), via :func:`annokit.core.divergence.tvd`.

Scores: :func:`accuracy`, :func:`brier_score`, :func:`negative_log_likelihood`,
each against hard labels or soft targets, with ``reduction="mean"`` (default) or
``"none"`` for per-item values.

References
----------
Baan, Aziz, Plank, Fernandez (2022). Stop Measuring Calibration When Humans
Disagree. EMNLP. arXiv:2210.16133.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from annokit.core.checks import check_option
from annokit.core.divergence import KL_EPS, tvd
from annokit.core.soft_labels import entropy
from annokit.errors import VoteSchemaError
from annokit.metrics import _binning

__all__ = [
    "RANK_SORT_KIND",
    "SUMMARY_KEYS",
    "accuracy",
    "brier_score",
    "calibration_summary",
    "distribution_calibration_error",
    "entropy_calibration_error",
    "negative_log_likelihood",
    "rank_calibration_score",
]

#: Sort kind for RankCS. Baan et al.'s code calls ``np.argsort`` with the default
#: kind ("quicksort" = introsort), which in the numpy of 2022 ran an insertion
#: sort for fewer than 17 elements and was therefore stable; "stable" gives that
#: order for any number of classes (tied classes keep the votes' label order).
#: Newer numpy (>= 1.25) may dispatch the default kind to a SIMD sort on AVX-512
#: CPUs that does not keep ties in order, so the default is no longer reproducible.
RANK_SORT_KIND = "stable"

_REDUCTIONS = ("mean", "none")


def _pair(probs: Any, targets: Any) -> tuple[np.ndarray, np.ndarray]:
    p, _, t = _binning.validate_inputs(probs, None, targets)
    return p, t


def _targets_or_labels(probs: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    """``y`` as hard labels (1-D, one-hot encoded) or soft targets (2-D)."""
    p = _binning.validate_inputs(probs)[0]
    y = y.to_numpy() if hasattr(y, "to_numpy") else y
    arr = np.asarray(y)
    if arr.ndim == 1:
        labels = _binning.check_labels(arr, p.shape[0], p.shape[1])
        t = np.zeros_like(p)
        t[np.arange(p.shape[0]), labels] = 1.0
        return p, t
    return _pair(p, arr)


def _reduce(values: np.ndarray, reduction: str) -> float | np.ndarray:
    check_option("reduction", reduction, _REDUCTIONS)
    return float(values.mean()) if reduction == "mean" else values


def entropy_calibration_error(probs: Any, targets: Any) -> np.ndarray:
    """Signed entropy calibration error per item, ``H(model) - H(human)`` in nats.

    Positive values mean the model is less certain than the annotators,
    negative values more certain (Baan et al. 2022, Eq. 5). The mean absolute
    value ``np.abs(ent_ce).mean()`` is their summary E[|EntCE|].

    Parameters
    ----------
    probs : array-like of shape (n_items, n_labels)
        Model distributions.
    targets : array-like of shape (n_items, n_labels)
        Human distributions in the same label order.

    Returns
    -------
    ndarray of shape (n_items,)
        In nats (natural log); ``0 log 0 = 0``.

    Raises
    ------
    VoteSchemaError
        If either input is not a matrix of finite distributions or shapes differ.

    Examples
    --------
    >>> entropy_calibration_error([[0.5, 0.5]], [[1.0, 0.0]]).round(6).tolist()
    [0.693147]
    """
    p, t = _pair(probs, targets)
    return entropy(p, base=None) - entropy(t, base=None)


def rank_calibration_score(probs: Any, targets: Any, *, tie_aware: bool = False) -> np.ndarray:
    """Per item, whether the model ranks the classes as the annotators do (Baan et al. RankCS).

    Parameters
    ----------
    probs : array-like of shape (n_items, n_labels)
    targets : array-like of shape (n_items, n_labels)
        Human distributions in the votes' label order.
    tie_aware : bool, default False
        False: the paper's definition as its code computes it, exact equality of
        the ascending ``np.argsort(..., kind="stable")`` of model and human rows,
        so classes tied among the annotators must appear in the votes' label
        order. True: correct when the model's ranking is consistent with *some*
        ordering of the tied human classes, i.e. the human probabilities read in
        the model's ascending order never decrease.

    Returns
    -------
    ndarray of bool, shape (n_items,)
        Its mean is RankCS (Baan et al. 2022, Eq. 6).

    Raises
    ------
    VoteSchemaError
        On invalid input.

    Notes
    -----
    Ties in the *model* row are ordered by label index in both variants (stable
    sort). Baan et al. leave human ties unspecified (their footnote 4); their
    code's default ``np.argsort`` was, in the numpy of 2022, an insertion sort
    for fewer than 17 classes, which is stable, so ``kind="stable"`` reproduces
    it (see :data:`RANK_SORT_KIND`; today's default kind can be unstable).

    Examples
    --------
    >>> rank_calibration_score([[0.3, 0.2, 0.5]], [[0.1, 0.1, 0.8]]).tolist()
    [False]
    >>> rank_calibration_score([[0.3, 0.2, 0.5]], [[0.1, 0.1, 0.8]], tie_aware=True).tolist()
    [True]
    """
    p, t = _pair(probs, targets)
    order = np.argsort(p, axis=1, kind=RANK_SORT_KIND)
    if not tie_aware:
        return (order == np.argsort(t, axis=1, kind=RANK_SORT_KIND)).all(axis=1)
    human_in_model_order = np.take_along_axis(t, order, axis=1)
    return (np.diff(human_in_model_order, axis=1) >= 0).all(axis=1)


def distribution_calibration_error(probs: Any, targets: Any) -> np.ndarray:
    """DistCE per item: total variation distance between model and human (Baan et al. Eq. 7).

    Parameters
    ----------
    probs : array-like of shape (n_items, n_labels)
    targets : array-like of shape (n_items, n_labels)

    Returns
    -------
    ndarray of shape (n_items,)
        ``0.5 * sum_j |f_j - pi_j|``, in [0, 1].

    Raises
    ------
    VoteSchemaError
        On invalid input.

    Examples
    --------
    >>> distribution_calibration_error([[0.7, 0.3]], [[0.5, 0.5]]).round(6).tolist()
    [0.2]
    """
    p, t = _pair(probs, targets)
    return tvd(p, t)


def accuracy(probs: Any, labels: Any, *, reduction: str = "mean") -> float | np.ndarray:
    """Fraction of items whose ``argmax`` (first column on ties) equals ``labels``.

    Parameters
    ----------
    probs : array-like of shape (n_items, n_labels)
    labels : array-like of shape (n_items,)
        Class indices, e.g. the human majority (resolve its ties explicitly with
        :func:`annokit.core.soft_labels.majority`).
    reduction : {"mean", "none"}, default "mean"
        "none" returns the per-item 0/1 values.

    Returns
    -------
    float or ndarray of shape (n_items,)

    Raises
    ------
    VoteSchemaError
        On invalid input.

    Examples
    --------
    >>> accuracy([[0.9, 0.1], [0.4, 0.6]], [0, 0])
    0.5
    """
    p, y, _ = _binning.validate_inputs(probs, labels)
    return _reduce((p.argmax(axis=1) == y).astype(np.float64), reduction)


def brier_score(probs: Any, labels_or_targets: Any, *, reduction: str = "mean"
                ) -> float | np.ndarray:
    """Multiclass Brier score ``mean_i sum_j (p_ij - y_ij)^2`` (Brier 1950).

    Parameters
    ----------
    probs : array-like of shape (n_items, n_labels)
    labels_or_targets : array-like of shape (n_items,) or (n_items, n_labels)
        Class indices (one-hot encoded, e.g. the majority label) or soft targets
        (the human distribution).
    reduction : {"mean", "none"}, default "mean"

    Returns
    -------
    float or ndarray of shape (n_items,)
        Summed over classes, averaged over items: in [0, 2]. (scikit-learn's
        binary ``brier_score_loss`` is half of this for two classes.)

    Raises
    ------
    VoteSchemaError
        On invalid input.

    Examples
    --------
    >>> round(brier_score([[0.8, 0.2]], [0]), 6)
    0.08
    >>> round(brier_score([[0.8, 0.2]], [[0.5, 0.5]]), 6)
    0.18
    """
    p, t = _targets_or_labels(probs, labels_or_targets)
    return _reduce(((p - t) ** 2).sum(axis=1), reduction)


def negative_log_likelihood(probs: Any, labels_or_targets: Any, *, eps: float = KL_EPS,
                            reduction: str = "mean") -> float | np.ndarray:
    """Negative log-likelihood / cross-entropy ``-sum_j y_ij log max(p_ij, eps)`` in nats.

    Parameters
    ----------
    probs : array-like of shape (n_items, n_labels)
    labels_or_targets : array-like of shape (n_items,) or (n_items, n_labels)
        Class indices (NLL) or soft targets (cross-entropy against the human
        distribution). Terms with ``y_ij = 0`` contribute 0.
    eps : float, default 1e-15
        Model probabilities are clipped to at least ``eps`` (as in ChaosNLI's KL).
    reduction : {"mean", "none"}, default "mean"

    Returns
    -------
    float or ndarray of shape (n_items,)

    Raises
    ------
    VoteSchemaError
        On invalid input.

    Examples
    --------
    >>> round(negative_log_likelihood([[0.5, 0.5]], [1]), 6)
    0.693147
    """
    p, t = _targets_or_labels(probs, labels_or_targets)
    if not (isinstance(eps, (int, float)) and 0 < eps < 1):
        raise VoteSchemaError(f"eps must be a number in (0, 1); got {eps!r}")
    logp = np.log(np.maximum(p, eps))
    terms = np.where(t > 0, t * logp, 0.0)
    return _reduce(-terms.sum(axis=1), reduction)


#: Keys of :func:`calibration_summary`, in order.
SUMMARY_KEYS = ("accuracy", "ece", "mce", "classwise_ece", "smece", "smece_classwise",
                "rank_cs", "rank_cs_tie_aware", "ent_ce", "ent_ce_signed", "dist_ce", "jsd",
                "kl", "brier", "brier_soft", "nll", "nll_majority")


#: Summary key -> name of the fused kernel's per-item sum (see _fast.SUMMARY_SUMS).
_SUM_OF = {"nll": "nll_soft", "nll_majority": "nll"}


def _summary_numpy(p: np.ndarray, y: np.ndarray, t: np.ndarray, n_bins: int) -> dict[str, float]:
    """Reference: the individual public functions, one after the other."""
    from annokit.core.divergence import jensen_shannon_distance, kl_divergence
    from annokit.metrics import calibration as cal

    ent = entropy_calibration_error(p, t)
    return {
        "accuracy": accuracy(p, y),
        "ece": cal.expected_calibration_error(p, y, n_bins=n_bins),
        "mce": cal.max_calibration_error(p, y, n_bins=n_bins),
        "classwise_ece": cal.classwise_calibration_error(p, y, n_bins=n_bins),
        "smece": cal.soft_calibration_error(p, t, n_bins=n_bins),
        "smece_classwise": cal.soft_calibration_error(p, t, n_bins=n_bins, mode="classwise"),
        "rank_cs": float(rank_calibration_score(p, t).mean()),
        "rank_cs_tie_aware": float(rank_calibration_score(p, t, tie_aware=True).mean()),
        "ent_ce": float(np.abs(ent).mean()),
        "ent_ce_signed": float(ent.mean()),
        "dist_ce": float(distribution_calibration_error(p, t).mean()),
        "jsd": float(jensen_shannon_distance(t, p).mean()),
        "kl": float(kl_divergence(t, p).mean()),
        "brier": brier_score(p, y),
        "brier_soft": brier_score(p, t),
        "nll": negative_log_likelihood(p, t),
        "nll_majority": negative_log_likelihood(p, y),
    }


def calibration_summary(probs: Any, labels: Any, targets: Any, *, n_bins: int = 10
                        ) -> dict[str, float]:
    """Every scalar metric of a model against hard and soft targets, in one pass.

    For large inputs (and numba installed) a fused kernel reads each array once
    and checks the values in the same pass; otherwise the public functions of
    this module and :mod:`annokit.metrics.calibration` run one after another.
    Both give the same numbers (to floating-point summation order).

    Parameters
    ----------
    probs : array-like of shape (n_items, n_labels)
        Model distributions.
    labels : array-like of shape (n_items,)
        Hard targets (e.g. the human majority with ties resolved explicitly).
    targets : array-like of shape (n_items, n_labels)
        Human distributions in the same label order.
    n_bins : int, default 10
        Equal-width bins for the binned metrics.

    Returns
    -------
    dict
        ``accuracy``; ``ece``, ``mce``, ``classwise_ece`` (against ``labels``);
        ``smece`` (top-label) and ``smece_classwise`` (against ``targets``);
        ``rank_cs`` and ``rank_cs_tie_aware``; ``ent_ce`` (mean |EntCE|, nats) and
        ``ent_ce_signed`` (mean EntCE, nats); ``dist_ce`` (mean TVD); ``jsd``
        (mean Jensen-Shannon distance, scipy convention) and ``kl`` (mean
        KL(human || model), nats, model clipped at 1e-15); ``brier`` (against
        one-hot ``labels``) and ``brier_soft`` (against ``targets``), both summed
        over classes; ``nll`` (cross-entropy against ``targets``) and
        ``nll_majority`` (NLL of ``labels``), nats. The names are those of
        :mod:`annokit.metrics.engine` and ``annokit evaluate --json``.

    Raises
    ------
    VoteSchemaError
        On invalid input.

    Examples
    --------
    >>> s = calibration_summary([[0.8, 0.2], [0.3, 0.7]], [0, 1], [[0.6, 0.4], [0.3, 0.7]])
    >>> round(s["dist_ce"], 6), s["rank_cs"]
    (0.1, 1.0)
    """
    from annokit.metrics import _fast
    from annokit.metrics.calibration import _validate

    n_bins = _binning.check_n_bins(n_bins)
    p, y, t = _validate(probs, labels, targets)
    if _fast.use_fast(p.shape[0]):
        out = _fast.summary_fast(p, y, t, _binning.uniform_edges(n_bins))
        if out is not None:
            stats, sums = out
            means = dict(zip(_fast.SUMMARY_SUMS, (sums / p.shape[0]).tolist()))
            return {
                "accuracy": means["accuracy"],
                "ece": _binning.compute_top(stats),
                "mce": _binning.compute_top(stats, reduce="max"),
                "classwise_ece": _binning.compute_classwise(stats),
                "smece": _binning.compute_top(stats, soft=True),
                "smece_classwise": _binning.compute_classwise(stats, soft=True),
                **{key: means[_SUM_OF.get(key, key)] for key in SUMMARY_KEYS[6:]},
            }
        p, y, t = _binning.validate_inputs(p, y, t)
    return _summary_numpy(p, y, t, n_bins)
