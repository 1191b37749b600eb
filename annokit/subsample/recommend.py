"""How many annotations are enough: the one recommendation, from a curve or from votes.

:func:`recommend_k` reads the smallest k off a :class:`~annokit.subsample.SubsampleCurve`
(``target="pool"``) or off a Dirichlet-multinomial fitted to its votes
(``target="population"``, the default); :func:`how_many` draws the curve and
recommends in one call, with the defaults of :mod:`annokit.subsample.defaults`. ``annokit
subsample`` and ``annokit report --subsample`` both call :func:`how_many`, so they
answer the same question the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from annokit.core.checks import seed_or_rng
from annokit.core.jsonable import jsonable
from annokit.core.soft_labels import AGREEMENT_BINS, ENTROPY_UNIT
from annokit.errors import InvalidValueError
from annokit.subsample._checks import ShortPolicy, as_counts
from annokit.subsample.curves import SubsampleCurve, subsampling_curve
from annokit.subsample.defaults import EPSILON, INTERVAL, REPS, SHORT, TARGET, TARGETS
from annokit.subsample.extrapolate import DirichletMultinomial

__all__ = ["CURVE_TARGET", "K_MAX", "Recommendation", "curve_summary", "curve_units", "how_many",
           "named_curve_frame", "recommend_k"]

#: The largest k the population extrapolation searches.
K_MAX = 5000
#: What every column of a subsampling curve measures a k-vote subsample against.
CURVE_TARGET = "pool"
#: The curve's columns that measure against the pool, and the pool's prefix in the text table.
POOL_COLUMNS = ("tvd", "jsd", "kl", "wasserstein", "majority_agreement", "entropy_bias")


def pool_note(half: int) -> str:
    """Why the pool target gives no k beyond the observed curve."""
    return (f"the pool target is the votes collected: it cannot be extrapolated beyond the "
            f"votes an item has (a k-vote subsample is compared with them up to half the fewest, "
            f"k = {half}); for more votes per item than that use --target population (Python: "
            "target='population')")


def named_curve_frame(frame: Any) -> Any:
    """``frame`` (:meth:`SubsampleCurve.to_frame`) with the columns that measure a subsample
    against the pool of votes named so (``tvd_mean`` -> ``pool_tvd_mean``), for text output."""
    return frame.rename(columns={c: f"pool_{c}" for c in frame.columns
                                 if c.split("_mean")[0].removesuffix("_low").removesuffix("_high")
                                 in POOL_COLUMNS or c in POOL_COLUMNS})


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
        does not get below ``epsilon`` up to ``k_limit``.
    epsilon : float
    source : {"observed", "extrapolated", "not reached"}
    target : str
        What the TVD is measured against, in words: the full data (observed
        curve) or the population distribution of the Dirichlet-multinomial fit.
    kind : {"pool", "population"}
        The ``target`` asked of :func:`recommend_k`.
    k_limit : int or None
        The largest k considered.
    note : str or None
        Why no k is given for the target asked (the pool target is not extrapolated), or
        that a pool recommendation was extrapolated to the population (``extrapolate=True``).
    """

    k: int | None
    k_low: int | None
    k_high: int | None
    epsilon: float
    source: str
    target: str
    kind: str = "pool"
    k_limit: int | None = None
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"k": self.k, "k_low": self.k_low, "k_high": self.k_high,
                "epsilon": self.epsilon, "source": self.source, "target": self.target,
                "kind": self.kind, "k_limit": self.k_limit, "note": self.note}

    def interval_text(self) -> str:
        """The interval of k in words; an end that is not reached says up to where it was sought.

        Examples
        --------
        >>> Recommendation(69, 21, None, 0.05, "extrapolated", "population", k_limit=5000
        ...                ).interval_text()
        '21 to more than 5000'
        """
        def end(v: int | None) -> str:
            if v is not None:
                return str(v)
            return f"more than {self.k_limit}" if self.k_limit is not None else "not reached"

        if self.k_low is not None and self.k_high is not None:
            return f"{self.k_low}-{self.k_high}"
        return f"{end(self.k_low)} to {end(self.k_high)}"

    def describe(self) -> str:
        """The recommendation in one line (``annokit subsample``'s last line).

        Examples
        --------
        >>> Recommendation(3, 2, 5, 0.05, "observed", "full data").describe()
        'recommended k = 3 (interval 2-5) for expected TVD < 0.05; observed, against the full data'
        """
        note = f"; {self.note}" if self.note else ""
        if self.k is None:
            upto = f" {self.k_limit}" if self.k_limit is not None else " the limit"
            return (f"no k up to{upto} reaches expected TVD < {self.epsilon} "
                    f"({self.source}; target: {self.target}){note}")
        return (f"recommended k = {self.k} (interval {self.interval_text()}) for expected "
                f"TVD < {self.epsilon}; {self.source}, against the {self.target}{note}")


