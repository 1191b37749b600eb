"""The report's tables as plain rows of strings, shared by the HTML and Markdown renderers."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from annokit.report.model import METRIC_KEYS, Interval, Report

__all__ = ["METRIC_NAMES", "Table", "fmt_interval", "fmt_number", "report_tables"]

#: Column headers of the metrics (direction of "better" in brackets).
METRIC_NAMES = {
    "accuracy": "Accuracy ↑",
    "ece": "ECE ↓",
    "smece": "SMECE ↓",
    "dist_ce": "DistCE ↓",
    "ent_ce": "|EntCE| ↓",
    "ent_ce_signed": "EntCE (signed)",
    "jsd": "JSD ↓",
    "kl": "KL ↓",
    "rank_cs": "RankCS ↑",
}


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


def report_tables(report: Report) -> list[Table]:
    """All tables, in page order."""
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
    conf = round(report.settings.confidence * 100)
    boot = report.settings.n_bootstrap
    tables.append(Table(
        id="table-global", title="Global metrics",
        header=["model", "T"] + [METRIC_NAMES[k] for k in METRIC_KEYS],
        rows=[[m.name, fmt_number(m.temperature, 2)]
              + [fmt_interval(m.metrics[k]) for k in METRIC_KEYS] for m in report.models],
        caption=(f"Estimate [{conf}% percentile bootstrap interval, {boot} resamples of items]"
                 if boot else "No bootstrap")
        + "; accuracy and ECE against the majority label, the rest against the human "
          f"distribution; ECE/SMECE with {report.settings.n_ece_bins} equal-width bins; "
          "|EntCE| and KL in nats."))
    per_bin_keys = ["accuracy", "ece", "smece", "dist_ce", "ent_ce", "ent_ce_signed", "jsd",
                    "kl", "rank_cs"]
    for i, m in enumerate(report.models):
        tables.append(Table(
            id=f"table-bins-model-{i}", title=f"Per agreement bin: {m.name}",
            header=["bin", "entropy (bits)", "n"] + [METRIC_NAMES[k] for k in per_bin_keys],
            rows=[[str(row.bin), report.binning.labels[row.bin], str(row.n)]
                  + [fmt_number(getattr(row, k)) for k in per_bin_keys] for row in m.per_bin]))
    if report.human_ceiling is not None:
        hc = report.human_ceiling
        rows = [[str(c.bin), report.binning.labels[c.bin], str(c.n), fmt_number(c.accuracy),
                 fmt_number(c.dist_ce), fmt_number(c.jsd), fmt_number(c.half_vs_half_dist_ce)]
                for c in hc.per_bin]
        o = hc.overall
        rows.append(["all", "", str(o.n), fmt_number(o.accuracy), fmt_number(o.dist_ce),
                     fmt_number(o.jsd), fmt_number(o.half_vs_half_dist_ce)])
        tables.append(Table(
            id="table-ceiling", title="Human ceiling (split-half)",
            header=["bin", "entropy (bits)", "n", "H1 majority = full majority",
                    "DistCE(H1, all)", "JSD(H1, all)", "DistCE(H1, H2)"],
            rows=rows, caption=hc.method))
    if report.comparisons:
        tables.append(Table(
            id="table-comparisons", title="Pairwise differences (paired bootstrap)",
            header=["model A", "model B", "metric", "A - B", "p"],
            rows=[[c.model_a, c.model_b, METRIC_NAMES.get(c.metric, c.metric),
                   fmt_interval(c.difference), fmt_number(c.p_value)]
                  for c in report.comparisons],
            caption="Differences on the same bootstrap resamples of items; p is the two-sided "
                    "share of resamples on the other side of zero."))
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
