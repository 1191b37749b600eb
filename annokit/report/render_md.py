"""``report.md``: the report's tables in GitHub-flavoured Markdown, figures linked as files."""

from __future__ import annotations

from collections.abc import Mapping

from annokit.report.model import Report
from annokit.report.tables import Table, report_tables

__all__ = ["FIGURE_TITLES", "render_markdown"]

FIGURE_TITLES = {
    "error-histograms": "Per-item DistCE and EntCE (Baan et al. 2022, Fig. 1)",
    "entropy-histograms": "Human vs model entropy",
    "per-bin": "Metrics across agreement bins (Nie et al. 2020, Figs. 4-5)",
    "subsampling": "How many annotations are enough",
}


def figure_title(key: str, report: Report) -> str:
    """Display title of a figure id from :func:`~annokit.report.plots.report_figures`."""
    if key.startswith("reliability-"):
        name = report.models[int(key.split("-", 1)[1])].name
        return f"Reliability diagrams: {name} (hard vs majority, soft vs human probability)"
    return FIGURE_TITLES.get(key, key)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(t: Table) -> str:
    lines = [f"### {t.title}", ""]
    if t.caption:
        lines += [f"_{_cell(t.caption)}_", ""]
    lines.append("| " + " | ".join(_cell(h) for h in t.header) + " |")
    lines.append("|" + "|".join("---" for _ in t.header) + "|")
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in t.rows]
    return "\n".join(lines) + "\n"


def render_markdown(report: Report, *, figures: Mapping[str, str] | None = None) -> str:
    """The Markdown report.

    Parameters
    ----------
    report : Report
    figures : mapping of figure id to relative file path, optional
        Figures written next to the report (``figures/per-bin.svg``); linked as images.

    Examples
    --------
    >>> from annokit.core.votes import Votes
    >>> from annokit.report.build import build_report
    >>> rep = build_report(Votes.from_counts([[3, 1], [2, 2]], labels=["a", "b"]),
    ...                    {"m": [[0.7, 0.3], [0.5, 0.5]]}, bins=1, n_boot=0)
    >>> render_markdown(rep).splitlines()[0]
    '# annokit agreement-binned report'
    """
    parts = [f"# {report.title}", "",
             (f"annokit {report.annokit_version}, report schema {report.schema_version}; "
              f"models: {', '.join(m.name for m in report.models)}; labels: "
              f"{', '.join(report.labels)}; seed: {report.settings.seed}."), ""]
    if report.notes:
        parts += ["**Notes**", ""] + [f"- {n}" for n in report.notes] + [""]
    for t in report_tables(report):
        parts.append(_table(t))
    if figures:
        parts += ["## Figures", ""]
        for key, path in figures.items():
            parts += [f"### {figure_title(key, report)}", "", f"![{key}]({path})", ""]
    return "\n".join(parts).rstrip() + "\n"
