"""The sufficient statistics of every metric state as fused numba kernels, for every input size.

:func:`batch_sums` and :func:`item_values` are the only implementation of the
per-item quantities and per-bin sums that the metric states absorb and the named
per-item functions return; the quantities, the result types and the input checks
are declared in :mod:`annokit.metrics.sums`. The tests compare both functions
with a plain numpy oracle (``tests/metrics/oracle.py``) to 1e-12.

A batch is read in blocks of :data:`BLOCK_ROWS` rows (the last one padded to
that size with valid rows that are never summed: every row loop has a constant
trip count, which LLVM compiles about 15% faster), each block by a few loops
while it is in cache: the value checks of
:func:`~annokit.metrics.sums.check_values` and every per-item quantity into a
block buffer (:func:`_values3`, :func:`_values_any`; only the three hard-label
ones, with no logs, when nothing else is asked: :func:`_values_hard`), the bin of
every probability (:func:`_bin_impl`, classwise bins only), argmax and the
top-label bin (:func:`_top3`, :func:`_top_impl`; for ECE alone with the checks in
the same loop), then per replicate :func:`_wtotal` (weight sums and checks),
:func:`_wsum` (weighted sums of the values) and :func:`_scatter_impl` (the per-bin
sums). Rows are never branched on, so LLVM vectorises the loops over rows; the row
functions (:mod:`annokit.metrics._rows`) are inlined by LLVM. Logs are
:func:`annokit.metrics._fastlog.log` (fdlibm's algorithm, < 1 ulp, vectorisable).
When a check fails, :func:`~annokit.metrics.sums.check_values` runs and raises the
message naming the row.

Each kind of call (3, 2 or any number of classes; which groups of quantities
(:data:`_GROUPS`: a metric alone computes its group, not every quantity); whether
soft labels are given; for ECE-like calls which bins) is its own small kernel
(:func:`_kernel`), compiled on first use with ``cache=True`` (once per
environment; about 2 s, with a notice on stderr past 2 s) and then loaded from
numba's cache: a command compiles only what it runs.

An input is cut into chunks of :data:`CHUNK_ROWS` rows, run on threads (the
kernels release the GIL) that each take the next free chunk; the chunks'
sums are added in chunk order. The cut depends only on the number of rows, so
the results are the same bit for bit whatever the number of threads or CPUs
(:data:`MAX_THREADS`).
"""

from __future__ import annotations

import functools
import itertools
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numba
import numpy as np

from annokit.core.checks import SIMPLEX_ATOL
from annokit.core.divergence import KL_EPS
from annokit.core.progress import notice_if_slow
from annokit.metrics import _binning
from annokit.metrics import sums as _sums
from annokit.metrics._binning import BinStats
from annokit.metrics._fastlog import log as _log
from annokit.metrics._rows import (
    _add9,
    _bin,
    _class_terms,
    _row_hard,
    _row_head,
    _row_ok,
    _row_plain,
    _row_rank,
    _row_values,
)
from annokit.metrics._simd import add4 as _add4
from annokit.metrics.sums import ITEM_QUANTITIES, NAMES, BatchSums

__all__ = ["BLOCK_ROWS", "CHUNK_ROWS", "MAX_THREADS", "PARALLEL_MIN_ROWS", "batch_sums",
           "item_values"]

