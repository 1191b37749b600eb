"""Votes + model predictions -> the :class:`~annokit.report.model.Report` model.

Nothing here draws or writes files, and nothing here computes a metric:
:func:`build_report` gathers the numbers, the renderers read them. The steps:

1. agreement bins of items by human entropy in nats (``core.soft_labels.ENTROPY_BASE``)
   (:func:`annokit.metrics.records.agreement_bins`: equal-count quantile cut
   points, Nie et al. 2020, Sec. 5.4, or user edges);
2. every model's metrics, overall and per agreement bin, with Poisson-bootstrap
   intervals and paired differences against the first model, from one call of
   :func:`annokit.metrics.engine.evaluate`; which metrics, their units and
   directions come from :data:`annokit.metrics.registry.REGISTRY`;
3. the split-half human ceiling (:func:`annokit.metrics.ceiling.split_half_ceiling`):
   two disjoint random k-vote halves H1 and H2 of each item's votes (Baan et
   al. 2022, Sec. 5, use 20 of 100), H1 evaluated like a model against all
   votes and against H2, on the same agreement bins;
4. figure data: reliability diagrams, histograms of the per-item values the
   engine returns, dataset statistics and annotator quality;
5. what depends on the label scale (:mod:`annokit.report.sections`): the scale,
   on ordered scales the mean human and model label distributions in scale
   order; with two labels the positive class and its reliability diagram; with
   annotator predictions the per-annotator (perspectivist) evaluation.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import annokit
from annokit.core.annotator_agreement import alpha_influence, annotator_pairs, pair_matrix
from annokit.core.checks import check_int, check_open_unit, check_option
from annokit.core.jsonable import finite_or_none
from annokit.core.soft_labels import (
    ENTROPY_BASE,
    ENTROPY_UNIT,
    TiePolicy,
    distributions,
    entropy,
    majority,
)
from annokit.core.soft_votes import human_majority, human_rows, is_soft_only
from annokit.core.votes import Votes
from annokit.errors import DegenerateInputWarning, InputError, InvalidValueError, SchemaError
from annokit.metrics.ceiling import default_votes_per_half, split_half_ceiling
from annokit.metrics.engine import EvaluationResult, evaluate
from annokit.metrics.records import AlignedRecords, agreement_entropy
from annokit.metrics.registry import REGISTRY
from annokit.report.binning import (
    HIST_BINS,
    AgreementBins,
    agreement_binning,
    entropy_edges,
    population_entropy,
)
from annokit.report.inputs import ModelPredictions
from annokit.report.intervals import as_interval, bin_interval, noted
from annokit.report.model import (
    AnnotatorPairs,
    AnnotatorQuality,
    AnnotatorRow,
    BinCeiling,
    BinMetrics,
    Histogram,
    HumanCeiling,
    Interval,
    LabelDistribution,
    MetricInfo,
    ModelReport,
    PairwiseDifference,
    Reliability,
    Report,
    Settings,
    SubsamplingPoint,
    SubsamplingRecommendation,
)
from annokit.report.options import BIN_ON, ReportOptions
from annokit.report.population_figures import population_section
from annokit.report.sections import (
    ORDERED_SCALES,
    binary_section,
    check_positive,
    label_distribution,
    perspectivist_section,
)

__all__ = ["build", "build_report", "histogram_edges"]

_TIES: TiePolicy = "first"


def _as_predictions(name: str, value: Any, votes: Votes) -> ModelPredictions:
    """A probability matrix or :class:`~annokit.metrics.records.AlignedRecords` as ModelPredictions."""
    if isinstance(value, ModelPredictions):
        return value
    if isinstance(value, AlignedRecords):
        ids = np.asarray(value.item_ids, dtype=object)
        if ids.shape != votes.item_ids.shape or not np.array_equal(ids, votes.item_ids):
            raise SchemaError(
                f"records of model {name!r} cover {ids.size} items in another order than the "
                f"{votes.n_items} vote items; align them to the same votes (e.g. select the "
                "common items with votes.select_items) first")
        return ModelPredictions(name=name, probs=value.probs, temperature=value.temperature)
    return ModelPredictions(name=name, probs=np.asarray(value, dtype=np.float64))


def _records(models: Sequence[ModelPredictions], votes: Votes, counts: np.ndarray
             ) -> dict[str, AlignedRecords]:
    out = {}
    for m in models:
        probs = np.asarray(m.probs, dtype=np.float64)
        if probs.shape != counts.shape:
            raise SchemaError(
                f"predictions of model {m.name!r} have shape {probs.shape}; the votes need "
                f"{counts.shape} (items x labels, in the votes' order)")
        if is_soft_only(votes):  # distributions without votes: they stand in for the counts
            out[m.name] = AlignedRecords(
                item_ids=np.asarray(votes.item_ids, dtype=object), labels=votes.labels,
                probs=probs, counts=counts, human=counts,
                majority=human_majority(votes, counts, ties=_TIES))
        else:
            out[m.name] = AlignedRecords.from_arrays(probs, counts, labels=votes.labels,
                                                     item_ids=votes.item_ids, ties=_TIES)
    return out


def histogram_edges(unit: str, values: Sequence[np.ndarray], *, n_labels: int,
                    signed: bool = False, n_bins: int = HIST_BINS) -> np.ndarray:
    """Edges shared by the histograms of one per-item quantity of several models.

    The range starts at the quantity's natural scale, which the data may
    widen: ``[0, 1]`` for a probability, ``[0, ln n_labels]`` (the entropy of
    the uniform distribution) for nats, the data's maximum otherwise; a signed
    quantity is drawn on ``[-s, s]``.

    Examples
    --------
    >>> histogram_edges("probability", [np.array([0.2, 0.4])], n_labels=3, n_bins=4).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    >>> histogram_edges("nats", [np.array([-0.1, 0.2])], n_labels=2, signed=True, n_bins=2
    ...                 ).round(3).tolist()
    [-0.693, 0.0, 0.693]
    """
    finite = [v[np.isfinite(v)] for v in values]
    finite = [v for v in finite if v.size]
    data = float(max((np.abs(v) if signed else v).max() for v in finite)) if finite else 0.0
    scale = {"probability": 1.0, "nats": float(np.log(n_labels))}.get(unit, 0.0)
    hi = max(scale, data) or 1.0
    return np.linspace(-hi if signed else 0.0, hi, n_bins + 1)


def _histogram(values: np.ndarray, edges: np.ndarray) -> Histogram:
    counts, _ = np.histogram(np.clip(values, edges[0], edges[-1]), bins=edges)
    return Histogram(edges=edges.tolist(), counts=counts.astype(int).tolist())


def _none_list(a: np.ndarray | None, n: int) -> list[float | None]:
    return [None] * n if a is None else [finite_or_none(v) for v in a]


def _reliability(probs: np.ndarray, labels: np.ndarray, human: np.ndarray,
                 n_bins: int) -> Reliability:
    from annokit.metrics.calibration import reliability_diagram

    rel = reliability_diagram(probs, labels, human, n_bins=n_bins)
    return Reliability(
        edges=np.asarray(rel.edges, dtype=float).tolist(),
        count=np.asarray(rel.count).astype(int).tolist(),
        confidence=_none_list(rel.mean_confidence, n_bins),
        accuracy=_none_list(rel.accuracy, n_bins),
        soft_target=_none_list(rel.mean_soft_target, n_bins))


def _model_reports(models: Sequence[ModelPredictions], result: EvaluationResult,
                   records: Mapping[str, AlignedRecords], n_bins: int,
                   entropy_edges: np.ndarray) -> list[ModelReport]:
    """Per model: the engine's metrics and groups, the reliability data and the histograms."""
    names = result.names
    per_model = result.models or {models[0].name: result}
    hist_keys = [n for n in names if REGISTRY[n].per_item is not None
                 and REGISTRY[n].unit != "rate"]  # a rate is a mean of 0/1 per-item values
    frames = {m.name: per_model[m.name].per_item for m in models}
    n_labels = len(result.labels)
    edges = {key: histogram_edges(REGISTRY[key].unit, [f[key].to_numpy() for f in frames.values()],
                                  n_labels=n_labels, signed=REGISTRY[key].lower_is_better is None)
             for key in hist_keys}
    out = []
    for m in models:
        res, rec = per_model[m.name], records[m.name]
        per_bin = [BinMetrics(bin=b, n=g.n_items,
                              metrics={k: bin_interval(k, g.n_items, n_bins, g.metrics[k],
                                                        g.intervals.get(k)) for k in names})
                   for b, g in enumerate(res.groups or [])]
        out.append(ModelReport(
            name=m.name, sources=[str(s) for s in m.sources], n_items=rec.n_items,
            temperature=m.temperature, temperature_note=m.temperature_note,
            metrics={k: as_interval(res.metrics[k], res.intervals.get(k)) for k in names},
            per_bin=per_bin,
            reliability=_reliability(rec.probs, rec.majority.labels, rec.human, n_bins),
            histograms={k: _histogram(frames[m.name][k].to_numpy(), edges[k]) for k in hist_keys},
            entropy=_histogram(entropy(rec.probs, base=ENTROPY_BASE), entropy_edges)))
    return out


