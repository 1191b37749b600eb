"""Fused single-pass numba kernels for the binned sums and the whole metric summary.

The plain-numpy code in :mod:`annokit.metrics._binning` (per-bin sums) and the
public functions in :mod:`annokit.metrics.human` are the reference; the tests
compare these kernels against them. The kernels also do the value checks
(finite, non-negative, rows summing to 1, labels in range) in the same pass, so
a large input is read once; when a check fails, the caller re-runs the numpy
validation, which raises the usual message.

For k = 3 classes (with numpy's linspace bin edges) the summary has its own
kernels, run chunk by chunk so that later passes read from cache: one
branch-free loop over rows that LLVM vectorises (checks, argmax, every per-item
sum, with logs from :func:`_log`, an fdlibm log accurate to < 1 ulp, instead of
numpy's ``np.log`` on block temporaries), a vectorised loop for the bin
indices, and the scalar scatter into the bins. Other k use the blocked kernels
(:func:`_summary_prepare`, ``np.log``, :func:`_summary_block`).

numba is optional: without it (or for inputs below :data:`FAST_MIN_ITEMS`
rows, where numpy is as fast and no compilation is triggered) the numpy path
runs. Kernels are compiled with ``cache=True`` so the compilation cost is paid
once per environment.
"""

from __future__ import annotations

import itertools
import os

import numpy as np

from annokit.metrics import _binning
from annokit.metrics._binning import BinStats

try:  # pragma: no cover - exercised implicitly
    import numba
    from llvmlite import ir as _ir
    from numba import types as _types
    from numba.extending import intrinsic as _intrinsic

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover
    numba = None
    HAVE_NUMBA = False

#: Inputs with fewer rows than this use numpy (no JIT compilation for small inputs).
FAST_MIN_ITEMS = 50_000

#: Row-sum tolerance, the same as :func:`annokit.core.checks.check_probs`.
ATOL = 1e-6

#: Model probabilities are clipped at this value inside logs (as ChaosNLI's KL).
EPS = 1e-15


def use_fast(n_items: int) -> bool:
    """Whether the numba kernel is used for an input of ``n_items`` rows."""
    return HAVE_NUMBA and n_items >= FAST_MIN_ITEMS


#: Rows per block of the summary kernel (its temporaries stay in cache).
BLOCK_ROWS = 8192

#: Interleaved copies of the bin accumulators (breaks store-to-load dependency chains).
_LANES = 4

