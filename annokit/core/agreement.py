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
from annokit.core.resample import (
    as_item_keys,
    bootstrap_replicates,
    percentile_interval,
    seed_from_rng,
)
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


def krippendorff_alpha(counts: Any, *, n_boot: int = 0, confidence: float = 0.95,
                       rng: np.random.Generator | int | None = None, keys: Any = None
                       ) -> AgreementResult:
    """Krippendorff's alpha for nominal data from an items x labels count matrix.

    Parameters
    ----------
    counts : array-like of shape (n_items, n_labels)
        Vote counts per item and label (``Votes.counts()``).
    n_boot : int, default=0
        Bootstrap replicates (Poisson item weights, :mod:`annokit.core.resample`); 0 for none.
    confidence : float, default=0.95
    rng : numpy Generator, int seed or None
        Seed of the bootstrap (a Generator draws one seed; None: fresh entropy).
    keys : array-like of shape (n_items,), optional
        Item ids (``Votes.item_ids``), so that an item's bootstrap weights do not
        depend on its row; default row positions.

    Returns
    -------
    AgreementResult

    Raises
    ------
    SchemaError
        When no item has two votes, or ``keys`` does not match ``counts``.
    InvalidValueError
        On a negative ``n_boot`` or ``confidence`` outside (0, 1).

    Notes
    -----
    With ``m_i`` votes on item ``i`` and ``n_ic`` of them for label ``c``, over
    items with ``m_i >= 2``, the coincidences give (Krippendorff 2011, eq. for
    nominal data)

    .. math:: \\alpha = 1 - (n - 1) \\frac{\\sum_i (m_i^2 - \\sum_c n_{ic}^2)/(m_i - 1)}
              {n^2 - \\sum_c n_c^2}, \\quad n_c = \\sum_i n_{ic},\\ n = \\sum_c n_c.

    It equals ``krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")``.
    A bootstrap replicate weights item ``i``'s terms by its Poisson count.

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability.
    https://repository.upenn.edu/asc_papers/43

    Examples
    --------
    >>> round(krippendorff_alpha([[3, 0], [0, 3], [2, 1]]).value, 4)
    0.6
    """
    arr, keys = _pairable(counts, keys, "krippendorff_alpha")
    disagreement, _ = coincidence_parts(arr)

    def stat(w: np.ndarray) -> np.ndarray:
        return nominal_alpha(w @ disagreement, w @ arr)

    point = float(stat(np.ones(len(arr))))
    if not np.isfinite(point):
        warnings.warn("krippendorff_alpha: every vote has the same label, alpha is undefined (nan)",
                      DegenerateInputWarning, stacklevel=2)
    return _with_ci(point, stat, len(arr), keys, n_boot=n_boot, confidence=confidence, rng=rng)


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
