"""Plain numpy oracle of the sums API (:func:`item_values`, :func:`batch_sums`).

Written from the definitions in :mod:`annokit.metrics.sums`, one
quantity and one bin at a time, for clarity rather than speed: the tests compare
the numba kernels of :mod:`annokit.metrics.kernels` against it. Input checks are
the library's own (:func:`annokit.metrics.sums.prepare` and
:func:`~annokit.metrics.sums.check_values`); nothing else of the library is used,
so a mistake in the kernels' maths cannot hide here.
"""

from __future__ import annotations

import numpy as np

from annokit.errors import SchemaError
from annokit.metrics import sums
from annokit.metrics._binning import BinStats
from annokit.metrics.sums import ITEM_QUANTITIES, NAMES, BatchSums

EPS = 1e-15


def _xlogx(x: np.ndarray) -> np.ndarray:
    """``x log x`` with ``0 log 0 = 0``."""
    return np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0)


def _entropy(x: np.ndarray) -> np.ndarray:
    return -_xlogx(x).sum(axis=1)


def _one_hot(h: np.ndarray, k: int) -> np.ndarray:
    return (h[:, None] == np.arange(k)[None, :]).astype(np.float64)


def _rank(p: np.ndarray, s: np.ndarray, tie_aware: bool) -> np.ndarray:
    order = np.argsort(p, axis=1, kind="stable")
    if tie_aware:  # soft read in p's stable ascending order never decreases
        ok = (np.diff(np.take_along_axis(s, order, axis=1), axis=1) >= 0).all(axis=1)
    else:  # the two stable ascending orders are the same permutation
        ok = (order == np.argsort(s, axis=1, kind="stable")).all(axis=1)
    return ok.astype(np.float64)


