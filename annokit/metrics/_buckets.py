"""Exact order statistics and rank-prefix sums without a full sort, for the equal-mass estimators.

ECE-sweep and TACE need a few quantiles of millions of values (TACE: ``n_bins + 1`` per
class; ECE-sweep: the ``j / b`` quantiles for ``b`` up to the sweep's stopping point) and
the sums of the items below each of them. A comparison sort of every value costs far more
than the estimators' other work. Here the values are first counted into :data:`BUCKETS`
buckets by a monotone function of their bits (:func:`bucket_of`: the float's bit pattern,
which orders non-negative doubles, shifted into the bucket range), with each bucket's
count, hits and value sum; a quantile's bucket follows from the cumulative counts, and
only the buckets that hold a requested rank are sorted. Everything is exact: a bucket only
narrows down where a rank lies, the value and the sums below it come from the items
themselves. Bucket sums are added in a fixed order (parts of :data:`PART_ROWS` rows, then
bucket by bucket), so a value does not depend on the number of threads; it can differ from
a sum in item order by rounding (1e-16 relative per sum).

Values below the bucket range (and negative values) share bucket 0 and values above it
the last bucket; a crowd of tied values shares one bucket, which is then sorted whole: the
cost degrades towards one sort of the crowd, never below exactness.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from annokit.metrics import kernels as _kernels

#: Buckets of the first counting pass (their sums fit in the CPU's second-level cache).
BUCKETS = 1 << 16
#: Rows per part of a threaded pass (fixed, so sums do not depend on the threads).
PART_ROWS = 1 << 21


def bucket_scale(lo: float, hi: float, m: int = BUCKETS) -> tuple[int, int]:
    """``(base, shift)`` of the buckets that spread ``[lo, hi]`` (``0 < lo <= hi``) over
    ``m`` buckets: bucket ``((bits(v) - base) >> shift) + 1``, clipped to ``[0, m - 1]``."""
    base = int(np.array([lo], np.float64).view(np.int64)[0]) - 1
    span = int(np.array([hi], np.float64).view(np.int64)[0]) - base
    shift = 0
    while (span >> shift) + 1 > m - 1:
        shift += 1
    return base, shift


@numba.njit(cache=True, nogil=True, inline="always")
def _bucket(v: float, base: int, shift: int, m: int = BUCKETS) -> int:  # pragma: no cover
    """Bucket of ``v`` among ``m``: non-decreasing in ``v`` (bit patterns order the
    non-negative floats, and every negative one is below ``base``)."""
    bits = np.float64(v).view(np.int64)
    if bits <= base:
        return 0
    b = ((bits - base) >> shift) + 1
    return b if b < m - 1 else m - 1


def bucket_of(values: np.ndarray, base: int, shift: int, m: int = BUCKETS) -> np.ndarray:
    """:func:`_bucket` of each value (numpy; the same integer arithmetic)."""
    bits = np.ascontiguousarray(values, np.float64).reshape(-1).view(np.int64)
    out = np.where(bits <= base, 0, ((bits - base) >> shift) + 1)
    return np.minimum(out, m - 1)


def _parts(fn: Any, n: int) -> list[Any]:
    """``fn(a, b)`` on the parts ``[p PART_ROWS, (p + 1) PART_ROWS)``, on threads, in order."""
    bounds = [*range(0, n, PART_ROWS), n]
    spans = list(zip(bounds[:-1], bounds[1:], strict=True))
    threads = _kernels._threads(len(spans))
    if threads <= 1 or len(spans) <= 1:
        return [fn(a, b) for a, b in spans]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(lambda s: fn(*s), spans))


# --------------------------------------------------------------------------- top label

@numba.njit(cache=True, nogil=True)
def _min_max(x: np.ndarray) -> tuple[float, float]:  # pragma: no cover - numba
    lo, hi = np.inf, -np.inf
    for i in range(x.size):
        v = x[i]
        lo = v if v < lo else lo
        hi = v if v > hi else hi
    return lo, hi


@numba.njit(cache=True, nogil=True)
def _count(conf: np.ndarray, hit: np.ndarray, base: int, shift: int,
           out: np.ndarray) -> None:  # pragma: no cover - numba
    """Per bucket: count, hits, confidence sum (one row of ``out`` per bucket: one cache
    line per item)."""
    for i in range(conf.size):
        b = _bucket(conf[i], base, shift)
        out[b, 0] += 1.0
        out[b, 1] += hit[i]
        out[b, 2] += conf[i]


@numba.njit(cache=True, nogil=True)
def _gather(conf: np.ndarray, hit: np.ndarray, base: int, shift: int, slot: np.ndarray,
            out: np.ndarray) -> None:  # pragma: no cover - numba
    """The key (confidence bits, hit appended) of each item whose bucket has a slot
    (``slot[b] >= 0``: the next free position of bucket ``b`` in ``out``)."""
    for i in range(conf.size):
        b = _bucket(conf[i], base, shift)
        p = slot[b]
        if p >= 0:
            out[p] = (np.float64(conf[i]).view(np.uint64) << np.uint64(1)) | np.uint64(
                1 if hit[i] > 0.0 else 0)
            slot[b] = p + 1


@numba.njit(cache=True, nogil=True)
def _sort_segments(keys: np.ndarray, starts: np.ndarray, ends: np.ndarray
                   ) -> None:  # pragma: no cover - numba
    for s in range(starts.size):
        keys[starts[s]:ends[s]].sort()


class TopBuckets:
    """Top-label confidences and hits (unit weights) counted into buckets, for rank queries.

    One counting pass gives each bucket's count, hits and confidence sum (``cum_*``: the
    sums of the buckets before each bucket, length ``BUCKETS + 1``). The items of a bucket
    that holds an asked-for rank are gathered (their keys: confidence bits, hit appended)
    and sorted; the ranks of the next equal-mass bins are asked for ahead, a few rounds of
    bins per pass over the items.
    """

    def __init__(self, conf: np.ndarray, hit: np.ndarray, lo: float | None = None) -> None:
        self.conf = conf = np.ascontiguousarray(conf, np.float64)
        self.hit = hit = np.ascontiguousarray(hit, np.float64)
        if lo is None:
            lo, hi = _min_max(conf)
        else:  # a lower bound known to the caller (the top label's 1 / k)
            hi = 1.0
        self.base, self.shift = bucket_scale(max(lo, hi * 2.0**-30, 1e-300), max(hi, 1e-300))

        def count(a: int, b: int) -> np.ndarray:
            out = np.zeros((BUCKETS, 3))
            _count(conf[a:b], hit[a:b], self.base, self.shift, out)
            return out

        parts = _parts(count, conf.size)
        self.part_counts = [p[:, 0].astype(np.int64) for p in parts]
        cum = np.cumsum(np.concatenate((np.zeros((1, 3)), sum(parts))), axis=0)
        self.cum_count = cum[:, 0].astype(np.int64)
        self.cum_hit, self.cum_conf = cum[:, 1], cum[:, 2]
        self.keys = np.empty(0, np.uint64)
        self.start = np.full(BUCKETS, -1, np.int64)  # where a gathered bucket starts in keys
        self.ready = 1  # the ranks of every b <= ready are gathered

    def bucket_monotone(self) -> bool:
        """Whether the accuracies of the non-empty buckets are non-decreasing (necessary
        for the accuracies of the distinct confidences to be)."""
        cnt = np.diff(self.cum_count)
        live = cnt > 0
        acc = np.diff(self.cum_hit)[live] / cnt[live]
        return bool(np.all(np.diff(acc) >= 0))

    def gather(self, buckets: np.ndarray) -> None:
        """Gather and sort the items of the given buckets (one pass over the items)."""
        new = np.unique(buckets)
        new = new[self.start[new] < 0]
        size = np.diff(self.cum_count)[new]
        new = new[size > 0]
        if not new.size:
            return
        first = self.keys.size + np.concatenate(([0], np.cumsum(size[size > 0])[:-1]))
        self.keys = np.concatenate((self.keys, np.empty(int(size.sum()), np.uint64)))
        self.start[new] = first
        bounds = [*range(0, self.conf.size, PART_ROWS), self.conf.size]
        before = np.cumsum([np.zeros(BUCKETS, np.int64), *self.part_counts[:-1]], axis=0)

        def gather(a: int, b: int) -> None:
            slot = np.full(BUCKETS, -1, np.int64)
            slot[new] = first + before[bounds.index(a)][new]
            _gather(self.conf[a:b], self.hit[a:b], self.base, self.shift, slot, self.keys)

        _parts(gather, self.conf.size)
        _sort_segments(self.keys, first, first + size[size > 0])

    def sort_all(self) -> np.ndarray:
        """Every key, sorted."""
        self.gather(np.arange(BUCKETS))
        order = np.argsort(self.start[self.start >= 0], kind="stable")
        live = np.flatnonzero(self.start >= 0)[order]
        cnt = np.diff(self.cum_count)
        return np.concatenate([self.keys[self.start[b]:self.start[b] + cnt[b]] for b in live]) \
            if live.size else self.keys

    def _ranks(self, lo: int, hi: int) -> np.ndarray:
        """The edge ranks of every number of bins ``b`` in ``(lo, hi]``."""
        n = float(self.conf.size)
        return np.concatenate([np.ceil(np.arange(1, b) * n / b).astype(np.int64) - 1
                               for b in range(lo + 1, hi + 1)] or [np.zeros(0, np.int64)])

    def cuts(self, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Count, confidence sum and hit sum of each of the ``b`` equal-mass bins of
        ``sweep_ece`` (edge ``j``: the first distinct confidence whose cumulative count
        reaches ``j n / b``; ties in one bin)."""
        if b > self.ready:  # ask for the next rounds of bins ahead (one pass for several)
            upto = max(b, min(2 * self.ready, self.ready + 256), 16)
            ranks = self._ranks(self.ready, upto)
            self.gather(np.searchsorted(self.cum_count, ranks, side="right") - 1)
            self.ready = upto
        out = np.empty((3, b + 1))
        m = _cut_sums(b, self.keys, self.start, self.cum_count, self.cum_hit, self.cum_conf,
                      out)
        w, c, y = np.diff(out[:, :m + 1], axis=1)
        return w, c, y


