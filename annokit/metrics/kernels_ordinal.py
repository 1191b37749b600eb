"""The order-aware per-item quantities as one fused numba pass: checks, values, weighted sums.

The one implementation of :data:`annokit.metrics.ordinal.QUANTITIES` (the
registered metrics ``wasserstein``, ``manhattan``, ``lewidi_ce``,
``mean_abs_error``, ``rps``, ``rps_soft``): :func:`ordinal_parts` fills every
:class:`~annokit.metrics.ordinal.OrdinalState` of a batch in one pass,
:func:`ordinal_values` gives the per-item values (the engine's per-item output, the
perspectivist scores), :func:`ordinal_sums` one quantity's sums. A plain
numpy evaluation of each definition is the tests' oracle (``tests/metrics/oracle.py``).

Row ``i`` is ``p[k i + j]`` (model), ``t[k i + j]`` (human distribution; ``p`` when
none is given), ``y[i]`` (hard label); ``v`` the category values (increasing),
``F_x(j) = sum_{i <= j} x_i``. Each row function below gives its formula and
source. A batch is read in blocks of :data:`~annokit.metrics.kernels.BLOCK_ROWS`
rows: one loop checks every row as :func:`annokit.metrics.sums.check_values` and
writes the quantity into a block buffer, then the weighted sums of the block
(:func:`~annokit.metrics.kernels._wsum`, ``(r, n)`` bootstrap weights too), so the
inputs are read once (numpy rows took 48-156x one ``numpy.sum``
pass). Every order-aware state of a batch is filled from one such pass
(:func:`ordinal_parts`: one check per row, each requested quantity's loop over the
block while it is in cache). Chunks run on threads as in :mod:`annokit.metrics.kernels`
(same cut, same results whatever the number of threads); each number of classes
(2-5 as constants, others read at run time) is its own small kernel, whatever the
quantities, compiled on first use and cached.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numba
import numpy as np

from annokit.core.checks import SIMPLEX_ATOL
from annokit.core.divergence_rows import tv_term, wasserstein_row
from annokit.core.progress import notice_if_slow
from annokit.metrics import sums as _sums
from annokit.metrics._fastlog import log as _log
from annokit.metrics._rows import _row_ok
from annokit.metrics._simd import always_inline as _always_inline
from annokit.metrics.kernels import BLOCK_ROWS as _B
from annokit.metrics.kernels import _run, _wsum, _wtotal

__all__ = ["LEWIDI_CE_CLIP", "LEWIDI_CE_SHIFT", "QUANTITIES", "ordinal_parts", "ordinal_sums",
           "ordinal_sums_many", "ordinal_values"]

#: The order-aware per-item quantities, in the order of their row functions below.
QUANTITIES = ("emd", "l1", "ce_clip_shift", "mean_gap", "cum_sq_hard", "cum_sq_soft")
#: LeWiDi 2023 scorer: predictions clipped to [1e-12, 1 - 1e-12], then log(p + 1e-9).
LEWIDI_CE_CLIP = 1e-12
LEWIDI_CE_SHIFT = 1e-9

_row = numba.njit(nogil=True, error_model="numpy")
_jit = numba.njit(cache=True, nogil=True, error_model="numpy")


@_row
def _emd(p, t, y, i, k, v):  # pragma: no cover - compiled
    """Wasserstein-1 on the category values, ``sum_{j<k-1} |F_p(j) - F_t(j)| (v_{j+1} - v_j)``
    (scipy.stats.wasserstein_distance(v, v, t, p); LeWiDi 2025 ordinal soft score)."""
    _always_inline()
    return wasserstein_row(p, k * i, t, k * i, k, v)  # annokit.core.divergence_rows


@_row
def _l1(p, t, y, i, k, v):  # pragma: no cover - compiled
    """Manhattan distance ``sum_j |p_j - t_j|`` (LeWiDi 2025 soft score)."""
    _always_inline()
    o, acc = k * i, 0.0
    for j in range(k):
        acc += tv_term(p[o + j], t[o + j])  # 2 TVD
    return acc


@_row
def _ce_clip_shift(p, t, y, i, k, v):  # pragma: no cover - compiled
    """``-sum_j t_j log(clip(p_j, 1e-12, 1 - 1e-12) + 1e-9)``, natural log: the SemEval-2023
    Task 11 (LeWiDi 2023) scorer's cross-entropy, clip and shift as in its code."""
    _always_inline()
    o, acc = k * i, 0.0
    for j in range(k):
        pj = min(max(p[o + j], LEWIDI_CE_CLIP), 1.0 - LEWIDI_CE_CLIP)
        acc += t[o + j] * _log(pj + LEWIDI_CE_SHIFT)
    return -acc


