"""Percent agreement, Gwet's AC1/AC2, Brennan-Prediger and Conger's kappa (Gwet 2014).

All four share the observed agreement of Gwet (2014, ch. 2 for several raters with missing
ratings; ch. 3 for the weights): with
``n_ik`` votes for category ``k`` on item ``i``, ``m_i`` votes on it and the weights
``w_kl`` (1 on the diagonal; the identity without weights),

.. math:: p_a = \\frac{1}{n'} \\sum_{i: m_i \\ge 2} \\sum_k
          \\frac{n_{ik} (n^*_{ik} - 1)}{m_i (m_i - 1)}, \\qquad n^*_{ik} = \\sum_l w_{kl} n_{il},

over the ``n'`` items with two or more votes: an item with one vote has no pair and is
left out of :math:`p_a` (as in Gwet's handbook and irrCAC). The coefficients differ in the
chance agreement :math:`p_e` and are :math:`(p_a - p_e) / (1 - p_e)`:

- percent agreement: :math:`p_a` itself (no chance correction);
- Brennan-Prediger: :math:`p_e = T_w / q^2` (``T_w``: the sum of the ``q x q`` weights);
- Gwet's AC1 (AC2 with weights): :math:`p_e = T_w / (q (q - 1)) \\sum_k \\pi_k (1 - \\pi_k)`,
  with :math:`\\pi_k` the mean over items of :math:`n_{ik} / m_i`;
- Conger's kappa: :math:`p_e = \\sum_{k,l} w_{kl} (\\bar p_k \\bar p_l - s^2_{kl} / r)`, with
  :math:`p_{gk}` the share of annotator ``g``'s votes in category ``k``, :math:`\\bar p_k` its
  mean over the ``r`` annotators and :math:`s^2_{kl}` their covariance (divisor ``r - 1``).

The chance terms :math:`\\pi_k` and :math:`p_{gk}` use every vote, those on items with one vote
included (Gwet 2014; irrCAC does the same), and ``q`` is the number of categories of the label
set, used or not. Bootstrap replicates weight every item sum by the item's Poisson count
(:mod:`annokit.core.resample`), the same replicates as Krippendorff's alpha.

The handbook is cited by chapter (2: nominal ratings, several raters, missing ratings; 3: the
weights for ordinal, interval and ratio data; 4: AC1; 5: the variances), not by equation: the
equation numbers could not be checked against the printed book.

References
----------
Gwet, K. L. (2014). Handbook of Inter-Rater Reliability (4th ed.). Advanced Analytics, LLC.
Conger, A. J. (1980). Integration and generalization of kappas for multiple raters.
Psychological Bulletin 88(2), 322-328. doi:10.1037/0033-2909.88.2.322
Brennan, R. L., & Prediger, D. J. (1981). Coefficient kappa: some uses, misuses, and
alternatives. Educational and Psychological Measurement 41, 687-699.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from annokit.core.checks import check_counts, check_option
from annokit.core.labels import LabelSet
from annokit.core.resample import as_item_keys
from annokit.core.votes import Votes
from annokit.errors import DegenerateInputWarning, InvalidValueError, SchemaError

__all__ = ["GWET_COEFFICIENTS", "SCALE_WEIGHTS", "WEIGHTS", "ChanceCoefficient",
           "ChanceSums", "agreement_weights", "analytic_se", "brennan_prediger",
           "chance_block_sums", "chance_coefficients", "coefficient_from_sums", "conger_kappa", "gwet_ac1",
           "item_terms", "percent_agreement"]

#: The named weightings of Gwet (2014, ch. 3), those of irrCAC's ``Weights``.
WEIGHTS = ("identity", "ordinal", "linear", "quadratic", "radical", "ratio")
#: The weights that match each level of measurement (Gwet 2014, ch. 3).
SCALE_WEIGHTS = {"nominal": "identity", "ordinal": "ordinal", "interval": "quadratic",
                 "ratio": "ratio"}
#: The coefficients of this module, in the order ``stats`` prints them.
GWET_COEFFICIENTS = ("percent_agreement", "gwet_ac1", "brennan_prediger", "conger_kappa")


def agreement_weights(name: str, values: Any = None, *, n: int | None = None) -> np.ndarray:
    """The ``q x q`` agreement weights ``w_kl`` (1 on the diagonal) of a named weighting.

    Parameters
    ----------
    name : {"identity", "ordinal", "linear", "quadratic", "radical", "ratio"}
        Gwet (2014, ch. 3): ``ordinal`` uses the categories' ranks only,
        ``1 - C(|k - l| + 1, 2) / max``; ``linear``, ``quadratic`` and ``radical`` are
        ``1 - (|x_k - x_l| / (x_max - x_min))^p`` with p = 1, 2, 1/2; ``ratio`` is
        ``1 - ((x_k - x_l)/(x_k + x_l))^2 / ((x_max - x_min)/(x_max + x_min))^2``.
    values : array-like of shape (q,), optional
        The categories' numbers ``x`` (default ranks 1..q), in their order.
    n : int, optional
        The number of categories when ``values`` is not given.

    Examples
    --------
    >>> agreement_weights("quadratic", [1, 2, 3])[0].tolist()
    [1.0, 0.75, 0.0]
    """
    check_option("weights", name, WEIGHTS)
    x = (np.arange(1, (n or 0) + 1, dtype=np.float64) if values is None
         else np.asarray(values, dtype=np.float64).reshape(-1))
    q = x.size
    if name == "identity" or q < 2:
        return np.eye(q)
    if name == "ordinal":
        gap = np.abs(np.subtract.outer(np.arange(q), np.arange(q))) + 1.0
        d = gap * (gap - 1) / 2
    else:
        span = x.max() - x.min()
        if span == 0:
            return np.ones((q, q))
        diff = np.abs(np.subtract.outer(x, x))
        if name == "ratio":
            if (x < 0).any():
                raise InvalidValueError("ratio weights need values >= 0 (use 'quadratic')")
            with np.errstate(invalid="ignore", divide="ignore"):
                d = np.nan_to_num((diff / np.add.outer(x, x)) ** 2)  # 0/0: the same value
            d = d / (span / (x.max() + x.min())) ** 2
            return 1.0 - d
        d = (diff / span) ** {"linear": 1.0, "quadratic": 2.0, "radical": 0.5}[name]
        return 1.0 - d
    return 1.0 - d / d.max()


@dataclass(frozen=True)
class ChanceCoefficient:
    """A coefficient ready for the bootstrap: its value and ``stat(weights (r, n_items)) -> (r,)``.

    ``n_items`` counts the items with two or more votes; ``stat`` takes the weights of every
    row of the counts it was built from (rows with no vote weigh nothing). ``se``: Gwet's
    analytic standard error (:func:`analytic_se`) where irrCAC reports one we equal, else None.
    """

    name: str
    value: float
    stat: Callable[[np.ndarray], np.ndarray]
    n_items: int
    weights: str
    se: float | None = None


def _weights_matrix(weights: Any, q: int, values: Any) -> tuple[np.ndarray, str]:
    if isinstance(weights, str):
        return agreement_weights(weights, values, n=q), weights
    mat = np.asarray(weights, dtype=np.float64)
    if mat.shape != (q, q):
        raise SchemaError(f"weights must be a {q} x {q} matrix (one row and column per label); "
                          f"got shape {mat.shape}")
    return mat, "custom"


def item_terms(counts: np.ndarray, wmat: np.ndarray) -> np.ndarray:
    """Per item: ``[m_i >= 2, p_a,i, m_i >= 1, n_i1/m_i, ..., n_iq/m_i]`` (Gwet 2014, ch. 2).

    ``p_a,i`` is the item's weighted agreement :math:`\\sum_k n_{ik}(n^*_{ik} - 1)/(m_i(m_i - 1))`
    (0 below two votes). Sums of these columns over items, with any item weights, give every
    coefficient but Conger's chance term (:func:`coefficient_from_sums`).
    """
    c = np.asarray(counts, dtype=np.float64)
    m = c.sum(axis=1)
    pair, rated = m >= 2, m >= 1
    with np.errstate(invalid="ignore", divide="ignore"):
        pa = np.where(pair, (c * (c @ wmat.T - 1)).sum(axis=1) / (m * (m - 1)), 0.0)
        share = np.where(rated[:, None], c / m[:, None], 0.0)
    return np.column_stack([pair, pa, rated, share])


def chance_agreement(name: str, sums: np.ndarray, wmat: np.ndarray,
                     annotator_sums: np.ndarray | None = None) -> np.ndarray:
    """:math:`p_e` of a coefficient from :func:`item_terms` sums (..., 3 + q) (and for Conger the
    annotator x label vote sums (..., r, q))."""
    q = wmat.shape[0]
    total = wmat.sum()
    if name == "percent_agreement":
        return np.zeros(sums.shape[:-1])
    if name == "brennan_prediger":
        return np.full(sums.shape[:-1], total / q**2)
    if name == "gwet_ac1":
        with np.errstate(invalid="ignore", divide="ignore"):
            pi = sums[..., 3:] / sums[..., 2:3]
            return total * (pi * (1 - pi)).sum(axis=-1) / (q * (q - 1)) if q > 1 else \
                np.full(sums.shape[:-1], np.nan)
    assert annotator_sums is not None  # conger_kappa: checked by the callers
    per = annotator_sums.sum(axis=-1, keepdims=True)
    active = per > 0  # annotators with no vote in a replicate drop out of its mean
    p = np.where(active, annotator_sums / np.where(active, per, 1.0), 0.0)
    r = active[..., 0].sum(axis=-1)[..., None, None].astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = p.sum(axis=-2) / r[..., 0]
        outer = mean[..., :, None] * mean[..., None, :]
        cov = (np.einsum("...gk,...gl->...kl", p, p) - r * outer) / (r - 1)
        return (wmat * (outer - cov / r)).sum(axis=(-2, -1))


def coefficient_from_sums(name: str, sums: np.ndarray, wmat: np.ndarray,
                          annotator_sums: np.ndarray | None = None) -> np.ndarray:
    """The coefficient from :func:`item_terms` sums: :math:`(p_a - p_e) / (1 - p_e)`
    (:math:`p_a` for percent agreement); NaN where no item has two votes or ``p_e = 1``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        pa = sums[..., 1] / sums[..., 0]
        if name == "percent_agreement":
            return np.where(sums[..., 0] > 0, pa, np.nan)
        pe = chance_agreement(name, sums, wmat, annotator_sums)
        out = (pa - pe) / (1 - pe)
    return np.where((sums[..., 0] > 0) & (pe < 1), out, np.nan)


