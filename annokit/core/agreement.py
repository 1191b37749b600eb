"""Chance-corrected inter-annotator agreement from vote counts.

Both coefficients are computed from the (n_items, n_labels) count matrix, so
they handle unequal numbers of votes per item and need no annotator ids. Items
with fewer than two votes cannot be paired and are left out (with a warning).
Bootstrap intervals come from :mod:`annokit.core.resample`: each replicate is a
vector of Poisson(1) item weights keyed by item id, and both coefficients are
weighted sums, so all replicates of a chunk are computed at once.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from annokit.core.checks import check_counts
from annokit.core.labels import LabelSet
from annokit.core.ratings import Ratings
from annokit.core.resample import (
    as_item_keys,
    bootstrap_replicates,
    percentile_interval,
    seed_from_rng,
)
from annokit.core.scales import NUMERIC_SCALES, check_scale, difference, ordinal_positions
from annokit.core.votes import Votes
from annokit.errors import DegenerateInputWarning, InvalidValueError, SchemaError

__all__ = ["AgreementResult", "coincidence_parts", "fleiss_kappa", "krippendorff_alpha",
           "nominal_alpha"]


@dataclass(frozen=True)
class AgreementResult:
    """A coefficient with its percentile bootstrap interval (None without bootstrap).

    ``n_invalid`` counts the bootstrap replicates left out of the interval
    because the coefficient is undefined on them (e.g. every resampled vote has
    the same label).
    """

    value: float
    ci_low: float | None
    ci_high: float | None
    n_items: int
    n_boot: int
    confidence: float
    n_invalid: int = 0

    def __float__(self) -> float:
        return self.value

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _pairable(counts: Any, keys: Any, name: str) -> tuple[np.ndarray, Any]:
    """Counts (float64) and keys of the items with two or more votes."""
    arr = check_counts(counts, allow_empty_rows=True)
    if keys is not None:
        keys = as_item_keys(keys, arr.shape[0], name="counts")
    m = arr.sum(axis=1)
    keep = m >= 2
    n_single = int((~keep).sum())
    if n_single:
        warnings.warn(f"{name}: {n_single} item(s) with fewer than two votes cannot be paired and "
                      "were left out", DegenerateInputWarning, stacklevel=3)
    if not keep.any():
        raise SchemaError(f"{name} needs at least one item with two or more votes")
    return arr[keep].astype(np.float64), (None if keys is None else keys[keep])


def _with_ci(point: float, stat: Callable[[np.ndarray], np.ndarray], n_items: int, keys: Any, *,
             n_boot: Any, confidence: Any, rng: np.random.Generator | int | None
             ) -> AgreementResult:
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise InvalidValueError(f"n_boot must be >= 0; got {n_boot!r}")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float, np.floating)) \
            or not 0 < confidence < 1:
        raise InvalidValueError(f"confidence must be in (0, 1); got {confidence!r}")
    if n_boot == 0:
        return AgreementResult(point, None, None, n_items, 0, float(confidence))
    reps = bootstrap_replicates(stat, as_item_keys(keys, n_items), n_boot=int(n_boot),
                                seed=seed_from_rng(rng))
    ci = percentile_interval(point, reps, confidence)
    return AgreementResult(point, ci.low, ci.high, n_items, ci.n_boot, ci.confidence, ci.n_invalid)


def coincidence_parts(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per item: observed disagreement and the pairable label counts, for nominal alpha.

    Parameters
    ----------
    counts : ndarray of shape (..., n_items, n_labels)
        Vote counts (float).

    Returns
    -------
    disagreement : ndarray of shape (..., n_items)
        :math:`(m_i^2 - \\sum_c n_{ic}^2) / (m_i - 1)` for items with ``m_i >= 2``
        votes, else 0: the item's off-diagonal coincidences (Krippendorff 2011).
    pairable : ndarray of shape (..., n_items, n_labels)
        ``counts`` where ``m_i >= 2``, else 0.
    """
    m = counts.sum(axis=-1)
    ok = m >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.where(ok, (m**2 - (counts**2).sum(axis=-1)) / (m - 1), 0.0)
    return d, np.where(ok[..., None], counts, 0)


def nominal_alpha(disagreement: Any, label_totals: Any) -> np.ndarray:
    """Krippendorff's nominal alpha from summed disagreement and label totals.

    Parameters
    ----------
    disagreement : float or ndarray of shape (...)
        :math:`\\sum_i` of :func:`coincidence_parts`' disagreement (weighted sums allowed).
    label_totals : ndarray of shape (..., n_labels)
        :math:`n_c`, the pairable votes per label.

    Returns
    -------
    ndarray of shape (...)
        :math:`1 - (n - 1) D / (n^2 - \\sum_c n_c^2)`, NaN where the expected
        disagreement is 0 (every vote has the same label, or no votes).
    """
    totals = np.asarray(label_totals, dtype=np.float64)
    n = totals.sum(axis=-1)
    expected = n**2 - (totals**2).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = 1.0 - (n - 1) * np.asarray(disagreement, dtype=np.float64) / expected
    return np.where(expected > 0, out, np.nan)


