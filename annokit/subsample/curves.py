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

Measures. Per item, with ``p`` the full-data distribution and ``q = x / k``:
``TVD = 1/2 sum_j |q_j - p_j|`` (Baan et al. 2022, DistCE, footnote 5);
``JSD = sqrt(H(m) - (H(p) + H(q)) / 2)``, ``m = (p + q) / 2``, natural log
(Nie et al. 2020, Table 5 convention); entropy bias ``H(q) - H(p)`` in nats
(:data:`annokit.core.soft_labels.ENTROPY_BASE`); KL is
``KL(p || (x + a) / (k + L a))`` with the pseudo-count ``a = kl_smoothing``: a k-vote
estimate gives zero probability to any label nobody in the subsample chose, and KL against
it would be infinite (or ~34 nats per missing label under the 1e-15 clip of
:func:`~annokit.core.divergence.kl_divergence`); 0.5 is the Jeffreys / Krichevsky-Trofimov
estimator. TVD and JSD use the unsmoothed estimate ``x / k``.
Majority agreement is ``|S & F| / |S|`` with ``S`` the top labels of the
k-vote counts and ``F`` those of the full data: a tied k-vote majority
counts as the chance that a uniformly random pick among its tied labels is
a full-data majority label, and a full-data tie accepts any of its tied
labels. ``majority_tie_rate`` reports how often the k-vote majority is tied.

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
from typing import Any, Literal, cast

import numpy as np
import pandas as pd

from annokit.core.checks import (
    check_finite,
    check_int,
    check_open_unit,
    check_option,
    check_rng,
    seed_or_rng,
)
from annokit.core.jsonable import finite_or_none
from annokit.core.soft_labels import AGREEMENT_BINS, ENTROPY_BASE
from annokit.core.votes import Votes
from annokit.errors import InvalidValueError, SchemaError
from annokit.subsample import engine as _eng
from annokit.subsample._checks import ShortPolicy, as_counts, check_ks, check_reps, short_items
from annokit.subsample.defaults import INTERVAL, REPS, SHORT, default_ks

__all__ = ["CURVE_KEYS", "SubsampleCurve", "subsampling_curve"]

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
        Full-data entropy (nats) edges of the agreement bins (quantiles).
    bin_counts : ndarray of shape (n_bins,)
    bin_values : dict of str to ndarray of shape (reps, n_k, n_bins)
    item_tvd : ndarray of shape (n_items, n_k)
        Mean TVD over repetitions per item (NaN where skipped).
    grid_ks, grid_tvd : ndarray of shape (n_grid,), (reps, n_grid)
        Mean TVD at every k from 1 to half the fewest votes per item, all
        items included, for :func:`~annokit.subsample.recommend_k`.
    counts : ndarray of shape (n_items, n_labels) or None
        The vote counts the curve was drawn from (what
        :func:`~annokit.subsample.recommend_k` fits its population to).
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
    counts: np.ndarray | None = None

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

    def __repr__(self) -> str:
        """One line: the ks, repetitions and items; the values are in :meth:`to_frame`.

        Examples
        --------
        >>> subsampling_curve([[3, 7, 0], [5, 5, 9]], [1, 5], reps=10, rng=0)
        SubsampleCurve(ks=[1, 5], reps=10, n_items=2, method='counts', scale='nominal')
        """
        return (f"SubsampleCurve(ks={self.ks.tolist()}, reps={self.reps}, n_items={self.n_items}, "
                f"method={self.method!r}, scale={self.scale!r})")

    def to_records(self) -> list[dict[str, Any]]:
        """The JSON "curve": a list of dicts with the keys in :data:`CURVE_KEYS`."""
        frame = self.to_frame()
        out = []
        for row in frame.itertuples(index=False):
            rec: dict[str, Any] = {"k": int(cast(int, row.k))}
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

    def recommend(self, epsilon: float | None = None, **kwargs: Any) -> Any:
        """Shortcut for :func:`~annokit.subsample.recommend_k` on this curve."""
        from annokit.subsample import recommend_k  # the package's lazy name: no import cycle

        if epsilon is not None:
            kwargs["epsilon"] = epsilon
        return recommend_k(self, **kwargs)


