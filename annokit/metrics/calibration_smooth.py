"""Kernel calibration estimators on a grid: smooth ECE (relplot) and KDE-based ECE (Mix-n-Match).

Both smooth the top-label correctness over the confidence with a kernel instead of bins.
Their reference implementations already discretise the confidences onto an equidistant grid
by linear binning (each item's weight split between its two neighbouring nodes in proportion
to its distance to them) and convolve the grid with the kernel. Linear binning is a sum over
items, so the state here is that grid histogram: **mergeable in constant memory** (two or
four arrays of grid size, times ``r`` replicates; merging adds them) and exact under any
batching, on memory and on the Dask engine alike (its generic path merges the states).

- :class:`SmoothECEState` (``smooth_ece``): Błasiok & Nakkiran's smooth ECE with their
  bandwidth rule, as relplot's ``smECE`` computes it. relplot bins onto a grid whose size
  depends on the bandwidth (1001 nodes for every bandwidth >= 0.01, more below); the state
  keeps a 16001-node grid that contains the 1001-node one, so for bandwidths >= 0.01 the
  binning is relplot's exactly, and below it the coarse grid is binned from the fine one
  (a displacement of at most 1/16000 per item).
- :class:`KDEECEState` (``kde_ece``): Zhang et al.'s KDE-based ECE on their own grid (2^14
  nodes on [-0.6, 1.6], the data reflected about 0 and 1), with their bandwidth rule, whose
  spread is kept as three sums.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from annokit.metrics import kernels as _kernels
from annokit.metrics.calibration_estimators import CalibrationState, _add, _total
from annokit.metrics.spec import EMPTY, MetricSpec

__all__ = ["METRICS", "METRICS_AFTER", "KDEECEState", "SmoothECEState", "linear_bin"]


@numba.njit(cache=True, nogil=True, inline="always")
def _node(x: float, lo: float, scale: float, m: int) -> tuple[int, float]:  # pragma: no cover
    """Node ``j = clip(floor(pos), 0, m - 2)`` of ``pos = (x - lo) scale``, and ``f = pos - j``:
    node ``j`` gets ``1 - f`` of the item, node ``j + 1`` gets ``f``."""
    pos = (x - lo) * scale
    j = int(pos)
    if j > m - 2:
        j = m - 2
    elif j < 0:
        j = 0
    return j, pos - j


@numba.njit(cache=True, nogil=True, inline="always")
def _add_at(x: float, v: float, w: np.ndarray, i: int, lo: float, scale: float,
            out_w: np.ndarray, out_v: np.ndarray) -> None:  # pragma: no cover - numba
    """Item ``i`` at ``x`` (:func:`_node`), with weights ``w[:, i]`` and value ``v``."""
    j, f = _node(x, lo, scale, out_w.shape[1])
    for q in range(w.shape[0]):
        wq = w[q, i]
        out_w[q, j] += (1.0 - f) * wq
        out_w[q, j + 1] += f * wq
        out_v[q, j] += (1.0 - f) * wq * v
        out_v[q, j + 1] += f * wq * v


@numba.njit(cache=True, nogil=True, inline="always")
def _add_unit(x: float, v: float, lo: float, scale: float,
              out: np.ndarray) -> None:  # pragma: no cover - numba
    """An item of weight 1 at ``x`` (:func:`_node`) with value ``v``: ``out`` holds node ``j``'s
    weight at ``2 j`` and weighted value at ``2 j + 1`` (both nodes in one cache line)."""
    j, f = _node(x, lo, scale, out.size // 2)
    b = 2 * j
    out[b] += 1.0 - f
    out[b + 1] += (1.0 - f) * v
    out[b + 2] += f
    out[b + 3] += f * v


@numba.njit(cache=True, nogil=True)
def _linear_bin(x: np.ndarray, y: np.ndarray, w: np.ndarray, lo: float, scale: float,
                residual: bool, mirror: bool, out_w: np.ndarray,
                out_v: np.ndarray) -> None:  # pragma: no cover - numba
    """Linear binning of each ``x_i`` with weights ``w[:, i]`` (``w`` (q, n), ``out_*`` (q, m))
    and value ``x_i - y_i`` (``residual``) or ``y_i``; with ``mirror`` also of its
    reflection, ``-x_i`` below 0.5 and ``2 - x_i`` from 0.5."""
    for i in range(x.size):
        c = x[i]
        v = c - y[i] if residual else y[i]
        _add_at(c, v, w, i, lo, scale, out_w, out_v)
        if mirror:
            _add_at(-c if c < 0.5 else 2.0 - c, v, w, i, lo, scale, out_w, out_v)


@numba.njit(cache=True, nogil=True)
def _linear_bin_unit(x: np.ndarray, y: np.ndarray, lo: float, scale: float, residual: bool,
                     mirror: bool, out: np.ndarray,
                     moments: np.ndarray) -> None:  # pragma: no cover - numba
    """:func:`_linear_bin` with unit weights, in a loop of its own (no replicate loop in the
    way of the compiler), ``out`` as in :func:`_add_unit`; ``moments`` adds the sums of
    ``y``, ``y x`` and ``y x^2``."""
    s0 = s1 = s2 = 0.0
    for i in range(x.size):
        c, yi = x[i], y[i]
        v = c - yi if residual else yi
        _add_unit(c, v, lo, scale, out)
        if mirror:
            _add_unit(-c if c < 0.5 else 2.0 - c, v, lo, scale, out)
        t = yi * c
        s0 += yi
        s1 += t
        s2 += t * c
    moments[0] += s0
    moments[1] += s1
    moments[2] += s2


def linear_bin(x: np.ndarray, y: np.ndarray, w: np.ndarray | None, lo: float, hi: float,
               m: int, *, residual: bool = False, mirror: bool = False, moments: bool = False
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Linear binning of ``x`` onto ``m`` equidistant nodes on ``[lo, hi]``: per node the
    weights and the weighted values (``y``, or ``x - y`` with ``residual``; with ``mirror``
    each item is binned at its reflection about 0 or 1 too), shape (m,), or (r, m) with
    weights (r, n); with ``moments`` the weighted sums of ``y``, ``y x`` and ``y x^2``,
    shape (3,) or (r, 3) (else None). Chunks of rows run on threads; their sums are added
    in chunk order."""
    scale = (m - 1) / (hi - lo)
    x, y = np.ascontiguousarray(x, np.float64), np.ascontiguousarray(y, np.float64)
    sums = None
    if moments and w is not None:  # with unit weights the binning pass adds them up
        yx = y * x
        sums = np.stack([w @ y, w @ yx, w @ (yx * x)], axis=-1)
    if w is not None and w.ndim == 2:  # replicates: one pass, (r, m) sums
        out_w, out_v = np.zeros((w.shape[0], m)), np.zeros((w.shape[0], m))
        _linear_bin(x, y, np.ascontiguousarray(w), lo, scale, residual, mirror, out_w, out_v)
        return out_w, out_v, sums
    ww = None if w is None else np.ascontiguousarray(w)

    def part(a: int, b: int) -> tuple[np.ndarray, ...]:
        if ww is not None:
            out_w, out_v = np.zeros((1, m)), np.zeros((1, m))
            _linear_bin(x[a:b], y[a:b], ww[a:b][None], lo, scale, residual, mirror, out_w,
                        out_v)
            return out_w[0], out_v[0], np.zeros(3)
        out, mom = np.zeros(2 * m), np.zeros(3)
        _linear_bin_unit(x[a:b], y[a:b], lo, scale, residual, mirror, out, mom)
        return out[0::2], out[1::2], mom

    parts = _kernels._run_parts(part, x.size) or [(np.zeros(m), np.zeros(m), np.zeros(3))]
    grid_w, grid_v, total = (sum(p[i] for p in parts) for i in range(3))
    return (np.ascontiguousarray(grid_w), np.ascontiguousarray(grid_v),
            (total if w is None else sums) if moments else None)