def krippendorff_alpha(data: Any, *, level: str | None = None, values: Any = None,
                       n_boot: int = 0, confidence: float = 0.95,
                       rng: np.random.Generator | int | None = None, keys: Any = None
                       ) -> AgreementResult:
    """Krippendorff's alpha at any level of measurement, from counts, votes or numeric ratings.

    Parameters
    ----------
    data : array-like of shape (n_items, n_categories), Votes or Ratings
        Vote counts per item and category (``Votes.counts()``; for ordinal data the
        columns in their order), a :class:`~annokit.core.votes.Votes` (its counts, item
        ids and label set), or :class:`~annokit.core.ratings.Ratings` (numeric ratings
        with arbitrary values; no dense item x value matrix is built for interval data).
    level : {"nominal", "ordinal", "interval", "ratio"}, optional
        The difference function (:func:`annokit.core.scales.difference`). Default: the
        scale of the ``Votes``' label set, of the ``Ratings``, of ``values`` when it is a
        ``LabelSet``, else "nominal".
    values : array-like of shape (n_categories,) or LabelSet, optional
        Counts only: the number of each column, needed for interval and ratio levels
        (a ``LabelSet`` gives its ``values``).
    n_boot : int, default=0
        Bootstrap replicates (Poisson item weights, :mod:`annokit.core.resample`); 0 for none.
    confidence : float, default=0.95
    rng : numpy Generator, int seed or None
        Seed of the bootstrap (a Generator draws one seed; None: fresh entropy).
    keys : array-like of shape (n_items,), optional
        Item ids, so that an item's bootstrap weights do not depend on its row;
        default the ``Votes``/``Ratings`` item ids, else row positions.

    Returns
    -------
    AgreementResult
        ``n_items`` counts the pairable items (two or more values).

    Raises
    ------
    SchemaError
        When no item has two values, ``keys`` or ``values`` do not match the columns.
    InvalidValueError
        An unknown level, an interval/ratio level on counts without numeric ``values``,
        negative ratio values, a negative ``n_boot`` or ``confidence`` outside (0, 1).

    Notes
    -----
    With ``n_uc`` values of category ``c`` on item ``u`` and ``m_u = sum_c n_uc >= 2``, the
    coincidences are :math:`o_{ck} = \\sum_u (n_{uc} n_{uk} - [c = k] n_{uc})/(m_u - 1)`,
    their marginals :math:`n_c` and :math:`n = \\sum_c n_c`; then (Krippendorff 2011)

    .. math:: \\alpha = 1 - (n - 1) \\frac{\\sum_{c,k} o_{ck} \\delta^2_{ck}}
              {\\sum_{c,k} n_c n_k \\delta^2_{ck}}.

    Since :math:`\\delta^2_{cc} = 0`, item ``u`` adds :math:`n_u^T \\Delta n_u/(m_u - 1)` to the
    numerator. Interval data use the closed form :math:`n_u^T \\Delta n_u = 2 m_u \\sum_j
    (x_{uj} - \\bar x_u)^2`; ordinal data are interval data on the mid-rank positions of
    the categories (:func:`annokit.core.scales.ordinal_positions`), which depend on the
    marginals and so are recomputed in every bootstrap replicate; ratio data sum the
    differences over the pairs of distinct values within each item. A replicate weights
    item ``u``'s values by its Poisson count. The value equals ``krippendorff.alpha``
    (same level, ``value_domain`` = the category values) to rounding.

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability.
    https://repository.upenn.edu/asc_papers/43

    Examples
    --------
    >>> round(krippendorff_alpha([[3, 0], [0, 3], [2, 1]]).value, 4)
    0.6
    >>> counts = [[2, 1, 0], [0, 1, 2], [0, 3, 0]]
    >>> round(krippendorff_alpha(counts, level="interval", values=[1, 2, 3]).value, 4)  # 1 - 8*4/72
    0.5556
    """
    if isinstance(data, (Votes, Ratings)):
        keys = data.item_ids if keys is None else keys
    if level is None:
        level = (data.labels.scale if isinstance(data, Votes) else data.scale
                 if isinstance(data, Ratings) else values.scale if isinstance(values, LabelSet)
                 else "nominal")
    level = check_scale(level, name="level")
    if isinstance(data, Ratings):
        if values is not None:
            raise InvalidValueError("values= applies to count matrices; Ratings carry their values")
        part, keys = _ratings_parts(data, keys)
    else:
        if isinstance(data, Votes):
            values = data.labels if values is None else values
            data = data.counts()
        if level == "nominal":  # the historical path, kept bit for bit
            return _nominal_alpha(data, keys, n_boot=n_boot, confidence=confidence, rng=rng)
        part, keys = _counts_parts(data, keys, level, values)
    stat = _alpha_statistic(level, *part)
    point = float(stat(np.ones((1, part[0].shape[0])))[0])
    if not np.isfinite(point):
        warnings.warn(f"krippendorff_alpha ({level}): the values show no variation, alpha is "
                      "undefined (nan)", DegenerateInputWarning, stacklevel=2)
    return _with_ci(point, stat, part[0].shape[0], keys, n_boot=n_boot, confidence=confidence,
                    rng=rng)


