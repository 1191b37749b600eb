"""The evaluation engine: any subset of the metric registry over aligned records.

:func:`evaluate` is where annokit turns aligned records into metric values
(``annokit evaluate``, the report, the split-half human ceiling). It knows no
metric by name: metrics, units, directions and per-item columns come from
:data:`annokit.metrics.registry.REGISTRY`, so a metric added there appears in
``evaluate --json``, the per-item CSV and the report without editing this module.

For every requested metric the engine creates one state
(``REGISTRY[name].state(**options)``), fills all of them from each batch of rows
with :func:`annokit.metrics.states.update_many` (the shapes checked once, one
fused pass per kind of state present: core, order-aware, binary, multi-label),
merges the batches' states and computes; a group (``by``) is the same over its rows.

Bootstrap intervals come from a Poisson bootstrap (:mod:`annokit.core.resample`), by the
method each metric's registry entry names (:attr:`MetricSpec.interval`: percentiles of the
metric, or of two statistics that bound a binned metric's population value, or none):
replicate ``r`` weights item ``i`` by a Poisson(1) count keyed by ``(seed, item id, r)``.
A chunk of replicates is fed as 2-D weights to the same states, so memory is
bounded by ``chunk x n_items``, every metric and model is resampled with the
same weights (paired model differences), and the interval does not depend on
how the rows are batched (``batch_size``) or ordered.

Baselines on the same items: ``chance`` (the uniform distribution; ChaosNLI's
chance baseline, Nie et al. 2020, Table 5) and ``oracle`` (the human
distribution itself; Baan et al. 2022, section 3: its distribution metrics are
0 while its ECE is not).

Notes on :func:`evaluate`'s options:

* ``by="agreement"`` makes :data:`AGREEMENT_BINS` equal-count bins of human entropy in nats
  (:func:`~annokit.metrics.records.agreement_bins`); an array gives one group label per item
  (groups in sorted order); a pandas Categorical keeps its category order, empty categories
  included (their metrics are NaN).
* Each metric's interval is built as its registry entry says
  (:attr:`~annokit.metrics.registry.MetricSpec.interval`): the percentile bootstrap for the
  means, an interval for the population value from two bound statistics for the binned
  |gap| metrics (``"bounds"``: the plug-in estimate is biased upward and can lie outside
  it), none for the MCEs (NaN bounds and the reason).
* The scale says which metrics apply (``MetricSpec.scales``); the default list is
  ``available(True, True, scale=scale, n_labels=k)``: with two labels it includes the
  positive-class metrics ``ece_binary`` and ``mce_binary``. ``metric_options`` gives
  ``positive`` (a label index or name; default the second label) or the category ``values``
  of the order-aware metrics (default: on interval and ratio scales the labels' numbers, on
  ordinal scales the ranks ``0 .. k-1``).
* Multi-label records are evaluated with the multi-label metrics against the per-label soft
  labels and majorities, with ``per_label`` values; their baselines are 0.5 per label
  (chance) and the soft labels (oracle); their tie policy is ``align_multilabel``'s.
* ``target="population"``: the metrics it cannot correct are refused by name when asked
  for, and left out of the default list with their reason in ``not_computed``; the
  metrics of :data:`annokit.metrics.population.NO_INTERVAL` keep their estimate without an
  interval (the reason in their ``reason``); the baselines are the chance row only.

Both engines share the steps around the pass over the rows: :func:`check_setup` (the
options checked, the metric names and their options resolved), :func:`warn_ties`,
:func:`model_head`, :func:`population_target` and :func:`assemble_result` (intervals,
groups, comparisons); the pass itself is :class:`~annokit.metrics.eval_plan.EvalPlan`, over
all rows here and per partition in :mod:`annokit.scale.evaluate`.

References
----------
Baan, Aziz, Plank, Fernandez (2022). Stop Measuring Calibration When Humans Disagree.
EMNLP. arXiv:2210.16133.
Nie, Zhou, Bansal (2020). What Can We Learn from Collective Human Opinions on Natural
Language Inference Data? EMNLP. arXiv:2010.03532.
Hanley, MacGibbon (2006). Creating non-parametric bootstrap samples using Poisson
frequencies. Computer Methods and Programs in Biomedicine 83(1). DOI:10.1016/j.cmpb.2006.04.006.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.checks import check_int, check_open_unit
from annokit.core.resample import item_keys
from annokit.core.scales import check_scale
from annokit.core.soft_labels import AGREEMENT_BINS as DEFAULT_AGREEMENT_BINS
from annokit.core.soft_labels import Majority, TiePolicy, majority
from annokit.errors import AlignmentError, DegenerateInputWarning, InvalidValueError, SchemaError
from annokit.metrics import population
from annokit.metrics.eval_plan import EvalPlan
from annokit.metrics.item_frames import multilabel_item_frame, per_item_frame
from annokit.metrics.metric_options import resolve_options
from annokit.metrics.multilabel_records import MultilabelRecords
from annokit.metrics.population import check_target, target_names
from annokit.metrics.records import (
    AlignedRecords,
    agreement_bins,
    agreement_entropy,
    agreement_groups,
)
from annokit.metrics.registry import REGISTRY, available, check_applicable
from annokit.metrics.results import (
    Difference,
    EvaluationResult,
    GroupResult,
    metric_support,
    plain_value,
    results_from_values,
)

__all__ = ["AGREEMENT_BINS", "Difference", "EvalPlan", "EvalSetup", "EvaluationResult",
           "GroupResult", "agreement_rows", "assemble_result", "baseline_records", "check_setup",
           "evaluate", "model_head", "multilabel_item_frame", "per_item_frame", "per_label_values",
           "population_target", "resolve_options", "results_from_values", "warn_ties"]

#: Agreement bins of ``by="agreement"``: equal-count human-entropy quantile bins (the one
#: default, :data:`annokit.core.soft_labels.AGREEMENT_BINS`, also the subsampling curves').
AGREEMENT_BINS = DEFAULT_AGREEMENT_BINS

_NAN = float("nan")


def baseline_probs(records: AlignedRecords | MultilabelRecords, kind: str) -> np.ndarray:
    """The chance or oracle probabilities on ``records``' items (:func:`baseline_records`).

    Multi-label records: chance is 0.5 for every label, oracle the fraction of
    annotators ticking it.
    """
    if isinstance(records, MultilabelRecords):
        if kind not in ("chance", "oracle"):
            raise InvalidValueError(f"baseline must be 'chance' or 'oracle'; got {kind!r}")
        return np.full_like(records.probs, 0.5) if kind == "chance" else records.soft.copy()
    return baseline_records(records, kind).probs


def baseline_records(records: AlignedRecords, kind: str) -> AlignedRecords:
    """The same items with the uniform (``"chance"``) or human (``"oracle"``) distribution
    as the prediction.

    Raises
    ------
    InvalidValueError
        ``kind`` is neither ``"chance"`` nor ``"oracle"``.

    Examples
    --------
    >>> rec = AlignedRecords.from_arrays([[0.9, 0.1]], [[3, 1]])
    >>> baseline_records(rec, "oracle").probs.tolist(), baseline_records(rec, "chance").probs.tolist()
    ([[0.75, 0.25]], [[0.5, 0.5]])
    """
    if kind == "chance":
        probs = np.full_like(records.probs, 1.0 / records.n_labels)
    elif kind == "oracle":
        probs = records.human.copy()
    else:
        raise InvalidValueError(f"baseline must be 'chance' or 'oracle'; got {kind!r}")
    return dataclasses.replace(records, probs=probs, logits=None, temperature=None)


# ------------------------------------------------------------------------------ checks


def _check_models(records: Any) -> dict[str | None, Any]:
    """``{None: records}`` for one model; ``{name: records}`` (same items, votes, order) for several
    (single-label records only)."""
    if isinstance(records, (AlignedRecords, MultilabelRecords)):
        return {None: records}
    if not isinstance(records, Mapping):
        raise SchemaError(f"expected AlignedRecords (see annokit.metrics.records.align) or a "
                          f"mapping of model name to AlignedRecords; got {type(records).__name__}")
    if not records:
        raise SchemaError("no models to evaluate: the mapping of model name to records is empty")
    for name, rec in records.items():
        if not isinstance(rec, AlignedRecords):
            raise SchemaError(f"model {name!r}: expected AlignedRecords; got {type(rec).__name__}")
    first = next(iter(records.values()))
    return {str(name): _same_items(first, rec, str(name)) for name, rec in records.items()}


def _same_items(first: AlignedRecords, rec: AlignedRecords, name: str) -> AlignedRecords:
    """``rec`` in ``first``'s item order, or AlignmentError when it is not on the same votes."""
    if rec is first:
        return rec
    if tuple(rec.labels.names) != tuple(first.labels.names):
        raise AlignmentError(f"model {name!r} has labels {list(rec.labels.names)}; the first model "
                             f"has {list(first.labels.names)}")
    if rec.n_items != first.n_items or not np.array_equal(rec.item_ids, first.item_ids):
        pos = pd.Index(rec.item_ids).get_indexer(pd.Index(first.item_ids))
        if rec.n_items != first.n_items or (pos < 0).any():
            missing = int((pos < 0).sum())
            raise AlignmentError(f"model {name!r} has {rec.n_items} items, {missing} of the first "
                                 f"model's {first.n_items} items missing; several models must be "
                                 "aligned to the same items")
        rec = rec.select(pos)
    if not np.array_equal(rec.counts, first.counts):
        raise AlignmentError(f"model {name!r} was aligned to other votes than the first model "
                             "(vote counts differ)")
    return rec


