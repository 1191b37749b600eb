"""The sums API of :mod:`annokit.metrics.sums`, as fused numba kernels (every input size).

:func:`batch_sums` and :func:`item_values` take the arguments of their
namesakes in :mod:`annokit.metrics.sums` and return the same structures; the
definitions of the quantities and the bins are those of that module. A plain
numpy oracle of both lives in the tests (``tests/metrics/oracle.py``) and the
tests compare the two to 1e-12.

How a batch is computed: the rows are processed in blocks of
:data:`BLOCK_ROWS` (each block stays in cache while it is read by each loop):

1. :func:`_check`: the value checks (finite, ``>= 0``, rows summing to 1 within
   1e-6, hard labels in ``[0, k)``), one vectorised loop counting failed rows;
2. :func:`_values`: the per-item values into a (quantity, row) block buffer:
   every quantity of :data:`sums.ITEM_QUANTITIES <annokit.metrics.sums.ITEM_QUANTITIES>`,
   or only the three hard-label ones when nothing else is asked for (no logs);
3. :func:`_binprep`: the bin of every probability and the top-label row data
   (confidence, hit, soft value at the prediction, top bin);
4. per replicate weighting: weighted (or plain) column sums of the values
   (:func:`_wsum`), weight totals and weight checks, and the scatter into the
   per-bin accumulators (:func:`_scatter`).

No loop branches on data, so LLVM vectorises 1-3 over rows. Each loop is
written once for any number of classes ``k`` and inlined into a dispatcher
that calls it with the constant 3 or with ``k``: the k = 3 copy has its class
loops unrolled and runs SIMD across rows (k = 3 is the common case and the
benchmark). Logs are :func:`_log` (fdlibm's algorithm, < 1 ulp, vectorisable).
When any check fails, the numpy checks of :func:`annokit.metrics.sums.check_values`
run and raise the message that names the row.

Large inputs are split into :data:`N_PARTS` contiguous parts run on threads
(the kernels release the GIL); inputs under :data:`PARALLEL_MIN_ROWS` rows run
in one part on the calling thread. The split depends only on the number of
rows, so results do not depend on the machine; parts change only the
summation order. Kernels are compiled with ``cache=True`` (once per
environment), for one signature each (float64/int64 C-contiguous arrays).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numba
import numpy as np
from llvmlite import ir as _ir
from numba import types as _types
from numba.extending import intrinsic as _intrinsic

from annokit.core.checks import SIMPLEX_ATOL
from annokit.core.divergence import KL_EPS
from annokit.metrics import _binning
from annokit.metrics import sums as _sums
from annokit.metrics._binning import BinStats
from annokit.metrics.sums import ITEM_QUANTITIES, NAMES, BatchSums

__all__ = ["BLOCK_ROWS", "N_PARTS", "PARALLEL_MIN_ROWS", "batch_sums", "item_values"]

#: Rows per block: the loops of one block read it from cache.
BLOCK_ROWS = 4096
_B = BLOCK_ROWS

#: Inputs of at least this many rows are split into N_PARTS parts run on threads.
PARALLEL_MIN_ROWS = 1 << 17

#: Number of contiguous parts of a large input (fixed, so results do not depend on the CPUs).
N_PARTS = 2

#: Interleaved copies of the bin accumulators (breaks store-to-load dependency chains).
_LANES = 4

#: The quantities of the hard-label row function, in its output order.
_HARD = tuple(q for q in ITEM_QUANTITIES if _sums.quantity_needs(q) == "hard")

_LOG_EPS = float(np.log(KL_EPS))
_INF = np.inf

_jit = numba.njit(cache=True, nogil=True, error_model="numpy")
_inline = numba.njit(nogil=True, error_model="numpy", inline="always")
_reassoc = numba.njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc"})

# --------------------------------------------------------------------------- log
# fdlibm's e_log.c without branches (error < 1 ulp, as np.log), so that loops
# calling it vectorise; numba's scalar np.log is a libm call per value.

_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_TWO54 = 1.80143985094819840000e+16
_TINY = 2.2250738585072014e-308
_LG1 = 6.666666666666735130e-01
_LG2 = 3.999999999940941908e-01
_LG3 = 2.857142874366239149e-01
_LG4 = 2.222219843214978396e-01
_LG5 = 1.818357216161805012e-01
_LG6 = 1.531383769920937332e-01
_LG7 = 1.479819860511658591e-01


@_intrinsic
def _as_int(typingctx, x):  # pragma: no cover - compiled
    """The bits of a float64 as int64 (LLVM bitcast)."""
    if x != _types.float64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], _ir.IntType(64))
    return _types.int64(_types.float64), codegen


@_intrinsic
def _as_float(typingctx, i):  # pragma: no cover - compiled
    """The float64 with the bits of an int64 (LLVM bitcast)."""
    if i != _types.int64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], _ir.DoubleType())
    return _types.float64(_types.int64), codegen


@_jit
def _log(x):  # pragma: no cover - compiled
    """Natural log, fdlibm ``__ieee754_log`` without branches (error < 1 ulp).

    Strict IEEE arithmetic: no caller inlines it at the numba level, and LLVM
    keeps each instruction's own (absent) fast-math flags when it inlines.
    Subnormal inputs are scaled by 2**54 as in fdlibm. ``x = 0`` gives -746.5
    (finite and below log(1e-15), so ``0 * log 0 = 0`` with no branch); values
    outside ``[0, inf)`` give meaningless finite numbers (they fail the checks).
    """
    sub = x < _TINY
    xs = x * _TWO54 if sub else x
    ix = _as_int(xs)
    k = ((ix >> 52) & 0x7FF) - (1077 if sub else 1023)
    hx = (ix >> 32) & 0x000FFFFF
    i = (hx + 0x95F64) & 0x100000
    f = _as_float((ix & 0x000FFFFFFFFFFFFF) | ((i ^ 0x3FF00000) << 32)) - 1.0
    k += i >> 20
    s = f / (2.0 + f)
    dk = float(k)
    z = s * s
    w = z * z
    t1 = w * (_LG2 + w * (_LG4 + w * _LG6))
    t2 = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7)))
    r = t2 + t1
    hfsq = 0.5 * f * f
    big = ((hx - 0x6147A) | (0x6B851 - hx)) > 0
    a = dk * _LN2_HI - ((hfsq - (s * (hfsq + r) + dk * _LN2_LO)) - f)
    b = dk * _LN2_HI - ((s * (f - r) - dk * _LN2_LO) - f)
    return a if big else b


@_jit
def _log_array(x, out):  # pragma: no cover - compiled
    """``out[i] = _log(x[i])`` (for the tests)."""
    for i in range(x.shape[0]):
        out[i] = _log(x[i])


# --------------------------------------------------------------------------- row functions
# Row i of a block: p[k i + j], t[k i + j], y[i]. No branches on data (selects only).

@_inline
def _row_ok(p, t, y, i, k, atol):  # pragma: no cover - compiled
    """Row passes the checks of sums.check_values (same tests, same summation order)."""
    o = k * i
    lab = y[i]
    ok = (lab >= 0) & (lab < k)
    sp = 0.0
    st = 0.0
    for j in range(k):
        pj = p[o + j]
        tj = t[o + j]
        sp += pj
        st += tj
        ok &= (pj >= 0.0) & (pj < _INF) & (tj >= 0.0) & (tj < _INF)
    return ok & (abs(sp - 1.0) <= atol) & (abs(st - 1.0) <= atol)


@_inline
def _row_hard(p, y, i, k, log_eps):  # pragma: no cover - compiled
    """accuracy, brier, nll_majority (the order of _HARD), as in _values_full."""
    o = k * i
    lab = y[i]
    conf = p[o]
    pred = 0
    brier = 0.0
    ph = 0.0
    for j in range(k):
        pj = p[o + j]
        better = pj > conf
        conf = pj if better else conf
        pred = j if better else pred
        d = pj - (1.0 if lab == j else 0.0)
        brier += d * d
        ph += pj if lab == j else 0.0
    return 1.0 if pred == lab else 0.0, brier, -max(log_eps, _log(ph))


@_inline
def _row_head(p, t, i, k):  # pragma: no cover - compiled
    """Row i: 1 / row sums, log row sums, prediction (first maximum); see _row_values."""
    o = k * i
    conf = p[o]
    pred = 0
    sp = 0.0
    st = 0.0
    for j in range(k):
        pj = p[o + j]
        sp += pj
        st += t[o + j]
        better = pj > conf
        conf = pj if better else conf
        pred = j if better else pred
    dp = sp - 1.0
    dt = st - 1.0
    return (1.0 / sp, 1.0 / st, dp - 0.5 * dp * dp + dp * dp * dp / 3.0,
            dt - 0.5 * dt * dt + dt * dt * dt / 3.0, pred)


@_inline
def _class_terms(pj, tj, isp, ist, lsp, lst, hit, log_eps):  # pragma: no cover - compiled
    """What class j adds to: sum p log p, sum t log t, sum |p - t|, KL, 2 JS, Brier hard
    and soft, NLL of the majority, NLL of soft (see _row_values)."""
    lp = _log(pj)
    lt = _log(tj)
    pn = pj * isp
    tn = tj * ist
    lm = _log(0.5 * (pn + tn))
    lc = max(log_eps, lp)
    js = (pn * (lp - lsp - lm) + tn * (lt - lst - lm)) * (pn != tn)  # 0 when equal
    d = pj - (1.0 if hit else 0.0)
    e = pj - tj
    return (pj * lp, tj * lt, abs(pj - tj), tj * (lt - lc), js, d * d, e * e,
            -lc if hit else 0.0, -tj * lc)


@_inline
def _add9(a, b):  # pragma: no cover - compiled
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5],
            a[6] + b[6], a[7] + b[7], a[8] + b[8])


@_inline
def _row_rank(p, t, i, k):  # pragma: no cover - compiled
    """(RankCS, tie-aware RankCS) of row i as 0/1 (see _row_values)."""
    o = k * i
    same = True
    mono = True
    for a in range(k - 1):
        pa = p[o + a]
        ta = t[o + a]
        for c in range(a + 1, k):
            pc = p[o + c]
            tc = t[o + c]
            up = pa <= pc
            tup = ta <= tc
            same &= up == tup
            mono &= tup if up else tc <= ta
    return 1.0 if same else 0.0, 1.0 if mono else 0.0


@_inline
def _row_values(hit, s, rank):  # pragma: no cover - compiled
    """Every quantity of sums.ITEM_QUANTITIES, in that order, from the summed class terms.

    Definitions: :mod:`annokit.metrics.sums`. ``log(max(p, eps)) = max(log
    p, log eps)``; every log term has its weight as a factor and ``_log(0)`` is
    finite, so ``0 log 0 = 0`` with no branch. Jensen-Shannon as scipy on
    renormalised rows ``pn = p / sum p``: ``0.5 sum_j pn_j log(pn_j / m_j) +
    tn_j log(tn_j / m_j)`` with ``log pn_j = log p_j - log sum p`` (the row sum
    is within 1e-6 of 1, where ``log(1 + d) = d - d^2/2 + d^3/3`` to 1e-24); a
    class with ``pn_j == tn_j`` adds exactly 0, as in scipy. RankCS without
    sorting: a stable ascending argsort puts class a before c > a iff ``v_a <=
    v_c``, so two stable argsorts agree iff every pair is ordered alike, and
    soft never decreases along p's order iff every pair ordered by p is
    ordered alike by soft.
    """
    e = s[1] - s[0]
    return (hit, abs(e), e, 0.5 * s[2], np.sqrt(max(0.5 * s[4], 0.0)), s[3], s[5], s[6],
            s[7], s[8], rank[0], rank[1])


@_inline
def _bin(c, step, fnb, last):  # pragma: no cover - compiled
    """``clip(searchsorted(linspace(0, 1, n_bins + 1), c, "right") - 1, 0, n_bins - 1)``.

    numpy's linspace makes the edges ``b * (1 / n_bins)`` and 1 (the tests check
    every edge and its neighbours); the guess ``int(c n_bins)`` is off by at most
    one bin, corrected each way with no table look-up. ``c`` outside [0, 1]
    (which fails the checks) is clamped so that it indexes a bin.
    """
    c = c if (c >= 0.0) & (c <= 1.0) else 0.0
    b = min(int(c * fnb), last)
    fb = float(b)
    hi = (fb + 1.0) * step if b < last else 1.0
    b = b - (c < fb * step) + (c >= hi)
    return min(b, last)


# --------------------------------------------------------------------------- loops over a block
# Each _x_impl is written for any k; _x calls it with the constant 3 (unrolled, SIMD) or with k.

@_inline
def _check_impl(p, t, y, m, k, atol):  # pragma: no cover - compiled
    bad = 0
    for i in range(m):
        bad += 0 if _row_ok(p, t, y, i, k, atol) else 1
    return bad


@_jit
def _check(p, t, y, m, k, atol):  # pragma: no cover - compiled
    """Number of rows that fail a check."""
    if k == 3:
        return _check_impl(p, t, y, m, 3, atol)
    return _check_impl(p, t, y, m, k, atol)


@_inline
def _values_hard(p, y, m, k, log_eps, vals):  # pragma: no cover - compiled
    for i in range(m):
        v = _row_hard(p, y, i, k, log_eps)
        vals[i] = v[0]
        vals[_B + i] = v[1]
        vals[2 * _B + i] = v[2]


@_inline
def _values_full(p, t, y, m, k, atol, log_eps, vals):  # pragma: no cover - compiled
    bad = 0
    for i in range(m):
        bad += 0 if _row_ok(p, t, y, i, k, atol) else 1
        o = k * i
        lab = y[i]
        isp, ist, lsp, lst, pred = _row_head(p, t, i, k)
        if k == 3:  # written out: see _values
            s = _add9(_add9(_class_terms(p[o], t[o], isp, ist, lsp, lst, lab == 0, log_eps),
                            _class_terms(p[o + 1], t[o + 1], isp, ist, lsp, lst, lab == 1,
                                         log_eps)),
                      _class_terms(p[o + 2], t[o + 2], isp, ist, lsp, lst, lab == 2, log_eps))
        else:
            s = _class_terms(p[o], t[o], isp, ist, lsp, lst, lab == 0, log_eps)
            for j in range(1, k):
                s = _add9(s, _class_terms(p[o + j], t[o + j], isp, ist, lsp, lst, lab == j,
                                          log_eps))
        v = _row_values(1.0 if pred == lab else 0.0, s, _row_rank(p, t, i, k))
        vals[i] = v[0]
        vals[_B + i] = v[1]
        vals[2 * _B + i] = v[2]
        vals[3 * _B + i] = v[3]
        vals[4 * _B + i] = v[4]
        vals[5 * _B + i] = v[5]
        vals[6 * _B + i] = v[6]
        vals[7 * _B + i] = v[7]
        vals[8 * _B + i] = v[8]
        vals[9 * _B + i] = v[9]
        vals[10 * _B + i] = v[10]
        vals[11 * _B + i] = v[11]
    return bad


@_jit
def _values(p, t, y, m, k, full, atol, log_eps, vals):  # pragma: no cover - compiled
    """``vals[q B + i]``: every quantity (``full``) or those of _HARD, for rows 0..m.

    Returns the number of rows that fail a check (as _check; the full loop
    checks in the same pass, the hard one runs _check).

    For k = 3 the class terms are written out, so that the loop body has no
    inner loop left (a class loop with three inlined logs is over LLVM's
    full-unroll threshold) and LLVM vectorises it over rows; the terms are
    added in the order of the loop over classes, so the results are the same.
    """
    if not full:
        if k == 3:
            _values_hard(p, y, m, 3, log_eps, vals)
        else:
            _values_hard(p, y, m, k, log_eps, vals)
        return _check(p, t, y, m, k, atol)
    if k == 3:
        return _values_full(p, t, y, m, 3, atol, log_eps, vals)
    return _values_full(p, t, y, m, k, atol, log_eps, vals)


@_jit
def _bin_all(p, count, n_bins, bins):  # pragma: no cover - compiled
    """``bins[x]``: the bin of ``p[x]`` for the first ``count`` values (flat, vectorised)."""
    step = 1.0 / n_bins
    fnb = float(n_bins)
    last = n_bins - 1
    for x in range(count):
        bins[x] = _bin(p[x], step, fnb, last)


@_inline
def _scatter_impl(p, t, y, m, k, bins, w, weighted, rr, a, classwise, top,
                  cw):  # pragma: no cover - compiled
    lanes = top.shape[0] - 1
    for i in range(m):
        wi = w[rr, a + i] if weighted else 1.0
        r = i & lanes
        o = k * i
        c = p[o]
        ts = t[o]
        pred = 0
        b = bins[o]
        for j in range(1, k):
            pj = p[o + j]
            tj = t[o + j]
            better = pj > c
            c = pj if better else c
            ts = tj if better else ts
            pred = j if better else pred
            b = max(b, bins[o + j])  # bins are monotone: bin(max_j p_j) = max_j bin(p_j)
        top[r, b, 0] += wi
        top[r, b, 1] += wi * c
        top[r, b, 2] += wi if pred == y[i] else 0.0
        top[r, b, 3] += wi * ts
        if classwise:
            lab = y[i]
            for j in range(k):
                bj = bins[o + j]
                cw[r, j, bj, 0] += wi
                cw[r, j, bj, 1] += wi * p[o + j]
                cw[r, j, bj, 2] += wi if lab == j else 0.0
                cw[r, j, bj, 3] += wi * t[o + j]


@_jit
def _scatter(p, t, y, m, k, bins, w, weighted, rr, a, classwise, top,
             cw):  # pragma: no cover - compiled
    """Add rows 0..m, weighted by ``w[rr, a + i]`` (or 1), into ``top[lane, bin, :]``
    (weight, ``max_j p_ij``, hit, ``soft_i[argmax]``) and ``cw[lane, class, bin, :]``
    (weight, ``p_ij``, ``[hard_i == j]``, ``soft_ij``); row i goes to lane ``i % lanes``
    (interleaved accumulators break store-to-load dependency chains)."""
    if k == 3:
        _scatter_impl(p, t, y, m, 3, bins, w, weighted, rr, a, classwise, top, cw)
    else:
        _scatter_impl(p, t, y, m, k, bins, w, weighted, rr, a, classwise, top, cw)


@_reassoc
def _wsum(vals, nq, m, w, weighted, rr, a, items):  # pragma: no cover - compiled
    """``items[rr, q] += sum_i w[rr, a + i] vals[q, i]`` (or the plain sum).

    ``reassoc`` (the only fast-math flag) lets LLVM keep SIMD partial sums; it
    changes the summation order only.
    """
    for q in range(nq):
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
    s = 0.0
    bad = 0
    for i in range(m):
        v = w[rr, a + i]
        s += v
        bad += 0 if (v >= 0.0) & (v < _INF) else 1
    return s, bad


# --------------------------------------------------------------------------- drivers

@_jit
def _sums_part(p, t, y, has_y, w, weighted, a0, a1, k, vmode, n_bins, classwise, atol,
               log_eps, items, wtot, top, cw):  # pragma: no cover - compiled
    """Rows a0..a1 into the accumulators; returns the number of failed checks (rows, weights).

    ``vmode``: 0 no per-item quantity, 1 the _HARD ones, 2 all. ``t`` is ``p``
    when there are no soft labels; ``y`` is ignored unless ``has_y``. Stops at
    the first block with a failure (the caller raises).
    """
    nq = items.shape[1]
    r = items.shape[0]
    vals = np.empty(nq * _B)
    zeros = np.zeros(_B, dtype=np.int64)
    nb = max(n_bins, 1)
    bins = np.empty(k * _B if n_bins > 0 else 1, dtype=np.int64)
    bad = 0
    wbad = 0
    for a in range(a0, a1, _B):
        b = min(a + _B, a1)
        m = b - a
        pb = p[k * a:k * b]
        tb = t[k * a:k * b]
        yb = y[a:b] if has_y else zeros[:m]
        if vmode > 0:
            bad += _values(pb, tb, yb, m, k, vmode == 2, atol, log_eps, vals)
        else:
            bad += _check(pb, tb, yb, m, k, atol)
        if n_bins > 0:
            _bin_all(pb, k * m, nb, bins)
        for rr in range(r):
            if weighted:
                s, nbad = _wtotal(w, rr, a, m)
                wtot[rr] += s
                wbad += nbad
            if vmode > 0:
                _wsum(vals, nq, m, w, weighted, rr, a, items)
            if n_bins > 0:
                _scatter(pb, tb, yb, m, k, bins, w, weighted, rr, a, classwise, top[rr], cw[rr])
        if bad or wbad:
            break
    return bad, wbad


@_jit
def _values_part(p, t, y, has_y, a0, a1, k, full, src, atol, log_eps,
                 out):  # pragma: no cover - compiled
    """``out[i, c] = value src[c]`` for rows a0..a1; returns the number of failed rows."""
    vals = np.empty((12 if full else 3) * _B)
    zeros = np.zeros(_B, dtype=np.int64)
    bad = 0
    for a in range(a0, a1, _B):
        b = min(a + _B, a1)
        m = b - a
        pb = p[k * a:k * b]
        tb = t[k * a:k * b]
        yb = y[a:b] if has_y else zeros[:m]
        bad += _values(pb, tb, yb, m, k, full, atol, log_eps, vals)
        if bad:
            break
        for i in range(m):
            for c in range(src.shape[0]):
                out[a + i, c] = vals[src[c] * _B + i]
    return bad


# --------------------------------------------------------------------------- Python API

_POOL: list[ThreadPoolExecutor] = []


def _run_parts(fn, n: int) -> list:
    """``fn(a, b)`` on contiguous row ranges: one, or N_PARTS on threads for large inputs."""
    if n < PARALLEL_MIN_ROWS or (os.cpu_count() or 1) < 2:
        return [fn(0, n)]
    bounds = [n * i // N_PARTS for i in range(N_PARTS + 1)]
    if not _POOL:
        _POOL.append(ThreadPoolExecutor(max_workers=N_PARTS, thread_name_prefix="annokit"))
    futures = [_POOL[0].submit(fn, a, b) for a, b in zip(bounds[:-1], bounds[1:])]
    return [f.result() for f in futures]


def _flat(p: np.ndarray, s: np.ndarray | None, h: np.ndarray | None):
    """C-contiguous flat float64 rows; ``s`` is ``p`` when absent; dummy labels when absent."""
    pf = np.ascontiguousarray(p, dtype=np.float64).reshape(-1)
    sf = pf if s is None else np.ascontiguousarray(s, dtype=np.float64).reshape(-1)
    hf = np.zeros(1, dtype=np.int64) if h is None else np.ascontiguousarray(h, dtype=np.int64)
    return pf, sf, hf


def _raise_invalid(p, s, h, w, names) -> None:
    """A kernel check failed: the numpy checks raise the message naming the row."""
    _sums.check_values(p, s, h, w, names=names)


def batch_sums(probs: Any, soft: Any, hard: Any, weights: Any, *,
               quantities: Any = (), n_bins: int | None = None, classwise: bool = False,
               names: Any = NAMES) -> BatchSums:
    """Weighted sums of per-item quantities and per-bin statistics of one batch (one pass).

    Same parameters, result and errors as :func:`annokit.metrics.sums.batch_sums`:
    ``weights`` None, ``(n,)`` or ``(r, n)`` (then every sum has a leading
    replicate axis of length ``r``); ``quantities`` from
    :data:`~annokit.metrics.sums.ITEM_QUANTITIES`; ``n_bins`` equal-width bins
    (None for none), ``classwise`` adds the classwise bins.

    Raises
    ------
    SchemaError
        Wrong shapes or dtypes, or a quantity whose labels were not given.
    InvalidValueError
        A value check failed (the message names the row).
    """
    p, s, h, w = _sums.prepare(probs, soft, hard, weights, names=names)
    quantities = _sums._check_quantities(quantities, s, h)
    nb = 0 if n_bins is None else _binning.check_n_bins(n_bins)
    classwise = bool(classwise) and nb > 0
    n, k = p.shape
    full = any(q not in _HARD for q in quantities)
    cols = ITEM_QUANTITIES if full else _HARD
    src = [cols.index(q) for q in quantities]
    vmode = 0 if not quantities else (2 if full else 1)
    nq = len(cols) if vmode else 0
    r = 1 if w is None or w.ndim == 1 else w.shape[0]
    w2 = np.zeros((1, 1)) if w is None else np.ascontiguousarray(w.reshape(r, n))
    pf, sf, hf = _flat(p, s, h)
    lanes = _LANES if r * k * max(nb, 1) <= 1 << 16 else 1
    kc = k if classwise else 1

    def part(a: int, b: int, atol: float = SIMPLEX_ATOL):
        acc = (np.zeros((r, nq)), np.zeros(r), np.zeros((r, lanes, max(nb, 1), 4)),
               np.zeros((r, lanes, kc, max(nb, 1), 4)))
        bad = _sums_part(pf, sf, hf, h is not None, w2, w is not None, a, b, k, vmode, nb,
                         classwise, atol, _LOG_EPS, *acc)
        return acc, bad[0] + bad[1]

    results = _run_parts(part, n) if n else []
    if any(bad for _, bad in results):
        _raise_invalid(p, s, h, w, names)
        # The numpy checks passed: a row sum within rounding of the tolerance (k > 7
        # classes: numpy sums pairwise). Accept what numpy accepts.
        results = _run_parts(lambda a, b: part(a, b, SIMPLEX_ATOL + 1e-12), n)
        if any(bad for _, bad in results):  # pragma: no cover - defensive
            raise RuntimeError("kernel value checks disagree with sums.check_values")
    items, wtot, top, cw = (sum(x[i] for x, _ in results) if results else None
                            for i in range(4))
    if not results:
        items, wtot = np.zeros((r, nq)), np.zeros(r)
        top, cw = np.zeros((r, 1, max(nb, 1), 4)), np.zeros((r, 1, kc, max(nb, 1), 4))
    weight: Any = float(n) if w is None else (float(wtot[0]) if w.ndim == 1 else wtot)
    one = w is None or w.ndim == 1
    items = items[:, src]
    bins = None
    if nb:
        t4, c4 = top.sum(axis=1), cw.sum(axis=1)
        if one:
            t4, c4 = t4[0], c4[0]
        bins = BinStats(weight, t4[..., 0].copy(), t4[..., 1].copy(),
                        t4[..., 2].copy() if h is not None else None,
                        t4[..., 3].copy() if s is not None else None)
        if classwise:
            bins.cw_count, bins.cw_conf = c4[..., 0].copy(), c4[..., 1].copy()
            bins.cw_hit = c4[..., 2].copy() if h is not None else None
            bins.cw_soft = c4[..., 3].copy() if s is not None else None
    return BatchSums(weight, items[0] if one else items, quantities, bins)


def item_values(probs: Any, soft: Any, hard: Any, quantities: Any = ITEM_QUANTITIES, *,
                names: Any = NAMES) -> np.ndarray:
    """Per-item values, shape ``(n, len(quantities))``: :func:`annokit.metrics.sums.item_values`.

    Raises
    ------
    SchemaError, InvalidValueError
        As :func:`batch_sums`.
    """
    p, s, h, _ = _sums.prepare(probs, soft, hard, names=names)
    quantities = _sums._check_quantities(quantities, s, h)
    n, k = p.shape
    full = any(q not in _HARD for q in quantities)
    cols = ITEM_QUANTITIES if full else _HARD
    src = np.array([cols.index(q) for q in quantities], dtype=np.int64)
    out = np.empty((n, len(quantities)))
    if not n or not quantities:
        _sums.check_values(p, s, h, names=names)
        return out
    pf, sf, hf = _flat(p, s, h)

    def part(a: int, b: int, atol: float = SIMPLEX_ATOL) -> int:
        return _values_part(pf, sf, hf, h is not None, a, b, k, full, src, atol, _LOG_EPS, out)

    if any(_run_parts(part, n)):
        _raise_invalid(p, s, h, None, names)
        if any(_run_parts(lambda a, b: part(a, b, SIMPLEX_ATOL + 1e-12), n)):  # pragma: no cover
            raise RuntimeError("kernel value checks disagree with sums.check_values")
    return out
