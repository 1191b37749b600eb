"""Fused single-pass numba kernels for the binned sums and the whole metric summary.

The plain-numpy code in :mod:`annokit.metrics._binning` (per-bin sums) and the
public functions in :mod:`annokit.metrics.human` are the reference; the tests
compare these kernels against them. The kernels also do the value checks
(finite, non-negative, rows summing to 1, labels in range) in the same pass, so
a large input is read once; when a check fails, the caller re-runs the numpy
validation, which raises the usual message.

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

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover
    numba = None
    HAVE_NUMBA = False

#: Inputs with fewer rows than this use numpy (no JIT compilation for small inputs).
FAST_MIN_ITEMS = 50_000

#: Row-sum tolerance, the same as :func:`annokit._validation.check_probs`.
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
        :mod:`annokit.metrics.divergence`; Brier and NLL as :mod:`annokit.metrics.human`.
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


def _summary_part(p, t, y, e, k, n_bins, log_eps):
    top, cw = _accumulators(n_bins, k)
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

    Each block of :data:`BLOCK_ROWS` rows is read once by a numba kernel that
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