@_row
def _mean_gap(p, t, y, i, k, v):  # pragma: no cover - compiled
    """Error of the predicted mean ``|sum_j v_j (p_j - t_j)|``."""
    _always_inline()
    o, acc = k * i, 0.0
    for j in range(k):
        acc += (p[o + j] - t[o + j]) * v[j]
    return abs(acc)


@_row
def _cum_sq_hard(p, t, y, i, k, v):  # pragma: no cover - compiled
    """Ranked probability score against the hard label, ``sum_{j<k-1} (F_p(j) - [j >= y])^2``
    (Epstein 1969, in Murphy's 1971 cumulative form)."""
    _always_inline()
    o, lab, c, acc = k * i, y[i], 0.0, 0.0
    for j in range(k - 1):
        c += p[o + j] - (1.0 if j == lab else 0.0)
        acc += c * c
    return acc


@_row
def _cum_sq_soft(p, t, y, i, k, v):  # pragma: no cover - compiled
    """Ranked probability score against the human distribution, ``sum_{j<k-1} (F_p(j) -
    F_t(j))^2`` (Epstein 1969; Murphy 1971)."""
    _always_inline()
    o, c, acc = k * i, 0.0, 0.0
    for j in range(k - 1):
        c += p[o + j] - t[o + j]
        acc += c * c
    return acc


@functools.cache
def _kernel(k_const: int) -> Any:
    """The pass for ``k_const`` classes (2-5 as a compile-time constant, or 0: read at run
    time) and any quantities (codes ``qs``, indices into :data:`QUANTITIES`, with category
    values ``v[j]`` for ``qs[j]``): per block one loop checks the rows, then each quantity's
    loop reads the block while it is in cache, then the weighted sums of every quantity
    (:func:`_wsum`). Every order-aware state of a batch is filled from this one pass
    (:func:`ordinal_parts`); with ``out`` of ``n`` rows it also writes the first
    quantity's per-item values."""

    @_jit
    def part(p, t, y, has_y, has_t, w, weighted, a0, a1, k, qs, v, atol, items, wtot,
             out):  # pragma: no cover - compiled
        kk = k_const if k_const else k
        r, nq = items.shape[0], qs.shape[0]
        vals = np.empty(nq * _B)
        zeros = np.zeros(_B, dtype=np.int64)
        bad = wbad = 0
        for a in range(a0, a1, _B):
            b = min(a + _B, a1)
            m = b - a
            pb, tb = p[kk * a:kk * b], t[kk * a:kk * b]
            yb = y[a:b] if has_y else zeros
            for i in range(m):
                bad += 0 if _row_ok(pb, tb, yb, i, kk, atol, has_t) else 1
            for j in range(nq):
                q, vj, o = qs[j], v[j], j * _B
                if q == 0:
                    for i in range(m):
                        vals[o + i] = _emd(pb, tb, yb, i, kk, vj)
                elif q == 1:
                    for i in range(m):
                        vals[o + i] = _l1(pb, tb, yb, i, kk, vj)
                elif q == 2:
                    for i in range(m):
                        vals[o + i] = _ce_clip_shift(pb, tb, yb, i, kk, vj)
                elif q == 3:
                    for i in range(m):
                        vals[o + i] = _mean_gap(pb, tb, yb, i, kk, vj)
                elif q == 4:
                    for i in range(m):
                        vals[o + i] = _cum_sq_hard(pb, tb, yb, i, kk, vj)
                else:
                    for i in range(m):
                        vals[o + i] = _cum_sq_soft(pb, tb, yb, i, kk, vj)
            for i in range(m if out.shape[0] else 0):
                out[a + i] = vals[i]
            for rr in range(r):
                if weighted:
                    s, nbad = _wtotal(w, rr, a, m)
                    wtot[rr] += s
                    wbad += nbad
                _wsum(vals, (1 << nq) - 1, m, w, weighted, rr, a, items)  # columns 0..nq-1
            if bad or wbad:
                break
        return bad, wbad

    return part


def _values_of(values: Any, k: int) -> np.ndarray:
    return (np.arange(k, dtype=np.float64) if values is None
            else np.ascontiguousarray(values, dtype=np.float64))


def _code(quantity: str) -> int:
    """The kernel's code of a quantity: its index in :data:`QUANTITIES`."""
    return QUANTITIES.index(quantity)


