"""Shared validation and per-bin sufficient statistics for the binned calibration metrics.

Binning convention (documented once, used everywhere)
-----------------------------------------------------
Bins are left-closed ``[edges[b], edges[b+1])`` and the last bin is closed on
both sides, so a value of exactly 1 lands in the last bin and a value of exactly
0 in the first. The bin index of a value ``c`` is::

    clip(searchsorted(edges, c, side="right") - 1, 0, n_bins - 1)

which is the torchmetrics convention
(``torch.bucketize(c, edges, right=True) - 1`` clamped to the bin range) with
``edges = linspace(0, 1, n_bins + 1)``. Guo et al. (2017) used right-closed
bins ``(lo, hi]``; the two conventions differ only for values lying exactly on an
inner edge.

The plain-numpy functions here are the reference implementation; the numba
kernels in :mod:`annokit.metrics._fast` compute the same sums in one pass and
are compared against these in the tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from annokit.core.checks import check_probs
from annokit.errors import VoteSchemaError

__all__ = [
    "BinStats",
    "bin_index",
    "check_labels",
    "check_n_bins",
    "compute_classwise",
    "compute_top",
    "quantile_edges",
    "uniform_edges",
    "update_numpy",
    "validate_inputs",
]


def check_n_bins(n_bins: Any) -> int:
    """``n_bins`` must be a positive integer."""
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise VoteSchemaError(f"n_bins must be a positive integer; got {n_bins!r}")
    return int(n_bins)


def uniform_edges(n_bins: int) -> np.ndarray:
    """Equal-width edges ``linspace(0, 1, n_bins + 1)``."""
    return np.linspace(0.0, 1.0, n_bins + 1)


def quantile_edges(values: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-mass edges: the ``b / n_bins`` quantiles of ``values`` (linear interpolation).

    Values tied on an edge all fall in the bin that starts at that edge, so bins
    can be empty when many values are tied; empty bins contribute nothing.
    """
    return np.quantile(values, np.linspace(0.0, 1.0, n_bins + 1))