@numba.njit(cache=True, nogil=True)
def _below(r: int, keys: np.ndarray, start: np.ndarray, cum: np.ndarray,
           cum_hit: np.ndarray, cum_conf: np.ndarray) -> tuple[int, float, float]:
    """Count, hits and confidence sum of the items whose confidence is at most that of the
    item of 0-based rank ``r`` (its bucket gathered and sorted at ``keys[start[B]:]``)."""
    lo, hi = 0, start.size - 1  # the bucket B with cum[B] <= r < cum[B + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if cum[mid + 1] > r:
            hi = mid
        else:
            lo = mid + 1
    s, size = start[lo], cum[lo + 1] - cum[lo]
    q = r - cum[lo]
    v = keys[s + q] >> np.uint64(1)
    while q + 1 < size and (keys[s + q + 1] >> np.uint64(1)) == v:
        q += 1
    hits, conf = cum_hit[lo], cum_conf[lo]
    for i in range(s, s + q + 1):
        hits += float(keys[i] & np.uint64(1))
        conf += np.uint64(keys[i] >> np.uint64(1)).view(np.float64)
    return cum[lo] + q + 1, hits, conf


@numba.njit(cache=True, nogil=True)
def _cut_sums(b: int, keys: np.ndarray, start: np.ndarray, cum: np.ndarray,
              cum_hit: np.ndarray, cum_conf: np.ndarray, out: np.ndarray
              ) -> int:  # pragma: no cover - numba
    """The cumulative (count, confidence, hits) at each distinct cut of ``b`` equal-mass bins,
    from (0, 0, 0) to the totals, into ``out[:, :m + 1]``; returns the number of bins ``m``."""
    n = cum[-1]
    total = float(n)
    out[:, 0] = 0.0
    m, last = 0, 0
    for j in range(1, b):
        t = j * total / b  # the first item whose cumulative count reaches t: rank ceil(t) - 1
        r = int(np.ceil(t)) - 1
        count, hits, conf = _below(r, keys, start, cum, cum_hit, cum_conf)
        if count < n and count != last:
            m += 1
            out[0, m], out[1, m], out[2, m] = count, conf, hits
            last = count
    m += 1
    out[0, m], out[1, m], out[2, m] = total, cum_conf[-1], cum_hit[-1]
    return m