def check_metrics(metrics: Any, *, scale: str = "nominal", n_labels: int | None = None,
                   multilabel: bool = False) -> tuple[str, ...]:
    """The metric names to evaluate, in registry order (both engines' check of ``metrics``)."""
    if metrics is None:  # soft and hard labels; the binary metrics with two labels
        return available(True, True, scale=scale, n_labels=n_labels, multilabel=multilabel)
    wanted = [metrics] if isinstance(metrics, str) else list(metrics)
    applicable = check_applicable(wanted, scale=scale, n_labels=n_labels, multilabel=multilabel)
    return tuple(m for m in REGISTRY if m in applicable)


def _groups(by: Any, records: AlignedRecords | MultilabelRecords
            ) -> tuple[str | None, list[np.ndarray | None], list[dict[str, Any]]]:
    """Row positions of each group (None: all rows) and the group descriptions."""
    n = records.n_items
    if by is None:
        return None, [None], [{}]
    if isinstance(by, str):
        if by != "agreement":
            raise InvalidValueError(f"by must be None, 'agreement' or one group label per item; "
                                    f"got {by!r}")
        if not isinstance(records, AlignedRecords):  # evaluate refuses it first
            raise InvalidValueError("by='agreement' groups single-label records only")
        rows, info = agreement_rows(records.human)
        return "agreement", list[np.ndarray | None](rows), info
    if isinstance(by, pd.Categorical):
        codes, cats = by.codes, list(by.categories)
    else:
        labels = np.asarray(by, dtype=object)
        if labels.ndim != 1:
            raise SchemaError(f"by must be one group label per item (1-D); got shape {labels.shape}")
        try:
            codes, uniq = pd.factorize(labels, sort=True)
        except TypeError:  # labels of mixed types: first-seen order
            codes, uniq = pd.factorize(labels, sort=False)
        cats = list(uniq)
    if len(codes) != n:
        raise SchemaError(f"by has {len(codes)} group labels for {n} items")
    codes = np.asarray(codes)
    if (codes < 0).any():
        raise InvalidValueError(f"by has {int((codes < 0).sum())} missing group label(s)")
    return ("labels", [np.flatnonzero(codes == g) for g in range(len(cats))],
            [{"group": plain_value(c)} for c in cats])



