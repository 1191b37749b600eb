"""Exact quantiles of values spread over partitions, without gathering them.

The equal-mass (adaptive) ECE bins at the ``b / n_bins`` quantiles of every
item's confidence (:func:`annokit.metrics._binning.quantile_edges`, numpy's
``method="linear"``). In memory that sorts every confidence; on Dask, holding
every item's confidence on one worker is what breaks at 1e7-1e8 items. Here the
quantiles are found exactly by selection:

1. one pass gives each partition's count, minimum and maximum;
2. each round, every partition counts its values in ``cells`` equal-width cells
   of the interval that holds a wanted order statistic (counts are summed by a
   tree of additions); the cell holding the rank becomes the next interval;
3. once an interval holds at most ``gather`` values (or after the rounds have
   shrunk it to a few floating-point numbers), the partitions send their distinct
   values in it with their counts, and the order statistic is read off.

The quantile is then interpolated from its two order statistics exactly as
numpy does (``(n - 1) q`` virtual index, numpy's ``_lerp``), so the edges equal
``np.quantile(all_values, q)`` bit for bit (tested). Memory per task is
``n_intervals x cells`` counts; work is one pass per round (two or three at 1e8
values with the defaults).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["exact_quantiles", "exact_quantiles_sets", "finish_step", "lerp", "local_runner",
           "order_statistic_positions", "partition_step", "reduce_step"]

#: Cells per interval and round, and the most values an interval may hold to be gathered.
CELLS = 4096
GATHER = 1 << 16
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


# --------------------------------------------------------------------------- partition tasks

def _min_max(values: np.ndarray) -> np.ndarray:  # (count, min, max)
    if values.size == 0:
        return np.array([0.0, np.inf, -np.inf])
    return np.array([float(values.size), float(values.min()), float(values.max())])


def _in(values: np.ndarray, lo: float, hi: float, closed: bool) -> np.ndarray:
    return (values >= lo) & ((values <= hi) if closed else (values < hi))


def _cell_counts(values: np.ndarray, intervals: np.ndarray, cells: int) -> np.ndarray:
    """``(n_intervals, cells)`` counts of ``values`` in equal-width cells of each interval."""
    out = np.zeros((len(intervals), cells), dtype=np.int64)
    for i, (lo, hi, closed) in enumerate(intervals):
        v = values[_in(values, lo, hi, bool(closed))]
        if v.size:
            edges = np.linspace(lo, hi, cells + 1)
            idx = np.clip(np.searchsorted(edges, v, side="right") - 1, 0, cells - 1)
            out[i] = np.bincount(idx, minlength=cells)
    return out


def _distinct(values: np.ndarray, intervals: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Distinct values in each interval, with their counts."""
    return [np.unique(values[_in(values, lo, hi, bool(closed))], return_counts=True)
            for lo, hi, closed in intervals]


def _merge_distinct(parts: Sequence[tuple[np.ndarray, np.ndarray]]
                    ) -> tuple[np.ndarray, np.ndarray]:
    values = np.concatenate([p[0] for p in parts])
    counts = np.concatenate([p[1] for p in parts])
    uniq, inverse = np.unique(values, return_inverse=True)
    return uniq, np.bincount(inverse.ravel(), weights=counts, minlength=uniq.size).astype(np.int64)


# --------------------------------------------------------------------------- selection

def exact_quantiles(parts: Sequence[Any], q: Any, *, run: Callable[[str, tuple], Any],
                    cells: int = CELLS, gather: int = GATHER) -> np.ndarray:
    """``np.quantile(concatenate(values), q)`` for values held by partitions.

    Parameters
    ----------
    parts : sequence
        One handle per partition (not read here: ``run`` knows how to reach them).
    q : array-like of float in [0, 1]
    run : callable
        ``run(step, args)`` applies :func:`partition_step` ``step`` with ``args`` to
        every partition's values and returns the results combined by
        :func:`reduce_step` and :func:`finish_step`. :func:`local_runner` does this
        in memory; the Dask engine with tasks and a tree of reductions.
    cells, gather : int
        Cells per interval and round; largest interval gathered as distinct values.

    Returns
    -------
    ndarray of float64, shape of ``q``; NaN (all of them) when there are no values.
    """
    return exact_quantiles_sets(1, q, run=lambda step, args: [run(step, args[0])],
                                cells=cells, gather=gather)[0]