def analytic_se(name: str, sums: np.ndarray, moments: np.ndarray, wmat: np.ndarray
                ) -> float | None:
    r"""Gwet's (2014, ch. 5) linearised standard error of AC1/AC2 and Brennan-Prediger (as irrCAC
    reports it, with no finite-population correction); None for the other coefficients.

    ``sums`` and ``moments`` are the sums over items of :func:`item_terms` rows ``T_i`` and of
    ``T_i T_i^T``. Each item's linearised term is ``x_i = v . T_i``: for Brennan-Prediger
    :math:`x_i = (n / n')(p_{a,i} - p_e [m_i \ge 2]) / (1 - p_e)`, and AC1 subtracts
    :math:`2 (1 - \gamma)(p_{e,i} - p_e) / (1 - p_e)` with
    :math:`p_{e,i} = T_w / (q (q - 1)) \sum_k (n_{ik} / m_i)(1 - \pi_k)`; then
    :math:`\mathrm{var} = \sum_i (x_i - \gamma)^2 / (n (n - 1))` over the ``n`` items with a
    vote, from ``sums`` and ``moments`` alone (so partitions' sums add up).
    """
    if name not in ("gwet_ac1", "brennan_prediger"):
        return None
    n, n2 = sums[2], sums[0]
    q = wmat.shape[0]
    if n < 2 or n2 == 0 or q < 2:
        return None
    pe = float(chance_agreement(name, sums, wmat))
    coef = float(coefficient_from_sums(name, sums, wmat))
    if not np.isfinite(coef):
        return None
    alpha = (n / n2) / (1 - pe)
    v = np.zeros(sums.size)
    v[0], v[1] = -alpha * pe, alpha
    if name == "gwet_ac1":
        beta = 2 * (1 - coef) / (1 - pe)
        pi = sums[3:] / n
        v[2] = beta * pe
        v[3:] = -beta * wmat.sum() / (q * (q - 1)) * (1 - pi)
    total, square = v @ sums, v @ moments @ v
    var = (square - 2 * coef * total + coef**2 * n) / (n * (n - 1))
    return float(np.sqrt(max(var, 0.0)))