def agreement_rows(human: np.ndarray) -> tuple[list[np.ndarray], list[dict[str, Any]]]:
    """Row positions of each agreement bin (:data:`AGREEMENT_BINS` equal-count bins of the
    human distributions' entropy) and the bins' descriptions (both engines)."""
    edges, index, _, _ = agreement_bins(agreement_entropy(human), AGREEMENT_BINS)
    return [np.flatnonzero(index == b) for b in range(edges.size - 1)], agreement_groups(edges)


# ------------------------------------------------------------------------------ evaluate


def evaluate(records: AlignedRecords | MultilabelRecords | Mapping[str, AlignedRecords],
             metrics: Any = None, *, by: Any = None, n_boot: int = 0, seed: int = 0,
             confidence: float = 0.95, n_bins: int = 10, ties: TiePolicy | None = None,
             baselines: bool = True,
             batch_size: int | None = None, scale: str | None = None,
             metric_options: Mapping[str, Any] | None = None,
             target: str = "votes") -> EvaluationResult:
    """Evaluate registered metrics on aligned records, with intervals, groups and comparisons.

    Parameters
    ----------
    records : AlignedRecords, mapping of str to AlignedRecords, or MultilabelRecords
        From :func:`annokit.metrics.records.align` (optionally temperature scaled); a
        mapping compares several models on the same votes with the first; multi-label
        records: module notes.
    metrics : str or sequence of str, optional
        Registry names; default every registered metric the inputs allow, in registry order.
    by : None, "agreement", array-like of shape (n_items,) or pandas Categorical
        Also evaluate groups of items (module notes).
    n_boot, seed : int, default=0
        Poisson bootstrap replicates (0: no intervals); the seed of them and of ties.
    confidence : float, default=0.95
        Level of the intervals, each built as its registry entry says (module notes).
    n_bins : int, default=10
        Bins of the binned metrics (every registered metric with an ``n_bins`` option).
    ties : {"report", "first", "random"}, optional
        Re-resolve the human majority with this policy (default: the records').
    baselines : bool, default=True
        Also compute the chance and oracle rows.
    batch_size : int, optional
        Rows per batch, the batches' states merged: the same values and intervals.
    scale, metric_options : optional
        The label scale (default the label set's) and the metrics' options: module notes.
    target : {"votes", "population"}, default="votes"
        Against the collected votes (the published plug-in values) or the distribution
        infinitely many annotators would give (:mod:`annokit.metrics.population`).

    Returns
    -------
    EvaluationResult

    Raises
    ------
    SchemaError, AlignmentError, InvalidValueError
        Not records, models not on the same votes, unknown metric or bad option.

    Examples
    --------
    >>> rec = AlignedRecords.from_arrays([[0.7, 0.3], [0.2, 0.8], [0.6, 0.4]],
    ...                                  [[8, 2], [1, 9], [5, 4]], labels=["yes", "no"])
    >>> res = evaluate(rec, n_boot=200)
    >>> list(res.metrics) == list(available(True, True, n_labels=2)), list(res.baselines)
    (True, ['chance', 'oracle'])
    >>> res.intervals["ece"].method, res.intervals["mce"].method
    ('bounds', 'none')
    """
    models = _check_models(records)
    first = next(iter(models.values()))
    setup = check_setup(first.labels, first.n_labels, metrics=metrics, scale=scale,
                        n_boot=n_boot, seed=seed, confidence=confidence, n_bins=n_bins,
                        metric_options=metric_options, target=target,
                        multilabel=isinstance(first, MultilabelRecords))
    human = _human_labels(first, ties=ties, by=by, seed=setup.seed)
    by_kind, groups, info = _groups(by, first)
    plan = _plan(models, human, setup, [None, *groups] if by_kind else groups, batch_size)
    run = _population_pass if setup.target == "population" else _votes_pass
    est, reps, base = run(plan, first, seed=setup.seed, n_boot=setup.n_boot, baselines=baselines)
    heads = {model: model_head(rec.n_items, rec.n_unmatched_predictions, rec.n_dropped_items,
                               rec.dropped_item_ids, rec.labels.names, rec.temperature)
             for model, rec in models.items()}
    result = assemble_result(setup, heads, est, reps, base, by=by_kind, groups=info,
                             group_sizes=[len(rows) for rows in groups if rows is not None],
                             tie_policy=human.policy, n_ties=human.n_ties,
                             frames=_frames(models, human, setup))
    if isinstance(first, MultilabelRecords):
        result.task = "multilabel"
        result.per_label = per_label_values(plan.names, plan.fill(_unweighted)[0][0],
                                            first.labels.names)
    return result


