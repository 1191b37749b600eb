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

from annokit.core.soft_labels import distributions, entropy, majority
from annokit.metrics import _binning
from annokit.metrics.states import edge_bin_stats
from annokit.scale import quantiles as _q
from annokit.scale.eval_partition import Joined, StateSpec

__all__ = ["adaptive_point_values"]


def _sets(joined: Joined, spec: StateSpec, baselines: bool) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(confidence, hit)`` of every set of the partition, in :func:`_set_keys` order."""
    probs = list(joined.probs)
    k = joined.counts.shape[1] if joined.counts.ndim == 2 else 0
    soft = distributions(joined.counts) if joined.n else np.zeros((0, k))
    hard = majority(joined.counts, ties=spec.ties).labels if joined.n else np.zeros(0, np.int64)
    groups: list[np.ndarray | None] = [None]
    if spec.edges is not None:
        h = entropy(soft, base=2)
        nb = spec.edges.size - 1
        index = np.clip(np.searchsorted(spec.edges, h, side="right") - 1, 0, nb - 1)
        groups += [np.flatnonzero(index == b) for b in range(nb)]
    out = []
    sources = [(p, groups) for p in probs]
    if baselines:
        sources += [(np.full_like(soft, 1.0 / max(k, 1)), [None]), (soft, [None])]
    for p, gs in sources:
        if p is None or not joined.n:
            out += [(np.zeros(0), np.zeros(0))] * len(gs)
            continue
        pred, conf = _binning.top_label(p)
        hit = (pred == hard).astype(np.float64)
        out += [(conf, hit) if rows is None else (conf[rows], hit[rows]) for rows in gs]
    return out


def _quantile_step(joined: Joined, spec: StateSpec, baselines: bool, step: str,
                   args_per_set: Sequence[tuple]) -> list[Any]:
    return [_q.partition_step(step, conf, args)
            for (conf, _), args in zip(_sets(joined, spec, baselines), args_per_set)]


def _reduce_all(*parts: list[Any], step: str) -> list[Any]:
    out = parts[0]
    for p in parts[1:]:
        out = [_q.reduce_step(step, x, y) for x, y in zip(out, p)]
    return out


def _sums(joined: Joined, spec: StateSpec, baselines: bool, edges: Sequence[np.ndarray],
          n_bins: int) -> list[np.ndarray]:
    """Per set: ``(3, n_bins)`` sums of weight, confidence and hit with the set's edges."""
    out = []
    for (conf, hit), e in zip(_sets(joined, spec, baselines), edges):
        if conf.size == 0 or not np.isfinite(e).all():
            out.append(np.zeros((3, n_bins)))
            continue
        st = edge_bin_stats(conf, hit, e, n_bins)
        out.append(np.stack([st.count, st.conf, st.hit]))
    return out


def _add_all(*parts: list[np.ndarray]) -> list[np.ndarray]:
    out = parts[0]
    for p in parts[1:]:
        out = [x + y for x, y in zip(out, p)]
    return out


def adaptive_point_values(joined: list[Any], spec: StateSpec, names: Sequence[str],
                          options: dict[str, dict[str, Any]], *, n_models: int, n_groups: int,
                          baselines: bool, compute: Any, tree: Any) -> dict[str, np.ndarray]:
    """The adaptive metrics' point values: ``point`` (n_models, n_groups, n_names) and
    ``baselines`` (2, 1, n_names), as the in-memory engine computes them.

    ``joined`` are persisted partitions; ``compute(nodes)`` computes delayed objects and
    ``tree(nodes, combine)`` reduces them pairwise (see :mod:`annokit.scale.evaluate`).
    """
    from dask import delayed

    n_sets = n_models * n_groups + (2 if baselines else 0)
    point = np.full((n_models, n_groups, len(names)), np.nan)
    base = np.full((2, 1, len(names)), np.nan)

    def run(step: str, args_per_set: list[tuple]) -> list[Any]:
        nodes = [delayed(_quantile_step)(jp, spec, baselines, step, args_per_set)
                 for jp in joined]
        merged = compute([tree(nodes, _reduce_all, step=step)])[0]
        return [_q.finish_step(step, m) for m in merged]

    for j, name in enumerate(names):
        n_bins = int(options[name].get("n_bins", 10))
        edges = _q.exact_quantiles_sets(n_sets, np.linspace(0.0, 1.0, n_bins + 1), run=run)
        nodes = [delayed(_sums)(jp, spec, baselines, edges, n_bins) for jp in joined]
        values = [_ece(s) for s in compute([tree(nodes, _add_all)])[0]]
        point[:, :, j] = np.reshape(values[:n_models * n_groups], (n_models, n_groups))
        if baselines:
            base[:, 0, j] = values[n_models * n_groups:]
    return {"point": point, "baselines": base}


def _ece(sums: np.ndarray) -> float:
    count, conf, hit = sums
    total = count.sum()
    if not total > 0:
        return float("nan")
    return float(_binning.compute_top(_binning.BinStats(total, count, conf, hit=hit)))