def _nominal_alpha(counts: Any, keys: Any, **kw: Any) -> AgreementResult:
    arr, keys = _pairable(counts, keys, "krippendorff_alpha")
    disagreement, _ = coincidence_parts(arr)

    def stat(w: np.ndarray) -> np.ndarray:
        return nominal_alpha(w @ disagreement, w @ arr)

    point = float(stat(np.ones(len(arr))))
    if not np.isfinite(point):
        warnings.warn("krippendorff_alpha: every vote has the same label, alpha is undefined (nan)",
                      DegenerateInputWarning, stacklevel=3)
    return _with_ci(point, stat, len(arr), keys, **kw)


def _counts_parts(counts: Any, keys: Any, level: str, values: Any) -> tuple[tuple, Any]:
    """(sparse pairable counts, category values) of a count matrix."""
    from scipy import sparse

    arr, keys = _pairable(counts, keys, "krippendorff_alpha")
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


def _ratings_parts(ratings: Ratings, keys: Any) -> tuple[tuple, Any]:
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


def _alpha_statistic(level: str, c: Any, v: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """``f(weights (r, n_items)) -> (r,)`` alpha values, for sparse counts ``c`` and values ``v``."""
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
    """Per row of sparse counts ``c``: :math:`\\sum_{a,b} n_a n_b \\delta(a, b)` over its entries."""
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
    """:math:`\\sum_{c,k} t_c t_k \\delta^2_{ratio}(v_c, v_k)` per row of ``t``, in column blocks."""
    step = max(1, budget // max(v.size, 1))
    out = np.zeros(t.shape[0])
    for j in range(0, v.size, step):
        block = difference("ratio", v[:, None], v[None, j:j + step])
        out += ((t @ block) * t[:, j:j + step]).sum(axis=1)
    return out


def fleiss_kappa(counts: Any, *, n_boot: int = 0, confidence: float = 0.95,
                 rng: np.random.Generator | int | None = None, keys: Any = None
                 ) -> AgreementResult:
    """Fleiss' kappa from an items x labels count matrix, allowing unequal votes per item.

    Parameters
    ----------
    counts, n_boot, confidence, rng, keys
        As in :func:`krippendorff_alpha`.

    Returns
    -------
    AgreementResult

    Raises
    ------
    SchemaError, InvalidValueError
        As :func:`krippendorff_alpha`.

    Notes
    -----
    Per item the observed agreement is
    :math:`P_i = \\sum_c n_{ic}(n_{ic} - 1) / (m_i (m_i - 1))` (Fleiss 1971, eq. 2),
    :math:`\\bar P` its mean over items with ``m_i >= 2``; label prevalences are
    :math:`p_c = \\sum_i n_{ic} / \\sum_i m_i` (pooled over all votes, which for
    equal ``m_i`` is Fleiss' eq. 1) and :math:`P_e = \\sum_c p_c^2`;
    :math:`\\kappa = (\\bar P - P_e) / (1 - P_e)`. With equal votes per item it
    is exactly Fleiss (1971). A bootstrap replicate weights every item sum by
    the item's Poisson count.

    References
    ----------
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
    Psychological Bulletin 76(5), 378-382. doi:10.1037/h0031619

    Examples
    --------
    >>> round(fleiss_kappa([[3, 0], [0, 3], [2, 1]]).value, 4)
    0.5
    """
    arr, keys = _pairable(counts, keys, "fleiss_kappa")
    m = arr.sum(axis=1)
    p_item = ((arr * (arr - 1)).sum(axis=1)) / (m * (m - 1))

    def stat(w: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            p_bar = (w @ p_item) / w.sum(axis=-1)
            p_c = (w @ arr) / (w @ m)[..., None]
            p_e = (p_c**2).sum(axis=-1)
            return (p_bar - p_e) / (1 - p_e)

    point = float(stat(np.ones(len(arr))))
    if not np.isfinite(point):
        warnings.warn("fleiss_kappa: every vote has the same label, kappa is undefined (nan)",
                      DegenerateInputWarning, stacklevel=2)
    return _with_ci(point, stat, len(arr), keys, n_boot=n_boot, confidence=confidence, rng=rng)