def _annotator_cells(votes: Votes, order: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, int]:
    """The votes grouped by count row (CSR ``indptr``, each vote's annotator x label cell)."""
    if votes.annotator_index is None or votes.annotator_ids is None:
        raise SchemaError(f"{votes.source}: conger_kappa needs annotator ids (a long table with "
                          "an annotator column)")
    ids = np.asarray(votes.annotator_ids)
    k = len(votes.labels)
    row = votes.item_index
    if order is not None:  # count row r holds item order[r]
        where = np.empty(order.size, dtype=np.int64)
        where[order] = np.arange(order.size)
        row = where[row]
    # annotators in id order, so that the sums over annotators do not depend on the rows' order
    rank = np.empty(len(ids), dtype=np.int64)
    rank[np.argsort(ids.astype(str), kind="stable")] = np.arange(rank.size)
    by_row = np.argsort(row, kind="stable")
    cells = (rank[votes.annotator_index] * k + votes.label_index)[by_row]
    indptr = np.searchsorted(row[by_row], np.arange(votes.n_items + 1))
    return indptr.astype(np.int64), cells.astype(np.int32), len(ids) * k


def chance_block_sums(wt: np.ndarray, terms: np.ndarray,
                      cells: tuple[np.ndarray, np.ndarray, int] | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sums of a block of replicates over the rows of ``terms`` (:func:`item_terms`), in one
    compiled pass (numba, imported on first use): ``wt @ terms`` (R, T), the annotator x label
    vote sums (R, n_cells) of Conger's kappa when ``cells`` (``indptr``, each vote's cell,
    ``n_cells``: the votes grouped by row) is given, and each replicate's total weight (R,).

    ``wt`` (R, n_rows): whole weights in 0..255 (Poisson counts; cast to uint8).
    """
    from annokit.core._agreement_sums import block_sums

    wt = np.ascontiguousarray(wt, dtype=np.uint8)
    if cells is None:
        cells = (np.zeros(terms.shape[0] + 1, dtype=np.int64), np.zeros(0, dtype=np.int32), 0)
    return block_sums(wt, np.ascontiguousarray(terms, dtype=np.float64), *cells)


def chance_coefficients(data: Any, *, names: Any = GWET_COEFFICIENTS, weights: Any = None,
                        values: Any = None, order: np.ndarray | None = None
                        ) -> list[ChanceCoefficient]:
    """Prepare the coefficients ``names`` of ``data`` (counts or Votes) for a shared bootstrap.

    ``order`` (Votes only): the items in the order of the count rows, ``counts()[order]``
    (the statistics sort items by id). Conger's kappa needs Votes with annotator ids. The
    coefficients' statistics share one :class:`ChanceSums`: one pass over the items and votes
    per block of replicates gives all of them.
    """
    counts = data.counts() if isinstance(data, Votes) else check_counts(
        data, allow_empty_rows=True)
    if order is not None:
        counts = counts[order]
    q = counts.shape[1]
    if values is None and isinstance(data, Votes):
        values = data.labels
    scale = values.scale if isinstance(values, LabelSet) else "nominal"
    if isinstance(values, LabelSet):
        values = values.values if values.values is not None else None
    weights = SCALE_WEIGHTS[scale] if weights is None else weights
    wmat, wname = _weights_matrix(weights, q, values)
    terms = item_terms(counts, wmat)
    n_pair = int(terms[:, 0].sum())
    if n_pair == 0:
        raise SchemaError("agreement needs at least one item with two or more votes")
    names = tuple(names)
    for name in names:
        check_option("coefficient", name, GWET_COEFFICIENTS)
    cells = None
    if "conger_kappa" in names:
        if not isinstance(data, Votes):
            raise SchemaError("conger_kappa needs Votes with annotator ids, not a count matrix")
        cells = _annotator_cells(data, order)
    shared = ChanceSums(terms, cells, wmat, names)
    points = shared.point()
    moments = terms.T @ terms
    out = []
    for j, name in enumerate(names):
        if not np.isfinite(points[j]):
            warnings.warn(f"{name}: the chance agreement is 1, the coefficient is undefined (nan)",
                          DegenerateInputWarning, stacklevel=3)
        out.append(ChanceCoefficient(name, float(points[j]), _Column(shared, j), n_pair, wname,
                                     analytic_se(name, terms.sum(axis=0), moments, wmat)))
    return out


class ChanceSums:
    """The sums every coefficient of one :func:`chance_coefficients` call reads, and their
    values for a block of replicates (``values``) or for float weights (``__call__``, the last
    weights seen kept, so the coefficients of a chunk read the sums once)."""

    def __init__(self, terms: np.ndarray, cells: tuple[np.ndarray, np.ndarray, int] | None,
                 wmat: np.ndarray, names: tuple[str, ...]) -> None:
        self.terms, self.cells, self.wmat, self.names = terms, cells, wmat, names
        self.n_rows = terms.shape[0]
        self.last: tuple[np.ndarray, np.ndarray] | None = None

    def max_reps(self, budget: int) -> int:
        """Replicates per block: ``8 * budget`` bytes of uint8 weights (the bytes of ``budget``
        float64 weights) and at most ``budget`` cell sums."""
        n_cells = 0 if self.cells is None else self.cells[2]
        return max(1, min(8 * budget // max(self.n_rows, 1), budget // max(n_cells, 1)))

    def _coefficients(self, sums: np.ndarray, cell_sums: np.ndarray | None) -> np.ndarray:
        q = self.wmat.shape[0]
        out = np.empty((sums.shape[0], len(self.names)))
        for j, name in enumerate(self.names):
            a = None if name != "conger_kappa" or cell_sums is None else \
                cell_sums.reshape(sums.shape[0], -1, q)
            out[:, j] = coefficient_from_sums(name, sums, self.wmat, a)
        return out

    def point(self) -> np.ndarray:
        """The coefficients with every item's weight 1 (``(n_names,)``)."""
        ones = np.ones((1, self.n_rows))
        cell_sums = None if self.cells is None else np.bincount(
            self.cells[1], minlength=self.cells[2]).astype(np.float64)[None, :]
        return self._coefficients(ones @ self.terms, cell_sums)[0]

    def values(self, wt: np.ndarray) -> np.ndarray:
        """``(R, n_names)``: the coefficients of a block of replicates ``wt`` (R, n_rows),
        NaN where the replicate puts no weight on any row."""
        sums, cell_sums, total = chance_block_sums(wt, self.terms, self.cells)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = self._coefficients(sums, cell_sums if self.cells is not None else None)
        out[total == 0] = np.nan
        return out

    def __call__(self, w: np.ndarray) -> np.ndarray:
        if self.last is None or self.last[0] is not w:
            self.last = (w, self.values(np.atleast_2d(w)))
        return self.last[1]


