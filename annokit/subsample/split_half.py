"""Split-half draws of the human ceiling and DistCE histogram divergences (Baan et al. 2022).

:func:`split_half` draws two disjoint k-vote "human classifiers" per item;
their metrics (every registered metric of H1 as a model of all votes, or of
H2) are computed by the evaluation engine in
:func:`annokit.metrics.ceiling.split_half_ceiling`. Here only the draws and
what needs nothing but the core divergences: each half's DistCE (TVD) to the
reference, and :func:`distce_histogram_divergence` between two histograms of
per-item errors (Baan et al. 2022, Table 2).

Re-exported by :mod:`annokit.subsample`; import from there.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from annokit.core.checks import check_option, check_probs, check_rng, seed_or_rng
from annokit.core.divergence import KL_EPS, kl_divergence, tvd
from annokit.core.votes import Votes
from annokit.errors import DegenerateInputWarning, InvalidValueError, SchemaError
from annokit.subsample import engine as _eng
from annokit.subsample._checks import as_counts, check_k, short_items

__all__ = ["HistogramDivergence", "SplitHalf", "distce_histogram_divergence", "split_half"]


@dataclass(frozen=True)
class SplitHalf:
    """Two disjoint k-vote "human classifiers" H1, H2 and their DistCE.

    Attributes
    ----------
    k : int
    reference : {"full", "rest"}
    h1, h2 : ndarray of shape (n_items, n_labels)
        Label distributions of the two disjoint k-vote subsamples.
    counts_h1, counts_h2 : ndarray of int64, shape (n_items, n_labels)
        Their vote counts (``h1 = counts_h1 / k``).
    reference_probs : ndarray of shape (n_items, n_labels)
        What DistCE is measured against: all votes ("full") or the votes in
        neither half ("rest").
    reference_counts : ndarray of int64, shape (n_items, n_labels)
        The votes behind ``reference_probs``.
    distce_h1, distce_h2 : ndarray of shape (n_items,)
        ``TVD(H, reference)`` per item (Baan et al.'s DistCE).
    item_ids : ndarray of shape (n_items,)
    item_positions : ndarray of shape (n_items,)
        Rows of the input the items come from (fewer under ``short="skip"``).
    n_short : int
        Items with fewer than ``2k`` (or ``2k + 1`` for "rest") votes.
    """

    k: int
    reference: str
    h1: np.ndarray
    h2: np.ndarray
    counts_h1: np.ndarray
    counts_h2: np.ndarray
    reference_probs: np.ndarray
    reference_counts: np.ndarray
    distce_h1: np.ndarray
    distce_h2: np.ndarray
    item_ids: np.ndarray
    item_positions: np.ndarray
    n_short: int

    def distce(self, probs: Any) -> np.ndarray:
        """DistCE (TVD) of another classifier's probabilities against the same reference.

        ``probs`` has shape (n_items, n_labels), rows in this object's item
        order and columns in the label order of the votes.
        """
        probs = check_probs(probs, name="probs")
        if probs.shape != self.reference_probs.shape:
            raise SchemaError(f"probs has shape {probs.shape}; expected "
                                  f"{self.reference_probs.shape} (items x labels of the split)")
        return tvd(probs, self.reference_probs)


def split_half(data: Votes | Any, k: int = 20, *, rng: np.random.Generator | int | None = None,
               seed: int | None = None,
               reference: Literal["full", "rest"] = "full",
               short: Literal["error", "skip"] = "error") -> SplitHalf:
    """Two disjoint k-vote subsamples per item (H1, H2) and their DistCE.

    Parameters
    ----------
    data : Votes or array-like of shape (n_items, n_labels)
    k : int, default=20
        Votes in each half (Baan et al. use 20 of ChaosNLI's 100).
    rng : numpy Generator, int seed or None
    reference : {"full", "rest"}, default="full"
        Measure DistCE against all votes (as Baan et al.'s paper text says,
        "the 100 available annotations") or against the votes in neither half
        (what their released notebook does: the remaining 60 votes), which
        keeps H1 and H2 independent of the reference.
    short : {"error", "skip"}, default="error"
        Items with too few votes for two halves (and a non-empty rest).
    seed : int, optional
        The same as ``rng=`` an int (the name ``evaluate`` uses); give one of the two.

    Returns
    -------
    SplitHalf

    Notes
    -----
    The item's votes are put in a uniformly random order; H1 is the first k,
    H2 the next k, the rest the remaining ``n - 2k`` votes (Baan et al. 2022,
    Section 5, "How Good is Good?").

    Examples
    --------
    >>> sh = split_half([[30, 60, 10], [90, 5, 5]], k=20, rng=0)
    >>> sh.h1.shape, bool((sh.distce_h1 <= 1).all())
    ((2, 3), True)
    """
    rng = seed_or_rng(seed, rng, "split_half", default=None)
    check_option("reference", reference, ("full", "rest"))
    check_option("short", short, ("error", "skip"))
    k = check_k(k)
    counts, item_ids, _, _ = as_counts(data)
    if counts.shape[1] < 2:
        raise SchemaError(f"a split-half ceiling needs at least two labels; got "
                              f"{counts.shape[1]}")
    gen = check_rng(rng)
    n = counts.sum(axis=1)
    need = 2 * k + (1 if reference == "rest" else 0)
    mask = short_items(n, need, short, ids=item_ids)
    keep = np.flatnonzero(~mask)
    if keep.size == 0:
        raise SchemaError(f"no item has the {need} votes a split into two halves of k={k} "
                              "needs")
    sub = counts[keep]
    draws = {}
    for t, X in _eng.nested_count_draws(sub, 2 * k, 1, gen, (k, 2 * k)):
        draws[t] = X.copy()
    kk = np.full(len(keep), float(k))
    x1 = _eng.cumulative_to_counts(draws[k], kk)[:, 0, :].T.astype(np.int64)
    x12 = _eng.cumulative_to_counts(draws[2 * k], 2 * kk)[:, 0, :].T.astype(np.int64)
    x2 = x12 - x1
    h1 = x1 / k
    h2 = x2 / k
    ref_counts = sub if reference == "full" else sub - x12
    ref = ref_counts / ref_counts.sum(axis=1, keepdims=True)
    return SplitHalf(k=k, reference=reference, h1=h1, h2=h2, counts_h1=x1, counts_h2=x2,
                     reference_probs=ref, reference_counts=np.asarray(ref_counts, dtype=np.int64),
                     distce_h1=tvd(h1, ref), distce_h2=tvd(h2, ref), item_ids=item_ids[keep],
                     item_positions=keep, n_short=int(mask.sum()))


@dataclass(frozen=True)
class HistogramDivergence:
    """KL and TVD between two histograms of per-item errors.

    Attributes
    ----------
    kl : float
        ``KL(P || Q)`` in nats between the normalised histograms, Q clipped at
        ``eps`` (``inf`` would result where Q has an empty bin that P uses).
    tvd : float
    edges : ndarray of shape (n_bins + 1,)
    hist_p, hist_q : ndarray of shape (n_bins,)
        Item counts per bin.
    n_empty_q_bins : int
        Bins empty in Q but not in P (each makes the unclipped KL infinite).
    """

    kl: float
    tvd: float
    edges: np.ndarray
    hist_p: np.ndarray
    hist_q: np.ndarray
    n_empty_q_bins: int

    def to_dict(self) -> dict[str, Any]:
        return {"kl": self.kl, "tvd": self.tvd, "n_bins": len(self.edges) - 1,
                "range": [float(self.edges[0]), float(self.edges[-1])],
                "n_empty_q_bins": self.n_empty_q_bins}


def distce_histogram_divergence(errors_p: Any, errors_q: Any, *, n_bins: int = 30,
                                range: tuple[float, float] = (0.0, 1.0),
                                eps: float = KL_EPS) -> HistogramDivergence:
    """KL and TVD between the histograms of two classifiers' per-item errors.

    Parameters
    ----------
    errors_p, errors_q : array-like of shape (n_items_p,), (n_items_q,)
        Per-item errors, e.g. DistCE of H1 and of a model (Baan et al. 2022, Table 2
        compares H1 with H2, RoBERTa and RoBERTa-TS).
    n_bins : int, default=30
        Equal-width bins over ``range`` (Baan et al.'s notebook: 30 bins on [0, 1]).
    range : (float, float), default=(0.0, 1.0)
        Histogram range; values outside it raise (they are not dropped).
    eps : float, default=1e-15
        Clip for Q's bin probabilities inside KL.

    Returns
    -------
    HistogramDivergence

    Notes
    -----
    ``P = hist_p / sum(hist_p)``, ``Q = hist_q / sum(hist_q)``;
    ``KL(P || Q) = sum_b P_b log(P_b / Q_b)`` (natural log, as
    ``scipy.stats.entropy(P, Q)`` in Baan et al.'s code), ``TVD = 1/2 sum_b |P_b - Q_b|``.

    Examples
    --------
    >>> d = distce_histogram_divergence([0.05, 0.1, 0.2], [0.05, 0.1, 0.2])
    >>> d.kl, d.tvd
    (0.0, 0.0)
    """
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise InvalidValueError(f"n_bins must be a positive integer; got {n_bins!r}")
    lo, hi = (float(range[0]), float(range[1]))
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise InvalidValueError(f"range must be two finite numbers, low < high; got {range!r}")
    hists = []
    for name, errs in (("errors_p", errors_p), ("errors_q", errors_q)):
        arr = np.asarray(errs, dtype=np.float64).reshape(-1)
        if arr.size == 0:
            raise SchemaError(f"{name} is empty")
        if not np.isfinite(arr).all():
            raise InvalidValueError(f"{name} has NaN or infinite values")
        out = (arr < lo) | (arr > hi)
        if out.any():
            raise InvalidValueError(f"{name} has {int(out.sum())} value(s) outside range "
                                  f"[{lo}, {hi}], e.g. {arr[out][:3].tolist()}")
        h, edges = np.histogram(arr, bins=int(n_bins), range=(lo, hi))
        hists.append(h)
    hp, hq = hists
    p = hp / hp.sum()
    q = hq / hq.sum()
    empty = int(((hq == 0) & (hp > 0)).sum())
    if empty:
        warnings.warn(f"{empty} bin(s) are empty in errors_q but not in errors_p: KL(P || Q) is "
                      f"infinite without clipping; Q is clipped at {eps}",
                      DegenerateInputWarning, stacklevel=2)
    kl = float(kl_divergence(p[None], q[None], eps=eps)[0])
    return HistogramDivergence(kl=kl, tvd=float(tvd(p[None], q[None])[0]), edges=edges,
                               hist_p=hp, hist_q=hq, n_empty_q_bins=empty)
