"""Chance-corrected inter-annotator agreement from vote counts.

Both coefficients are computed from the (n_items, n_labels) count matrix, so
they handle unequal numbers of votes per item and need no annotator ids. Items
with fewer than two votes cannot be paired and are left out (with a warning).
Bootstrap intervals resample items with replacement; all replicates are
computed at once as weighted sums (a replicate is a vector of item weights).
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from annokit.core.checks import check_counts, check_rng
from annokit.errors import DegenerateInputWarning, VoteSchemaError

__all__ = ["AgreementResult", "fleiss_kappa", "krippendorff_alpha"]


@dataclass(frozen=True)
class AgreementResult:
    """A coefficient with its percentile bootstrap interval (None without bootstrap)."""

    value: float
    ci_low: float | None
    ci_high: float | None
    n_items: int
    n_boot: int
    confidence: float

    def __float__(self) -> float:
        return self.value

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _pairable(counts: Any, name: str) -> np.ndarray:
    arr = check_counts(counts, allow_empty_rows=True)
    m = arr.sum(axis=1)
    keep = m >= 2
    n_single = int((~keep).sum())
    if n_single:
        warnings.warn(f"{name}: {n_single} item(s) with fewer than two votes cannot be paired and "
                      "were left out", DegenerateInputWarning, stacklevel=3)
    arr = arr[keep]
    if arr.shape[0] == 0:
        raise VoteSchemaError(f"{name} needs at least one item with two or more votes")
    return arr


def _bootstrap_weights(n_items: int, n_boot: int, rng: np.random.Generator,
                       block: int = 256):
    """Yield (block, n_items) matrices of bootstrap resampling counts."""
    done = 0
    while done < n_boot:
        b = min(block, n_boot - done)
        draws = rng.integers(0, n_items, size=(b, n_items))
        offsets = (np.arange(b) * n_items)[:, None]
        yield np.bincount((draws + offsets).ravel(), minlength=b * n_items).reshape(b, n_items)
        done += b


def _with_ci(point: float, stat_of_weights, n_items: int, *, n_boot: int, confidence: float,
             rng: np.random.Generator | int | None) -> AgreementResult:
    if n_boot < 0:
        raise VoteSchemaError(f"n_boot must be >= 0; got {n_boot}")
    if not 0 < confidence < 1:
        raise VoteSchemaError(f"confidence must be in (0, 1); got {confidence}")
    if n_boot == 0:
        return AgreementResult(point, None, None, n_items, 0, confidence)
    gen = check_rng(rng)
    reps = np.concatenate([stat_of_weights(w) for w in _bootstrap_weights(n_items, n_boot, gen)])
    reps = reps[np.isfinite(reps)]
    alpha = (1 - confidence) / 2
    low, high = (np.quantile(reps, [alpha, 1 - alpha]) if reps.size else (np.nan, np.nan))
    return AgreementResult(point, float(low), float(high), n_items, n_boot, confidence)


def krippendorff_alpha(counts: Any, *, n_boot: int = 0, confidence: float = 0.95,
                       rng: np.random.Generator | int | None = None) -> AgreementResult:
    """Krippendorff's alpha for nominal data from an items x labels count matrix.

    Parameters
    ----------
    counts : array-like of shape (n_items, n_labels)
        Vote counts per item and label (``Votes.counts()``).
    n_boot : int, default=0
        Bootstrap replicates (items resampled with replacement); 0 for none.
    confidence : float, default=0.95
    rng : numpy Generator or int seed, optional

    Returns
    -------
    AgreementResult

    Notes
    -----
    With ``m_i`` votes on item ``i`` and ``n_ic`` of them for label ``c``, over
    items with ``m_i >= 2``, the coincidences give (Krippendorff 2011, eq. for
    nominal data)

    .. math:: \\alpha = 1 - (n - 1) \\frac{\\sum_i (m_i^2 - \\sum_c n_{ic}^2)/(m_i - 1)}
              {n^2 - \\sum_c n_c^2}, \\quad n_c = \\sum_i n_{ic},\\ n = \\sum_c n_c.

    It equals ``krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")``.

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability.
    https://repository.upenn.edu/asc_papers/43

    Examples
    --------
    >>> round(krippendorff_alpha([[3, 0], [0, 3], [2, 1]]).value, 4)
    0.6
    """
    arr = _pairable(counts, "krippendorff_alpha").astype(np.float64)
    m = arr.sum(axis=1)
    disagreement = (m**2 - (arr**2).sum(axis=1)) / (m - 1)

    def stat(w: np.ndarray) -> np.ndarray:
        n = w @ m
        n_c = w @ arr
        expected = n**2 - (n_c**2).sum(axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return 1.0 - (n - 1) * (w @ disagreement) / expected

    point = float(stat(np.ones(len(arr))))
    if not np.isfinite(point):
        warnings.warn("krippendorff_alpha: every vote has the same label, alpha is undefined (nan)",
                      DegenerateInputWarning, stacklevel=2)
    return _with_ci(point, stat, len(arr), n_boot=n_boot, confidence=confidence, rng=rng)


def fleiss_kappa(counts: Any, *, n_boot: int = 0, confidence: float = 0.95,
                 rng: np.random.Generator | int | None = None) -> AgreementResult:
    """Fleiss' kappa from an items x labels count matrix, allowing unequal votes per item.

    Notes
    -----
    Per item the observed agreement is
    :math:`P_i = \\sum_c n_{ic}(n_{ic} - 1) / (m_i (m_i - 1))` (Fleiss 1971, eq. 2),
    :math:`\\bar P` its mean over items with ``m_i >= 2``; label prevalences are
    :math:`p_c = \\sum_i n_{ic} / \\sum_i m_i` (pooled over all votes, which for
    equal ``m_i`` is Fleiss' eq. 1) and :math:`P_e = \\sum_c p_c^2`;
    :math:`\\kappa = (\\bar P - P_e) / (1 - P_e)`. With equal votes per item it
    is exactly Fleiss (1971).

    References
    ----------
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
    Psychological Bulletin 76(5), 378-382. doi:10.1037/h0031619

    Examples
    --------
    >>> round(fleiss_kappa([[3, 0], [0, 3], [2, 1]]).value, 4)
    0.5
    """
    arr = _pairable(counts, "fleiss_kappa").astype(np.float64)
    m = arr.sum(axis=1)
    p_item = ((arr * (arr - 1)).sum(axis=1)) / (m * (m - 1))

    def stat(w: np.ndarray) -> np.ndarray:
        p_bar = (w @ p_item) / w.sum(axis=-1)
        p_c = (w @ arr) / (w @ m)[..., None]
        p_e = (p_c**2).sum(axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (p_bar - p_e) / (1 - p_e)

    point = float(stat(np.ones(len(arr))))
    if not np.isfinite(point):
        warnings.warn("fleiss_kappa: every vote has the same label, kappa is undefined (nan)",
                      DegenerateInputWarning, stacklevel=2)
    return _with_ci(point, stat, len(arr), n_boot=n_boot, confidence=confidence, rng=rng)