#: Rows per block: the loops of one block read it from cache.
BLOCK_ROWS = _B = 1024
#: Rows per chunk: an input is cut into chunks of this many rows (fixed: the sums do not
#: depend on the CPUs), run on threads and merged in chunk order.
CHUNK_ROWS = 1 << 17
#: Inputs of at least this many rows have two chunks or more, and run on threads.
PARALLEL_MIN_ROWS = CHUNK_ROWS + 1
#: Threads for the chunks (None: the CPUs available to the process); 1 runs them in turn.
MAX_THREADS: int | None = None
#: Interleaved copies of the bin accumulators (breaks store-to-load dependency chains).
_LANES = 4
#: The quantities of the hard-label row function, in its output order.
_HARD = tuple(q for q in ITEM_QUANTITIES if _sums.quantity_needs(q) == "hard")
#: The quantities without a log, in the output order of :func:`_values_plain`.
_PLAIN = _sums.NO_LOG_QUANTITIES
#: The value columns of each ``vmode`` (1 hard labels only, 2 every quantity, 3 no log).
_COLUMNS = {1: _HARD, 2: ITEM_QUANTITIES, 3: _PLAIN}
#: The columns of each vmode computed together (a call computes the groups holding what it
#: asks for, so that one metric alone skips the logs of the others, while the number of
#: compiled kernels stays small: one per set of groups).
_GROUPS = {1: (_HARD,),
           2: (("nll_majority", "nll"), ("ent_ce", "ent_ce_signed", "kl"), ("jsd",), _PLAIN),
           3: (_PLAIN[:4], _PLAIN[4:])}
#: The quantities (bits of a vmode-2 mask) that need log p, and log soft.
_LOG_P = sum(1 << ITEM_QUANTITIES.index(q) for q in
             ("ent_ce", "ent_ce_signed", "jsd", "kl", "nll_majority", "nll"))
_LOG_T = sum(1 << ITEM_QUANTITIES.index(q) for q in ("ent_ce", "ent_ce_signed", "jsd", "kl"))
_LOG_EPS = float(np.log(KL_EPS))
_INF = np.inf

_jit = numba.njit(cache=True, nogil=True, error_model="numpy")
_inline = numba.njit(nogil=True, error_model="numpy", inline="always")
_reassoc = numba.njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc"})

# --------------------------------------------------------------------------- loops over a block
# Each loop is written for any k; _kernel passes the constant 3 or 2 (unrolled, SIMD) or k.

@_inline
def _check_impl(p, t, y, m, k, atol, has_t):  # pragma: no cover - compiled
    bad = 0
    for i in range(m):
        bad += 0 if _row_ok(p, t, y, i, k, atol, has_t) else 1
    return bad


@_inline
def _values_hard(p, y, m, k, log_eps, vals, mask):  # pragma: no cover - compiled
    """The quantities of _HARD (column ``q`` at ``vals[q B:]``, if bit ``q`` of ``mask``)."""
    for i in range(m):
        acc, brier, nll = _row_hard(p, y, i, k, log_eps)
        if mask & 1:
            vals[i] = acc
        if mask & 2:
            vals[_B + i] = brier
        if mask & 4:
            vals[2 * _B + i] = nll


@_inline
def _values_plain(p, t, y, m, k, vals, mask):  # pragma: no cover - compiled
    """The quantities of _PLAIN (no log: DistCE, Brier, RankCS alone cost a fraction of
    the full row) for the rows of a block (as _values_hard)."""
    for i in range(m):
        acc, dist, brier, bsoft = _row_plain(p, t, y, i, k)
        rank, rank_ties = _row_rank(p, t, i, k)
        if mask & 1:
            vals[i] = acc
        if mask & 2:
            vals[_B + i] = dist
        if mask & 4:
            vals[2 * _B + i] = brier
        if mask & 8:
            vals[3 * _B + i] = bsoft
        if mask & 16:
            vals[4 * _B + i] = rank
        if mask & 32:
            vals[5 * _B + i] = rank_ties


@_inline
def _store_values(vals, i, v, mask):  # pragma: no cover - compiled
    """``vals[q B + i] = v[q]`` for the quantities of ITEM_QUANTITIES asked for (bit ``q`` of
    ``mask``, a constant: LLVM drops the tests, and the work of the others, their logs)."""
    if mask & 1:
        vals[i] = v[0]
    if mask & 2:
        vals[_B + i] = v[1]
    if mask & 4:
        vals[2 * _B + i] = v[2]
    if mask & 8:
        vals[3 * _B + i] = v[3]
    if mask & 16:
        vals[4 * _B + i] = v[4]
    if mask & 32:
        vals[5 * _B + i] = v[5]
    if mask & 64:
        vals[6 * _B + i] = v[6]
    if mask & 128:
        vals[7 * _B + i] = v[7]
    if mask & 256:
        vals[8 * _B + i] = v[8]
    if mask & 512:
        vals[9 * _B + i] = v[9]
    if mask & 1024:
        vals[10 * _B + i] = v[10]
    if mask & 2048:
        vals[11 * _B + i] = v[11]