def _entropy_bins(counts: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Quantile bins of full-data entropy (nats): edges, bin of each item, items per bin.

    Edges are data values (the "lower" quantile), so no bin is empty; equal
    quantiles merge, leaving fewer bins. Bins are ``[low, high)``, the last closed.
    """
    p = counts / counts.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0).sum(axis=1)
    h /= np.log(ENTROPY_BASE)
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


def subsampling_curve(data: Votes | Any, ks: Sequence[int] | None = None, *, reps: int = REPS,
                      rng: np.random.Generator | int | None = None, seed: int | None = None,
                      short: ShortPolicy = SHORT,
                      method: Literal["auto", "counts", "votes"] = "auto",
                      n_bins: int = AGREEMENT_BINS, interval: float = INTERVAL,
                      kl_smoothing: float = 0.5, grid: bool = True, n_jobs: int = 1,
                      progress: Callable[[float], None] | None = None) -> SubsampleCurve:
    """Subsampling curves: how far k-vote label distributions are from the full data.

    For each repetition, each item's votes are put in a uniformly random order and the first
    k votes form the k-vote estimate, for every k in ``ks`` (so the k-vote subsamples of one
    repetition are nested; each is an exact uniform k-subsample). Per repetition, each metric
    is averaged over items; the curve reports the mean over repetitions and a percentile
    interval.

    Parameters
    ----------
    data : Votes or array-like of shape (n_items, n_labels)
        Votes, or their counts.
    ks : sequence of int, optional
        Votes per item to draw. Default: 1, 2, 5, 10, 20, 50, ... up to the most votes on an
        item, and that number itself (:func:`annokit.subsample.defaults.default_ks`).
    reps : int, default=200
    rng, seed : numpy Generator, int seed or None; int, optional
        ``seed``: the same as ``rng=`` an int (the name ``evaluate`` uses); give one of them.
    short : {"error", "skip", "keep"}, default="skip"
        Items with fewer than k votes: raise, leave them out at that k (with a warning), or
        use all their votes at that k. Counted in ``n_short`` either way.
    method : {"auto", "counts", "votes"}, default="auto"
        ``"counts"`` draws vote orders from counts, one vote position at a time; ``"votes"``
        permutes vote rows (needs :class:`Votes`). Both give the same distribution of
        results; ``"auto"`` is ``"counts"`` (faster).
    n_bins : int, default=AGREEMENT_BINS (5)
        Agreement bins: quantiles of the full-data entropy (nats), as ``evaluate`` and the
        report bin; items with equal entropy stay together, so there may be fewer bins.
    interval : float, default=0.95
        Coverage of the percentile interval over repetitions.
    kl_smoothing : float, default=0.5
        Pseudo-count ``a`` added to every label of the k-vote estimate inside KL (module
        docstring: the measures).
    grid : bool, default=True
        Also compute the mean TVD at every k up to half the fewest votes per item, for
        :func:`~annokit.subsample.recommend_k`.
    n_jobs : int, default=1
        Threads working on chunks of repetitions (numpy releases the GIL). Each chunk has its
        own generator spawned from ``rng``, so results do not depend on ``n_jobs``.
    progress : callable, optional
        Called with the fraction of the work done, in (0, 1] (for a progress bar).

    Returns
    -------
    SubsampleCurve

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
    rng = seed_or_rng(seed, rng, "subsampling_curve", default=None)
    counts, item_ids, votes, ks_arr, reps = _checked(data, ks, reps, short, method, n_bins,
                                                     interval, kl_smoothing, n_jobs)
    method = "counts" if method == "auto" else method
    seed = int(rng) if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) else None
    gen, n = check_rng(rng), counts.sum(axis=1)
    n_short, included = _included(n, ks_arr, short, item_ids)
    job = _CurveJob.build(counts, n, votes, ks_arr, included, n_bins=n_bins, reps=reps,
                          method=method, kl_smoothing=kl_smoothing, grid=grid,
                          progress=progress)
    return SubsampleCurve(
        ks=ks_arr, reps=reps, seed=seed, interval=float(interval), n_items=len(n),
        n_included=included.sum(axis=1), n_short=n_short, short=short, method=method,
        kl_smoothing=float(kl_smoothing), values=job.values, bin_edges=job.edges,
        bin_counts=job.bin_counts, bin_values=job.bin_values, item_tvd=job.run_all(gen, n_jobs),
        item_ids=item_ids, grid_ks=job.grid_ks, grid_tvd=job.grid_tvd,
        n_votes_min=int(n.min()), n_votes_max=int(n.max()), scale=job.scale, counts=counts)


def _checked(data: Any, ks: Sequence[int] | None, reps: int, short: str, method: str,
             n_bins: int, interval: float, kl_smoothing: float,
             n_jobs: int) -> tuple[np.ndarray, Any, Votes | None, np.ndarray, int]:
    """:func:`subsampling_curve`'s arguments checked: the counts, item ids and votes of
    ``data``, the k's (the default ones when none are given) and ``reps``."""
    check_option("short", short, ("error", "skip", "keep"))
    check_option("method", method, ("auto", "counts", "votes"))
    counts, item_ids, _, votes = as_counts(data)
    ks_arr = check_ks(default_ks(int(counts.sum(axis=1).max())) if ks is None else ks)
    reps = check_reps(reps)
    check_int("n_bins", n_bins, low=1)
    check_open_unit("interval", interval)
    check_finite("kl_smoothing", kl_smoothing, low=0, strict=True)
    if method == "votes" and votes is None:
        raise SchemaError("method='votes' needs a Votes object (vote rows); got counts")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise InvalidValueError(f"n_jobs must be a positive integer; got {n_jobs!r}")
    if counts.shape[1] < 2:
        raise SchemaError(f"subsampling curves need at least two labels; got {counts.shape[1]}")
    return counts, item_ids, votes, ks_arr, reps