def curve_summary(curve: SubsampleCurve, rec: Recommendation) -> dict[str, Any]:
    """A curve and its recommendation as one JSON-ready dict (``annokit subsample --json``).

    Keys: ``curve`` (:meth:`SubsampleCurve.to_records`), ``target`` (``"pool"`` or
    ``"population"``), ``recommended_k``,
    ``recommended_k_low``, ``recommended_k_high``, ``recommendation_source``,
    ``recommendation_target``, ``recommendation_k_limit``, ``recommendation_note`` (why no
    k is given for the target asked; None otherwise), ``curve_target`` (what the curve's
    columns measure against: :data:`CURVE_TARGET`), ``epsilon``, ``n_items``,
    ``reps``, ``seed``, ``interval``, ``short``, ``n_short``, ``kl_smoothing``,
    ``n_votes_min``, ``n_votes_max``, ``by_bin`` (:meth:`SubsampleCurve.by_bin` rows),
    ``units`` (:func:`curve_units`: the unit of each quantity; entropies in nats) and
    ``scale`` (the curve rows hold ``wasserstein_mean`` on ordered scales).
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
        "recommendation_k_limit": rec.k_limit,
        "recommendation_note": rec.note,
        "curve_target": CURVE_TARGET,
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
        "units": curve_units(),
    })


def curve_units() -> dict[str, str]:
    """The unit of each curve column (``annokit subsample``'s units line and ``--json`` "units").

    Examples
    --------
    >>> curve_units()["entropy_bias"]
    'nats'
    """
    return {"tvd": "probability", "jsd": f"sqrt({ENTROPY_UNIT})", "kl": ENTROPY_UNIT,
            "wasserstein": "scale points", "majority_agreement": "rate",
            "entropy_bias": ENTROPY_UNIT, "majority_tie_rate": "rate"}


def _first_below(ks: np.ndarray, curve: np.ndarray, epsilon: float) -> int | None:
    below = np.flatnonzero(curve < epsilon)
    return int(ks[below[0]]) if below.size else None


def recommend_k(curve: SubsampleCurve, epsilon: float = EPSILON, *,
                target: str = TARGET, extrapolate: bool = False, counts: Any = None,
                reps: int = 50, rng: np.random.Generator | int | None = None,
                seed: int | None = None,
                k_max: int = K_MAX) -> Recommendation:
    """Smallest k whose expected TVD to the population (or to the pool of votes) is below ``epsilon``.

    Parameters
    ----------
    curve : SubsampleCurve
        From :func:`~annokit.subsample.subsampling_curve` (its TVD grid over
        k = 1 .. n_min / 2, or its ``ks`` up to n_min / 2 when it has no grid).
    epsilon : float, default=0.05
        The tolerance (:data:`annokit.subsample.defaults.EPSILON`).
    target : {"population", "pool"}, default="population"
        ``"population"`` (:data:`annokit.subsample.defaults.TARGET`): k against the
        population the votes are a sample of, the per-item distributions of the
        Dirichlet-multinomial fit to the votes (k may exceed the votes
        available). ``"pool"``: k against the pool of collected votes (the full
        data; the observed curve first, the extrapolation only when it does not
        reach ``epsilon``).
    extrapolate : bool, default=False
        ``target="pool"``: when no observed k reaches ``epsilon``, give a k against the
        population instead (the Dirichlet-multinomial's predicted TVD; ``kind`` is then
        ``"population"``, and ``note`` says so). By default no k is given, and ``note`` says
        why: the pool cannot be extrapolated beyond the votes an item has.
    counts : array-like of shape (n_items, n_labels) or Votes, optional
        The data of the curve (default: the counts the curve keeps).
    reps, rng, k_max :
        Repetitions, randomness and largest k of the extrapolation.
    seed : int, optional
        The same as ``rng=`` an int (the name ``evaluate`` uses); give one of the two.

    Returns
    -------
    Recommendation

    Raises
    ------
    InvalidValueError
        ``epsilon`` outside (0, 1], an unknown ``target``, or no counts where
        the extrapolation needs them.

    The observed curve is read up to k = n_min / 2 only (:func:`_observed` says why).

    Examples
    --------
    >>> from annokit.subsample import subsampling_curve
    >>> rng = np.random.default_rng(0)
    >>> counts = rng.multinomial(100, [0.6, 0.3, 0.1], size=200)
    >>> curve = subsampling_curve(counts, [1, 5, 20], reps=20, rng=1)
    >>> rec = recommend_k(curve, 0.08, target="pool")
    >>> rec.source, 5 < rec.k <= 50, rec.k_low <= rec.k <= rec.k_high
    ('observed', True, True)
    """
    rng = seed_or_rng(seed, rng, "recommend_k", default=None)
    if not np.isfinite(epsilon) or not (0 < epsilon <= 1):
        raise InvalidValueError(f"epsilon must be in (0, 1]; got {epsilon!r}")
    if target not in TARGETS:
        raise InvalidValueError(f"target must be one of {TARGETS}; got {target!r}")
    if counts is None:
        counts = curve.counts
    interval = float(getattr(curve, "interval", INTERVAL))
    if target == "population":
        if counts is None:
            raise InvalidValueError("target='population' needs counts= (the votes) for the "
                                    "Dirichlet-multinomial fit")
        return _extrapolated(counts, epsilon, reps=reps, rng=rng, k_max=k_max,
                             interval=interval, kind="population")
    observed = _observed(curve, epsilon, interval)
    if observed.k is not None or not extrapolate:
        return observed
    if counts is None:
        raise InvalidValueError("the observed curve never gets below epsilon="
                                f"{epsilon}; pass counts= to extrapolate, or extrapolate=False")
    rec = _extrapolated(counts, epsilon, reps=reps, rng=rng, k_max=k_max, interval=interval,
                        kind="population")
    return replace(rec, note="the pool curve does not reach the tolerance: extrapolated to "
                             "the population (extrapolate=True)")


def _observed(curve: SubsampleCurve, epsilon: float, interval: float) -> Recommendation:
    """The pool recommendation from the observed curve (``source="observed"``), or ``"not
    reached"`` (k None, with the note why) when no k up to n_min / 2 gets below ``epsilon``.

    The observed curve is only used up to k = n_min / 2, half the fewest
    votes on an item: a k-vote subsample is part of its own reference, so its
    TVD to the full data shrinks to 0 at k = n by construction (roughly by a
    factor ``sqrt(1 - k / n)`` against the TVD to the population of
    annotators, under a normal approximation); beyond half, the observed
    curve says more about the size of the data set than about further
    annotators, and the extrapolation takes over. ``k_low`` and ``k_high`` come
    from the lower and upper ends of the percentile interval over repetitions
    (the curve's ``interval``); they reflect subsampling variability, not the
    uncertainty of which items were annotated.
    """
    if curve.grid_tvd.shape[1]:
        ks, tv = curve.grid_ks, curve.grid_tvd
    else:
        keep = curve.ks <= curve.n_votes_min // 2
        ks, tv = curve.ks[keep], curve.values["tvd"][:, keep]
    pool = (f"full data ({curve.n_votes_min}+ votes per item; k up to "
            f"{curve.n_votes_min // 2} considered)")
    if ks.size:
        lo = 100 * (1 - interval) / 2
        k = _first_below(ks, tv.mean(axis=0), epsilon)
        if k is not None:
            return Recommendation(
                k=k,
                k_low=_first_below(ks, np.percentile(tv, lo, axis=0), epsilon),
                k_high=_first_below(ks, np.percentile(tv, 100 - lo, axis=0), epsilon),
                epsilon=float(epsilon), source="observed", target=pool,
                k_limit=int(ks[-1]))
    return Recommendation(None, None, None, float(epsilon), "not reached", pool,
                          k_limit=curve.n_votes_min // 2,
                          note=pool_note(curve.n_votes_min // 2))


def _extrapolated(counts: Any, epsilon: float, *, reps: int,
                  rng: np.random.Generator | int | None, k_max: int, interval: float,
                  kind: str = "pool") -> Recommendation:
    """k against the population distribution of a Dirichlet-multinomial fit to ``counts``."""
    cnt, *_ = as_counts(counts)
    fit = DirichletMultinomial().fit(cnt)
    found = fit.smallest_k(cnt, epsilon, reps=reps, rng=rng, k_max=k_max, interval=interval)
    return Recommendation(k=found["k"], k_low=found["k_low"], k_high=found["k_high"],
                          epsilon=float(epsilon),
                          source="extrapolated" if found["k"] is not None else "not reached",
                          target="population distribution (Dirichlet-multinomial fit)",
                          kind=kind, k_limit=int(k_max))


def how_many(data: Any, ks: Sequence[int] | None = None, *, target: str = TARGET,
             epsilon: float = EPSILON, reps: int = REPS,
             rng: np.random.Generator | int | None = None, short: ShortPolicy = SHORT,
             interval: float = INTERVAL, n_jobs: int = 1,
             progress: Callable[[float], None] | None = None,
             n_bins: int = AGREEMENT_BINS, seed: int | None = None,
             ) -> tuple[SubsampleCurve, Recommendation]:
    """How many annotations are enough: the subsampling curve and the recommended k.

    :func:`~annokit.subsample.subsampling_curve` then :func:`recommend_k`, with one
    seed and the defaults of :mod:`annokit.subsample.defaults` (what ``annokit
    subsample`` and ``annokit report --subsample`` run).

    Parameters
    ----------
    data : Votes or array-like of shape (n_items, n_labels)
    ks : sequence of int, optional
        Default: 1, 2, 5, 10, ... up to the most votes on an item
        (:func:`~annokit.subsample.defaults.default_ks`).
    target, epsilon : as :func:`recommend_k`
    reps, short, interval, n_jobs, progress, n_bins : as :func:`~annokit.subsample.subsampling_curve`
    rng : numpy Generator, int seed or None
        Seeds the curve and the extrapolation.
    seed : int, optional
        The same as ``rng=`` an int, the name ``evaluate``, ``plan`` and ``build_report`` use
        (give one of the two).

    Returns
    -------
    (SubsampleCurve, Recommendation)

    Examples
    --------
    >>> counts = np.random.default_rng(0).multinomial(10, [0.6, 0.3, 0.1], size=50)
    >>> curve, rec = how_many(counts, reps=20, rng=0)
    >>> curve.ks.tolist(), rec.kind
    ([1, 2, 5, 10], 'population')
    """
    rng = seed_or_rng(seed, rng, "how_many")
    curve = subsampling_curve(data, ks, reps=reps, rng=rng, short=short, interval=interval,
                              n_jobs=n_jobs, progress=progress, n_bins=n_bins)
    return curve, recommend_k(curve, epsilon, target=target, rng=rng)