@_inline
def _values3(p, t, y, m, atol, log_eps, vals, has_t, mask):  # pragma: no cover - compiled
    """Every quantity of the rows of a block of 3 classes, and the failed checks.

    The class terms are written out (a class loop with three inlined logs is over
    LLVM's full-unroll threshold), so the row loop has no inner loop left and LLVM
    vectorises it; the terms are added in the class loop's order (:func:`_values_any`),
    so the results are the same.
    """
    bad = 0
    for i in range(m):
        bad += 0 if _row_ok(p, t, y, i, 3, atol, has_t) else 1
        o, lab = 3 * i, y[i]
        isp, ist, pred = _row_head(p, t, i, 3)
        p0, p1, p2, t0, t1, t2 = p[o], p[o + 1], p[o + 2], t[o], t[o + 1], t[o + 2]
        s = _add9(_add9(
            _class_terms(p0, t0, _log(p0), _log(t0), isp, ist, lab == 0, log_eps),
            _class_terms(p1, t1, _log(p1), _log(t1), isp, ist, lab == 1, log_eps)),
            _class_terms(p2, t2, _log(p2), _log(t2), isp, ist, lab == 2, log_eps))
        _store_values(vals, i, _row_values(1.0 if pred == lab else 0.0, s, _row_rank(p, t, i, 3)),
                      mask)
    return bad


@_inline
def _values_any(p, t, y, m, k, atol, log_eps, vals, has_t, mask):  # pragma: no cover - compiled
    """:func:`_values3` for any ``k`` (2: the class loop has one iteration left and
    vectorises; more than 3: the logs of every probability first, in SIMD loops, into
    ``vals[12 B:]``)."""
    if k > 3 and mask & _LOG_P:
        for x in range(k * m):
            vals[12 * _B + x] = _log(p[x])
    if k > 3 and mask & _LOG_T:
        for x in range(k * m):
            vals[(12 + k) * _B + x] = _log(t[x])
    bad = 0
    for i in range(m):
        bad += 0 if _row_ok(p, t, y, i, k, atol, has_t) else 1
        o, lab = k * i, y[i]
        isp, ist, pred = _row_head(p, t, i, k)
        s = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        for j in range(k):
            pj, tj = p[o + j], t[o + j]
            lp = vals[12 * _B + o + j] if k > 3 else _log(pj)
            lt = vals[(12 + k) * _B + o + j] if k > 3 else _log(tj)
            s = _add9(s, _class_terms(pj, tj, lp, lt, isp, ist, lab == j, log_eps))
        _store_values(vals, i, _row_values(1.0 if pred == lab else 0.0, s, _row_rank(p, t, i, k)),
                      mask)
    return bad


@_inline
def _bin_impl(p, count, n_bins, bins):  # pragma: no cover - compiled
    step, fnb, last = 1.0 / n_bins, float(n_bins), np.int32(n_bins - 1)
    for x in range(count):
        bins[x] = _bin(p[x], step, fnb, last)


@_inline
def _top_impl(p, t, y, m, k, bins, classwise, nb, topc, topt, toph, topb, check, atol,
              has_t):  # pragma: no cover - compiled
    """Per row of a block: top-label probability, the soft label of that class, whether it
    is the hard label, and its bin (a loop without stores to shared cells: SIMD); with
    ``check`` also the checks of :func:`_check` in the same loop, returning the failures."""
    step, fnb, last = 1.0 / nb, float(nb), np.int32(nb - 1)
    bad = 0
    for i in range(m):
        if check:
            bad += 0 if _row_ok(p, t, y, i, k, atol, has_t) else 1
        o, pred = k * i, 0
        c, ts = p[o], t[o]
        for j in range(1, k):
            pj, tj = p[o + j], t[o + j]
            better = pj > c
            c = pj if better else c
            ts = tj if better else ts
            pred = j if better else pred
        # bins are monotone: bin(max_j p_j) = max_j bin(p_j); without classwise bins only
        # the top-label probability is binned (one bin per row, not k)
        if classwise:
            b = bins[o]
            for j in range(1, k):
                b = max(b, bins[o + j])
        else:
            b = _bin(c, step, fnb, last)
        topc[i], topt[i] = c, ts
        toph[i] = 1.0 if pred == y[i] else 0.0
        topb[i] = b
    return bad