# ------------------------------------------------------------------------------ the steps


@dataclass(frozen=True)
class EvalSetup:
    """The checked options of one evaluation, the same for both engines (:func:`check_setup`):
    the metric names (and those the target left out of the default list, with why), the
    scale, the bootstrap, the bins and each metric's constructor options."""

    names: tuple[str, ...]
    not_computed: dict[str, str]
    target: str
    scale: str
    n_boot: int
    seed: int
    confidence: float
    n_bins: int
    options: dict[str, dict[str, Any]]
    positive_label: str | None


def check_setup(labels: Any, n_labels: int, *, metrics: Any, scale: str | None, n_boot: int,
                seed: int, confidence: float, n_bins: int,
                metric_options: Mapping[str, Any] | None, target: str = "votes",
                multilabel: bool = False) -> EvalSetup:
    """Check an evaluation's options and resolve its metric names and their options: the one
    check of :func:`evaluate` and the Dask engine (``scale`` None: the label set's)."""
    scale = check_scale(getattr(labels, "scale", "nominal") if scale is None else scale)
    names = check_metrics(metrics, scale=scale, n_labels=n_labels, multilabel=multilabel)
    names, not_computed = target_names(check_target(target), names, metrics, multilabel)
    n_boot = check_int("n_boot", n_boot)
    seed = check_int("seed", seed)
    n_bins = check_int("n_bins", n_bins, low=1)
    check_open_unit("confidence", confidence)
    options, positive_label = resolve_options(names, labels, scale, n_bins=n_bins,
                                              metric_options=metric_options)
    return EvalSetup(names, not_computed, target, scale, n_boot, seed, confidence, n_bins,
                     options, positive_label)