# --------------------------------------------------------------------------- per class (TACE)

#: Buckets per class of :func:`copy_class_sums` (three classes' sums fit in the L2 cache).
CLASS_BUCKETS = 1 << 14
#: A hit's weight in :func:`_class_sums`'s first sum: count + hits x 2^22, exact as long
#: as a part's count stays below 2^22 (:data:`PART_ROWS` rows).
_HIT = float(1 << 22)


def class_scale(threshold: float) -> tuple[int, int]:
    """The buckets of :func:`copy_class_sums`: ``[threshold, 1]`` (from ``2^-30`` for a zero
    threshold) over :data:`CLASS_BUCKETS`; fixed, so the sums of batches add up."""
    return bucket_scale(threshold if threshold > 0 else 2.0**-30, 1.0, CLASS_BUCKETS)


@numba.njit(cache=True, nogil=True, inline="always")
def _class_add(p: np.ndarray, i: int, j: int, hi: int, base: int, shift: int, out: np.ndarray,
               rows: np.ndarray, a: int) -> None:  # pragma: no cover - numba
    """Prediction ``p[i, j]`` (label ``hi``) into its bucket ``b`` of class ``j``:
    ``out[j, b, 0]`` adds 1 + :data:`_HIT` x hit (one sum: one cache line per prediction),
    ``out[j, b, 1]`` the value; and its copy ``rows[j, a + i]``."""
    v = p[i, j]
    rows[j, a + i] = v
    b = _bucket(v, base, shift, out.shape[1])
    out[j, b, 0] += 1.0 + _HIT if hi == j else 1.0
    out[j, b, 1] += v