@_inline
def _top3(p, t, y, m, nb, bins, classwise, topc, topt, toph, topb, check, atol,
          has_t):  # pragma: no cover - compiled
    """:func:`_top_impl` for k = 3, the classes written out and every value loaded before
    the selects (the generic loop does not vectorise: 13.6 against 3.6 ns per row)."""
    step, fnb, last = 1.0 / nb, float(nb), np.int32(nb - 1)
    bad = 0
    for i in range(m):
        if check:
            bad += 0 if _row_ok(p, t, y, i, 3, atol, has_t) else 1
        o = 3 * i
        p0, p1, p2 = p[o], p[o + 1], p[o + 2]
        t0, t1, t2 = t[o], t[o + 1], t[o + 2]  # loaded before the selects: SIMD
        better = p1 > p0
        c = p1 if better else p0
        ts = t1 if better else t0
        pred = 1.0 if better else 0.0
        better = p2 > c
        c = p2 if better else c
        ts = t2 if better else ts
        pred = 2.0 if better else pred
        topc[i], topt[i] = c, ts
        toph[i] = 1.0 if pred == float(y[i]) else 0.0
        if classwise:  # bins are monotone: bin(max_j p_j) = max_j bin(p_j)
            topb[i] = max(bins[o], max(bins[o + 1], bins[o + 2]))
        else:
            topb[i] = _bin(c, step, fnb, last)
    return bad


@_inline
def _scatter_impl(p, t, y, m, k, bins, w, weighted, rr, a, classwise, top, cw, topc, topt,
                  toph, topb):  # pragma: no cover - compiled
    # flat views; the four sums of a bin are adjacent: one 4-wide add per bin (_simd.add4,
    # the same IEEE additions as four scalar ones: 17 -> 6 ns per row for k = 3)
    lanes, nb, tf, cf = top.shape[0] - 1, top.shape[1], top.reshape(-1), cw.reshape(-1)
    for i in range(m):
        wi = w[rr, a + i] if weighted else 1.0
        r, o = i & lanes, k * i
        _add4(tf, np.uint64(4 * (r * nb + topb[i])), wi, wi * topc[i], wi * toph[i],
              wi * topt[i])
        if classwise:
            lab = y[i]
            for j in range(k):
                _add4(cf, np.uint64(4 * ((r * k + j) * nb + bins[o + j])), wi, wi * p[o + j],
                      wi if lab == j else 0.0, wi * t[o + j])


@_reassoc
def _wsum(vals, mask, m, w, weighted, rr, a, items):  # pragma: no cover - compiled
    """``items[rr, q] += sum_i w[rr, a + i] vals[q B + i]`` (or the plain sum), for the
    columns ``q`` asked for (bit ``q`` of ``mask``).

    ``reassoc`` (the only fast-math flag) lets LLVM keep SIMD partial sums; it
    changes the summation order only.
    """
    for q in range(items.shape[1]):
        if not (mask >> q) & 1:
            continue
        s = 0.0
        if weighted:
            for i in range(m):
                s += w[rr, a + i] * vals[q * _B + i]
        else:
            for i in range(m):
                s += vals[q * _B + i]
        items[rr, q] += s


@_reassoc
def _wtotal(w, rr, a, m):  # pragma: no cover - compiled
    """Sum of ``w[rr, a:a + m]`` and how many of them are not finite and ``>= 0``."""
    s, bad = 0.0, 0
    for i in range(m):
        v = w[rr, a + i]
        s += v
        bad += 0 if (v >= 0.0) & (v < _INF) else 1
    return s, bad