def exact_quantiles_sets(n_sets: int, q: Any, *, run: Callable[[str, list[tuple]], list[Any]],
                         cells: int = CELLS, gather: int = GATHER) -> list[np.ndarray]:
    """:func:`exact_quantiles` of several sets of values, sharing every pass over the data.

    ``run(step, args_per_set)`` returns one combined result per set; a set whose
    selection is already done gets arguments that make its step empty.
    """
    q = np.asarray(q, dtype=np.float64)
    infos = run("min_max", [()] * n_sets)
    sel = [_Selection(int(n_f), lo, hi, q) for n_f, lo, hi in infos]
    for _ in range(MAX_ROUNDS):
        asks = [s.cell_intervals(gather) for s in sel]
        if not any(len(a) for a in asks):
            break
        counts = run("cells", [(a, cells) for a in asks])
        for s, a, c in zip(sel, asks, counts, strict=True):
            s.narrow(a, c, cells)
    asks = [s.open_intervals() for s in sel]
    if any(len(a) for a in asks):
        merged = run("distinct", [(a,) for a in asks])
        for s, a, m in zip(sel, asks, merged, strict=True):
            s.read_off(a, m)
    return [s.result(q) for s in sel]


class _Selection:
    """One set's wanted order statistics and the value interval that holds each."""

    def __init__(self, n: int, lo: float, hi: float, q: np.ndarray) -> None:
        self.n = n
        self.found: dict[int, float] = {}
        if n == 0:
            self.state: dict[int, tuple] = {}
            return
        self.lo_i, self.hi_i, self.gamma = order_statistic_positions(n, q.ravel())
        ranks = np.unique(np.concatenate([self.lo_i, self.hi_i]))
        # rank -> (lo, hi, closed at hi, values below lo, values in the interval)
        self.state = {int(r): (lo, hi, True, 0, n) for r in ranks}

    def cell_intervals(self, gather: int) -> np.ndarray:
        keys = sorted({st[:3] for st in self.state.values() if st[4] > gather and st[0] < st[1]})
        self._asked = keys
        return np.array(keys, dtype=np.float64).reshape(-1, 3)

    def narrow(self, intervals: np.ndarray, counts: np.ndarray, cells: int) -> None:
        for r, (lo, hi, closed, below, _n) in list(self.state.items()):
            key = (lo, hi, closed)
            if key not in self._asked:
                continue
            row = counts[self._asked.index(key)]
            cum = below + np.cumsum(row)
            j = int(np.searchsorted(cum, r, side="right"))  # first cell with cum > r
            edges = np.linspace(lo, hi, cells + 1)
            last = j == cells - 1
            self.state[r] = (float(edges[j]), float(hi if last else edges[j + 1]),
                             closed and last, int(cum[j] - row[j]), int(row[j]))

    def open_intervals(self) -> np.ndarray:
        self._asked = sorted({st[:3] for st in self.state.values()})
        return np.array(self._asked, dtype=np.float64).reshape(-1, 3)

    def read_off(self, intervals: np.ndarray, merged: list[tuple[np.ndarray, np.ndarray]]) -> None:
        for r, (lo, hi, closed, below, _n) in self.state.items():
            values, counts = merged[self._asked.index((lo, hi, closed))]
            cum = below + np.cumsum(counts)
            self.found[r] = float(values[int(np.searchsorted(cum, r, side="right"))])

    def result(self, q: np.ndarray) -> np.ndarray:
        if self.n == 0:
            return np.full(q.shape, np.nan)
        a = np.array([self.found[int(r)] for r in self.lo_i])
        b = np.array([self.found[int(r)] for r in self.hi_i])
        return lerp(a, b, self.gamma).reshape(q.shape)


def partition_step(step: str, values: np.ndarray, args: tuple) -> Any:
    """One partition's part of :func:`exact_quantiles`' step ``step``."""
    values = np.asarray(values, dtype=np.float64).ravel()
    if step == "min_max":
        return _min_max(values)
    if step == "cells":
        return _cell_counts(values, *args)
    if step == "distinct":
        return _distinct(values, *args)
    raise ValueError(f"unknown step {step!r}")


def reduce_step(step: str, a: Any, b: Any) -> Any:
    """Combine two partitions' (or subtrees') results of step ``step``."""
    if step == "min_max":
        return np.array([a[0] + b[0], min(a[1], b[1]), max(a[2], b[2])])
    if step == "cells":
        return a + b
    return [_merge_distinct([x, y]) for x, y in zip(a, b, strict=True)]


def finish_step(step: str, value: Any) -> Any:
    if step == "min_max":
        return float(value[0]), float(value[1]), float(value[2])
    return value


def local_runner(arrays: Sequence[np.ndarray]) -> Callable[[str, tuple], Any]:
    """A ``run`` for :func:`exact_quantiles` over in-memory arrays (tests, small data)."""

    def run(step: str, args: tuple) -> Any:
        results = [partition_step(step, a, args) for a in arrays]
        out = results[0]
        for r in results[1:]:
            out = reduce_step(step, out, r)
        return finish_step(step, out)

    return run