if HAVE_NUMBA:
    _jit = numba.njit(cache=True, nogil=True)

    @numba.njit(cache=True, nogil=True, inline="always")
    def _find_bin(c, edges, n_bins):  # pragma: no cover - compiled
        # == clip(searchsorted(edges, c, "right") - 1, 0, n_bins - 1): guess from
        # the equal-width formula, then walk to the exact edge (also correct for
        # arbitrary sorted edges, e.g. quantile bins).
        b = int(c * n_bins)
        b = min(b, n_bins - 1)
        b = max(b, 0)
        while b > 0 and c < edges[b]:
            b -= 1
        while b < n_bins - 1 and c >= edges[b + 1]:
            b += 1
        return b

    @numba.njit(cache=True, nogil=True, inline="always")
    def _find_bin_uniform(c, edges, n_bins):  # pragma: no cover - compiled
        # Same result as _find_bin for edges = linspace(0, 1, n_bins + 1) and c in
        # [0, 1]: the guess int(c * n_bins) is off by at most one bin there, so
        # one branch-free correction each way suffices (edges[b + 1] exists for
        # every b < n_bins; c == 1 is clipped back into the last bin).
        b = min(int(c * n_bins), n_bins - 1)
        b -= np.int64(c < edges[b])
        b += np.int64(c >= edges[b + 1])
        return min(b, n_bins - 1)

    @_jit
    def _bin_kernel(probs, labels, targets, edges, uniform, has_labels, has_targets, classwise,
                    atol, top, cw):  # pragma: no cover - compiled
        """One pass: top-label and classwise per-bin sums (see _binning.update_numpy).

        ``top[lane, bin, :]`` and ``cw[lane, class, bin, :]`` hold (count, sum of
        probabilities, sum of hits, sum of soft targets) next to each other; row
        i goes to lane i % _LANES (breaks store-to-load dependency chains).
        The value checks are folded into running minima/maxima (no branch per
        row) and decided at the end: returns 1 when any value failed (the
        caller re-validates with numpy for the message; the sums are then
        discarded), else 0. Values are clamped into [0, 1] before binning so
        that invalid input can never index outside the accumulators.
        """
        n, k = probs.shape
        n_bins = edges.shape[0] - 1
        lo = 0.0
        hi = 1.0
        dev = 0.0
        nan = False
        lab_lo = 0
        lab_hi = 0
        for i in range(n):
            r = i & 3
            lab = labels[i] if has_labels else 0
            conf = probs[i, 0]
            pred = 0
            s = conf
            lo = min(lo, conf)
            hi = max(hi, conf)
            for j in range(1, k):
                v = probs[i, j]
                s += v
                lo = min(lo, v)
                hi = max(hi, v)
                better = v > conf
                conf = v if better else conf
                pred = j if better else pred
            dev = max(dev, abs(s - 1.0))
            nan |= np.isnan(s)
            lab_lo = min(lab_lo, lab)
            lab_hi = max(lab_hi, lab)
            if has_targets:
                st = 0.0
                for j in range(k):
                    v = targets[i, j]
                    st += v
                    lo = min(lo, v)
                    hi = max(hi, v)
                dev = max(dev, abs(st - 1.0))
                nan |= np.isnan(st)
            c = conf if (conf >= 0.0 and conf <= 1.0) else 0.0
            if uniform:
                b = _find_bin_uniform(c, edges, n_bins)
            else:
                b = _find_bin(c, edges, n_bins)
            top[r, b, 0] += 1.0
            top[r, b, 1] += conf
            if has_labels:
                top[r, b, 2] += 1.0 if pred == lab else 0.0
            if has_targets:
                top[r, b, 3] += targets[i, pred]
            if classwise:
                for j in range(k):
                    v = probs[i, j]
                    c = v if (v >= 0.0 and v <= 1.0) else 0.0
                    if uniform:
                        bj = _find_bin_uniform(c, edges, n_bins)
                    else:
                        bj = _find_bin(c, edges, n_bins)
                    cw[r, j, bj, 0] += 1.0
                    cw[r, j, bj, 1] += v
                    if has_labels:
                        cw[r, j, bj, 2] += 1.0 if lab == j else 0.0
                    if has_targets:
                        cw[r, j, bj, 3] += targets[i, j]
        ok = (lo >= 0.0 and hi <= 1.0 and dev <= atol and not nan
              and lab_lo >= 0 and lab_hi < k)
        return 0 if ok else 1

    @_jit
    def _summary_prepare(probs, targets, labels, atol, mid):  # pragma: no cover - compiled
        """Value checks and the Jensen-Shannon midpoint for one block.

        mid = (p / sum p + t / sum t) / 2 on renormalised rows, as scipy. The
        checks are running minima/maxima decided at the end; returns 1 when any
        row failed.
        """
        n, k = probs.shape
        lo = 0.0
        hi = 1.0
        dev = 0.0
        nan = False
        lab_lo = 0
        lab_hi = 0
        for i in range(n):
            sp = 0.0
            st = 0.0
            for j in range(k):
                pv = probs[i, j]
                tv = targets[i, j]
                sp += pv
                st += tv
                lo = min(lo, min(pv, tv))
                hi = max(hi, max(pv, tv))
            dev = max(dev, max(abs(sp - 1.0), abs(st - 1.0)))
            nan |= np.isnan(sp) or np.isnan(st)
            lab = labels[i]
            lab_lo = min(lab_lo, lab)
            lab_hi = max(lab_hi, lab)
            isp = 1.0 / sp
            ist = 1.0 / st
            for j in range(k):
                mid[i, j] = 0.5 * (probs[i, j] * isp + targets[i, j] * ist)
        ok = (lo >= 0.0 and hi <= 1.0 and dev <= atol and not nan
              and lab_lo >= 0 and lab_hi < k)
        return 0 if ok else 1

    @_jit
    def _summary_block(probs, targets, labels, logs, edges, log_eps, top, cw,
                       sums):  # pragma: no cover - compiled
        """Every binned sum (packed as in _bin_kernel) and the per-item sums, for one block.

        ``logs`` holds np.log of (probs, targets, midpoint) (numpy's SIMD log;
        -inf where a value is 0, so every log term is guarded by its weight);
        ``sums``: see SUMMARY_SUMS. Formulas: EntCE Baan et al. (2022) Eq. 5,
        DistCE Eq. 7, RankCS Eq. 6; JS distance and KL as
        :mod:`annokit.core.divergence`; Brier and NLL as :mod:`annokit.metrics.human`.
        """
        n, k = probs.shape
        n_bins = edges.shape[0] - 1
        # per-item sums in registers, stored once at the end
        s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = s8 = s9 = s10 = s11 = 0.0
        for i in range(n):
            r = i & 3
            lab = labels[i]
            conf = probs[i, 0]
            pred = 0
            sp = probs[i, 0]
            st = targets[i, 0]
            for j in range(1, k):
                v = probs[i, j]
                sp += v
                st += targets[i, j]
                better = v > conf
                conf = v if better else conf
                pred = j if better else pred
            # log of the row sums, |s - 1| <= atol = 1e-6 after the checks: the
            # series log(1 + d) = d - d^2/2 + d^3/3 is exact to ~1e-24 there.
            dp = sp - 1.0
            dt = st - 1.0
            isp = 1.0 / sp
            ist = 1.0 / st
            lsp = dp - 0.5 * dp * dp + dp * dp * dp / 3.0
            lst = dt - 0.5 * dt * dt + dt * dt * dt / 3.0
            b = _find_bin_uniform(conf, edges, n_bins)
            hit = 1.0 if pred == lab else 0.0
            top[r, b, 0] += 1.0
            top[r, b, 1] += conf
            top[r, b, 2] += hit
            top[r, b, 3] += targets[i, pred]
            hp = 0.0
            ht = 0.0
            l1 = 0.0
            kl = 0.0
            js = 0.0
            b_lab = 0.0
            b_soft = 0.0
            ce = 0.0
            for j in range(k):
                pj = probs[i, j]
                tj = targets[i, j]
                yj = 1.0 if lab == j else 0.0
                bj = _find_bin_uniform(pj, edges, n_bins)
                cw[r, j, bj, 0] += 1.0
                cw[r, j, bj, 1] += pj
                cw[r, j, bj, 2] += yj
                cw[r, j, bj, 3] += tj
                # log(0) = -inf: every log term is selected away when its weight is 0
                lp = logs[0, i, j]
                lt = logs[1, i, j]
                lm = logs[2, i, j]
                lpc = max(lp, log_eps)  # log(max(p, 1e-15)) as ChaosNLI's KL
                pos_p = pj > 0.0
                pos_t = tj > 0.0
                hp -= pj * lp if pos_p else 0.0
                ht -= tj * lt if pos_t else 0.0
                l1 += abs(pj - tj)
                kl += tj * (lt - lpc) if pos_t else 0.0
                ce -= tj * lpc
                # Jensen-Shannon on renormalised rows (scipy): pn log(pn / m) + tn log(tn / m)
                js += pj * isp * (lp - lsp - lm) if pos_p else 0.0
                js += tj * ist * (lt - lst - lm) if pos_t else 0.0
                d = pj - yj
                b_lab += d * d
                d = pj - tj
                b_soft += d * d
            e = hp - ht
            s0 += hit
            s1 += abs(e)
            s2 += e
            s3 += 0.5 * l1
            js = 0.5 * js
            s4 += np.sqrt(js) if js > 0 else 0.0
            s5 += kl
            s6 += b_lab
            s7 += b_soft
            s8 -= max(logs[0, i, lab], log_eps)
            s9 += ce
            # RankCS without sorting: a stable ascending argsort puts class a
            # before class c > a iff v[a] <= v[c], so two stable argsorts agree
            # iff every pair is ordered alike; the tie-aware variant asks that
            # the human values never decrease along the model's order, i.e.
            # pairwise consistency with it.
            same = True
            mono = True
            for a in range(k - 1):
                for c in range(a + 1, k):
                    pa = probs[i, a] <= probs[i, c]
                    ta = targets[i, a] <= targets[i, c]
                    same &= pa == ta
                    mono &= ta if pa else targets[i, c] <= targets[i, a]
            s10 += 1.0 if same else 0.0
            s11 += 1.0 if mono else 0.0
        sums[0] += s0
        sums[1] += s1
        sums[2] += s2
        sums[3] += s3
        sums[4] += s4
        sums[5] += s5
        sums[6] += s6
        sums[7] += s7
        sums[8] += s8
        sums[9] += s9
        sums[10] += s10
        sums[11] += s11


    # ------------------------------------------------------------------ k = 3 summary
    # A vectorisable log (fdlibm's e_log.c, error < 1 ulp, as accurate as np.log)
    # so that the whole per-item part of the summary runs as one SIMD loop with
    # no temporaries; numba's scalar np.log is a libm call per value (~7 ns).

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

    @numba.njit(cache=True, nogil=True, error_model="numpy")
    def _log(x):  # pragma: no cover - compiled
        """Natural log, fdlibm ``__ieee754_log`` without branches (error < 1 ulp).

        Strict IEEE arithmetic (no fastmath: the flags stay on these
        instructions when LLVM inlines the function into a caller). Subnormal
        inputs are scaled by 2**54 as in fdlibm. ``x = 0`` gives -746.5 (a
        finite value below log(1e-15), so 0 * log 0 = 0 with no branch); values
        outside [0, 1] give meaningless finite numbers (such inputs fail the
        value checks and are discarded).
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

    @numba.njit(cache=True, nogil=True, error_model="numpy")
    def _log_array(x, out):  # pragma: no cover - compiled
        """``out[i] = _log(x[i])`` (for the tests)."""
        for i in range(x.shape[0]):
            out[i] = _log(x[i])

    @numba.njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc"})
    def _summary_sums3(p, t, labels, log_eps, atol, out):  # pragma: no cover - compiled
        """The per-item sums of :data:`SUMMARY_SUMS` and a count of failed checks, k = 3.

        ``p``, ``t``: the flattened (n * 3,) C-order rows. One loop with no
        stores and no branches, which LLVM vectorises over rows. The formulas
        are those of _summary_block. ``reassoc`` (the only fast-math flag:
        no contraction, no finite-math or reciprocal approximations) lets LLVM
        keep SIMD partial sums across rows and reorder additions, which changes
        results by rounding only (the tests compare with the numpy reference to
        1e-12). The logs are the strict :func:`_log`: fast-math flags belong to
        the instructions of the function that declares them, so they stay
        strict when LLVM inlines ``_log`` here (checked bitwise against
        :func:`_log_array`).
        ``out[12]`` counts rows that fail a value check (value outside [0, 1]
        or NaN, row sum off by more than atol, label outside [0, 3)).
        """
        n = labels.shape[0]
        s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = s8 = s9 = s10 = s11 = s12 = 0.0
        for i in range(n):
            lab = labels[i]
            p0 = p[3 * i]
            p1 = p[3 * i + 1]
            p2 = p[3 * i + 2]
            t0 = t[3 * i]
            t1 = t[3 * i + 1]
            t2 = t[3 * i + 2]
            sp = p0 + p1 + p2
            st = t0 + t1 + t2
            okv = ((p0 >= 0.0) & (p0 <= 1.0) & (p1 >= 0.0) & (p1 <= 1.0) & (p2 >= 0.0)
                   & (p2 <= 1.0) & (t0 >= 0.0) & (t0 <= 1.0) & (t1 >= 0.0) & (t1 <= 1.0)
                   & (t2 >= 0.0) & (t2 <= 1.0))
            dp = sp - 1.0
            dt = st - 1.0
            oks = (abs(dp) <= atol) & (abs(dt) <= atol) & (lab >= 0) & (lab < 3)
            s12 += 0.0 if okv & oks else 1.0
            # argmax, first index on ties
            b1 = p1 > p0
            c = p1 if b1 else p0
            pr = 1 if b1 else 0
            pr = 2 if p2 > c else pr
            s0 += 1.0 if pr == lab else 0.0
            isp = 1.0 / sp
            ist = 1.0 / st
            lsp = dp - 0.5 * dp * dp + dp * dp * dp / 3.0
            lst = dt - 0.5 * dt * dt + dt * dt * dt / 3.0
            lp0 = _log(p0)
            lp1 = _log(p1)
            lp2 = _log(p2)
            lt0 = _log(t0)
            lt1 = _log(t1)
            lt2 = _log(t2)
            lm0 = _log(0.5 * (p0 * isp + t0 * ist))
            lm1 = _log(0.5 * (p1 * isp + t1 * ist))
            lm2 = _log(0.5 * (p2 * isp + t2 * ist))
            lc0 = max(log_eps, lp0)  # log(max(p, 1e-15))
            lc1 = max(log_eps, lp1)
            lc2 = max(log_eps, lp2)
            # every log term has its weight as a factor, and _log(0) is finite
            e = (t0 * lt0 + t1 * lt1 + t2 * lt2) - (p0 * lp0 + p1 * lp1 + p2 * lp2)
            s1 += abs(e)
            s2 += e
            s3 += 0.5 * (abs(p0 - t0) + abs(p1 - t1) + abs(p2 - t2))
            js = (p0 * isp * (lp0 - lsp - lm0) + t0 * ist * (lt0 - lst - lm0)
                  + p1 * isp * (lp1 - lsp - lm1) + t1 * ist * (lt1 - lst - lm1)
                  + p2 * isp * (lp2 - lsp - lm2) + t2 * ist * (lt2 - lst - lm2))
            js = 0.5 * js
            s4 += np.sqrt(max(0.0, js))
            s5 += t0 * (lt0 - lc0) + t1 * (lt1 - lc1) + t2 * (lt2 - lc2)
            d0 = p0 - (1.0 if lab == 0 else 0.0)
            d1 = p1 - (1.0 if lab == 1 else 0.0)
            d2 = p2 - (1.0 if lab == 2 else 0.0)
            s6 += d0 * d0 + d1 * d1 + d2 * d2
            d0 = p0 - t0
            d1 = p1 - t1
            d2 = p2 - t2
            s7 += d0 * d0 + d1 * d1 + d2 * d2
            s8 -= lc0 if lab == 0 else (lc1 if lab == 1 else lc2)
            s9 -= t0 * lc0 + t1 * lc1 + t2 * lc2
            # RankCS as in _summary_block, pairs (0, 1), (0, 2), (1, 2)
            a01 = p0 <= p1
            a02 = p0 <= p2
            a12 = p1 <= p2
            h01 = t0 <= t1
            h02 = t0 <= t2
            h12 = t1 <= t2
            same = (a01 == h01) & (a02 == h02) & (a12 == h12)
            mono = ((h01 if a01 else t1 <= t0) & (h02 if a02 else t2 <= t0)
                    & (h12 if a12 else t2 <= t1))
            s10 += 1.0 if same else 0.0
            s11 += 1.0 if mono else 0.0
        out[0] += s0
        out[1] += s1
        out[2] += s2
        out[3] += s3
        out[4] += s4
        out[5] += s5
        out[6] += s6
        out[7] += s7
        out[8] += s8
        out[9] += s9
        out[10] += s10
        out[11] += s11
        out[12] += s12

    @numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
    def _find_bin_step(c, step, fnb, last):  # pragma: no cover - compiled
        """_find_bin_uniform without the table look-ups, so that it vectorises.

        Exact for ``edges = np.linspace(0, 1, n_bins + 1)``, whose inner edges
        are ``b * step`` with ``step = 1 / n_bins`` (checked by
        :func:`_linspace_step` before use) and whose last edge is 1. ``c`` is
        clamped into [0, 1] first (values outside fail the checks anyway).
        """
        c = c if (c >= 0.0) & (c <= 1.0) else 0.0
        b = min(int(c * fnb), last)
        fb = float(b)
        hi = (fb + 1.0) * step
        hi = hi if b < last else 1.0
        b = b - (c < fb * step) + (c >= hi)
        return min(b, last)

    @numba.njit(cache=True, nogil=True, error_model="numpy")
    def _summary_binidx3(p, step, n_bins, idx):  # pragma: no cover - compiled
        """Bins of the top-label confidence and of the three probabilities, k = 3.

        ``idx[4 i]`` is the bin of ``max(p[i])``, ``idx[4 i + 1 + j]`` that of
        ``p[i, j]``. Branch-free: LLVM vectorises the loop.
        """
        n = p.shape[0] // 3
        fnb = float(n_bins)
        last = n_bins - 1
        for i in range(n):
            p0 = p[3 * i]
            p1 = p[3 * i + 1]
            p2 = p[3 * i + 2]
            c = max(p0, p1)
            c = max(c, p2)
            idx[4 * i] = _find_bin_step(c, step, fnb, last)
            idx[4 * i + 1] = _find_bin_step(p0, step, fnb, last)
            idx[4 * i + 2] = _find_bin_step(p1, step, fnb, last)
            idx[4 * i + 3] = _find_bin_step(p2, step, fnb, last)

    @numba.njit(cache=True, nogil=True, error_model="numpy")
    def _summary_bins3(p, t, labels, idx, top, cw):  # pragma: no cover - compiled
        """The binned sums of _bin_kernel (labels, targets, classwise), k = 3.

        ``idx``: the bins from :func:`_summary_binidx3`. No value checks
        (_summary_sums3 does them). Row i goes to lane i % 4 as in _bin_kernel.
        """
        n = labels.shape[0]
        for i in range(n):
            r = i & 3
            lab = labels[i]
            p0 = p[3 * i]
            p1 = p[3 * i + 1]
            p2 = p[3 * i + 2]
            t0 = t[3 * i]
            t1 = t[3 * i + 1]
            t2 = t[3 * i + 2]
            b1 = p1 > p0
            c = p1 if b1 else p0
            tp = t1 if b1 else t0
            pr = 1 if b1 else 0
            b2 = p2 > c
            c = p2 if b2 else c
            tp = t2 if b2 else tp
            pr = 2 if b2 else pr
            b = idx[4 * i]
            top[r, b, 0] += 1.0
            top[r, b, 1] += c
            top[r, b, 2] += 1.0 if pr == lab else 0.0
            top[r, b, 3] += tp
            b = idx[4 * i + 1]
            cw[r, 0, b, 0] += 1.0
            cw[r, 0, b, 1] += p0
            cw[r, 0, b, 2] += 1.0 if lab == 0 else 0.0
            cw[r, 0, b, 3] += t0
            b = idx[4 * i + 2]
            cw[r, 1, b, 0] += 1.0
            cw[r, 1, b, 1] += p1
            cw[r, 1, b, 2] += 1.0 if lab == 1 else 0.0
            cw[r, 1, b, 3] += t1
            b = idx[4 * i + 3]
            cw[r, 2, b, 0] += 1.0
            cw[r, 2, b, 1] += p2
            cw[r, 2, b, 2] += 1.0 if lab == 2 else 0.0
            cw[r, 2, b, 3] += t2

    @_jit
    def _summary3(p, t, labels, step, n_bins, log_eps, atol, chunk, top, cw,
                  out):  # pragma: no cover - compiled
        """The k = 3 kernels chunk by chunk (each chunk is still in cache for the next pass)."""
        n = labels.shape[0]
        idx = np.empty(4 * chunk, dtype=np.int64)
        for a in range(0, n, chunk):
            b = min(a + chunk, n)
            _summary_sums3(p[3 * a:3 * b], t[3 * a:3 * b], labels[a:b], log_eps, atol, out)
            _summary_binidx3(p[3 * a:3 * b], step, n_bins, idx)
            _summary_bins3(p[3 * a:3 * b], t[3 * a:3 * b], labels[a:b], idx, top, cw)


def _accumulators(n_bins: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Packed per-lane accumulators: top (lanes, n_bins, 4), classwise (lanes, k, n_bins, 4)."""
    return np.zeros((_LANES, n_bins, 4)), np.zeros((_LANES, k, n_bins, 4))


