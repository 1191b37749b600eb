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
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.alpha_levels import alpha_statistic, counts_parts, pairable, ratings_parts
from annokit.core.checks import check_open_unit, check_option
from annokit.core.labels import LabelSet, scalar_to_str
from annokit.core.ratings import Ratings
from annokit.core.resample import (
    as_item_keys,
    bootstrap_replicates,
    percentile_interval,
    poisson_weights,
    replicate_chunks,
    seed_from_rng,
)
from annokit.core.scales import check_scale, numeric_names, ordered_names
from annokit.core.votes import Votes
from annokit.errors import DegenerateInputWarning, InvalidValueError, SchemaError

__all__ = ["KAPPA_WEIGHTS", "AgreementResult", "annotator_kappa", "coefficient_interval",
           "coincidence_parts", "cohen_kappa", "fleiss_kappa", "intervals_together",
           "kappa_disagreement", "kappa_from_tables",
           "krippendorff_alpha", "nominal_alpha", "prepare_alpha", "prepare_fleiss"]

#: Weightings of Cohen's kappa: unweighted (None), linear and quadratic disagreement weights.
KAPPA_WEIGHTS = (None, "linear", "quadratic")


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


def _with_ci(point: float, stat: Callable[[np.ndarray], np.ndarray], n_items: int, keys: Any, *,
             n_boot: Any, confidence: Any, rng: np.random.Generator | int | None
             ) -> AgreementResult:
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise InvalidValueError(f"n_boot must be >= 0; got {n_boot!r}")
    check_open_unit("confidence", confidence)
    if n_boot == 0:
        return AgreementResult(point, None, None, n_items, 0, float(confidence))
    reps = bootstrap_replicates(stat, as_item_keys(keys, n_items), n_boot=int(n_boot),
                                seed=seed_from_rng(rng))
    ci = percentile_interval(point, reps, float(confidence))
    return AgreementResult(point, ci.low, ci.high, n_items, ci.n_boot, ci.confidence, ci.n_invalid)


def intervals_together(prepared: Sequence[tuple[Prepared, bool]], keys: Any, rest: Any = None,
                       *, n_boot: int, confidence: float, seed: int,
                       budget: int = 4_000_000) -> list[AgreementResult]:
    """Bootstrap several coefficients on the same replicates, drawing each chunk's weights once.

    Parameters
    ----------
    prepared : sequence of (Prepared, bool)
        Each coefficient (:func:`prepare_alpha`, :func:`prepare_fleiss`, or a
        :class:`~annokit.core.agreement_gwet.ChanceCoefficient` as such a tuple), and whether
        its statistic also reads the items of ``rest`` (after those of ``keys``).
    keys : ndarray of shape (n_items,)
        Item keys (:func:`annokit.core.resample.item_keys`) of the pairable items; they set
        the chunks (:func:`replicate_chunks`), so alpha's and kappa's weights, chunks and
        figures are bit for bit those of :func:`krippendorff_alpha` and :func:`fleiss_kappa`.
    rest : ndarray, optional
        Keys of the items with one vote, which only the chance terms read.
    budget : int
        Weights per chunk (float64); the chance coefficients' blocks hold ``8 * budget``
        bytes of uint8 weights besides.

    Returns
    -------
    list of AgreementResult
        In the order of ``prepared``; a coefficient's replicate with no weight on its items is
        NaN (left out, counted in ``n_invalid``).

    Notes
    -----
    The chance-corrected coefficients (statistics with a ``group``,
    :class:`~annokit.core.agreement_gwet.ChanceSums`) read blocks of several chunks: one pass
    over the items and votes per block gives all of them (:class:`_Blocks`).
    """
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise InvalidValueError(f"n_boot must be >= 0; got {n_boot!r}")
    check_open_unit("confidence", confidence)
    keys = as_item_keys(keys, len(keys))
    rest = None if rest is None or not len(rest) else as_item_keys(rest, len(rest))
    reps = [np.empty(n_boot) for _ in prepared]
    blocks = _Blocks([part[1] for part, _ in prepared], n_boot, budget)
    _replicate_values(prepared, reps, blocks, keys, rest, n_boot=n_boot, seed=seed,
                      budget=budget)
    results = []
    for (part, _), values in zip(prepared, reps, strict=True):
        if n_boot == 0:
            results.append(AgreementResult(part[0], None, None, part[2], 0, float(confidence)))
            continue
        ci = percentile_interval(part[0], values, float(confidence))
        results.append(AgreementResult(part[0], ci.low, ci.high, part[2], ci.n_boot,
                                       ci.confidence, ci.n_invalid))
    return results


