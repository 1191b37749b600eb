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

    HAVE_NUMBA = os.environ.get("ANNOKIT_DISABLE_NUMBA", "") == ""
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

#: Smallest positive normal float64: values are clipped to it before logs, so
#: ``0 * log(0)`` terms are ``0 * finite`` (the references use ``np.where``).
_TINY = np.finfo(np.float64).tiny

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
                    atol,
                    count, sum_conf, sum_correct, sum_soft,
                    cw_count, cw_sum_prob, cw_sum_hit, cw_sum_soft):  # pragma: no cover
        """One pass: top-label and classwise per-bin sums (see _binning.update_numpy).

        Accumulators carry a leading lane axis of size _LANES (row i goes to lane
        i % _LANES). Value checks are branch-free flags; returns 1 when any row
        failed (the caller re-validates with numpy for the message), else 0.
        """
        n, k = probs.shape
        n_bins = edges.shape[0] - 1
        bad = False
        for i in range(n):
            r = i & 3
            lab = labels[i] if has_labels else -1
            conf = probs[i, 0]
            pred = 0
            lo = conf
            hi = conf
            s = conf
            for j in range(1, k):
                v = probs[i, j]
                s += v
                lo = min(lo, v)
                hi = max(hi, v)
                better = v > conf
                conf = v if better else conf
                pred = j if better else pred
            # NaN fails every comparison; inf fails hi <= 1 or the sum check
            bad |= not (lo >= 0.0 and hi <= 1.0 and abs(s - 1.0) <= atol)
            if has_labels:
                bad |= lab < 0 or lab >= k
            if has_targets:
                st = 0.0
                tlo = 1.0
                thi = 0.0
                for j in range(k):
                    v = targets[i, j]
                    st += v
                    tlo = min(tlo, v)
                    thi = max(thi, v)
                bad |= not (tlo >= 0.0 and thi <= 1.0 and abs(st - 1.0) <= atol)
            if bad:
                return 1
            if uniform:
                b = _find_bin_uniform(conf, edges, n_bins)
            else:
                b = _find_bin(conf, edges, n_bins)
            count[r, b] += 1
            sum_conf[r, b] += conf
            if has_labels:
                sum_correct[r, b] += 1.0 if pred == lab else 0.0
            if has_targets:
                sum_soft[r, b] += targets[i, pred]
            if classwise:
                for j in range(k):
                    v = probs[i, j]
                    if uniform:
                        bj = _find_bin_uniform(v, edges, n_bins)
                    else:
                        bj = _find_bin(v, edges, n_bins)
                    cw_count[r, j, bj] += 1
                    cw_sum_prob[r, j, bj] += v
                    if has_labels:
                        cw_sum_hit[r, j, bj] += 1.0 if lab == j else 0.0
                    if has_targets:
                        cw_sum_soft[r, j, bj] += targets[i, j]
        return 0

    @_jit
    def _summary_prepare(probs, targets, labels, atol, tiny, buf):  # pragma: no cover
        """Value checks and the arguments of the logs for one block.

        buf[0] = max(p, tiny), buf[1] = max(t, tiny), buf[2] = max(m, tiny) with
        m = (p / sum p + t / sum t) / 2 (the Jensen-Shannon midpoint on
        renormalised rows, as scipy). Returns 1 when any row failed a check.
        """
        n, k = probs.shape
        bad = False
        for i in range(n):
            sp = 0.0
            st = 0.0
            lo = 1.0
            hi = 0.0
            for j in range(k):
                pv = probs[i, j]
                tv = targets[i, j]
                sp += pv
                st += tv
                lo = min(lo, min(pv, tv))
                hi = max(hi, max(pv, tv))
            lab = labels[i]
            bad |= not (lo >= 0.0 and hi <= 1.0 and abs(sp - 1.0) <= atol
                        and abs(st - 1.0) <= atol) or lab < 0 or lab >= k
            isp = 1.0 / sp
            ist = 1.0 / st
            for j in range(k):
                pv = probs[i, j]
                tv = targets[i, j]
                buf[0, i, j] = max(pv, tiny)
                buf[1, i, j] = max(tv, tiny)
                buf[2, i, j] = max(0.5 * (pv * isp + tv * ist), tiny)
        return 1 if bad else 0

    @_jit
    def _summary_block(probs, targets, labels, logs, edges, log_eps,
                       count, sum_conf, sum_correct, sum_soft,
                       cw_count, cw_sum_prob, cw_sum_hit, cw_sum_soft, sums):  # pragma: no cover
        """Every binned sum (lane axis first) and the per-item sums, for one block.

        ``logs`` holds np.log of _summary_prepare's buffer (numpy's SIMD log).
        sums: see SUMMARY_SUMS.
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
            count[r, b] += 1
            sum_conf[r, b] += conf
            hit = 1.0 if pred == lab else 0.0
            sum_correct[r, b] += hit
            sum_soft[r, b] += targets[i, pred]
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
                bj = _find_bin_uniform(pj, edges, n_bins)
                cw_count[r, j, bj] += 1
                cw_sum_prob[r, j, bj] += pj
                cw_sum_hit[r, j, bj] += 1.0 if lab == j else 0.0
                cw_sum_soft[r, j, bj] += tj
                lp = logs[0, i, j]
                lt = logs[1, i, j]
                lm = logs[2, i, j]
                lpc = max(lp, log_eps)  # log(max(p, 1e-15)) as ChaosNLI's KL
                hp -= pj * lp
                ht -= tj * lt
                l1 += abs(pj - tj)
                kl += tj * (lt - lpc)
                ce -= tj * lpc
                pn = pj * isp
                tn = tj * ist
                # 0 * (log 0 - log m) terms vanish: log was taken of max(x, tiny)
                js += pn * (lp - lsp - lm) if pj > 0 else 0.0
                js += tn * (lt - lst - lm) if tj > 0 else 0.0
                d = pj - (1.0 if j == lab else 0.0)
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
            # before class b > a iff v[a] <= v[b], so two stable argsorts agree
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


def _lanes(n_bins: int, k: int, labels: bool, targets: bool, classwise: bool):
    z = np.zeros
    d1, d2 = np.zeros((1, 1)), np.zeros((1, 1, 1))
    return (z((_LANES, n_bins), np.int64), z((_LANES, n_bins)),
            z((_LANES, n_bins)) if labels else d1, z((_LANES, n_bins)) if targets else d1,
            z((_LANES, k, n_bins), np.int64) if classwise else np.zeros((1, 1, 1), np.int64),
            z((_LANES, k, n_bins)) if classwise else d2,
            z((_LANES, k, n_bins)) if classwise and labels else d2,
            z((_LANES, k, n_bins)) if classwise and targets else d2)


def _collapse(n: int, lanes, labels: bool, targets: bool, classwise: bool) -> BinStats:
    c, sc, sk, ss, cc, cp, ch, cs = (a.sum(axis=0) for a in lanes)
    return BinStats(n, c, sc, sk if labels else None, ss if targets else None,
                    cc if classwise else None, cp if classwise else None,
                    ch if classwise and labels else None, cs if classwise and targets else None)


def _c(a: np.ndarray | None, dtype, ndim: int) -> np.ndarray:
    if a is None:
        return np.zeros((1,) * ndim, dtype=dtype)
    return np.ascontiguousarray(a, dtype=dtype)


def update_fast(probs: np.ndarray, labels: np.ndarray | None, targets: np.ndarray | None,
                edges: np.ndarray, *, classwise: bool = True) -> BinStats | None:
    """Numba version of :func:`annokit.metrics._binning.update_numpy`.

    Returns the statistics, or None when a value check failed (the caller then
    runs the numpy validation, which raises the proper error).
    """
    n, k = probs.shape
    has_l, has_t = labels is not None, targets is not None
    lanes = _lanes(len(edges) - 1, k, has_l, has_t, classwise)
    code = _bin_kernel(
        _c(probs, np.float64, 2), _c(labels, np.int64, 1), _c(targets, np.float64, 2),
        np.ascontiguousarray(edges, dtype=np.float64),
        bool(np.array_equal(edges, _binning.uniform_edges(len(edges) - 1))),
        has_l, has_t, classwise, ATOL, *lanes)
    if code:
        return None
    return _collapse(n, lanes, has_l, has_t, classwise)


#: Names of the per-item sums of the summary kernel, in order.
SUMMARY_SUMS = ("accuracy", "ent_ce", "ent_ce_signed", "dist_ce", "jsd", "kl", "brier",
                "brier_soft", "nll", "nll_soft", "rank_cs", "rank_cs_tie_aware")


def _summary_part(p, t, y, e, k, n_bins, log_eps):
    lanes = _lanes(n_bins, k, True, True, True)
    sums = np.zeros(len(SUMMARY_SUMS))
    n = p.shape[0]
    rows = min(BLOCK_ROWS, n)
    buf = np.empty((3, rows, k))
    logs = np.empty((3, rows, k))
    for start in range(0, n, rows):
        stop = min(start + rows, n)
        m = stop - start
        pb, tb, yb = p[start:stop], t[start:stop], y[start:stop]
        if m < rows:  # last block: fresh C-contiguous buffers (one kernel layout)
            buf, logs = np.empty((3, m, k)), np.empty((3, m, k))
        bb, lb = buf, logs
        if _summary_prepare(pb, tb, yb, ATOL, _TINY, bb):
            return None
        np.log(bb, out=lb)
        _summary_block(pb, tb, yb, lb, e, log_eps, *lanes, sums)
    return lanes, sums


#: The summary splits its rows into this many contiguous parts, run on up to as
#: many threads (the kernels release the GIL). The split does not depend on the
#: number of CPUs, so results are the same everywhere.
N_PARTS = 2


def summary_fast(probs: np.ndarray, labels: np.ndarray, targets: np.ndarray,
                 edges: np.ndarray) -> tuple[BinStats, np.ndarray] | None:
    """Every binned sum and the per-item sums :data:`SUMMARY_SUMS`, block by block.

    Each block of :data:`BLOCK_ROWS` rows is read once by a numba kernel that
    checks values and prepares the log arguments, once by numpy's vectorised
    ``np.log`` (in cache), and once by the accumulating kernel. The rows are
    split into :data:`N_PARTS` parts processed on threads. Returns None when a
    value check failed.
    """
    from concurrent.futures import ThreadPoolExecutor

    n, k = probs.shape
    p = _c(probs, np.float64, 2)
    y = _c(labels, np.int64, 1)
    t = _c(targets, np.float64, 2)
    e = np.ascontiguousarray(edges, dtype=np.float64)
    n_bins = len(edges) - 1
    log_eps = float(np.log(EPS))
    bounds = np.linspace(0, n, N_PARTS + 1).astype(np.int64)
    parts = [(p[a:b], t[a:b], y[a:b]) for a, b in itertools.pairwise(bounds) if b > a]
    workers = max(1, min(len(parts), os.cpu_count() or 1))
    if workers == 1:
        results = [_summary_part(*part, e, k, n_bins, log_eps) for part in parts]
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(lambda part: _summary_part(*part, e, k, n_bins, log_eps),
                                    parts))
    if any(r is None for r in results):
        return None
    lanes = [np.concatenate([r[0][i] for r in results]) for i in range(8)]
    sums = np.sum([r[1] for r in results], axis=0)
    return _collapse(n, lanes, True, True, True), sums


__all__ = [
    "BLOCK_ROWS",
    "FAST_MIN_ITEMS",
    "HAVE_NUMBA",
    "SUMMARY_SUMS",
    "summary_fast",
    "update_fast",
    "use_fast",
]
