"""Numeric ratings (interval or ratio data) and their per-item summaries.

:class:`Ratings` is the numeric counterpart of :class:`~annokit.core.votes.Votes`:
one row per rating as aligned arrays (``item_index``, ``annotator_index``,
``values``) with the id tables. Continuous judgements (a -50..50 slider,
Pavlick & Kwiatkowski 2019) have no fixed categories, so soft labels are
histograms over declared bins or over the distinct values
(:meth:`Ratings.soft_labels`), and each item is summarised by its mean,
standard deviation and Sarle's bimodality coefficient (:meth:`Ratings.summary`).
Every summary is a grouped sum (``numpy.bincount``), with no loop over items.

References
----------
Pavlick, E. & Kwiatkowski, T. (2019). Inherent disagreements in human textual
inferences. TACL 7, 677-694. doi:10.1162/tacl_a_00293

Pfister, R., Schwarz, K. A., Janczyk, M., Dale, R. & Freeman, J. B. (2013).
Good things peak in pairs: a note on the bimodality coefficient. Frontiers in
Psychology 4, 700. doi:10.3389/fpsyg.2013.00700

SAS Institute (1990). SAS/STAT User's Guide, Version 6, 4th ed., PROC CLUSTER
(the bimodality coefficient with sample-size-corrected skewness and kurtosis).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.checks import first_offenders
from annokit.core.labels import LabelSet, factorize_ids, scalar_to_str
from annokit.core.scales import NUMERIC_SCALES, check_scale, ordered_names
from annokit.core.votes import Votes
from annokit.errors import DegenerateInputWarning, InvalidValueError, SchemaError

__all__ = ["BIMODALITY_THRESHOLD", "Ratings", "RatingHistogram", "bimodality_coefficient"]

#: Sarle's bimodality coefficient of the uniform distribution (5/9); larger values suggest
#: bimodality (Pfister et al. 2013).
BIMODALITY_THRESHOLD = 5 / 9


@dataclass(frozen=True)
class RatingHistogram:
    """Per-item histograms of ratings: soft labels for numeric data.

    Attributes
    ----------
    counts : ndarray of shape (n_items, n_bins)
        Ratings of each item in each bin.
    probs : ndarray of shape (n_items, n_bins)
        ``counts`` normalised per item (soft labels).
    edges : ndarray of shape (n_bins + 1,) or None
        Bin edges (bins ``[e_j, e_{j+1})``, the last one closed), or None when the
        bins are the distinct values.
    values : ndarray of shape (n_bins,)
        The distinct values, or the bin centres.
    names : list of str
        A label name per bin (the value, or ``"[a, b)"``), for a :class:`LabelSet`.
    """

    counts: np.ndarray
    probs: np.ndarray
    edges: np.ndarray | None
    values: np.ndarray
    names: list[str]


class Ratings:
    """Numeric ratings of items by annotators (interval or ratio scale).

    Parameters
    ----------
    item_index : ndarray of shape (n_ratings,)
        Item code of each rating, in ``range(n_items)``; every item has a rating.
    values : ndarray of shape (n_ratings,)
        The ratings, finite numbers (>= 0 on a ratio scale).
    item_ids : array-like of str, shape (n_items,)
    annotator_index : ndarray of shape (n_ratings,), optional
    annotator_ids : array-like of str, shape (n_annotators,), optional
    scale : {"interval", "ratio"}, default="interval"
    source : str
        Where the ratings come from, for messages.

    Examples
    --------
    >>> r = Ratings.from_long(["a", "a", "b", "b"], ["x", "y", "x", "y"], [1.0, 3.0, -2, -2])
    >>> r.n_items, r.n_ratings, r.mean().tolist()
    (2, 4, [2.0, -2.0])
    """

    annotator_index: np.ndarray | None
    annotator_ids: np.ndarray | None
    #: How a reader of :mod:`annokit.io` read the ratings (None for ratings built in Python).
    read_info: str | None = None

    def __init__(self, item_index: Any, values: Any, *, item_ids: Any,
                 annotator_index: Any = None, annotator_ids: Any = None,
                 scale: str = "interval", source: str = "ratings"):
        scale = _check_ratings_scale(scale, source)
        self.scale = scale
        self.source = source
        self.item_ids = np.asarray(item_ids, dtype=object).reshape(-1)
        item_index = np.asarray(item_index)
        values = np.asarray(values, dtype=np.float64)
        if item_index.ndim != 1 or item_index.shape != values.shape:
            raise SchemaError(f"{source}: item_index and values must be 1-D of equal length; got "
                              f"{item_index.shape} and {values.shape}")
        self.item_index = _codes(item_index, len(self.item_ids), "item_index", source)
        if np.bincount(self.item_index, minlength=len(self.item_ids)).min(initial=1) == 0:
            raise SchemaError(f"{source}: every item needs a rating")
        if pd.Index(self.item_ids).has_duplicates:
            dup = pd.Index(self.item_ids)[pd.Index(self.item_ids).duplicated()].unique()
            raise SchemaError(f"{source}: item ids must be unique; repeated {first_offenders(dup)}")
        bad = ~np.isfinite(values)
        if bad.any():
            j = int(np.argmax(bad))
            where = f"{source}: rating {j} (item {self.item_ids[self.item_index[j]]!r})"
            raise InvalidValueError(f"{where} is not a finite number: {float(values[j])!r}")
        if scale == "ratio" and (values < 0).any():
            j = int(np.argmax(values < 0))
            where = f"{source}: rating {j} (item {self.item_ids[self.item_index[j]]!r})"
            raise InvalidValueError(f"{where} is {float(values[j])!r}; ratio data are >= 0 (use "
                                    "scale='interval')")
        self.values = values
        if annotator_index is None:
            if annotator_ids is not None:
                raise SchemaError(f"{source}: annotator_ids given without annotator_index")
            self.annotator_index = self.annotator_ids = None
        else:
            self.annotator_ids = np.asarray(annotator_ids, dtype=object).reshape(-1)
            self.annotator_index = _codes(np.asarray(annotator_index), len(self.annotator_ids),
                                          "annotator_index", source)
            if self.annotator_index.shape != values.shape:
                raise SchemaError(f"{source}: annotator_index must have one code per rating")

    # -- constructors -----------------------------------------------------------

    @classmethod
    def from_long(cls, item: Any, annotator: Any, value: Any, *, scale: str = "interval",
                  duplicates: str = "error", source: str = "ratings") -> Ratings:
        """Ratings from aligned columns of item ids, annotator ids (or None) and values.

        Parameters
        ----------
        item, annotator, value : array-like of shape (n_ratings,)
            ``annotator`` may be None (annotators unknown).
        scale : {"interval", "ratio"}
        duplicates : {"error", "first", "last", "keep"}
            Repeated (item, annotator) ratings: refuse them naming the first, keep the
            first or last of each (the number dropped is ``n_duplicates_removed``), or keep all.

        Raises
        ------
        SchemaError
            Missing ids, columns of unequal length, or repeated (item, annotator) pairs
            with ``duplicates="error"``.
        """
        if duplicates not in ("error", "first", "last", "keep"):
            raise InvalidValueError(f"duplicates must be one of ['error', 'first', 'last', "
                                    f"'keep']; got {duplicates!r}")
        item_codes, item_ids = factorize_ids(item, what="item id", where=source)
        values = np.asarray(value, dtype=np.float64).reshape(-1)
        ann_codes = ann_ids = None
        if annotator is not None:
            ann_codes, ann_ids = factorize_ids(annotator, what="annotator id", where=source)
        n_removed = 0
        if ann_codes is not None and ann_ids is not None and duplicates != "keep":
            pair = item_codes * (len(ann_ids) + 1) + ann_codes
            dup = pd.Series(pair).duplicated(keep="last" if duplicates == "last" else "first")
            dup = dup.to_numpy()
            if dup.any():
                if duplicates == "error":
                    j = int(np.argmax(dup))
                    raise SchemaError(
                        f"{source}: {int(dup.sum())} repeated (item, annotator) rating(s), first "
                        f"at row {j}: item {item_ids[item_codes[j]]!r}, annotator "
                        f"{ann_ids[ann_codes[j]]!r}; pass duplicates='first', 'last' or 'keep'")
                n_removed = int(dup.sum())
                keep = ~dup
                item_codes, ann_codes, values = item_codes[keep], ann_codes[keep], values[keep]
        out = cls(item_codes, values, item_ids=item_ids, annotator_index=ann_codes,
                  annotator_ids=ann_ids, scale=scale, source=source)
        out.n_duplicates_removed = n_removed
        return out

    @classmethod
    def from_votes(cls, votes: Votes, *, scale: str = "interval") -> Ratings:
        """The votes of a label set with numeric names (a Likert scale) as numeric ratings.

        Raises
        ------
        InvalidValueError
            When a label name is not a number.

        Examples
        --------
        >>> v = Votes.from_counts([[1, 0, 2], [0, 3, 0]], labels=["1", "2", "5"])
        >>> Ratings.from_votes(v).mean().tolist()
        [3.6666666666666665, 2.0]
        """
        values = LabelSet(votes.labels.names, scale=_check_ratings_scale(scale, votes.source)).values
        if values is None:  # an interval or ratio LabelSet refuses a name that is not a number
            raise ValueError(f"{votes.source}: labels {list(votes.labels.names)} have no values")
        return cls(votes.item_index, values[votes.label_index], item_ids=votes.item_ids,
                   annotator_index=votes.annotator_index, annotator_ids=votes.annotator_ids,
                   scale=scale, source=votes.source)

    n_duplicates_removed: int = 0

    # -- shape ------------------------------------------------------------------

    @property
    def n_items(self) -> int:
        return len(self.item_ids)

    @property
    def n_ratings(self) -> int:
        return len(self.values)

    @property
    def n_annotators(self) -> int | None:
        return None if self.annotator_ids is None else len(self.annotator_ids)

    def __len__(self) -> int:
        return self.n_ratings

    def __repr__(self) -> str:
        return (f"Ratings(n_items={self.n_items}, n_annotators={self.n_annotators}, "
                f"n_ratings={self.n_ratings}, scale={self.scale!r})")

    def ratings_per_item(self) -> np.ndarray:
        """Number of ratings of each item, shape (n_items,)."""
        return np.bincount(self.item_index, minlength=self.n_items)

    def distinct_values(self) -> tuple[np.ndarray, np.ndarray]:
        """The sorted distinct values and each rating's position among them."""
        return np.unique(self.values, return_inverse=True)

    def to_long(self) -> pd.DataFrame:
        """One row per rating: ``item``, ``annotator`` (when known) and ``rating`` columns."""
        data: dict[str, Any] = {"item": self.item_ids[self.item_index]}
        if self.annotator_index is not None and self.annotator_ids is not None:
            data["annotator"] = self.annotator_ids[self.annotator_index]
        data["rating"] = self.values
        return pd.DataFrame(data)

    def to_votes(self, *, scale: str = "ordinal") -> Votes:
        """The ratings as votes whose labels are the distinct values in numeric order.

        ``scale`` is the label set's (``"nominal"`` to treat the values as unordered
        categories, ``"ordinal"``, ``"interval"``). Names are the values' shortest text
        (``2.0`` -> ``"2"``, ``0.25`` -> ``"0.25"``).

        Examples
        --------
        >>> Ratings.from_long(["a", "a"], None, [2.0, 0.5]).to_votes().labels
        LabelSet(['0.5', '2'], scale='ordinal')
        """
        distinct, codes = self.distinct_values()
        names = [scalar_to_str(float(v)) for v in distinct]
        labels = LabelSet(ordered_names(names, "ordinal"), scale=scale)
        return Votes(self.item_index, codes, item_ids=self.item_ids, labels=labels,
                     annotator_index=self.annotator_index, annotator_ids=self.annotator_ids,
                     duplicates="keep", source=self.source)

    # -- per-item summaries -----------------------------------------------------

    def _sums(self, shift: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
        n = self.ratings_per_item().astype(np.float64)
        mean = np.bincount(self.item_index, self.values, minlength=self.n_items) / n
        d = self.values - mean[self.item_index]
        moments = [np.bincount(self.item_index, d**p, minlength=self.n_items) / n
                   for p in (2, 3, 4)]
        return n, mean, *moments

    def mean(self) -> np.ndarray:
        """Mean rating of each item, shape (n_items,)."""
        return self._sums()[1]

    def std(self, *, ddof: int = 1) -> np.ndarray:
        """Standard deviation of each item's ratings (``ddof=1``: the sample one; NaN with
        ``ddof`` or fewer ratings), shape (n_items,).

        Examples
        --------
        >>> Ratings.from_long(["a"] * 3, None, [1.0, 2.0, 6.0]).std().round(4).tolist()
        [2.6458]
        """
        n, _, m2, _, _ = self._sums()
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > ddof, np.sqrt(m2 * n / (n - ddof)), np.nan)

    def bimodality(self, *, warn: bool = True) -> np.ndarray:
        """Sarle's bimodality coefficient of each item's ratings (:func:`bimodality_coefficient`).

        NaN for items with fewer than four ratings or no spread (warned, with their number).
        """
        n, _, m2, m3, m4 = self._sums()
        out = _bimodality_from_moments(n, m2, m3, m4)
        bad = int(np.isnan(out).sum())
        if bad and warn:
            warnings.warn(f"{self.source}: the bimodality coefficient is undefined (nan) for {bad} "
                          "item(s) with fewer than 4 ratings or all ratings equal",
                          DegenerateInputWarning, stacklevel=2)
        return out

    def summary(self) -> pd.DataFrame:
        """Per-item table: ``item``, ``n_ratings``, ``mean``, ``sd`` (sample), ``bimodality``.

        Examples
        --------
        >>> r = Ratings.from_long(["a"] * 10, None, [-40.0] * 5 + [40.0] * 5)
        >>> row = r.summary().iloc[0]
        >>> int(row["n_ratings"]), float(row["mean"]), round(float(row["bimodality"]), 6)  # 56/99
        (10, 0.0, 0.565657)
        """
        return pd.DataFrame({"item": self.item_ids, "n_ratings": self.ratings_per_item(),
                             "mean": self.mean(), "sd": self.std(),
                             "bimodality": self.bimodality()})

    def soft_labels(self, *, bins: Sequence[float] | None = None) -> RatingHistogram:
        """Per-item histograms over declared bin edges, or over the distinct values.

        Parameters
        ----------
        bins : sequence of float, optional
            Increasing bin edges ``e_0 < ... < e_B``: bins ``[e_j, e_{j+1})``, the last
            one closed (as :func:`numpy.histogram`). Without it each distinct value is a bin.

        Raises
        ------
        InvalidValueError
            Edges that are not increasing finite numbers, or a rating outside
            ``[e_0, e_B]`` (the message counts them and names the first item).

        Examples
        --------
        >>> r = Ratings.from_long(["a"] * 4 + ["b"] * 2, None, [-50, -10, 10, 50, 0, 0])
        >>> r.soft_labels(bins=[-50, 0, 50]).probs.tolist()
        [[0.5, 0.5], [0.0, 1.0]]
        >>> r.soft_labels().names
        ['-50', '-10', '0', '10', '50']
        """
        if bins is None:
            distinct, codes = self.distinct_values()
            edges = None
            centres = distinct
            names = [scalar_to_str(float(v)) for v in distinct]
        else:
            edges = np.asarray(bins, dtype=np.float64).reshape(-1)
            if edges.size < 2 or not np.isfinite(edges).all() or (np.diff(edges) <= 0).any():
                raise InvalidValueError(f"bins must be at least two increasing finite edges; "
                                        f"got {np.asarray(bins).tolist()}")
            out = (self.values < edges[0]) | (self.values > edges[-1])
            if out.any():
                j = int(np.argmax(out))
                raise InvalidValueError(
                    f"{self.source}: {int(out.sum())} rating(s) outside the bins "
                    f"[{edges[0]:g}, {edges[-1]:g}], first {self.values[j]:g} on item "
                    f"{self.item_ids[self.item_index[j]]!r}; widen the edges")
            codes = np.clip(np.searchsorted(edges, self.values, side="right") - 1, 0,
                            edges.size - 2)
            centres = (edges[:-1] + edges[1:]) / 2
            last = edges.size - 2
            names = [f"[{scalar_to_str(float(a))}, {scalar_to_str(float(b))}"
                     + ("]" if j == last else ")")
                     for j, (a, b) in enumerate(itertools.pairwise(edges))]
        k = len(centres)
        counts = np.bincount(self.item_index * k + codes, minlength=self.n_items * k)
        counts = counts.reshape(self.n_items, k)
        probs = counts / counts.sum(axis=1, keepdims=True)
        return RatingHistogram(counts, probs, edges, centres, names)