def _replicate_values(prepared: Sequence[tuple[Prepared, bool]], reps: list[np.ndarray],
                      blocks: _Blocks, keys: np.ndarray, rest: np.ndarray | None, *,
                      n_boot: int, seed: int, budget: int) -> None:
    """Fill ``reps`` with every coefficient's replicates, one chunk of weights at a time; the
    statistics of a group (:class:`_Blocks`) read blocks of several chunks."""
    from annokit.core.progress import progress

    with progress(total=n_boot, desc="bootstrap", unit="rep") as bar:
        for start, stop in replicate_chunks(n_boot, keys.shape[0], budget=budget):
            w = poisson_weights(keys, seed, start, stop)
            w_all = w if rest is None else np.hstack([w, poisson_weights(rest, seed, start, stop)])
            for j, ((part, all_items), out) in enumerate(zip(prepared, reps, strict=True)):
                if j in blocks.members:
                    continue
                ws = w_all if all_items else w
                with np.errstate(invalid="ignore", divide="ignore"):
                    values = part[1](ws)
                out[start:stop] = np.where(ws.sum(axis=1) > 0, values, np.nan)
            blocks.add(w_all, start, stop, reps)
            bar.update(stop - start)
    blocks.flush(reps)


class _Blocks:
    """The statistics that read a group's sums in blocks of replicates (those with a ``group``:
    :class:`~annokit.core.agreement_gwet.ChanceSums`, which read every row): the chunks'
    weights are gathered as uint8, and one pass over a block gives every coefficient of the
    group, so the items and votes are read once per block rather than once per chunk."""

    def __init__(self, stats: Sequence[Any], n_boot: int, budget: int) -> None:
        self.groups: dict[int, tuple[Any, list[tuple[int, int]]]] = {}
        self.members: set[int] = set()
        for j, stat in enumerate(stats):
            group = getattr(stat, "group", None)
            if group is None:
                continue
            self.members.add(j)
            self.groups.setdefault(id(group), (group, []))[1].append((j, stat.index))
        self.budget, self.n_boot = budget, n_boot
        self.buf: np.ndarray | None = None  # the weights of the block, uint8 (reps, rows)
        self.first = 0  # the block's first replicate
        self.filled = 0

    def add(self, w_all: np.ndarray, start: int, stop: int, reps: list[np.ndarray]) -> None:
        if not self.groups:
            return
        n = stop - start
        if self.buf is None or self.filled + n > self.buf.shape[0]:
            self.flush(reps)
            cap = min(group.max_reps(self.budget) for group, _ in self.groups.values())
            size = min(max(cap, n), self.n_boot - start)
            if self.buf is None or self.buf.shape[0] != size:
                self.buf = np.empty((size, w_all.shape[1]), dtype=np.uint8)
            self.first = start
        self.buf[self.filled:self.filled + n] = w_all
        self.filled += n

    def flush(self, reps: list[np.ndarray]) -> None:
        if self.buf is None or not self.filled:
            return
        for group, columns in self.groups.values():
            values = group.values(self.buf[:self.filled])
            for j, index in columns:
                reps[j][self.first:self.first + self.filled] = values[:, index]
        self.filled = 0


