"""Per-label Bernoulli statistics as fused numba passes: binary positive-class bins, multi-label sums.

The one implementation of the sufficient statistics of the binary states
(:class:`~annokit.metrics.states_ext.BinaryBinnedState`: ``ece_binary``,
``mce_binary``) and the multi-label states (:mod:`annokit.metrics.multilabel`:
``ece_multilabel``, ``brier_multilabel``, ``bce_multilabel``). Each function
reads a batch once, in blocks of :data:`~annokit.metrics.kernels.BLOCK_ROWS`
rows: one loop checks the block's values, then the loops of every requested
statistic read the block while it is in cache, so that all the states of one
kind are filled from one pass (one state protocol, the kinds fused
alike). Chunks run on threads as in :mod:`annokit.metrics.kernels` (the same
cut, so the sums do not depend on the number of threads); the tests compare
the sums with numpy loops written from the definitions.

Binary, row ``i`` of ``probs`` (n, 2), hard label ``y_i``, positive column ``c``,
per bin ``b`` of ``p_ic`` (equal-width, :func:`annokit.metrics._rows._bin`)::

    W_b = sum_{i in b} w_i,   P_b = sum_{i in b} w_i p_ic,   Y_b = sum_{i in b} w_i [y_i = c]

Multi-label, ``p_il`` the model's probability of label ``l``, ``s_il`` the fraction
of annotators ticking it, ``h_il`` the 0/1 majority: the same three sums per label and
bin (with ``h_il`` as the target), and per label ``sum_i w_i (p_il - s_il)^2`` (Brier
1950) and ``sum_i w_i bce_il`` with ``bce_il = -(s_il log max(p_il, eps) + (1 - s_il)
log max(1 - p_il, eps))``, a term with zero human mass 0, ``eps = 1e-15`` as ``nll``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from annokit.core.checks import SIMPLEX_ATOL
from annokit.core.divergence import KL_EPS
from annokit.core.progress import notice_if_slow
from annokit.metrics import sums as _sums
from annokit.metrics._fastlog import log as _log
from annokit.metrics._rows import _bin, _row_ok
from annokit.metrics.kernels import BLOCK_ROWS as _B
from annokit.metrics.kernels import _run, _run_parts, _wtotal

__all__ = ["MULTILABEL_QUANTITIES", "MultilabelSums", "binary_bin_sums", "multilabel_sums",
           "multilabel_values"]

#: The per-label quantities of the multi-label means: ``(p - s)^2`` and the binary cross-entropy.
MULTILABEL_QUANTITIES = ("squared", "log")

_jit = numba.njit(cache=True, nogil=True, error_model="numpy")
_NOTICE = ("annokit: compiling the metric kernels (once per environment; later runs load them "
           "from the cache) ...")


# --------------------------------------------------------------------------- binary

@_jit
def _binary_part(p, t, y, has_t, w, weighted, a0, a1, atol, n_bins, positive, acc,
                 wtot):  # pragma: no cover - compiled
    """Rows a0..a1 of ``p`` (flat, two columns): for each configuration ``c`` (``n_bins[c]``
    equal-width bins on column ``positive[c]``) ``acc[rr, c, :, b] += (w, w p, w [y = pos])``
    over the rows of bin ``b``; ``wtot[rr] += sum w``. Returns the failed checks (rows as
    :func:`annokit.metrics.sums.check_values`, weights) and stops after the first block
    with a failure."""
    r, n_conf = acc.shape[0], n_bins.shape[0]
    bins = np.empty(_B, dtype=np.int32)
    bad = wbad = 0
    for a in range(a0, a1, _B):
        b = min(a + _B, a1)
        m = b - a
        pb, tb, yb = p[2 * a:2 * b], t[2 * a:2 * b], y[a:b]
        for i in range(m):
            bad += 0 if _row_ok(pb, tb, yb, i, 2, atol, has_t) else 1
        for rr in range(r if weighted else 0):
            s, nbad = _wtotal(w, rr, a, m)
            wtot[rr] += s
            wbad += nbad
        for c in range(n_conf):
            nb, pos = n_bins[c], positive[c]
            step, fnb, last = 1.0 / nb, float(nb), np.int32(nb - 1)
            for i in range(m):
                bins[i] = _bin(pb[2 * i + pos], step, fnb, last)
            for rr in range(r):
                for i in range(m):
                    wi = w[rr, a + i] if weighted else 1.0
                    x, bi = pb[2 * i + pos], bins[i]
                    acc[rr, c, 0, bi] += wi
                    acc[rr, c, 1, bi] += wi * x
                    acc[rr, c, 2, bi] += wi if yb[i] == pos else 0.0
        if bad or wbad:
            break
    return bad, wbad


def _weights2(w: np.ndarray | None, n: int) -> tuple[np.ndarray, int, bool]:
    """Weights as (r, n) C-contiguous (a dummy without weights), ``r`` and whether 1-D or none."""
    one = w is None or w.ndim == 1
    if w is None:
        return np.zeros((1, 1)), 1, one
    r = 1 if one else w.shape[0]
    return np.ascontiguousarray(w.reshape(r, n)), r, one


def binary_bin_sums(p: np.ndarray, s: np.ndarray | None, h: np.ndarray, w: np.ndarray | None,
                    configs: Sequence[tuple[int, int]], *,
                    names: Sequence[str] = _sums.NAMES) -> tuple[list[np.ndarray], Any]:
    """Per-bin ``(W_b, P_b, Y_b)`` of a two-column batch for each ``(n_bins, positive)`` in
    ``configs``, from one pass that also checks the batch (as
    :func:`annokit.metrics.sums.check_values`, the same messages).

    ``p``, ``s``, ``h``, ``w`` as prepared by :func:`annokit.metrics.sums.prepare`
    (``s`` only checked). Returns one array per configuration, shape ``(3, n_bins)``, or
    ``(r, 3, n_bins)`` with ``(r, n)`` weights, and the total weight (float or ``(r,)``).
    """
    n = p.shape[0]
    w2, r, one = _weights2(w, n)
    pf = np.ascontiguousarray(p).reshape(-1)
    tf = pf if s is None else np.ascontiguousarray(s).reshape(-1)
    hf = np.ascontiguousarray(h)
    nbs = np.array([c[0] for c in configs], dtype=np.int64)
    poss = np.array([c[1] for c in configs], dtype=np.int64)
    shape = (r, len(configs), 3, max([1, *nbs.tolist()]))

    def args(a: int, b: int, atol: float, acc: np.ndarray, wtot: np.ndarray) -> tuple:
        return (pf, tf, hf, s is not None, w2, w is not None, a, b, atol, nbs, poss, acc, wtot)

    if not _binary_part.signatures:
        with notice_if_slow(_NOTICE):
            _binary_part(*args(0, 0, SIMPLEX_ATOL, np.zeros(shape), np.zeros(r)))

    def part(a: int, b: int, atol: float) -> tuple[list[np.ndarray], int]:
        acc, wtot = np.zeros(shape), np.zeros(r)
        bad = _binary_part(*args(a, b, atol, acc, wtot))
        return [acc, wtot], bad[0] + bad[1]

    parts = _run(part, n, p, s, h, w, names) or [[np.zeros(shape), np.zeros(r)]]
    acc = sum(x[0] for x in parts)
    weight: Any = float(n) if w is None else sum(x[1] for x in parts)
    if one:
        weight = weight if w is None else float(weight[0])
    sums = [acc[:, c, :, :nb] for c, nb in enumerate(nbs.tolist())]
    return [x[0] if one else x for x in sums], weight


# --------------------------------------------------------------------------- multi-label

@numba.njit(nogil=True, error_model="numpy", inline="always")
def _bce(x, t, eps):  # pragma: no cover - compiled
    """Binary cross-entropy of probability ``x`` against the fraction ``t`` (module notes)."""
    pos = t * _log(max(x, eps)) if t > 0.0 else 0.0
    neg = (1.0 - t) * _log(max(1.0 - x, eps)) if t < 1.0 else 0.0
    return -(pos + neg)


@_jit
def _multilabel_part(p, s, h, has_s, has_h, w, weighted, a0, a1, n_labels, n_bins, want,
                     eps, acc_bins, acc_means, wtot, out, out_q):  # pragma: no cover - compiled
    """Rows a0..a1 of ``p``, ``s``, ``h`` (flat, ``n_labels`` columns): per configuration
    ``c`` the per-label bin sums ``acc_bins[rr, c, :, l, b] += (w, w p, w h)``; per label
    ``acc_means[rr, q, l] += w v_q`` for the quantities ``q`` with ``want[q]``
    (:data:`MULTILABEL_QUANTITIES`); ``wtot[rr] += sum w``; with ``out`` of ``n`` rows the
    values of quantity ``out_q`` per item and label. Checks: every value finite and in
    [0, 1], ``h`` 0 or 1, weights finite and >= 0; returns the failures and stops after
    the first block with one."""
    L, r, n_conf = n_labels, acc_means.shape[0], n_bins.shape[0]
    vals = np.empty((2, _B * L))
    bins = np.empty(_B * L, dtype=np.int32)
    bad = wbad = 0
    for a in range(a0, a1, _B):
        b = min(a + _B, a1)
        m = b - a
        ml = m * L
        pb = p[L * a:L * b]
        sb = s[L * a:L * b] if has_s else pb
        hb = h[L * a:L * b] if has_h else pb
        for x in range(ml):
            px, sx, hx = pb[x], sb[x], hb[x]
            ok = (px >= 0.0) & (px <= 1.0) & (sx >= 0.0) & (sx <= 1.0)
            ok &= (hx == 0.0) | (hx == 1.0) if has_h else True
            bad += 0 if ok else 1
        for rr in range(r if weighted else 0):
            t, nbad = _wtotal(w, rr, a, m)
            wtot[rr] += t
            wbad += nbad
        for q in range(2):
            if not want[q]:
                continue
            for x in range(ml):
                vals[q, x] = (pb[x] - sb[x]) ** 2 if q == 0 else _bce(pb[x], sb[x], eps)
            for rr in range(r):
                for i in range(m):
                    wi = w[rr, a + i] if weighted else 1.0
                    for lab in range(L):
                        acc_means[rr, q, lab] += wi * vals[q, i * L + lab]
        for i in range(m if out.shape[0] else 0):
            for lab in range(L):
                out[a + i, lab] = vals[out_q, i * L + lab]
        for c in range(n_conf):
            nb = n_bins[c]
            step, fnb, last = 1.0 / nb, float(nb), np.int32(nb - 1)
            for x in range(ml):
                bins[x] = _bin(pb[x], step, fnb, last)
            for rr in range(r):
                for i in range(m):
                    wi = w[rr, a + i] if weighted else 1.0
                    for lab in range(L):
                        x = i * L + lab
                        bi = bins[x]
                        acc_bins[rr, c, 0, lab, bi] += wi
                        acc_bins[rr, c, 1, lab, bi] += wi * pb[x]
                        acc_bins[rr, c, 2, lab, bi] += wi * hb[x]
        if bad or wbad:
            break
    return bad, wbad


@dataclass
class MultilabelSums:
    """What one multi-label batch gives the multi-label states (:func:`multilabel_sums`).

    Attributes
    ----------
    weight : float or ndarray of shape (r,)
        Total weight.
    bins : list of ndarray
        Per configuration, shape ``(3, L, n_bins)`` or ``(r, 3, L, n_bins)``: weight,
        summed ``p`` and summed ``h`` per label and bin.
    means : dict of str to ndarray
        Per requested quantity, ``sum_i w_i v_il``, shape ``(L,)`` or ``(r, L)``.
    """

    weight: Any
    bins: list[np.ndarray]
    means: dict[str, np.ndarray]


def _multilabel_call(p: np.ndarray, s: np.ndarray | None, h: np.ndarray | None,
                     w: np.ndarray | None, n_bins: Sequence[int], quantities: Sequence[str],
                     out: np.ndarray, out_q: int, check: Callable[[], None],
                     eps: float = KL_EPS) -> MultilabelSums:
    n, L = p.shape
    w2, r, one = _weights2(w, n)
    pf = np.ascontiguousarray(p).reshape(-1)
    sf = pf if s is None else np.ascontiguousarray(s).reshape(-1)
    hf = pf if h is None else np.ascontiguousarray(h).reshape(-1)
    nbs = np.array(list(n_bins), dtype=np.int64)
    want = np.array([q in quantities for q in MULTILABEL_QUANTITIES])
    shapes = ((r, len(nbs), 3, L, max([1, *nbs.tolist()])), (r, 2, L), (r,))

    def run(a: int, b: int) -> tuple[list[np.ndarray], int]:
        acc = [np.zeros(shape) for shape in shapes]
        # numba's stub of Dispatcher.__call__ does not describe a kernel's arguments
        bad = _multilabel_part(pf, sf, hf, s is not None, h is not None, w2,  # type: ignore[call-arg]
                               w is not None, a, b, L, nbs, want, eps, *acc, out, out_q)
        return acc, bad[0] + bad[1]

    if not _multilabel_part.signatures:
        with notice_if_slow(_NOTICE):
            run(0, 0)
    results = _run_parts(run, n) if n else []
    if any(bad for _, bad in results):
        check()  # raises the message naming the first bad value
        raise RuntimeError("multi-label kernel checks disagree with the numpy checks")  # pragma: no cover
    parts = [acc for acc, _ in results] or [[np.zeros(shape) for shape in shapes]]
    acc_bins, acc_means, wtot = (sum(x[j] for x in parts) for j in range(3))
    weight: Any = float(n) if w is None else (float(wtot[0]) if one else wtot)
    bins = [acc_bins[:, c, :, :, :nb] for c, nb in enumerate(nbs.tolist())]
    means = {q: acc_means[:, j] for j, q in enumerate(MULTILABEL_QUANTITIES) if want[j]}
    if one:
        bins = [x[0] for x in bins]
        means = {q: x[0] for q, x in means.items()}
    return MultilabelSums(weight, bins, means)


def multilabel_sums(p: np.ndarray, s: np.ndarray | None, h: np.ndarray | None,
                    w: np.ndarray | None, *, n_bins: Sequence[int] = (),
                    quantities: Sequence[str] = (),
                    check: Callable[[], None]) -> MultilabelSums:
    """The sums of every requested multi-label statistic from one pass over a batch.

    ``p``, ``s``, ``h`` (n, L) and ``w`` as shaped by
    :func:`annokit.metrics.states_ext.prepare_multilabel` (``check_values=False``);
    ``n_bins``: one set of per-label bin sums per entry; ``quantities`` from
    :data:`MULTILABEL_QUANTITIES` (they need ``s``). The pass checks every value;
    on a failure it calls ``check`` (the numpy checks, which raise the message naming
    the value).
    """
    return _multilabel_call(p, s, h, w, n_bins, quantities, np.empty((0, 0)), 0, check)


def multilabel_values(quantity: str, p: np.ndarray, s: np.ndarray,
                      check: Callable[[], None], *, eps: float = KL_EPS) -> np.ndarray:
    """Per item and label, shape ``(n, L)``, the values of one of :data:`MULTILABEL_QUANTITIES`
    (checked as :func:`multilabel_sums`; ``eps`` the clip of the cross-entropy's logs)."""
    out = np.empty(p.shape)
    _multilabel_call(p, s, None, None, (), (quantity,), out,
                     MULTILABEL_QUANTITIES.index(quantity), check, eps)
    return out
