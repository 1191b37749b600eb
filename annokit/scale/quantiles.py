"""Exact quantiles of values spread over partitions, without gathering them.

The equal-mass (adaptive) ECE bins at the ``b / n_bins`` quantiles of every
item's confidence (:func:`annokit.metrics._binning.quantile_edges`, numpy's
``method="linear"``). In memory that sorts every confidence; on Dask, holding
every item's confidence on one worker is what breaks at 1e7-1e8 items. Here each
partition sorts its own values once, and the order statistics the quantiles need
are found in two round trips by *brackets*:

1. every partition sends a thin sorted sample of its values: ``sample`` values at
   evenly spaced sorted positions (the first and the last among them), each with
   the gap to the previous and to the next sampled position. From them the client
   bounds, for any value ``x``, how many values of all partitions are below ``x``
   (at most the sum of the gaps up to the first sample at or above ``x``) and at
   most ``x`` (at least the sum up to the last sample at or below it), and so
   brackets each wanted order statistic of rank ``r`` by ``[lo, hi]``: ``lo`` the
   largest sample value with at most ``r`` values certainly below it, ``hi`` the
   smallest with more than ``r`` values certainly at or below it. The bounds also
   give how many values lie strictly inside the bracket (about
   ``2 n / sample``);
2. every partition sends how many of its values are below ``lo`` and its distinct
   values in ``[lo, hi]`` with their counts; the order statistic is read off.

When the brackets of a set would gather more than ``gather`` values, round 2
samples the brackets again instead (a fallback round: the same bounds inside the
bracket, shrinking it about ``sample / 2`` times), and gathers the next round.
Ties never widen a bracket by more than its two ends, which travel as one value and
a count. Work per partition is one sort (done by the caller) and a binary search per
bracket; bytes per round about ``24 sample`` per partition and set for round 1,
``16 x`` the gathered values for round 2.

The quantile is then interpolated from its two order statistics exactly as
numpy does (``(n - 1) q`` virtual index, numpy's ``_lerp``), so the edges equal
``np.quantile(all_values, q)`` bit for bit (tested). Values must not be NaN.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["exact_quantiles", "exact_quantiles_sets", "finish_step", "lerp", "local_runner",
           "order_statistic_positions", "partition_step", "reduce_step"]

#: Sorted positions each partition samples per bracket, and the most values (bounded from
#: the samples) a set may gather in one round; beyond it, the brackets are sampled again.
SAMPLE = 1024
GATHER = 1 << 19
#: Sampling rounds after which every bracket is gathered whatever its size.
MAX_ROUNDS = 8


def order_statistic_positions(n: int, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ranks below and above each quantile's virtual index, and the interpolation weight.

    numpy's linear method: virtual index ``h = (n - 1) q``, ``lo = floor(h)``,
    ``hi = lo + 1`` (both clipped to ``[0, n - 1]``), ``gamma = h - lo``.
    """
    h = (n - 1) * np.asarray(q, dtype=np.float64)
    lo = np.floor(h)
    gamma = h - lo
    lo_i = np.clip(lo.astype(np.int64), 0, n - 1)
    hi_i = np.clip(lo_i + 1, 0, n - 1)
    return lo_i, hi_i, gamma