@numba.njit(cache=True, nogil=True)
def _class_sums(p: np.ndarray, h: np.ndarray, base: int, shift: int, out: np.ndarray,
                rows: np.ndarray, a: int) -> None:  # pragma: no cover - numba
    """:func:`_class_add` of every prediction of ``p``, row by row."""
    for i in range(p.shape[0]):
        for j in range(p.shape[1]):
            _class_add(p, i, j, h[i], base, shift, out, rows, a)


@numba.njit(cache=True, nogil=True)
def _class_sums3(p: np.ndarray, h: np.ndarray, base: int, shift: int, out: np.ndarray,
                 rows: np.ndarray, a: int) -> None:  # pragma: no cover - numba
    """:func:`_class_sums` for three classes, unrolled (each class a constant the compiler
    can schedule around)."""
    for i in range(p.shape[0]):
        _class_add(p, i, 0, h[i], base, shift, out, rows, a)
        _class_add(p, i, 1, h[i], base, shift, out, rows, a)
        _class_add(p, i, 2, h[i], base, shift, out, rows, a)


def _no_below(sums: np.ndarray, threshold: float) -> np.ndarray:
    if threshold > 0:  # bucket 0: the predictions below the threshold
        sums[:, 0] = 0.0
    return sums


def copy_class_sums(p: np.ndarray, h: np.ndarray, threshold: float
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The rows class by class (a C-contiguous (k, n) copy of ``p``) and, per class and
    bucket, the count, hits (label ``h``) and value sum of the predictions ``p_ij >=
    threshold``, shape (k, buckets, 3) (they add over batches); one pass over ``p``, in parts
    on threads (the sums added in part order). With a positive threshold, bucket 0 holds
    exactly the predictions below it (its sums are 0)."""
    base, shift = class_scale(threshold)
    n, k = p.shape
    rows = np.empty((k, n))

    def count(a: int, b: int) -> np.ndarray:
        out = np.zeros((k, CLASS_BUCKETS, 2))
        (_class_sums3 if k == 3 else _class_sums)(p[a:b], h[a:b], base, shift, out, rows, a)
        hits = np.floor(out[..., 0] / _HIT)
        return np.stack((out[..., 0] - hits * _HIT, hits, out[..., 1]), axis=-1)

    sums = sum(_parts(count, n), np.zeros((k, CLASS_BUCKETS, 3)))
    return rows, _no_below(sums, threshold)


def class_sums(rows: np.ndarray, labels: np.ndarray, threshold: float) -> np.ndarray:
    """The sums of :func:`copy_class_sums` from rows kept class by class, shape (k, n)."""
    base, shift = class_scale(threshold)
    out = np.zeros((rows.shape[0], CLASS_BUCKETS, 3))
    for j, x in enumerate(rows):
        b = bucket_of(x, base, shift, CLASS_BUCKETS)
        for q, w in enumerate((None, labels == j, x)):
            out[j, :, q] = np.bincount(b, w, minlength=CLASS_BUCKETS)
    return _no_below(out, threshold)


@numba.njit(cache=True, nogil=True)
def _class_gather(x: np.ndarray, h: np.ndarray, j: int, base: int, shift: int,
                  keep: np.ndarray, out_v: np.ndarray,
                  out_y: np.ndarray) -> int:  # pragma: no cover - numba
    """The value and hit (label ``j``) of each of class ``j``'s predictions ``x`` whose bucket
    is kept (``keep[b]``), in row order; returns how many."""
    m = keep.size
    c = 0
    for i in range(x.size):
        v = x[i]
        if keep[_bucket(v, base, shift, m)]:
            out_v[c], out_y[c] = v, 1.0 if h[i] == j else 0.0
            c += 1
    return c


def class_gather(rows: np.ndarray, labels: np.ndarray, threshold: float, keep: np.ndarray,
                 sizes: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per class ``j`` (a row of ``rows``, C-contiguous (k, n)), the values and hits of its
    predictions in the buckets ``keep[j]`` (``sizes[j]`` of them), sorted by value (ties in
    row order); one pass per class, in parts on threads."""
    base, shift = class_scale(threshold)
    k = rows.shape[0]

    def part(a: int, b: int) -> list[tuple[np.ndarray, np.ndarray]]:
        got = []
        for j in range(k):
            v, y = np.empty(min(int(sizes[j]), b - a)), np.empty(min(int(sizes[j]), b - a))
            c = _class_gather(rows[j, a:b], labels[a:b], j, base, shift, keep[j], v, y)
            got.append((v[:c], y[:c]))
        return got

    parts = _parts(part, rows.shape[1])
    out = []
    for j in range(k):
        v, y = (np.concatenate([p[j][i] for p in parts] or [np.zeros(0)]) for i in (0, 1))
        order = np.argsort(v, kind="stable")
        out.append((v[order], y[order]))
    return out