def _collapse(n: int, top: np.ndarray, cw: np.ndarray, labels: bool, targets: bool,
              classwise: bool) -> BinStats:
    """Sum the lanes and unpack (count, probability, hit, soft) into BinStats."""
    t = top.sum(axis=0)
    c = cw.sum(axis=0)
    return BinStats(
        n, t[:, 0].astype(np.int64), t[:, 1].copy(), t[:, 2].copy() if labels else None,
        t[:, 3].copy() if targets else None,
        c[..., 0].astype(np.int64) if classwise else None,
        c[..., 1].copy() if classwise else None,
        c[..., 2].copy() if classwise and labels else None,
        c[..., 3].copy() if classwise and targets else None)


def _c(a: np.ndarray | None, dtype, ndim: int) -> np.ndarray:
    if a is None:
        return np.zeros((1,) * ndim, dtype=dtype)
    return np.ascontiguousarray(a, dtype=dtype)


def update_fast(probs: np.ndarray, labels: np.ndarray | None, targets: np.ndarray | None,
                edges: np.ndarray, *, classwise: bool = True) -> BinStats | None:
    """Numba version of :func:`annokit.metrics._binning.update_numpy`.

    The rows are split into :data:`N_PARTS` contiguous parts run on threads.
    Returns the statistics, or None when a value check failed (the caller then
    runs the numpy validation, which raises the proper error).
    """
    n, k = probs.shape
    has_l, has_t = labels is not None, targets is not None
    n_bins = len(edges) - 1
    p = _c(probs, np.float64, 2)
    y = _c(labels, np.int64, 1)
    t = _c(targets, np.float64, 2)
    e = np.ascontiguousarray(edges, dtype=np.float64)
    uniform = bool(np.array_equal(edges, _binning.uniform_edges(n_bins)))

    def part(a: int, b: int):
        top, cw = _accumulators(n_bins, k if classwise else 1)
        code = _bin_kernel(p[a:b], y[a:b] if has_l else y, t[a:b] if has_t else t, e, uniform,
                           has_l, has_t, classwise, ATOL, top, cw)
        return None if code else (top, cw)

    results = _run_parts(part, n)
    if results is None:
        return None
    top = np.concatenate([r[0] for r in results])
    cw = np.concatenate([r[1] for r in results])
    return _collapse(n, top, cw, has_l, has_t, classwise)


