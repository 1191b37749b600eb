"""The report model: a versioned, JSON-serialisable description of one analysis.

Building (:mod:`annokit.report.build`) fills these pydantic models from votes
and model predictions; rendering (:mod:`annokit.report.render_html`,
:mod:`annokit.report.render_md`, :func:`dump_json`) only reads them. The JSON
Schema of :class:`Report` is exported to ``annokit/report/schema.json`` and a
test keeps the two in sync (regenerate with :func:`export_schema`).

The JSON form is deterministic: keys sorted, floats written with
:data:`FLOAT_DIGITS` significant digits, NaN written as ``null``, no
timestamps and no absolute paths (sources are recorded by file name only).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from annokit.core.jsonable import jsonable

__all__ = [
    "FLOAT_DIGITS",
    "SCHEMA_PATH",
    "SCHEMA_VERSION",
    "AnnotatorQuality",
    "AnnotatorRow",
    "BinCeiling",
    "BinMetrics",
    "BinaryReliability",
    "Binning",
    "Histogram",
    "HumanCeiling",
    "Interval",
    "PlanItem",
    "PopulationModel",
    "PopulationSection",
    "PlanSection",
    "LabelDistribution",
    "MetricInfo",
    "ModelReport",
    "PairwiseDifference",
    "PerAnnotatorRow",
    "PerspectivistReport",
    "Reliability",
    "Report",
    "Settings",
    "SubsamplingPoint",
    "SubsamplingRecommendation",
    "WorstAnnotator",
    "dump_json",
    "export_schema",
    "report_schema",
]

#: Bump the minor part for added optional fields, the major part for anything else.
SCHEMA_VERSION: Final = "3.3"

#: Significant digits of every float written to report.json.
FLOAT_DIGITS = 10

SCHEMA_PATH = Path(__file__).with_name("schema.json")

Number = float | None


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


class Interval(_Model):
    """A point estimate with a bootstrap interval (``low``/``high`` null without bootstrap)."""

    estimate: Number
    low: Number = None
    high: Number = None
    method: str | None = Field(default=None, description="how the interval was built "
                               "(annokit.metrics.registry.INTERVAL_METHODS: 'percentile', "
                               "'normal': the means, estimate -/+ z x bootstrap standard error, "
                               "'bounds': for the population value of a binned metric, which "
                               "the plug-in estimate may lie outside; 'none'); null without "
                               "bootstrap")
    note: str | None = Field(default=None, description="why there is no interval, or why "
                             "the estimate is not shown")


class MetricInfo(_Model):
    """A reported metric as the registry declares it (:data:`annokit.metrics.registry.REGISTRY`)."""

    name: str = Field(description="registry name, the key in every metrics mapping of the report")
    summary: str
    unit: str
    lower_is_better: bool | None = Field(description="null: a signed quantity whose ideal is 0")
    citation: str
    headline: bool = Field(default=False, description="shown in the report's figures "
                                                      "(registry field MetricSpec.headline)")


class Binning(_Model):
    """How items were grouped into agreement bins by their human-label entropy."""

    method: Literal["quantile", "edges"] = Field(
        description="'quantile': equal-count bins of human entropy (Nie et al. 2020); "
                    "'edges': user-given edges")
    requested_bins: int
    entropy_base: float = Field(description="logarithm base of the entropies the edges refer to")
    edges: list[float] = Field(description="n_bins + 1 increasing edges; bin b holds "
                                           "edges[b] <= H < edges[b+1] (last bin closed)")
    counts: list[int] = Field(description="items per bin")
    mean_entropy: list[Number] = Field(description="mean human entropy per bin")
    labels: list[str] = Field(description="display label of each bin")
    cut_on: Literal["votes", "population"] = Field(
        default="votes",
        description="'votes': the entropy of each item's collected votes; 'population': the "
                    "posterior mean of its population entropy (annokit.report.binning."
                    "population_entropy), which corrects the regression to the mean of a cut on "
                    "noisy vote entropies; edges and mean_entropy refer to it")


class BinMetrics(_Model):
    """One model's metrics on the items of one agreement bin (null for an empty bin)."""

    bin: int
    n: int
    metrics: dict[str, Interval] = Field(description="registry name -> estimate with a "
                                                     "bootstrap interval")


class BinCeiling(_Model):
    """Split-half human ceiling on one agreement bin (``bin`` -1: all items)."""

    bin: int
    n: int = Field(description="items of the bin with enough votes for two halves")
    vs_reference: dict[str, Number] = Field(
        description="metrics of the half-sample distribution H1 as a model of the reference "
                    "(all votes; hard label: their majority)")
    vs_half: dict[str, Number] = Field(
        description="metrics of H1 as a model of the disjoint half H2 (hard label: H2's majority)")


