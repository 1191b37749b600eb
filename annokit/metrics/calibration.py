"""Binned calibration errors: ECE, MCE, adaptive ECE, classwise ECE, SMECE, reliability data.

Every metric follows the functional/accumulator pattern: ``_validate`` ->
``_update`` (per-bin sums, :class:`~annokit.metrics._binning.BinStats`) ->
``_compute``. The public functions run the three steps on one array;
:class:`CalibrationErrorAccumulator` runs ``_update`` per batch, merges the
sums and calls the same ``_compute``, so both give the same numbers.

Binning: bins are ``[lo, hi)`` with the last bin closed, i.e. the bin of ``c`` is
``clip(searchsorted(edges, c, "right") - 1, 0, n_bins - 1)`` (torchmetrics'
``bucketize(c, edges, right=True) - 1``). See :mod:`annokit.metrics._binning`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from annokit.core.checks import check_option
from annokit.errors import VoteSchemaError
from annokit.metrics import _binning
from annokit.metrics._binning import BinStats

__all__ = [
    "CalibrationErrorAccumulator",
    "ReliabilityDiagram",
    "classwise_calibration_error",
    "expected_calibration_error",
    "max_calibration_error",
    "reliability_diagram",
    "soft_calibration_error",
]

_STRATEGIES = ("uniform", "quantile")
_SOFT_MODES = ("top_label", "classwise", "binary")


def _edges(probs: np.ndarray, n_bins: int, strategy: str) -> np.ndarray:
    check_option("strategy", strategy, _STRATEGIES)
    if strategy == "uniform":
        return _binning.uniform_edges(n_bins)
    return _binning.quantile_edges(probs.max(axis=1), n_bins)


def _validate(probs: Any, labels: Any = None, targets: Any = None
              ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Shapes always; values here for small inputs, inside the fused kernel for large ones."""
    from annokit.metrics import _fast

    n = len(probs) if hasattr(probs, "__len__") else 0
    return _binning.validate_inputs(probs, labels, targets, deep=not _fast.use_fast(n))


def _update(probs: np.ndarray, labels: np.ndarray | None, targets: np.ndarray | None,
            edges: np.ndarray, *, classwise: bool = True) -> BinStats:
    """Per-bin sums; the numba kernel for large inputs, numpy otherwise.

    When the kernel's value checks fail, the numpy validation runs and raises
    the usual message.
    """
    from annokit.metrics import _fast

    if _fast.use_fast(probs.shape[0]):
        out = _fast.update_fast(probs, labels, targets, edges, classwise=classwise)
        if out is not None:
            return out
        probs, labels, targets = _binning.validate_inputs(probs, labels, targets)
    return _binning.update_numpy(probs, labels, targets, edges, classwise=classwise)


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
        ``"uniform"``: equal-width bins on [0, 1]. ``"quantile"``: equal-mass
        (adaptive) bins whose edges are the ``b / n_bins`` quantiles of the
        confidences (Nixon et al. 2019).

    Returns
    -------
    float
        ``ECE = sum_b |B_b|/n * |acc(B_b) - conf(B_b)|`` (Guo et al. 2017, Eq. 3),
        in [0, 1].

    Raises
    ------
    VoteSchemaError
        If ``probs`` is not a matrix of finite distributions, ``labels`` are not
        class indices for it, or an option is invalid.

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

    Examples
    --------
    >>> probs = [[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]]
    >>> round(expected_calibration_error(probs, [0, 1, 1], n_bins=5), 6)
    0.3
    """
    n_bins = _binning.check_n_bins(n_bins)
    p, y, _ = _validate(probs, labels)
    return _binning.compute_top(_update(p, y, None, _edges(p, n_bins, strategy), classwise=False))


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
    VoteSchemaError
        On invalid input (see :func:`expected_calibration_error`).

    Examples
    --------
    >>> round(max_calibration_error([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]], [0, 1, 1], n_bins=5), 6)
    0.6
    """
    n_bins = _binning.check_n_bins(n_bins)
    p, y, _ = _validate(probs, labels)
    return _binning.compute_top(_update(p, y, None, _binning.uniform_edges(n_bins),
                                        classwise=False), reduce="max")


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
    VoteSchemaError
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
    n_bins = _binning.check_n_bins(n_bins)
    p, y, _ = _validate(probs, labels)
    return _binning.compute_classwise(_update(p, y, None, _binning.uniform_edges(n_bins)))


