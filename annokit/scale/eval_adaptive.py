"""Point estimates of the equal-mass (adaptive) ECE on Dask without gathering the items.

In memory, :class:`annokit.metrics.states.AdaptiveBinnedState` keeps every
item's confidence and sorts them once for the bin edges. On Dask that gathers
every item on one worker (16 bytes per item and set), which broke a 2 GB worker
at 1e7 items. Here each *set* of items (a model or baseline, all items or one
agreement group) gets its edges from :func:`annokit.scale.quantiles.exact_quantiles`
(equal to ``np.quantile`` bit for bit, so every item falls in the same bin as in
memory), then one more pass adds the per-bin sums of weight, confidence and hit
(:func:`annokit.metrics.states.edge_bin_stats`), merged by a tree of additions:
constant memory, a few passes over the persisted joined partitions.

Bootstrap replicates keep the state of :mod:`annokit.scale.eval_partition` (each
replicate has its own edges).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from annokit.metrics.states import edge_bin_stats, top_label_ece, top_label_hit
from annokit.scale import quantiles as _q
from annokit.scale.eval_partition import (
    Joined,
    StateSpec,
    baseline_probs,
    model_probs,
    partition_plan,
)

__all__ = ["adaptive_point_values"]


def _sets(joined: Joined, spec: StateSpec, baselines: bool) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(confidence, hit)`` of every set of the partition: each model in each group (all
    items first, then the agreement groups), then the chance and oracle baselines."""
    probs = model_probs(joined)
    if probs is None:  # a failed check: the client raises from stats
        n_groups = 1 if spec.edges is None else spec.edges.size
        return [(np.zeros(0), np.zeros(0))] * (len(joined.probs) * n_groups + 2 * baselines)
    sources = [partition_plan(joined, spec, (), probs, True)]
    if baselines:
        sources.append(partition_plan(joined, spec, (), baseline_probs(joined), False))
    out = []
    for plan in sources:
        for p in plan.probs:
            conf, hit = top_label_hit(p, plan.hard)
            out += [(conf, hit) if rows is None else (conf[rows], hit[rows])
                    for rows in plan.groups]
    return out


def _quantile_step(sets: list[tuple[np.ndarray, np.ndarray]], step: str,
                   args_per_set: Sequence[tuple]) -> list[Any]:
    return [_q.partition_step(step, conf, args)
            for (conf, _), args in zip(sets, args_per_set, strict=True)]


def _reduce_all(*parts: list[Any], step: str) -> list[Any]:
    out = parts[0]
    for p in parts[1:]:
        out = [_q.reduce_step(step, x, y) for x, y in zip(out, p, strict=True)]
    return out


def _sums(sets: list[tuple[np.ndarray, np.ndarray]], edges: Sequence[np.ndarray],
          n_bins: int) -> list[np.ndarray]:
    """Per set: ``(3, n_bins)`` sums of weight, confidence and hit with the set's edges."""
    out = []
    for (conf, hit), e in zip(sets, edges, strict=True):
        if conf.size == 0 or not np.isfinite(e).all():
            out.append(np.zeros((3, n_bins)))
            continue
        st = edge_bin_stats(conf, hit, e, n_bins)
        if st.hit is None:  # edge_bin_stats sums the hits it is given
            raise ValueError("edge_bin_stats returned no hit sums")
        out.append(np.stack([st.count, st.conf, st.hit]))
    return out


def _add_all(*parts: list[np.ndarray]) -> list[np.ndarray]:
    out = parts[0]
    for p in parts[1:]:
        out = [x + y for x, y in zip(out, p, strict=True)]
    return out


def adaptive_point_values(joined: list[Any], spec: StateSpec, names: Sequence[str],
                          options: dict[str, dict[str, Any]], *, n_models: int, n_groups: int,
                          baselines: bool, compute: Any, persist: Any, tree: Any
                          ) -> dict[str, np.ndarray]:
    """The adaptive metrics' point values: ``point`` (n_models, n_groups, n_names) and
    ``baselines`` (2, 1, n_names), as the in-memory engine computes them.

    ``joined`` are persisted partitions; ``compute(nodes)`` computes and ``persist(nodes)``
    persists delayed objects, ``tree(nodes, combine)`` reduces them pairwise (see
    :mod:`annokit.scale.evaluate`). Each partition's confidences and hits are made once
    and kept on the workers for the passes.
    """
    from dask import delayed

    sets = persist([delayed(_sets)(jp, spec, baselines) for jp in joined])
    n_sets = n_models * n_groups + (2 if baselines else 0)
    point = np.full((n_models, n_groups, len(names)), np.nan)
    base = np.full((2, 1, len(names)), np.nan)

    def run(step: str, args_per_set: list[tuple]) -> list[Any]:
        nodes = [delayed(_quantile_step)(ps, step, args_per_set) for ps in sets]
        merged = compute([tree(nodes, _reduce_all, step=step)])[0]
        return [_q.finish_step(step, m) for m in merged]

    for j, name in enumerate(names):
        n_bins = int(options[name].get("n_bins", 10))
        edges = _q.exact_quantiles_sets(n_sets, np.linspace(0.0, 1.0, n_bins + 1), run=run)
        nodes = [delayed(_sums)(ps, edges, n_bins) for ps in sets]
        values = [_ece(s) for s in compute([tree(nodes, _add_all)])[0]]
        point[:, :, j] = np.reshape(values[:n_models * n_groups], (n_models, n_groups))
        if baselines:
            base[:, 0, j] = values[n_models * n_groups:]
    return {"point": point, "baselines": base}


def _ece(sums: np.ndarray) -> float:
    count, conf, hit = sums
    return top_label_ece(count, conf, hit)
