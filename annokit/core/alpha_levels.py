"""Krippendorff's alpha at the ordinal, interval and ratio levels: the sums behind it.

:func:`annokit.core.agreement.krippendorff_alpha` turns its input into sparse
item x category counts of the pairable items and the category values
(:func:`counts_parts`, :func:`ratings_parts`), then into a function of bootstrap
item weights (:func:`alpha_statistic`) that
:mod:`annokit.core.resample` evaluates a chunk of replicates at a time.
The formulas are in ``krippendorff_alpha``'s Notes (Krippendorff 2011).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from annokit.core.checks import check_counts
from annokit.core.labels import LabelSet
from annokit.core.ratings import Ratings
from annokit.core.resample import as_item_keys
from annokit.core.scales import NUMERIC_SCALES, difference, ordinal_positions
from annokit.errors import DegenerateInputWarning, InvalidValueError, SchemaError

__all__ = ["alpha_statistic", "counts_parts", "pairable", "ratings_parts"]


def pairable(counts: Any, keys: Any, name: str, *, stacklevel: int = 3) -> tuple[np.ndarray, Any]:
    """Counts (float64) and keys of the items with two or more votes (warning about the rest)."""
    arr = check_counts(counts, allow_empty_rows=True)
    if keys is not None:
        keys = as_item_keys(keys, arr.shape[0], name="counts")
    m = arr.sum(axis=1)
    keep = m >= 2
    n_single = int((~keep).sum())
    if n_single:
        warnings.warn(f"{name}: {n_single} item(s) with fewer than two votes cannot be paired and "
                      "were left out", DegenerateInputWarning, stacklevel=stacklevel)
    if not keep.any():
        raise SchemaError(f"{name} needs at least one item with two or more votes")
    return arr[keep].astype(np.float64), (None if keys is None else keys[keep])


def counts_parts(counts: Any, keys: Any, level: str, values: Any) -> tuple[tuple, Any]:
    """(sparse pairable counts, category values) of a count matrix."""
    from scipy import sparse

    arr, keys = pairable(counts, keys, "krippendorff_alpha", stacklevel=4)
    k = arr.shape[1]
    if isinstance(values, LabelSet):
        if len(values) != k:
            raise SchemaError(f"krippendorff_alpha: {len(values)} labels for {k} count columns")
        values = values.values
    if values is None:
        if level in NUMERIC_SCALES:
            raise InvalidValueError(f"krippendorff_alpha: the {level} level needs the number of "
                                    "each column (values=[...] or a numeric LabelSet)")
        v = np.arange(k, dtype=np.float64)
    else:
        v = np.asarray(values, dtype=np.float64).reshape(-1)
        if v.shape != (k,):
            raise SchemaError(f"krippendorff_alpha: values must hold one number per count column "
                              f"({k}); got shape {np.shape(values)}")
        if not np.isfinite(v).all():
            raise InvalidValueError("krippendorff_alpha: values must be finite numbers")
    if level == "ratio" and (v < 0).any():
        raise InvalidValueError("krippendorff_alpha: ratio values must be >= 0; got "
                                f"{v[v < 0][0]:g} (use level='interval')")
    return (sparse.csr_matrix(arr), v), keys


def ratings_parts(ratings: Ratings, keys: Any) -> tuple[tuple, Any]:
    """(sparse item x distinct-value counts of the pairable items, distinct values)."""
    from scipy import sparse

    keys = as_item_keys(keys, ratings.n_items, name="ratings")
    m = ratings.ratings_per_item()
    keep = m >= 2
    n_single = int((~keep).sum())
    if n_single:
        warnings.warn(f"krippendorff_alpha: {n_single} item(s) with fewer than two ratings cannot "
                      "be paired and were left out", DegenerateInputWarning, stacklevel=3)
    if not keep.any():
        raise SchemaError("krippendorff_alpha needs at least one item with two or more ratings")
    distinct, codes = ratings.distinct_values()
    rows = np.cumsum(keep) - 1
    sel = keep[ratings.item_index]
    c = sparse.csr_matrix((np.ones(int(sel.sum())), (rows[ratings.item_index[sel]], codes[sel])),
                          shape=(int(keep.sum()), distinct.size))
    c.sum_duplicates()
    return (c, distinct), keys[keep]


def alpha_statistic(level: str, c: Any, v: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """``f(weights (r, n_items)) -> (r,)`` alpha values for sparse counts ``c``, values ``v``."""
    m = np.asarray(c.sum(axis=1)).ravel()
    inv = 1.0 / (m - 1)

    def totals(w: np.ndarray) -> np.ndarray:
        return np.asarray((c.T @ w.T).T)

    def finish(t: np.ndarray, observed: np.ndarray, expected: np.ndarray) -> np.ndarray:
        n = t.sum(axis=1)
        varied = ((t > 0).sum(axis=1) >= 2) & (expected > 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(varied, 1.0 - (n - 1) * observed / expected, np.nan)

    def spread(t: np.ndarray, x: np.ndarray) -> np.ndarray:
        # sum_{c,k} t_c t_k (x_c - x_k)^2 = 2 n sum_c t_c (x_c - mean)^2, row by row
        n = t.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = (t * x).sum(axis=1, keepdims=True) / n
        return 2 * n[:, 0] * (t * (x - mean) ** 2).sum(axis=1)

    if level == "interval":
        x = v - v.mean()
        s1, s2 = c @ x, c @ x**2
        q = 2 * (s2 - s1**2 / m) * m * inv
        return lambda w: finish(totals(w), w @ q, spread(totals(w), x[None, :]))
    if level == "ratio":
        q = _within_pairs(c, lambda a, b: difference("ratio", v[a], v[b])) * inv

        def ratio(w: np.ndarray) -> np.ndarray:
            t = totals(w)
            return finish(t, w @ q, _quadratic_form(t, v))
        return ratio
    if level == "ordinal":
        def ordinal(w: np.ndarray) -> np.ndarray:
            t = totals(w)
            r = ordinal_positions(t) - t.sum(axis=1, keepdims=True) / 2
            p, p2 = c @ r.T, c @ (r**2).T  # (n_items, replicates)
            per_item = 2 * (m[:, None] * p2 - p**2) * inv[:, None]
            return finish(t, (w * per_item.T).sum(axis=1), spread(t, r))
        return ordinal
    # nominal (numeric ratings read as unordered categories)
    q = (m**2 - np.asarray(c.multiply(c).sum(axis=1)).ravel()) * inv

    def nominal(w: np.ndarray) -> np.ndarray:
        t = totals(w)
        return finish(t, w @ q, t.sum(axis=1) ** 2 - (t**2).sum(axis=1))
    return nominal


def _within_pairs(c: Any, delta: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """Per row of sparse counts ``c``: :math:`\\sum_{a,b} n_a n_b \\delta(a, b)` over its cells."""
    c = c.tocsr()
    length = np.diff(c.indptr)
    n_pairs = length**2
    rows = np.repeat(np.arange(len(length)), n_pairs)
    k = np.arange(int(n_pairs.sum())) - np.repeat(np.cumsum(n_pairs) - n_pairs, n_pairs)
    a = c.indptr[rows] + k // length[rows]
    b = c.indptr[rows] + k % length[rows]
    d = c.data[a] * c.data[b] * delta(c.indices[a], c.indices[b])
    return np.bincount(rows, d, minlength=len(length))


def _quadratic_form(t: np.ndarray, v: np.ndarray, *, budget: int = 4_000_000) -> np.ndarray:
    """:math:`\\sum_{c,k} t_c t_k \\delta^2_{ratio}(v_c, v_k)` per row of ``t`` (column blocks)."""
    step = max(1, budget // max(v.size, 1))
    out = np.zeros(t.shape[0])
    for j in range(0, v.size, step):
        block = difference("ratio", v[:, None], v[None, j:j + step])
        out += ((t @ block) * t[:, j:j + step]).sum(axis=1)
    return out


def pair_weights(counts: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """``sum_i w_i c_i c_i^T / (m_i - 1)`` over pairable items: (k, k), or (r, k, k) with weights.

    With the label totals ``t = sum_i w_i c_i`` it is all :func:`alpha_from_pairs` needs at
    any level, and both are sums over items: mergeable over partitions (the Dask engine).
    """
    c = np.asarray(counts, dtype=np.float64)
    m = c.sum(axis=1)
    keep = m >= 2
    c, m = c[keep], m[keep]
    outer = (c[:, :, None] * c[:, None, :] / (m - 1)[:, None, None]).reshape(len(c), -1)
    k = counts.shape[1]
    if weights is None:
        return outer.sum(axis=0).reshape(k, k)
    w = np.asarray(weights, dtype=np.float64)[:, keep]
    return (w @ outer).reshape(-1, k, k)


def alpha_from_pairs(level: str, totals: np.ndarray, pairs: np.ndarray, v: np.ndarray
                     ) -> np.ndarray:
    """Krippendorff's alpha from label totals ``t`` (..., k) and :func:`pair_weights` (..., k, k).

    ``alpha = 1 - (n - 1) sum_{c,k} P_ck d2(c, k) / sum_{c,k} t_c t_k d2(c, k)`` with
    ``n = sum t`` and the level's squared difference ``d2`` (:func:`annokit.core.scales.difference`;
    ordinal: mid-rank positions of the totals); NaN unless two categories occur.
    """
    t = np.atleast_2d(np.asarray(totals, dtype=np.float64))
    p = np.asarray(pairs, dtype=np.float64).reshape(t.shape[0], t.shape[1], t.shape[1])
    if level == "ordinal":
        r = ordinal_positions(t)  # (reps, k)
        d2 = (r[:, :, None] - r[:, None, :]) ** 2
    elif level == "nominal":
        d2 = np.broadcast_to(1.0 - np.eye(t.shape[1]), p.shape)
    else:
        a, b = np.meshgrid(np.arange(v.size), np.arange(v.size), indexing="ij")
        d2 = np.broadcast_to(difference(level, v[a], v[b]), p.shape)
    observed = (p * d2).sum(axis=(1, 2))
    expected = np.einsum("rc,rk,rck->r", t, t, d2)
    n = t.sum(axis=1)
    varied = ((t > 0).sum(axis=1) >= 2) & (expected > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(varied, 1.0 - (n - 1) * observed / expected, np.nan)
