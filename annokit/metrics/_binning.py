"""Bins and per-bin sufficient statistics of the binned calibration metrics.

Binning convention (documented once, used everywhere)
-----------------------------------------------------
Bins are left-closed ``[edges[b], edges[b+1])`` and the last bin is closed on
both sides, so a value of exactly 1 lands in the last bin and a value of exactly
0 in the first. The bin index of a value ``c`` is::

    clip(searchsorted(edges, c, side="right") - 1, 0, n_bins - 1)

which is the torchmetrics convention
(``torch.bucketize(c, edges, right=True) - 1`` clamped to the bin range) with
``edges = linspace(0, 1, n_bins + 1)``. Guo et al. (2017) used right-closed
bins ``(lo, hi]``; the two conventions differ only for values lying exactly on an
inner edge.

Weights
-------
Every sum is weighted: item ``i`` contributes ``w_i * x_i`` to its bin. Weights
are ``None`` (all 1), shape ``(n,)``, or shape ``(r, n)`` for ``r`` replicate
weightings at once; then every statistic gets a leading axis of length ``r``.
Integer weights give the sums of the repeated rows.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from annokit.core.checks import check_int
from annokit.errors import SchemaError

__all__ = [
    "BinStats",
    "bin_index",
    "bin_sums",
    "check_n_bins",
    "compute_classwise",
    "compute_top",
    "debiased_square",
    "gap_bounds",
    "quantile_edges",
    "reduce_bins",
    "stats_bounds",
    "top_label",
    "uniform_edges",
]


def check_n_bins(n_bins: Any) -> int:
    """``n_bins`` must be a positive integer (:class:`~annokit.errors.InvalidValueError`)."""
    return check_int("n_bins", n_bins, low=1)


def uniform_edges(n_bins: int) -> np.ndarray:
    """Equal-width edges ``linspace(0, 1, n_bins + 1)``."""
    return np.linspace(0.0, 1.0, n_bins + 1)


def _lerp(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """numpy's quantile interpolation ``a + (b - a) t`` (``b - (b - a)(1 - t)`` for t >= 1/2)."""
    diff = b - a
    return np.where(t >= 0.5, b - diff * (1 - t), a + diff * t)


def quantile_edges(values: np.ndarray, n_bins: int, weights: np.ndarray | None = None
                   ) -> np.ndarray:
    """Equal-mass edges: the ``b / n_bins`` weighted quantiles of ``values``.

    Parameters
    ----------
    values : ndarray of shape (n,)
    n_bins : int
    weights : None, ndarray of shape (n,) or (r, n)
        Non-negative item weights; ``(r, n)`` gives one set of edges per row.

    Returns
    -------
    ndarray of shape (n_bins + 1,) or (r, n_bins + 1)
        NaN where the total weight is 0.

    Notes
    -----
    The weighted quantile is numpy's ``method="linear"`` (Hyndman and Fan 1996,
    definition 7) on the sample in which item ``i`` is repeated ``w_i`` times:
    with ``W = sum_i w_i``, the quantile ``q`` sits at the virtual position
    ``h = (W - 1) q`` of the sorted repeated sample; the value at position ``m``
    is the value of the first sorted item whose cumulative weight exceeds
    ``m``, and positions between integers are interpolated linearly as numpy
    does. So integer weights give exactly ``np.quantile(np.repeat(values, w))``,
    and zero weights are items that are absent. Non-integer weights use the same
    formula. Values tied on an edge all fall in the bin that starts at that
    edge (ties are never split), so bins can be empty when many values are tied.

    References
    ----------
    Hyndman, Fan (1996). Sample Quantiles in Statistical Packages. The American
    Statistician 50(4), 361-365. DOI:10.1080/00031305.1996.10473566.
    """
    q = np.linspace(0.0, 1.0, n_bins + 1)
    if weights is None:
        return np.quantile(values, q)
    w2 = np.atleast_2d(weights)
    order = np.argsort(values, kind="stable")
    x = values[order]
    cum = np.cumsum(w2[:, order], axis=1)
    out = np.full((w2.shape[0], q.size), np.nan)
    for r in range(w2.shape[0]):
        c = cum[r]
        total = c[-1] if c.size else 0.0
        if not total > 0:
            continue
        pos = (total - 1) * q
        lo = np.floor(pos)
        # value at position m of the repeated sample: first item whose cumulative weight > m
        a = x[np.minimum(np.searchsorted(c, lo, side="right"), x.size - 1)]
        b = x[np.minimum(np.searchsorted(c, lo + 1, side="right"), x.size - 1)]
        live = x[c > np.concatenate(([0.0], c[:-1]))]   # the items of positive weight
        out[r] = np.where(pos >= total - 1, live[-1],
                          np.where(pos < 0, live[0], _lerp(a, b, pos - lo)))
    return out[0] if np.ndim(weights) == 1 else out


