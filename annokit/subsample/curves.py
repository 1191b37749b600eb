"""How many annotations are enough: annotator subsampling curves and a recommendation.

Draw k votes per item without replacement (from long votes or from counts
alone), repeat R times with a seeded ``rng``, and measure how far the k-vote
label distribution is from the full-data distribution: total variation
distance (TVD, Baan et al.'s DistCE), Jensen-Shannon distance, KL divergence,
how often the k-vote majority equals the full majority, and the entropy bias.
The split-half "human ceiling" and the histogram comparison of Baan et al.
(2022, Table 2) are in :mod:`annokit.subsample.split_half`; the Dirichlet-multinomial
extrapolation beyond the observed number of votes in
:mod:`annokit.subsample.extrapolate`. Everything public is re-exported here.

References
----------
Baan, Aziz, Plank, Fernandez (2022). Stop Measuring Calibration When Humans
Disagree. EMNLP. arXiv:2210.16133.
Nie, Zhou, Bansal (2020). What Can We Learn from Collective Human Opinions on
Natural Language Inference Data? EMNLP. arXiv:2010.03532.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from annokit.core.checks import check_finite, check_int, check_open_unit, check_option, check_rng
from annokit.core.jsonable import finite_or_none, jsonable
from annokit.core.votes import Votes
from annokit.errors import InvalidValueError, SchemaError
from annokit.subsample import engine as _eng
from annokit.subsample._checks import ShortPolicy, as_counts, check_ks, check_reps, short_items
from annokit.subsample.extrapolate import DirichletMultinomial

__all__ = ["CURVE_KEYS", "TARGETS", "Recommendation", "SubsampleCurve", "curve_summary",
           "recommend_k", "subsampling_curve"]

#: Keys of each row of :meth:`SubsampleCurve.to_records` (the CLI's ``--json`` "curve").
CURVE_KEYS = ("k", "tvd_mean", "tvd_low", "tvd_high", "jsd_mean", "kl_mean",
              "majority_agreement", "entropy_bias")


# -- curves ---------------------------------------------------------------------

@dataclass
class SubsampleCurve:
    """Subsampling curves: k-vote estimates against the full-data distribution.

    Attributes
    ----------
    ks : ndarray of shape (n_k,)
    reps : int
    seed : int or None
        The integer seed when one was given.
    interval : float
        Coverage of the percentile interval (0.95: 2.5th to 97.5th percentile).
    n_items : int
    n_included : ndarray of shape (n_k,)
        Items entering each k (all unless ``short="skip"``).
    n_short : ndarray of shape (n_k,)
        Items with fewer than k votes.
    values : dict of str to ndarray of shape (reps, n_k)
        Per repetition, the mean over included items of each metric
        (``tvd``, ``jsd``, ``kl``, ``majority_agreement``, ``majority_tie``,
        ``entropy_bias``; on ordered scales also ``wasserstein``, on the labels'
        numbers for interval and ratio scales, on their ranks for ordinal ones).
    bin_edges : ndarray of shape (n_bins + 1,)
        Full-data entropy (bits) edges of the agreement bins (quantiles).
    bin_counts : ndarray of shape (n_bins,)
    bin_values : dict of str to ndarray of shape (reps, n_k, n_bins)
    item_tvd : ndarray of shape (n_items, n_k)
        Mean TVD over repetitions per item (NaN where skipped).
    grid_ks, grid_tvd : ndarray of shape (n_grid,), (reps, n_grid)
        Mean TVD at every k from 1 to half the fewest votes per item, all
        items included, for :func:`recommend_k`.
    """

    ks: np.ndarray
    reps: int
    seed: int | None
    interval: float
    n_items: int
    n_included: np.ndarray
    n_short: np.ndarray
    short: str
    method: str
    kl_smoothing: float
    values: dict[str, np.ndarray]
    bin_edges: np.ndarray
    bin_counts: np.ndarray
    bin_values: dict[str, np.ndarray]
    item_tvd: np.ndarray
    item_ids: np.ndarray
    grid_ks: np.ndarray
    grid_tvd: np.ndarray
    n_votes_min: int
    n_votes_max: int
    extras: dict[str, Any] = field(default_factory=dict)
    scale: str = "nominal"

    def _band(self, arr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lo = 100 * (1 - self.interval) / 2
        return (np.percentile(arr, lo, axis=0), np.percentile(arr, 100 - lo, axis=0))

    def to_frame(self) -> pd.DataFrame:
        """One row per k: means over repetitions and the TVD percentile interval."""
        tvd_lo, tvd_hi = self._band(self.values["tvd"])
        frame = pd.DataFrame({
            "k": self.ks,
            "tvd_mean": self.values["tvd"].mean(axis=0),
            "tvd_low": tvd_lo,
            "tvd_high": tvd_hi,
            "jsd_mean": self.values["jsd"].mean(axis=0),
            "kl_mean": self.values["kl"].mean(axis=0),
            "majority_agreement": self.values["majority_agreement"].mean(axis=0),
            "entropy_bias": self.values["entropy_bias"].mean(axis=0),
            "majority_tie_rate": self.values["majority_tie"].mean(axis=0),
            "n_items": self.n_included,
            "n_short": self.n_short,
        })
        if "wasserstein" in self.values:
            frame.insert(5, "wasserstein_mean", self.values["wasserstein"].mean(axis=0))
        return frame

    def to_records(self) -> list[dict[str, Any]]:
        """The JSON "curve": a list of dicts with the keys in :data:`CURVE_KEYS`."""
        frame = self.to_frame()
        out = []
        for row in frame.itertuples(index=False):
            rec = {"k": int(row.k)}
            for key in CURVE_KEYS[1:] + (("wasserstein_mean",) if "wasserstein" in self.values
                                         else ()):
                rec[key] = finite_or_none(getattr(row, key))
            out.append(rec)
        return out

    def by_bin(self) -> pd.DataFrame:
        """Mean TVD, JSD, agreement and entropy bias per k and agreement bin."""
        rows = []
        for b in range(len(self.bin_counts)):
            for i, k in enumerate(self.ks):
                rows.append({
                    "bin": b,
                    "entropy_low": self.bin_edges[b],
                    "entropy_high": self.bin_edges[b + 1],
                    "n_items_in_bin": int(self.bin_counts[b]),
                    "k": int(k),
                    **{f"{m}_mean": float(np.mean(self.bin_values[m][:, i, b]))
                       for m in ("tvd", "jsd", "majority_agreement", "entropy_bias")},
                })
        return pd.DataFrame(rows)

    def recommend(self, epsilon: float, **kwargs: Any) -> Recommendation:
        """Shortcut for :func:`recommend_k` on this curve."""
        return recommend_k(self, epsilon, **kwargs)


def _entropy_bins(counts: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Quantile bins of full-data entropy (bits): edges, bin of each item, items per bin.

    Edges are data values (the "lower" quantile), so no bin is empty; equal
    quantiles merge, leaving fewer bins. Bins are ``[low, high)``, the last closed.
    """
    p = counts / counts.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -np.where(p > 0, p * np.log2(np.where(p > 0, p, 1.0)), 0.0).sum(axis=1)
    h = np.round(h, 12) + 0.0  # no negative zeros in the edges
    edges = np.unique(np.quantile(h, np.linspace(0, 1, n_bins + 1), method="lower"))
    if len(edges) == 1 or edges[-1] < h.max():
        edges = np.r_[edges, h.max()] if edges[-1] < h.max() else np.r_[edges, edges[-1]]
    bins = np.clip(np.searchsorted(edges[1:-1], h, side="right"), 0, len(edges) - 2)
    sizes = np.bincount(bins, minlength=len(edges) - 1)
    keep = sizes > 0
    if not keep.all():  # merge empty bins into their left neighbour
        edges = np.r_[edges[:-1][keep], edges[-1]]
        bins = np.cumsum(keep)[bins] - 1
        sizes = sizes[keep]
    return edges, bins, sizes