# --------------------------------------------------------------------------- driver

@_inline
def _pad(x, buf, k):  # pragma: no cover - compiled
    """The rows of ``x`` (fewer than B) followed by rows (1, 0, ..., 0): B rows in ``buf``.

    Element loops, not ``buf[:n] = x``: a slice assignment checks shapes, and its error
    message alone takes numba ~4 s to compile."""
    n = x.shape[0]
    for o in range(n):
        buf[o] = x[o]
    for o in range(n, buf.shape[0]):
        buf[o] = 0.0
    for o in range(n, buf.shape[0], k):
        buf[o] = 1.0
    return buf


@_inline
def _pad_labels(y, n, buf):  # pragma: no cover - compiled
    """The first ``n`` labels of ``y`` (fewer than B) followed by 0: B labels in ``buf``."""
    for i in range(n):
        buf[i] = y[i]
    for i in range(n, buf.shape[0]):
        buf[i] = 0
    return buf


@functools.cache
def _kernel(k_const: int, vmode: int, mask: int, bins: int, has_t: bool) -> Any:
    """The fused pass for one kind of call, compiled (or loaded from the cache) when first asked.

    Compile-time constants (closure variables: numba keys a closure's cache entry on
    their values, and compiles only the branches that the constants leave):
    ``k_const`` 3 or 2 (the class loops unroll and the row loops run SIMD) or 0 (any
    ``k``, read at run time); ``vmode`` 0 no per-item quantity, 1 those of _HARD, 2
    all, 3 those of _PLAIN; ``mask`` the columns of ``_COLUMNS[vmode]`` computed (bit
    ``q`` for column ``q``; whole groups of _GROUPS: LLVM drops the logs of the others,
    e.g. KL alone takes 6 logs per row of 3 classes, not 9, and no division);
    ``has_t`` soft labels given (else ``t`` is ``p``, not checked twice; a constant,
    so that the check loops vectorise: read at run time, the check loop of a
    vmode-3 call ran scalar, 9 of its 12 ns per row). With per-item quantities, the
    bins are read at run time (the values dominate the time); without, the kernel
    only checks and bins the rows, and ``bins`` (0 none, 1 top-label, 2 top-label
    and classwise) is a constant (ECE alone: the checks, argmax and bin in one SIMD
    loop). Weights, hard labels and the per-item output are run-time flags
    everywhere. So a command compiles one or two kernels of about 2 s each (issue 22:
    the first call took 21-40x a compiled one when every variant was compiled into
    one function).
    """
    values = vmode > 0

    @_jit
    def part(p, t, y, has_y, w, weighted, a0, a1, k, n_bins, classwise_rt,
             atol, log_eps, items, wtot, top, cw, src, out):  # pragma: no cover - compiled
        """Rows a0..a1 into the accumulators; returns the failed checks (rows, weights).

        ``items[rr, q]``, ``wtot[rr]``, ``top[rr]``, ``cw[rr]``: see _wsum, _wtotal,
        _scatter_impl; value column ``src[c]`` of row i goes to ``out[i, c]``.
        Stops after the first block with a failure (the caller raises). The work arrays
        are allocated here: LLVM then knows they alias no input, and vectorises the loops
        that write them (passed in, the values took 4x longer).
        """
        kk = k_const if k_const else k
        ht = has_t
        nbins = n_bins > 0 if values else bins > 0
        classwise = classwise_rt if values else bins == 2
        r, nq = items.shape
        vals = np.empty((12 + 2 * kk) * _B)
        binned = np.empty(kk * _B, dtype=np.int32)
        topc, topt, toph = np.empty(_B), np.empty(_B), np.empty(_B)
        topb = np.empty(_B, dtype=np.int32)
        pad_p, pad_t, ybuf = np.empty(kk * _B), np.empty(kk * _B), np.empty(_B, dtype=np.int64)
        if not has_y:  # label 0 for every row
            _pad_labels(y, 0, ybuf)
        bad = wbad = 0
        for a in range(a0, a1, _B):
            b = min(a + _B, a1)
            m = b - a
            if m == _B:
                pb, tb = p[kk * a:kk * b], t[kk * a:kk * b]
                yb = y[a:b] if has_y else ybuf
            else:  # the last block, padded to B rows with valid rows (1, 0, ..., 0), label 0
                pb = _pad(p[kk * a:kk * b], pad_p, kk)
                yb = _pad_labels(y[a:b], m if has_y else 0, ybuf)
                tb = _pad(t[kk * a:kk * b], pad_t, kk) if ht else pb
            if vmode == 2 and k_const == 3:  # the checks in the same loop
                bad += _values3(pb, tb, yb, _B, atol, log_eps, vals, ht, mask)
            elif vmode == 2:
                bad += _values_any(pb, tb, yb, _B, kk, atol, log_eps, vals, ht, mask)
            elif vmode == 3:
                _values_plain(pb, tb, yb, _B, kk, vals, mask)
                bad += _check_impl(pb, tb, yb, _B, kk, atol, ht)
            elif vmode == 1:
                _values_hard(pb, yb, _B, kk, log_eps, vals, mask)
                bad += _check_impl(pb, tb, yb, _B, kk, atol, ht)
            elif bins == 1 and k_const == 3:  # the checks in the top-label loop below
                pass
            else:
                bad += _check_impl(pb, tb, yb, _B, kk, atol, ht)
            for i in range(m if out.shape[0] else 0):
                for c in range(src.shape[0]):
                    out[a + i, c] = vals[src[c] * _B + i]
            if nbins:
                if classwise:
                    _bin_impl(pb, kk * _B, n_bins, binned)
                if k_const == 3:
                    bad += _top3(pb, tb, yb, _B, n_bins, binned, classwise, topc, topt, toph,
                                 topb, not values and bins == 1, atol, ht)
                else:
                    _top_impl(pb, tb, yb, _B, kk, binned, classwise, n_bins, topc, topt, toph,
                              topb, False, atol, True)
            for rr in range(r):
                if weighted:
                    s, nbad = _wtotal(w, rr, a, m)
                    wtot[rr] += s
                    wbad += nbad
                if nq:
                    _wsum(vals, mask, m, w, weighted, rr, a, items)
                if nbins:
                    _scatter_impl(pb, tb, yb, m, kk, binned, w, weighted, rr, a, classwise,
                                  top[rr], cw[rr], topc, topt, toph, topb)
            if bad or wbad:
                break
        return bad, wbad

    return part