#: Large inputs are split into this many contiguous parts, run on up to as many
#: threads (the kernels release the GIL). The split does not depend on the
#: number of CPUs, so results are the same everywhere.
N_PARTS = 2


def _run_parts(fn, n: int):
    """Run ``fn(start, stop)`` on N_PARTS contiguous row ranges, on threads when there are CPUs."""
    from concurrent.futures import ThreadPoolExecutor

    bounds = np.linspace(0, n, N_PARTS + 1).astype(np.int64)
    ranges = [(int(a), int(b)) for a, b in itertools.pairwise(bounds) if b > a]
    workers = max(1, min(len(ranges), os.cpu_count() or 1))
    if workers == 1:
        results = [fn(a, b) for a, b in ranges]
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(lambda r: fn(*r), ranges))
    return None if any(r is None for r in results) else results


#: Names of the per-item sums of the summary kernel, in order.
SUMMARY_SUMS = ("accuracy", "ent_ce", "ent_ce_signed", "dist_ce", "jsd", "kl", "brier",
                "brier_soft", "nll", "nll_soft", "rank_cs", "rank_cs_tie_aware")


def _linspace_step(edges: np.ndarray) -> float | None:
    """``1 / n_bins`` when the edges are ``b / n_bins``-spaced as numpy's linspace makes them.

    That is ``edges[b] == b * (1 / n_bins)`` for ``b < n_bins`` and
    ``edges[-1] == 1``, which :func:`_find_bin_step` relies on; None otherwise.
    """
    n_bins = len(edges) - 1
    step = 1.0 / n_bins
    inner = np.arange(n_bins, dtype=np.float64) * step
    return step if np.array_equal(edges[:-1], inner) and edges[-1] == 1.0 else None