class _GridState(CalibrationState):
    """Grid sums (any arrays) added batch by batch; merging adds them."""

    def __init__(self) -> None:
        super().__init__()
        self._grid: Any = None
        self._weight: Any = None

    def _absorb(self, part: tuple[tuple[np.ndarray, ...], Any]) -> None:
        arrays, weight = part
        self._grid = arrays if self._grid is None else tuple(
            a + b for a, b in zip(self._grid, arrays, strict=True))
        self._weight = _add(self._weight, np.asarray(weight, dtype=np.float64))

    def _merge(self, other: _GridState) -> None:
        if other._grid is not None:
            self._absorb((other._grid, other._weight))

    def _compute(self) -> Any:
        if np.ndim(self._weight) == 0:
            return self._value(*self._grid) if self._weight > 0 else float("nan")
        return np.array([self._value(*(a[r] for a in self._grid)) if self._weight[r] > 0
                         else np.nan for r in range(self._weight.size)])

    def _value(self, *arrays: np.ndarray) -> float:
        raise NotImplementedError


# --------------------------------------------------------------------------- smooth ECE

#: Intervals of the state's grid on [0, 1]: a multiple of relplot's 1000 (bandwidths >= 0.01).
_FINE = 16000


def _rebin(fine: np.ndarray, nodes: int) -> np.ndarray:
    """Linear binning of the fine grid's nodes (with their mass) onto ``nodes`` nodes on [0, 1];
    exact when ``nodes - 1`` divides the fine grid's intervals."""
    pos = np.arange(fine.size) * ((nodes - 1) / (fine.size - 1))
    j = np.minimum(pos.astype(np.int64), nodes - 2)
    f = pos - j
    return (np.bincount(j, fine * (1.0 - f), minlength=nodes)
            + np.bincount(j + 1, fine * f, minlength=nodes))