def bin_index(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin of each value: ``clip(searchsorted(edges, v, "right") - 1, 0, n_bins - 1)``."""
    idx = np.searchsorted(edges, values, side="right")
    idx -= 1  # in place: an array of n items is not copied twice
    return np.clip(idx, 0, len(edges) - 2, out=idx)


def top_label(probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Predicted class ``argmax_j p_ij`` (first column on ties) and confidence ``max_j p_ij``."""
    pred = probs.argmax(axis=1)
    return pred, probs[np.arange(probs.shape[0]), pred]


def bin_sums(idx: np.ndarray, size: int, weights: np.ndarray | None = None,
             values: np.ndarray | None = None, *, per_replicate: bool = False) -> np.ndarray:
    """Per-bin sums ``sum_{i in b} w_i x_i`` by ``np.bincount``.

    Parameters
    ----------
    idx : int ndarray of shape (..., n)
        Bin of each entry, in ``[0, size)``. With ``per_replicate=True`` its
        first axis is the replicate axis (the bins differ per replicate).
    size : int
        Number of bins.
    weights : None, ndarray of shape (n,) or (r, n)
        Item weights, over the last axis of ``idx``.
    values : None or ndarray broadcastable to ``idx``
        ``x``; None sums the weights (counts).
    per_replicate : bool, default False

    Returns
    -------
    ndarray of shape (size,), or (r, size) with 2-D weights; float64.
    Entries are summed in item order within each bin.
    """
    if weights is not None and weights.ndim == 2:
        r, n = weights.shape
        lead = idx if per_replicate else idx[None]
        w = weights.reshape((r,) + (1,) * (lead.ndim - 2) + (n,))
        x = w if values is None else w * values
        offsets = (np.arange(r) * size).reshape((r,) + (1,) * (lead.ndim - 1))
        flat, x = np.broadcast_arrays(lead + offsets, x)
        return np.bincount(flat.ravel(), weights=x.ravel(), minlength=r * size).reshape(r, size)
    if weights is None:
        x = values
    else:
        x = weights if values is None else weights * values
    if x is not None:
        x = np.broadcast_to(x, idx.shape).ravel()
    return np.bincount(idx.ravel(), weights=x, minlength=size).astype(np.float64, copy=False)


@dataclass
class BinStats:
    """Mergeable per-bin sums (the sufficient statistics of every binned metric).

    Every sum is weighted (see the module notes). Top-label arrays have shape
    ``(n_bins,)``, classwise arrays ``(n_labels, n_bins)``; with ``r``
    replicate weightings every array (and ``weight``) gets a leading axis of
    length ``r``. Fields are None when not computed (``hit`` without hard
    labels, ``soft`` without soft labels, ``cw_*`` unless classwise).

    Attributes
    ----------
    weight : float or ndarray of shape (r,)
        Total weight of the items.
    count : ndarray
        Weight per bin (the item count when unweighted).
    conf : ndarray
        Sum of the top-label confidence ``max_j p_ij``.
    hit : ndarray or None
        Sum of ``[argmax_j p_ij == hard_i]``.
    soft : ndarray or None
        Sum of ``soft_i[argmax_j p_ij]``.
    cw_count, cw_conf, cw_hit, cw_soft : ndarray or None
        Classwise: column ``k`` binned on ``p_ik``; weight, sum of ``p_ik``, of
        ``[hard_i == k]`` and of ``soft_ik``.
    """

    weight: Any
    count: np.ndarray
    conf: np.ndarray
    hit: np.ndarray | None = None
    soft: np.ndarray | None = None
    cw_count: np.ndarray | None = None
    cw_conf: np.ndarray | None = None
    cw_hit: np.ndarray | None = None
    cw_soft: np.ndarray | None = None

    def merge(self, other: BinStats) -> BinStats:
        """Element-wise sum of two sets of statistics over the same bins (a new object)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if (a is None) != (b is None):
                raise SchemaError(f"cannot merge bin statistics: {f.name} is present in one "
                                  "and missing in the other")
            out[f.name] = None if a is None else a + b
        return BinStats(**out)


def _divide(num: Any, den: Any) -> Any:
    """``num / den`` with NaN where ``den == 0`` (a float for 0-d input)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(np.asarray(den) > 0, np.asarray(num) / np.asarray(den), np.nan)
    return float(out) if out.ndim == 0 else out


def compute_top(stats: BinStats, *, soft: bool = False, reduce: str = "ece") -> Any:
    """ECE, SMECE or MCE from top-label sums; NaN when the total weight is 0.

    ``ECE = sum_b |conf_b - hit_b| / W`` (``= sum_b W_b/W |conf(B_b) - acc(B_b)|``,
    Guo et al. 2017, Eq. 3); SMECE swaps ``hit`` for ``soft`` (Leznik 2026,
    Eq. 5); MCE is ``max_b |conf_b / W_b - hit_b / W_b|`` over bins of positive
    weight (Naeini et al. 2015). A float, or shape ``(r,)`` with replicates.
    """
    target = stats.soft if soft else stats.hit
    if target is None:
        raise SchemaError("soft targets were not given" if soft else "labels were not given")
    return reduce_bins(stats.count, stats.conf, target, stats.weight, reduce=reduce)


def reduce_bins(count: np.ndarray, conf: np.ndarray, target: np.ndarray, weight: Any, *,
                reduce: str = "ece") -> Any:
    """ECE or MCE from per-bin sums (bins on the last axis): the one binning reduction.

    ``count`` the weight per bin, ``conf`` and ``target`` the summed confidence and
    target per bin, ``weight`` the total weight. ``"ece"``: ``sum_b |conf_b -
    target_b| / W`` (Guo et al. 2017, Eq. 3); ``"max"``: ``max_b |conf_b / W_b -
    target_b / W_b|`` over bins of positive weight (Naeini et al. 2015); ``"debiased"``:
    :func:`debiased_square` (Kumar et al. 2019). NaN without weight. Top-label, binary and
    per-label (multi-label) binned states all end here.
    """
    if reduce == "ece":
        return _divide(np.abs(conf - target).sum(axis=-1), weight)
    if reduce == "debiased":
        return debiased_square(count, conf, target, weight)
    nz = count > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        gaps = np.abs(conf / count - target / count)
    worst = np.where(nz, gaps, -np.inf).max(axis=-1)
    worst = np.where(nz.any(axis=-1), worst, np.nan)
    return float(worst) if np.ndim(worst) == 0 else worst


def compute_classwise(stats: BinStats, *, soft: bool = False) -> Any:
    """Classwise ECE (Nixon et al. 2019, SCE): ``1/K sum_k sum_b |cw_conf_kb - cw_hit_kb| / W``.

    SMECE classwise swaps ``cw_hit`` for ``cw_soft``. NaN when the total weight is 0.
    """
    target = stats.cw_soft if soft else stats.cw_hit
    if target is None or stats.cw_conf is None or stats.cw_count is None:
        raise SchemaError("soft targets were not given" if soft else "labels were not given")
    weight = np.asarray(stats.weight, dtype=np.float64)[..., None]
    out = np.mean(reduce_bins(stats.cw_count, stats.cw_conf, target, weight), axis=-1)
    return float(out) if np.ndim(out) == 0 else out


def debiased_square(count: np.ndarray, conf: np.ndarray, target: np.ndarray, weight: Any) -> Any:
    """Kumar et al.'s (2019) unbiased estimate of the squared L2 calibration error (bins last).

    With ``n_b`` the weight of bin ``b``, ``g_b = (conf_b - target_b) / n_b`` its mean gap and
    ``y_b = target_b / n_b`` its mean 0/1 target::

        sum_b n_b / W * (g_b ** 2 - y_b (1 - y_b) / (n_b - 1))      over bins with n_b >= 2

    ``y_b (1 - y_b) / (n_b - 1)`` is the unbiased estimate of the variance of the bin's mean
    target, so the sum is unbiased for ``sum_b P(b) (E[c | b] - E[y | b]) ** 2`` (the
    confidences are taken as fixed within a bin); it can be negative. Bins with less than
    two items contribute 0, as in uncertainty-calibration's ``unbiased_square_ce``. Its
    square root of ``max(0, .)`` is ``get_calibration_error(p=2, debias=True)``. The
    variance term assumes 0/1 targets (a hard label's hit), not soft ones.

    References
    ----------
    Kumar, Liang, Ma (2019). Verified Uncertainty Calibration. NeurIPS. arXiv:1909.10155
    (section 5, the debiased estimator).
    """
    ok = count >= 2
    n = np.where(ok, count, 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_target = target / n
        gap = (conf - target) / n
        per_bin = np.where(ok, gap * gap - mean_target * (1.0 - mean_target) / (n - 1.0), 0.0)
    return _divide((count * per_bin).sum(axis=-1), weight)


def gap_bounds(count: np.ndarray, conf: np.ndarray, target: np.ndarray, weight: Any, *,
               hard: bool) -> tuple[Any, Any]:
    """Two statistics that bound the population binned ECE ``sum_b P(b) |mu_b|`` (bins last).

    With ``mu_b`` the bin's gap ``E[c | b] - E[y | b]``, ``|sum_b P(b) mu_b| <= sum_b P(b) |mu_b|
    <= sqrt(sum_b P(b) mu_b ** 2)``. The lower statistic is the signed overall gap
    ``(sum_b conf_b - sum_b target_b) / W`` (a difference of means: unbiased); the upper one
    is ``sqrt(max(0, debiased_square(...)))`` with 0/1 targets (``hard``), and the plug-in
    ``sum_b |conf_b - target_b| / W`` with soft ones (biased upward: its expectation is at
    least the population value, bin by bin; the debiasing term assumes 0/1 targets).
    :func:`annokit.core.resample.bounds_interval` turns their bootstrap replicates into the
    interval of the binned metrics (registry ``interval="bounds"``).
    """
    lower = _divide(conf.sum(axis=-1) - target.sum(axis=-1), weight)
    if not hard:
        return lower, reduce_bins(count, conf, target, weight)
    sq = np.asarray(debiased_square(count, conf, target, weight), dtype=np.float64)
    root = np.where(np.isnan(sq), np.nan, np.sqrt(np.maximum(sq, 0.0)))
    return lower, (float(root) if root.ndim == 0 else root)


def stats_bounds(stats: BinStats, *, soft: bool = False, classwise: bool = False
                 ) -> tuple[Any, Any]:
    """:func:`gap_bounds` of top-label or classwise sums.

    Classwise, the upper statistic is the mean over classes of the per-class upper ones
    (the classwise ECE is the mean of per-class ECEs); the lower one is NaN: a mean of
    per-class |gaps| has no unbiased scalar statistic in these sums, so the interval's
    lower end is 0.
    """
    if classwise:
        target = stats.cw_soft if soft else stats.cw_hit
        if target is None or stats.cw_conf is None or stats.cw_count is None:
            raise SchemaError("soft targets were not given" if soft else "labels were not given")
        weight = np.asarray(stats.weight, dtype=np.float64)[..., None]
        _, upper = gap_bounds(stats.cw_count, stats.cw_conf, target, weight, hard=not soft)
        upper = np.mean(upper, axis=-1)
        out = np.full(np.shape(upper), np.nan), upper
    else:
        target = stats.soft if soft else stats.hit
        if target is None:
            raise SchemaError("soft targets were not given" if soft else "labels were not given")
        out = gap_bounds(stats.count, stats.conf, target, stats.weight, hard=not soft)
    return tuple(float(v) if np.ndim(v) == 0 else v for v in out)  # type: ignore[return-value]