def _summary_part(p, t, y, e, k, n_bins, log_eps):
    top, cw = _accumulators(n_bins, k)
    step = _linspace_step(e)
    if k == 3 and step is not None:
        out = np.zeros(len(SUMMARY_SUMS) + 1)
        _summary3(p.reshape(-1), t.reshape(-1), y, step, n_bins, log_eps, ATOL, BLOCK_ROWS,
                  top, cw, out)
        return None if out[-1] else (top, cw, out[:-1])
    sums = np.zeros(len(SUMMARY_SUMS))
    n = p.shape[0]
    rows = min(BLOCK_ROWS, n)
    logs = np.empty((3, rows, k))
    with np.errstate(divide="ignore"):  # log(0) = -inf is expected and guarded
        for start in range(0, n, rows):
            stop = min(start + rows, n)
            m = stop - start
            pb, tb, yb = p[start:stop], t[start:stop], y[start:stop]
            if m < rows:  # last block: fresh C-contiguous buffers (one kernel layout)
                logs = np.empty((3, m, k))
            if _summary_prepare(pb, tb, yb, ATOL, logs[2]):
                return None
            np.log(pb, out=logs[0])
            np.log(tb, out=logs[1])
            np.log(logs[2], out=logs[2])
            _summary_block(pb, tb, yb, logs, e, log_eps, top, cw, sums)
    return top, cw, sums