def coefficient_interval(point: float, stat: Callable[[np.ndarray], np.ndarray], n_items: int,
                         keys: Any, n_rows: int, **kw: Any) -> AgreementResult:
    """:func:`_with_ci` for a statistic of the weights of ``n_rows`` rows (not only the
    ``n_items`` pairable ones): the chance-corrected coefficients of
    :mod:`annokit.core.agreement_gwet`, whose chance terms use single votes too."""
    keys = np.arange(n_rows, dtype=np.int64) if keys is None else keys
    result = _with_ci(point, stat, n_rows, keys, **kw)
    return AgreementResult(result.value, result.ci_low, result.ci_high, n_items, result.n_boot,
                           result.confidence, result.n_invalid)


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
    point, stat, n_items, keys = prepare_alpha(data, level=level, values=values, keys=keys,
                                               stacklevel=3)
    return _with_ci(point, stat, n_items, keys, n_boot=n_boot, confidence=confidence, rng=rng)


#: What a coefficient needs for a bootstrap: value, statistic of item weights, items, their keys.
Prepared = tuple[float, Callable[[np.ndarray], np.ndarray], int, Any]


def prepare_alpha(data: Any, *, level: str | None = None, values: Any = None, keys: Any = None,
                  stacklevel: int = 2) -> Prepared:
    """:func:`krippendorff_alpha`'s value and its statistic of the pairable items' weights
    (with those items' keys), for :func:`intervals_together`; warns as it does."""
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
        part, keys = ratings_parts(data, keys)
    else:
        if isinstance(data, Votes):
            values = data.labels if values is None else values
            data = data.counts()
        if level == "nominal":  # the historical path, kept bit for bit
            return _nominal_alpha(data, keys, stacklevel=stacklevel + 1)
        part, keys = counts_parts(data, keys, level, values)
    stat = alpha_statistic(level, *part)
    point = float(stat(np.ones((1, part[0].shape[0])))[0])
    if not np.isfinite(point):
        warnings.warn(f"krippendorff_alpha ({level}): the values show no variation, alpha is "
                      "undefined (nan)", DegenerateInputWarning, stacklevel=stacklevel)
    return point, stat, part[0].shape[0], keys


def _nominal_alpha(counts: Any, keys: Any, *, stacklevel: int) -> Prepared:
    arr, keys = pairable(counts, keys, "krippendorff_alpha", stacklevel=stacklevel + 1)
    disagreement, _ = coincidence_parts(arr)

    def stat(w: np.ndarray) -> np.ndarray:
        return nominal_alpha(w @ disagreement, w @ arr)

    point = float(stat(np.ones(len(arr))))
    if not np.isfinite(point):
        warnings.warn("krippendorff_alpha: every vote has the same label, alpha is undefined (nan)",
                      DegenerateInputWarning, stacklevel=stacklevel)
    return point, stat, len(arr), keys


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
    point, stat, n_items, keys = prepare_fleiss(counts, keys, stacklevel=3)
    return _with_ci(point, stat, n_items, keys, n_boot=n_boot, confidence=confidence, rng=rng)


def prepare_fleiss(counts: Any, keys: Any = None, *, stacklevel: int = 2) -> Prepared:
    """:func:`fleiss_kappa`'s value and statistic, as :func:`prepare_alpha`."""
    arr, keys = pairable(counts, keys, "fleiss_kappa", stacklevel=stacklevel + 1)
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
                      DegenerateInputWarning, stacklevel=stacklevel)
    return point, stat, len(arr), keys


