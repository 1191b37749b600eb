"""Exact quantiles of values spread over partitions, without gathering them.

The equal-mass (adaptive) ECE bins at the ``b / n_bins`` quantiles of every
item's confidence (:func:`annokit.metrics._binning.quantile_edges`, numpy's
``method="linear"``). In memory that sorts every confidence; on Dask, holding
every item's confidence on one worker is what breaks at 1e7-1e8 items. Here the
values are held in sorted *runs* (each partition sorts its own once), the runs
answer in *groups* (a worker's partitions: one task per worker), and the order
statistics the quantiles need are found in two round trips by *brackets*:

1. every group sends about ``sample`` of its values, evenly spaced in each run (its
   first and last among them), with the exact count of the group's values below
   and at most each. Summed over the groups, these bound for any value ``x`` how
   many values are below ``x`` (at most the count below the next listed value at or
   above ``x``) and at most ``x`` (at least the count at most the last listed value
   at or below it). So each wanted order statistic of rank ``r`` is bracketed by
   ``[lo, hi]``: ``lo`` the largest listed value with at most ``r`` values possibly
   below it, ``hi`` the smallest with more than ``r`` values certainly at or below
   it; and the bounds say how many values lie strictly inside the bracket (a few
   times ``n / sample`` per group);
2. every group sends how many of its values are below ``lo`` and its distinct
   values in ``[lo, hi]`` with their counts: now the bounds are exact, ``lo == hi``,
   and that is the order statistic.

When a set's brackets would gather more than ``gather`` values, the widest are
sampled again instead (a fallback round: the same bounds inside the bracket,
which shrinks it about ``sample`` times), and gathered the round after. Ties
never widen a bracket by more than its two ends, which travel as one value and a
count. Work per group and bracket is a binary search per run and listed value;
bytes about ``24 sample`` per group and set for round 1, ``16`` per gathered value
for round 2.

The quantile is then interpolated from its two order statistics exactly as
numpy does (``(n - 1) q`` virtual index, numpy's ``_lerp``), so the edges equal
``np.quantile(all_values, q)`` bit for bit (tested). Values must not be NaN;
``-0.0`` and ``0.0`` count as one value (numpy's pick between them depends on its
partitioning).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["exact_quantiles", "exact_quantiles_sets", "finish_step", "lerp", "local_runner",
           "order_statistic_positions", "partition_step", "reduce_step"]

#: Values each group lists per bracket, and the most values (bounded from the lists) a set
#: may gather in one round; beyond it, the widest brackets are sampled again.
SAMPLE = 4096
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

#: A group's answer for one bracket: its values below ``lo``; then distinct values in the
#: bracket (sorted, the group's smallest and largest in it among them), with, for each,
#: how many of the group's values in the bracket lie from it up to the next one listed
#: (``up``) and from after the previous one listed up to it (``down``). Gathered brackets
#: list every distinct value, with ``up = down = count``.
Answer = tuple[int, np.ndarray, np.ndarray, np.ndarray]


def _runs(values: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, ...]:
    """Distinct values of sorted ``values`` with their summed ``counts``."""
    if values.size == 0:
        return values, counts[:0]
    starts = np.flatnonzero(np.concatenate([[True], values[1:] != values[:-1]]))
    return values[starts], np.add.reduceat(counts, starts)


def _positions(run: np.ndarray, k: int, phase: float) -> np.ndarray:
    """``run``'s values at ``k`` evenly spaced positions shifted by ``phase`` of a step, and
    its first and last."""
    step = run.size / k
    pos = np.minimum(((np.arange(k) + phase) * step).astype(np.int64), run.size - 1)
    return np.concatenate([run[:1], run[pos], run[-1:]])


def _bracket(runs: Sequence[np.ndarray], lo: float, hi: float, gather: bool, sample: int
             ) -> Answer:
    """A group's answer for the bracket ``[lo, hi]`` of its sorted ``runs``."""
    a = [int(np.searchsorted(r, lo, side="left")) for r in runs]
    inside = [r[i:np.searchsorted(r, hi, side="right")] for r, i in zip(runs, a, strict=True)]
    inside = [s for s in inside if s.size]
    n_in = sum(s.size for s in inside)
    if gather or n_in <= sample:
        values = np.sort(np.concatenate(inside)) if inside else np.zeros(0)
        vals, counts = _runs(values, np.ones(values.size, dtype=np.int64))
        return sum(a), vals, counts, counts
    # candidates: about ``sample`` sorted positions in all, evenly spaced in each run (its
    # first and last among them) with a phase of its own (alike runs would otherwise put
    # theirs at the same quantiles, leaving wide gaps between); then the exact counts
    # below / at most each
    cand = np.unique(np.concatenate([_positions(s, max(1, sample * s.size // n_in),
                                                (k + 0.5) / len(inside))
                                     for k, s in enumerate(inside)]))
    less = np.zeros(cand.size, dtype=np.int64)
    at_most = np.zeros(cand.size, dtype=np.int64)
    for s in inside:
        less += np.searchsorted(s, cand, side="left")
        at_most += np.searchsorted(s, cand, side="right")
    return sum(a), cand, np.diff(less, append=n_in), np.diff(at_most, prepend=0)


def partition_step(step: str, runs: Sequence[np.ndarray], args: tuple) -> list[Answer]:
    """One group's part of :func:`exact_quantiles`' step ``step`` (``"brackets"``).

    ``runs`` are the group's values in sorted arrays (a worker's partitions, say);
    ``args`` is ``(brackets, gather, sample)``: ``brackets`` of shape (n, 2) (``lo``,
    ``hi``), ``gather`` of shape (n,) bool (send every distinct value in the bracket,
    else about ``sample`` values with exact counts when it holds more).
    """
    if step != "brackets":
        raise ValueError(f"unknown step {step!r}")
    brackets, gather, sample = args
    return [_bracket(runs, lo, hi, bool(g), sample)
            for (lo, hi), g in zip(brackets, gather, strict=True)]


def reduce_step(step: str, results: Sequence[list[Answer]]) -> list[Answer]:
    """Combine groups' results of step ``step``: per bracket, the counts below it added and
    the lists put together."""
    out: list[Answer] = []
    for answers in zip(*results, strict=True):
        out.append((sum(int(a[0]) for a in answers), np.concatenate([a[1] for a in answers]),
                    np.concatenate([a[2] for a in answers]),
                    np.concatenate([a[3] for a in answers])))
    return out


def finish_step(step: str, value: list[Answer]) -> list[Answer]:
    """The combined answers, each bracket's list sorted with equal values merged."""
    out: list[Answer] = []
    for below, vals, up, down in value:
        order = np.argsort(vals, kind="stable")
        v, u = _runs(vals[order], up[order])
        out.append((below, v, u, _runs(vals[order], down[order])[1]))
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
        every group of sorted runs of the values and returns the groups' results
        combined by :func:`reduce_step` and :func:`finish_step`. :func:`local_runner`
        does this in memory; the Dask engine with one task per worker.
    sample, gather : int
        Values a group lists per bracket; most values a set gathers in one round.

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
    selection is already done gets no brackets. Two round trips (one when every group
    holds at most ``sample`` values) unless a set's brackets hold more than ``gather``
    values after the first.
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


def local_runner(groups: Sequence[Sequence[np.ndarray]]) -> Callable[[str, tuple], Any]:
    """A ``run`` for :func:`exact_quantiles` over in-memory groups of arrays (tests, small
    data): each group answers for its arrays, the groups' answers are combined."""
    groups = [[np.sort(np.asarray(a, dtype=np.float64).ravel()) for a in g] for g in groups]

    def run(step: str, args: tuple) -> Any:
        return finish_step(step, reduce_step(step, [partition_step(step, g, args)
                                                    for g in groups]))

    return run