# --------------------------------------------------------------------------- Python API

def _threads(chunks: int) -> int:
    """Threads for ``chunks`` chunks: :data:`MAX_THREADS`, else the CPUs this process may use."""
    if MAX_THREADS is not None:
        cpus = MAX_THREADS
    else:
        try:
            cpus = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):  # pragma: no cover - not Linux
            cpus = os.cpu_count() or 1
    return max(1, min(cpus, chunks))


def _run_parts(fn, n: int) -> list:
    """``fn(a, b)`` on the row chunks ``[c CHUNK_ROWS, (c + 1) CHUNK_ROWS)``, in chunk order.

    The chunks depend only on ``n``; threads take the next chunk when they are
    free (a thread slowed by other processes holds up one chunk, not half the
    input), and the results come back in chunk order, so the caller's sums are
    the same bit for bit with one thread or many. The executor lives for one
    call (tens of microseconds), so that a forked process never inherits a pool
    whose threads do not exist.
    """
    bounds = [*range(0, n, CHUNK_ROWS), n]
    threads = _threads(len(bounds) - 1)
    if threads < 2:
        return [fn(a, b) for a, b in itertools.pairwise(bounds)]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(fn, bounds[:-1], bounds[1:]))


def _run(part, n: int, p, s, h, w, names) -> list:
    """``part(a, b, atol) -> (result, failed)`` over the parts; numpy's message on a failure."""
    results = _run_parts(lambda a, b: part(a, b, SIMPLEX_ATOL), n) if n else []
    if any(bad for _, bad in results):
        _sums.check_values(p, s, h, w, names=names)
        # numpy accepted it: a row sum within rounding of the tolerance (numpy adds
        # more than 8 classes pairwise). Accept what numpy accepts.
        results = _run_parts(lambda a, b: part(a, b, SIMPLEX_ATOL + 1e-12), n)
        if any(bad for _, bad in results):  # pragma: no cover - defensive
            raise RuntimeError("kernel value checks disagree with sums.check_values")
    return [res for res, _ in results]