def summary_fast(probs: np.ndarray, labels: np.ndarray, targets: np.ndarray,
                 edges: np.ndarray) -> tuple[BinStats, np.ndarray] | None:
    """Every binned sum and the per-item sums :data:`SUMMARY_SUMS`, block by block.

    k = 3 (linspace edges): per chunk of :data:`BLOCK_ROWS` rows,
    :func:`_summary_sums3` (one vectorised loop: checks and the per-item sums),
    :func:`_summary_binidx3` (bin indices) and :func:`_summary_bins3` (the
    binned sums). Other k: each block is read once by a numba kernel that
    checks values and prepares the log arguments, once by numpy's vectorised
    ``np.log`` (in cache), and once by the accumulating kernel. The rows are
    split into :data:`N_PARTS` parts processed on threads. Returns None when a
    value check failed.
    """
    n, k = probs.shape
    p = _c(probs, np.float64, 2)
    y = _c(labels, np.int64, 1)
    t = _c(targets, np.float64, 2)
    e = np.ascontiguousarray(edges, dtype=np.float64)
    n_bins = len(edges) - 1
    log_eps = float(np.log(EPS))
    results = _run_parts(lambda a, b: _summary_part(p[a:b], t[a:b], y[a:b], e, k, n_bins,
                                                    log_eps), n)
    if results is None:
        return None
    top = np.concatenate([r[0] for r in results])
    cw = np.concatenate([r[1] for r in results])
    sums = np.sum([r[2] for r in results], axis=0)
    return _collapse(n, top, cw, True, True, True), sums


__all__ = [
    "BLOCK_ROWS",
    "FAST_MIN_ITEMS",
    "HAVE_NUMBA",
    "SUMMARY_SUMS",
    "summary_fast",
    "update_fast",
    "use_fast",
]