def _comparisons(result: EvaluationResult) -> list[PairwiseDifference]:
    if not result.comparisons:
        return []
    reference = next(iter(result.models))
    return [PairwiseDifference(model_a=model, model_b=reference, metric=metric,
                               difference=Interval(estimate=d.estimate, low=d.low, high=d.high),
                               p_value=d.p_value)
            for model, diffs in result.comparisons.items() for metric, d in diffs.items()]


def _dataset_summary(votes: Votes, *, n_boot: int, seed: int,
                     notes: list[str]) -> dict[str, Any]:
    """``annokit stats --json`` of the votes; a smaller summary where that cannot be computed."""
    from annokit.quality.dataset_stats import dataset_stats, soft_stats

    if is_soft_only(votes):
        return soft_stats(votes, rng=seed)
    try:
        return dataset_stats(votes, n_boot=n_boot, rng=seed)
    except InputError as exc:
        notes.append(f"dataset statistics reduced: {exc}")
    per_item = votes.votes_per_item()
    counts = votes.counts()
    h = entropy(distributions(counts), base=ENTROPY_BASE)
    maj = majority(counts)
    return {
        "n_items": votes.n_items,
        "n_votes": votes.n_votes,
        "n_labels": votes.n_labels,
        "labels": list(votes.labels.names),
        "n_annotators": votes.n_annotators,
        "votes_per_item": {"min": int(per_item.min()), "mean": float(per_item.mean()),
                           "max": int(per_item.max())},
        "entropy": {"base": ENTROPY_BASE, "unit": ENTROPY_UNIT, "mean": float(h.mean()),
                    "median": float(np.median(h))},
        "n_majority_ties": maj.n_ties,
    }