class HumanCeiling(_Model):
    """What a 'realistic' classifier reaches: disjoint half samples of the votes (Baan et al. 2022)."""

    votes_per_half: int = Field(description="votes drawn per half (k)")
    n_items: int
    n_skipped: int = Field(description="items with fewer than 2k votes (no split possible)")
    method: str
    per_bin: list[BinCeiling]
    overall: BinCeiling


class Histogram(_Model):
    """Counts of a per-item quantity on fixed edges (last bin closed)."""

    edges: list[float]
    counts: list[int]


class Reliability(_Model):
    """Top-label reliability-diagram data on equal-width confidence bins (empty bins: null)."""

    edges: list[float]
    count: list[int]
    confidence: list[Number] = Field(description="mean top-label probability")
    accuracy: list[Number] = Field(description="share of items whose top label is the majority")
    soft_target: list[Number] = Field(description="mean human probability of the predicted label")


class BinaryReliability(_Model):
    """Positive-class reliability-diagram data of two-label predictions
    (:func:`annokit.metrics.binary.binary_reliability`; empty bins: null)."""

    positive_label: str = Field(description="the positive class")
    edges: list[float] = Field(description="n_bins + 1 equal-width edges of p(positive)")
    count: list[int] = Field(description="items per bin")
    mean_probability: list[Number] = Field(description="mean p(positive) of the bin")
    frequency: list[Number] = Field(description="share of the bin's items whose hard label "
                                                "(the majority) is the positive class")
    ece: Number = Field(description="ECE on p(positive) (registry metric ece_binary)")
    mce: Number = Field(description="MCE on p(positive) (registry metric mce_binary)")


class LabelDistribution(_Model):
    """Mean distribution over the labels in scale order, overall and per agreement bin."""

    overall: list[float] = Field(description="mean over items, one share per label")
    per_bin: list[list[Number]] = Field(description="the same per agreement bin "
                                                    "(an empty bin: nulls)")


class ModelReport(_Model):
    """Everything reported about one model."""

    name: str
    sources: list[str] = Field(description="prediction file names (no directories)")
    n_items: int
    temperature: Number = Field(default=None, description="temperature applied, if any")
    temperature_note: str | None = None
    metrics: dict[str, Interval] = Field(description="global metrics with bootstrap intervals")
    per_bin: list[BinMetrics]
    reliability: Reliability
    histograms: dict[str, Histogram] = Field(
        description="per-item values of each reported per-item metric that is not a rate "
                    "(registry name -> histogram on edges shared by all models)")
    entropy: Histogram = Field(description="model entropy (nats) on the human entropy's edges")
    label_distribution: LabelDistribution | None = Field(
        default=None, description="mean predicted distribution (ordered scales only)")
    binary_reliability: BinaryReliability | None = Field(
        default=None, description="positive-class reliability (two labels only)")


class PopulationModel(_Model):
    """One model's figures against the population target (``evaluate(target="population")``)."""

    name: str
    metrics: dict[str, Interval] = Field(description="global metrics against the population")
    per_bin: list[BinMetrics] = Field(description="the same per agreement bin")


class PopulationSection(_Model):
    """The population-target figures that stand beside the votes-target ones."""

    reason: str = Field(description="why they are shown (the median number of votes per item "
                                    "below the threshold, or asked for)")
    median_votes: float = Field(description="median number of votes per item")
    method: str = Field(description="how the figures are estimated")
    metrics: list[str] = Field(description="the metrics estimated against the population")
    not_computed: dict[str, str] = Field(description="reported metrics the population target "
                                                     "does not estimate, with the reason")
    models: list[PopulationModel]


class PairwiseDifference(_Model):
    """Paired-bootstrap difference ``model_a - model_b`` of one metric on the same items."""

    model_a: str
    model_b: str = Field(description="the reference: the first model")
    metric: str
    difference: Interval
    p_value: Number = Field(default=None, description="two-sided bootstrap share of resamples "
                                                      "on the other side of zero")


class SubsamplingPoint(_Model):
    """One point of the 'how many annotations are enough' curve."""

    k: int
    tvd_mean: Number
    tvd_low: Number
    tvd_high: Number
    jsd_mean: Number = None
    kl_mean: Number = None
    majority_agreement: Number = Field(default=None, description="share of items whose k-vote "
                                                                 "majority is the full majority")
    entropy_bias: Number = Field(default=None, description="mean H(k votes) - H(all votes), nats")


