"""Binned calibration errors: ECE, MCE, adaptive ECE, classwise ECE, SMECE, reliability data.

Thin named forms of the metric states (:mod:`annokit.metrics.states`): each
function builds the state of its metric, updates it with all rows and computes
it, so ``expected_calibration_error(p, y)`` equals
``annokit.metrics.compute("ece", p, hard=y)`` and the engine's value on the
same rows. For batches, shards and weights use the states themselves.

Binning: bins are ``[lo, hi)`` with the last bin closed, i.e. the bin of ``c`` is
``clip(searchsorted(edges, c, "right") - 1, 0, n_bins - 1)`` (torchmetrics'
``bucketize(c, edges, right=True) - 1``). See :mod:`annokit.metrics._binning`.

Inputs are checked the same way by every metric: ``probs`` and ``targets`` rows
finite, ``>= 0`` and summing to 1 within 1e-6, else
:class:`~annokit.errors.InvalidValueError` naming the row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from annokit.core.checks import check_option
from annokit.errors import SchemaError
from annokit.metrics import _binning
from annokit.metrics import kernels as _kernels
from annokit.metrics import sums as _sums
from annokit.metrics._binning import BinStats
from annokit.metrics.states import (
    AdaptiveBinnedState,
    BinnedState,
    MetricState,
    edge_bin_stats,
    update_many,
)

__all__ = [
    "ReliabilityDiagram",
    "classwise_calibration_error",
    "expected_calibration_error",
    "max_calibration_error",
    "reliability_diagram",
    "soft_calibration_error",
]

_STRATEGIES = ("uniform", "quantile")
_SOFT_MODES = ("top_label", "classwise", "binary")
#: Argument names of the named functions, for error messages.
_NAMES = ("probs", "targets", "labels")


def _run(state: MetricState, probs: Any, targets: Any = None, labels: Any = None) -> float:
    update_many([state], probs, targets, labels, names=_NAMES, allow_empty=False)
    return state.compute()


def expected_calibration_error(probs: Any, labels: Any, *, n_bins: int = 10,
                               strategy: str = "uniform") -> float:
    """Top-label expected calibration error (Naeini et al. 2015; Guo et al. 2017).

    Parameters
    ----------
    probs : array-like of shape (n_items, n_labels)
        Predicted distributions; rows sum to 1. A list, ndarray or DataFrame.
    labels : array-like of shape (n_items,)
        Hard targets as class indices (columns of ``probs``).
    n_bins : int, default 10
        Number of bins.
    strategy : {"uniform", "quantile"}, default "uniform"
        ``"uniform"``: equal-width bins on [0, 1] (registry name ``ece``).
        ``"quantile"``: equal-mass (adaptive) bins whose edges are the
        ``b / n_bins`` quantiles of the confidences (Nixon et al. 2019;
        registry name ``ece_adaptive``). **Ties**: tied confidences always stay
        in one bin (as in uncertainty-calibration), so bins can be unequal or
        empty on tie-heavy data; implementations that split the sorted items
        into equal-count groups (torch-uncertainty) split ties by sort position
        and can differ noticeably there.

    Returns
    -------
    float
        ``ECE = sum_b |B_b|/n * |acc(B_b) - conf(B_b)|`` (Guo et al. 2017, Eq. 3),
        in [0, 1].

    Raises
    ------
    SchemaError
        Wrong shapes or dtypes.
    InvalidValueError
        ``probs`` rows off the simplex, ``labels`` out of range, an invalid option.

    Notes
    -----
    Confidence is ``max_j p_ij`` and the prediction ``argmax_j p_ij`` (first
    column on ties). Bins are ``[lo, hi)``, the last one closed: the
    torchmetrics convention ``bucketize(conf, edges, right=True) - 1``, clipped.
    Empty bins contribute 0.

    References
    ----------
    Guo, Pleiss, Sun, Weinberger (2017). On Calibration of Modern Neural
    Networks. ICML. arXiv:1706.04599.

    Nixon, Dusenberry, Zhang, Jerfel, Tran (2019). Measuring Calibration in
    Deep Learning. CVPR Workshops. arXiv:1904.01685.

    Examples
    --------
    >>> probs = [[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]]
    >>> round(expected_calibration_error(probs, [0, 1, 1], n_bins=5), 6)
    0.3
    """
    check_option("strategy", strategy, _STRATEGIES)
    state = (BinnedState(n_bins=n_bins) if strategy == "uniform"
             else AdaptiveBinnedState(n_bins=n_bins))
    return _run(state, probs, labels=labels)


def max_calibration_error(probs: Any, labels: Any, *, n_bins: int = 10) -> float:
    """Maximum calibration error: ``max_b |acc(B_b) - conf(B_b)|`` over non-empty bins.

    Same inputs and binning as :func:`expected_calibration_error` (equal-width
    bins; Naeini et al. 2015, MCE).

    Parameters
    ----------
    probs : array-like of shape (n_items, n_labels)
    labels : array-like of shape (n_items,)
    n_bins : int, default 10

    Returns
    -------
    float

    Raises
    ------
    SchemaError, InvalidValueError
        On invalid input (see :func:`expected_calibration_error`).

    References
    ----------
    Naeini, Cooper, Hauskrecht (2015). Obtaining Well Calibrated Probabilities
    Using Bayesian Binning. AAAI. DOI:10.1609/aaai.v29i1.9602.

    Examples
    --------
    >>> round(max_calibration_error([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]], [0, 1, 1], n_bins=5), 6)
    0.6
    """
    return _run(BinnedState(n_bins=n_bins, reduce="max"), probs, labels=labels)


def classwise_calibration_error(probs: Any, labels: Any, *, n_bins: int = 10) -> float:
    """Classwise ECE (static calibration error, Nixon et al. 2019).

    ``SCE = 1/K sum_k sum_b n_bk/n |acc(b, k) - conf(b, k)|``: every class
    column is binned on its own probability (equal-width bins), ``conf(b, k)``
    is the mean probability of class ``k`` in the bin and ``acc(b, k)`` the
    fraction of its items whose label is ``k``.

    Parameters
    ----------
    probs : array-like of shape (n_items, n_labels)
    labels : array-like of shape (n_items,)
    n_bins : int, default 10

    Returns
    -------
    float

    Raises
    ------
    SchemaError, InvalidValueError
        On invalid input.

    References
    ----------
    Nixon, Dusenberry, Zhang, Jerfel, Tran (2019). Measuring Calibration in
    Deep Learning. CVPR Workshops. arXiv:1904.01685.

    Examples
    --------
    >>> round(classwise_calibration_error([[1.0, 0.0], [0.0, 1.0]], [0, 1]), 6)
    0.0
    """
    return _run(BinnedState(n_bins=n_bins, classwise=True), probs, labels=labels)


def _binary_pair(probs: Any, targets: Any) -> tuple[np.ndarray, np.ndarray]:
    """Binary SMECE input: positive-class probability (n,) or two columns (n, 2)."""
    from annokit.core.checks import check_probs
    from annokit.errors import InvalidValueError

    out = []
    for name, x in (("probs", probs), ("targets", targets)):
        x = x.to_numpy() if hasattr(x, "to_numpy") else x
        a = np.asarray(x, dtype=np.float64)
        if a.ndim == 2:
            if a.shape[1] != 2:
                raise SchemaError(
                    f"mode='binary' needs {name} of shape (n_items,) or (n_items, 2); got {a.shape}")
            a = check_probs(a, name=name)[:, 1]
        elif a.ndim != 1:
            raise SchemaError(
                f"mode='binary' needs {name} of shape (n_items,) or (n_items, 2); got {a.shape}")
        if a.shape[0] == 0:
            raise SchemaError(f"{name} has no rows")
        if not np.isfinite(a).all():
            raise InvalidValueError(
                f"{name} has NaN or infinite values in row {int(np.argmin(np.isfinite(a)))}")
        if a.min() < 0 or a.max() > 1:
            bad = int(np.flatnonzero((a < 0) | (a > 1))[0])
            raise InvalidValueError(f"{name} must lie in [0, 1]; got {float(a[bad])!r} in row {bad}")
        out.append(a)
    if out[0].shape != out[1].shape:
        raise SchemaError(
            f"probs and targets must have the same number of rows; got {out[0].shape[0]} "
            f"and {out[1].shape[0]}")
    return out[0], out[1]


def soft_calibration_error(probs: Any, targets: Any, *, n_bins: int = 10,
                           mode: str = "top_label") -> float:
    """SMECE: binned calibration error against probabilistic (soft) labels (Leznik 2026).

    Per bin, ``|mean prediction - mean probabilistic label|`` weighted by the
    bin's share of items (Leznik 2026, Eq. 4-5): the ECE formula with each bin's
    hard-label accuracy replaced by the mean soft label.

    Parameters
    ----------
    probs : array-like
        ``(n_items, n_labels)`` distributions; for ``mode="binary"`` also the
        positive-class probability of shape ``(n_items,)``.
    targets : array-like
        Human (soft) distributions of the same shape, or ``(n_items,)``
        positive-class probabilities in binary mode.
    n_bins : int, default 10
        Equal-width bins on [0, 1], binned as in :func:`expected_calibration_error`.
    mode : {"top_label", "classwise", "binary"}, default "top_label"
        ``"binary"``: exactly the paper's form; the positive-class probability
        (column 1) is binned and compared with the mean positive soft label.
        ``"top_label"`` (registry name ``smece``): items are binned on the
        model's confidence and the bin target is the mean human probability of
        the model's top class. ``"classwise"`` (``smece_classwise``): the
        classwise-ECE analogue, averaged over classes.

    Returns
    -------
    float
        In [0, 1]. With one-hot ``targets`` of ``labels`` it equals
        :func:`expected_calibration_error` (top_label),
        :func:`classwise_calibration_error` (classwise), or the binary ECE against
        the 0/1 outcomes (binary), exactly: the same sums are formed in the same
        order.

    Raises
    ------
    SchemaError, InvalidValueError
        On invalid input or mode.

    References
    ----------
    Leznik (2026). Soft Mean Expected Calibration Error (SMECE): A Calibration
    Metric for Probabilistic Labels.

    Examples
    --------
    >>> soft_calibration_error([0.3, 0.7], [0.3, 0.7], mode="binary")
    0.0
    >>> round(soft_calibration_error([[0.8, 0.2]], [[0.6, 0.4]]), 6)
    0.2
    """
    check_option("mode", mode, _SOFT_MODES)
    if mode != "binary":
        state = BinnedState(n_bins=n_bins, target="soft", classwise=mode == "classwise")
        return _run(state, probs, targets)
    n_bins = _binning.check_n_bins(n_bins)
    p, t = _binary_pair(probs, targets)
    # the paper's binary form is the class-1 term of classwise SMECE on (1 - p, p)
    s = _kernels.batch_sums(np.column_stack([1 - p, p]), np.column_stack([1 - t, t]), None, None,
                         n_bins=n_bins, classwise=True, names=_NAMES)
    bins = cast(BinStats, s.bins)  # classwise sums with soft labels: both present
    gap = cast(np.ndarray, bins.cw_conf)[1] - cast(np.ndarray, bins.cw_soft)[1]
    return float(np.abs(gap).sum() / s.weight)


@dataclass
class ReliabilityDiagram:
    """Per-bin reliability data.

    Attributes
    ----------
    edges : ndarray of shape (n_bins + 1,)
    count : ndarray of shape (n_bins,)
        Items per bin.
    mean_confidence : ndarray of shape (n_bins,)
        Mean top-label confidence; NaN for empty bins.
    accuracy : ndarray of shape (n_bins,)
        Fraction of correct top-label predictions; NaN for empty bins.
    mean_soft_target : ndarray of shape (n_bins,) or None
        Mean human probability of the model's top class (the SMECE bin target);
        None when no targets were given, NaN for empty bins.
    """

    edges: np.ndarray
    count: np.ndarray
    mean_confidence: np.ndarray
    accuracy: np.ndarray
    mean_soft_target: np.ndarray | None

    def to_frame(self):
        """One row per bin: lower, upper, count, mean_confidence, accuracy, mean_soft_target."""
        import pandas as pd

        data = {"lower": self.edges[:-1], "upper": self.edges[1:], "count": self.count,
                "mean_confidence": self.mean_confidence, "accuracy": self.accuracy}
        if self.mean_soft_target is not None:
            data["mean_soft_target"] = self.mean_soft_target
        return pd.DataFrame(data)


def _means(sums: np.ndarray | None, count: np.ndarray) -> np.ndarray | None:
    if sums is None:
        return None
    out = np.full(count.shape, np.nan)
    nz = count > 0
    out[nz] = sums[nz] / count[nz]
    return out


def reliability_diagram(probs: Any, labels: Any, targets: Any = None, *, n_bins: int = 10,
                        strategy: str = "uniform") -> ReliabilityDiagram:
    """Top-label reliability-diagram data, with the soft (SMECE) target per bin.

    Parameters
    ----------
    probs : array-like of shape (n_items, n_labels)
    labels : array-like of shape (n_items,)
    targets : array-like of shape (n_items, n_labels), optional
        Human distributions; adds ``mean_soft_target`` (Leznik 2026, Remark 2).
    n_bins : int, default 10
    strategy : {"uniform", "quantile"}, default "uniform"

    Returns
    -------
    ReliabilityDiagram
        Empty bins have count 0 and NaN means.

    Raises
    ------
    SchemaError, InvalidValueError
        On invalid input.

    Examples
    --------
    >>> d = reliability_diagram([[0.9, 0.1], [0.6, 0.4]], [0, 1], n_bins=2)
    >>> d.count.tolist(), d.accuracy.tolist()
    ([0, 2], [nan, 0.5])
    """
    check_option("strategy", strategy, _STRATEGIES)
    n_bins = _binning.check_n_bins(n_bins)
    p, t, y, _ = _sums.prepare(probs, targets, labels, names=_NAMES, allow_empty=False)
    if strategy == "uniform":  # the per-bin sums of the binned states (ECE, SMECE, MCE)
        edges = _binning.uniform_edges(n_bins)
        stats = cast(BinStats, _kernels.batch_sums(p, t, y, None, n_bins=n_bins,
                                                   names=_NAMES).bins)
    else:  # those of AdaptiveBinnedState: equal-mass edges, then sums per bin
        _sums.check_values(p, t, y, names=_NAMES)
        pred, conf = _binning.top_label(p)
        edges = _binning.quantile_edges(conf, n_bins)
        stats = edge_bin_stats(conf, (pred == y).astype(np.float64), edges, n_bins)
        if t is not None:
            stats.soft = _binning.bin_sums(_binning.bin_index(conf, edges), n_bins,
                                           values=t[np.arange(len(p)), pred])
    count = stats.count
    means = [_means(x, count) for x in (stats.conf, stats.hit)]  # labels are required
    return ReliabilityDiagram(edges, count.astype(np.int64), cast(np.ndarray, means[0]),
                              cast(np.ndarray, means[1]), _means(stats.soft, count))