def _included(n: np.ndarray, ks_arr: np.ndarray, short: str,
              item_ids: Any) -> tuple[np.ndarray, np.ndarray]:
    """Items short of each k (counted; an error, a warning for the largest k) and the
    ``(len(ks), n_items)`` mask of the items each k measures under the ``short`` policy."""
    n_items = len(n)
    n_short = np.array([int((n < k).sum()) for k in ks_arr])
    if short == "error" and n_short.any():
        short_items(n, int(ks_arr[np.argmax(n_short > 0)]), "error", ids=item_ids)
    elif n_short.any():
        worst = int(ks_arr.max())
        short_items(n, worst, short, ids=item_ids, stacklevel=4)  # warns once, largest k
    included = np.ones((len(ks_arr), n_items), dtype=bool)
    if short == "skip":
        included = n[None, :] >= ks_arr[:, None]
    if (included.sum(axis=1) == 0).any():
        k_bad = int(ks_arr[np.argmax(included.sum(axis=1) == 0)])
        raise InvalidValueError(f"no item has at least k={k_bad} votes (most votes on an item: "
                                f"{int(n.max())}); choose ks up to {int(n.max())} (--k)")
    return n_short, included


def _reference(votes: Votes | None, s_counts: np.ndarray,
               kl_smoothing: float) -> tuple[_eng.Reference, tuple[str, ...], str]:
    """The full-data reference the k-vote estimates are measured against, the metrics
    measured (the Wasserstein distance only for ordered labels) and the labels' scale."""
    n_labels = s_counts.shape[1]
    scale = votes.labels.scale if votes is not None else "nominal"
    category_values = None
    if votes is not None and scale != "nominal":
        values_ = votes.labels.values if scale in ("interval", "ratio") else None
        category_values = np.arange(n_labels) if values_ is None else np.asarray(values_, float)
    ref = _eng.Reference(s_counts, kl_smoothing=kl_smoothing, values=category_values)
    metric_names = tuple(m for m in _eng.METRICS
                         if category_values is not None or m != "wasserstein")
    return ref, metric_names, scale


