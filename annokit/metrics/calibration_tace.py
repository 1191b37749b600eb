"""TACE, the thresholded adaptive calibration error (Nixon et al. 2019): classwise ECE with
equal-mass bins per class.

A state of :data:`annokit.metrics.calibration_estimators.CALIBRATION_PASS` that keeps its
rows: each class's bins are quantiles of all its predictions, which no constant-size summary
gives exactly (a copy of them, ``8 k + 1`` bytes per item with up to 127 classes, 8 more per
item and replicate with weights). With unit weights and many rows each class's predictions
are counted into buckets as the rows arrive (:mod:`annokit.metrics._buckets`: count, hits and
value sum per bucket, added over batches); the bucket counts give the edges, every bin
takes the sums of the buckets wholly inside it, and one pass gathers the few items of the
buckets an edge falls in. The values are those of the class-by-class path up to the
rounding of the bin sums. On the Dask engine it takes the generic path (see
:mod:`annokit.metrics.calibration_estimators`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import numpy as np

from annokit.errors import InvalidValueError
from annokit.metrics import _binning, _buckets
from annokit.metrics.calibration_estimators import BUCKETED_MIN, _RowsState, _total
from annokit.metrics.spec import MetricSpec
from annokit.metrics.states import edge_bin_stats

__all__ = ["METRICS", "METRICS_AFTER", "TACEState"]


class TACEState(_RowsState):
    """Thresholded adaptive calibration error (TACE): classwise, equal-mass bins per class.

    Parameters
    ----------
    n_bins : int, default 10
        Equal-mass bins per class.
    threshold : float, default 0.001
        Only predictions ``p_ij >= threshold`` enter class ``j``'s bins (Nixon et al. 2019).

    Notes
    -----
    For each class ``j`` the predictions ``p_ij >= threshold`` are binned on their value
    with equal-mass bins (the weighted quantile edges of ``ece_adaptive``, tied values in
    one bin), and ``TACE_j = sum_b W_b/W_j |acc_b - conf_b|`` with ``acc_b`` the weighted
    fraction of the bin's items whose hard label is ``j``; ``TACE`` is the mean of
    ``TACE_j`` over the classes with a prediction above the threshold. Nixon et al. write
    ``1/(K R) sum_k sum_r |acc(r, k) - conf(r, k)|``: the same when every bin holds the
    same mass; bins here are weighted by their mass so that tied values (which keep
    bins unequal) count for what they hold.

    Memory grows linearly: a copy of the probability rows and labels, ``8 k + 1`` bytes per
    item (up to 127 classes), plus 8 per item and replicate with weights (see the module
    notes for Dask).

    Examples
    --------
    >>> s = TACEState(n_bins=1).update([[0.9, 0.1], [0.6, 0.4]], hard=[0, 1])
    >>> round(s.compute(), 6)
    0.25
    """

    def __init__(self, *, n_bins: int = 10, threshold: float = 1e-3) -> None:
        super().__init__()
        self.n_bins = _binning.check_n_bins(n_bins)
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) \
                or not 0 <= threshold < 1:
            raise InvalidValueError(f"threshold must be a number in [0, 1); got {threshold!r}")
        self.threshold = float(threshold)
        self._sums: np.ndarray | None = None  # the bucket sums of the large unweighted batches
        self._later: list[tuple[np.ndarray, np.ndarray]] = []  # the small ones: at compute

    def _options(self) -> dict[str, Any]:
        return {"n_bins": self.n_bins, "threshold": self.threshold}

    #: TACE reads the probability rows, not the top label: its pass only checks the batch.
    uses_top_label = False

    def _part(self, p: np.ndarray, h: np.ndarray, w: np.ndarray | None, conf: np.ndarray,
              hit: np.ndarray) -> Any:
        # copies (the caller may reuse its arrays): the rows class by class, (k, n), and the
        # labels (int8 up to 127 classes); for a large unweighted batch the bucket sums of
        # _tace_bucketed in the same pass (a small one is counted at compute, if needed)
        labels = h.astype(np.int8 if p.shape[1] <= 127 else np.int64)
        if w is not None or p.shape[0] < _buckets.CLASS_BUCKETS:
            return (np.array(p.T, order="C"), labels, None if w is None else np.array(w)), \
                _total(h.size, w), None
        rows, sums = _buckets.copy_class_sums(p, labels, self.threshold)
        return (rows, labels, None), float(h.size), sums

    def _absorb(self, part: Any) -> None:  # (columns, weight, bucket sums or None)
        (rows, labels, w), weight, sums = part
        super()._absorb(((rows, labels, w), weight))
        if sums is not None:
            self._sums = sums if self._sums is None else self._sums + sums
        elif w is None:
            self._later.append((rows, labels))

    def _merge(self, other: _RowsState) -> None:
        if isinstance(other, TACEState):
            if other._sums is not None:
                self._sums = other._sums if self._sums is None else self._sums + other._sums
            self._later = self._later + other._later
        super()._merge(other)

    def _bucket_sums(self) -> np.ndarray:
        """The bucket sums of every batch (all unweighted): the small ones counted now."""
        sums = self._sums
        if self._later:
            later = _buckets.class_sums(np.concatenate([r for r, _ in self._later], axis=1),
                                        np.concatenate([h for _, h in self._later]),
                                        self.threshold)
            sums = later if sums is None else sums + later
        assert sums is not None  # every unweighted batch is counted or kept for later
        return sums

    def _compute(self) -> Any:
        (probs, hard), w = self._columns()
        unit = w is None or (w.ndim == 1 and bool(np.all(w == 1)))
        if unit and hard.size >= BUCKETED_MIN:
            per_class = _tace_bucketed(np.ascontiguousarray(probs), np.ascontiguousarray(hard),
                                       self.n_bins, self.threshold,
                                       self._bucket_sums() if w is None else None)
        else:
            per_class = self._per_class(probs, hard, None if unit else w)
        if not per_class:
            return np.full(w.shape[0], np.nan) if w is not None and w.ndim == 2 \
                else float("nan")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a replicate without weight
            out = np.nanmean(np.array(per_class, dtype=np.float64), axis=0)
        return float(out) if np.ndim(out) == 0 else out

    def _per_class(self, probs: np.ndarray, hard: np.ndarray, w: np.ndarray | None
                   ) -> list[Any]:
        """Each class's binned error, class by class (each class vectorised)."""
        out = []
        for j in range(probs.shape[0]):
            keep = probs[j] >= self.threshold
            if not keep.any():
                continue
            c, y = probs[j][keep], (hard[keep] == j).astype(np.float64)
            wj = None if w is None else w[..., keep]
            total = float(c.size) if wj is None else np.sum(wj, axis=-1)
            edges = _binning.quantile_edges(c, self.n_bins, wj)
            out.append(_binning.compute_top(edge_bin_stats(c, y, edges, self.n_bins, wj, total)))
        return out