def lerp(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """numpy's quantile interpolation: ``a + (b - a) t``, from ``b`` when ``t >= 0.5``."""
    diff = np.subtract(b, a)
    out = np.add(a, diff * t)
    np.subtract(b, diff * (1 - t), out=out, where=t >= 0.5)
    return out


# --------------------------------------------------------------------------- partition side

#: A partition's answer for one bracket: values below ``lo``, then sample values (sorted,
#: distinct), the gap from each to the next sampled position (``up``) and from the previous
#: one (``down``). Gathered brackets send every distinct value with ``up = down = count``.
Answer = tuple[int, np.ndarray, np.ndarray, np.ndarray]


def _runs(values: np.ndarray, *sums: np.ndarray) -> tuple[np.ndarray, ...]:
    """Distinct values of sorted ``values`` and, per distinct value, the sums of ``sums``."""
    if values.size == 0:
        return (values, *(s[:0] for s in sums))
    starts = np.flatnonzero(np.concatenate([[True], values[1:] != values[:-1]]))
    return (values[starts], *(np.add.reduceat(s, starts) for s in sums))


def _bracket(values: np.ndarray, lo: float, hi: float, gather: bool, sample: int) -> Answer:
    """One partition's answer for the bracket ``[lo, hi]`` of its sorted ``values``."""
    a = int(np.searchsorted(values, lo, side="left"))
    inside = values[a:np.searchsorted(values, hi, side="right")]
    if gather or inside.size <= sample:
        ones = np.ones(inside.size, dtype=np.int64)
        vals, counts = _runs(inside, ones)
        return a, vals, counts, counts
    # evenly spaced sorted positions, the first and the last among them
    pos = np.unique(np.rint(np.linspace(0, inside.size - 1, sample)).astype(np.int64))
    up = np.diff(pos, append=inside.size)
    down = np.diff(pos, prepend=-1)
    vals, up, down = _runs(inside[pos], up, down)
    return a, vals, up, down


def partition_step(step: str, values: np.ndarray, args: tuple) -> list[Answer]:
    """One partition's part of :func:`exact_quantiles`' step ``step`` (``"brackets"``).

    ``values`` sorted ascending; ``args`` is ``(brackets, gather, sample)``: ``brackets``
    of shape (n, 2) (``lo``, ``hi``), ``gather`` of shape (n,) bool (send every distinct
    value in the bracket, else a sample of ``sample`` positions when it holds more).
    """
    if step != "brackets":
        raise ValueError(f"unknown step {step!r}")
    brackets, gather, sample = args
    values = np.asarray(values, dtype=np.float64).ravel()
    return [_bracket(values, lo, hi, bool(g), sample)
            for (lo, hi), g in zip(brackets, gather, strict=True)]


def reduce_step(step: str, results: Sequence[list[Answer]]) -> list[Answer]:
    """Combine partitions' (or groups') results of step ``step``: per bracket, the counts
    below it added and the samples put together."""
    out = []
    for answers in zip(*results, strict=True):
        out.append((sum(int(a[0]) for a in answers),
                    *(np.concatenate([a[j] for a in answers]) for j in (1, 2, 3))))
    return out


def finish_step(step: str, value: list[Answer]) -> list[Answer]:
    """The combined answers, each bracket's sample sorted with equal values merged."""
    out = []
    for below, vals, up, down in value:
        order = np.argsort(vals, kind="stable")
        out.append((below, *_runs(vals[order], up[order], down[order])))
    return out


# --------------------------------------------------------------------------- selection

def exact_quantiles(parts: Sequence[Any], q: Any, *, run: Callable[[str, tuple], Any],
                    sample: int = SAMPLE, gather: int = GATHER) -> np.ndarray:
    """``np.quantile(concatenate(values), q)`` for values held by partitions.

    Parameters
    ----------
    parts : sequence
        One handle per partition (not read here: ``run`` knows how to reach them).
    q : array-like of float in [0, 1]
    run : callable
        ``run(step, args)`` applies :func:`partition_step` ``step`` with ``args`` to
        every partition's values (sorted ascending) and returns the results combined
        by :func:`reduce_step` and :func:`finish_step`. :func:`local_runner` does this
        in memory; the Dask engine with one task per worker.
    sample, gather : int
        Sorted positions a partition samples per bracket; most values a round gathers.

    Returns
    -------
    ndarray of float64, shape of ``q``; NaN (all of them) when there are no values.
    """
    return exact_quantiles_sets(1, q, run=lambda step, args: [run(step, args[0])],
                                sample=sample, gather=gather)[0]


def exact_quantiles_sets(n_sets: int, q: Any, *, run: Callable[[str, list[tuple]], list[Any]],
                         sample: int = SAMPLE, gather: int = GATHER) -> list[np.ndarray]:
    """:func:`exact_quantiles` of several sets of values, sharing every pass over the data.

    ``run(step, args_per_set)`` returns one combined result per set; a set whose
    selection is already done gets no brackets. Two round trips unless a set's brackets
    hold more than ``gather`` values after the first (then one more per ``sample / 2``
    times fewer values).
    """
    q = np.asarray(q, dtype=np.float64)
    whole = np.array([[-np.inf, np.inf]])
    firsts = run("brackets", [(whole, np.zeros(1, bool), sample)] * n_sets)
    sel = [_Selection(first[0], q) for first in firsts]
    for round_ in range(MAX_ROUNDS + 1):
        asks = [s.brackets(gather, last=round_ == MAX_ROUNDS) for s in sel]
        if not any(len(a[0]) for a in asks):
            break
        answers = run("brackets", [(b, g, sample) for b, g in asks])
        for s, a in zip(sel, answers, strict=True):
            s.narrow(a)
    return [s.result(q) for s in sel]


class _Selection:
    """One set's wanted order statistics and the bracket that holds each."""

    def __init__(self, first: Answer, q: np.ndarray) -> None:
        self.n = int(first[2].sum())  # the gaps of the whole range add up to the count
        if self.n == 0:
            return
        self.lo_i, self.hi_i, self.gamma = order_statistic_positions(self.n, q.ravel())
        self.ranks = np.unique(np.concatenate([self.lo_i, self.hi_i]))
        self.lo = np.full(self.ranks.size, -np.inf)
        self.hi = np.full(self.ranks.size, np.inf)
        self.inside = np.zeros(self.ranks.size, dtype=np.int64)  # values strictly inside
        self.done = np.zeros(self.ranks.size, dtype=bool)
        self.which = np.zeros(self.ranks.size, dtype=np.int64)
        self._update(np.arange(self.ranks.size), first)

    def _update(self, ranks_at: np.ndarray, answer: Answer) -> None:
        """Narrow the brackets of ``ranks_at`` (all in one bracket) from its merged answer.

        With ``F(x)`` an upper bound of the values below ``x`` and ``G(x)`` a lower bound
        of the values at most ``x`` (exact when every value was sent), the value of rank
        ``r`` is at least every ``x`` with ``F(x) <= r`` and at most every ``x`` with
        ``G(x) >= r + 1``.
        """
        below, vals, up, down = answer
        f = below + np.concatenate([[0], np.cumsum(up)[:-1]])
        g = below + np.cumsum(down)
        r = self.ranks[ranks_at]
        i = np.searchsorted(f, r, side="right") - 1
        j = np.searchsorted(g, r + 1, side="left")
        self.lo[ranks_at], self.hi[ranks_at] = vals[i], vals[j]
        self.inside[ranks_at] = np.maximum(f[j] - g[i], 0)
        self.done[ranks_at] = i == j

    def brackets(self, gather: int, *, last: bool) -> tuple[np.ndarray, np.ndarray]:
        """The open brackets, and which to gather (all of them when ``last``): the narrowest
        first while the values they hold add up to at most ``gather``."""
        if self.n == 0 or self.done.all():
            self._asked = np.zeros((0, 2))
            return self._asked, np.zeros(0, bool)
        open_ = ~self.done
        pairs = np.stack([self.lo[open_], self.hi[open_]], axis=1)
        self._asked, first, inv = np.unique(pairs, axis=0, return_index=True,
                                            return_inverse=True)
        self.which[open_] = inv.ravel()
        size = self.inside[open_][first] + 2  # the two ends' ties travel as one value each
        take = np.zeros(size.size, dtype=bool)
        by_size = np.argsort(size, kind="stable")
        take[by_size[np.cumsum(size[by_size]) <= gather]] = True
        return self._asked, take | last

    def narrow(self, answers: list[Answer]) -> None:
        open_ = np.flatnonzero(~self.done) if self.n else np.zeros(0, np.int64)
        for k, answer in enumerate(answers):
            self._update(open_[self.which[open_] == k], answer)

    def result(self, q: np.ndarray) -> np.ndarray:
        if self.n == 0:
            return np.full(q.shape, np.nan)
        a = self.lo[np.searchsorted(self.ranks, self.lo_i)]
        b = self.lo[np.searchsorted(self.ranks, self.hi_i)]
        return lerp(a, b, self.gamma).reshape(q.shape)


def local_runner(arrays: Sequence[np.ndarray]) -> Callable[[str, tuple], Any]:
    """A ``run`` for :func:`exact_quantiles` over in-memory arrays (tests, small data)."""
    arrays = [np.sort(np.asarray(a, dtype=np.float64).ravel()) for a in arrays]

    def run(step: str, args: tuple) -> Any:
        return finish_step(step, reduce_step(step, [partition_step(step, a, args)
                                                    for a in arrays]))

    return run