def _check_ratings_scale(scale: Any, source: str) -> str:
    """``scale``, refused unless it is interval or ratio (what ``Ratings`` hold)."""
    scale = check_scale(scale)
    if scale not in NUMERIC_SCALES:
        raise InvalidValueError(f"{source}: Ratings hold interval or ratio data; got scale "
                                f"{scale!r} (read ordered categories as Votes with scale=)")
    return scale


def _codes(codes: np.ndarray, n: int, name: str, source: str) -> np.ndarray:
    if codes.ndim != 1 or (codes.size and codes.dtype.kind not in "iu"):
        raise SchemaError(f"{source}: {name} must be a 1-D integer array")
    if codes.size and (codes.min() < 0 or codes.max() >= n):
        raise SchemaError(f"{source}: {name} has codes outside 0..{n - 1}")
    return codes.astype(np.int64, copy=False)


def _bimodality_from_moments(n: np.ndarray, m2: np.ndarray, m3: np.ndarray, m4: np.ndarray
                             ) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        ok = (n >= 4) & (m2 > 1e-12 * np.maximum(1.0, m4**0.5))
        g1 = np.sqrt(n * (n - 1)) / (n - 2) * m3 / m2**1.5
        g2 = (n - 1) / ((n - 2) * (n - 3)) * ((n + 1) * (m4 / m2**2 - 3) + 6)
        bc = (g1**2 + 1) / (g2 + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))
    return np.where(ok, bc, np.nan)