def cohen_kappa(first: Any, second: Any, *, weights: str | None = None,
                labels: LabelSet | Sequence[Any] | None = None, n_boot: int = 0,
                confidence: float = 0.95, rng: np.random.Generator | int | None = None,
                keys: Any = None) -> AgreementResult:
    """Cohen's kappa between two annotators, unweighted or with linear / quadratic weights.

    Parameters
    ----------
    first, second : array-like of shape (n_items,)
        The two annotators' labels (names or numbers) on the same items, row by row.
    weights : {None, "linear", "quadratic"}, default=None
        Disagreement weights over category positions ``i, j``: none (``[i != j]``),
        ``|i - j|`` or ``(i - j)^2`` (Cohen 1968; scikit-learn's ``cohen_kappa_score``).
    labels : LabelSet or sequence, optional
        The categories in their order. Default: the distinct labels, in numeric order
        when they are numbers; weighted kappa on non-numeric labels needs the order declared.
    n_boot, confidence, rng, keys
        As in :func:`krippendorff_alpha` (items are the rows).

    Returns
    -------
    AgreementResult

    Raises
    ------
    SchemaError
        ``first`` and ``second`` of different lengths, or empty.
    InvalidValueError
        An unknown weighting, a label outside ``labels``, or weights on labels with no
        declared order.

    Notes
    -----
    With :math:`p_{ij}` the share of items labelled ``i`` by the first annotator and
    ``j`` by the second, :math:`p_{i\\cdot}`, :math:`p_{\\cdot j}` the marginals and
    :math:`v_{ij}` the weights, :math:`\\kappa_w = 1 - \\sum v_{ij} p_{ij} /
    \\sum v_{ij} p_{i\\cdot} p_{\\cdot j}` (Cohen 1968, eq. 4); unweighted it is Cohen
    (1960). NaN (warned) when the chance disagreement is 0.

    References
    ----------
    Cohen, J. (1968). Weighted kappa: nominal scale agreement with provision for scaled
    disagreement or partial credit. Psychological Bulletin 70(4), 213-220. doi:10.1037/h0026256

    Examples
    --------
    >>> round(cohen_kappa([1, 2, 3, 3], [1, 3, 3, 2], weights="linear").value, 4)
    0.4286
    """
    check_option("weights", weights, KAPPA_WEIGHTS)
    a = np.asarray(first, dtype=object).reshape(-1)
    b = np.asarray(second, dtype=object).reshape(-1)
    if a.shape != b.shape or a.size == 0:
        raise SchemaError(f"cohen_kappa needs two non-empty label sequences of equal length; "
                          f"got {a.size} and {b.size}")
    labels = _kappa_labels(a, b, labels, weights)
    k = len(labels)
    cells = labels.encode(a, where="first") * k + labels.encode(b, where="second")
    v = kappa_disagreement(weights, k)
    from scipy import sparse

    onehot = sparse.csr_matrix((np.ones(cells.size), (np.arange(cells.size), cells)),
                               shape=(cells.size, k * k))

    def stat(w: np.ndarray) -> np.ndarray:
        return kappa_from_tables(np.asarray((onehot.T @ w.T).T).reshape(-1, k, k), v)

    point = float(stat(np.ones((1, cells.size)))[0])
    if not np.isfinite(point):
        warnings.warn("cohen_kappa: the chance disagreement is 0 (one label throughout), kappa is "
                      "undefined (nan)", DegenerateInputWarning, stacklevel=2)
    return _with_ci(point, stat, cells.size, keys, n_boot=n_boot, confidence=confidence, rng=rng)


def _kappa_labels(a: np.ndarray, b: np.ndarray, labels: Any, weights: str | None) -> LabelSet:
    """:func:`cohen_kappa`'s categories: ``labels``, else the distinct labels (in numeric
    order when they are numbers; weighted kappa on other labels needs their order)."""
    if labels is None:
        distinct = pd.unique(pd.Series(np.concatenate([a, b])).map(scalar_to_str))
        if numeric_names(distinct) is not None:
            labels = LabelSet(ordered_names(distinct, "ordinal"))
        elif weights is None:
            labels = LabelSet(sorted(distinct))
        else:
            raise InvalidValueError(f"weighted kappa needs the order of labels "
                                    f"{list(distinct)[:8]}; pass labels=[...] in order")
    return LabelSet.coerce(labels)