def _call(quantities: Sequence[str], p: np.ndarray, s: np.ndarray | None, h: np.ndarray | None,
          w: np.ndarray | None, values: Sequence[Any], out: np.ndarray) -> tuple[Any, Any]:
    """``(totals, weight)`` of :func:`ordinal_sums_many`; ``out`` as in :func:`_kernel`."""
    n, k = p.shape
    one = w is None or w.ndim == 1
    r = 1 if one or w is None else w.shape[0]
    w2 = np.zeros((1, 1)) if w is None else np.ascontiguousarray(w.reshape(r, n))
    pf = np.ascontiguousarray(p).reshape(-1)
    tf = pf if s is None else np.ascontiguousarray(s).reshape(-1)
    hf = np.zeros(1, dtype=np.int64) if h is None else np.ascontiguousarray(h)
    qs = np.array([_code(q) for q in quantities], dtype=np.int64)
    v = np.stack([_values_of(x, k) for x in values]) if len(values) else np.zeros((0, k))
    kernel = _kernel(k if 2 <= k <= 5 else 0)
    nq = len(quantities)

    def args(a: int, b: int, atol: float, acc: list) -> tuple:
        return (pf, tf, hf, h is not None, s is not None, w2, w is not None, a, b, k, qs, v,
                atol, *acc, out)

    if not kernel.signatures:
        with notice_if_slow("annokit: compiling the metric kernels (once per environment; "
                            "later runs load them from the cache) ..."):
            kernel(*args(0, 0, SIMPLEX_ATOL, [np.zeros((r, nq)), np.zeros(r)]))

    def part(a: int, b: int, atol: float):
        acc = [np.zeros((r, nq)), np.zeros(r)]
        bad = kernel(*args(a, b, atol, acc))
        return acc, bad[0] + bad[1]

    parts = _run(part, n, p, s, h, w, _sums.NAMES) or [[np.zeros((r, nq)), np.zeros(r)]]
    total = sum(acc[0] for acc in parts)
    weight = float(n) if w is None else sum(acc[1] for acc in parts)
    if one:
        return total[0], (weight if w is None else float(weight[0]))
    return total, weight


def ordinal_sums_many(quantities: Sequence[str], p: np.ndarray, s: np.ndarray | None,
                      h: np.ndarray | None, w: np.ndarray | None,
                      values: Sequence[Any]) -> tuple[Any, Any]:
    """:func:`ordinal_sums` of several quantities (``values[j]`` the category values of
    ``quantities[j]``, None for ``0 .. k-1``) from one pass: ``(totals, weight)`` with
    ``totals`` of shape ``(len(quantities),)``, or ``(r, len(quantities))`` with ``(r, n)``
    weights."""
    return _call(quantities, p, s, h, w, values, np.empty(0))


def ordinal_sums(quantity: str, p: np.ndarray, s: np.ndarray | None, h: np.ndarray | None,
                 w: np.ndarray | None, values: Any = None) -> tuple[Any, Any]:
    """``(sum_i w_i q_i, sum_i w_i)`` of an order-aware quantity over a batch prepared by
    :func:`annokit.metrics.sums.prepare`, whose values are checked in the same pass
    (:class:`~annokit.errors.InvalidValueError` naming the row). With ``w`` of shape
    ``(r, n)`` both have a leading replicate axis."""
    total, weight = _call((quantity,), p, s, h, w, (values,), np.empty(0))
    return total[..., 0], weight


def ordinal_values(quantity: str, p: np.ndarray, s: np.ndarray | None, h: np.ndarray | None,
                   values: Any = None) -> np.ndarray:
    """The per-item values, shape ``(n,)``, of an order-aware quantity (checked as
    :func:`ordinal_sums`)."""
    out = np.empty(p.shape[0])
    _call((quantity,), p, s, h, None, (values,), out)
    return out


def ordinal_parts(states: list[Any], p: np.ndarray, s: np.ndarray | None, h: np.ndarray | None,
                  w: np.ndarray | None, names: Sequence[str]) -> list[Any]:
    """The pass of :class:`~annokit.metrics.ordinal.OrdinalState`: the ``(total, weight)`` of
    every order-aware state of a batch from one :func:`ordinal_sums_many` pass (a quantity
    asked twice with the same category values is computed once)."""
    k = p.shape[1]
    first = {(st.quantity, st.values): st for st in states}  # one column per distinct pair
    keys = list(first)
    totals, weight = ordinal_sums_many([q for q, _ in keys], p, s, h, w,
                                       [first[key]._category_values(k) for key in keys])
    return [(totals[..., keys.index((st.quantity, st.values))], weight) for st in states]