def _check_options(n_boot: Any, confidence: Any, seed: Any) -> None:
    check_int("n_boot", n_boot)
    check_int("seed", seed)
    check_open_unit("confidence", confidence)


def build_report(
    votes: Votes, models: Sequence[ModelPredictions] | Mapping[str, Any], *,
    bins: int | Sequence[float] = 5, n_boot: int = 1000, confidence: float = 0.95,
    n_bins: int = 10, metrics: Sequence[str] | None = None, ceiling: bool = True,
    votes_per_half: int | None = None, subsampling: Sequence[Mapping[str, Any]] | None = None,
    subsampling_recommendation: Mapping[str, Any] | None = None, title: str | None = None,
    quality_methods: Sequence[str] = ("ds", "agreement"), positive: int | str | None = None,
    annotator_predictions: Any = None, seed: int = 0, bin_on: str = "votes",
    population: str = "auto", progress: Callable[[str], None] | None = None,
) -> Report:
    """Build the agreement-binned analysis report.

    Parameters
    ----------
    votes : Votes
        The human votes; define the items and the label order.
    models : sequence of ModelPredictions, or mapping of name to probs or AlignedRecords
        Predictions aligned with ``votes`` (row i = ``votes.item_ids[i]``, columns in
        ``votes.labels`` order), e.g. ``AlignedRecords.probs``. Later models are compared
        with the first.
    bins, n_boot, confidence, n_bins, metrics, ceiling, votes_per_half, title, quality_methods
        As the fields of the same name of :class:`~annokit.report.options.ReportOptions`;
        :func:`build` takes that object itself (and its other report options).
    positive, seed, bin_on, population
        Likewise.
    subsampling, subsampling_recommendation, annotator_predictions, progress
        As for :func:`build`.

    Returns
    -------
    Report

    Raises
    ------
    InputError
        Predictions that do not match the votes' shape, or invalid options (a ``positive`` that
        is not one of two labels; annotator predictions naming an unknown item or annotator).

    Examples
    --------
    >>> votes = Votes.from_counts([[9, 1], [5, 5], [1, 9], [7, 3]], labels=["a", "b"])
    >>> preds = {"m": [[0.8, 0.2], [0.6, 0.4], [0.3, 0.7], [0.6, 0.4]]}
    >>> rep = build_report(votes, preds, bins=2, n_boot=20)
    >>> [b.n for b in rep.models[0].per_bin], rep.models[0].metrics["accuracy"].estimate
    ([2, 2], 1.0)
    """
    options = ReportOptions(bins=bins, n_boot=n_boot, confidence=confidence, n_bins=n_bins,
                            metrics=metrics, ceiling=ceiling, votes_per_half=votes_per_half,
                            title=title, quality_methods=quality_methods, positive=positive,
                            seed=seed, bin_on=bin_on, population=population)
    return build(votes, models, options, subsampling=subsampling,
                 subsampling_recommendation=subsampling_recommendation,
                 annotator_predictions=annotator_predictions, progress=progress)