def _binary_pair(probs: Any, targets: Any) -> tuple[np.ndarray, np.ndarray]:
    """Binary SMECE input: positive-class probability (n,) or two columns (n, 2)."""
    out = []
    for name, x in (("probs", probs), ("targets", targets)):
        x = x.to_numpy() if hasattr(x, "to_numpy") else x
        a = np.asarray(x, dtype=np.float64)
        if a.ndim == 2:
            if a.shape[1] != 2:
                raise VoteSchemaError(
                    f"mode='binary' needs {name} of shape (n_items,) or (n_items, 2); got {a.shape}")
            a = _binning.validate_inputs(a)[0][:, 1]
        elif a.ndim != 1:
            raise VoteSchemaError(
                f"mode='binary' needs {name} of shape (n_items,) or (n_items, 2); got {a.shape}")
        if a.shape[0] == 0:
            raise VoteSchemaError(f"{name} has no rows")
        if not np.isfinite(a).all():
            raise VoteSchemaError(
                f"{name} has NaN or infinite values in row {int(np.argmin(np.isfinite(a)))}")
        if a.min() < 0 or a.max() > 1:
            bad = int(np.flatnonzero((a < 0) | (a > 1))[0])
            raise VoteSchemaError(f"{name} must lie in [0, 1]; got {float(a[bad])!r} in row {bad}")
        out.append(a)
    if out[0].shape != out[1].shape:
        raise VoteSchemaError(
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
        ``"top_label"``: items are binned on the model's confidence and the bin
        target is the mean human probability of the model's top class.
        ``"classwise"``: the classwise-ECE analogue, averaged over classes.

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
    VoteSchemaError
        On invalid input or mode.

    References
    ----------
    Leznik (2026). Soft Mean Expected Calibration Error (SMECE).

    Examples
    --------
    >>> soft_calibration_error([0.3, 0.7], [0.3, 0.7], mode="binary")
    0.0
    >>> round(soft_calibration_error([[0.8, 0.2]], [[0.6, 0.4]]), 6)
    0.2
    """
    n_bins = _binning.check_n_bins(n_bins)
    check_option("mode", mode, _SOFT_MODES)
    edges = _binning.uniform_edges(n_bins)
    if mode == "binary":
        p, t = _binary_pair(probs, targets)
        idx = _binning.bin_index(p, edges)
        gap = np.bincount(idx, weights=p, minlength=n_bins) - np.bincount(
            idx, weights=t, minlength=n_bins)
        return float(np.abs(gap).sum() / p.shape[0])
    p, _, t = _validate(probs, None, targets)
    if mode == "top_label":
        return _binning.compute_top(_update(p, None, t, edges, classwise=False), soft=True)
    return _binning.compute_classwise(_update(p, None, t, edges), soft=True)


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
    VoteSchemaError
        On invalid input.

    Examples
    --------
    >>> d = reliability_diagram([[0.9, 0.1], [0.6, 0.4]], [0, 1], n_bins=2)
    >>> d.count.tolist(), d.accuracy.tolist()
    ([0, 2], [nan, 0.5])
    """
    n_bins = _binning.check_n_bins(n_bins)
    p, y, t = _validate(probs, labels, targets)
    edges = _edges(p, n_bins, strategy)
    s = _update(p, y, t, edges, classwise=False)
    return ReliabilityDiagram(edges, s.count, _means(s.sum_conf, s.count),
                              _means(s.sum_correct, s.count), _means(s.sum_soft, s.count))


class CalibrationErrorAccumulator:
    """Mergeable accumulator for every equal-width binned metric (torchmetrics pattern).

    Feed batches with :meth:`update`, combine accumulators built on other
    shards with :meth:`merge`, and read all metrics with :meth:`compute`. The
    values equal the functions on the concatenated data (the same per-bin sums
    are formed; only floating-point summation order differs across batches).
    Equal-mass bins need all confidences at once and are not offered here.

    Parameters
    ----------
    n_labels : int
        Number of classes (columns of ``probs``).
    n_bins : int, default 10

    Examples
    --------
    >>> acc = CalibrationErrorAccumulator(2, n_bins=5)
    >>> acc.update([[0.9, 0.1], [0.6, 0.4]], [0, 1])
    >>> acc.update([[0.2, 0.8]], [1])
    >>> round(acc.compute()["ece"], 6)
    0.3
    """

    def __init__(self, n_labels: int, *, n_bins: int = 10) -> None:
        if isinstance(n_labels, bool) or not isinstance(n_labels, (int, np.integer)) or n_labels < 1:
            raise VoteSchemaError(f"n_labels must be a positive integer; got {n_labels!r}")
        self.n_labels = int(n_labels)
        self.n_bins = _binning.check_n_bins(n_bins)
        self.edges = _binning.uniform_edges(self.n_bins)
        self._stats: BinStats | None = None

    def update(self, probs: Any, labels: Any = None, targets: Any = None) -> None:
        """Add a batch: ``probs`` (n, n_labels), ``labels`` (n,) and/or ``targets`` (n, n_labels)."""
        if labels is None and targets is None:
            raise VoteSchemaError("update needs labels, targets or both")
        p, y, t = _validate(probs, labels, targets)
        if p.shape[1] != self.n_labels:
            raise VoteSchemaError(
                f"probs has {p.shape[1]} columns; the accumulator was built for {self.n_labels}")
        s = _update(p, y, t, self.edges)
        self._stats = s if self._stats is None else self._stats.merge(s)

    def merge(self, other: CalibrationErrorAccumulator) -> CalibrationErrorAccumulator:
        """Add another accumulator's sums into this one; returns self."""
        if (other.n_labels, other.n_bins) != (self.n_labels, self.n_bins):
            raise VoteSchemaError(
                f"cannot merge accumulators with (n_labels, n_bins) = "
                f"{(other.n_labels, other.n_bins)} into {(self.n_labels, self.n_bins)}")
        if other._stats is not None:
            self._stats = other._stats if self._stats is None else self._stats.merge(other._stats)
        return self

    def compute(self) -> dict[str, float]:
        """Metrics from the sums so far.

        Returns
        -------
        dict
            With labels: ``ece``, ``mce``, ``classwise_ece``; with targets:
            ``smece`` (top-label) and ``smece_classwise``.
        """
        s = self._stats
        if s is None:
            raise VoteSchemaError("the accumulator is empty: call update() first")
        out: dict[str, float] = {}
        if s.sum_correct is not None:
            out["ece"] = _binning.compute_top(s)
            out["mce"] = _binning.compute_top(s, reduce="max")
            out["classwise_ece"] = _binning.compute_classwise(s)
        if s.sum_soft is not None:
            out["smece"] = _binning.compute_top(s, soft=True)
            out["smece_classwise"] = _binning.compute_classwise(s, soft=True)
        return out
