"""The Dirichlet-multinomial terms of the population prior, compiled (numba).

For count rows ``x`` and Dirichlet parameters ``kappa_c m_i,node`` (:class:`annokit.metrics.
population.PopulationPrior`), the log likelihood without the multinomial coefficient,
``log B(alpha + x) - log B(alpha)`` (Minka 2000, eq. 52), and its derivative in each
``alpha_j``, ``psi(x_j + alpha_j) - psi(alpha_j) - psi(n + A) + psi(A)`` (eq. 53). Small whole
counts use the rising factorials: ``log Gamma(a + x) - log Gamma(a) =
log prod_(t < x) (a + t)`` and ``psi(a + x) - psi(a) = sum_(t < x) 1 / (a + t)``; larger counts
use Stirling's series (:func:`_lgamma_digamma`).
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["drawn_alphas", "responsibilities", "row_terms"]

_SUMS = 12  # counts up to this use the rising-factorial sums


@numba.njit(cache=True, nogil=True, inline="always")
def _lgamma_digamma(a: float) -> tuple[float, float]:  # pragma: no cover - numba
    """``(log Gamma(a), psi(a))`` for ``a > 0`` with one logarithm of ``a``: the recurrences
    up to 10 (one logarithm of the product), then Stirling's series for both (the next terms,
    ``691 / (360360 a^11)`` and ``691 / (32760 a^12)``, are below 1e-13 from 10 on)."""
    lg_shift, dg_shift = 0.0, 0.0
    if a < 10.0:
        prod = 1.0
        while a < 10.0:
            prod *= a
            dg_shift += 1.0 / a
            a += 1.0
        lg_shift = math.log(prod)
    la, inv = math.log(a), 1.0 / a
    inv2 = inv * inv
    lg = (a - 0.5) * la - a + 0.91893853320467274 + inv * (1.0 / 12 - inv2 * (
        1.0 / 360 - inv2 * (1.0 / 1260 - inv2 * (1.0 / 1680 - inv2 / 1188))))
    dg = la - 0.5 * inv - inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (
        1.0 / 252 - inv2 * (1.0 / 240 - inv2 / 132))))
    return lg - lg_shift, dg - dg_shift


@numba.njit(cache=True, nogil=True, inline="always")
def _rise(a: float, x: float) -> tuple[float, float]:  # pragma: no cover - numba
    """``(log Gamma(a + x) - log Gamma(a), psi(a + x) - psi(a))``."""
    if x <= _SUMS and x == math.floor(x):
        rising, dg = 1.0, 0.0  # one log of the product: a < e^9 + 1 and x <= 12 cannot overflow
        for t in range(int(x)):
            rising *= a + t
            dg += 1.0 / (a + t)
        return math.log(rising), dg
    lg_x, dg_x = _lgamma_digamma(a + x)
    lg_0, dg_0 = _lgamma_digamma(a)
    return lg_x - lg_0, dg_x - dg_0


@numba.njit(cache=True, nogil=True, inline="always")
def _node_means(logq: np.ndarray, slope: float, offset: np.ndarray, spread: float,
                nodes: np.ndarray, m: np.ndarray) -> None:  # pragma: no cover - numba
    """``m[node] = softmax(slope log q + offset + spread z_node)`` for one row."""
    for mm in range(nodes.shape[0]):
        top = -np.inf
        for j in range(m.shape[1]):
            m[mm, j] = slope * logq[j] + offset[j] + spread * nodes[mm, j]
            top = max(top, m[mm, j])
        s = 0.0
        for j in range(m.shape[1]):
            m[mm, j] = math.exp(m[mm, j] - top)
            s += m[mm, j]
        for j in range(m.shape[1]):
            m[mm, j] /= s


@numba.njit(cache=True, nogil=True, inline="always")
def _through_softmax(resp: np.ndarray, g: np.ndarray, m: np.ndarray, kappa: np.ndarray,
                     logq: np.ndarray, spread: float, nodes: np.ndarray, h: np.ndarray,
                     out: np.ndarray) -> None:  # pragma: no cover - numba
    """Add to ``out`` the gradient in ``(slope, offset[1:], log spread)``: the derivative in
    each mean ``m`` (responsibility-weighted, times ``kappa``) through the softmax."""
    k = m.shape[1]
    for mm in range(nodes.shape[0]):
        dot = 0.0
        for j in range(k):
            h[j] = 0.0
            for c in range(kappa.size):
                h[j] += resp[c, mm] * g[c, mm, j] * kappa[c]
            dot += m[mm, j] * h[j]
        for j in range(k):
            du = m[mm, j] * (h[j] - dot)
            out[0] += du * logq[j]
            if j > 0:
                out[j] += du
            out[k] += du * spread * nodes[mm, j]


@numba.njit(cache=True, nogil=True)
def _rows(x: np.ndarray, logq: np.ndarray, slope: float, offset: np.ndarray, spread: float,
          nodes: np.ndarray, kappa: np.ndarray, logw: np.ndarray, tiny: float, density: bool,
          with_grad: bool, values: np.ndarray, grads: np.ndarray,
          resp_out: np.ndarray) -> None:  # pragma: no cover - numba
    """Per row: the log marginal likelihood of counts ``x`` (or, with ``density``, the log
    prior density of probability rows ``x``) under the mixture over components and nodes, and
    its gradient in ``(slope, offset[1:], log spread, log kappa, weight logits[1:])``.

    Per row: the Dirichlet means at the nodes (a softmax), each (component, node)'s log
    likelihood and its derivative in the Dirichlet parameters (Minka 2000, eq. 53; for a
    density, ``log p_j - psi(alpha_j) + psi(A)``), the responsibilities, then the chain rule
    through ``kappa m`` and the softmax."""
    n, k = x.shape
    n_nodes, n_comp = nodes.shape[0], kappa.size
    m = np.empty((n_nodes, k))
    ll = np.empty((n_comp, n_nodes))
    g = np.empty((n_comp, n_nodes, k))
    h = np.empty(k)
    weights = np.exp(logw) * n_nodes  # the components' weights
    for i in range(n):
        _node_means(logq[i], slope, offset, spread, nodes, m)
        total = 0.0
        for j in range(k):
            total += x[i, j]
        best = -np.inf
        for c in range(n_comp):
            big_a = kappa[c] + k * tiny
            if density:
                lg_all, dg_all = _lgamma_digamma(big_a)
                lg_all, dg_all = -lg_all, -dg_all
            else:
                lg_all, dg_all = _rise(big_a, total)
            for mm in range(n_nodes):
                acc = logw[c] - lg_all
                for j in range(k):
                    a = kappa[c] * m[mm, j] + tiny
                    if density:
                        lp = math.log(max(x[i, j], 1e-300))
                        lg_a, dg_a = _lgamma_digamma(a)
                        lg, dg = (a - 1.0) * lp - lg_a, lp - dg_a
                    else:
                        lg, dg = _rise(a, x[i, j])
                    acc += lg
                    g[c, mm, j] = dg - dg_all
                ll[c, mm] = acc
                best = max(best, acc)
        z = 0.0
        for c in range(n_comp):
            for mm in range(n_nodes):
                ll[c, mm] = math.exp(ll[c, mm] - best)
                z += ll[c, mm]
        values[i] = best + math.log(z)
        if not with_grad:  # the responsibilities only
            for c in range(n_comp):
                for mm in range(n_nodes):
                    resp_out[i, c, mm] = ll[c, mm] / z
            continue
        grads[i, :] = 0.0
        for c in range(n_comp):
            rc = 0.0
            for mm in range(n_nodes):
                ll[c, mm] /= z  # now the responsibility
                rc += ll[c, mm]
                for j in range(k):
                    grads[i, k + 1 + c] += ll[c, mm] * g[c, mm, j] * kappa[c] * m[mm, j]
            if c > 0:
                grads[i, k + n_comp + c] += rc - weights[c]
        _through_softmax(ll, g, m, kappa, logq[i], spread, nodes, h, grads[i])


def row_terms(rows: np.ndarray, logq: np.ndarray, slope: float, offset: np.ndarray,
              spread: float, nodes: np.ndarray, kappa: np.ndarray, weights: np.ndarray,
              tiny: float, *, density: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Each row's log marginal likelihood (count rows) or log prior density (``density``:
    probability rows) under the prior with these parameters, shape ``(n,)`` (the multinomial
    coefficients left out), and its gradient in ``(slope, offset[1:], log spread, log kappa,
    weight logits[1:])``, shape ``(n, n_params)``."""
    values, grads, _ = _call(rows, logq, slope, offset, spread, nodes, kappa, weights, tiny,
                             density, True)
    return values, grads