def build(votes: Votes, models: Sequence[ModelPredictions] | Mapping[str, Any],
          options: ReportOptions, *, subsampling: Sequence[Mapping[str, Any]] | None = None,
          subsampling_recommendation: Mapping[str, Any] | None = None,
          annotator_predictions: Any = None,
          progress: Callable[[str], None] | None = None) -> Report:
    """The report of ``models`` on ``votes`` with ``options``: bins, model sections, assembly.

    Parameters
    ----------
    votes, models
        As for :func:`build_report`.
    options : ReportOptions
        Its report options (those of the workflow that reads files are not read here).
    subsampling : sequence of mapping, optional
        A precomputed "how many annotations are enough" curve
        (:func:`annokit.report.inputs.subsampling_rows`).
    subsampling_recommendation : mapping, optional
        The recommended k (:meth:`annokit.subsample.Recommendation.to_dict`); default: the
        ``recommendation`` attribute of ``subsampling`` when it has one.
    annotator_predictions : DataFrame or path, optional
        Predictions per (item, annotator) (:func:`annokit.report.inputs.load_annotator_predictions`):
        the per-annotator evaluation. Items and annotators must be the votes'.
    progress : callable, optional
        Called with a short stage name after each stage (for progress bars).
    """
    step = progress or (lambda _name: None)
    models = _model_list(models, votes)
    _check_options(options.n_boot, options.confidence, options.seed)
    check_positive(options.positive, tuple(votes.labels.names))
    counts, human = human_rows(votes, slice(None))  # soft labels only: their distributions
    bins = agreement_binning(_cut_entropy(votes, counts, human, options), options.bins,
                             cut_on=options.bin_on)
    step("binning")

    records = _records(models, votes, counts)
    result = _evaluate(records, models, bins, options)
    reports, human_distribution = _model_sections(models, result, records, human, bins,
                                                  options.n_bins)
    population = population_section(votes, records, result.names, bins.groups, options,
                                    bins.notes)
    step("models")
    human_ceiling = None
    if options.ceiling:
        human_ceiling = _ceiling(votes, bins.groups, options.votes_per_half, result.names,
                                 options.n_bins, options.seed, bins.notes)
    step("ceiling")
    annotator_quality, perspectivist = _annotator_sections(
        votes, options.quality_methods, annotator_predictions, result.scale, bins.notes)
    step("annotators")
    report = Report(
        annokit_version=annokit.__version__,
        title=options.title or "annokit agreement-binned report",
        labels=list(votes.labels.names), scale=result.scale,
        positive_label=result.positive_label,
        dataset=_dataset_summary(votes, n_boot=min(int(options.n_boot), 1000),
                                 seed=int(options.seed), notes=bins.notes),
        metrics=_metric_infos(result.names), binning=bins.binning, models=reports,
        baselines={kind: {k: vals[k] for k in result.names}
                   for kind, vals in result.baselines.items()},
        comparisons=_comparisons(result),
        human_entropy=_histogram(bins.entropy, entropy_edges(counts.shape[1])),
        human_ceiling=human_ceiling, annotator_quality=annotator_quality,
        human_distribution=human_distribution, perspectivist=perspectivist,
        population=population,
        subsampling=[SubsamplingPoint(**{k: row.get(k) for k in SubsamplingPoint.model_fields})
                     for row in subsampling] if subsampling else None,
        subsampling_recommendation=_recommendation(subsampling, subsampling_recommendation),
        settings=Settings(seed=int(options.seed), n_boot=int(options.n_boot),
                          confidence=options.confidence, n_bins=options.n_bins,
                          tie_policy=result.tie_policy),
        notes=bins.notes)
    step("done")
    return report


