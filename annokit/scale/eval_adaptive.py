"""Point estimates of the equal-mass (adaptive) ECE on Dask without gathering the items.

In memory, :class:`annokit.metrics.states.AdaptiveBinnedState` keeps every
item's confidence and sorts them once for the bin edges. On Dask that gathers
every item on one worker (16 bytes per item and set), which broke a 2 GB worker
at 1e7 items. Here each *set* of items (a model or baseline, all items or one
agreement group) is sorted by confidence once on its partition's worker and kept
there; its edges come from :func:`annokit.scale.quantiles.exact_quantiles_sets`
(equal to ``np.quantile`` bit for bit, so every item falls in the same bin as in
memory: two round trips for the edges of every set and every adaptive metric),
then one more pass adds the per-bin sums of weight, confidence and hit
(:func:`annokit.metrics.states.edge_bin_stats`). Each pass is one task per worker
over the partitions it holds (as :mod:`annokit.scale.em` does), whose results the
client adds: constant memory, three round trips whatever the number of partitions.

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

#: Per set, the confidences of its items whose top label is the human one (hits) and of
#: the others (misses), each sorted: two sorted runs, and the hits need not be kept.
Sets = list[tuple[np.ndarray, np.ndarray]]


def _sets(joined: Joined, spec: StateSpec, baselines: bool) -> Sets:
    """Sorted confidences of the hits and the misses of every set of the partition: each
    model in each group (all items first, then the agreement groups), then the chance and
    oracle baselines."""
    probs = model_probs(joined)
    if probs is None:  # a failed check: the client raises from stats
        n_groups = 1 if spec.edges is None else spec.edges.size
        return [(np.zeros(0), np.zeros(0))] * (len(joined.probs) * n_groups + 2 * baselines)
    plan = partition_plan(joined, spec, (), probs, True)
    sources = [(plan.probs, plan.groups)]
    if baselines:  # the same human labels; the baselines are not grouped
        sources.append((baseline_probs(joined), [None]))
    out = []
    for source, groups in sources:
        for p in source:
            conf, hit = top_label_hit(p, plan.hard)
            for rows in groups:
                c, h = (conf, hit) if rows is None else (conf[rows], hit[rows])
                out.append((np.sort(c[h == 1]), np.sort(c[h != 1])))
    return out


def _quantile_step(step: str, args_per_set: Sequence[tuple], *parts: Sets) -> list[Any]:
    """:func:`annokit.scale.quantiles.partition_step` of every set over a worker's partitions
    (their hits and misses: two sorted runs each)."""
    return [_q.partition_step(step, [run for sets in parts for run in sets[s]], args)
            for s, args in enumerate(args_per_set)]


def _sums(edges: Sequence[np.ndarray], n_bins: Sequence[int], *parts: Sets) -> np.ndarray:
    """``(n_metrics, n_sets, 3, max n_bins)`` sums of weight, confidence and hit of a worker's
    partitions with each metric's edges of each set (zero past a metric's ``n_bins``)."""
    n_sets = len(edges) // len(n_bins)
    out = np.zeros((len(n_bins), n_sets, 3, max(n_bins)))
    for sets in parts:
        for s, runs in enumerate(sets):
            for conf, hit in zip(runs, (1.0, 0.0), strict=True):
                for m, nb in enumerate(n_bins):
                    e = edges[m * n_sets + s]
                    if conf.size == 0 or not np.isfinite(e).all():
                        continue
                    st = edge_bin_stats(conf, np.full(conf.size, hit), e, nb)
                    if st.hit is None:  # edge_bin_stats sums the hits it is given
                        raise ValueError("edge_bin_stats returned no hit sums")
                    out[m, s, :, :nb] += np.stack([st.count, st.conf, st.hit])
    return out


def _worker_groups(client: Any, sets: list[Any]) -> list[list[Any]]:
    """The persisted partitions grouped by the worker that holds them (one group in this
    process)."""
    if client is None:
        return [sets]
    from distributed import futures_of, wait

    futures = [f for s in sets for f in futures_of(s)]
    with client.as_current():  # (the client need not be the default one)
        wait(futures)  # persisting is asynchronous: where they are is known once they are there
    where = client.who_has(futures)
    members: dict[str, list[Any]] = {}
    for s in sets:
        holders = sorted(h for f in futures_of(s) for h in where.get(f.key, ())) or [""]
        members.setdefault(holders[0], []).append(s)
    return list(members.values())


def adaptive_point_values(joined: list[Any], spec: StateSpec, names: Sequence[str],
                          options: dict[str, dict[str, Any]], *, n_models: int, n_groups: int,
                          baselines: bool, compute: Any, persist: Any, client: Any = None
                          ) -> dict[str, np.ndarray]:
    """The adaptive metrics' point values: ``point`` (n_models, n_groups, n_names) and
    ``baselines`` (2, 1, n_names), as the in-memory engine computes them.

    ``joined`` are persisted partitions; ``compute(nodes)`` computes and ``persist(nodes)``
    persists delayed objects on ``client`` (None: dask's local scheduler). Each
    partition's sets are sorted once and kept on its worker for the passes: the edges
    of every metric and set in two round trips (:mod:`annokit.scale.quantiles`), their
    bin sums in one more.
    """
    from dask import delayed

    sets = persist([delayed(_sets)(jp, spec, baselines) for jp in joined])
    groups = _worker_groups(client, sets)
    n_sets = n_models * n_groups + (2 if baselines else 0)
    n_bins = [int(options[name].get("n_bins", 10)) for name in names]

    def run(step: str, args_per_set: list[tuple]) -> list[Any]:
        got = compute([delayed(_quantile_step)(step, args_per_set, *g) for g in groups])
        return [_q.finish_step(step, _q.reduce_step(step, per_set))
                for per_set in zip(*got, strict=True)]

    # every metric's quantiles found together (one selection per set), then cut apart
    qs = [np.linspace(0.0, 1.0, nb + 1) for nb in n_bins]
    cut = np.cumsum([0] + [q.size for q in qs])
    found = _q.exact_quantiles_sets(n_sets, np.concatenate(qs), run=run)
    edges = [e[cut[m]:cut[m + 1]] for m in range(len(names)) for e in found]
    sums = sum(compute([delayed(_sums)(edges, n_bins, *g) for g in groups]))
    values = np.array([[_ece(sums[m, s, :, :nb]) for s in range(n_sets)]
                       for m, nb in enumerate(n_bins)])  # (n_names, n_sets)
    point = np.moveaxis(values[:, :n_models * n_groups].reshape(len(names), n_models, n_groups),
                        0, -1)
    base = np.full((2, 1, len(names)), np.nan)
    if baselines:
        base[:, 0, :] = values[:, n_models * n_groups:].T
    return {"point": point, "baselines": base}


def _ece(sums: np.ndarray) -> float:
    count, conf, hit = sums
    return top_label_ece(count, conf, hit)