def warn_ties(n_ties: int, n_items: int, policy: str, *, multilabel: bool = False,
              stacklevel: int = 2) -> None:
    """The warning of tied human majorities (both engines); nothing without ties."""
    if not n_ties:
        return
    if multilabel:
        message = (f"{n_ties} (item, label) cells are ticked by exactly half of the "
                   f"annotators; tie policy {policy!r}")
    else:
        message = (f"{n_ties} of {n_items} items have a tied human majority; tie policy "
                   f"{policy!r} " + ("draws one tied label at random" if policy == "random"
                                     else "takes the first tied label in label order"))
    warnings.warn(message, DegenerateInputWarning, stacklevel=stacklevel + 1)


def model_head(n_items: int, n_unmatched: int, n_dropped: int, dropped_ids: Any,
               labels: Sequence[str], temperature: float | None) -> dict[str, Any]:
    """One model's counts of the join (the ``heads`` of
    :func:`~annokit.metrics.results.results_from_values`), both engines."""
    return {"n_items": n_items, "n_unmatched_predictions": n_unmatched,
            "n_dropped_items": n_dropped, "dropped_item_ids": [str(i) for i in dropped_ids],
            "labels": tuple(labels), "temperature": temperature}


def assemble_result(setup: EvalSetup, heads: Mapping[str | None, Mapping[str, Any]],
                    est: np.ndarray, reps: np.ndarray | None,
                    base: dict[str, dict[str, float]], *, by: str | None,
                    groups: Sequence[dict[str, Any]], group_sizes: Sequence[int],
                    tie_policy: str, n_ties: int,
                    frames: Mapping[str | None, Callable[[], pd.DataFrame] | None]
                    ) -> EvaluationResult:
    """The :class:`EvaluationResult` of merged values (both engines): intervals, groups,
    comparisons (:func:`~annokit.metrics.results.results_from_values`) and the target."""
    result = results_from_values(
        heads, setup.names, est, reps, baselines=base, by=by, groups=groups,
        group_sizes=group_sizes, tie_policy=tie_policy, n_ties=n_ties, n_bins=setup.n_bins,
        n_boot=setup.n_boot, confidence=setup.confidence, seed=setup.seed,
        frame_sources=frames, scale=setup.scale, positive_label=setup.positive_label,
        withheld=population.NO_INTERVAL if setup.target == "population" else None)
    result.target, result.not_computed = setup.target, dict(setup.not_computed)
    return result