def subsampling_curve(
    data: Votes | Any,
    ks: Sequence[int] = (1, 2, 5, 10, 20, 50),
    *,
    reps: int = 200,
    rng: np.random.Generator | int | None = None,
    short: ShortPolicy = "error",
    method: Literal["auto", "counts", "votes"] = "auto",
    n_bins: int = 4,
    interval: float = 0.95,
    kl_smoothing: float = 0.5,
    grid: bool = True,
    n_jobs: int = 1,
    progress: Callable[[float], None] | None = None,
) -> SubsampleCurve:
    """Subsampling curves: how far k-vote label distributions are from the full data.

    For each repetition, each item's votes are put in a uniformly random order
    and the first k votes form the k-vote estimate, for every k in ``ks`` (so
    the k-vote subsamples of one repetition are nested; each is an exact
    uniform k-subsample). Per repetition, each metric is averaged over items;
    the curve reports the mean over repetitions and a percentile interval.

    Parameters
    ----------
    data : Votes or array-like of shape (n_items, n_labels)
        Votes, or their counts.
    ks : sequence of int, default=(1, 2, 5, 10, 20, 50)
    reps : int, default=200
    rng : numpy Generator, int seed or None
    short : {"error", "skip", "keep"}, default="error"
        Items with fewer than k votes: raise, leave them out at that k, or
        use all their votes at that k. Counted in ``n_short`` either way.
    method : {"auto", "counts", "votes"}, default="auto"
        ``"counts"`` draws vote orders from counts, one vote position at a
        time; ``"votes"`` permutes vote rows (needs :class:`Votes`). Both give
        the same distribution of results; ``"auto"`` is ``"counts"`` (faster).
    n_bins : int, default=4
        Agreement bins: quantiles of the full-data entropy (bits). Items with
        equal entropy stay together, so there may be fewer bins.
    interval : float, default=0.95
        Coverage of the percentile interval over repetitions.
    kl_smoothing : float, default=0.5
        Pseudo-count added to every label of the k-vote estimate inside KL,
        ``KL(p_full || (x + a) / (k + L a))``: a k-vote estimate gives zero
        probability to any label nobody in the subsample chose, and KL against
        it would be infinite (or ~34 nats per missing label under the 1e-15
        clip of :func:`~annokit.core.divergence.kl_divergence`). 0.5 is the
        Jeffreys / Krichevsky-Trofimov estimator. TVD and JSD use the
        unsmoothed estimate ``x / k``.
    grid : bool, default=True
        Also compute the mean TVD at every k up to half the fewest votes per
        item, for :func:`recommend_k`.
    n_jobs : int, default=1
        Threads working on chunks of repetitions (numpy releases the GIL).
        Each chunk has its own generator spawned from ``rng``, so results do
        not depend on ``n_jobs``.
    progress : callable, optional
        Called with the fraction of the work done, in (0, 1] (for a progress bar).

    Returns
    -------
    SubsampleCurve

    Notes
    -----
    Per item, with ``p`` the full-data distribution and ``q = x / k``:
    ``TVD = 1/2 sum_j |q_j - p_j|`` (Baan et al. 2022, DistCE, footnote 5);
    ``JSD = sqrt(H(m) - (H(p) + H(q)) / 2)``, ``m = (p + q) / 2``, natural log
    (Nie et al. 2020, Table 5 convention); entropy bias ``H(q) - H(p)`` in bits.
    Majority agreement is ``|S & F| / |S|`` with ``S`` the top labels of the
    k-vote counts and ``F`` those of the full data: a tied k-vote majority
    counts as the chance that a uniformly random pick among its tied labels is
    a full-data majority label, and a full-data tie accepts any of its tied
    labels. ``majority_tie_rate`` reports how often the k-vote majority is tied.

    Examples
    --------
    >>> curve = subsampling_curve([[30, 70, 0], [5, 5, 90], [50, 50, 0]], [1, 10, 100],
    ...                           reps=20, rng=0)
    >>> frame = curve.to_frame()
    >>> frame.loc[frame.k == 100, ["tvd_mean", "majority_agreement"]].values.tolist()
    [[0.0, 1.0]]
    >>> bool(frame.tvd_mean.is_monotonic_decreasing)
    True
    """
    check_option("short", short, ("error", "skip", "keep"))
    check_option("method", method, ("auto", "counts", "votes"))
    counts, item_ids, _, votes = as_counts(data)
    ks_arr = check_ks(ks)
    reps = check_reps(reps)
    check_int("n_bins", n_bins, low=1)
    check_open_unit("interval", interval)
    check_finite("kl_smoothing", kl_smoothing, low=0, strict=True)
    if method == "votes" and votes is None:
        raise SchemaError("method='votes' needs a Votes object (vote rows); got counts")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise InvalidValueError(f"n_jobs must be a positive integer; got {n_jobs!r}")
    method = "counts" if method == "auto" else method
    seed = int(rng) if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) else None
    gen = check_rng(rng)

    n = counts.sum(axis=1)
    n_items, n_labels = counts.shape
    if n_labels < 2:
        raise SchemaError(f"subsampling curves need at least two labels; got {n_labels}")
    n_short = np.array([int((n < k).sum()) for k in ks_arr])
    if short == "error" and n_short.any():
        short_items(n, int(ks_arr[np.argmax(n_short > 0)]), "error", ids=item_ids)
    elif n_short.any():
        worst = int(ks_arr.max())
        short_items(n, worst, short, ids=item_ids)  # warns once, for the largest k
    included = np.ones((len(ks_arr), n_items), dtype=bool)
    if short == "skip":
        included = n[None, :] >= ks_arr[:, None]
    if (included.sum(axis=1) == 0).any():
        k_bad = int(ks_arr[np.argmax(included.sum(axis=1) == 0)])
        raise InvalidValueError(f"no item has at least k={k_bad} votes (most votes on an item: "
                                f"{int(n.max())}); choose smaller ks")

    edges, bins, bin_counts = _entropy_bins(counts, n_bins)
    # items sorted by bin (contiguous groups)
    order = np.argsort(bins, kind="stable")
    inverse = np.empty_like(order)
    inverse[order] = np.arange(n_items)
    s_counts = counts[order]
    s_n = n[order]
    s_bins = bins[order]
    s_included = included[:, order]

    n_min = int(n.min())
    grid_ks = np.arange(1, n_min // 2 + 1) if grid else np.zeros(0, dtype=np.int64)
    stops = sorted(set(ks_arr.tolist()) | set(grid_ks.tolist()))
    k_pos = {int(k): i for i, k in enumerate(ks_arr)}
    g_pos = {int(k): i for i, k in enumerate(grid_ks)}

    scale = votes.labels.scale if votes is not None else "nominal"
    gaps = None
    if scale != "nominal":
        values_ = votes.labels.values if scale in ("interval", "ratio") else None
        gaps = np.diff(np.arange(n_labels) if values_ is None else np.asarray(values_, float))
    ref = _eng.Reference(s_counts, kl_smoothing=kl_smoothing, gaps=gaps)
    metric_names = tuple(m for m in _eng.METRICS if gaps is not None or m != "wasserstein")
    n_b = len(bin_counts)
    values = {m: np.empty((reps, len(ks_arr))) for m in metric_names}
    bin_values = {m: np.empty((reps, len(ks_arr), n_b)) for m in metric_names}
    grid_tvd = np.empty((reps, len(grid_ks)))
    group_w = [_eng.group_matrix(s_bins, n_b, None if s_included[i].all() else s_included[i])
               for i in range(len(ks_arr))]
    one_group = _eng.group_matrix(np.zeros(n_items, dtype=np.int64), 1, None)
    k_max = max(stops)
    chunks = _eng.rep_chunks(reps, n_items * n_labels * 8)
    children = gen.spawn(len(chunks))
    lock = threading.Lock()
    done = [0.0]

    def run(chunk: int) -> np.ndarray:
        a, b = chunks[chunk]
        child = children[chunk]
        if method == "counts":
            stream = _eng.nested_count_draws(s_counts, k_max, b - a, child, stops)
        else:
            stream = _votes_stream(votes, inverse, b - a, child, stops)
        item_sum = np.zeros((n_items, len(ks_arr)))
        prev = 0
        for k, X in stream:
            kk = np.minimum(s_n, k)
            x = _eng.cumulative_to_counts(X, kk)
            tv = None
            if k in k_pos:
                i = k_pos[k]
                names, res = _eng.count_metrics(x, kk, ref, which=metric_names)
                summ = _eng.summarise(res, group_w[i])
                for mi, m in enumerate(names):
                    values[m][a:b, i] = summ[mi, :, 0]
                    bin_values[m][a:b, i, :] = summ[mi, :, 1:]
                item_sum[:, i] = res[0].sum(axis=0, dtype=np.float64)
                tv = res[:1]
            if k in g_pos:
                if tv is None:
                    tv = _eng.count_metrics(x, kk, ref, which=("tvd",))[1]
                grid_tvd[a:b, g_pos[k]] = _eng.summarise(tv, one_group)[0, :, 0]
            if progress is not None:
                with lock:
                    done[0] += (b - a) * (k - prev) / (k_max * reps)
                    progress(min(done[0], 1.0))
            prev = k
        return item_sum

    if n_jobs == 1 or len(chunks) == 1:
        partial = [run(c) for c in range(len(chunks))]
    else:
        with ThreadPoolExecutor(max_workers=n_jobs) as pool:
            partial = list(pool.map(run, range(len(chunks))))
    item_tvd = np.sum(partial, axis=0)  # chunk order: the same for any n_jobs
    item_tvd /= reps
    item_tvd[~s_included.T] = np.nan
    item_tvd = item_tvd[inverse]
    return SubsampleCurve(
        ks=ks_arr, reps=reps, seed=seed, interval=float(interval), n_items=n_items,
        n_included=included.sum(axis=1), n_short=n_short, short=short, method=method,
        kl_smoothing=float(kl_smoothing), values=values, bin_edges=edges,
        bin_counts=bin_counts, bin_values=bin_values, item_tvd=item_tvd, item_ids=item_ids,
        grid_ks=grid_ks, grid_tvd=grid_tvd, n_votes_min=n_min, n_votes_max=int(n.max()),
        scale=scale,
    )


def _votes_stream(votes: Votes, inverse: np.ndarray, reps: int, gen: np.random.Generator,
                  stops: Sequence[int]):
    """Nested vote-row subsamples; items renumbered by ``inverse`` (the bin order)."""
    item_index = inverse[votes.item_index]
    ranks = _eng.vote_rank_draws(item_index, votes.n_items, reps, gen)
    for k in stops:
        yield k, _eng.ranks_to_cumulative(item_index, votes.label_index, ranks,
                                          votes.n_items, votes.n_labels, k)


# -- recommendation ---------------------------------------------------------------

@dataclass(frozen=True)
class Recommendation:
    """The smallest k whose expected TVD is below ``epsilon``, with an interval.

    Attributes
    ----------
    k : int or None
        Smallest k with mean TVD < epsilon (None when not reached).
    k_low, k_high : int or None
        The same for the lower and the upper end of the percentile interval
        of the TVD curve (optimistic and pessimistic k); None when that end
        does not get below ``epsilon`` in the k range considered.
    epsilon : float
    source : {"observed", "extrapolated", "not reached"}
    target : str
        What the TVD is measured against, in words: the full data (observed
        curve) or the population distribution of the Dirichlet-multinomial fit.
    kind : {"pool", "population"}
        The ``target`` asked of :func:`recommend_k`.
    """

    k: int | None
    k_low: int | None
    k_high: int | None
    epsilon: float
    source: str
    target: str
    kind: str = "pool"

    def to_dict(self) -> dict[str, Any]:
        return {"k": self.k, "k_low": self.k_low, "k_high": self.k_high,
                "epsilon": self.epsilon, "source": self.source, "target": self.target,
                "kind": self.kind}

    def describe(self) -> str:
        """The recommendation in one line (``annokit subsample``'s last line).

        Examples
        --------
        >>> Recommendation(3, 2, 5, 0.05, "observed", "full data").describe()
        'recommended k = 3 (interval 2-5) for expected TVD < 0.05; observed, against the full data'
        """
        if self.k is None:
            return (f"no k up to the limit reaches expected TVD < {self.epsilon} "
                    f"({self.source}; target: {self.target})")
        return (f"recommended k = {self.k} (interval {self.k_low}-{self.k_high}) for expected "
                f"TVD < {self.epsilon}; {self.source}, against the {self.target}")


def curve_summary(curve: SubsampleCurve, rec: Recommendation) -> dict[str, Any]:
    """A curve and its recommendation as one JSON-ready dict (``annokit subsample --json``).

    Keys: ``curve`` (:meth:`SubsampleCurve.to_records`), ``target`` (``"pool"`` or
    ``"population"``), ``recommended_k``,
    ``recommended_k_low``, ``recommended_k_high``, ``recommendation_source``,
    ``recommendation_target``, ``epsilon``, ``n_items``, ``reps``, ``seed``,
    ``interval``, ``short``, ``n_short``, ``kl_smoothing``, ``n_votes_min``,
    ``n_votes_max``, ``by_bin`` (:meth:`SubsampleCurve.by_bin` rows) and ``scale`` (the
    curve rows hold ``wasserstein_mean`` on ordered scales).
    """
    return jsonable({
        "scale": curve.scale,
        "curve": curve.to_records(),
        "target": rec.kind,
        "recommended_k": rec.k,
        "recommended_k_low": rec.k_low,
        "recommended_k_high": rec.k_high,
        "recommendation_source": rec.source,
        "recommendation_target": rec.target,
        "epsilon": rec.epsilon,
        "n_items": curve.n_items,
        "reps": curve.reps,
        "seed": curve.seed,
        "interval": curve.interval,
        "short": curve.short,
        "n_short": curve.n_short,
        "kl_smoothing": curve.kl_smoothing,
        "n_votes_min": curve.n_votes_min,
        "n_votes_max": curve.n_votes_max,
        "by_bin": curve.by_bin().to_dict(orient="records"),
    })


def _first_below(ks: np.ndarray, curve: np.ndarray, epsilon: float) -> int | None:
    below = np.flatnonzero(curve < epsilon)
    return int(ks[below[0]]) if below.size else None


#: What a recommended k is measured against (``recommend_k(target=...)``).
TARGETS = ("pool", "population")


def recommend_k(curve: SubsampleCurve, epsilon: float = 0.05, *,
                extrapolate: bool = True, counts: Any = None, reps: int = 50,
                rng: np.random.Generator | int | None = None,
                k_max: int = 5000, target: str = "pool") -> Recommendation:
    """Smallest k whose expected TVD to the pool of votes (or to the population) is below ``epsilon``.

    Parameters
    ----------
    curve : SubsampleCurve
        From :func:`subsampling_curve` (its TVD grid over k = 1 .. n_min / 2, or
        its ``ks`` up to n_min / 2 when it has no grid).
    epsilon : float, default=0.05
    extrapolate : bool, default=True
        When no observed k reaches ``epsilon``, fit a Dirichlet-multinomial to
        ``counts`` and use its predicted TVD between a k-vote estimate and the
        population distribution (k may exceed the votes available).
    counts : array-like of shape (n_items, n_labels) or Votes, optional
        The data of the curve; needed for the extrapolation.
    reps, rng, k_max :
        Repetitions, randomness and largest k of the extrapolation.
    target : {"pool", "population"}, default="pool"
        ``"pool"``: k against the pool of collected votes (the full data; the
        observed curve first, the extrapolation only when it does not reach
        ``epsilon``). ``"population"``: k against the population the votes are a
        sample of, the per-item distributions of the Dirichlet-multinomial fit
        to ``counts`` (needs ``counts``; k may exceed the votes available).
        ``annokit subsample`` defaults to ``"population"``.

    Returns
    -------
    Recommendation

    Raises
    ------
    InvalidValueError
        ``epsilon`` outside (0, 1], an unknown ``target``, or ``counts``
        missing where the extrapolation is needed.

    Notes
    -----
    The observed curve is only used up to k = n_min / 2, half the fewest
    votes on an item: a k-vote subsample is part of its own reference, so its
    TVD to the full data shrinks to 0 at k = n by construction (roughly by a
    factor ``sqrt(1 - k / n)`` against the TVD to the population of
    annotators, under a normal approximation); beyond half, the observed
    curve says more about the size of the data set than about further
    annotators, and the extrapolation takes over. ``k_low`` and ``k_high`` come from the lower and upper
    ends of the percentile interval over repetitions; they reflect subsampling
    variability, not the uncertainty of which items were annotated.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> counts = rng.multinomial(100, [0.6, 0.3, 0.1], size=200)
    >>> curve = subsampling_curve(counts, [1, 5, 20], reps=20, rng=1)
    >>> rec = recommend_k(curve, 0.08)
    >>> rec.source, 5 < rec.k <= 50, rec.k_low <= rec.k <= rec.k_high
    ('observed', True, True)
    """
    if not np.isfinite(epsilon) or not (0 < epsilon <= 1):
        raise InvalidValueError(f"epsilon must be in (0, 1]; got {epsilon!r}")
    if target not in TARGETS:
        raise InvalidValueError(f"target must be one of {TARGETS}; got {target!r}")
    if target == "population":
        if counts is None:
            raise InvalidValueError("target='population' needs counts= (the votes) for the "
                                    "Dirichlet-multinomial fit")
        return _extrapolated(counts, epsilon, reps=reps, rng=rng, k_max=k_max, kind="population")
    if curve.grid_tvd.shape[1]:
        ks, tv = curve.grid_ks, curve.grid_tvd
    else:
        keep = curve.ks <= curve.n_votes_min // 2
        ks, tv = curve.ks[keep], curve.values["tvd"][:, keep]
    if ks.size:
        lo = 100 * (1 - curve.interval) / 2
        k = _first_below(ks, tv.mean(axis=0), epsilon)
        if k is not None:
            return Recommendation(
                k=k,
                k_low=_first_below(ks, np.percentile(tv, lo, axis=0), epsilon),
                k_high=_first_below(ks, np.percentile(tv, 100 - lo, axis=0), epsilon),
                epsilon=float(epsilon), source="observed",
                target=f"full data ({curve.n_votes_min}+ votes per item; k up to "
                       f"{curve.n_votes_min // 2} considered)")
    if not extrapolate:
        return Recommendation(None, None, None, float(epsilon), "not reached",
                              f"full data ({curve.n_votes_min}+ votes per item; k up to "
                              f"{curve.n_votes_min // 2} considered)")
    if counts is None:
        raise InvalidValueError("the observed curve never gets below epsilon="
                                f"{epsilon}; pass counts= to extrapolate, or extrapolate=False")
    return _extrapolated(counts, epsilon, reps=reps, rng=rng, k_max=k_max)


def _extrapolated(counts: Any, epsilon: float, *, reps: int,
                  rng: np.random.Generator | int | None, k_max: int,
                  kind: str = "pool") -> Recommendation:
    """k against the population distribution of a Dirichlet-multinomial fit to ``counts``."""
    cnt, *_ = as_counts(counts)
    fit = DirichletMultinomial().fit(cnt)
    found = fit.smallest_k(cnt, epsilon, reps=reps, rng=rng, k_max=k_max)
    return Recommendation(k=found["k"], k_low=found["k_low"], k_high=found["k_high"],
                          epsilon=float(epsilon),
                          source="extrapolated" if found["k"] is not None else "not reached",
                          target="population distribution (Dirichlet-multinomial fit)", kind=kind)