def _reflected_gaussian(fine: np.ndarray, sigma: float, t: np.ndarray) -> np.ndarray:
    """The grid convolved with a Gaussian of width ``sigma`` reflected at 0 and 1, read at ``t``
    by linear interpolation (relplot's ``ReflectedGaussianKernel.apply``)."""
    from scipy.signal import fftconvolve

    nodes = max(2000, round(20 / sigma)) // 2 + 1
    values = _rebin(fine, nodes)
    grid = np.linspace(0.0, 1.0, nodes)
    kernel = np.exp(-(grid - 0.5) ** 2 / (2 * sigma**2)) / (math.sqrt(2 * math.pi) * sigma)
    ext = np.concatenate([values[::-1][:-1], values, values[::-1][1:]])
    smooth = fftconvolve(ext, kernel, mode="valid")[nodes // 2: nodes // 2 + nodes]
    j = np.clip((t * (nodes - 1)).astype(np.int64), 0, nodes - 2)
    f = (t - j / (nodes - 1)) * (nodes - 1)
    return smooth[j] * (1 - f) + smooth[j + 1] * f


def _smooth_ece_at(weight: np.ndarray, residual: np.ndarray, sigma: float) -> float:
    """smECE at bandwidth ``sigma``: ``sum_t |r_sigma(t)| / sum_t d_sigma(t)`` over relplot's
    evaluation points, ``r_sigma`` and ``d_sigma`` the smoothed residual and density."""
    t = np.linspace(0.0, 1.0, max(round(10 / sigma), 200))
    return float(np.sum(np.abs(_reflected_gaussian(residual, sigma, t)))
                 / np.sum(_reflected_gaussian(weight, sigma, t)))


class SmoothECEState(_GridState):
    """Smooth ECE (smECE): the top-label residual kernel-smoothed over the confidence, at the
    bandwidth where the smooth ECE equals the bandwidth (Błasiok & Nakkiran 2023).

    Notes
    -----
    With ``r_i = c_i - y_i`` (confidence minus correctness against the hard label) and a
    Gaussian kernel of width ``sigma`` reflected at 0 and 1,
    ``smECE_sigma = integral |sum_i w_i r_i K(t, c_i)| dt / integral sum_i w_i K(t, c_i) dt``;
    ``smECE`` is ``smECE_sigma*`` at the fixed point ``sigma* = smECE_sigma*``, found as
    relplot's ``smECE`` finds it (``sigma = 1`` if ``smECE_1 > 1``, else ten halvings of
    [0, 1]; the largest ``sigma`` tried with ``smECE_sigma <= sigma``, and any ``sigma <
    0.001`` accepted). The integrals are relplot's: linear binning onto its grid, the
    reflected kernel sampled on it, read at ``max(200, 10 / sigma)`` points.

    Departure from relplot: relplot adds 1e-4 to the unnormalised density (a guard against
    division by zero), which makes its value depend slightly on the number of items
    (relative ``~1e-4 / n``); here the ratio of the two sums is taken directly, so the value
    depends on the weights only through their proportions.

    Constant memory: two arrays of 16001 grid nodes (times ``r``); see the module notes.

    Examples
    --------
    >>> s = SmoothECEState().update([[0.7, 0.3]] * 4, hard=[0, 0, 0, 1])
    >>> round(s.compute(), 6)
    0.05
    """

    def _options(self) -> dict[str, Any]:
        return {}

    def _part(self, p: np.ndarray, h: np.ndarray, w: np.ndarray | None, conf: np.ndarray,
              hit: np.ndarray) -> Any:
        return linear_bin(conf, hit, w, 0.0, 1.0, _FINE + 1, residual=True)[:2], \
            _total(conf.size, w)

    def _value(self, *arrays: np.ndarray) -> float:
        weight, residual = arrays

        def fixed(sigma: float) -> bool:  # relplot's check: the bandwidth is below smECE
            return sigma < 1e-3 or sigma < _smooth_ece_at(weight, residual, sigma)

        hi, lo = 1.0, 0.0
        if not fixed(hi):
            for _ in range(10):
                mid = (hi + lo) / 2
                if fixed(mid):
                    lo = mid
                else:
                    hi = mid
        return _smooth_ece_at(weight, residual, hi)


#: The metric this module registers (collected by :mod:`annokit.metrics.registry`), in output
#: order after :data:`METRICS_AFTER`; asked for by name or ``--metrics all``, not listed by
#: default.
METRICS = (
    MetricSpec("smooth_ece", "Smooth ECE: the top-label residual kernel-smoothed over the "
               "confidence, bandwidth at its fixed point (relplot smECE)", frozenset({"hard"}),
               True, "probability", "Błasiok, Nakkiran (2023). Smooth ECE: Principled "
               "Reliability Diagrams via Kernel Smoothing. arXiv:2309.12236; the relplot "
               "package", EMPTY, None, SmoothECEState, listed=frozenset()),
)
METRICS_AFTER = "ece_sweep"


# --------------------------------------------------------------------------- KDE ECE

#: Zhang et al.'s integration grid: 2^14 nodes on [-0.6, 1.6].
_KDE_LO, _KDE_HI, _KDE_NODES = -0.6, 1.6, 2**14


def _triweight(grid_step: float, bw: float) -> np.ndarray:
    """Triweight kernel of standard deviation ``bw`` (support ``3 bw``) sampled on the grid
    offsets within its support (KDEpy's ``FFTKDE``); a unit spike when ``bw`` is 0."""
    if not bw > 0:
        return np.array([1.0 / grid_step])
    half = int(min(math.floor(3 * bw / grid_step), _KDE_NODES))
    u = np.linspace(-grid_step * half, grid_step * half, 2 * half + 1) / (3 * bw)
    return np.where(u**2 < 1, (1 - u**2) ** 3, 0.0) * (35 / 32) / (3 * bw)


class KDEECEState(_GridState):
    """KDE-based ECE: the top-label accuracy as a ratio of kernel density estimates, its
    distance to the confidence integrated over the confidence density (Zhang et al. 2020).

    Notes
    -----
    Zhang et al.'s estimator (their ``ece_kde_binary`` for the top label): with ``c_i`` the
    top-label confidences and ``y_i`` the correctness against the hard label, the densities
    of all confidences, ``p(c)``, and of the correct ones, ``p_1(c)``, are triweight-kernel
    estimates with the data reflected about 0 and 1 (each ``c < 0.5`` mirrored to ``-c``,
    each other to ``2 - c``), set to 0 outside (0, 1), on 2^14 grid nodes over [-0.6, 1.6];
    the bandwidth is ``std(c_i : y_i = 1) (2 n)^(-1/5)`` (their rule; the spread of the
    correct predictions). The accuracy at ``c`` is ``min(1, acc p_1(c) / p(c))`` and
    ``KDE-ECE = integral |c - acc(c)| p(c) dc / integral p(c) dc`` over [0, 1] by the
    trapezoidal rule, the integrand 0 where both densities are below 1e-6. The densities are
    sums over items of the linearly binned grid (KDEpy's ``FFTKDE``, which their code calls),
    kept here as the state; the bandwidth's spread is kept as three sums.

    Departure from their code: where both densities are below 1e-6 it keeps the integrand's
    previous value instead of 0. At the bandwidths of their rule that adds a negligible
    amount (the kernel vanishes smoothly at the edge of its support), but at a bandwidth
    near the grid spacing it carries a large value over the empty part of [0, 1] and
    inflates the estimate without bound; it is left out here.

    Undefined (NaN) when no prediction is correct (their bandwidth has no spread to
    measure). When the correct predictions all share one confidence the bandwidth is 0 and
    the kernel is the grid's own spike (their code stops there): the estimate then has
    the grid's resolution, 1.3e-4.

    Constant memory: two arrays of 2^14 nodes and four sums (times ``r``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1.0, 2000)
    >>> probs = np.stack([conf, 1 - conf], axis=1)
    >>> hard = (rng.random(2000) > conf).astype(int)   # correct with probability conf
    >>> round(KDEECEState().update(probs, hard=hard).compute(), 2)
    0.02
    """

    def _options(self) -> dict[str, Any]:
        return {}

    def _part(self, p: np.ndarray, h: np.ndarray, w: np.ndarray | None, conf: np.ndarray,
              hit: np.ndarray) -> Any:
        # the grids, and the sums of hit, hit x conf and hit x conf^2 (the bandwidth's spread)
        grid_w, grid_hit, moments = linear_bin(conf, hit, w, _KDE_LO, _KDE_HI, _KDE_NODES,
                                               mirror=True, moments=True)
        return (grid_w, grid_hit, moments), _total(conf.size, w)

    def _compute(self) -> Any:
        # the total weight enters the bandwidth rule: carried with each replicate's arrays
        if np.ndim(self._weight) == 0:
            grid = (*self._grid, np.asarray(self._weight))
            return self._value(*grid) if self._weight > 0 else float("nan")
        return np.array([self._value(*(a[r] for a in self._grid), self._weight[r])
                         if self._weight[r] > 0 else np.nan for r in range(self._weight.size)])

    def _value(self, *arrays: np.ndarray) -> float:
        all_w, hit_w, moments, weight = arrays
        n_hit = moments[0]
        if not n_hit > 0:
            return float("nan")
        mean = moments[1] / n_hit
        spread = math.sqrt(max(moments[2] / n_hit - mean**2, 0.0))
        bw = spread * (2 * float(weight)) ** -0.2
        from scipy.signal import convolve

        x = np.linspace(_KDE_LO, _KDE_HI, _KDE_NODES)
        kernel = _triweight((_KDE_HI - _KDE_LO) / (_KDE_NODES - 1), bw)
        inside = (x > 0) & (x < 1)
        dens = np.where(inside, convolve(all_w, kernel, mode="same"), 0.0) / float(weight)
        dens_hit = np.where(inside, convolve(hit_w, kernel, mode="same"), 0.0) / n_hit
        ok = np.maximum(dens, dens_hit) > 1e-6
        with np.errstate(divide="ignore", invalid="ignore"):
            acc = np.minimum(n_hit / float(weight) * dens_hit / dens, 1.0)
            value = np.where(ok & ~np.isnan(acc), np.abs(x - acc) * dens, 0.0)
        keep = (x >= 0) & (x <= 1)
        return float(np.trapezoid(value[keep], x[keep]) / np.trapezoid(dens[keep], x[keep]))

