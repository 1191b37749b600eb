"""One pass of the evaluation engine: the metric states of every model and group, filled batch by
batch and merged (:class:`EvalPlan`).

:func:`annokit.metrics.engine.evaluate` builds one plan over all rows; the Dask engine
(:mod:`annokit.scale.eval_partition`) builds one per partition and merges the states the plans
return. A plan knows no metric by name: it creates each state from the registry
(``REGISTRY[name].state(**options)``) and fills the states of a batch with
:func:`annokit.metrics.states.update_many`.

Bootstrap replicates are the same states fed with 2-D Poisson weights
(:func:`annokit.core.resample.poisson_weights`, keyed by item), a chunk of replicates at a
time (:func:`annokit.core.resample.replicate_chunks`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from annokit.core.resample import poisson_weights, replicate_chunks
from annokit.metrics.registry import REGISTRY
from annokit.metrics.states import update_many

__all__ = ["EvalPlan"]


@dataclass(frozen=True)
class EvalPlan:
    """What one pass evaluates: models' probabilities, human labels, metrics, groups, row batches.

    ``groups`` holds sorted row positions per group (None: every row).
    """

    probs: Sequence[np.ndarray]
    soft: np.ndarray
    hard: np.ndarray
    names: tuple[str, ...]
    options: Mapping[str, dict[str, Any]]
    groups: Sequence[np.ndarray | None]
    batches: Sequence[tuple[int, int]]

    def fill(self, weights_of: Callable[[int, int], np.ndarray | None]) -> list[list[Any]]:
        """States ``[model][group] -> [state per name]``, batch by batch, merged (None: no rows)."""
        acc: list[list[Any]] = [[None] * len(self.groups) for _ in self.probs]
        for lo, hi in self.batches:
            w = weights_of(lo, hi)
            for g, rows in enumerate(self.groups):
                sel: Any = slice(lo, hi)
                wg = w
                if rows is not None:
                    sel = rows[np.searchsorted(rows, lo):np.searchsorted(rows, hi)]
                    if sel.size == 0:
                        continue
                    wg = None if w is None else w[:, sel - lo]
                s, y = self.soft[sel], self.hard[sel]
                for m, p in enumerate(self.probs):
                    states = [REGISTRY[k].state(**self.options[k]) for k in self.names]
                    update_many(states, p[sel], soft=s, hard=y, weights=wg)
                    if acc[m][g] is None:
                        acc[m][g] = states
                    else:
                        for a, b in zip(acc[m][g], states, strict=True):
                            a.merge(b)
        return acc

    def values(self, states: list[Any] | None, n_rep: int | None) -> np.ndarray:
        """``(n_names,)`` values, or ``(n_names, n_rep, 3)`` replicates (NaN without rows).

        A replicate holds the metric's value and its two bound statistics
        (:meth:`~annokit.metrics.states.MetricState.bounds`; NaN for metrics without:
        :data:`~annokit.metrics.results.REPLICATE_FIELDS`).
        """
        if states is None:
            shape = len(self.names) if n_rep is None else (len(self.names), n_rep, 3)
            return np.full(shape, np.nan)
        if n_rep is None:
            return np.array([float(st.compute()) for st in states])
        if not states:
            return np.empty((0, n_rep, 3))
        return np.stack([_replicate_values(st, n_rep) for st in states])

    def estimates(self) -> np.ndarray:
        """Point estimates, shape (n_models, n_groups, n_names)."""
        acc = self.fill(lambda lo, hi: None)
        return np.array([[self.values(st, None) for st in row] for row in acc])

    def replicates(self, keys: np.ndarray, *, seed: int, n_boot: int) -> np.ndarray:
        """Bootstrap replicates, shape (n_models, n_groups, n_names, n_boot, 3): each metric's
        value and bound statistics (:meth:`values`).

        A chunk of replicates at a time (:func:`~annokit.core.resample.replicate_chunks`):
        the Poisson weights of rows ``lo:hi`` in replicates ``start:stop`` are
        drawn for each batch and fed as 2-D weights to fresh states.
        """
        from annokit.core.progress import progress

        out = np.empty((len(self.probs), len(self.groups), len(self.names), n_boot, 3))
        with progress(total=n_boot, desc="bootstrap", unit="rep") as bar:
            for start, stop in replicate_chunks(n_boot, keys.size):
                acc = self.fill(functools.partial(_poisson_rows, keys, seed, start, stop))
                for m, row in enumerate(acc):
                    for g, st in enumerate(row):
                        out[m, g, :, start:stop] = self.values(st, stop - start)
                bar.update(stop - start)
        return out


def _replicate_values(state: Any, n_rep: int) -> np.ndarray:
    """``(n_rep, 3)``: the state's replicate values and bound statistics (NaN without bounds)."""
    out = np.full((n_rep, 3), np.nan)
    out[:, 0] = np.asarray(state.compute(), dtype=np.float64).reshape(n_rep)
    bounds = state.bounds()
    if bounds is not None:
        for j, stat in enumerate(bounds, start=1):
            out[:, j] = np.asarray(stat, dtype=np.float64).reshape(n_rep)
    return out


def _poisson_rows(keys: np.ndarray, seed: int, start: int, stop: int, lo: int, hi: int
                  ) -> np.ndarray:
    """The Poisson weights of rows ``lo:hi`` in replicates ``start:stop``."""
    return poisson_weights(keys[lo:hi], seed, start, stop)