def _inputs(probs, soft, hard, weights, quantities, names):
    """Prepared arrays, flat C-contiguous rows (``soft`` is ``probs`` when absent), the
    vmode, the columns of _COLUMNS[vmode] computed (bit mask: the groups of _GROUPS
    holding a quantity asked for) and which column holds each quantity."""
    p, s, h, w = _sums.prepare(probs, soft, hard, weights, names=names)
    quantities = _sums.check_quantities(quantities, s, h)
    vmode = (1 if all(q in _HARD for q in quantities)
             else 3 if all(q in _PLAIN for q in quantities) else 2) if quantities else 0
    cols = _COLUMNS.get(vmode, ())
    asked = [g for g in _GROUPS.get(vmode, ()) if set(g) & set(quantities)]
    mask = sum(1 << c for c, q in enumerate(cols) if any(q in g for g in asked))
    flat = (np.ascontiguousarray(p).reshape(-1),
            p.reshape(-1) if s is None else np.ascontiguousarray(s).reshape(-1),
            np.zeros(1, dtype=np.int64) if h is None else np.ascontiguousarray(h))
    return p, s, h, w, quantities, flat, (vmode, mask), [cols.index(q) for q in quantities]


_NO_OUT, _NO_SRC = np.empty((0, 0)), np.empty(0, dtype=np.int64)


def _compiled(k: int, vmode: tuple[int, int], bins: int, has_t: bool, args: tuple) -> Any:
    """The kernel of :func:`_kernel` for this call, ready to run.

    ``args``: the call's arguments for no rows (``a0 = a1 = 0``). The first use in a
    process runs the kernel on no rows, which loads it from numba's cache or compiles
    it (about 2 s, once per environment): if that takes more than 2 s, a line on
    stderr says so (under the progress bars' rules), so that a first command does not
    look hung; and the input's own run time is never taken for compiling.
    """
    kernel = _kernel(k if k in (2, 3) else 0, *vmode, -1 if vmode[0] else bins, has_t)
    if not kernel.signatures:
        with notice_if_slow("annokit: compiling the metric kernels (once per environment; "
                            "later runs load them from the cache) ..."):
            kernel(*args)
    return kernel