class SubsamplingRecommendation(_Model):
    """The smallest k whose expected TVD is below the tolerance (:func:`annokit.subsample.recommend_k`)."""

    k: int | None = Field(description="recommended votes per item; null: not reached")
    k_low: int | None = Field(default=None, description="k of the optimistic end of the interval")
    k_high: int | None = Field(default=None, description="k of the pessimistic end of the interval")
    epsilon: float = Field(description="the tolerance: expected TVD below which k suffices")
    source: str = Field(description="'observed', 'extrapolated' or 'not reached'")
    target: str = Field(description="what the TVD is measured against")
    kind: str | None = Field(default=None, description="'population' (the default target: a "
                                                       "Dirichlet-multinomial fit to the votes) "
                                                       "or 'pool' (the collected votes)")
    k_limit: int | None = Field(default=None, description="the largest k considered")
    note: str | None = Field(default=None, description="why no k is given for the target "
                                                       "asked (the pool is not extrapolated)")

    def interval_text(self) -> str:
        """The interval of k, an end not reached written as 'more than' the largest k considered."""
        def end(v: int | None) -> str:
            if v is not None:
                return str(v)
            return f"more than {self.k_limit}" if self.k_limit is not None else "not reached"

        return f"{end(self.k_low)} to {end(self.k_high)}"


class AnnotatorRow(_Model):
    """Quality scores of one annotator (higher is better) and whether each method flags them."""

    annotator: str
    n_votes: int
    scores: dict[str, Number]
    flagged: dict[str, bool]
    alpha_without: Number = Field(default=None, description="Krippendorff's alpha without this "
                                  "annotator (annokit.core.annotator_agreement.alpha_influence)")
    alpha_change: Number = Field(default=None, description="alpha_without minus alpha with "
                                 "every annotator (positive: alpha rises without them)")


class AnnotatorPairs(_Model):
    """Cohen's kappa of pairs of annotators (:func:`annokit.core.annotator_agreement.annotator_pairs`),
    as a matrix whose rows and columns are ordered so that annotators who agree stand together."""

    min_shared: int = Field(description="pairs with fewer shared items are left out")
    weights: str = Field(description="Cohen's kappa weights (none, linear or quadratic)")
    n_pairs: int
    n_left_out: int
    annotators: list[str] = Field(description="the matrix's annotators, in clustered order (at "
                                  "most the 60 with the most votes)")
    kappa: list[list[Number]] = Field(description="kappa of each pair (1 on the diagonal, null "
                                      "where the pair shares too few items)")


class AnnotatorQuality(_Model):
    """Annotator quality (:func:`annokit.quality.annotator_scores`), when annotator ids are known."""

    methods: list[str]
    thresholds: dict[str, float] = Field(description="score below the threshold -> flagged")
    n_annotators: int
    n_flagged: dict[str, int]
    annotators: list[AnnotatorRow] = Field(description="every annotator, lowest first score first")
    alpha: Number = Field(default=None, description="Krippendorff's alpha with every annotator, "
                          "at the labels' level (the reference of alpha_change)")
    pairs: AnnotatorPairs | None = None


class PerAnnotatorRow(_Model):
    """One annotator's scores against their own labels (columns that apply; others null)."""

    annotator: str
    n_pairs: int = Field(description="(item, annotator) pairs with a prediction and a vote")
    accuracy: Number
    error_rate: Number
    mean_distance: Number = Field(default=None, description="mean |v_pred - v_actual| / s "
                                                            "(ordered scales)")
    nll: Number = Field(default=None, description="mean -log p(actual), nats (distributions)")


class WorstAnnotator(_Model):
    """One of the worst annotators under a metric."""

    annotator: str
    value: Number
    n_pairs: int


class PerspectivistReport(_Model):
    """Predictions per (item, annotator) against each annotator's own label
    (:func:`annokit.metrics.perspectivist.evaluate_annotators`)."""

    source: str | None = Field(default=None, description="predictions file name (no directories)")
    scale: str
    normalizer: Number = Field(description="s of the normalised distances (null: nominal)")
    n_pairs: int
    n_items: int
    n_annotators: int
    n_unmatched_predictions: int = Field(description="predicted pairs of a known item and "
                                                     "annotator without a vote (not scored)")
    n_votes_without_prediction: int = Field(description="votes no prediction covers (not scored)")
    scores: dict[str, Number] = Field(
        description="accuracy, error_rate (pairs pooled), LeWiDi 2025 item-averaged "
                    "lewidi_error_rate and (ordered) lewidi_absolute_distance, mean_distance, "
                    "nll")
    pooled: dict[str, Number] = Field(
        description="tvd (and wasserstein / s on ordered scales) between the model's pooled "
                    "labels and the annotators' per item, item-averaged; manhattan with "
                    "distributions")
    gap: dict[str, Number] = Field(
        description="per-annotator minus pooled score (>= 0): error_rate, absolute_distance")
    over_annotators: dict[str, dict[str, Number]] = Field(
        description="per metric: mean, median, min, max and quantiles (q0.1, ...) over annotators")
    worst: dict[str, list[WorstAnnotator]] = Field(description="per metric: the worst annotators")
    histograms: dict[str, Histogram] = Field(
        description="per-annotator error_rate (and mean_distance) on [0, 1]")
    per_annotator: list[PerAnnotatorRow] = Field(description="every scored annotator")


