"""The loops over one block of rows of the fused metric kernels (:mod:`annokit.metrics.kernels`).

A block is :data:`BLOCK_ROWS` rows, read from cache by each loop: ``p`` and ``t`` the
flat rows of the model probabilities and of the soft labels (row ``i`` is
``p[k i:k i + k]``), ``y`` the hard labels, ``m`` the rows, ``k`` the classes; the
per-item values go to ``vals`` (column ``q`` at ``vals[q B:(q + 1) B]``), the bins
to ``bins`` (one per probability) and the top-label statistics to ``topc`` (the top
probability), ``topt`` (the soft label of that class), ``toph`` (1 if it is the hard
label) and ``topb`` (its bin). The formulas are those of the row functions
(:mod:`annokit.metrics._rows`, definitions and sources in :mod:`annokit.metrics.sums`).
Rows are never branched on, so LLVM vectorises every loop over rows.
"""

from __future__ import annotations

import numba
import numpy as np

from annokit.metrics._fastlog import log as _log
from annokit.metrics._rows import (
    ZERO_TERMS,
    _add_terms,
    _bin,
    _class_terms,
    _generated,
    _row_hard,
    _row_head,
    _row_ok,
    _row_plain,
    _row_rank,
    _row_values,
)
from annokit.metrics._simd import add4 as _add4
from annokit.metrics.sums import ITEM_QUANTITIES, NO_LOG_QUANTITIES, QUANTITIES

__all__ = ["BLOCK_ROWS", "HARD_QUANTITIES", "N_VALUES"]

#: Rows per block: the loops of one block read it from cache.
BLOCK_ROWS = _B = 1024
#: The quantities against the hard labels alone, in the output order of :func:`_values_hard`.
HARD_QUANTITIES = tuple(q.name for q in QUANTITIES if q.needs == "hard")
#: Value columns of a block buffer (``vals[q B:(q + 1) B]``); the logs of ``p`` and ``t``
#: follow them in :func:`_values_any`.
N_VALUES = _NQ = len(ITEM_QUANTITIES)
#: The quantities (bits of a mask of every quantity) that need log p, and log soft.
_LOG_P = sum(1 << c for c, q in enumerate(QUANTITIES) if "p" in q.logs)
_LOG_T = sum(1 << c for c, q in enumerate(QUANTITIES) if "t" in q.logs)
_INF = np.inf

_inline = numba.njit(nogil=True, error_model="numpy", inline="always")
_reassoc = numba.njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc"})


def _check_groups() -> None:
    """The quantities without a log are the groups of the two row functions without one
    (``"plain"``: :func:`_row_plain`, then ``"rank"``: :func:`_row_rank`), in that order."""
    plain = tuple(q.name for q in QUANTITIES if q.group == "plain")
    rank = tuple(q.name for q in QUANTITIES if q.group == "rank")
    if plain + rank != NO_LOG_QUANTITIES:
        raise ImportError(f"sums.QUANTITIES: the quantities without a log "
                          f"{list(NO_LOG_QUANTITIES)} must be the group 'plain' {list(plain)} "
                          f"(computed by _rows._row_plain) followed by the group 'rank' "
                          f"{list(rank)} (_rows._row_rank)")


_check_groups()


def _store(name: str, n: int) -> object:
    """``name(vals, i, v, mask)``: ``vals[q B + i] = v[q]`` for ``q < n`` if bit ``q`` of
    ``mask`` (a constant: LLVM drops the tests, and the work of the others, their logs)."""
    lines = []
    for q in range(n):
        lines += [f"if mask & {1 << q}:",
                  f"    vals[{'' if q == 0 else '_B + ' if q == 1 else f'{q} * _B + '}i] = v[{q}]"]
    return _generated(name, "vals, i, v, mask", lines, _inline, _B=_B)


#: Stores of the quantities of ITEM_QUANTITIES, of _values_hard and of _values_plain.
_store_values = _store("_store_values", len(ITEM_QUANTITIES))
_store_hard = _store("_store_hard", len(HARD_QUANTITIES))
_store_plain = _store("_store_plain", len(NO_LOG_QUANTITIES))


# Each loop is written for any k; _kernel passes the constant 3 or 2 (unrolled, SIMD) or k.

@_inline
def _check_impl(p, t, y, m, k, atol, has_t):  # pragma: no cover - compiled
    """Rows failing the checks of sums.check_values: every value finite and ``>= 0``, each
    row summing to 1 within ``atol``, the label in ``[0, k)`` (:func:`_row_ok`)."""
    bad = 0
    for i in range(m):
        bad += 0 if _row_ok(p, t, y, i, k, atol, has_t) else 1
    return bad


@_inline
def _values_hard(p, y, m, k, log_eps, vals, mask):  # pragma: no cover - compiled
    """The quantities of HARD_QUANTITIES (column ``q`` at ``vals[q B:]``, if bit ``q`` of
    ``mask``)."""
    for i in range(m):
        _store_hard(vals, i, _row_hard(p, y, i, k, log_eps), mask)


@_inline
def _values_plain(p, t, y, m, k, vals, mask):  # pragma: no cover - compiled
    """The quantities without a log (NO_LOG_QUANTITIES: DistCE, Brier, RankCS alone cost a
    fraction of the full row) for the rows of a block (as _values_hard)."""
    for i in range(m):
        _store_plain(vals, i, _row_plain(p, t, y, i, k) + _row_rank(p, t, i, k), mask)


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
        s = _add_terms(_add_terms(
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
    ``vals[N_VALUES B:]``)."""
    if k > 3 and mask & _LOG_P:
        for x in range(k * m):
            vals[_NQ * _B + x] = _log(p[x])
    if k > 3 and mask & _LOG_T:
        for x in range(k * m):
            vals[(_NQ + k) * _B + x] = _log(t[x])
    bad = 0
    for i in range(m):
        bad += 0 if _row_ok(p, t, y, i, k, atol, has_t) else 1
        o, lab = k * i, y[i]
        isp, ist, pred = _row_head(p, t, i, k)
        s = ZERO_TERMS
        for j in range(k):
            pj, tj = p[o + j], t[o + j]
            lp = vals[_NQ * _B + o + j] if k > 3 else _log(pj)
            lt = vals[(_NQ + k) * _B + o + j] if k > 3 else _log(tj)
            s = _add_terms(s, _class_terms(pj, tj, lp, lt, isp, ist, lab == j, log_eps))
        _store_values(vals, i, _row_values(1.0 if pred == lab else 0.0, s, _row_rank(p, t, i, k)),
                      mask)
    return bad


@_inline
def _bin_impl(p, count, n_bins, bins):  # pragma: no cover - compiled
    """``bins[x]`` = the equal-width bin of ``p[x]``, numpy's ``searchsorted`` on
    ``linspace(0, 1, n_bins + 1)`` (:func:`_bin`; Guo et al. 2017 for the ECE bins)."""
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
    """Per-bin sums of replicate ``rr`` (Guo et al. 2017; Kull et al. 2019 classwise):
    ``top[lane, b] += (w, w conf, w hit, w soft)`` over the rows of top-label bin ``b``
    and ``cw[lane, j, b]`` the same over the probabilities of class ``j`` in bin ``b``;
    the lanes (rows ``i & (lanes - 1)``) are added by the caller."""
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
