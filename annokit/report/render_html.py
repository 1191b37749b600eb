"""``report.html``: one self-contained page (inline CSS and SVG; no scripts, fonts or links out).

The page makes no network request: figures are inline SVG with text drawn as
paths, styles are in one ``<style>`` element, and there is no JavaScript. It
works from ``file://``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping

from annokit.report.model import Report
from annokit.report.render_md import figure_title
from annokit.report.tables import Table, report_tables

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
table { border-collapse: collapse; margin: 0.6rem 0 0.3rem; font-size: 0.8rem; }
caption, figcaption { white-space: normal; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.45rem; text-align: right;
         white-space: nowrap; }
th { background: #f2f2f2; }
td:first-child, th:first-child { text-align: left; }
caption { caption-side: bottom; text-align: left; color: #555; font-size: 0.8rem;
          padding-top: 0.3rem; }
.table-wrap { overflow-x: auto; }
figure { margin: 1rem 0 1.6rem; }
figure svg { width: 100%; height: auto; display: block; }
figcaption { font-weight: 600; margin-bottom: 0.3rem; }
ul.notes li { color: #6b4a00; }
span.ci { color: #555; font-size: 0.75rem; }
"""


_INTERVAL = re.compile(r"^(\S+) (\[[^\]]+\].*)$")


def _cell(text: str) -> str:
    """Escape; put a bootstrap interval under its estimate so wide tables stay readable."""
    m = _INTERVAL.match(text)
    if m:
        return f'{html.escape(m.group(1))}<br><span class="ci">{html.escape(m.group(2))}</span>'
    return html.escape(text)


def _table(t: Table) -> str:
    head = "".join(f"<th scope=\"col\">{html.escape(h)}</th>" for h in t.header)
    body = "\n".join("<tr>" + "".join(f"<td>{_cell(c)}</td>" for c in row) + "</tr>"
                     for row in t.rows)
    cap = f"<caption>{html.escape(t.caption)}</caption>" if t.caption else ""
    return (f'<section class="table-section"><h3>{html.escape(t.title)}</h3>'
            f'<div class="table-wrap"><table id="{t.id}">{cap}<thead><tr>{head}</tr></thead>'
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
    by_id = {t.id: t for t in tables}
    title = html.escape(report.title)
    models = ", ".join(html.escape(m.name) for m in report.models)
    nav = ['<li><a href="#summary">Summary</a></li>', '<li><a href="#bins">Agreement bins</a></li>',
           '<li><a href="#figures">Figures</a></li>', '<li><a href="#details">Per-bin tables</a></li>',
           '<li><a href="#dataset">Dataset</a></li>']
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{title}</title>", f"<style>{_CSS}</style>", "</head>", "<body>",
        f"<header><h1>{title}</h1>",
        (f'<p class="meta">annokit {html.escape(report.annokit_version)} &middot; report schema '
         f"{html.escape(report.schema_version)} &middot; models: {models} &middot; labels: "
         f"{html.escape(', '.join(report.labels))} &middot; seed: {report.settings.seed}</p>"),
        "<nav><ul>" + "".join(nav) + "</ul></nav></header>", "<main>",
    ]
    if report.notes:
        parts.append('<ul class="notes">' + "".join(f"<li>{html.escape(n)}</li>"
                                                  for n in report.notes) + "</ul>")
    parts.append('<h2 id="summary">Summary</h2>')
    parts += [_table(by_id[k]) for k in ("table-global", "table-metrics")]
    parts.append('<h2 id="figures">Figures</h2>')
    order = sorted(figures, key=lambda k: (k != "per-bin", k.startswith("subsampling")))
    for key in order:
        parts.append(f'<figure id="figure-{html.escape(key)}" class="report-figure">'
                     f"<figcaption>{html.escape(figure_title(key, report))}</figcaption>"
                     f"{figures[key]}</figure>")
    parts.append('<h2 id="bins">Agreement bins</h2>')
    parts += [_table(by_id[k]) for k in ("table-bins", "table-ceiling") if k in by_id]
    parts.append('<h2 id="details">Per-bin tables and comparisons</h2>')
    shown = {"table-global", "table-metrics", "table-dataset", "table-bins", "table-ceiling"}
    parts += [_table(t) for t in tables if t.id not in shown]
    parts.append('<h2 id="dataset">Dataset</h2>')
    parts.append(_table(by_id["table-dataset"]))
    parts += ["</main>", "</body>", "</html>"]
    return "\n".join(parts) + "\n"
