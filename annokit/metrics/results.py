"""What :func:`annokit.metrics.engine.evaluate` returns: results, groups and paired differences.

:func:`results_from_values` turns merged metric values (in memory or from the
Dask engine) into an :class:`EvaluationResult`; its ``to_dict`` is the documented
``annokit evaluate --json`` document, and :func:`result_table` (with
:func:`annotator_table` for the perspectivist view) the text table ``annokit evaluate``
prints.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.resample import (
    BootstrapResult,
    bounds_interval,
    no_interval,
    normal_interval,
    percentile_interval,
)
from annokit.errors import InvalidValueError
from annokit.metrics.registry import REGISTRY

__all__ = ["REPLICATE_FIELDS", "Difference", "EvaluationResult", "GroupResult", "annotator_table",
           "format_value", "interval_notes", "metric_interval", "metric_selection", "metric_support",
           "plain_value",
           "result_table", "results_from_values"]

#: What a bootstrap replicate holds per metric (the last axis of the engine's replicates):
#: the metric's value and its lower and upper bound statistics (NaN for metrics without).
REPLICATE_FIELDS = ("value", "lower", "upper")

_NAN = float("nan")


@dataclass(frozen=True)
class GroupResult:
    """The metrics of one group of items (``evaluate(..., by=...)``).

    ``group`` is the label (``"lo-hi"`` in nats for agreement bins, whose
    human-entropy edges are ``entropy_low``, ``entropy_high``: ``[low, high)``,
    the last bin closed); ``metrics`` are NaN for an empty group; ``intervals``
    are empty without bootstrap.
    """

    group: Any
    n_items: int
    metrics: dict[str, float]
    intervals: dict[str, BootstrapResult] = field(default_factory=dict)
    entropy_low: float | None = None
    entropy_high: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"group": plain_value(self.group), "n_items": self.n_items}
        if self.entropy_low is not None:
            out["entropy_low"], out["entropy_high"] = self.entropy_low, self.entropy_high
        out["metrics"] = {k: float(v) for k, v in self.metrics.items()}
        if self.intervals:
            out["ci"] = _ci(self.intervals)
        return out


@dataclass(frozen=True)
class Difference:
    """A model's metric minus the reference (first) model's, on the same items.

    ``low``, ``high`` bound the paired percentile bootstrap interval (same
    replicate weights for both models) and ``p_value`` is the two-sided bootstrap
    p-value ``2 min(P*(d <= 0), P*(d >= 0))`` over valid replicates; all three
    are NaN without bootstrap (``n_boot=0``).
    """

    estimate: float
    low: float = _NAN
    high: float = _NAN
    p_value: float = _NAN
    n_boot: int = 0

    def to_dict(self) -> dict[str, float]:
        out = {"difference": self.estimate}
        if self.n_boot:
            out.update(low=self.low, high=self.high, p_value=self.p_value)
        return out


@dataclass
class EvaluationResult:
    """Everything :func:`evaluate` computed.

    Attributes
    ----------
    metrics : dict of str to float
        The evaluated registry metrics in registry order, plus ``temperature``
        when the records were temperature scaled. With several models: the
        first (reference) model's.
    per_item : DataFrame
        One row per item: ``item``, ``majority``, ``is_tied`` and one column per
        evaluated metric that is the mean of a per-item quantity (registry
        ``per_item``; column mean = metric). Built on first access.
    intervals : dict of str to BootstrapResult
        Bootstrap intervals per metric (empty when ``n_boot=0``), each built by the method
        its registry entry names (``BootstrapResult.method``: ``"percentile"``,
        ``"normal"`` (the means), ``"bounds"``, or ``"none"`` with NaN bounds and a ``reason``).
    baselines : dict
        ``{"chance": {...}, "oracle": {...}}``: the same metrics for the
        uniform and the human-distribution predictor on the same items.
    units, lower_is_better : dict
        From the registry, for the evaluated metrics.
    groups : list of GroupResult or None
        With ``by``: one entry per group.
    models : dict of str to EvaluationResult
        With several models: each model's own result (same items and baselines).
    comparisons : dict of str to dict of str to Difference
        With several models: for each model after the first, its difference
        from the first on every metric.
    scale : str
        The labels' level of measurement, which chose the metrics that apply.
    positive_label : str or None
        The positive class of the binary metrics (``ece_binary``, ``mce_binary``),
        None when none was evaluated.
    task : {"single-label", "multilabel"}
        Multi-label records (:class:`~annokit.metrics.multilabel_records.MultilabelRecords`)
        evaluate the multi-label metrics; ``n_ties`` then counts tied (item, label) cells.
    per_label : dict of str to dict of str to float
        Multi-label: each metric per label (the metric is their mean).
    target : {"votes", "population"}
        What the metrics are measured against: the collected votes' distribution, or
        the distribution infinitely many annotators would give
        (:mod:`annokit.metrics.population`).
    not_computed : dict of str to str
        Metrics of the default list the target cannot estimate, with the reason.
    """

    n_items: int
    n_unmatched_predictions: int
    n_dropped_items: int
    dropped_item_ids: list[str]
    labels: tuple[str, ...]
    n_bins: int
    tie_policy: str
    n_ties: int
    metrics: dict[str, float]
    baselines: dict[str, dict[str, float]]
    intervals: dict[str, BootstrapResult] = field(default_factory=dict)
    n_boot: int = 0
    confidence: float = 0.95
    seed: int | None = None
    temperature: dict[str, Any] | None = None
    groups: list[GroupResult] | None = None
    by: str | None = None
    models: dict[str, EvaluationResult] = field(default_factory=dict)
    comparisons: dict[str, dict[str, Difference]] = field(default_factory=dict)
    scale: str = "nominal"
    positive_label: str | None = None
    task: str = "single-label"
    per_label: dict[str, dict[str, float]] = field(default_factory=dict)
    target: str = "votes"
    not_computed: dict[str, str] = field(default_factory=dict)
    frame_source: Callable[[], pd.DataFrame] | None = field(default=None, repr=False)
    _frame: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def names(self) -> tuple[str, ...]:
        """The evaluated registry metrics, in registry order."""
        return tuple(k for k in self.metrics if k in REGISTRY)

    @property
    def units(self) -> dict[str, str]:
        return {k: REGISTRY[k].unit for k in self.names}

    @property
    def lower_is_better(self) -> dict[str, bool | None]:
        """True, False, or None for a signed metric whose ideal is 0."""
        return {k: REGISTRY[k].lower_is_better for k in self.names}

    @property
    def per_item(self) -> pd.DataFrame:
        if self._frame is None:
            if self.frame_source is None:
                raise InvalidValueError("this result has no per-item values")
            self._frame = self.frame_source()
        return self._frame

    def to_frame(self, *, groups: bool = False) -> pd.DataFrame:
        """The metrics as a DataFrame, one row per metric.

        Parameters
        ----------
        groups : bool, default=False
            One row per (group, metric) of ``evaluate(..., by=...)`` instead, with the
            group's ``n_items``.

        Returns
        -------
        DataFrame
            Index ``metric`` (with several models ``(model, metric)``; with ``groups``
            ``(group, metric)``); columns ``value``, ``ci_low`` and ``ci_high`` (with
            bootstrap), ``unit`` and ``lower_is_better`` from the registry, the baselines
            ``chance`` and ``oracle``, and with several models each model's ``difference``
            from the first with ``difference_low``, ``difference_high`` and ``p_value``.

        Raises
        ------
        InvalidValueError
            ``groups=True`` on a result evaluated without ``by``.

        Examples
        --------
        >>> from annokit.metrics.engine import evaluate
        >>> from annokit.metrics.records import AlignedRecords
        >>> rec = AlignedRecords.from_arrays([[0.7, 0.3], [0.2, 0.8], [0.6, 0.4]],
        ...                                  [[3, 1], [0, 4], [2, 2]])
        >>> frame = evaluate(rec, metrics=["kl", "brier"]).to_frame()
        >>> frame[["value", "unit", "lower_is_better", "chance"]].round(4)
                 value                 unit  lower_is_better  chance
        metric
        kl      0.0832                 nats             True  0.2747
        brier   0.1933  squared probability             True  0.5000
        """
        if groups:
            if self.groups is None:
                raise InvalidValueError("this result has no groups; evaluate with by=... "
                                        "(CLI --by agreement) for per-group rows")
            parts = {g.group: _metric_frame(g.metrics, g.intervals).assign(n_items=g.n_items)
                     for g in self.groups}
            return pd.concat(parts, names=["group", "metric"])
        if not self.models:
            return self._metrics_frame()
        parts = {}
        for name, res in self.models.items():
            frame = res._metrics_frame()
            diffs = self.comparisons.get(name, {})
            if diffs:
                frame["difference"] = [diffs[m].estimate if m in diffs else _NAN
                                       for m in frame.index]
                for col, attr in (("difference_low", "low"), ("difference_high", "high"),
                                  ("p_value", "p_value")):
                    frame[col] = [getattr(diffs[m], attr) if m in diffs else _NAN
                                  for m in frame.index]
            parts[name] = frame
        return pd.concat(parts, names=["model", "metric"])

    def _metrics_frame(self) -> pd.DataFrame:
        frame = _metric_frame(self.metrics, self.intervals)
        frame["unit"] = [REGISTRY[m].unit if m in REGISTRY else "" for m in frame.index]
        frame["lower_is_better"] = [REGISTRY[m].lower_is_better if m in REGISTRY else None
                                    for m in frame.index]
        for name, values in self.baselines.items():
            frame[name] = [values.get(m, _NAN) for m in frame.index]
        return frame

    def __repr__(self) -> str:
        """A head line, then one line per metric (the first model's with several): value,
        interval, unit and direction.

        Examples
        --------
        >>> from annokit.metrics.engine import evaluate
        >>> from annokit.metrics.records import AlignedRecords
        >>> rec = AlignedRecords.from_arrays([[0.7, 0.3], [0.2, 0.8], [0.6, 0.4]],
        ...                                  [[3, 1], [0, 4], [2, 2]])
        >>> evaluate(rec, metrics=["kl", "brier"], n_boot=50)
        EvaluationResult(n_items=3, scale='nominal', n_boot=50, confidence=0.95)
          kl     0.0832  [0.0000, 0.1934]  nats, lower is better
          brier  0.1933  [0.0763, 0.3103]  squared probability, lower is better
        """
        head = (f"EvaluationResult(n_items={self.n_items}, scale={self.scale!r}"
                + (f", n_boot={self.n_boot}, confidence={self.confidence:g}"
                   if self.intervals else "")
                + (f", models={list(self.models)}" if self.models else "")
                + (f", groups={len(self.groups)} by {self.by!r}" if self.groups else "") + ")")
        width = max((len(m) for m in self.metrics), default=0)
        lines = [head]
        for m, v in self.metrics.items():
            ci = self.intervals.get(m)
            text = f"  {m.ljust(width)}  {v:.4f}"
            if ci is not None and ci.method == "none":
                text += "  no interval (1)"
            elif ci is not None:
                text += f"  [{ci.low:.4f}, {ci.high:.4f}]"
                if ci.method == "bounds" and not ci.low <= ci.estimate <= ci.high:
                    text += " (2)"
            if m in REGISTRY:
                lower = REGISTRY[m].lower_is_better
                better = ("" if lower is None
                          else ", lower is better" if lower else ", higher is better")
                text += f"  {REGISTRY[m].unit}{better}"
            lines.append(text)
        return "\n".join(lines + interval_notes(self.intervals))

    def _model_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "n_unmatched_predictions": self.n_unmatched_predictions,
            "n_dropped_items": self.n_dropped_items,
            "dropped_item_ids": list(self.dropped_item_ids),
            "metrics": {k: float(v) for k, v in self.metrics.items()},
        }
        if self.temperature is not None:
            out["temperature"] = {k: plain_value(v) for k, v in self.temperature.items()}
        if self.intervals:
            out["ci"] = _ci(self.intervals)
        if self.groups is not None:
            out["groups"] = [g.to_dict() for g in self.groups]
        return out

    def to_dict(self) -> dict[str, Any]:
        """The ``annokit evaluate --json`` document (README.md); NaN (empty group) is kept."""
        mine = self._model_dict()
        out: dict[str, Any] = {
            "n_items": self.n_items,
            "n_unmatched_predictions": mine.pop("n_unmatched_predictions"),
            "n_dropped_items": mine.pop("n_dropped_items"),
            "dropped_item_ids": mine.pop("dropped_item_ids"),
            "labels": list(self.labels),
            "task": self.task,
            "scale": self.scale,
            "target": self.target,
            "positive_label": self.positive_label,
            "n_bins": self.n_bins,
            "tie_policy": self.tie_policy,
            "n_ties": self.n_ties,
            "units": self.units,
            "lower_is_better": self.lower_is_better,
            "metrics": mine.pop("metrics"),
        }
        out.update(mine)
        if self.not_computed:
            out["not_computed"] = dict(self.not_computed)
        if self.per_label:
            out["per_label"] = {k: dict(v) for k, v in self.per_label.items()}
        if self.intervals:
            out["bootstrap"] = {"n_boot": self.n_boot, "confidence": self.confidence,
                                "seed": self.seed}
        out["baselines"] = {name: {k: float(v) for k, v in vals.items()}
                            for name, vals in self.baselines.items()}
        if self.models:
            out["models"] = {name: res._model_dict() for name, res in self.models.items()}
            out["comparisons"] = {name: {k: d.to_dict() for k, d in diffs.items()}
                                  for name, diffs in self.comparisons.items()}
        return out


def _metric_frame(metrics: Mapping[str, float], intervals: Mapping[str, BootstrapResult]
                  ) -> pd.DataFrame:
    """``value`` (and ``ci_low``, ``ci_high`` with intervals) per metric, index ``metric``."""
    frame = pd.DataFrame({"value": [float(v) for v in metrics.values()]},
                         index=pd.Index(list(metrics), name="metric"))
    if intervals:
        frame["ci_low"] = [float(intervals[m].low) if m in intervals else _NAN for m in metrics]
        frame["ci_high"] = [float(intervals[m].high) if m in intervals else _NAN
                            for m in metrics]
    return frame


def plain_value(v: Any) -> Any:
    """numpy scalars as Python numbers (JSON); anything else as it is."""
    return v.item() if isinstance(v, np.generic) else v


def _ci(intervals: Mapping[str, BootstrapResult]) -> dict[str, dict[str, Any]]:
    """``{"low", "high", "method"}`` per metric; no interval: null bounds and the ``reason``."""
    out: dict[str, dict[str, Any]] = {}
    for k, r in intervals.items():
        if r.method == "none":
            out[k] = {"low": None, "high": None, "method": r.method, "reason": r.reason}
        else:
            out[k] = {"low": float(r.low), "high": float(r.high), "method": r.method}
    return out


def interval_notes(intervals: Mapping[str, BootstrapResult]) -> list[str]:
    """The footnotes of a table of intervals: (1) why some metrics have none, (2) why a plug-in
    estimate can lie outside its own interval (``method="bounds"``). Only the notes used."""
    notes = []
    none = [k for k, r in intervals.items() if r.method == "none"]
    if none:
        reasons = dict.fromkeys(intervals[k].reason for k in none)
        notes.append(f"(1) no interval for {', '.join(none)}: {'; '.join(reasons)}")
    outside = [k for k, r in intervals.items()
               if r.method == "bounds" and not r.low <= r.estimate <= r.high]
    if outside:
        notes.append(f"(2) {', '.join(outside)}: the plug-in estimate is biased upward at this "
                     "size; its interval is for the population value (bounds method, "
                     "docs/guides/trust.md), so the estimate can lie outside it")
    return notes


def metric_interval(name: str, estimate: float, reps: np.ndarray, confidence: float, *,
                    withheld: str = "") -> BootstrapResult:
    """The interval of registry metric ``name`` from its replicates ``(n_boot, 3)``
    (:data:`REPLICATE_FIELDS`), by the method the registry gives it (:attr:`MetricSpec.interval`);
    none, for the reason ``withheld`` when it is given (the population target's
    :data:`annokit.metrics.population.NO_INTERVAL`)."""
    spec = REGISTRY[name]
    if spec.interval == "none" or withheld:
        return no_interval(estimate, reps.shape[0], confidence, withheld or spec.no_interval,
                           replicates=reps[:, 0])
    if spec.interval == "bounds":
        return bounds_interval(estimate, reps[:, 1], reps[:, 2], confidence,
                               replicates=reps[:, 0])
    if spec.interval == "normal":
        return normal_interval(estimate, reps[:, 0], confidence, support=metric_support(spec))
    return percentile_interval(estimate, reps[:, 0], confidence)


def metric_support(spec: Any) -> tuple[float, float]:
    """The values a mean-type metric can take: rates in [0, 1], the other errors and scores
    (a direction) at least 0, a signed quantity (``ent_ce_signed``) any real."""
    if spec.unit == "rate":
        return (0.0, 1.0)
    return (-np.inf, np.inf) if spec.lower_is_better is None else (0.0, np.inf)


def _difference(est: float, reps: np.ndarray | None, confidence: float) -> Difference:
    if reps is None:
        return Difference(float(est))
    ci = percentile_interval(est, reps, confidence)
    ok = reps[~np.isnan(reps)]
    p = float(min(1.0, 2.0 * min(np.mean(ok <= 0), np.mean(ok >= 0)))) if ok.size else _NAN
    return Difference(float(est), float(ci.low), float(ci.high), p, int(reps.size))


def results_from_values(heads: Mapping[str | None, Mapping[str, Any]], names: Sequence[str],
                        est: np.ndarray, reps: np.ndarray | None, *,
                        baselines: dict[str, dict[str, float]], by: str | None,
                        groups: Sequence[dict[str, Any]], group_sizes: Sequence[int],
                        tie_policy: str, n_ties: int, n_bins: int, n_boot: int,
                        confidence: float, seed: int,
                        frame_sources: Mapping[str | None, Callable[[], pd.DataFrame] | None],
                        scale: str = "nominal", positive_label: str | None = None,
                        withheld: Mapping[str, str] | None = None) -> EvaluationResult:
    """The :class:`EvaluationResult` of merged values (:func:`evaluate`, and the Dask engine).

    ``heads[model]`` (None: one unnamed model) holds ``n_items``, ``n_unmatched_predictions``,
    ``n_dropped_items``, ``dropped_item_ids``, ``labels``, ``temperature``; ``est`` has shape
    (n_models, n_groups, n_names) and ``reps`` (..., n_boot) or None, group 0 being every
    item; with ``by``, ``groups`` and ``group_sizes`` describe groups ``1 ..``. ``reps``
    has shape (n_models, n_groups, n_names, n_boot, 3) (:data:`REPLICATE_FIELDS`); each
    metric's interval is built as the registry says (:func:`metric_interval`), but for the
    metrics of ``withheld``, reported without one for the reason given (the population
    target's :data:`annokit.metrics.population.NO_INTERVAL`).
    """
    if "accuracy" in baselines.get("chance", {}):  # one chance: the warning's, 1 / n_labels
        from annokit.metrics.records import chance_accuracy

        n_labels = len(next(iter(heads.values()))["labels"])
        baselines = {**baselines, "chance": {**baselines["chance"],
                                             "accuracy": chance_accuracy(n_labels)}}

    def interval(m: int, g: int) -> dict[str, BootstrapResult]:
        if reps is None:
            return {}
        return {name: metric_interval(name, float(est[m, g, j]), reps[m, g, j], confidence,
                                      withheld=(withheld or {}).get(name, ""))
                for j, name in enumerate(names)}

    results: dict[str, EvaluationResult] = {}
    for m, (model, head) in enumerate(heads.items()):
        values = dict(zip(names, map(float, est[m, 0]), strict=True))
        if head["temperature"] is not None:
            values["temperature"] = float(head["temperature"])
        group_results = None
        if by is not None:
            group_results = [GroupResult(n_items=int(size),
                                         metrics=dict(zip(names, map(float, est[m, g + 1]),
                                                          strict=True)),
                                         intervals=interval(m, g + 1), **groups[g])
                             for g, size in enumerate(group_sizes)]
        results[str(model)] = EvaluationResult(
            n_items=head["n_items"], n_unmatched_predictions=head["n_unmatched_predictions"],
            n_dropped_items=head["n_dropped_items"],
            dropped_item_ids=list(head["dropped_item_ids"]), labels=tuple(head["labels"]),
            n_bins=n_bins, tie_policy=tie_policy, n_ties=n_ties, metrics=values,
            baselines=baselines, intervals=interval(m, 0), n_boot=n_boot,
            confidence=confidence, seed=seed, groups=group_results, by=by,
            scale=scale, positive_label=positive_label, frame_source=frame_sources.get(model))
    main = next(iter(results.values()))
    if None in heads:
        return main
    comparisons = {model: {name: _difference(est[m, 0, j] - est[0, 0, j],
                                             None if reps is None or name in (withheld or {})
                                             else reps[m, 0, j, :, 0] - reps[0, 0, j, :, 0],
                                             confidence)
                           for j, name in enumerate(names)}
                   for m, model in enumerate(results) if m > 0}
    return dataclasses.replace(main, models=results, comparisons=comparisons)


# --------------------------------------------------------------------------- text tables

def format_value(value: float) -> str:
    """Four decimals; a value that rounds to zero prints as 0.0000, never -0.0000 (a float
    rounding residue of a difference, e.g. under the gap's ">= 0" heading)."""
    text = f"{value:.4f}"
    return "0.0000" if text == "-0.0000" else text


def metric_selection(wanted: Any, result: EvaluationResult) -> dict[str, Any]:
    """``metric_selection`` (``default``, ``all`` or ``names``: what ``wanted`` was) and
    ``metric_names``, what was computed, in output order (the keys of ``metrics``)."""
    kind = "default" if wanted is None else "all" if wanted == "all" else "names"
    return {"metric_selection": kind, "metric_names": list(result.names)}


def _direction(name: str) -> str:
    """The direction column (the report's arrows in words): lower, higher or near 0."""
    spec = REGISTRY.get(name)
    if spec is None:
        return ""
    return {True: "lower", False: "higher", None: "near 0"}[spec.lower_is_better]


def _header_lines(result: EvaluationResult) -> list[str]:
    """Items, labels, bins; unmatched rows, dropped items, ties; temperature and target."""
    if result.task == "multilabel":
        ties = f"tied (item, label) cells: {result.n_ties} (policy {result.tie_policy}" + (
            ": left out of the majority set)" if result.tie_policy == "exclude" else ")")
    else:
        ties = f"tied majorities: {result.n_ties} (policy {result.tie_policy})"
    lines = [f"items: {result.n_items}   labels: {', '.join(result.labels)} ({result.scale}"
             + (", multi-label" if result.task == "multilabel" else "") + ")   "
             f"bins: {result.n_bins}"
             + (f"   positive class: {result.positive_label}" if result.positive_label else ""),
             f"unmatched prediction rows (ignored): {result.n_unmatched_predictions}   "
             f"dropped vote items: {result.n_dropped_items}   " + ties]
    if result.temperature is not None:
        t = result.temperature
        extra = (f", objective {t['objective']}, fitted on {t['n_fit_items']} items"
                 if t["mode"] != "fixed" else "")
        lines.append(f"temperature: {t['value']:.4g} ({t['mode']}{extra})")
    if result.target != "votes":
        lines.append("target: the population distribution (infinitely many annotators; "
                     "annokit.metrics.population)"
                     + (f"; not computed: {', '.join(result.not_computed)}"
                        if result.not_computed else ""))
    return lines


def _metric_rows(result: EvaluationResult) -> list[str]:
    """One row per metric: value, interval (with bootstrap replicates), baselines, unit,
    direction; the interval notes below."""
    ci = bool(result.intervals)
    head = f"{'metric':<20}{'model':>10}" + (f"{'95% CI':>22}" if ci else "")
    head += f"{'chance':>10}{'oracle':>10}  {'unit':<20}  better"
    lines = ["", head, "-" * len(head)]
    units = result.units
    for name in result.names:
        row = f"{name:<20}{format_value(result.metrics[name]):>10}"
        if ci:
            r = result.intervals[name]
            text = ("no interval (1)" if r.method == "none"
                    else f"[{format_value(r.low)}, {format_value(r.high)}]")
            if r.method == "bounds" and not r.low <= r.estimate <= r.high:
                text += " (2)"
            row += f"{text:>22}"
        for kind in ("chance", "oracle"):
            row += (f"{format_value(result.baselines[kind][name]):>10}"
                    if kind in result.baselines else f"{'':>10}")
        lines.append(f"{row}  {units[name]:<20}  {_direction(name)}")
    return lines + (interval_notes(result.intervals) if ci else [])


def _group_rows(result: EvaluationResult) -> list[str]:
    """The metrics of each group (``by``), one column per group."""
    from annokit.core.soft_labels import ENTROPY_UNIT

    groups = result.groups or []
    what = f" (bins of human entropy, {ENTROPY_UNIT})" if result.by == "agreement" else ""
    lines = ["", f"by {result.by}{what}: " + "   ".join(f"{g.group} ({g.n_items} items)"
                                                       for g in groups)]
    head = f"{'metric':<20}" + "".join(f"{g.group!s:>13}" for g in groups)
    lines += [head, "-" * len(head)]
    for name in result.names:
        lines.append(f"{name:<20}" + "".join(f"{format_value(g.metrics[name]):>13}"
                                             for g in groups))
    return lines


def result_table(result: EvaluationResult) -> str:
    """``annokit evaluate``'s table: the run, one row per metric, the groups; multi-label
    results add one column per label."""
    lines = _header_lines(result) + _metric_rows(result)
    if result.groups:
        lines += _group_rows(result)
    if result.task == "multilabel":
        head = f"{'metric':<20}" + "".join(f"{name!s:>12}" for name in result.labels)
        lines += ["", "per label:", head, "-" * len(head)]
        for name, values in result.per_label.items():
            lines.append(f"{name:<20}" + "".join(f"{values[label]:>12.4f}"
                                                 for label in result.labels))
    return "\n".join(lines)


def annotator_table(view: Any) -> str:
    """The perspectivist view (:class:`annokit.metrics.perspectivist.AnnotatorEvaluation`):
    per-annotator scores, the pooled view, the gap, their spread and the worst annotators."""
    lines = [(f"per annotator ({view.scale} scale): {view.n_pairs} (item, annotator) pairs, "
             f"{view.n_items} items, {view.n_annotators} annotators; unmatched predictions "
             f"{view.n_unmatched_predictions}, votes without a prediction "
             f"{view.n_votes_without_prediction}")]
    for title, scores in ((None, view.scores),
                          ("pooled view (the model's labels pooled per item):", view.pooled),
                          ("gap (per-annotator minus pooled, >= 0):", view.gap)):
        lines += [title] if title else []
        lines += [f"  {name:<26}{format_value(value):>10}" for name, value in scores.items()]
    for name, dist in view.over_annotators.items():
        lines.append(f"over annotators, {name}: " + "  ".join(
            f"{k} {format_value(v)}" for k, v in dist.items()))
    for name, rows in view.worst.items():
        lines.append(f"worst by {name}: " + ", ".join(
            f"{r['annotator']} ({format_value(r['value'])}, {r['n_pairs']} pairs)" for r in rows))
    return "\n".join(lines)
