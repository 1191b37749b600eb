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
from annokit.core.resample import item_keys, poisson_weights, replicate_chunks
from annokit.core.scales import check_scale
from annokit.core.soft_labels import AGREEMENT_BINS as DEFAULT_AGREEMENT_BINS
from annokit.core.soft_labels import Majority, TiePolicy, majority
from annokit.errors import AlignmentError, DegenerateInputWarning, InvalidValueError, SchemaError
from annokit.metrics import kernels, population
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
    plain_value,
    results_from_values,
)
from annokit.metrics.states import update_many
from annokit.metrics.states_ext import RowMeanState

__all__ = ["AGREEMENT_BINS", "Difference", "EvaluationResult", "GroupResult", "baseline_records",
           "evaluate", "resolve_options", "results_from_values"]

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


def _check_models(records: Any) -> dict[str | None, AlignedRecords]:  # single-label
    """``{None: records}`` for one model; ``{name: records}`` (same items, votes, order) for several."""
    if isinstance(records, AlignedRecords):
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
        edges, index, _, _ = agreement_bins(agreement_entropy(records.human),
                                            AGREEMENT_BINS)
        nb = edges.size - 1
        return "agreement", [np.flatnonzero(index == b) for b in range(nb)], \
            agreement_groups(edges)
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


# ------------------------------------------------------------------------------ the pass


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