def _jsd(s: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``scipy.spatial.distance.jensenshannon(s, p)`` (natural log), without its cancellation.

    With ``a = s / sum s``, ``b = p / sum p``, ``m = (a + b) / 2`` and
    ``d = (a - b) / (a + b)``: ``a log(a / m) + b log(b / m) = m g(d)``,
    ``g(d) = (1 + d) log(1 + d) + (1 - d) log(1 - d)``, and the distance is
    ``sqrt(sum_j m_j g(d_j) / 2)``. scipy evaluates the left side in float64,
    which cancels when the rows nearly coincide (its values are off by up to
    ~1e-11 there); here ``g`` is evaluated in long double, from its series
    ``sum_n d^2n / (n (2n - 1))`` where ``|d| < 1e-3``.
    """
    a = s.astype(np.longdouble)
    b = p.astype(np.longdouble)
    a /= a.sum(axis=1, keepdims=True)
    b /= b.sum(axis=1, keepdims=True)
    m = (a + b) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.where(m > 0, (a - b) / (a + b), 0)
        direct = (np.where(d > -1, (1 + d) * np.log1p(d), 0)
                  + np.where(d < 1, (1 - d) * np.log1p(-d), 0))
    d2 = d * d
    series = sum(d2 ** n / (n * (2 * n - 1)) for n in range(1, 7))
    g = np.where(np.abs(d) < 1e-3, series, direct)
    return np.sqrt((m * g).sum(axis=1) / 2).astype(np.float64)


def _kl(s: np.ndarray, p: np.ndarray) -> np.ndarray:
    ratio = np.where(s > 0, s, 1.0) / np.maximum(p, EPS)
    return np.where(s > 0, s * np.log(ratio), 0.0).sum(axis=1)


def _nll(s: np.ndarray, p: np.ndarray) -> np.ndarray:
    return -np.where(s > 0, s * np.log(np.maximum(p, EPS)), 0.0).sum(axis=1)


def _column(q: str, p: np.ndarray, s: np.ndarray | None, h: np.ndarray | None) -> np.ndarray:
    n, k = p.shape
    if q == "accuracy":
        return (p.argmax(axis=1) == h).astype(np.float64)
    if q == "ent_ce_signed":
        return _entropy(p) - _entropy(s)
    if q == "ent_ce":
        return np.abs(_entropy(p) - _entropy(s))
    if q == "dist_ce":
        return 0.5 * np.abs(p - s).sum(axis=1)
    if q == "jsd":
        return _jsd(s, p)
    if q == "kl":
        return _kl(s, p)
    if q == "brier":
        return ((p - _one_hot(h, k)) ** 2).sum(axis=1)
    if q == "brier_soft":
        return ((p - s) ** 2).sum(axis=1)
    if q == "nll_majority":
        return -np.log(np.maximum(p[np.arange(n), h], EPS))
    if q == "nll":
        return _nll(s, p)
    if q == "rank_cs":
        return _rank(p, s, tie_aware=False)
    if q == "rank_cs_tie_aware":
        return _rank(p, s, tie_aware=True)
    raise AssertionError(q)


def _prepare(probs, soft, hard, weights, quantities, names):
    p, s, h, w = sums.prepare(probs, soft, hard, weights, names=names)
    sums.check_values(p, s, h, w, names=names)
    quantities = tuple(quantities)
    for q in quantities:
        need = sums.quantity_needs(q)
        if (s if need == "soft" else h) is None:
            raise SchemaError(f"{q} needs {need} labels; got {need}=None")
    return p, s, h, w, quantities


def item_values(probs, soft, hard, quantities=ITEM_QUANTITIES, *, names=NAMES) -> np.ndarray:
    """Per-item values, shape (n, len(quantities)), one definition per column."""
    p, s, h, _, quantities = _prepare(probs, soft, hard, None, quantities, names)
    out = np.empty((p.shape[0], len(quantities)))
    for c, q in enumerate(quantities):
        out[:, c] = _column(q, p, s, h)
    return out


def bin_of(values: np.ndarray, n_bins: int) -> np.ndarray:
    """``clip(searchsorted(linspace(0, 1, n_bins + 1), c, "right") - 1, 0, n_bins - 1)``."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return np.clip(np.searchsorted(edges, values, side="right") - 1, 0, n_bins - 1)


def batch_sums(probs, soft, hard, weights, *, quantities=(), n_bins=None, classwise=False,
               names=NAMES) -> BatchSums:
    """Weighted sums of the quantities and per-bin sums, replicate by replicate, bin by bin."""
    p, s, h, w, quantities = _prepare(probs, soft, hard, weights, quantities, names)
    n, k = p.shape
    one = w is None or w.ndim == 1
    W = np.ones((1, n)) if w is None else w.reshape(-1, n)
    r = W.shape[0]
    vals = item_values(p, s, h, quantities, names=names)
    items = np.array([[np.sum(W[j] * vals[:, c]) for c in range(len(quantities))]
                      for j in range(r)]).reshape(r, len(quantities))
    total = W.sum(axis=1)
    weight = float(n) if w is None else (float(total[0]) if one else total)
    bins = None
    if n_bins is not None:
        pred = p.argmax(axis=1)
        conf = p[np.arange(n), pred]
        b_top = bin_of(conf, n_bins)

        def per_bin(b_of, x):
            out = np.zeros((r, n_bins))
            for j in range(r):
                for b in range(n_bins):
                    inside = b_of == b
                    out[j, b] = np.sum(W[j, inside] * x[inside])
            return out[0] if one else out

        bins = BinStats(weight, per_bin(b_top, np.ones(n)), per_bin(b_top, conf))
        if h is not None:
            bins.hit = per_bin(b_top, (pred == h).astype(np.float64))
        if s is not None:
            bins.soft = per_bin(b_top, s[np.arange(n), pred])
        if classwise:
            def classes(x_of):
                return np.stack([per_bin(bin_of(p[:, c], n_bins), x_of(c)) for c in range(k)],
                                axis=-2)

            bins.cw_count = classes(lambda c: np.ones(n))
            bins.cw_conf = classes(lambda c: p[:, c])
            if h is not None:
                bins.cw_hit = classes(lambda c: (h == c).astype(np.float64))
            if s is not None:
                bins.cw_soft = classes(lambda c: s[:, c])
    return BatchSums(weight, items[0] if one else items, quantities, bins)


# --------------------------------------------------------------------------- order-aware
# The definitions of annokit.metrics.ordinal's table, in numpy (cumulative sums, one-hot),
# for the kernels of annokit.metrics.kernels_ordinal.

def ordinal_values(quantity, p, s, h, values=None):
    """Per-item values of an order-aware quantity (emd, l1, ce_clip_shift, mean_gap,
    cum_sq_hard, cum_sq_soft)."""
    p = np.asarray(p, dtype=float)
    k = p.shape[1]
    v = np.arange(k, dtype=float) if values is None else np.asarray(values, dtype=float)
    if quantity == "emd":
        return np.abs(np.cumsum(p - s, axis=1)[:, :-1]) @ np.diff(v)
    if quantity == "l1":
        return np.abs(p - s).sum(axis=1)
    if quantity == "ce_clip_shift":
        return -(s * np.log(np.clip(p, 1e-12, 1 - 1e-12) + 1e-9)).sum(axis=1)
    if quantity == "mean_gap":
        return np.abs((p - s) @ v)
    target = _one_hot(np.asarray(h), k) if quantity == "cum_sq_hard" else s
    return (np.cumsum(p - target, axis=1)[:, :-1] ** 2).sum(axis=1)