def bimodality_coefficient(values: Any) -> float:
    """Sarle's bimodality coefficient of one sample.

    Parameters
    ----------
    values : array-like of shape (n,)
        At least four finite numbers, not all equal.

    Returns
    -------
    float
        :math:`BC = (G_1^2 + 1) / (G_2 + 3(n-1)^2 / ((n-2)(n-3)))`, NaN when undefined.

    Notes
    -----
    :math:`G_1` is the sample skewness and :math:`G_2` the sample excess kurtosis,
    both corrected for sample size (SAS 1990; ``scipy.stats.skew(bias=False)`` and
    ``scipy.stats.kurtosis(bias=False)``): with central moments :math:`m_p`,
    :math:`G_1 = \\sqrt{n(n-1)}/(n-2) \\cdot m_3/m_2^{3/2}` and
    :math:`G_2 = (n-1)/((n-2)(n-3)) \\cdot ((n+1)(m_4/m_2^2 - 3) + 6)`.
    BC lies in (0, 1]; it is 1/3 for a normal, 5/9 for a uniform and 1 for a
    two-point distribution (in the large-sample limit); values above 5/9
    (:data:`BIMODALITY_THRESHOLD`) suggest bimodality (Pfister et al. 2013).

    Examples
    --------
    >>> round(bimodality_coefficient([0, 0, 0, 1, 1, 1]), 6)  # 12/35: small samples pull it down
    0.342857
    """
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    if not np.isfinite(x).all():
        raise InvalidValueError("bimodality_coefficient: values must be finite numbers")
    n = np.array([x.size], dtype=np.float64)
    if x.size == 0:
        return float("nan")
    d = x - x.mean()
    m2, m3, m4 = ((d**p).mean() for p in (2, 3, 4))
    return float(_bimodality_from_moments(n, np.array([m2]), np.array([m3]), np.array([m4]))[0])
