"""The report's tables as plain rows of strings, shared by the HTML and Markdown renderers."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from annokit.report.model import Interval, MetricInfo, Report

__all__ = ["Table", "direction", "fmt_interval", "fmt_number", "metric_header", "report_tables"]


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


def fmt_number(value: Any, digits: int = 3) -> str:
    """``0.123`` style; ``-`` for missing values.

    Examples
    --------
    >>> fmt_number(0.12345), fmt_number(None), fmt_number(12)
    ('0.123', '-', '12')
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
        return f"{value:.{digits}f}"
    return str(value)


def fmt_interval(iv: Interval, digits: int = 3) -> str:
    """``estimate [low, high]``, or the estimate alone without an interval."""
    if iv.low is None or iv.high is None:
        return fmt_number(iv.estimate, digits)
    return (f"{fmt_number(iv.estimate, digits)} [{fmt_number(iv.low, digits)}, "
            f"{fmt_number(iv.high, digits)}]")


def _flatten(data: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key in sorted(data):
        value = data[key]
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out += _flatten(value, f"{name}.")
        elif isinstance(value, list) and len(value) > 12:
            out.append((name, f"[{len(value)} values]"))
        else:
            out.append((name, value))
    return out


def _metric_rows(report: Report, cells) -> list[list[str]]:
    """One row per reported metric: header, unit, then ``cells(name)``."""
    return [[metric_header(info), info.unit] + cells(info.name) for info in report.metrics]


def report_tables(report: Report) -> list[Table]:
    """All tables, in page order; metric rows follow the registry (``report.metrics``)."""
    tables = [Table(
        id="table-dataset", title="Dataset", header=["statistic", "value"],
        rows=[[k, fmt_number(v, 4) if not isinstance(v, list) else ", ".join(map(str, v))]
              for k, v in _flatten(report.dataset)])]
    b = report.binning
    tables.append(Table(
        id="table-bins", title="Agreement bins",
        header=["bin", "human entropy range (bits)", "items", "mean entropy (bits)"],
        rows=[[str(i), f"[{b.edges[i]:.3f}, {b.edges[i + 1]:.3f}{']' if i == len(b.counts) - 1 else ')'}",
               str(n), fmt_number(b.mean_entropy[i])] for i, n in enumerate(b.counts)],
        caption=("Equal-count bins cut at human-entropy quantiles (Nie et al. 2020)"
                 if b.method == "quantile" else "User-given bin edges")))
    settings = report.settings
    conf = round(settings.confidence * 100)
    boot = (f"estimate [{conf}% percentile interval, {settings.n_boot} Poisson-bootstrap "
            f"replicates of items]" if settings.n_boot else "no bootstrap")
    baselines = list(report.baselines)
    temperature = [["temperature T", ""] + [fmt_number(m.temperature, 2) for m in report.models]
                   + [""] * len(baselines)]
    tables.append(Table(
        id="table-global", title="Global metrics",
        header=["metric", "unit"] + [m.name for m in report.models] + baselines,
        rows=temperature + _metric_rows(report, lambda k: [
            fmt_interval(m.metrics[k]) for m in report.models]
            + [fmt_number(report.baselines[b].get(k)) for b in baselines]),
        caption=(f"Models: {boot}. Baselines on the same items: chance (uniform) and oracle (the "
                 f"human distribution). Hard labels: the majority (ties: {settings.tie_policy} "
                 f"tied label); binned metrics with {settings.n_bins} equal-width confidence "
                 "bins. ↓ lower is better, ↑ higher is better, →0 ideal 0.")))
    tables.append(Table(
        id="table-metrics", title="Metrics", header=["metric", "unit", "definition", "reference"],
        rows=[[metric_header(i), i.unit, i.summary, i.citation] for i in report.metrics],
        caption="From the annokit metric registry (annokit.metrics.registry.REGISTRY)."))
    for i, m in enumerate(report.models):
        tables.append(Table(
            id=f"table-bins-model-{i}", title=f"Per agreement bin: {m.name}",
            header=["metric", "unit"] + [f"{lab} (n={row.n})" for lab, row
                                         in zip(report.binning.labels, m.per_bin)],
            rows=_metric_rows(report, lambda k, m=m: [fmt_interval(row.metrics[k])
                                                      for row in m.per_bin]),
            caption=f"Columns: agreement bins (human entropy, bits); {boot}."))
    if report.human_ceiling is not None:
        hc = report.human_ceiling
        tables.append(Table(
            id="table-ceiling", title="Human ceiling (split-half)",
            header=["metric", "unit"] + [f"{lab} (n={c.n})" for lab, c
                                         in zip(report.binning.labels, hc.per_bin)]
            + [f"all (n={hc.overall.n})", "H1 vs H2, all"],
            rows=_metric_rows(report, lambda k: [fmt_number(c.vs_reference.get(k))
                                                 for c in hc.per_bin]
                              + [fmt_number(hc.overall.vs_reference.get(k)),
                                 fmt_number(hc.overall.vs_half.get(k))]),
            caption=hc.method + "; every column but the last: H1 against all votes."))
    if report.comparisons:
        pairs = list(dict.fromkeys((c.model_a, c.model_b) for c in report.comparisons))
        cells = {(c.model_a, c.model_b, c.metric): c for c in report.comparisons}

        def diff(k: str) -> list[str]:
            out = []
            for a, b in pairs:
                c = cells.get((a, b, k))
                out.append("-" if c is None else fmt_interval(c.difference)
                           + ("" if c.p_value is None else f" p={fmt_number(c.p_value)}"))
            return out

        tables.append(Table(
            id="table-comparisons", title="Differences from the first model (paired bootstrap)",
            header=["metric", "unit"] + [f"{a} − {b}" for a, b in pairs],
            rows=_metric_rows(report, diff),
            caption="Differences on the same bootstrap replicates of items; p is the two-sided "
                    "share of replicates on the other side of zero."))
    aq = report.annotator_quality
    if aq is not None:
        shown = [r for r in aq.annotators if any(r.flagged.values())]
        shown = shown or aq.annotators[:10]
        tables.append(Table(
            id="table-annotators", title="Annotator quality",
            header=["annotator", "votes"] + [f"{m} score" for m in aq.methods]
            + [f"flagged by {m}" for m in aq.methods],
            rows=[[r.annotator, str(r.n_votes)] + [fmt_number(r.scores[m]) for m in aq.methods]
                  + ["yes" if r.flagged[m] else "" for m in aq.methods] for r in shown],
            caption=(f"{len(shown)} of {aq.n_annotators} annotators shown (flagged by any method, "
                     "else the lowest scores); flagged: "
                     + ", ".join(f"{m} {aq.n_flagged[m]} (score < {aq.thresholds[m]:g})"
                                 for m in aq.methods)
                     + ". Scores from annokit.quality.annotator_scores; higher is better.")))
    if report.subsampling:
        tables.append(Table(
            id="table-subsampling", title="How many annotations are enough",
            header=["k", "mean TVD", "low", "high"],
            rows=[[str(p.k), fmt_number(p.tvd_mean), fmt_number(p.tvd_low),
                   fmt_number(p.tvd_high)] for p in report.subsampling]))
    return tables