def _cut_entropy(votes: Votes, counts: np.ndarray, human: np.ndarray,
                 options: ReportOptions) -> np.ndarray:
    """The entropy per item the agreement bins are cut on (``options.bin_on``)."""
    check_option("bin_on", options.bin_on, BIN_ON)
    if options.bin_on == "votes":
        return agreement_entropy(human)
    if is_soft_only(votes):
        raise InputError("bin_on='population' cuts the agreement bins on a posterior given the "
                         "votes; these are soft labels only (no votes): use bin_on='votes'")
    return population_entropy(counts, seed=int(options.seed))


def _evaluate(records: Mapping[str, AlignedRecords], models: Sequence[ModelPredictions],
              bins: AgreementBins, options: ReportOptions) -> EvaluationResult:
    """Every model, overall and per agreement bin, in one call of the engine; its degenerate
    input warnings become notes."""
    positive = options.positive
    with noted(bins.notes):
        return evaluate(records if len(records) > 1 else records[models[0].name],
                        options.metrics, by=bins.groups, n_boot=int(options.n_boot),
                        seed=int(options.seed), confidence=options.confidence,
                        n_bins=options.n_bins,
                        metric_options=None if positive is None else {"positive": positive})


def _model_list(models: Sequence[ModelPredictions] | Mapping[str, Any], votes: Votes
                ) -> list[ModelPredictions]:
    """The models as a non-empty list of ModelPredictions with unique names."""
    if isinstance(models, Mapping):
        models = [_as_predictions(str(k), v, votes) for k, v in models.items()]
    models = list(models)
    if not models:
        raise InputError("a report needs at least one model")
    model_names = [m.name for m in models]
    if len(set(model_names)) != len(model_names):
        raise InputError(f"model names must be unique; got {model_names}")
    return models


