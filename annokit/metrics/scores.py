"""Proper scores and accuracy against hard labels or human distributions.

:func:`accuracy`, :func:`brier_score` and :func:`negative_log_likelihood`, each
against hard labels (class indices) or, for the scores, soft targets (the human
distribution), with ``reduction="mean"`` (default) or ``"none"`` for per-item
values. The per-item values come from the one implementation that the metric
states sum (:func:`annokit.metrics.kernels.item_values`), so the means equal the
registered metrics
``accuracy``, ``brier``/``brier_soft`` and ``nll_majority``/``nll``
(:mod:`annokit.metrics.registry`) on the same rows; use those states for
batches, shards and item weights.

References
----------
Brier (1950). Verification of Forecasts Expressed in Terms of Probability.
Monthly Weather Review 78(1), 1-3.
DOI:10.1175/1520-0493(1950)078<0001:VOFEIT>2.0.CO;2.

Gneiting, Raftery (2007). Strictly Proper Scoring Rules, Prediction, and
Estimation. JASA 102(477), 359-378. DOI:10.1198/016214506000001437.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from annokit.core.checks import check_open_unit, check_option
from annokit.core.divergence import KL_EPS
from annokit.metrics import kernels as _kernels
from annokit.metrics import sums as _sums

__all__ = ["accuracy", "brier_score", "negative_log_likelihood"]

_REDUCTIONS = ("mean", "none")
_NAMES = ("probs", "targets", "labels")


def _reduce(values: np.ndarray, reduction: str) -> float | np.ndarray:
    check_option("reduction", reduction, _REDUCTIONS)
    return float(values.mean()) if reduction == "mean" else values


def _per_item(probs: Any, y: Any, hard_quantity: str, soft_quantity: str,
              eps: float = KL_EPS) -> np.ndarray:
    """The per-item quantity against ``y``: hard labels (1-D class indices) or soft targets
    (2-D), checked (shapes here, values in the kernel's pass)."""
    arr = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y)
    hard, soft = (arr, None) if arr.ndim == 1 else (None, arr)
    p, t, h, _ = _sums.prepare(probs, soft, hard, names=_NAMES, allow_empty=False)
    q = hard_quantity if t is None else soft_quantity
    return _kernels.item_values(p, t, h, (q,), eps=eps, names=_NAMES)[:, 0]


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
    SchemaError, InvalidValueError
        On invalid input.

    Examples
    --------
    >>> accuracy([[0.9, 0.1], [0.4, 0.6]], [0, 0])
    0.5
    """
    check_option("reduction", reduction, _REDUCTIONS)
    p, _, y, _ = _sums.prepare(probs, None, labels, names=_NAMES, allow_empty=False)
    return _reduce(_kernels.item_values(p, None, y, ("accuracy",), names=_NAMES)[:, 0],
                   reduction)


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
    SchemaError, InvalidValueError
        On invalid input.

    Examples
    --------
    >>> round(brier_score([[0.8, 0.2]], [0]), 6)
    0.08
    >>> round(brier_score([[0.8, 0.2]], [[0.5, 0.5]]), 6)
    0.18
    """
    check_option("reduction", reduction, _REDUCTIONS)
    return _reduce(_per_item(probs, labels_or_targets, "brier", "brier_soft"), reduction)


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
    SchemaError, InvalidValueError
        On invalid input or ``eps`` outside (0, 1).

    Examples
    --------
    >>> round(negative_log_likelihood([[0.5, 0.5]], [1]), 6)
    0.693147
    """
    check_option("reduction", reduction, _REDUCTIONS)
    eps = check_open_unit("eps", eps)
    return _reduce(_per_item(probs, labels_or_targets, "nll_majority", "nll", eps), reduction)
