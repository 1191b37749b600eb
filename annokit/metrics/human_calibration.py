"""Calibration to human judgement distributions, per item (Baan et al. 2022).

Per-item measures compare a model distribution ``f(x)`` with the human
distribution ``pi(x)`` (normalised vote counts) on the same label order:

- EntCE, signed ``H(f(x)) - H(pi(x))`` in **nats** (Baan et al. 2022, Eq. 5; their
  code uses the natural log; dataset statistics elsewhere in annokit are in bits);
- RankCS, whether the model ranks the classes as humans do (Eq. 6);
- DistCE, ``TVD(f(x), pi(x))`` (Eq. 7).

These are the per-item values; their (weighted, mergeable) means are the
registered metrics ``ent_ce``/``ent_ce_signed``, ``rank_cs``/``rank_cs_tie_aware``
and ``dist_ce`` (:mod:`annokit.metrics.registry`), computed by the same kernel
(:func:`annokit.metrics.kernels.item_values`).

References
----------
Baan, Aziz, Plank, Fernandez (2022). Stop Measuring Calibration When Humans
Disagree. EMNLP. arXiv:2210.16133.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from annokit.metrics import kernels as _kernels
from annokit.metrics import sums as _sums
from annokit.metrics.sums import RANK_SORT_KIND

__all__ = [
    "RANK_SORT_KIND",
    "distribution_calibration_error",
    "entropy_calibration_error",
    "rank_calibration_score",
]

_NAMES = ("probs", "targets", "labels")


def _per_item(probs: Any, targets: Any, quantity: str) -> np.ndarray:
    """The per-item quantity of model and human rows, from the one implementation that the
    metric states sum (:func:`annokit.metrics.kernels.item_values`); shapes checked here,
    values in the kernel's pass."""
    p, t, _, _ = _sums.prepare(probs, targets, names=_NAMES, allow_empty=False)
    return _kernels.item_values(p, t, None, (quantity,), names=_NAMES)[:, 0]


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
    SchemaError
        Shapes differ or are not 2-D.
    InvalidValueError
        A row of either input is not a distribution.

    Notes
    -----
    ``EntCE(x) = H(f(x)) - H(pi(x))``, ``H(q) = -sum_j q_j log q_j``.

    Examples
    --------
    >>> entropy_calibration_error([[0.5, 0.5]], [[1.0, 0.0]]).round(6).tolist()
    [0.693147]
    """
    return _per_item(probs, targets, "ent_ce_signed")


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
    SchemaError, InvalidValueError
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
    return _per_item(probs, targets, "rank_cs_tie_aware" if tie_aware else "rank_cs") > 0.5


def distribution_calibration_error(probs: Any, targets: Any) -> np.ndarray:
    """DistCE per item: total variation distance between model and human (Baan et al. Eq. 7).

    Parameters
    ----------
    probs : array-like of shape (n_items, n_labels)
    targets : array-like of shape (n_items, n_labels)

    Returns
    -------
    ndarray of shape (n_items,)
        ``0.5 * sum_j |f_j - pi_j|``, in [0, 1]; equals
        :func:`annokit.core.divergence.tvd`.

    Raises
    ------
    SchemaError, InvalidValueError
        On invalid input.

    Examples
    --------
    >>> distribution_calibration_error([[0.7, 0.3]], [[0.5, 0.5]]).round(6).tolist()
    [0.2]
    """
    return _per_item(probs, targets, _sums.TVD_QUANTITY)
