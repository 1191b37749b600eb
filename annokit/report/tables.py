"""The report's tables as plain rows of strings, shared by the HTML and Markdown renderers."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from annokit.core.soft_labels import ENTROPY_UNIT
from annokit.report.model import (
    Interval,
    LabelDistribution,
    MetricInfo,
    PairwiseDifference,
    PerspectivistReport,
    Report,
)
from annokit.report.summary import dataset_tables

__all__ = [
    "Table",
    "dataset_rows",
    "direction",
    "fmt_interval",
    "fmt_number",
    "humanize",
    "metric_header",
    "page_sections",
    "report_tables",
    "significance",
]


def direction(info: MetricInfo) -> str:
    """``↓`` lower is better, ``↑`` higher is better, ``→0`` a signed quantity whose ideal is 0."""
    if info.lower_is_better is None:
        return "→0"
    return "↓" if info.lower_is_better else "↑"


def metric_header(info: MetricInfo) -> str:
    """The registry name with its direction, e.g. ``ece ↓``."""
    return f"{info.name} {direction(info)}"


@dataclass
class Table:
    """One table: a stable id (HTML anchor), title, header and rows of display strings."""

    id: str
    title: str
    header: list[str]
    rows: list[list[str]]
    caption: str = ""
    highlight: frozenset[int] = frozenset()  # rows a renderer may emphasise (headline metrics)


def fmt_number(value: Any, digits: int = 3) -> str:
    """``0.123`` style; ``-`` for missing values; a value that rounds to zero has no sign.

    Examples
    --------
    >>> fmt_number(0.12345), fmt_number(None), fmt_number(12), fmt_number(-0.0001)
    ('0.123', '-', '12', '0.000')
    """
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        text = f"{value:.{digits}f}"
        return text[1:] if text.startswith("-") and float(text) == 0 else text
    return str(value)


def fmt_interval(iv: Interval, digits: int = 3) -> str:
    """``estimate [low, high]``, or the estimate alone without an interval (``(no interval)``
    when the metric has none, ``†`` when a plug-in lies outside its population interval)."""
    if iv.estimate is None and iv.note:
        return "too few items"
    if iv.method == "none":
        return f"{fmt_number(iv.estimate, digits)} (no interval)"
    if iv.low is None and iv.note and iv.note.startswith("no interval"):
        return f"{fmt_number(iv.estimate, digits)} (too few items for an interval)"
    if iv.low is None or iv.high is None:
        return fmt_number(iv.estimate, digits)
    mark = ("†" if iv.method == "bounds" and iv.estimate is not None
            and not iv.low <= iv.estimate <= iv.high else "")
    return (f"{fmt_number(iv.estimate, digits)} [{fmt_number(iv.low, digits)}, "
            f"{fmt_number(iv.high, digits)}]{mark}")


def humanize(key: str) -> str:
    """A data key as words: ``votes_per_item`` -> ``votes per item``."""
    return str(key).replace("_", " ")


def _value(value: Any) -> str:
    """One dataset statistic as text; a group (mapping) as ``name value; name value``."""
    if isinstance(value, dict):
        if {"value", "ci_low", "ci_high"} <= set(value):
            out = fmt_interval(Interval(estimate=value["value"], low=value["ci_low"],
                                        high=value["ci_high"]), 4)
            extra = []
            if value.get("confidence") is not None and value.get("n_boot"):
                extra.append(f"{100 * value['confidence']:g}% interval, {value['n_boot']} "
                             "bootstrap replicates")
            extra += [f"{humanize(k)} {_value(v)}" for k, v in sorted(value.items())
                      if k not in {"value", "ci_low", "ci_high", "confidence", "n_boot"}]
            return out + (f" ({'; '.join(extra)})" if extra else "")
        return "; ".join(f"{humanize(k)} {_value(v)}" for k, v in sorted(value.items()))
    if isinstance(value, list):
        if len(value) > 12:
            return f"{len(value)} values"
        return ", ".join(_value(v) for v in value)
    if isinstance(value, float) and math.isfinite(value):
        return f"{value:.4g}"
    return fmt_number(value, 4)


def dataset_rows(data: dict[str, Any]) -> list[list[str]]:
    """One row per statistic or group of statistics, named in words (no dotted keys).

    Examples
    --------
    >>> dataset_rows({"n_items": 3, "votes_per_item": {"min": 2, "max": 5}})
    [['n items', '3'], ['votes per item', 'max 5; min 2']]
    """
    return [[humanize(k), _value(data[k])] for k in sorted(data)]


def significance(c: PairwiseDifference, info: MetricInfo | None,
                 values: tuple[Any, Any] | None = None) -> str:
    """A comparison cell: the difference with ``*`` when its interval excludes 0, and whether
    that is better or worse for a metric with a direction; for a signed metric whose ideal is 0
    (``lower_is_better`` None), ``values`` (the two models' estimates) say which is closer to 0.

    Examples
    --------
    >>> d = PairwiseDifference(model_a="b", model_b="a", metric="m",
    ...                        difference=Interval(estimate=-0.1, low=-0.2, high=-0.05))
    >>> significance(d, MetricInfo(name="m", summary="", unit="", lower_is_better=True,
    ...                            citation=""))
    '-0.100* (better)'
    """
    iv = c.difference
    if iv.estimate is None or (isinstance(iv.estimate, float) and math.isnan(iv.estimate)):
        return "-"
    text = f"{iv.estimate:+.3f}"
    if iv.low is None or iv.high is None or not (iv.low > 0 or iv.high < 0):
        return text
    text += "*"
    if info is not None and info.lower_is_better is not None:
        better = (iv.estimate < 0) == info.lower_is_better
        text += " (better)" if better else " (worse)"
    elif info is not None and values is not None and None not in values:
        text += (" (better: closer to 0)" if abs(values[0]) < abs(values[1])
                 else " (worse: further from 0)")
    return text


def _metric_rows(report: Report, cells) -> list[list[str]]:
    """One row per reported metric: header, unit, then ``cells(name)``."""
    return [[metric_header(info), info.unit] + cells(info.name) for info in report.metrics]


def report_tables(report: Report) -> list[Table]:
    """All tables, in page order; metric rows follow the registry (``report.metrics``)."""
    tables = [Table(**t) for t in dataset_tables(report)]
    tables.append(_bins_table(report))
    boot = _bootstrap_text(report)
    tables += _global_tables(report, boot)
    if report.population is not None:
        tables.append(_population_table(report, boot))
    for i in range(len(report.models)):
        tables.append(_model_bins_table(report, i, boot))
        if report.population is not None:
            tables.append(_population_bins_table(report, i, boot))
    if report.human_ceiling is not None:
        tables.append(_ceiling_table(report))
    if report.comparisons:
        tables.append(_comparisons_table(report))
    if report.annotator_quality is not None:
        tables.append(_annotators_table(report))
    if report.human_distribution is not None:
        tables.append(_distribution_table(report, report.human_distribution))
    if report.perspectivist is not None:
        tables += _perspectivist_tables(report.perspectivist)
    if report.subsampling:
        tables += _subsampling_tables(report)
    if report.plan is not None:
        tables += _plan_tables(report)
    return tables


def _bins_table(report: Report) -> Table:
    b = report.binning
    return Table(
        id="table-bins", title="Agreement bins",
        header=["bin", f"human entropy range ({ENTROPY_UNIT})", "items",
                f"mean entropy ({ENTROPY_UNIT})"],
        rows=[[str(i), f"[{b.edges[i]:.3f}, {b.edges[i + 1]:.3f}{']' if i == len(b.counts) - 1 else ')'}",
               str(n), fmt_number(b.mean_entropy[i])] for i, n in enumerate(b.counts)],
        caption=("Equal-count bins cut at human-entropy quantiles (Nie et al. 2020)"
                 if b.method == "quantile" else "User-given bin edges") + _cut_text(b.cut_on))


def _cut_text(cut_on: str) -> str:
    """What the bins were cut on, and what a cut on noisy entropies does."""
    if cut_on == "population":
        return (", cut on the posterior mean of each item's population entropy (the population "
                "target's prior fitted to all items' votes), which corrects the regression to "
                "the mean of a cut on the entropy of a few votes (docs: How much to trust a "
                "number).")
    return (", cut on the entropy of each item's votes. With few votes per item that entropy "
            "is noisy: the lowest-entropy bin holds items less agreed in the population than "
            "their votes show, and the bins differ less in population agreement than their "
            "ranges say (regression to the mean); report --bin-on population cuts on the "
            "population estimate instead.")


def _bootstrap_text(report: Report) -> str:
    """How the intervals of the metric tables were built, for their captions."""
    settings = report.settings
    conf = round(settings.confidence * 100)
    return (f"estimate [{conf}% interval, {settings.n_boot} Poisson-bootstrap replicates of "
            "items, by the method of each metric's registry entry: for the means the estimate "
            "plus or minus z bootstrap standard errors; for the binned ECEs an interval for "
            "the population value from two bound statistics, which the upward-biased plug-in "
            "estimate can lie outside (†); none for the MCEs]" if settings.n_boot
            else "no bootstrap")


def _global_tables(report: Report, boot: str) -> list[Table]:
    """The global metrics of every model beside the baselines, and the metrics' definitions."""
    settings = report.settings
    baselines = list(report.baselines)
    temperature = [["temperature T", ""] + [fmt_number(m.temperature, 2) for m in report.models]
                   + [""] * len(baselines)]
    return [Table(
        id="table-global", title="Global metrics",
        header=["metric", "unit"] + [m.name for m in report.models] + baselines,
        rows=temperature + _metric_rows(report, lambda k: [
            fmt_interval(m.metrics[k]) for m in report.models]
            + [fmt_number(report.baselines[b].get(k)) for b in baselines]),
        caption=(f"Models: {boot}. Baselines on the same items: chance (uniform) and oracle (the "
                 f"human distribution). Hard labels: the majority (ties: {settings.tie_policy} "
                 f"tied label); binned metrics with {settings.n_bins} equal-width confidence "
                 "bins. ↓ lower is better, ↑ higher is better, →0 ideal 0. Units as the metric "
                 "registry declares them (nats: natural logarithm; rate and probability: 0 to "
                 f"1); entropies of votes elsewhere in the report are in {ENTROPY_UNIT} too. The "
                 "chance accuracy is 1 / number of labels (the uniform distribution's argmax is a "
                 "tie of every label). In bold: the "
                 f"headline metrics of the figures. Label scale: {report.scale}"
                 + ("" if report.positive_label is None else
                    f"; positive label of the binary metrics (ece_binary, mce_binary): "
                    f"{report.positive_label}") + "."),
        highlight=frozenset(1 + i for i, info in enumerate(report.metrics) if info.headline)),
        Table(
        id="table-metrics", title="Metrics", header=["metric", "unit", "definition", "reference"],
        rows=[[metric_header(i), i.unit, i.summary, i.citation] for i in report.metrics],
        caption="From the annokit metric registry (annokit.metrics.registry.REGISTRY).")]


def _model_bins_table(report: Report, i: int, boot: str) -> Table:
    m = report.models[i]
    return Table(
        id=f"table-bins-model-{i}", title=f"Per agreement bin: {m.name}",
        header=["metric", "unit"] + [f"{lab} (n={row.n})" for lab, row
                                     in zip(report.binning.labels, m.per_bin, strict=True)],
        rows=_metric_rows(report, lambda k: [fmt_interval(row.metrics[k]) for row in m.per_bin]),
        caption=f"Columns: agreement bins (human entropy, {ENTROPY_UNIT}); {boot}. Too few "
                f"items: a binned calibration figure of a bin with fewer than 20 items per "
                f"confidence bin is not shown, and a bin of fewer than 20 items has no "
                f"intervals (report.json says why).")


def _population_table(report: Report, boot: str) -> Table:
    """The population-target figures beside the votes-target ones, two columns per model."""
    pop = report.population
    assert pop is not None
    infos = [i for i in report.metrics if i.name in pop.metrics]
    by_name = {m.name: m for m in pop.models}
    header = ["metric", "unit"]
    for m in report.models:
        header += [f"{m.name}: votes", f"{m.name}: population"]
    return Table(
        id="table-population", title="Against the votes and against the population",
        header=header,
        rows=[[metric_header(info), info.unit]
              + [cell for m in report.models
                 for cell in (fmt_interval(m.metrics[info.name]),
                              fmt_interval(by_name[m.name].metrics[info.name]))]
              for info in infos],
        caption=(f"Shown because {pop.reason}. Votes: each metric against the collected "
                 "votes (the published value, as in the global table); population: against "
                 "the distribution infinitely many annotators would give, by "
                 f"{pop.method}; {boot}. Not estimated against the population: "
                 + (", ".join(pop.not_computed) or "none") + " (report.json says why)."),
        highlight=frozenset(1 + i for i, info in enumerate(infos) if info.headline))


def _population_bins_table(report: Report, i: int, boot: str) -> Table:
    pop = report.population
    assert pop is not None
    m = next(p for p in pop.models if p.name == report.models[i].name)
    infos = [info for info in report.metrics if info.name in pop.metrics]
    return Table(
        id=f"table-bins-model-{i}-population",
        title=f"Per agreement bin, against the population: {m.name}",
        header=["metric", "unit"] + [f"{lab} (n={row.n})" for lab, row
                                     in zip(report.binning.labels, m.per_bin, strict=True)],
        rows=[[metric_header(info), info.unit]
              + [fmt_interval(row.metrics[info.name]) for row in m.per_bin] for info in infos],
        caption=(f"As the table before, against each item's population distribution "
                 f"(target population) instead of its votes; {boot}."))


def _ceiling_table(report: Report) -> Table:
    hc = report.human_ceiling
    assert hc is not None
    return Table(
        id="table-ceiling", title="Human ceiling (split-half)",
        header=["metric", "unit"] + [f"{lab} (n={c.n})" for lab, c
                                     in zip(report.binning.labels, hc.per_bin, strict=True)]
        + [f"all (n={hc.overall.n})", "H1 vs H2, all"],
        rows=_metric_rows(report, lambda k: [fmt_number(c.vs_reference.get(k))
                                             for c in hc.per_bin]
                          + [fmt_number(hc.overall.vs_reference.get(k)),
                             fmt_number(hc.overall.vs_half.get(k))]),
        caption=hc.method + "; every column but the last: H1 against all votes.")


def _comparisons_table(report: Report) -> Table:
    settings = report.settings
    conf = round(settings.confidence * 100)
    pairs = list(dict.fromkeys((c.model_a, c.model_b) for c in report.comparisons))
    cells = {(c.model_a, c.model_b, c.metric): c for c in report.comparisons}
    infos = {i.name: i for i in report.metrics}
    estimate = {(m.name, k): v.estimate for m in report.models for k, v in m.metrics.items()}

    def diff(k: str) -> list[str]:
        return ["-" if (a, b, k) not in cells else significance(
            cells[a, b, k], infos.get(k), (estimate.get((a, k)), estimate.get((b, k))))
            for a, b in pairs]

    reference = pairs[0][1]
    return Table(
        id="table-comparisons", title=f"Differences from the first model, {reference}",
        header=["metric", "unit"] + [a for a, _ in pairs],
        rows=_metric_rows(report, diff),
        caption=(f"Each column: that model minus {reference}, on the same bootstrap "
                 f"replicates of items (paired). * its {conf}% interval excludes 0 "
                 f"(two-sided p < {1 - settings.confidence:.2g}); better/worse follow the "
                 "metric's direction (ideal 0: closer to 0 is better). Intervals and "
                 "p-values: report.json, comparisons."))


def _annotators_table(report: Report) -> Table:
    aq = report.annotator_quality
    assert aq is not None
    shown = [r for r in aq.annotators if any(r.flagged.values())]
    shown = shown or aq.annotators[:10]
    return Table(
        id="table-annotators", title="Annotator quality",
        header=["annotator", "votes"] + [f"{m} score" for m in aq.methods]
        + [f"flagged by {m}" for m in aq.methods] + ["alpha without", "alpha change"],
        rows=[[r.annotator, str(r.n_votes)] + [fmt_number(r.scores[m]) for m in aq.methods]
              + ["yes" if r.flagged[m] else "" for m in aq.methods]
              + [fmt_number(r.alpha_without), fmt_number(r.alpha_change)] for r in shown],
        caption=(f"{len(shown)} of {aq.n_annotators} annotators shown (flagged by any method, "
                 "else the lowest scores); flagged: "
                 + ", ".join(f"{m} {aq.n_flagged[m]} (score < {aq.thresholds[m]:g})"
                             for m in aq.methods)
                 + ". Scores from annokit.quality.annotator_scores; higher is better. "
                 f"Alpha without: Krippendorff's alpha ({report.scale}) without the "
                 f"annotator, against {fmt_number(aq.alpha)} with everyone (change > 0: "
                 "agreement rises without them; annokit.core.annotator_agreement)."
                 + _influence_note(aq)))


def _influence_note(aq: Any) -> str:
    """The annotators whose removal raises alpha most, when that is not among those shown."""
    rises = sorted((r for r in aq.annotators if r.alpha_change is not None),
                   key=lambda r: -r.alpha_change)[:3]
    if not rises or rises[0].alpha_change <= 0:
        return ""
    return (" Largest rises without one annotator: "
            + ", ".join(f"{r.annotator} ({fmt_number(r.alpha_change)})" for r in rises
                        if r.alpha_change > 0) + ".")


def _distribution_table(report: Report, hd: LabelDistribution) -> Table:
    models = [(m.name, m.label_distribution) for m in report.models
              if m.label_distribution is not None]
    return Table(
        id="table-label-distributions", title="Label distributions (all items)",
        header=["label", "human votes"] + [name for name, _ in models],
        rows=[[lab, fmt_number(hd.overall[j])]
              + [fmt_number(dist.overall[j]) for _, dist in models]
              for j, lab in enumerate(report.labels)],
        caption=(f"Rows in scale order ({report.scale}). Mean over items of the human vote "
                 "distribution and of each model's predicted distribution; per agreement bin: "
                 "the label-distribution figure and report.json (human_distribution, "
                 "models[].label_distribution)."))


def _perspectivist_tables(p: PerspectivistReport) -> list[Table]:
    sc, po, gap = p.scores, p.pooled, p.gap
    rows = [["error rate ↓, per annotator, item-averaged (LeWiDi 2025 ER)",
             fmt_number(sc.get("lewidi_error_rate")), fmt_number(po.get("tvd")),
             fmt_number(gap.get("error_rate"))]]
    if "lewidi_absolute_distance" in sc:
        rows.append(["normalised distance ↓, item-averaged (LeWiDi 2025 AD)",
                     fmt_number(sc.get("lewidi_absolute_distance")),
                     fmt_number(po.get("wasserstein")), fmt_number(gap.get("absolute_distance"))])
    rows.append(["error rate ↓, all pairs", fmt_number(sc.get("error_rate")), "-", "-"])
    rows.append(["accuracy ↑, all pairs", fmt_number(sc.get("accuracy")), "-", "-"])
    if "mean_distance" in sc:
        rows.append(["normalised distance ↓, all pairs", fmt_number(sc["mean_distance"]), "-", "-"])
    if "nll" in sc:
        rows.append(["NLL ↓ (nats), all pairs", fmt_number(sc["nll"]), "-", "-"])
    if "manhattan" in po:
        rows.append(["Manhattan ↓, mean predicted vs human distribution", "-",
                     fmt_number(po["manhattan"]), "-"])
    norm = "" if p.normalizer is None else f"; distances divided by s = {p.normalizer:g}"
    source = f" from {p.source}" if p.source else ""
    out = [Table(
        id="table-perspectivist", title="Per-annotator against pooled scores",
        header=["score", "per annotator", "pooled", "gap (per annotator - pooled)"],
        rows=rows,
        caption=(f"Predictions per (item, annotator){source}: {p.n_pairs} scored pairs, "
                 f"{p.n_items} items, {p.n_annotators} annotators ({p.scale} scale{norm}); "
                 f"{p.n_unmatched_predictions} predicted pairs without a vote and "
                 f"{p.n_votes_without_prediction} votes without a prediction are not scored. "
                 "Pooled: the model's predicted labels pooled per item against the annotators' "
                 "(TVD; Wasserstein / s on ordered scales), item-averaged, a lower bound of the "
                 "per-annotator score; the gap: errors from giving the right labels to the wrong "
                 "annotators (annokit.metrics.perspectivist.evaluate_annotators)."))]
    qs = sorted({k for v in p.over_annotators.values() for k in v if k.startswith("q")},
                key=lambda k: float(k[1:]))
    cols = ["mean", "min"] + [q for q in qs if float(q[1:]) < 0.5] + ["median"] \
        + [q for q in qs if float(q[1:]) >= 0.5] + ["max"]
    out.append(Table(
        id="table-annotator-quantiles", title="Distribution over annotators",
        header=["per-annotator value", *cols],
        rows=[[k] + [fmt_number(v.get(c)) for c in cols] for k, v in p.over_annotators.items()],
        caption=("Each annotator's score over their own scored items (accuracy ↑; error rate, "
                 "normalised distance, NLL ↓), summarised over annotators; q0.1 is the 10% "
                 "quantile. Every annotator: report.json, perspectivist.per_annotator.")))
    out.append(Table(
        id="table-worst-annotators", title="Worst annotators",
        header=["per-annotator value", "annotator", "value", "scored pairs"],
        rows=[[k, w.annotator, fmt_number(w.value), str(w.n_pairs)]
              for k, ws in p.worst.items() if k != "accuracy" for w in ws],
        caption="Per value, the annotators the model fits worst (ties: annotator id order)."))
    return out


def _subsampling_tables(report: Report) -> list[Table]:
    out = []
    rec = report.subsampling_recommendation
    if rec is not None:
        k = "not reached" if rec.k is None else str(rec.k)
        interval = "-" if rec.k is None else rec.interval_text()
        out.append(Table(
            id="table-recommendation", title="Recommended number of votes per item",
            header=["quantity", "value"],
            rows=[["tolerance (expected TVD below)", f"{rec.epsilon:g}"],
                  ["recommended k (votes per item)", k],
                  ["interval of k", interval], ["read off", rec.source],
                  ["target", rec.kind or "-"], ["TVD measured against", rec.target]],
            caption=("The smallest k whose expected total variation distance to the target "
                     "is below the tolerance (annokit.subsample.recommend_k); the interval: "
                     "the same for the optimistic and pessimistic ends of the TVD interval.")))
    pts = report.subsampling or []
    out.append(Table(
        id="table-subsampling", title="How many annotations are enough",
        header=["k (votes per item)", "mean TVD", "TVD interval", "mean JSD",
                "majority agreement (rate)"],
        rows=[[str(p.k), fmt_number(p.tvd_mean),
               f"[{fmt_number(p.tvd_low)}, {fmt_number(p.tvd_high)}]", fmt_number(p.jsd_mean),
               fmt_number(p.majority_agreement)] for p in pts],
        caption=("Distance between the vote distribution of k random votes and that of all "
                 "votes of an item, averaged over items and repetitions (TVD: probability; "
                 "JSD: Jensen-Shannon distance, sqrt(nats)); majority agreement: share of "
                 "items whose k-vote majority is the all-vote majority.")))
    return out


def _plan_tables(report: Report) -> list[Table]:
    plan = report.plan
    assert plan is not None
    info = plan.summary
    majority = info["goal"] == "majority"
    state = ("P(leading label is the population majority)" if majority
             else "expected TVD to the population distribution")
    rule = (f"{state} >= {info['confidence']:g}" if majority else f"{state} <= {info['epsilon']:g}")
    expected = ("expected share of items whose leading label is the population majority"
                if majority else "expected mean TVD of the soft labels")
    rows = [["goal", str(info["goal"])], ["settled when", rule],
            ["items settled now", f"{info['n_settled']} of {info['n_items']}"],
            ["budget (votes)", str(info["budget"])],
            ["votes planned", f"{info['votes_planned']} for {info['n_items_planned']} items"],
            [f"{expected}, now", fmt_number(info["expected_now"], 4)],
            [f"{expected}, after the planned votes", fmt_number(info["expected_after"], 4)],
            ["unsettled items still short of the goal after them", str(info["n_cannot_settle"])]]
    out = [Table(id="table-plan", title="Where the next votes would go", header=["quantity", "value"],
                 rows=rows,
                 caption=("annokit.plan: a Dirichlet(counts + 1) posterior of each item's "
                          "population label distribution; the budget goes to the unsettled "
                          "items where more votes raise the goal's expected value most (the "
                          "same plan as annokit plan --budget with the same options)."))]
    if plan.items:
        out.append(Table(
            id="table-plan-items", title="Items that get the most votes",
            header=["item", "votes so far", "leading label", state, "extra votes"],
            rows=[[p.item, str(p.n_votes), p.leading_label or "-", fmt_number(p.state, 3),
                   str(p.extra_votes)] for p in plan.items],
            caption="At most 20 items, most votes first (ties: item order)."))
    return out


def page_sections(tables: list[Table]) -> list[tuple[str, str, list[Table]]]:
    """The page's sections in reading order, shared by the HTML and Markdown pages: (anchor,
    heading, tables), sections without tables left out; ``figures`` (no tables) always listed.
    """
    by_id = {t.id: t for t in tables}
    sections = [("summary", "Summary", ["table-global", "table-population", "table-comparisons"]),
                ("figures", "Figures", []),
                ("bins", "Agreement bins and the human ceiling", ["table-bins", "table-ceiling"]),
                ("details", "Per-bin tables", [t.id for t in tables
                                               if t.id.startswith("table-bins-model-")]),
                ("subsampling", "How many annotations are enough",
                 ["table-recommendation", "table-subsampling"]),
                ("plan", "Where the next votes would go", ["table-plan", "table-plan-items"]),
                ("labels", "Label distributions", ["table-label-distributions"]),
                ("perspectivist", "Per-annotator evaluation",
                 ["table-perspectivist", "table-annotator-quantiles", "table-worst-annotators"]),
                ("annotators", "Annotators", ["table-annotators"]),
                ("metrics", "Metric definitions", ["table-metrics"]),
                ("dataset", "Dataset", ["table-dataset", "table-dataset-labels"])]
    out = [(a, h, [by_id[i] for i in ids if i in by_id]) for a, h, ids in sections]
    return [(a, h, ts) for a, h, ts in out if ts or a == "figures"]
