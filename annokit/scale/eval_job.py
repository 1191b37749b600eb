"""One Dask evaluation (:func:`annokit.scale.evaluate.evaluate_dask`) as a job: its checked
options, the models' prediction rows, the joined partitions (:class:`EvalJob`), the state specs
of its passes, and the result built from the merged values (:func:`job_result`: the engine's
assembly, :func:`annokit.metrics.engine.assemble_result`, with the population target put in
by :func:`annokit.metrics.engine.population_target` on the items gathered in the in-memory
item order).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from annokit.core.resample import replicate_chunks
from annokit.core.soft_labels import TiePolicy, distributions
from annokit.errors import SchemaError
from annokit.metrics.engine import (
    EvalSetup,
    EvaluationResult,
    agreement_rows,
    assemble_result,
    model_head,
    population_target,
    warn_ties,
)
from annokit.metrics.population import UNCHANGED
from annokit.metrics.records import agreement_groups
from annokit.metrics.registry import REGISTRY
from annokit.metrics.states import AdaptiveBinnedState
from annokit.metrics.workflow import EvaluateOptions, per_item_format
from annokit.scale import eval_partition as ep
from annokit.scale.eval_predictions import DaskPredictions
from annokit.scale.progress import compute

__all__ = ["EvalJob", "job_result", "tree"]

_FAN_IN = 8


def tree(items: list[Any], combine: Any, **kwargs: Any) -> Any:
    from dask import delayed

    if not items:
        raise SchemaError("the votes have no partitions")
    while len(items) > 1:
        items = [delayed(combine)(*items[i:i + _FAN_IN], **kwargs)
                 for i in range(0, len(items), _FAN_IN)]
    return items[0]


@dataclass
class EvalJob:
    """One Dask evaluation: its checked options, the models' prediction rows (tempered), their
    column permutations and, once :func:`_join` ran, the joined partitions (delayed)."""

    setup: EvalSetup
    options: EvaluateOptions
    policy: TiePolicy
    labels: Any
    preds: dict[str | None, DaskPredictions]
    perms: list[np.ndarray | None]
    client: Any
    budget: int
    joined: list[Any] = field(default_factory=list)

    @property
    def state_names(self) -> tuple[str, ...]:
        """The metrics filled as states: all, or under the population target those it
        computes as under the votes target (the others: :func:`job_result`)."""
        if self.setup.target == "population":
            return tuple(n for n in self.setup.names if n in UNCHANGED)
        return self.setup.names

    @property
    def adaptive(self) -> tuple[str, ...]:
        return tuple(n for n in self.state_names
                     if REGISTRY[n].state_class is AdaptiveBinnedState)

    @property
    def constant(self) -> tuple[str, ...]:
        return tuple(n for n in self.state_names if n not in self.adaptive)

    @property
    def two_pass(self) -> bool:
        """Whether the joined partitions are kept for more than one pass: the agreement
        bins' edges, a label order still unknown, adaptive edges, the population target."""
        return (self.options.by is not None or any(p is None for p in self.perms)
                or bool(self.adaptive) or self.setup.target == "population")

    def specs(self, edges: np.ndarray | None, n_kept: int, max_part: int) -> list[ep.StateSpec]:
        """The state specs: point values and constant-size replicates, then one per chunk of
        the adaptive metrics' replicates (their point values:
        :mod:`annokit.scale.eval_adaptive`)."""
        s, n_boot, budget = self.setup, self.setup.n_boot, self.budget
        chunks = tuple(replicate_chunks(n_boot, max(max_part, 1), budget=budget))
        specs = [ep.StateSpec(self.constant, s.options, self.policy, edges,
                              self.options.baselines, s.seed, self.constant, chunks)]
        if n_boot and self.adaptive:
            specs += [ep.StateSpec(self.state_names, s.options, self.policy, edges, False, s.seed,
                                   (), (), self.adaptive, c, point=False)
                      for c in replicate_chunks(n_boot, max(n_kept, 1), budget=budget)]
        return specs

    def trees(self, specs: list[ep.StateSpec]) -> list[Any]:
        """Each spec's values: the partitions' states merged by a tree reduction."""
        from dask import delayed

        return [delayed(ep.values)(tree([delayed(ep.part_states)(j, s) for j in self.joined],
                                         ep.merge), s) for s in specs]


def job_result(job: EvalJob, stats: dict[str, Any], specs: list[ep.StateSpec],
            vals: list[dict[str, Any]], temperature: float | None) -> EvaluationResult:
    """The result of the merged values: the engine's assembly
    (:func:`annokit.metrics.engine.assemble_result`), the population target put in."""
    warn_ties(stats["n_ties"], stats["n_kept"], job.policy, stacklevel=3)
    est, reps, base = _values(job, specs, vals)
    info, sizes = _agreement_groups(specs[0].edges, stats) if job.options.by else ([], [])
    heads: dict[str | None, dict[str, Any]] = {}
    sources: dict[str | None, Callable[[], Any] | None] = {}
    for model, st in zip(job.preds, stats["models"], strict=True):
        dropped = st["missing_ids"] if job.options.on_missing == "drop" else []
        heads[model] = model_head(stats["n_kept"], st["n_rows"] - st["n_matched"],
                                  st["n_missing"], dropped, job.labels.names, temperature)
        sources[model] = _read_back_source(job.options, model)
    if job.setup.target == "population":
        est, reps, base = _population(job, est, reps, base)
    return assemble_result(job.setup, heads, est, reps, base,
                           by="agreement" if job.options.by is not None else None,
                           groups=info, group_sizes=sizes, tie_policy=job.policy,
                           n_ties=stats["n_ties"], frames=sources)


