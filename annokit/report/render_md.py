"""``report.md``: the report's tables in GitHub-flavoured Markdown, figures linked as files.

Everything in a cell, title, caption or note is plain text and is escaped here
(:func:`md_escape`): no label, title, file or model name from the data can add
Markdown or raw HTML to the page.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from annokit.core.soft_labels import ENTROPY_UNIT
from annokit.report.captions import figure_texts
from annokit.report.model import Report
from annokit.report.summary import summary_lines
from annokit.report.tables import Table, page_sections, report_tables

__all__ = ["md_escape", "render_markdown"]

# what can start inline Markdown (CommonMark 2.4: ASCII punctuation may be backslash-escaped):
# code, emphasis, links and images (with [ escaped, "(" and "!" cannot start one), strike-
# through, a closing heading sequence, GitHub math ($) and table cells (|)
_SPECIAL = re.compile(r"([\\`*_\[\]|~#$])")
# entities, not backslashes, for HTML's own characters: every Markdown dialect decodes them
# (Python-Markdown, for one, does not treat a backslash before < as an escape)
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def md_escape(text: object) -> str:
    r"""Plain text as inline Markdown that renders as the same text.

    Line breaks and other control characters become one space; characters that
    could start emphasis, code, links, math or a table cell are
    backslash-escaped; ``&``, ``<`` and ``>`` become HTML entities.

    Examples
    --------
    >>> print(md_escape("<script>|`x`*_\nnext"))
    &lt;script&gt;\|\`x\`\*\_ next
    """
    text = _SPECIAL.sub(r"\\\1", _CONTROL.sub(" ", str(text)))
    return re.sub(r"[&<>]", lambda m: _ENTITIES[m.group()], text)


def _table(t: Table) -> str:
    lines = [f"### {md_escape(t.title)}", ""]
    if t.caption:
        lines += [f"_{md_escape(t.caption)}_", ""]
    lines.append("| " + " | ".join(md_escape(h) for h in t.header) + " |")
    lines.append("|" + "|".join("---" for _ in t.header) + "|")
    for i, row in enumerate(t.rows):
        cells = [md_escape(c) for c in row]
        if i in t.highlight and cells:
            cells[0] = f"**{cells[0]}**"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _link(path: str) -> str:
    # our own relative paths (figures/<id>.svg); angle brackets keep any character literal
    return "<" + re.sub(r"([<>\\])", r"\\\1", _CONTROL.sub("", path)) + ">"


def render_markdown(report: Report, *, figures: Mapping[str, str] | None = None) -> str:
    """The Markdown report.

    Parameters
    ----------
    report : Report
    figures : mapping of figure id to relative file path, optional
        Figures written next to the report (``figures/per-bin.svg``); linked as
        images under their number, title and caption.

    Examples
    --------
    >>> from annokit.core.votes import Votes
    >>> from annokit.report.build import build_report
    >>> rep = build_report(Votes.from_counts([[3, 1], [2, 2]], labels=["a", "b"]),
    ...                    {"m": [[0.7, 0.3], [0.5, 0.5]]}, bins=1, n_boot=0)
    >>> render_markdown(rep).splitlines()[0]
    '# annokit agreement-binned report'
    """
    meta = (f"annokit {report.annokit_version}, report schema {report.schema_version}; "
            f"models: {', '.join(m.name for m in report.models)}; labels: "
            f"{', '.join(report.labels)}; scale: {report.scale}; "
            + ("" if report.positive_label is None else
               f"positive label: {report.positive_label}; ")
            + f"seed: {report.settings.seed}. Entropy in {ENTROPY_UNIT} "
            "(natural log); metric units as the registry declares them.")
    parts = [f"# {md_escape(report.title)}", "", md_escape(meta), "", "## At a glance", ""]
    parts += [f"- {md_escape(line)}" for line in summary_lines(report)] + [""]
    if report.notes:
        parts += ["**Notes**", ""] + [f"- {md_escape(n)}" for n in report.notes] + [""]
    for _anchor, heading, tables in page_sections(report_tables(report)):
        if tables:
            parts += [f"## {heading}", ""] + [_table(t) for t in tables]
        elif figures:
            parts += ["## Figures", ""]
            for f in figure_texts(report, figures):
                parts += [f"### {md_escape(f.label)}", "",
                          f"![{md_escape(f.label)}]({_link(figures[f.key])})", "",
                          f"_{md_escape(f.caption)}_", ""]
    return "\n".join(parts).rstrip() + "\n"
