"""The sufficient statistics of every metric state as fused numba kernels, for every input size.

:func:`batch_sums` and :func:`item_values` are the only implementation of the
per-item quantities and per-bin sums that the metric states absorb and the named
per-item functions return; the quantities, the result types and the input checks
are declared in :mod:`annokit.metrics.sums`. The tests compare both functions
with a plain numpy oracle (``tests/metrics/oracle.py``) to 1e-12.

A batch is read in blocks of :data:`BLOCK_ROWS` rows (the last one padded to
that size with valid rows that are never summed: every row loop has a constant
trip count, which LLVM compiles about 15% faster), each block by a few loops
(:mod:`annokit.metrics._block`) while it is in cache: the value checks of
:func:`~annokit.metrics.sums.check_values` and the per-item quantities asked for
into a block buffer (``_values3``, ``_values_any``; those without a log, or only
the three hard-label ones, by lighter loops: ``_values_plain``, ``_values_hard``),
the bin of every probability (``_bin_impl``, classwise bins only), argmax and the
top-label bin (``_top3``, ``_top_impl``; for ECE alone with the checks in the same
loop), then per replicate ``_wtotal`` (weight sums and checks), ``_wsum`` (weighted
sums of the values) and ``_scatter_impl`` (the per-bin sums). Rows are never
branched on, so LLVM vectorises the loops over rows; the row functions
(:mod:`annokit.metrics._rows`) are inlined by LLVM. Logs are
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
from annokit.metrics._block import (
    BLOCK_ROWS,
    HARD_QUANTITIES,
    N_VALUES,
    _bin_impl,
    _check_impl,
    _scatter_impl,
    _top3,
    _top_impl,
    _values3,
    _values_any,
    _values_hard,
    _values_plain,
    _wsum,
    _wtotal,
)
from annokit.metrics.sums import ITEM_QUANTITIES, NAMES, QUANTITIES, BatchSums

__all__ = ["BLOCK_ROWS", "CHUNK_ROWS", "MAX_THREADS", "PARALLEL_MIN_ROWS", "batch_sums",
           "item_values"]

_B = BLOCK_ROWS
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
_HARD = HARD_QUANTITIES
#: The quantities without a log, in the output order of :func:`_values_plain`.
_PLAIN = _sums.NO_LOG_QUANTITIES
#: The value columns of each ``vmode`` (1 hard labels only, 2 every quantity, 3 no log).
_COLUMNS = {1: _HARD, 2: ITEM_QUANTITIES, 3: _PLAIN}


def _grouped(quantities: tuple[str, ...], key: Any) -> tuple[tuple[str, ...], ...]:
    """``quantities`` in groups of equal ``key(quantity)``, groups and members in table order."""
    keys = {q.name: key(q) for q in QUANTITIES}
    order = dict.fromkeys(keys[q] for q in quantities)
    return tuple(tuple(q for q in quantities if keys[q] == g) for g in order)


#: The columns of each vmode computed together (a call computes the groups holding what it
#: asks for, so that one metric alone skips the logs of the others, while the number of
#: compiled kernels stays small: one per set of groups), from the table's groups
#: (:data:`annokit.metrics.sums.QUANTITIES`): with logs (vmode 2) every quantity without a
#: log is one group, as they cost little next to a log.
_GROUPS = {1: (_HARD,),
           2: _grouped(ITEM_QUANTITIES, lambda q: q.group if q.logs else ""),
           3: _grouped(_PLAIN, lambda q: q.group)}
_LOG_EPS = float(np.log(KL_EPS))

_jit = numba.njit(cache=True, nogil=True, error_model="numpy")
_inline = numba.njit(nogil=True, error_model="numpy", inline="always")

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
    everywhere. So a command compiles one or two kernels of about 2 s each (the first
    call took 21-40x a compiled one when every variant was compiled into one function).
    """
    # One numba function over 60 lines, on purpose: the branches on the closure's constants
    # (vmode, k_const, bins) must sit in the compiled function itself, where numba drops the
    # ones the constants leave out before compiling; moved into helpers called with those
    # values as arguments, every variant would be typed and compiled into every kernel.
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
        vals = np.empty((N_VALUES + 2 * kk) * _B)
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
#: The kernels of :func:`_kernel` this process has run (compiled or loaded), by their key.
_READY: set[tuple[int, int, int, int, bool]] = set()


def _bins_only(k: int, vmode: tuple[int, int], has_t: bool) -> tuple[int, int]:
    """The vmode of a call that only bins (vmode 0): that of a kernel with every per-item
    quantity already run in this process for this ``k`` and ``has_t``, if there is one.

    Such a kernel bins the rows exactly as the bins-only one does (the same ``_top3`` /
    ``_top_impl`` and ``_scatter_impl``, with the bins read at run time), so its bin sums
    are the same bit for bit, and a command that evaluates and then draws a reliability
    diagram (``report``, ``demo``) compiles one kernel, not two (about a third of a first
    ``demo``'s compile time). Its per-item sums are computed and dropped.
    """
    key = k if k in (2, 3) else 0
    ready = sorted(r for r in _READY if r[0] == key and r[1] == 2 and r[4] == has_t)
    return (2, ready[0][2]) if vmode[0] == 0 and ready else vmode


def _compiled(k: int, vmode: tuple[int, int], bins: int, has_t: bool, args: tuple) -> Any:
    """The kernel of :func:`_kernel` for this call, ready to run.

    ``args``: the call's arguments for no rows (``a0 = a1 = 0``). The first use in a
    process runs the kernel on no rows, which loads it from numba's cache or compiles
    it (about 2 s, once per environment): if that takes more than 2 s, a line on
    stderr says so (under the progress bars' rules), so that a first command does not
    look hung; and the input's own run time is never taken for compiling.
    """
    key = (k if k in (2, 3) else 0, *vmode, -1 if vmode[0] else bins, has_t)
    kernel = _kernel(*key)
    if not kernel.signatures:
        with notice_if_slow("annokit: compiling the metric kernels (once per environment; "
                            "later runs load them from the cache) ..."):
            kernel(*args)
    _READY.add(key)
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
    if nb:
        vmode = _bins_only(k, vmode, s is not None)
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