def _values(job: EvalJob, specs: list[ep.StateSpec], vals: list[dict[str, Any]]
            ) -> tuple[np.ndarray, np.ndarray | None, dict[str, dict[str, float]]]:
    """Estimates, replicates (value and bound statistics) and baselines of the state names,
    from the specs' values."""
    names, constant, adaptive = job.state_names, job.constant, job.adaptive
    n_boot, main = job.setup.n_boot, vals[0]
    est = _with_adaptive(main, "point", names, constant, adaptive)
    reps = None
    if n_boot:
        reps = np.full(est.shape + (n_boot, 3), np.nan)  # value and bound statistics
        cols = [names.index(n) for n in constant]
        if "boot" in main:  # absent when every metric's state is adaptive-size
            for (a, b), chunk in zip(specs[0].chunks, main["boot"], strict=True):
                reps[:, :, cols, a:b] = chunk
        acols = [names.index(n) for n in adaptive]
        for spec, v in zip(specs[1:], vals[1:], strict=True):
            if spec.adaptive_chunk is None:  # EvalJob.specs gives every spec after the first one
                raise ValueError("an adaptive-metric spec without its replicate range")
            a, b = spec.adaptive_chunk
            reps[:, :, acols, a:b] = v["adaptive"]
    base = {}
    if job.options.baselines:
        both = _with_adaptive(main, "baselines", names, constant, adaptive)
        base = {kind: dict(zip(names, map(float, both[i, 0]), strict=True))
                for i, kind in enumerate(("chance", "oracle"))}
    return est, reps, base


def _agreement_groups(edges: np.ndarray | None, stats: dict[str, Any]
                      ) -> tuple[list[dict[str, Any]], list[int]]:
    """The agreement bins' descriptions and sizes, from the merged entropy value counts."""
    if edges is None:  # EvalJob.specs gives the first spec the agreement bins' edges
        raise ValueError("agreement groups without their bin edges")
    nb = edges.size - 1
    index = np.clip(np.searchsorted(edges, stats["entropy_values"], side="right") - 1, 0,
                    nb - 1)
    sizes = np.bincount(index, weights=stats["entropy_counts"], minlength=nb).astype(int)
    return agreement_groups(edges), list(sizes)


def _population(job: EvalJob, est: np.ndarray, reps: np.ndarray | None,
                base: dict[str, dict[str, float]]
                ) -> tuple[np.ndarray, np.ndarray | None, dict[str, dict[str, float]]]:
    """The population target: every item's counts and model probabilities gathered on the
    client in the in-memory item order (first seen), and the in-memory estimator run on
    them (:func:`annokit.metrics.engine.population_target`). Its prior is fitted on all items
    and its draws come from one stream in item order, so it does not split by partition."""
    from dask import delayed

    names = job.setup.names
    cols = [names.index(n) for n in job.state_names]
    full = np.full(est.shape[:2] + (len(names),), np.nan)
    full[..., cols] = est
    full_reps = None
    if reps is not None:
        full_reps = np.full(full.shape + reps.shape[3:], np.nan)
        full_reps[:, :, cols] = reps
    chance = None
    if job.options.baselines:
        chance = np.full(len(names), np.nan)
        chance[cols] = [base["chance"][n] for n in job.state_names]
    parts = compute(job.client, [delayed(_items_part)(j) for j in job.joined],
                    desc="evaluate")
    order = np.argsort(np.concatenate([p[0] for p in parts]), kind="stable")
    counts = np.concatenate([p[2] for p in parts])[order]
    probs = [np.concatenate([p[3][m] for p in parts])[order] for m in range(len(job.preds))]
    groups: list[np.ndarray | None] = [None]
    if job.options.by is not None:
        groups += agreement_rows(distributions(counts))[0]
    return population_target(names, job.setup.options, probs, counts, groups,
                             keys=np.concatenate([p[1] for p in parts])[order],
                             seed=job.setup.seed, est=full, reps=full_reps, chance=chance)


def _items_part(j: ep.Joined) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[Any]]:
    """A partition's items: first-seen positions, keys, vote counts, each model's rows."""
    first = j.first if j.first is not None else j.codes
    return first, j.keys, j.counts, list(j.probs)


def _with_adaptive(main: dict[str, Any], key: str, names: tuple[str, ...],
                   constant: tuple[str, ...], adaptive: tuple[str, ...]) -> np.ndarray:
    """``main[key]`` values of the constant-size states with the adaptive ones put in place."""
    part = main[key]
    if not adaptive:
        return part
    out = np.empty(part.shape[:2] + (len(names),))
    out[:, :, [names.index(n) for n in constant]] = part
    out[:, :, [names.index(n) for n in adaptive]] = main["adaptive_point"][key]
    return out


def _read_back_source(o: EvaluateOptions, model: str | None) -> Callable[[], Any] | None:
    """How ``result.per_item`` reads a model's per-item table back (None: not written)."""
    if o.per_item is None:
        return None
    if per_item_format(o) != "parquet":
        return functools.partial(_read_back_file, Path(o.per_item), per_item_format(o))
    folder = Path(o.per_item) if model is None else Path(o.per_item) / str(model)
    return functools.partial(_read_back, folder)


def _read_back(folder: Path) -> Any:
    import pandas as pd

    files = sorted(folder.glob("part.*.parquet"))
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def _read_back_file(path: Path, fmt: str | None) -> Any:
    """The per-item table of one CSV/TSV/JSON Lines file (item ids as text)."""
    import pandas as pd

    if fmt == "jsonl":
        return pd.read_json(path, lines=True, dtype={"item": str})
    sep = "," if fmt == "csv" else "\t"
    return pd.read_csv(path, sep=sep, dtype={"item": str, "majority": str},
                       keep_default_na=False, na_values=[""])