class _Column:
    """One coefficient's statistic of item weights: a column of :class:`ChanceSums`."""

    def __init__(self, group: ChanceSums, index: int) -> None:
        self.group, self.index = group, index

    def __call__(self, w: np.ndarray) -> np.ndarray:
        return self.group(w)[:, self.index]


def _one(name: str, data: Any, *, weights: Any, values: Any, n_boot: int, confidence: float,
         rng: Any, keys: Any) -> Any:
    from annokit.core.agreement import coefficient_interval

    n = data.n_items if isinstance(data, Votes) else np.shape(data)[0]
    if isinstance(data, Votes):
        keys = data.item_ids if keys is None else keys
    keys = None if keys is None else as_item_keys(keys, n, name="counts")
    prepared = chance_coefficients(data, names=(name,), weights=weights, values=values)[0]
    m = (data.counts() if isinstance(data, Votes) else np.asarray(data)).sum(axis=1)
    single = int(((m > 0) & (m < 2)).sum())
    if single:
        warnings.warn(f"{name}: {single} item(s) with fewer than two votes were left out of the "
                      "observed agreement (their votes count in the chance agreement)",
                      DegenerateInputWarning, stacklevel=3)
    return coefficient_interval(prepared.value, prepared.stat, prepared.n_items, keys, n,
                                n_boot=n_boot, confidence=confidence, rng=rng)