def per_item_frame(rec: AlignedRecords, maj: Majority, names: Sequence[str],
                    options: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The per-item values of ``names`` (``EvaluationResult.per_item``), both engines."""
    cols = [name for name in names if REGISTRY[name].per_item is not None]
    values = kernels.item_values(rec.probs, rec.human, maj.labels,
                              tuple(REGISTRY[name].per_item for name in cols))
    frame = pd.DataFrame({"item": rec.item_ids,
                          "majority": np.asarray(rec.labels.names, dtype=object)[maj.labels],
                          "is_tied": maj.is_tied})
    for j, name in enumerate(cols):
        frame[name] = values[:, j]
    for name in names:  # the order-aware means: one value per item too
        spec = REGISTRY[name]
        state = spec.state(**options[name]) if spec.per_item is None else None
        if isinstance(state, RowMeanState):
            frame[name] = state.item_values(rec.probs, rec.human, maj.labels)
    return frame


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
        From :func:`annokit.metrics.records.align` (optionally temperature
        scaled). A mapping evaluates several models on the same items and votes
        (records of another item order are reordered) and compares each with
        the first. Multi-label records
        (:func:`annokit.metrics.multilabel_records.align_multilabel`) evaluate
        the multi-label metrics against the per-label soft labels and majorities,
        with ``per_label`` values; baselines are 0.5 per label (chance) and the
        soft labels (oracle).
    metrics : str or sequence of str, optional
        Registry names (:data:`~annokit.metrics.registry.REGISTRY`); default
        every registered metric the inputs allow. Output follows registry order.
    by : None, "agreement", array-like of shape (n_items,) or pandas Categorical
        Also evaluate groups of items: ``"agreement"`` makes
        :data:`AGREEMENT_BINS` equal-count bins of human entropy in nats
        (:func:`~annokit.metrics.records.agreement_bins`); an array gives one
        group label per item (groups in sorted order); a Categorical keeps its
        category order, empty categories included (their metrics are NaN).
    n_boot : int, default=0
        Poisson bootstrap replicates; 0 skips the intervals.
    seed : int, default=0
        Seeds the bootstrap (with the item ids) and ``ties="random"``.
    confidence : float, default=0.95
        Level of the intervals. Each metric's interval is built as the registry says
        (:attr:`~annokit.metrics.registry.MetricSpec.interval`): the percentile bootstrap
        for the means, an interval for the population value from two bound statistics
        for the binned |gap| metrics (``"bounds"``: the plug-in estimate is biased upward
        and can lie outside it), none for the MCEs (NaN bounds and the reason).
    n_bins : int, default=10
        Bins of the binned metrics (every registered metric with an ``n_bins`` option).
    ties : {"report", "first", "random"}, optional
        Re-resolve the human majority with this policy; by default the
        records' majority is used. The number of tied items is reported and warned about.
    baselines : bool, default=True
        Also compute the chance and oracle rows.
    batch_size : int, optional
        Evaluate ``batch_size`` rows at a time and merge the states (same
        values and, for a given seed, the same intervals as all rows at once).
    scale : {"nominal", "ordinal", "interval", "ratio"}, optional
        The label scale: which metrics apply (``MetricSpec.scales``); default
        the records' label set's (``records.labels.scale``). The default list
        is ``available(True, True, scale=scale, n_labels=k)``: with two labels
        it includes the positive-class metrics ``ece_binary`` and ``mce_binary``.
    metric_options : mapping, optional
        Options given to every metric that accepts them: ``{"positive": 0}``
        (the positive class of the binary metrics, a label index or name;
        default the second label) or the category ``values`` of the
        order-aware metrics (default: on interval and ratio scales the labels'
        numbers, on ordinal scales the ranks ``0 .. k-1``).
    target : {"votes", "population"}, default="votes"
        ``"votes"``: every metric against the collected votes' distribution (the
        published plug-in values). ``"population"``: against the distribution infinitely
        many annotators would give (:mod:`annokit.metrics.population`); the metrics it
        cannot correct are refused by name when asked for, and left out of the default
        list with their reason in ``not_computed``; the baselines are the chance row only.

    Returns
    -------
    EvaluationResult

    Raises
    ------
    SchemaError
        ``records`` is not AlignedRecords (or a non-empty mapping of them), or
        ``by`` does not give one label per item.
    AlignmentError
        Several models are not on the same items, labels and votes.
    InvalidValueError
        Unknown metric, bad option (``n_boot``, ``seed``, ``confidence``,
        ``n_bins``, ``batch_size``, ``by``), or probabilities off the simplex.

    Examples
    --------
    >>> rec = AlignedRecords.from_arrays([[0.7, 0.3], [0.2, 0.8], [0.6, 0.4]],
    ...                                  [[8, 2], [1, 9], [5, 4]], labels=["yes", "no"])
    >>> res = evaluate(rec, n_boot=200)
    >>> list(res.metrics) == list(available(True, True, n_labels=2)), list(res.baselines)
    (True, ['chance', 'oracle'])
    >>> all(ci.low <= ci.high for ci in res.intervals.values() if ci.method != "none")
    True
    >>> res.intervals["ece"].method, res.intervals["mce"].method
    ('bounds', 'none')
    """
    models: dict[str | None, AlignedRecords | MultilabelRecords]
    multilabel = isinstance(records, MultilabelRecords)
    if isinstance(records, MultilabelRecords):
        models = {None: records}
    else:
        models = dict(_check_models(records))
    first = next(iter(models.values()))
    scale = check_scale(getattr(first.labels, "scale", "nominal") if scale is None else scale)
    names = check_metrics(metrics, scale=scale, n_labels=first.n_labels, multilabel=multilabel)
    names, not_computed = target_names(check_target(target), names, metrics, multilabel)
    n_boot = check_int("n_boot", n_boot)
    seed = check_int("seed", seed)
    n_bins = check_int("n_bins", n_bins, low=1)
    if batch_size is not None:
        batch_size = check_int("batch_size", batch_size, low=1)
    check_open_unit("confidence", confidence)
    maj: Majority | None = None
    if isinstance(first, MultilabelRecords):
        if ties is not None or isinstance(by, str):
            raise InvalidValueError("multi-label records take their tie policy from "
                                    "align_multilabel(ties=) and groups as an array (by="
                                    f"{by!r}, ties={ties!r})")
        soft, hard, tie_policy, n_ties = first.soft, first.hard, first.tie_policy, first.n_ties
        if n_ties:
            warnings.warn(f"{n_ties} (item, label) cells are ticked by exactly half of the "
                          f"annotators; tie policy {tie_policy!r}", DegenerateInputWarning,
                          stacklevel=2)
    else:
        maj = first.majority if ties is None else majority(first.counts, ties=ties, rng=seed)
        soft, hard, tie_policy, n_ties = first.human, maj.labels, maj.policy, maj.n_ties
        if n_ties:
            warnings.warn(f"{n_ties} of {first.n_items} items have a tied human majority; "
                          f"tie policy {maj.policy!r} "
                          + ("draws one tied label at random" if maj.policy == "random"
                             else "takes the first tied label in label order"),
                          DegenerateInputWarning, stacklevel=2)
    options, positive_label = resolve_options(names, first.labels, scale, n_bins=n_bins,
                                              metric_options=metric_options)
    by_kind, groups, info = _groups(by, first)
    n = first.n_items
    step = max(n, 1) if batch_size is None else batch_size
    plan = EvalPlan([rec.probs for rec in models.values()], soft, hard, names, options,
                 [None, *groups] if by_kind is not None else groups,
                 [(lo, min(lo + step, n)) for lo in range(0, n, step)])
    if target == "population":
        est, reps, base = _population_pass(plan, first, seed=seed, n_boot=n_boot,
                                           baselines=baselines)
    else:
        est, reps, base = _votes_pass(plan, first, seed=seed, n_boot=n_boot,
                                      baselines=baselines)
    heads = {model: {"n_items": rec.n_items,
                     "n_unmatched_predictions": rec.n_unmatched_predictions,
                     "n_dropped_items": rec.n_dropped_items,
                     "dropped_item_ids": [str(i) for i in rec.dropped_item_ids],
                     "labels": tuple(rec.labels.names), "temperature": rec.temperature}
             for model, rec in models.items()}
    frames: dict[str | None, Callable[[], pd.DataFrame] | None] = {}
    if isinstance(first, MultilabelRecords):
        frames[None] = functools.partial(multilabel_item_frame, first, names, options)
    elif maj is not None:
        frames.update({model: functools.partial(per_item_frame, rec, maj, names, options)
                       for model, rec in models.items() if isinstance(rec, AlignedRecords)})
    result = results_from_values(
        heads, names, est, reps, baselines=base, by=by_kind, groups=info,
        group_sizes=[0 if rows is None else int(rows.size) for rows in groups] if by_kind else [],
        tie_policy=tie_policy,
        n_ties=n_ties, n_bins=n_bins, n_boot=n_boot, confidence=confidence, seed=seed,
        frame_sources=frames, scale=scale, positive_label=positive_label)
    if isinstance(first, MultilabelRecords):
        result.task = "multilabel"
        result.per_label = _per_label(plan, first.labels.names)
    result.target, result.not_computed = target, not_computed
    return result


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
    """:func:`_votes_pass` against the population (:mod:`annokit.metrics.population`): the
    mean-type metrics' posterior estimates; SMECE's kind as under the votes target."""
    keys = item_keys(first.item_ids)
    same = [j for j, n in enumerate(plan.names) if n in population.UNCHANGED]
    fixed = [j for j in range(len(plan.names)) if j not in same]
    sub = dataclasses.replace(plan, names=tuple(plan.names[j] for j in same))
    shape = (len(plan.probs), len(plan.groups), 0)
    est: np.ndarray = np.empty(shape)
    reps: np.ndarray | None = np.empty(shape + (n_boot, 3))
    if same:
        est, reps, _ = _votes_pass(sub, first, seed=seed, n_boot=n_boot, baselines=False)
    names = [plan.names[j] for j in fixed]
    p_est, p_reps = population.population_values(
        plan.probs, first.counts, names, plan.options, plan.groups, keys=keys, seed=seed,
        n_boot=n_boot)
    out = np.empty(p_est.shape[:2] + (len(plan.names),))
    out[..., same], out[..., fixed] = est, p_est
    all_reps: np.ndarray | None = None
    base: dict[str, dict[str, float]] = {}
    if n_boot:
        all_reps = np.full(out.shape + (n_boot, 3), np.nan)  # results.REPLICATE_FIELDS
        all_reps[:, :, same] = reps
        all_reps[..., 0][:, :, fixed] = p_reps  # the population means: no bound statistics
    if baselines:
        chance = dataclasses.replace(plan, probs=[baseline_probs(first, "chance")], groups=[None])
        c_est, _ = population.population_values(
            chance.probs, first.counts, names, plan.options, [None], keys=keys, seed=seed,
            n_boot=0)
        row = np.empty(len(plan.names))
        if same:
            row[same] = dataclasses.replace(chance, names=sub.names).estimates()[0, 0]
        row[fixed] = c_est[0, 0]
        base = {"chance": dict(zip(plan.names, map(float, row), strict=True))}
    return out, all_reps, base


def _per_label(plan: EvalPlan, labels: Sequence[str]) -> dict[str, dict[str, float]]:
    """Each multi-label metric per label (its states' ``per_label``), from one more pass."""
    states = plan.fill(lambda lo, hi: None)[0][0]
    if states is None:
        return {}
    return {name: dict(zip(labels, map(float, np.asarray(st.per_label(), dtype=np.float64)),
                           strict=True))
            for name, st in zip(plan.names, states, strict=True) if hasattr(st, "per_label")}


def multilabel_item_frame(rec: MultilabelRecords, names: Sequence[str],
                          options: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """Per item: responses, tied labels, and each per-label mean metric averaged over labels
    (``EvaluationResult.per_item`` of multi-label records, both engines)."""
    frame = pd.DataFrame({"item": rec.item_ids, "n_responses": rec.n_responses,
                          "n_tied_labels": rec.is_tied.sum(axis=1)})
    for name in names:
        state = REGISTRY[name].state(**options[name])
        if isinstance(state, RowMeanState):
            values = state.item_values(rec.probs, rec.soft, rec.hard)
            frame[name] = values.mean(axis=1) if values.ndim == 2 else values
    return frame


def resolve_options(names: Sequence[str], labels: Any, scale: str, *, n_bins: int,
                    metric_options: Mapping[str, Any] | None = None
                    ) -> tuple[dict[str, dict[str, Any]], str | None]:
    """Each metric's constructor options, and the positive label of the binary metrics.

    :func:`evaluate` and the Dask engine (:func:`annokit.scale.evaluate.evaluate_dask`)
    give their states the same options: ``n_bins``, the order-aware metrics'
    ``values`` (the labels' numbers on interval and ratio scales), then
    ``metric_options``, each to the metrics that accept it; ``positive`` (default the
    second label) is resolved to a label index.

    Parameters
    ----------
    names : sequence of str
        Registry metrics.
    labels : LabelSet
    scale : str
        The checked scale (:func:`annokit.core.scales.check_scale`).
    n_bins : int
    metric_options : mapping, optional

    Returns
    -------
    options : dict of str to dict
        ``{name: {option: value}}``.
    positive_label : str or None
        None when no evaluated metric has a ``positive`` option.

    Raises
    ------
    InvalidValueError
        ``positive`` is neither a label name nor a label index.

    Examples
    --------
    >>> from annokit.core.labels import LabelSet
    >>> resolve_options(["ece_binary"], LabelSet(["no", "yes"]), "nominal", n_bins=5,
    ...                 metric_options={"positive": "no"})
    ({'ece_binary': {'n_bins': 5, 'positive': 0}}, 'no')
    """
    given = {"n_bins": n_bins, **_default_options(labels, scale), **(metric_options or {})}
    positive_label = None
    if any("positive" in REGISTRY[name].options for name in names):
        given["positive"] = _positive_index(given.get("positive", 1), labels.names)
        positive_label = labels.names[given["positive"]]
    options = {name: {k: v for k, v in given.items() if k in REGISTRY[name].options}
               for name in names}
    return options, positive_label


def _default_options(labels: Any, scale: str) -> dict[str, Any]:
    """Category values of the order-aware metrics: the labels' numbers on interval/ratio scales."""
    values = getattr(labels, "values", None)
    if scale in ("interval", "ratio") and values is not None:
        return {"values": tuple(float(v) for v in values)}
    return {}


def _positive_index(positive: Any, names: Sequence[str]) -> int:
    """The positive class of the binary metrics: an index (0 or 1) or a label name."""
    if isinstance(positive, (int, np.integer)) and not isinstance(positive, bool) \
            and 0 <= positive < len(names):
        return int(positive)
    if isinstance(positive, str) and positive in names:
        return list(names).index(positive)
    raise InvalidValueError(f"positive must be one of the labels {list(names)} or its index; "
                            f"got {positive!r}")

