"""One resampling engine: Poisson bootstrap weights from a counter-based generator.

Every bootstrap in annokit (``annokit evaluate``, the report, the agreement
intervals of ``annokit stats``) draws its replicates here. A replicate is a
vector of item *weights*, not a list of resampled indices: item ``i`` enters
replicate ``r`` with a Poisson(1) count ``w[r, i]`` (the Poisson bootstrap;
Hanley & MacGibbon 2006), and a statistic is computed as a weighted one
(a mean becomes ``sum_i w_i x_i / sum_i w_i``). With many items this is
the classical bootstrap (a Multinomial(n, 1/n) draw is n Poisson(1) counts
conditioned on their sum); unlike it, each count is drawn on its own.

That is what makes the draw *split-invariant*. The count of an item depends
only on ``(seed, key, r)``, where ``key`` is a stable 64-bit hash of the item
id (:func:`item_keys`): it is computed by a counter-based generator (Salmon et
al. 2011), not read from a stream, so the same seed gives the same replicates,
and hence the same interval, whether the items are evaluated whole, in batches,
in any order, or on separate workers whose sums are merged.

Memory is bounded by a chunk of replicates: :func:`replicate_chunks` splits
``n_boot`` so that one chunk holds at most ``budget`` weights (32 MB of
float64 by default); an ``n_boot x n_items`` matrix is never built.

The generator
-------------
With ``mix`` the SplitMix64 output function (Steele, Lea & Flood 2014:
``z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27; z *= 0x94D049BB133111EB;
z ^= z >> 31``, a bijection of uint64) and ``GAMMA = 0x9E3779B97F4A7C15``::

    s        = mix(seed mod 2**64  ^  0x616E6E6F6B697421)   # one per seed
    state(k) = mix(key ^ s)                                  # one per item
    z(k, r)  = mix(state(k) + (r + 1) * GAMMA)               # mod 2**64
    w(k, r)  = #{j : z(k, r) >= T_j}

that is, ``z(k, 0), z(k, 1), ...`` is the SplitMix64 sequence started at the
item's state, and ``w`` reads ``u = z / 2**64`` (a uniform in [0, 1)) through
the inverse CDF of Poisson(1) exactly: ``T_j = ceil(2**64 F(j))`` with ``F`` the
Poisson(1) CDF, so ``w = #{j : u >= F(j)}``; ``j = 0 .. 19`` suffices, as
``2**64 F(20) > 2**64 - 1`` (``w <= 20``). Distinct keys give distinct
states (``mix`` is a bijection). The lookup is exact: the top 16 bits of ``z``
give the count from a table except in the 8 of 65,536 slices that hold a
threshold, where ``z`` is compared with the thresholds themselves.

References
----------
Hanley, J. A. & MacGibbon, B. (2006). Creating non-parametric bootstrap
samples using Poisson frequencies. Computer Methods and Programs in
Biomedicine 83(1), 57-62. doi:10.1016/j.cmpb.2006.04.006

Chamandy, N., Muralidharan, O., Najmi, A. & Naik, S. (2012). Estimating
uncertainty for massive data streams. Google technical report.

Salmon, J. K., Moraes, M. A., Dror, R. O. & Shaw, D. E. (2011). Parallel
random numbers: as easy as 1, 2, 3. SC'11. doi:10.1145/2063384.2063405

Steele, G. L., Lea, D. & Flood, C. H. (2014). Fast splittable pseudorandom
number generators. OOPSLA'14. doi:10.1145/2660193.2660195
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from annokit.core.checks import check_int, check_open_unit, check_rng
from annokit.errors import InvalidValueError, SchemaError

__all__ = [
    "BootstrapResult",
    "as_item_keys",
    "bounds_interval",
    "normal_interval",
    "bootstrap_ci",
    "bootstrap_replicates",
    "item_keys",
    "no_interval",
    "paired_bootstrap_diff",
    "percentile_interval",
    "poisson_weights",
    "replicate_chunks",
    "seed_from_rng",
]

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_SEED_TAG = 0x616E6E6F6B697421  # "annokit!": keeps seed 0 away from the all-zero state


def _poisson1_thresholds(n: int = 20) -> np.ndarray:
    """``T_j = ceil(2**64 F(j))``, ``F`` the Poisson(1) CDF, ``j < n``, in exact decimal arithmetic."""
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        e_inv = 1 / decimal.Decimal(1).exp()
        cdf = [e_inv * sum(decimal.Decimal(1) / math.factorial(i) for i in range(j + 1))
               for j in range(n)]
        return np.array([int((f * 2**64).to_integral_value(rounding=decimal.ROUND_CEILING))
                         for f in cdf], dtype=np.uint64)


#: Poisson(1) inverse-CDF thresholds; T_19 is 2 below 2**64 and T_20 would be 2**64, so a
#: count is at most 20.
_THRESHOLDS = _poisson1_thresholds()
_TABLE_BITS = 16
_TABLE_SHIFT = np.uint64(64 - _TABLE_BITS)


def _lookup_table() -> np.ndarray:
    """Count for each top-16-bit slice of ``z``; NaN where a threshold cuts the slice."""
    low = np.arange(2**_TABLE_BITS, dtype=np.uint64) << _TABLE_SHIFT
    high = low | np.uint64(2 ** (64 - _TABLE_BITS) - 1)
    first = np.searchsorted(_THRESHOLDS, low, side="right")
    table = first.astype(np.float64)
    table[first != np.searchsorted(_THRESHOLDS, high, side="right")] = np.nan
    return table


_TABLE = _lookup_table()


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise InvalidValueError(f"seed must be an integer; got {seed!r}")
    return int(seed) % 2**64


def seed_from_rng(rng: np.random.Generator | int | None) -> int:
    """The integer seed for an ``rng`` argument.

    An int is the seed itself; a Generator draws one seed (advancing it); None
    draws one from fresh entropy (so the result is not reproducible).

    Examples
    --------
    >>> seed_from_rng(7)
    7
    """
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return int(rng)
    return int(check_rng(rng).integers(0, 2**63))


def item_keys(item_ids: Any) -> np.ndarray:
    """Stable 64-bit keys of item ids, for :func:`poisson_weights`.

    Parameters
    ----------
    item_ids : array-like of shape (n_items,)
        Item ids; each is read as its string (``str(id)``: the id ``1`` and the
        id ``"1"`` get the same key).

    Returns
    -------
    ndarray of uint64, shape (n_items,)

    Notes
    -----
    The key is ``pandas.util.hash_array`` of the id string: SipHash-2-4 of its
    UTF-8 bytes under pandas' fixed key ``"0123456789123456"``, then the
    SplitMix64 finaliser, computed in C without a Python loop over items. It
    depends on the id string only: not on the process (no ``PYTHONHASHSEED``),
    the platform, the item's position or the other items. pandas has computed it
    this way since 0.20 (2017); ``tests/core/test_resample.py`` pins known keys,
    so a change would be caught rather than silently move every interval.

    Examples
    --------
    >>> item_keys(["a", "b"]).dtype
    dtype('uint64')
    >>> bool((item_keys([1, 2]) == item_keys(["1", "2"])).all())
    True
    """
    from pandas.util import hash_array

    ids = np.asarray(item_ids.to_numpy() if hasattr(item_ids, "to_numpy") else item_ids)
    if ids.ndim != 1:
        raise SchemaError(f"item ids must be 1-D; got shape {ids.shape}")
    strings = ids.astype(str).astype(object) if ids.dtype != object else ids
    try:
        return hash_array(strings, categorize=False)
    except TypeError:  # an object array holding non-strings
        return hash_array(strings.astype(str).astype(object), categorize=False)


def as_item_keys(keys: Any, n_items: int, *, name: str = "values") -> np.ndarray:
    """``keys`` for ``n_items`` items as uint64: None gives row positions, a uint64 array is
    taken as keys, anything else is hashed by :func:`item_keys`."""
    if keys is None:
        return np.arange(n_items, dtype=np.uint64)
    arr = np.asarray(keys.to_numpy() if hasattr(keys, "to_numpy") else keys)
    if arr.ndim != 1 or arr.shape[0] != n_items:
        raise SchemaError(f"keys must hold one key per item ({n_items} for {name}); "
                          f"got shape {arr.shape}")
    return arr if arr.dtype == np.uint64 else item_keys(arr)


def poisson_weights(keys: Any, seed: int, start: int, stop: int) -> np.ndarray:
    """Poisson(1) bootstrap weights of replicates ``start .. stop - 1``.

    Parameters
    ----------
    keys : ndarray of shape (n_items,), unsigned or signed integers
        One key per item (:func:`item_keys` of the item ids, or row positions).
    seed : int
        Taken modulo 2**64.
    start, stop : int
        Replicate numbers, ``0 <= start <= stop``.

    Returns
    -------
    ndarray of float64, shape (stop - start, n_items)
        ``w[r - start, i]``: how many times item ``i`` enters replicate ``r``.
        It depends on ``(seed, keys[i], r)`` only (see the module's Notes): the
        same for an item whatever batch it is in and whatever the order.

    Raises
    ------
    SchemaError
        When ``keys`` is not a 1-D integer array.
    InvalidValueError
        On a non-integer seed or a bad replicate range.

    Examples
    --------
    >>> w = poisson_weights(item_keys(["a", "b", "c"]), 0, 0, 4)
    >>> w.shape
    (4, 3)
    >>> bool((poisson_weights(item_keys(["c"]), 0, 2, 4)[:, 0] == w[2:, 2]).all())
    True
    """
    arr = np.asarray(keys)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise SchemaError(f"keys must be a 1-D integer array (see item_keys); got "
                          f"dtype {arr.dtype}, shape {arr.shape}")
    seed = _check_seed(seed)
    start = check_int("start", start)
    stop = check_int("stop", stop, low=start)
    n = arr.shape[0]
    out = np.empty((stop - start, n), dtype=np.float64)
    if out.size == 0:
        return out
    from annokit.core._poisson import fill_weights_threaded  # numba, on first use

    fill_weights_threaded(arr.astype(np.uint64, copy=False), np.uint64(seed ^ _SEED_TAG), start,
                          stop, _GAMMA, _M1, _M2, _TABLE, _THRESHOLDS, _TABLE_SHIFT, out)
    return out


def replicate_chunks(n_boot: int, n_items: int, *, budget: int = 4_000_000
                     ) -> list[tuple[int, int]]:
    """Split replicates ``0 .. n_boot - 1`` into ``(start, stop)`` chunks of at most ``budget`` weights.

    Each chunk has ``max(1, budget // n_items)`` replicates (the last fewer), so
    a chunk's weight matrix is about ``budget`` float64 values (32 MB by default),
    whatever ``n_boot``.

    Examples
    --------
    >>> replicate_chunks(10, 1_000, budget=4_000)
    [(0, 4), (4, 8), (8, 10)]
    """
    n_boot = check_int("n_boot", n_boot)
    n_items = check_int("n_items", n_items)
    budget = check_int("budget", budget, low=1)
    rows = max(1, budget // max(n_items, 1))
    return [(r, min(n_boot, r + rows)) for r in range(0, n_boot, rows)]


@dataclass(frozen=True)
class BootstrapResult:
    """A point estimate with its bootstrap interval.

    Attributes
    ----------
    estimate : float
        The statistic on all items (every weight 1).
    low, high : float
        Interval bounds over the valid replicates (NaN if none is, or without an interval).
    n_boot : int
        Replicates drawn, valid or not.
    confidence : float
    n_invalid : int
        Replicates dropped: total weight zero or a non-finite statistic.
    replicates : ndarray of shape (n_boot,)
        Every replicate's statistic (NaN for the invalid ones).
    method : {"percentile", "normal", "bounds", "none"}
        ``"percentile"`` (:func:`percentile_interval`), ``"bounds"``
        (:func:`bounds_interval`) or ``"none"`` (:func:`no_interval`: no honest interval).
    reason : str
        Why there is no interval (``method="none"``); empty otherwise.
    """

    estimate: float
    low: float
    high: float
    n_boot: int
    confidence: float
    n_invalid: int = 0
    replicates: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)
    method: str = "percentile"
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """``estimate``, ``low``, ``high``, ``confidence``, ``n_boot``, ``n_invalid`` as plain
        numbers; ``method`` unless percentile, and ``reason`` when there is no interval."""
        out: dict[str, Any] = {"estimate": self.estimate, "low": self.low, "high": self.high,
                               "confidence": self.confidence, "n_boot": self.n_boot,
                               "n_invalid": self.n_invalid}
        if self.method != "percentile":
            out["method"] = self.method
        if self.reason:
            out["reason"] = self.reason
        return out


def percentile_interval(estimate: float, replicates: Any, confidence: float) -> BootstrapResult:
    """The percentile interval of bootstrap replicates (Efron & Tibshirani 1993, ch. 13).

    Parameters
    ----------
    estimate : float
        The statistic on all items.
    replicates : array-like of shape (n_boot,)
        One statistic per replicate; NaN (or infinite) marks an invalid replicate.
    confidence : float
        In (0, 1).

    Returns
    -------
    BootstrapResult
        ``low``/``high``: the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2``
        quantiles (numpy's linear rule) of the finite replicates; ``n_invalid``
        counts the others. NaN bounds when no replicate is valid.

    Examples
    --------
    >>> r = percentile_interval(0.5, [0.1, 0.9, float("nan"), 0.5], 0.5)
    >>> r.low, r.high, r.n_invalid
    (0.3, 0.7, 1)
    """
    confidence = check_open_unit("confidence", confidence)
    reps = np.asarray(replicates, dtype=np.float64)
    if reps.ndim != 1:
        raise SchemaError(f"replicates must be 1-D; got shape {reps.shape}")
    valid = reps[np.isfinite(reps)]
    tail = (1.0 - confidence) / 2
    low, high = np.quantile(valid, [tail, 1 - tail]) if valid.size else (np.nan, np.nan)
    return BootstrapResult(float(estimate), float(low), float(high), int(reps.size), confidence,
                           int(reps.size - valid.size), reps)


def normal_interval(estimate: float, replicates: Any, confidence: float, *,
                    support: tuple[float, float] = (-np.inf, np.inf)) -> BootstrapResult:
    """The normal interval with the bootstrap standard error (Efron & Tibshirani 1993, eq. 13.5).

    ``estimate -/+ z * sd(replicates)``, ``z`` the standard normal's ``(1 + confidence) / 2``
    quantile and ``sd`` the standard deviation of the finite replicates. Used for the means
    over items: their sampling distribution is close to normal at the sizes users have, and
    the standard deviation of 200 replicates is far steadier than their 2.5% and 97.5%
    quantiles (five replicates in each tail), whose noise costs the percentile interval 1-3
    points of coverage (``recipes/interval_coverage.py``). ``support`` is the range of values the
    statistic can take (e.g. ``(0, 1)`` for a rate): the ends are clipped to it, which can only
    raise the coverage (not when the estimate itself lies outside it).

    Examples
    --------
    >>> r = normal_interval(0.5, [0.4, 0.6, float("nan")], 0.95)
    >>> round(r.low, 4), round(r.high, 4), r.method, r.n_invalid
    (0.2228, 0.7772, 'normal', 1)
    >>> normal_interval(0.05, [0.0, 0.1], 0.95, support=(0.0, 1.0)).low
    0.0
    """
    from statistics import NormalDist

    confidence = check_open_unit("confidence", confidence)
    reps = np.asarray(replicates, dtype=np.float64)
    if reps.ndim != 1:
        raise SchemaError(f"replicates must be 1-D; got shape {reps.shape}")
    valid = reps[np.isfinite(reps)]
    half = NormalDist().inv_cdf((1 + confidence) / 2) * (float(valid.std(ddof=1))
                                                          if valid.size > 1 else np.nan)
    low, high = float(estimate - half), float(estimate + half)
    if support[0] <= estimate <= support[1]:  # a bias-corrected estimate may lie outside
        low, high = max(low, support[0]), min(high, support[1])
    return BootstrapResult(float(estimate), low, high, int(reps.size), confidence,
                           int(reps.size - valid.size), reps, method="normal")


def bounds_interval(estimate: float, lower: Any, upper: Any, confidence: float, *,
                    replicates: Any = None) -> BootstrapResult:
    """An interval for a population value ``theta`` bounded by ``|g| <= theta <= U``.

    ``g`` is a signed smooth population quantity (a difference of means) and ``U`` one
    whose estimate is not biased downward; the plug-in estimate of ``theta`` itself may be
    badly biased. With ``q`` the percentiles of the bootstrap replicates and ``a = (1 -
    confidence) / 2``: ``low`` is the distance from 0 to g's percentile interval
    ``[q_a(g*), q_{1-a}(g*)]`` (0 when it contains 0, or when ``lower`` is all NaN: no
    lower statistic) and ``high = q_{1-a}(U*)`` (raised to ``low`` if below it). Each end
    misses with probability about ``a``, so the interval covers ``theta`` at least at
    ``confidence`` (more when the bounds are slack). The point estimate may lie outside it. Used by the binned
    calibration errors (:func:`annokit.metrics._binning.gap_bounds`).

    Parameters
    ----------
    estimate : float
        The reported point estimate.
    lower, upper : array-like of shape (n_boot,)
        Replicates of ``g`` and ``U``; NaN marks an invalid replicate.
    confidence : float
        In (0, 1).
    replicates : array-like of shape (n_boot,), optional
        The point estimate's own replicates, kept in the result (default ``upper``'s).

    Returns
    -------
    BootstrapResult
        ``method="bounds"``; ``n_invalid`` counts the replicates invalid in either statistic.

    Examples
    --------
    >>> r = bounds_interval(0.3, [-0.2, -0.1, -0.05], [0.4, 0.5, 0.6], 0.5)
    >>> r.low, r.high, r.method
    (0.075, 0.55, 'bounds')
    >>> bounds_interval(0.3, [-0.1, 0.1], [0.4, 0.5], 0.5).low
    0.0
    """
    lo = percentile_interval(estimate, lower, confidence)
    hi = percentile_interval(estimate, upper, confidence)
    # |g| >= the distance from 0 to g's percentile interval; 0 without a lower statistic
    low = 0.0 if np.isnan(lo.low) or lo.low <= 0.0 <= lo.high else min(abs(lo.low), abs(lo.high))
    reps = hi.replicates if replicates is None else np.asarray(replicates, dtype=np.float64)
    high = max(hi.high, low) if np.isfinite(hi.high) else hi.high  # U below |g|: U is off
    return BootstrapResult(float(estimate), float(low), float(high), hi.n_boot, hi.confidence,
                           max(lo.n_invalid, hi.n_invalid), reps, method="bounds")


def no_interval(estimate: float, n_boot: int, confidence: float, reason: str, *,
                replicates: Any = None) -> BootstrapResult:
    """A point estimate without an interval (NaN bounds, ``method="none"``), and why.

    Examples
    --------
    >>> r = no_interval(0.2, 100, 0.95, "no honest interval")
    >>> r.to_dict()["method"], r.reason
    ('none', 'no honest interval')
    """
    reps = np.zeros(0) if replicates is None else np.asarray(replicates, dtype=np.float64)
    return BootstrapResult(float(estimate), np.nan, np.nan, int(n_boot),
                           check_open_unit("confidence", confidence), 0, reps, method="none",
                           reason=reason)


WeightedStatistic = Callable[[np.ndarray], np.ndarray]


def _as_statistic(values: Any, keys: Any, name: str) -> tuple[WeightedStatistic, int, float]:
    """``values`` as ``f(weights (r, n)) -> (r,)``, the number of items and the estimate."""
    if callable(values):
        if keys is None:
            raise SchemaError(f"{name} is a function of item weights: pass keys (one per item)")
        n = int(np.shape(keys.to_numpy() if hasattr(keys, "to_numpy") else keys)[0])

        def f(w: np.ndarray) -> np.ndarray:
            out = np.asarray(values(w), dtype=np.float64)
            if out.shape != (w.shape[0],):
                raise SchemaError(f"{name} must return shape ({w.shape[0]},) for weights of "
                                  f"shape {w.shape}; got {out.shape}")
            return out
        return f, n, float(f(np.ones((1, n)))[0])
    arr = np.asarray(values.to_numpy() if hasattr(values, "to_numpy") else values,
                     dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise SchemaError(f"{name} must be a non-empty 1-D array of per-item values or a "
                          f"function of weights; got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise InvalidValueError(
            f"{name} has NaN or infinite values at item {int(np.argmin(np.isfinite(arr)))}")
    return (lambda w: (w @ arr) / w.sum(axis=1)), arr.size, float(arr.mean())


def bootstrap_replicates(statistic: WeightedStatistic, keys: np.ndarray, *, n_boot: int,
                         seed: int, budget: int = 4_000_000) -> np.ndarray:
    """``statistic`` on replicates ``0 .. n_boot - 1`` of the Poisson bootstrap, chunk by chunk.

    Parameters
    ----------
    statistic : callable
        Maps weights of shape (r, n_items) to r values.
    keys : ndarray of uint64, shape (n_items,)
    n_boot, seed : int
    budget : int
        Weights per chunk (:func:`replicate_chunks`).

    Returns
    -------
    ndarray of shape (n_boot,)
        NaN for replicates whose total weight is zero.
    """
    from annokit.core.progress import progress

    out = np.empty(n_boot)
    with progress(total=n_boot, desc="bootstrap", unit="rep") as bar:
        for start, stop in replicate_chunks(n_boot, keys.shape[0], budget=budget):
            w = poisson_weights(keys, seed, start, stop)
            with np.errstate(invalid="ignore", divide="ignore"):
                reps = statistic(w)
            out[start:stop] = np.where(w.sum(axis=1) > 0, reps, np.nan)
            bar.update(stop - start)
    return out


def bootstrap_ci(values: Any, *, keys: Any = None, n_boot: int = 1000,
                 confidence: float = 0.95, seed: int = 0) -> BootstrapResult:
    """Percentile bootstrap interval of a mean over items (or of any weighted statistic).

    Parameters
    ----------
    values : array-like of shape (n_items,) or callable
        Per-item values (the statistic is their mean; a replicate's is the
        weighted mean), or a function of a weight matrix of shape
        (r, n_items) returning the r replicates' statistics, e.g.
        ``lambda w: compute("ece", probs, hard=y, weights=w)``.
    keys : array-like of shape (n_items,), optional
        Item ids (hashed by :func:`item_keys`), or the uint64 keys it returns. Default: row
        positions, which tie the draw to the row order; pass the item ids for an
        interval that does not depend on order or batching. Required when
        ``values`` is a function.
    n_boot : int, default 1000
    confidence : float, default 0.95
    seed : int, default 0

    Returns
    -------
    BootstrapResult

    Raises
    ------
    SchemaError
        On values of the wrong shape, keys of the wrong length, or a function
        without keys.
    InvalidValueError
        On NaN values or bad parameters.

    Examples
    --------
    >>> r = bootstrap_ci([0.0, 1.0, 1.0, 0.0, 1.0], n_boot=200, seed=0)
    >>> r.estimate, bool(r.low <= r.estimate <= r.high)
    (0.6, True)
    """
    n_boot = check_int("n_boot", n_boot, low=1)
    confidence = check_open_unit("confidence", confidence)
    seed = _check_seed(seed)
    f, n, estimate = _as_statistic(values, keys, "values")
    k = as_item_keys(keys, n)
    return percentile_interval(estimate, bootstrap_replicates(f, k, n_boot=n_boot, seed=seed),
                               confidence)


def paired_bootstrap_diff(values_a: Any, values_b: Any, *, keys: Any = None, n_boot: int = 1000,
                          confidence: float = 0.95, seed: int = 0) -> BootstrapResult:
    """Paired bootstrap of ``statistic(a) - statistic(b)`` for two models on the same items.

    Both statistics get the *same* weights in every replicate, so item
    difficulty cancels out of the interval; a model compared with itself gives
    exactly 0 everywhere.

    Parameters
    ----------
    values_a, values_b : array-like of shape (n_items,) or callable
        As ``values`` in :func:`bootstrap_ci`.
    keys, n_boot, confidence, seed
        As in :func:`bootstrap_ci`.

    Returns
    -------
    BootstrapResult
        Of the difference a - b.

    Raises
    ------
    SchemaError
        When the two cover different numbers of items, and as :func:`bootstrap_ci`.
    InvalidValueError
        As :func:`bootstrap_ci`.

    Examples
    --------
    >>> r = paired_bootstrap_diff([1.0, 1.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0], n_boot=100)
    >>> r.estimate
    0.5
    """
    n_boot = check_int("n_boot", n_boot, low=1)
    confidence = check_open_unit("confidence", confidence)
    seed = _check_seed(seed)
    fa, na, est_a = _as_statistic(values_a, keys, "values_a")
    fb, nb, est_b = _as_statistic(values_b, keys, "values_b")
    if na != nb:
        raise SchemaError(f"values_a covers {na} items but values_b covers {nb}")
    k = as_item_keys(keys, na)
    estimate = est_a - est_b
    reps = bootstrap_replicates(lambda w: fa(w) - fb(w), k, n_boot=n_boot, seed=seed)
    return percentile_interval(estimate, reps, confidence)