def batch_sums(probs: Any, soft: Any, hard: Any, weights: Any, *, quantities: Any = (),
               n_bins: int | None = None, classwise: bool = False,
               names: Any = NAMES) -> BatchSums:
    """Weighted sums of per-item quantities and per-bin statistics of one batch, in one pass.

    Parameters (checked by :func:`annokit.metrics.sums.prepare` and
    :func:`~annokit.metrics.sums.check_values`): ``weights`` None, ``(n,)`` or
    ``(r, n)`` (then every sum has a leading replicate axis of length ``r``);
    ``quantities`` from :data:`~annokit.metrics.sums.ITEM_QUANTITIES`;
    ``n_bins`` equal-width bins (None for none); ``classwise`` adds the
    classwise bins; ``names`` of the three inputs for the messages.

    Raises
    ------
    SchemaError
        Wrong shapes or dtypes, or a quantity whose labels were not given.
    InvalidValueError
        A value off its domain (the message names the row).
    """
    p, s, h, w, quantities, (pf, sf, hf), vmode, src = _inputs(
        probs, soft, hard, weights, quantities, names)
    nb = 0 if n_bins is None else _binning.check_n_bins(n_bins)
    n, k = p.shape
    one = w is None or w.ndim == 1
    r = 1 if one else w.shape[0]
    w2 = np.zeros((1, 1)) if w is None else np.ascontiguousarray(w.reshape(r, n))
    nq = len(_COLUMNS.get(vmode[0], ()))
    lanes = _LANES if r * k * nb <= 1 << 16 else 1
    shapes = ((r, nq), (r,), (r, lanes, max(nb, 1), 4),
              (r, lanes, k if classwise and nb else 1, max(nb, 1), 4))

    cw = bool(classwise) and nb > 0

    def args(a: int, b: int, atol: float, acc: list) -> tuple:
        return (pf, sf, hf, h is not None, w2, w is not None, a, b, k, nb, cw, atol,
                _LOG_EPS, *acc, _NO_SRC, _NO_OUT)

    kernel = _compiled(k, vmode, (2 if cw else 1) if nb else 0, s is not None,
                       args(0, 0, SIMPLEX_ATOL, [np.zeros(shape) for shape in shapes]))

    def part(a: int, b: int, atol: float):
        acc = [np.zeros(shape) for shape in shapes]
        bad = kernel(*args(a, b, atol, acc))
        return acc, bad[0] + bad[1]

    parts = _run(part, n, p, s, h, w, names) or [[np.zeros(shape) for shape in shapes]]
    items, wtot, top, cw = (sum(acc[i] for acc in parts) for i in range(4))
    weight: Any = float(n) if w is None else (float(wtot[0]) if one else wtot)
    bins = None
    if nb:
        t4, c4 = (x.sum(axis=1)[0] if one else x.sum(axis=1) for x in (top, cw))
        bins = BinStats(weight, t4[..., 0], t4[..., 1], t4[..., 2] if h is not None else None,
                        t4[..., 3] if s is not None else None)
        if classwise:
            bins.cw_count, bins.cw_conf = c4[..., 0], c4[..., 1]
            bins.cw_hit = c4[..., 2] if h is not None else None
            bins.cw_soft = c4[..., 3] if s is not None else None
    items = items[:, src]
    return BatchSums(weight, items[0] if one else items, quantities, bins)


def item_values(probs: Any, soft: Any, hard: Any, quantities: Any = ITEM_QUANTITIES, *,
                eps: float = KL_EPS, names: Any = NAMES) -> np.ndarray:
    """Per-item values, shape ``(n, len(quantities))``: the quantities of
    :data:`~annokit.metrics.sums.ITEM_QUANTITIES` whose means the states sum, one column each.

    The one implementation of the per-item quantities: the named functions
    (:mod:`annokit.metrics.scores`, :mod:`annokit.metrics.human_calibration`), the
    per-item output of the engine and the states all read them here. ``eps``: the
    floor of the model probabilities in the logs (``nll``, ``nll_majority``, ``kl``;
    default ``KL_EPS``).

    Raises
    ------
    SchemaError, InvalidValueError
        As :func:`batch_sums`.
    """
    p, s, h, _, quantities, (pf, sf, hf), vmode, src = _inputs(
        probs, soft, hard, None, quantities, names)
    n, k = p.shape
    log_eps = _LOG_EPS if eps == KL_EPS else float(np.log(eps))
    out = np.empty((n, len(quantities)))
    acc = (np.zeros((1, 0)), np.zeros(1), np.zeros((1, 1, 1, 4)), np.zeros((1, 1, 1, 1, 4)))
    src = np.array(src, dtype=np.int64)

    def args(a: int, b: int, atol: float) -> tuple:
        return (pf, sf, hf, h is not None, _NO_OUT, False, a, b, k, 0, False, atol,
                log_eps, *acc, src, out)

    kernel = _compiled(k, vmode, 0, s is not None, args(0, 0, SIMPLEX_ATOL))

    def part(a: int, b: int, atol: float):
        bad = kernel(*args(a, b, atol))
        return None, bad[0]

    _run(part, n, p, s, h, None, names)
    return out