def bin_index(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin of each value: ``clip(searchsorted(edges, v, "right") - 1, 0, n_bins - 1)``."""
    idx = np.searchsorted(edges, values, side="right") - 1
    return np.clip(idx, 0, len(edges) - 2)


def check_labels(labels: Any, n_items: int, n_labels: int, *, name: str = "labels") -> np.ndarray:
    """Validate hard targets: integer class indices in ``[0, n_labels)``, one per item."""
    if hasattr(labels, "to_numpy"):
        labels = labels.to_numpy()
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise VoteSchemaError(f"{name} must be 1-D (n_items,); got shape {arr.shape}")
    if arr.shape[0] != n_items:
        raise VoteSchemaError(f"{name} has {arr.shape[0]} entries but probs has {n_items} rows")
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all():
            raise VoteSchemaError(
                f"{name} has NaN or infinite values at item {int(np.argmin(np.isfinite(arr)))}")
        if np.any(arr != np.round(arr)):
            bad = int(np.flatnonzero(arr != np.round(arr))[0])
            raise VoteSchemaError(
                f"{name} must be integer class indices; got {arr[bad].item()!r} at item {bad}")
    elif arr.dtype.kind not in "iub":
        raise VoteSchemaError(f"{name} must be integer class indices; got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and (arr.min() < 0 or arr.max() >= n_labels):
        bad = int(np.flatnonzero((arr < 0) | (arr >= n_labels))[0])
        raise VoteSchemaError(
            f"{name} must lie in [0, {n_labels}) (one per probs column); got {arr[bad]} at item {bad}")
    return arr


def _as_2d(x: Any) -> Any:
    return x.to_numpy() if hasattr(x, "to_numpy") else x


def _shallow_probs(x: Any, name: str) -> np.ndarray:
    arr = np.asarray(_as_2d(x), dtype=np.float64)
    if arr.ndim != 2:
        raise VoteSchemaError(f"{name} must be 2-D (n_items, n_labels); got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise VoteSchemaError(f"{name} has no rows")
    return arr


def validate_inputs(probs: Any, labels: Any = None, targets: Any = None, *, deep: bool = True
                    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Validate ``probs`` (n_items, n_labels), optional ``labels`` (n_items,) and ``targets``.

    ``deep=False`` checks shapes and dtypes only and leaves the value checks
    (finite, non-negative, rows summing to 1, labels in range) to the fused
    kernel, which reports a failure so that the caller re-runs with
    ``deep=True`` and raises the usual message.
    """
    if deep:
        p = check_probs(_as_2d(probs), name="probs")
    else:
        p = _shallow_probs(probs, "probs")
    y = None
    if labels is not None:
        lab = labels.to_numpy() if hasattr(labels, "to_numpy") else labels
        lab = np.asarray(lab)
        if not deep and lab.dtype.kind in "iu" and lab.ndim == 1 and lab.shape[0] == p.shape[0]:
            y = lab.astype(np.int64, copy=False)
        else:
            y = check_labels(lab, p.shape[0], p.shape[1])
    t = None
    if targets is not None:
        t = check_probs(_as_2d(targets), name="targets") if deep else _shallow_probs(
            targets, "targets")
        if t.shape != p.shape:
            raise VoteSchemaError(
                f"targets must have the shape of probs {p.shape}; got {t.shape}")
    return p, y, t


@dataclass
class BinStats:
    """Mergeable per-bin sums (the sufficient statistics of every binned metric).

    Top-label arrays have shape (n_bins,); classwise arrays (n_labels, n_bins).
    ``sum_soft`` / ``cw_sum_soft`` are None when no soft targets were given;
    ``sum_correct`` / ``cw_sum_hit`` are None when no hard labels were given.
    """

    n_items: int
    count: np.ndarray
    sum_conf: np.ndarray
    sum_correct: np.ndarray | None
    sum_soft: np.ndarray | None
    cw_count: np.ndarray | None = None
    cw_sum_prob: np.ndarray | None = None
    cw_sum_hit: np.ndarray | None = None
    cw_sum_soft: np.ndarray | None = None

    def merge(self, other: BinStats) -> BinStats:
        """Element-wise sum of two sets of statistics over the same bins."""
        def add(a, b, what):
            if (a is None) != (b is None):
                raise VoteSchemaError(
                    f"cannot merge statistics: {what} is present in one and missing in the other "
                    "(mix of batches with and without labels/targets)")
            return None if a is None else a + b
        return BinStats(
            self.n_items + other.n_items,
            add(self.count, other.count, "count"),
            add(self.sum_conf, other.sum_conf, "sum_conf"),
            add(self.sum_correct, other.sum_correct, "labels"),
            add(self.sum_soft, other.sum_soft, "targets"),
            add(self.cw_count, other.cw_count, "classwise counts"),
            add(self.cw_sum_prob, other.cw_sum_prob, "classwise sums"),
            add(self.cw_sum_hit, other.cw_sum_hit, "labels"),
            add(self.cw_sum_soft, other.cw_sum_soft, "targets"),
        )


def update_numpy(probs: np.ndarray, labels: np.ndarray | None, targets: np.ndarray | None,
                 edges: np.ndarray, *, classwise: bool = True) -> BinStats:
    """Per-bin sums by ``np.bincount`` (the reference implementation).

    Top-label (Guo et al. 2017, Eq. 3-5): confidence ``max_j p_ij``, predicted
    class ``argmax_j p_ij`` (first index on ties), correctness against
    ``labels``, soft target ``targets[i, argmax_j p_ij]`` (Leznik 2026, Eq. 4).
    Classwise (Nixon et al. 2019, SCE): every column binned on its own
    probability, with hit ``labels == k`` and soft target ``targets[:, k]``.
    """
    n, k = probs.shape
    n_bins = len(edges) - 1
    pred = probs.argmax(axis=1)
    rows = np.arange(n)
    conf = probs[rows, pred]
    idx = bin_index(conf, edges)
    count = np.bincount(idx, minlength=n_bins).astype(np.int64)
    sum_conf = np.bincount(idx, weights=conf, minlength=n_bins)
    sum_correct = None
    if labels is not None:
        sum_correct = np.bincount(idx, weights=(pred == labels).astype(np.float64),
                                  minlength=n_bins)
    sum_soft = None
    if targets is not None:
        sum_soft = np.bincount(idx, weights=targets[rows, pred], minlength=n_bins)
    stats = BinStats(n, count, sum_conf, sum_correct, sum_soft)
    if classwise:
        # column-major flattening keeps each class's items in item order, so the
        # bincount sums accumulate in the same order as a per-class loop would.
        flat = (bin_index(probs.T, edges) + (np.arange(k) * n_bins)[:, None]).ravel()
        size = k * n_bins
        stats.cw_count = np.bincount(flat, minlength=size).reshape(k, n_bins).astype(np.int64)
        stats.cw_sum_prob = np.bincount(flat, weights=probs.T.ravel(), minlength=size
                                        ).reshape(k, n_bins)
        if labels is not None:
            hit = (labels[None, :] == np.arange(k)[:, None]).astype(np.float64).ravel()
            stats.cw_sum_hit = np.bincount(flat, weights=hit, minlength=size).reshape(k, n_bins)
        if targets is not None:
            stats.cw_sum_soft = np.bincount(flat, weights=targets.T.ravel(), minlength=size
                                            ).reshape(k, n_bins)
    return stats


def compute_top(stats: BinStats, *, soft: bool = False, reduce: str = "ece") -> float:
    """ECE / SMECE / MCE from top-label sums.

    ``ECE = sum_b |sum_conf_b - sum_correct_b| / n`` (= sum_b n_b/n |conf_b - acc_b|,
    Guo et al. 2017 Eq. 3); SMECE swaps ``sum_correct`` for ``sum_soft``
    (Leznik 2026, Eq. 5). MCE is ``max_b |conf_b - acc_b|`` over non-empty bins.
    """
    target = stats.sum_soft if soft else stats.sum_correct
    if target is None:
        raise VoteSchemaError("soft targets were not given" if soft else "labels were not given")
    if reduce == "ece":
        return float(np.abs(stats.sum_conf - target).sum() / stats.n_items)
    nz = stats.count > 0
    gaps = np.abs(stats.sum_conf[nz] / stats.count[nz] - target[nz] / stats.count[nz])
    return float(gaps.max()) if gaps.size else 0.0


def compute_classwise(stats: BinStats, *, soft: bool = False) -> float:
    """Classwise ECE (Nixon et al. 2019, SCE): ``1/K sum_k sum_b |sum_p_kb - sum_y_kb| / n``."""
    target = stats.cw_sum_soft if soft else stats.cw_sum_hit
    if target is None or stats.cw_sum_prob is None:
        raise VoteSchemaError("soft targets were not given" if soft else "labels were not given")
    per_class = np.abs(stats.cw_sum_prob - target).sum(axis=1) / stats.n_items
    return float(per_class.mean())