def per_label_values(names: Sequence[str], states: list[Any] | None, labels: Sequence[str]
                     ) -> dict[str, dict[str, float]]:
    """Each multi-label metric per label, from its merged state's ``per_label`` (both engines)."""
    if states is None:
        return {}
    return {name: dict(zip(labels, map(float, np.asarray(st.per_label(), dtype=np.float64)),
                           strict=True))
            for name, st in zip(names, states, strict=True) if hasattr(st, "per_label")}


@dataclass(frozen=True)
class _Human:
    """The human side of the records: soft and hard labels, the tie policy and ties."""

    soft: np.ndarray
    hard: np.ndarray
    policy: str
    n_ties: int
    majority: Majority | None


def _human_labels(first: Any, *, ties: TiePolicy | None, by: Any, seed: int) -> _Human:
    """Soft labels and majorities of the records (re-resolved under ``ties``), ties warned."""
    if isinstance(first, MultilabelRecords):
        if ties is not None or isinstance(by, str):
            raise InvalidValueError("multi-label records take their tie policy from "
                                    "align_multilabel(ties=) and groups as an array (by="
                                    f"{by!r}, ties={ties!r})")
        warn_ties(first.n_ties, first.n_items, first.tie_policy, multilabel=True, stacklevel=3)
        return _Human(first.soft, first.hard, first.tie_policy, first.n_ties, None)
    maj = first.majority if ties is None else majority(first.counts, ties=ties, rng=seed)
    warn_ties(maj.n_ties, first.n_items, maj.policy, stacklevel=3)
    return _Human(first.human, maj.labels, maj.policy, maj.n_ties, maj)


def _plan(models: Mapping[str | None, Any], human: _Human, setup: EvalSetup,
          groups: list[np.ndarray | None], batch_size: int | None) -> EvalPlan:
    """The plan over every row, in batches of ``batch_size`` rows (default one batch)."""
    n = next(iter(models.values())).n_items
    step = max(n, 1) if batch_size is None else check_int("batch_size", batch_size, low=1)
    return EvalPlan([rec.probs for rec in models.values()], human.soft, human.hard,
                    setup.names, setup.options, groups,
                    [(lo, min(lo + step, n)) for lo in range(0, n, step)])


def _frames(models: Mapping[str | None, Any], human: _Human, setup: EvalSetup
            ) -> dict[str | None, Callable[[], pd.DataFrame] | None]:
    """The per-item tables, built when asked for (``EvaluationResult.per_item``)."""
    first = next(iter(models.values()))
    if isinstance(first, MultilabelRecords):
        return {None: functools.partial(multilabel_item_frame, first, setup.names,
                                        setup.options)}
    maj = human.majority
    return {model: None if maj is None else functools.partial(
                per_item_frame, rec, maj, setup.names, setup.options)
            for model, rec in models.items()}


def _unweighted(lo: int, hi: int) -> None:
    """No bootstrap weights: the point estimates' fill."""
    return None


def _votes_pass(plan: EvalPlan, first: Any, *, seed: int, n_boot: int, baselines: bool
                ) -> tuple[np.ndarray, np.ndarray | None, dict[str, dict[str, float]]]:
    """Estimates, replicates and baselines against the collected votes."""
    est = plan.estimates()
    reps = None if not n_boot else plan.replicates(item_keys(first.item_ids), seed=seed,
                                                   n_boot=n_boot)
    base: dict[str, dict[str, float]] = {}
    if baselines:
        kinds = ("chance", "oracle")
        b_est = dataclasses.replace(plan, probs=[baseline_probs(first, k) for k in kinds],
                                    groups=[None]).estimates()
        base = {k: dict(zip(plan.names, map(float, b_est[i, 0]), strict=True))
                for i, k in enumerate(kinds)}
    return est, reps, base