_PARAMS = """
    Parameters
    ----------
    data : array-like of shape (n_items, n_labels) or Votes
        Vote counts per item and label (in the labels' order), or Votes.
    weights : str or ndarray of shape (n_labels, n_labels), optional
        A name of :data:`WEIGHTS` (:func:`agreement_weights`) or a matrix. Default: the
        weights of the Votes' scale (:data:`SCALE_WEIGHTS`: identity on nominal labels,
        ordinal, quadratic, ratio), identity for counts.
    values : LabelSet or array-like of shape (n_labels,), optional
        The labels' numbers for value-based weights (default: a Votes' label values, else
        ranks 1..q).
    n_boot, confidence, rng, keys
        As in :func:`annokit.core.agreement.krippendorff_alpha`.

    Returns
    -------
    AgreementResult
        ``n_items``: the items with two or more votes.
"""


def _documented(f: Callable[..., Any]) -> Callable[..., Any]:
    """Insert the shared Parameters and Returns before the Examples of ``f``'s docstring."""
    head, sep, tail = (f.__doc__ or "").partition("    Examples")
    params = _PARAMS if f.__name__ != "conger_kappa" else _PARAMS.replace(
        "array-like of shape (n_items, n_labels) or Votes", "Votes with annotator ids")
    f.__doc__ = head.rstrip() + "\n" + params + "\n" + sep + tail
    return f


