"""The row functions of the fused kernels (:mod:`annokit.metrics.kernels`), inlined into their loops.

Row ``i`` of a block is ``p[k i + j]``, ``t[k i + j]``, ``y[i]``: the value checks
of one row (:func:`_row_ok`), its hard-label quantities (:func:`_row_hard`), those
without a log (:func:`_row_plain`), the
row sums and prediction (:func:`_row_head`), what each class adds to the per-item
quantities (:func:`_class_terms`, summed by :func:`_add_terms`), the two RankCS flags
(:func:`_row_rank`), the quantities in :data:`~annokit.metrics.sums.ITEM_QUANTITIES`
order (:func:`_row_values`) and the bin of a probability (:func:`_bin`). They
branch on no value (selects only), so that the loops calling them vectorise.

Each is compiled once by numba (per argument types) and marked ``alwaysinline``
for LLVM (:func:`~annokit.metrics._simd.always_inline`), which inlines it into
every loop that calls it, where the loop's constant number of classes unrolls it.
numba's own ``inline="always"`` copied and re-typed each function's IR at every
call site: with it, a first call compiled for 4-5x longer.

Each row function returns its quantities in the order of the table of per-item
quantities, :data:`annokit.metrics.sums.QUANTITIES`: :func:`_row_values` every one,
:func:`_row_hard` those against the hard labels, :func:`_row_plain` the group ``"plain"``
and :func:`_row_rank` the group ``"rank"``; :mod:`annokit.metrics._block` builds its
stores and bit masks from the table (and checks the groups at import), and the tests
compare every column with the numpy oracle.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from annokit.core.divergence_rows import (
    entropy_gap,
    js_distance,
    js_term,
    kl_term,
    plogp_term,
    tv_distance,
    tv_term,
)
from annokit.metrics._fastlog import log as _log
from annokit.metrics._simd import always_inline as _always_inline

__all__ = ["CLASS_TERMS"]

#: What :func:`_class_terms` returns for one class, in order (summed over classes by
#: :func:`_add_terms`; :func:`_row_values` reads them by position).
CLASS_TERMS = ("p log p", "soft log soft", "|p - soft|", "soft log(soft / p)", "Jensen-Shannon",
               "(p - one-hot)^2", "(p - soft)^2", "-log p of the hard label", "-soft log p")

_INF = np.inf
_inline = numba.njit(nogil=True, error_model="numpy")


@_inline
def _row_ok(p, t, y, i, k, atol, has_t=True):  # pragma: no cover - compiled
    """Row passes the checks of sums.check_values (same tests, same summation order);
    ``t`` is read only if ``has_t`` (a constant: without soft labels ``t`` is ``p``)."""
    _always_inline()
    o, lab, sp, st = k * i, y[i], 0.0, 0.0
    ok = (lab >= 0) & (lab < k)
    for j in range(k):
        pj = p[o + j]
        sp += pj
        ok &= (pj >= 0.0) & (pj < _INF)
        if has_t:
            tj = t[o + j]
            st += tj
            ok &= (tj >= 0.0) & (tj < _INF)
    ok &= abs(sp - 1.0) <= atol
    if has_t:
        ok &= abs(st - 1.0) <= atol
    return ok


@_inline
def _row_hard(p, y, i, k, log_eps):  # pragma: no cover - compiled
    """The quantities against the hard labels (accuracy, Brier, NLL of the majority, in table
    order), as in _row_values."""
    _always_inline()
    o, lab, pred, brier, ph = k * i, y[i], 0, 0.0, 0.0
    conf = p[o]
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
def _row_plain(p, t, y, i, k):  # pragma: no cover - compiled
    """The group ``"plain"`` of the table (accuracy, DistCE, Brier hard and soft), with no
    log: the same operations in the same order as _row_head, _class_terms and _row_values,
    so the values are those of the full row."""
    _always_inline()
    o, lab, pred, dist, brier, bsoft = k * i, y[i], 0, 0.0, 0.0, 0.0
    conf = p[o]
    for j in range(k):
        pj, tj = p[o + j], t[o + j]
        better = pj > conf
        conf = pj if better else conf
        pred = j if better else pred
        dist += tv_term(pj, tj)
        d, e = pj - (1.0 if lab == j else 0.0), pj - tj
        brier += d * d
        bsoft += e * e
    return 1.0 if pred == lab else 0.0, tv_distance(dist), brier, bsoft


@_inline
def _row_head(p, t, i, k):  # pragma: no cover - compiled
    """Row i: 1 / row sums, prediction (first maximum); see _row_values."""
    _always_inline()
    o, pred, sp, st = k * i, 0, 0.0, 0.0
    conf = p[o]
    for j in range(k):
        pj = p[o + j]
        sp += pj
        st += t[o + j]
        better = pj > conf
        conf = pj if better else conf
        pred = j if better else pred
    return 1.0 / sp, 1.0 / st, pred


@_inline
def _class_terms(pj, tj, lp, lt, isp, ist, hit, log_eps):  # pragma: no cover
    """What class j adds to: sum p log p, sum t log t, sum |p - t|, KL, 2 JS, Brier hard
    and soft, NLL of the majority, NLL of soft (see _row_values)."""
    _always_inline()
    pn, tn = pj * isp, tj * ist
    sm = pn + tn
    lc = max(log_eps, lp)
    # Jensen-Shannon (annokit.core.divergence_rows.js_term) from the logs of pn / m = 2 pn / sm
    # and tn / m: two logs per class, not three (log p, log t, log m), and one division
    inv = 1.0 / sm if sm > 0.0 else 0.0
    js = js_term(pn, tn, _log(2.0 * pn * inv), _log(2.0 * tn * inv), inv)
    d, e = pj - (1.0 if hit else 0.0), pj - tj
    return (plogp_term(pj, lp), plogp_term(tj, lt), tv_term(pj, tj), kl_term(tj, lt, lc), js,
            d * d, e * e,
            -lc if hit else 0.0, -tj * lc)


def _generated(name: str, signature: str, lines: list[str], decorator: Any, **constants: Any
               ) -> Any:
    """A compiled function from generated source: ``def name(signature):`` then ``lines``.

    For the functions whose length is a count of quantities (one line per tuple position):
    the source is written out from the count, so that a new quantity changes no position
    by hand, and LLVM sees the same straight-line code as a hand-written function.
    ``constants``: the globals the lines read.
    """
    namespace: dict[str, Any] = {"_always_inline": _always_inline, **constants}
    source = f"def {name}({signature}):\n" + "".join(f"    {line}\n" for line in lines)
    exec(compile(source, f"<annokit.metrics._rows {name}>", "exec"), namespace)  # noqa: S102
    return decorator(namespace[name])


#: ``_add_terms(a, b)``: the class terms of :data:`CLASS_TERMS` added position by position.
_add_terms = _generated("_add_terms", "a, b", [
    "_always_inline()",
    "return (" + " ".join(f"a[{q}] + b[{q}]," for q in range(len(CLASS_TERMS))) + ")"],
    _inline)
#: No class terms yet (zeros), the start of a sum of :func:`_add_terms`.
ZERO_TERMS = (0.0,) * len(CLASS_TERMS)


@_inline
def _row_rank(p, t, i, k):  # pragma: no cover - compiled
    """The group ``"rank"`` of the table, (RankCS, tie-aware RankCS) of row i as 0/1 (see
    _row_values)."""
    _always_inline()
    o, same, mono = k * i, True, True
    for a in range(k - 1):
        pa, ta = p[o + a], t[o + a]
        for c in range(a + 1, k):
            pc, tc = p[o + c], t[o + c]
            up, tup = pa <= pc, ta <= tc
            same &= up == tup
            mono &= tup if up else tc <= ta
    return 1.0 if same else 0.0, 1.0 if mono else 0.0


@_inline
def _row_values(hit, s, rank):  # pragma: no cover - compiled
    """Every quantity of the table (sums.QUANTITIES), in its order, from the summed class terms.

    Definitions: :mod:`annokit.metrics.sums`. ``log(max(p, eps)) = max(log
    p, log eps)``; every log term has its weight as a factor and ``_log(0)`` is
    finite, so ``0 log 0 = 0`` with no branch. Jensen-Shannon as scipy on
    renormalised rows ``pn = p / sum p``: ``0.5 sum_j pn_j log(pn_j / m_j) +
    tn_j log(tn_j / m_j)``, ``m_j = (pn_j + tn_j) / 2`` (Lin 1991), or the series of
    ``core.divergence_rows.js_term`` where ``pn_j`` and ``tn_j`` are close:
    accurate to a few ulps of the distance where scipy's direct form loses digits (rows that
    nearly coincide; equal rows give exactly 0 in both). RankCS without
    sorting: a stable ascending argsort puts class a before c > a iff ``v_a <=
    v_c``, so two stable argsorts agree iff every pair is ordered alike, and
    soft never decreases along p's order iff every pair ordered by p is
    ordered alike by soft.
    """
    _always_inline()
    e = entropy_gap(s[0], s[1])
    return (hit, abs(e), e, tv_distance(s[2]), js_distance(s[4]), s[3], s[5], s[6],
            s[7], s[8], rank[0], rank[1])


@_inline
def _bin(c, step, fnb, last):  # pragma: no cover - compiled
    """``clip(searchsorted(linspace(0, 1, n_bins + 1), c, "right") - 1, 0, n_bins - 1)``.

    numpy's linspace makes the edges ``b * (1 / n_bins)`` and 1 (the tests check
    every edge and its neighbours); the guess ``int(c n_bins)`` is off by at most
    one bin, corrected each way with no table look-up. ``c`` above 1 (legal by up
    to 1e-6) goes to the last bin, as with searchsorted; NaN and negative values
    (which fail the checks) go to the first, so that they index a bin. The bin is
    an int32 (``last`` is one): double -> int32 conversion has a SIMD instruction on
    AVX2, double -> int64 does not.
    """
    _always_inline()
    c = 1.0 if c > 1.0 else (c if c >= 0.0 else 0.0)  # noqa: FURB136 (max() and NaN)
    b = min(np.int32(c * fnb), last)
    fb = float(b)
    hi = (fb + 1.0) * step if b < last else 1.0
    b = b - np.int32(c < fb * step) + np.int32(c >= hi)
    return min(b, last)