def kappa_disagreement(weights: str | None, k: int) -> np.ndarray:
    """Cohen's disagreement weights over category positions, flattened (k * k,): ``[i != j]``,
    ``|i - j|`` or ``(i - j)^2`` (:data:`KAPPA_WEIGHTS`)."""
    i, j = np.divmod(np.arange(k * k), k)
    return {None: (i != j).astype(np.float64), "linear": np.abs(i - j).astype(np.float64),
            "quadratic": ((i - j) ** 2).astype(np.float64)}[weights]


def kappa_from_tables(p: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Cohen's (weighted) kappa of contingency tables ``p`` (r, k, k) (counts or weights) with
    the disagreement weights ``v`` (:func:`kappa_disagreement`): :math:`1 - \\sum v_{ij} p_{ij}
    / \\sum v_{ij} p_{i\\cdot} p_{\\cdot j} / n` (Cohen 1968, eq. 4); NaN where the chance
    disagreement is 0."""
    k = p.shape[-1]
    n = p.sum(axis=(1, 2))
    chance = np.einsum("ri,rj->rij", p.sum(axis=2), p.sum(axis=1)).reshape(-1, k * k)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = p.reshape(-1, k * k) @ v
        expected = chance @ v / n
        return np.where(expected > 0, 1.0 - observed / expected, np.nan)


def annotator_kappa(votes: Votes, first: Any, second: Any, *, weights: str | None = None,
                    n_boot: int = 0, confidence: float = 0.95,
                    rng: np.random.Generator | int | None = None) -> AgreementResult:
    """Cohen's kappa of two annotators of ``votes`` on the items both labelled.

    Parameters
    ----------
    votes : Votes
        With annotator ids; weighted kappa needs an ordinal (or numeric) label set, whose
        order it uses (``read_votes(..., scale="ordinal", labels=[...])``).
    first, second : str
        Annotator ids.
    weights, n_boot, confidence, rng
        As in :func:`cohen_kappa`; bootstrap weights are keyed by item id.

    Raises
    ------
    SchemaError
        Votes without annotator ids, an unknown annotator, no shared item, or an
        annotator with two votes on one item.
    InvalidValueError
        Weights on a nominal label set.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": ["a", "a", "b", "b", "c", "c"], "annotator": ["x", "y"] * 3,
    ...                    "label": ["1", "2", "3", "3", "2", "2"]})
    >>> v = Votes.from_long(df, labels=LabelSet(["1", "2", "3"], scale="ordinal"))
    >>> round(annotator_kappa(v, "x", "y", weights="quadratic").value, 4)  # 1 - (1/3) / 1
    0.6667
    """
    check_option("weights", weights, KAPPA_WEIGHTS)
    if votes.annotator_index is None or votes.annotator_ids is None:  # set together
        raise SchemaError(f"{votes.source}: annotator_kappa needs annotator ids")
    if weights is not None and votes.labels.scale == "nominal":
        raise InvalidValueError(f"{votes.source}: weighted kappa needs ordered labels; the label "
                                "set is nominal (read with scale='ordinal' and labels=[...] in "
                                "order)")
    ids = pd.Index(votes.annotator_ids)
    frames = []
    for who in (first, second):
        pos = ids.get_indexer(pd.Index([scalar_to_str(who)]))[0]
        if pos < 0:
            raise SchemaError(f"{votes.source}: unknown annotator {who!r}")
        mine = votes.annotator_index == pos
        items = votes.item_index[mine]
        if len(np.unique(items)) != len(items):
            raise SchemaError(f"{votes.source}: annotator {who!r} has several votes on one item")
        frames.append(pd.Series(votes.label_index[mine], index=items))
    both = pd.concat(frames, axis=1, join="inner")
    if both.empty:
        raise SchemaError(f"{votes.source}: annotators {first!r} and {second!r} share no item")
    names = np.asarray(votes.labels.names, dtype=object)
    return cohen_kappa(names[both[0].to_numpy()], names[both[1].to_numpy()], weights=weights,
                       labels=votes.labels, n_boot=n_boot, confidence=confidence, rng=rng,
                       keys=votes.item_ids[both.index.to_numpy()])