def _population_pass(plan: EvalPlan, first: Any, *, seed: int, n_boot: int,
                     baselines: bool
                     ) -> tuple[np.ndarray, np.ndarray | None, dict[str, dict[str, float]]]:
    """:func:`_votes_pass` against the population: the metrics computed as under the votes
    target (:data:`annokit.metrics.population.UNCHANGED`) by this pass, then the others'
    estimates put in by :func:`population_target`."""
    same = tuple(n for n in plan.names if n in population.UNCHANGED)
    shape = (len(plan.probs), len(plan.groups), len(plan.names))
    est = np.full(shape, np.nan)
    reps = None if not n_boot else np.full(shape + (n_boot, 3), np.nan)
    chance = np.full(len(plan.names), np.nan) if baselines else None
    if same:
        cols = [plan.names.index(n) for n in same]
        sub = dataclasses.replace(plan, names=same)
        s_est, s_reps, _ = _votes_pass(sub, first, seed=seed, n_boot=n_boot, baselines=False)
        est[..., cols] = s_est
        if reps is not None and s_reps is not None:
            reps[:, :, cols] = s_reps
        if chance is not None:
            chance[cols] = dataclasses.replace(sub, probs=[baseline_probs(first, "chance")],
                                               groups=[None]).estimates()[0, 0]
    return population_target(plan.names, plan.options, plan.probs, first.counts, plan.groups,
                              keys=item_keys(first.item_ids), seed=seed, est=est, reps=reps,
                              chance=chance)


def population_target(names: Sequence[str], options: Mapping[str, Mapping[str, Any]],
                      probs: Sequence[np.ndarray], counts: np.ndarray,
                      groups: Sequence[np.ndarray | None], *, keys: np.ndarray, seed: int,
                      est: np.ndarray, reps: np.ndarray | None, chance: np.ndarray | None
                      ) -> tuple[np.ndarray, np.ndarray | None, dict[str, dict[str, float]]]:
    """The population target's estimates, replicates and chance row (both engines).

    ``est`` (n_models, n_groups, n_names), ``reps`` (..., n_boot, 3) and ``chance`` (n_names,)
    hold the votes-target values of the metrics the population target leaves as they are
    (:data:`annokit.metrics.population.UNCHANGED`); the other metrics' are replaced by
    :func:`annokit.metrics.population.population_values` on every item's ``counts`` and each
    model's ``probs`` (items in the records' order, keyed by ``keys``), their replicates
    without bound statistics.
    """
    population.warn_few_items(counts.shape[0])
    fixed = [j for j, name in enumerate(names) if name not in population.UNCHANGED]
    fixed_names = [names[j] for j in fixed]
    n_boot = 0 if reps is None else reps.shape[3]
    # one memory layout, whatever built the rows (align's column permutation leaves them in
    # Fortran order, a gather on Dask in C order): the prior's fit sums in layout order, and
    # its optimiser would carry the last-bit differences to about 1e-8
    probs = [np.ascontiguousarray(p) for p in probs]
    p_est, p_reps = population.population_values(probs, counts, fixed_names, options, groups,
                                                 keys=keys, seed=seed, n_boot=n_boot)
    supports = [metric_support(REGISTRY[name]) for name in fixed_names]
    for model_est in p_est[:, 0]:
        population.warn_out_of_range(fixed_names, model_est, supports)
    est = est.copy()
    est[..., fixed] = p_est
    if reps is not None:
        reps = reps.copy()
        reps[:, :, fixed] = np.nan  # results.REPLICATE_FIELDS: the means have no bounds
        reps[..., 0][:, :, fixed] = p_reps
    if chance is None:
        return est, reps, {}
    row = np.array(chance, dtype=np.float64)
    row[fixed] = population.chance_values(counts, fixed_names, options, seed=seed)
    return est, reps, {"chance": dict(zip(names, map(float, row), strict=True))}