@_documented
def percent_agreement(data: Any, *, weights: Any = None, values: Any = None, n_boot: int = 0,
                      confidence: float = 0.95, rng: Any = None, keys: Any = None) -> Any:
    """Percent agreement :math:`p_a`: the share of agreeing pairs of votes per item, averaged
    over items with two or more votes (weighted: partial credit ``w_kl``; module docstring).
    Examples
    --------
    >>> round(percent_agreement([[3, 0], [0, 3], [2, 1]]).value, 4)  # (1 + 1 + 1/3) / 3
    0.7778
    """
    return _one("percent_agreement", data, weights=weights, values=values, n_boot=n_boot,
                confidence=confidence, rng=rng, keys=keys)


@_documented
def gwet_ac1(data: Any, *, weights: Any = None, values: Any = None, n_boot: int = 0,
             confidence: float = 0.95, rng: Any = None, keys: Any = None) -> Any:
    """Gwet's AC1 (AC2 with weights): chance agreement from how far the labels' prevalences
    are from uniform (Gwet 2008; 2014, ch. 4; module docstring).
    Examples
    --------
    >>> round(gwet_ac1([[3, 0], [0, 3], [2, 1]]).value, 4)  # pe = 2 * (5/9)(4/9)
    0.561
    """
    return _one("gwet_ac1", data, weights=weights, values=values, n_boot=n_boot,
                confidence=confidence, rng=rng, keys=keys)


@_documented
def brennan_prediger(data: Any, *, weights: Any = None, values: Any = None, n_boot: int = 0,
                     confidence: float = 0.95, rng: Any = None, keys: Any = None) -> Any:
    """Brennan and Prediger's coefficient: chance agreement ``T_w / q^2`` (uniform labels).
    Examples
    --------
    >>> round(brennan_prediger([[3, 0], [0, 3], [2, 1]]).value, 4)  # (7/9 - 1/2) / (1/2)
    0.5556
    """
    return _one("brennan_prediger", data, weights=weights, values=values, n_boot=n_boot,
                confidence=confidence, rng=rng, keys=keys)


@_documented
def conger_kappa(votes: Votes, *, weights: Any = None, values: Any = None, n_boot: int = 0,
                 confidence: float = 0.95, rng: Any = None, keys: Any = None) -> Any:
    """Conger's kappa: chance agreement from each annotator's own label shares (Conger 1980;
    Gwet 2014), so it needs Votes with annotator ids.
    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": list("aabbcc"), "annotator": ["x", "y"] * 3,
    ...                    "label": ["p", "p", "n", "n", "p", "n"]})
    >>> round(conger_kappa(Votes.from_long(df)).value, 4)  # Cohen's kappa for two annotators
    0.4
    """
    return _one("conger_kappa", votes, weights=weights, values=values, n_boot=n_boot,
                confidence=confidence, rng=rng, keys=keys)