def _model_sections(models: Sequence[ModelPredictions], result: EvaluationResult,
                    records: Mapping[str, AlignedRecords], human: np.ndarray,
                    bins: AgreementBins, n_bins: int
                    ) -> tuple[list[ModelReport], LabelDistribution | None]:
    """Every model's section, with what depends on the scale: on ordered scales the label
    distributions (and the human one, returned), with a positive label its reliability."""
    reports = _model_reports(models, result, records, n_bins, entropy_edges(human.shape[1]))
    human_distribution = None
    if result.scale in ORDERED_SCALES:
        human_distribution = label_distribution(human, bins.index, bins.n_bins)
        for rep in reports:
            rep.label_distribution = label_distribution(records[rep.name].probs, bins.index,
                                                        bins.n_bins)
    if result.positive_label is not None:
        for rep in reports:
            rep.binary_reliability = binary_section(records[rep.name], result.positive_label,
                                                    n_bins)
    return reports, human_distribution


def _metric_infos(names: Sequence[str]) -> list[MetricInfo]:
    return [MetricInfo(name=k, summary=REGISTRY[k].summary, unit=REGISTRY[k].unit,
                       lower_is_better=REGISTRY[k].lower_is_better,
                       citation=REGISTRY[k].citation, headline=REGISTRY[k].headline)
            for k in names]


def _annotator_sections(votes: Votes, quality_methods: Sequence[str], annotator_predictions: Any,
                        scale: str, notes: list[str]) -> tuple[Any, Any]:
    """Annotator quality (votes with annotator ids) and the per-annotator evaluation."""
    annotator_quality = None
    if quality_methods and votes.has_annotators:
        annotator_quality = _annotator_quality(votes, quality_methods, notes)
    perspectivist = None
    if annotator_predictions is not None:
        source = annotator_predictions.attrs.get("source") \
            if isinstance(annotator_predictions, pd.DataFrame) \
            else Path(annotator_predictions).name
        perspectivist = perspectivist_section(votes, annotator_predictions, scale=scale,
                                              notes=notes, source=source)
    return annotator_quality, perspectivist


def _recommendation(rows: Any, given: Mapping[str, Any] | None
                    ) -> SubsamplingRecommendation | None:
    rec = given if given is not None else getattr(rows, "recommendation", None)
    if rec is None:
        return None
    if hasattr(rec, "to_dict"):
        rec = rec.to_dict()
    return SubsamplingRecommendation(
        **{k: rec.get(k) for k in SubsamplingRecommendation.model_fields if k in rec})


def _annotator_quality(votes: Votes, methods: Sequence[str],
                       notes: list[str]) -> AnnotatorQuality:
    """Scores and flags of every annotator under each method (thresholds: the quality defaults)."""
    from annokit.quality import DEFAULT_THRESHOLDS, annotator_scores

    with noted(notes, "annotator quality: "):
        scores = {m: annotator_scores(votes, m, rng=0) for m in methods}
    thresholds = {m: float(DEFAULT_THRESHOLDS[m]) for m in methods}
    flagged = {m: np.nan_to_num(scores[m], nan=np.inf) < thresholds[m] for m in methods}
    first = scores[methods[0]]
    order = np.lexsort((np.arange(first.size), np.nan_to_num(first, nan=np.inf)))
    per = votes.votes_per_annotator()
    _, annotator_ids = votes.annotator_codes("annotator quality")
    influence = alpha_influence(votes)
    without, change = influence["alpha_without"].to_numpy(), influence["alpha_change"].to_numpy()
    rows = [AnnotatorRow(annotator=str(annotator_ids[a]), n_votes=int(per[a]),
                         scores={m: float(scores[m][a]) for m in methods},
                         flagged={m: bool(flagged[m][a]) for m in methods},
                         alpha_without=finite_or_none(without[a]), alpha_change=finite_or_none(change[a]))
            for a in order]
    return AnnotatorQuality(methods=list(methods), thresholds=thresholds,
                            n_annotators=int(first.size),
                            n_flagged={m: int(flagged[m].sum()) for m in methods}, annotators=rows,
                            alpha=finite_or_none(without[0] - change[0]) if len(rows) else None,
                            pairs=_annotator_pairs(votes))


