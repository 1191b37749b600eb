"""``report.html``: one self-contained page (inline CSS and SVG; no scripts, fonts or links out).

The page makes no network request: figures are inline SVG with text drawn as
paths, styles are in one ``<style>`` element, and there is no JavaScript. It
works from ``file://``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping

from annokit.core.soft_labels import ENTROPY_UNIT
from annokit.report.captions import figure_texts
from annokit.report.model import Report
from annokit.report.summary import summary_lines
from annokit.report.tables import Table, page_sections, report_tables

__all__ = ["render_html"]

_CSS = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
       margin: 0 auto; max-width: 1320px; padding: 1rem 1.5rem 3rem; color: #1a1a1a;
       line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h3 { font-size: 1.05rem; margin: 1.2rem 0 0.2rem; }
h2 { font-size: 1.25rem; margin-top: 1.6rem; border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; }
p.meta { color: #555; margin-top: 0; }
nav ul { display: flex; gap: 1.5rem; list-style: none; padding-left: 0; margin: 0.4rem 0; }
table { border-collapse: collapse; margin: 0.6rem 0 0.3rem; font-size: 0.82rem; }
caption, figcaption { white-space: normal; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.45rem; text-align: right;
         white-space: nowrap; }
th { background: #f2f2f2; }
td:first-child, th:first-child { text-align: left; }
caption { caption-side: bottom; text-align: left; color: #555; font-size: 0.8rem;
          padding-top: 0.3rem; }
.table-wrap { overflow-x: auto; }
figure { margin: 1rem 0 2rem; }
figure svg { width: 100%; height: auto; display: block; }
figcaption { margin-bottom: 0.4rem; max-width: 60rem; font-size: 0.88rem; color: #333; }
figcaption b { display: block; font-size: 1rem; color: #1a1a1a; margin-bottom: 0.15rem; }
#table-metrics td, #table-dataset td, #table-recommendation td { text-align: left;
         white-space: normal; }
#table-metrics td:nth-child(3) { min-width: 24rem; }
#table-metrics td:nth-child(4) { font-size: 0.72rem; color: #555; min-width: 18rem; }
#table-metrics td:first-child { white-space: nowrap; }
#table-metrics th, #table-dataset th, #table-recommendation th,
table.with-unit th:nth-child(2) { text-align: left; }
td strong { font-weight: 650; }
tr.headline td:first-child { font-weight: 650; }
details { margin: 0.4rem 0; } summary { cursor: pointer; font-weight: 600; }
table.with-unit td:nth-child(2) { text-align: left; color: #444; }
ul.notes li { color: #6b4a00; }
span.ci { color: #555; font-size: 0.75rem; }
"""


_INTERVAL = re.compile(r"^(\S+) (\[[^\]]+\].*)$")
_SIGNIFICANT = re.compile(r"^[+-][0-9.]+\*")


def _cell(text: str) -> str:
    """Escape; put a bootstrap interval under its estimate so wide tables stay readable."""
    m = _INTERVAL.match(text)
    if m:
        return f'{html.escape(m.group(1))}<br><span class="ci">{html.escape(m.group(2))}</span>'
    if _SIGNIFICANT.match(text):
        return f"<strong>{html.escape(text)}</strong>"
    return html.escape(text)


def _table(t: Table) -> str:
    head = "".join(f"<th scope=\"col\">{html.escape(h)}</th>" for h in t.header)
    body = "\n".join(("<tr class=\"headline\">" if i in t.highlight else "<tr>")
                     + "".join(f"<td>{_cell(c)}</td>" for c in row) + "</tr>"
                     for i, row in enumerate(t.rows))
    cap = f"<caption>{html.escape(t.caption)}</caption>" if t.caption else ""
    cls = ' class="with-unit"' if t.header[1:2] == ["unit"] else ""
    return (f'<section class="table-section"><h3>{html.escape(t.title)}</h3>'
            f'<div class="table-wrap"><table id="{t.id}"{cls}>{cap}<thead><tr>{head}</tr></thead>'
            f"<tbody>\n{body}\n</tbody></table></div></section>")


def render_html(report: Report, figures: Mapping[str, str]) -> str:
    """The page, with ``figures`` (id -> SVG text, from ``report_figures``) inlined.

    Every table is a ``<table id="table-...">`` and every figure a
    ``<figure id="figure-..." class="report-figure">`` holding one ``<svg>``.

    Examples
    --------
    >>> from annokit.core.votes import Votes
    >>> from annokit.report.build import build_report
    >>> rep = build_report(Votes.from_counts([[3, 1], [2, 2]], labels=["a", "b"]),
    ...                    {"m": [[0.7, 0.3], [0.5, 0.5]]}, bins=1, n_boot=0)
    >>> page = render_html(rep, {})
    >>> page.startswith("<!DOCTYPE html>"), "<script" in page, "http://" in page.split("<svg")[0]
    (True, False, False)
    """
    tables = report_tables(report)
    title = html.escape(report.title)
    models = ", ".join(html.escape(m.name) for m in report.models)
    shown = [(a, h, ts) for a, h, ts in page_sections(tables) if ts or figures]
    nav = [f'<li><a href="#{a}">{html.escape(h.split(" and ")[0])}</a></li>'
           for a, h, _ in shown]
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{title}</title>", f"<style>{_CSS}</style>", "</head>", "<body>",
        f"<header><h1>{title}</h1>",
        (f'<p class="meta">annokit {html.escape(report.annokit_version)} &middot; report schema '
         f"{html.escape(report.schema_version)} &middot; models: {models} &middot; labels: "
         f"{html.escape(', '.join(report.labels))} &middot; scale: {html.escape(report.scale)}"
         + ("" if report.positive_label is None else
            f" &middot; positive label: {html.escape(report.positive_label)}")
         + f" &middot; seed: {report.settings.seed}<br>"
         f"Entropy in {ENTROPY_UNIT} (natural log); metric units as the metric "
         "registry declares them.</p>"),
        "<nav><ul>" + "".join(nav) + "</ul></nav></header>", "<main>",
        '<section id="at-a-glance"><h2>At a glance</h2><ul>'
        + "".join(f"<li>{html.escape(line)}</li>" for line in summary_lines(report))
        + "</ul></section>",
    ]
    if report.notes:
        parts.append('<ul class="notes">' + "".join(f"<li>{html.escape(n)}</li>"
                                                  for n in report.notes) + "</ul>")
    for anchor, heading, present in shown:
        parts.append(f'<h2 id="{anchor}">{heading}</h2>')
        if anchor == "figures":
            parts += [f'<figure id="figure-{html.escape(f.key)}" class="report-figure">'
                      f"<figcaption><b>{html.escape(f.label)}</b>{html.escape(f.caption)}"
                      f"</figcaption>{figures[f.key]}</figure>"
                      for f in figure_texts(report, figures)]
        elif anchor == "details":  # long: folded, one per model (no script needed)
            parts += [f"<details><summary>{html.escape(t.title)} ({len(t.rows)} metrics "
                      f"&times; {len(t.header) - 2} agreement bins)</summary>{_table(t)}"
                      "</details>" for t in present]
        else:
            parts += [_table(t) for t in present]
    parts += ["</main>", "</body>", "</html>"]
    return "\n".join(parts) + "\n"