@dataclass
class _CurveJob:
    """One curve's work: the items sorted by agreement bin (contiguous groups), the k's to
    stop at, and the arrays every chunk of repetitions fills in place."""

    votes: Votes | None
    method: str
    reps: int
    s_counts: np.ndarray
    s_n: np.ndarray
    s_included: np.ndarray
    inverse: np.ndarray
    edges: np.ndarray
    bin_counts: np.ndarray
    ks_arr: np.ndarray
    grid_ks: np.ndarray
    stops: list[int]
    ref: Any
    metric_names: tuple[str, ...]
    scale: str
    group_w: list[Any]
    one_group: Any
    values: dict[str, np.ndarray]
    bin_values: dict[str, np.ndarray]
    grid_tvd: np.ndarray
    progress: Callable[[float], None] | None
    chunks: list[tuple[int, int]] = field(default_factory=list)
    lock: Any = field(default_factory=threading.Lock)
    done: list[float] = field(default_factory=lambda: [0.0])

    @classmethod
    def build(cls, counts: np.ndarray, n: np.ndarray, votes: Votes | None,
              ks_arr: np.ndarray, included: np.ndarray, *, n_bins: int, reps: int,
              method: str, kl_smoothing: float, grid: bool,
              progress: Callable[[float], None] | None) -> _CurveJob:
        n_items, n_labels = counts.shape
        edges, bins, bin_counts = _entropy_bins(counts, n_bins)
        order = np.argsort(bins, kind="stable")  # items sorted by bin (contiguous groups)
        inverse = np.empty_like(order)
        inverse[order] = np.arange(n_items)
        s_counts, s_bins, s_included = counts[order], bins[order], included[:, order]
        grid_ks = (np.arange(1, int(n.min()) // 2 + 1) if grid
                   else np.zeros(0, dtype=np.int64))
        ref, metric_names, scale = _reference(votes, s_counts, kl_smoothing)
        n_b = len(bin_counts)
        return cls(
            votes=votes, method=method, reps=reps, s_counts=s_counts, s_n=n[order],
            s_included=s_included, inverse=inverse, edges=edges, bin_counts=bin_counts,
            ks_arr=ks_arr, grid_ks=grid_ks,
            stops=sorted(set(ks_arr.tolist()) | set(grid_ks.tolist())), ref=ref,
            metric_names=metric_names, scale=scale,
            group_w=[_eng.group_matrix(s_bins, n_b,
                                       None if s_included[i].all() else s_included[i])
                     for i in range(len(ks_arr))],
            one_group=_eng.group_matrix(np.zeros(n_items, dtype=np.int64), 1, None),
            values={m: np.empty((reps, len(ks_arr))) for m in metric_names},
            bin_values={m: np.empty((reps, len(ks_arr), n_b)) for m in metric_names},
            grid_tvd=np.empty((reps, len(grid_ks))), progress=progress,
            chunks=_eng.rep_chunks(reps, n_items * n_labels * 8))

    def run_all(self, gen: np.random.Generator, n_jobs: int) -> np.ndarray:
        """Every chunk of repetitions (each with its own generator spawned from ``gen``, so
        the result does not depend on ``n_jobs``); the mean TVD per item at each k, in the
        items' original order (NaN where an item is left out)."""
        children = gen.spawn(len(self.chunks))

        def run(chunk: int) -> np.ndarray:
            return self.run_chunk(chunk, children[chunk])

        if n_jobs == 1 or len(self.chunks) == 1:
            partial = [run(c) for c in range(len(self.chunks))]
        else:
            with ThreadPoolExecutor(max_workers=n_jobs) as pool:
                partial = list(pool.map(run, range(len(self.chunks))))
        item_tvd = np.sum(partial, axis=0)  # chunk order: the same for any n_jobs
        item_tvd /= self.reps
        item_tvd[~self.s_included.T] = np.nan
        return item_tvd[self.inverse]

    def run_chunk(self, chunk: int, child: np.random.Generator) -> np.ndarray:
        """One chunk of repetitions: fills ``values``, ``bin_values`` and ``grid_tvd`` for its
        rows and returns the items' summed TVD at each k."""
        a, b = self.chunks[chunk]
        k_pos = {int(k): i for i, k in enumerate(self.ks_arr)}
        g_pos = {int(k): i for i, k in enumerate(self.grid_ks)}
        k_max = max(self.stops)
        if self.method == "counts":
            stream = _eng.nested_count_draws(self.s_counts, k_max, b - a, child, self.stops)
        else:
            stream = _votes_stream(cast(Votes, self.votes), self.inverse, b - a, child,
                                   self.stops)
        item_sum = np.zeros((len(self.s_n), len(self.ks_arr)))
        prev = 0
        for k, X in stream:
            kk = np.minimum(self.s_n, k)
            x = _eng.cumulative_to_counts(X, kk)
            tv = None
            if k in k_pos:
                tv = self._at_k(x, kk, k_pos[k], a, b, item_sum)
            if k in g_pos:
                if tv is None:
                    tv = _eng.count_metrics(x, kk, self.ref, which=("tvd",))[1]
                self.grid_tvd[a:b, g_pos[k]] = _eng.summarise(tv, self.one_group)[0, :, 0]
            if self.progress is not None:
                with self.lock:
                    self.done[0] += (b - a) * (k - prev) / (k_max * self.reps)
                    self.progress(min(self.done[0], 1.0))
            prev = k
        return item_sum

    def _at_k(self, x: np.ndarray, kk: np.ndarray, i: int, a: int, b: int,
              item_sum: np.ndarray) -> np.ndarray:
        """Every metric at the ``i``-th k for repetitions ``a:b``, overall and per bin; adds
        the items' TVD to ``item_sum`` and returns the per-item TVD rows."""
        names, res = _eng.count_metrics(x, kk, self.ref, which=self.metric_names)
        summ = _eng.summarise(res, self.group_w[i])
        for mi, m in enumerate(names):
            self.values[m][a:b, i] = summ[mi, :, 0]
            self.bin_values[m][a:b, i, :] = summ[mi, :, 1:]
        item_sum[:, i] = res[0].sum(axis=0, dtype=np.float64)
        return res[:1]


def _votes_stream(votes: Votes, inverse: np.ndarray, reps: int, gen: np.random.Generator,
                  stops: Sequence[int]):
    """Nested vote-row subsamples; items renumbered by ``inverse`` (the bin order)."""
    item_index = inverse[votes.item_index]
    ranks = _eng.vote_rank_draws(item_index, votes.n_items, reps, gen)
    for k in stops:
        yield k, _eng.ranks_to_cumulative(item_index, votes.label_index, ranks,
                                          votes.n_items, votes.n_labels, k)