def _tace_edges(vi: np.ndarray, at: Callable[[np.ndarray], np.ndarray], m: int) -> np.ndarray:
    """``np.quantile(x, q)`` (its ``linear`` method) from the order statistics ``at(ranks)``
    of ``m`` values, at numpy's virtual indexes ``vi = (m - 1) q``."""
    prev = np.floor(vi)
    top = vi >= m - 1  # numpy takes the last value there
    lo = np.where(top, m - 1, prev).astype(np.int64)
    hi = np.where(top, m - 1, prev + 1).astype(np.int64)
    return _binning._lerp(at(lo), at(hi), vi - np.where(top, -1.0, prev))


#: The entry of :func:`_bin_table` for the bucket of the predictions below the threshold.
SKIP = -(1 << 62)


def _bin_table(cum: np.ndarray, vi: dict[int, np.ndarray], n_bins: int, threshold: float
               ) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Per class and bucket, the bin of every value in it, or ``-1 - tag`` for a bucket that
    holds an order statistic an edge needs (tags listed class by class, in bucket order)."""
    k, m = cum.shape[0], cum.shape[1] - 1
    table = np.zeros((k, m), np.int64)
    tags = []
    for j, v in vi.items():
        lo = np.floor(v).astype(np.int64)
        hi = np.minimum(lo + 1, cum[j, -1] - 1)
        b_lo, b_hi = (np.searchsorted(cum[j], r, side="right") - 1 for r in (lo, hi))
        # a bucket without an order statistic is above the edges whose upper order
        # statistic lies in an earlier bucket, and below every other edge
        table[j] = np.clip(np.searchsorted(np.sort(b_hi), np.arange(m), side="left") - 1,
                           0, n_bins - 1)
        tags += [(j, int(b)) for b in np.unique(np.concatenate((b_lo, b_hi)))]
    for i, (j, b) in enumerate(tags):
        table[j, b] = -1 - i
    if threshold > 0:  # bucket 0: exactly the predictions below the threshold
        table[:, 0] = SKIP
    return table, tags


def _tace_bucketed(rows: np.ndarray, hard: np.ndarray, n_bins: int, threshold: float,
                   sums: np.ndarray | None = None) -> list[float]:
    """Each class's TACE term for unit weights, with the bins of the class-by-class path.

    ``rows``: the predictions class by class, C-contiguous (k, n); ``sums``: their bucket
    sums (:func:`_buckets.copy_class_sums`). The bucket counts locate the order statistics
    each ``np.quantile`` edge interpolates; every bucket without one lies wholly inside one
    bin, which takes its sums, and one pass gathers the items of the other buckets, which
    give the exact edges and are binned on them.
    """
    sums = _buckets.class_sums(rows, hard, threshold) if sums is None else sums
    counts = sums[..., 0].astype(np.int64)
    cum = np.concatenate((np.zeros((counts.shape[0], 1), np.int64), np.cumsum(counts, 1)), 1)
    vi = {j: (cum[j, -1] - 1) * np.linspace(0.0, 1.0, n_bins + 1)
          for j in range(counts.shape[0]) if cum[j, -1] > 0}
    table, tags = _bin_table(cum, vi, n_bins, threshold)
    tagged = [np.array([b for jj, b in tags if jj == j], np.int64) for j in range(len(cum))]
    got = _buckets.class_gather(rows, hard, threshold, (table < 0) & (table != SKIP),
                                np.array([counts[j, t].sum() for j, t in enumerate(tagged)]))
    out = []
    for j in vi:
        x, hits = got[j]  # class j's gathered items, by value: its tagged buckets in order
        # the rank r of tagged bucket B sits at (items gathered before B) + r - cum[j, B]
        first = cum[j, tagged[j]]
        before = np.concatenate(([0], np.cumsum(counts[j, tagged[j]])[:-1]))

        def at(r: np.ndarray, first: np.ndarray = first, before: np.ndarray = before,
               x: np.ndarray = x) -> np.ndarray:
            b = np.searchsorted(first, r, side="right") - 1
            return x[before[b] + r - first[b]]

        edges = _tace_edges(vi[j], at, int(cum[j, -1]))
        idx = _binning.bin_index(x, edges)
        binned = table[j] >= 0  # the other buckets: their sums to their bin
        count, hit, conf = (np.bincount(table[j][binned], sums[j, binned, q], minlength=n_bins)
                            + np.bincount(idx, w, minlength=n_bins)
                            for q, w in enumerate((None, hits, x)))
        out.append(_binning.compute_top(_binning.BinStats(float(cum[j, -1]), count, conf,
                                                          hit=hit)))
    return out


#: The metric this module registers (collected by :mod:`annokit.metrics.registry`), in output
#: order after :data:`METRICS_AFTER`; asked for by name or ``--metrics all``, not listed by
#: default.
METRICS = (
    MetricSpec("tace", "Thresholded adaptive calibration error: classwise, equal-mass bins "
               "per class over predictions >= threshold", frozenset({"hard"}), True,
               "probability", "Nixon, Dusenberry, Zhang, Jerfel, Tran (2019). Measuring "
               "Calibration in Deep Learning. CVPR Workshops. arXiv:1904.01685",
               MappingProxyType({"n_bins": 10, "threshold": 1e-3}), None, TACEState,
               listed=frozenset()),
)
METRICS_AFTER = "smooth_ece"