class Settings(_Model):
    """The options the report was built with (enough to rebuild it)."""

    seed: int
    n_boot: int
    confidence: float
    n_bins: int = Field(description="equal-width confidence bins of the binned metrics")
    tie_policy: str


class PlanItem(_Model):
    """One item of the plan's list: where the next votes would go."""

    item: str
    n_votes: int = Field(description="votes so far")
    leading_label: str | None = Field(description="first in label order when tied")
    state: float = Field(description="goal majority: P(leading label is the population "
                                     "majority); goal distribution: expected TVD of the soft "
                                     "label to the population distribution")
    extra_votes: int = Field(description="votes to collect now")


class PlanSection(_Model):
    """Where the next votes would go (``report --plan-budget``; :func:`annokit.plan`)."""

    summary: dict[str, Any] = Field(description="the summary of annokit.plan (the keys of "
                                                "`annokit plan --json`)")
    items: list[PlanItem] = Field(description="the items that get the most votes (at most 20), "
                                              "most votes first")


class Report(_Model):
    """The agreement-binned analysis report (``report.json``)."""

    schema_version: Literal["3.3"] = SCHEMA_VERSION
    annokit_version: str
    title: str
    labels: list[str] = Field(description="label names in label order (scale order on ordered "
                                          "scales)")
    scale: Literal["nominal", "ordinal", "interval", "ratio"] = Field(
        default="nominal", description="level of measurement of the labels")
    positive_label: str | None = Field(
        default=None, description="positive class of ece_binary, mce_binary and the "
                                  "positive-class reliability (two labels only)")
    dataset: dict[str, Any] = Field(description="dataset summary, as `annokit stats --json`")
    metrics: list[MetricInfo] = Field(description="the reported metrics, in registry order")
    binning: Binning
    models: list[ModelReport]
    baselines: dict[str, dict[str, Number]] = Field(
        description="'chance' (uniform) and 'oracle' (the human distribution) predictors on the "
                    "same items")
    comparisons: list[PairwiseDifference] = Field(
        description="every later model against the first, paired bootstrap")
    human_entropy: Histogram = Field(description="human entropy (nats) on [0, ln n_labels]")
    human_ceiling: HumanCeiling | None = None
    subsampling: list[SubsamplingPoint] | None = None
    subsampling_recommendation: SubsamplingRecommendation | None = None
    plan: PlanSection | None = Field(default=None, description="where the next votes would go "
                                                               "(report --plan-budget)")
    annotator_quality: AnnotatorQuality | None = None
    human_distribution: LabelDistribution | None = Field(
        default=None, description="mean human vote distribution (ordered scales only)")
    perspectivist: PerspectivistReport | None = Field(
        default=None, description="per-annotator evaluation (with annotator predictions)")
    population: PopulationSection | None = Field(
        default=None, description="the population-target figures beside the votes-target ones "
                                  "(by default when the median number of votes per item is "
                                  "below 20); null otherwise")
    settings: Settings
    notes: list[str] = Field(default_factory=list,
                             description="warnings and decisions a reader should know about")


def dump_json(report: Report) -> str:
    """The canonical ``report.json`` text: sorted keys, fixed float precision, trailing newline.

    Examples
    --------
    >>> iv = Interval(estimate=1 / 3, low=float("nan"))
    >>> json.dumps(jsonable(iv.model_dump(), digits=FLOAT_DIGITS), sort_keys=True)
    '{"estimate": 0.3333333333, "high": null, "low": null, "method": null, "note": null}'
    """
    data = jsonable(report.model_dump(mode="python"), digits=FLOAT_DIGITS)
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def report_schema() -> dict[str, Any]:
    """The JSON Schema of :class:`Report` (draft 2020-12, as pydantic generates it)."""
    schema = Report.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://annokit.invalid/report-schema-{SCHEMA_VERSION}.json"
    return schema


def export_schema(path: str | Path = SCHEMA_PATH) -> Path:
    """Write :func:`report_schema` to ``path`` (default: the copy shipped in the package)."""
    from annokit.io.atomic import write_text_atomic

    return write_text_atomic(path, json.dumps(report_schema(), sort_keys=True, indent=2) + "\n")