#: The report's pair matrix shows at most this many annotators (those with the most votes).
MAX_PAIR_ANNOTATORS = 60


def _annotator_pairs(votes: Votes, min_shared: int = 10) -> AnnotatorPairs | None:
    """Cohen's kappa of the pairs among the annotators with the most votes, clustered."""
    pairs = annotator_pairs(votes, min_shared=min_shared)
    if pairs.empty:
        return None
    per = pd.Series(votes.votes_per_annotator(), index=np.asarray(votes.annotator_ids).astype(str))
    top = set(per.sort_values(ascending=False, kind="stable").index[:MAX_PAIR_ANNOTATORS])
    shown = pairs[pairs["annotator_1"].isin(top) & pairs["annotator_2"].isin(top)]
    if shown.empty:
        return None
    mat = pair_matrix(shown)
    return AnnotatorPairs(min_shared=min_shared, weights=str(pairs["weights"].iloc[0]),
                          n_pairs=len(pairs), n_left_out=int(pairs.attrs["n_left_out"]),
                          annotators=[str(a) for a in mat.index],
                          kappa=[[finite_or_none(x) for x in row] for row in mat.to_numpy()])


def _ceiling(votes: Votes, groups: pd.Categorical, votes_per_half: int | None,
             names: Sequence[str], n_bins: int, seed: int,
             notes: list[str]) -> HumanCeiling | None:
    """The split-half ceiling of :func:`annokit.metrics.ceiling.split_half_ceiling` on the report's bins."""
    if votes_per_half is not None and (isinstance(votes_per_half, bool) or votes_per_half < 1):
        raise InvalidValueError(f"votes_per_half must be >= 1; got {votes_per_half}")
    if is_soft_only(votes):
        notes.append("no human ceiling: soft labels only (no votes to split into halves)")
        return None
    per_item = votes.votes_per_item()
    k = default_votes_per_half(per_item) if votes_per_half is None else int(votes_per_half)
    if k < 1 or not (per_item >= 2 * k).any():
        notes.append("no human ceiling: too few votes per item for two disjoint halves")
        return None
    # the split's own stream (the second child of the seed), so adding a model changes nothing
    split_rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(2)[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)  # skipped items: noted below
        c = split_half_ceiling(votes, k, metrics=names, by=groups, n_bins=n_bins, rng=split_rng)
    k = c.votes_per_half
    if c.n_short:
        notes.append(f"human ceiling leaves out {c.n_short} item(s) with fewer than {2 * k} "
                     f"votes (two halves of {k})")

    def cell(b: int, ref: Any, half: Any) -> BinCeiling:
        return BinCeiling(bin=b, n=ref.n_items, vs_reference={k: ref.metrics[k] for k in names},
                          vs_half={k: half.metrics[k] for k in names})

    ref_groups, half_groups = c.vs_reference.groups or [], c.vs_half.groups or []
    return HumanCeiling(
        votes_per_half=k, n_items=c.n_items, n_skipped=c.n_short,
        method=(f"disjoint random halves H1, H2 of {k} votes per item "
                "(annokit.metrics.ceiling.split_half_ceiling; Baan et al. 2022 use 20 of 100); "
                "H1's vote shares evaluated like a model against all votes and against H2; "
                "tied majorities resolved to the first label"),
        per_bin=[cell(b, r, h) for b, (r, h)
                 in enumerate(zip(ref_groups, half_groups, strict=True))],
        overall=cell(-1, c.vs_reference, c.vs_half))