def responsibilities(counts: np.ndarray, logq: np.ndarray, slope: float, offset: np.ndarray,
                     spread: float, nodes: np.ndarray, kappa: np.ndarray, weights: np.ndarray,
                     tiny: float) -> np.ndarray:
    """Each count row's posterior probability of every (component, node), shape
    ``(n, n_components, n_nodes)``."""
    return _call(counts, logq, slope, offset, spread, nodes, kappa, weights, tiny, False,
                 False)[2]


def _call(rows: np.ndarray, logq: np.ndarray, slope: float, offset: np.ndarray, spread: float,
          nodes: np.ndarray, kappa: np.ndarray, weights: np.ndarray, tiny: float,
          density: bool, with_grad: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n, k = rows.shape
    c, m = kappa.size, nodes.shape[0]
    values = np.empty(n)
    grads = np.empty((n, k + 2 * c) if with_grad else (1, k + 2 * c))
    resp = np.empty((1, 1, 1) if with_grad else (n, c, m))
    _rows(np.ascontiguousarray(rows, dtype=np.float64),
          np.ascontiguousarray(logq, dtype=np.float64), float(slope),
          np.ascontiguousarray(offset, dtype=np.float64), float(spread),
          np.ascontiguousarray(nodes, dtype=np.float64),
          np.ascontiguousarray(kappa, dtype=np.float64),
          np.log(weights) - np.log(nodes.shape[0]), float(tiny), density, with_grad, values,
          grads, resp)
    return values, grads, resp


@numba.njit(cache=True, nogil=True)
def _drawn(resp: np.ndarray, u: np.ndarray, x: np.ndarray, logq: np.ndarray, slope: float,
           offset: np.ndarray, spread: float, nodes: np.ndarray, kappa: np.ndarray,
           tiny: float, out: np.ndarray) -> None:  # pragma: no cover - numba
    """For each row and draw: the (component, node) whose cumulative responsibility first
    reaches ``u`` (inverse-CDF sampling), and its posterior Dirichlet parameters."""
    n, draws = u.shape
    n_nodes, k = nodes.shape[0], x.shape[1]
    m = np.empty((1, k))
    for i in range(n):
        for s in range(draws):
            pick, cum = resp.shape[1] - 1, 0.0
            for r in range(resp.shape[1]):
                cum += resp[i, r]
                if u[i, s] <= cum:
                    pick = r
                    break
            c, node = pick // n_nodes, pick % n_nodes
            _node_means(logq[i], slope, offset, spread, nodes[node:node + 1], m)
            for j in range(k):
                out[i, s, j] = kappa[c] * m[0, j] + tiny + x[i, j]


def drawn_alphas(resp: np.ndarray, u: np.ndarray, x: np.ndarray, logq: np.ndarray,
                 slope: float, offset: np.ndarray, spread: float, nodes: np.ndarray,
                 kappa: np.ndarray, tiny: float) -> np.ndarray:
    """Posterior Dirichlet parameters ``kappa_c m_node + tiny + x`` of one (component, node)
    per row and draw, drawn with probabilities ``resp`` (shape ``(n, n_components * n_nodes)``,
    components major) by the uniforms ``u`` (``(n, draws)``); shape ``(n, draws, k)``."""
    out = np.empty(u.shape + (x.shape[1],))
    _drawn(np.ascontiguousarray(resp, dtype=np.float64), np.ascontiguousarray(u),
           np.ascontiguousarray(x, dtype=np.float64), np.ascontiguousarray(logq), float(slope),
           np.ascontiguousarray(offset, dtype=np.float64), float(spread),
           np.ascontiguousarray(nodes), np.ascontiguousarray(kappa, dtype=np.float64),
           float(tiny), out)
    return out
