"""Write a report directory atomically: report.json, report.html, report.md, figures/.

Everything is rendered in memory, written into a directory next to the target
and swapped in with one rename at the end
(:func:`annokit.io.atomic.atomic_directory`), so a failed or killed run leaves
either the previous report or nothing, never a half-written one, and the
previous report is deleted only once the new one is in place.
"""

from __future__ import annotations

import os
from pathlib import Path

from annokit.errors import OutputError
from annokit.io.atomic import atomic_directory
from annokit.report.figures import report_figures
from annokit.report.model import Report, dump_json
from annokit.report.render_html import render_html
from annokit.report.render_md import render_markdown

__all__ = ["REPORT_FILES", "write_report"]

#: Files every report directory holds (figures/ in addition).
REPORT_FILES = ("report.json", "report.html", "report.md")


def write_report(report: Report, out: str | os.PathLike, *, png: bool = False) -> Path:
    """Render ``report`` into the directory ``out``, atomically.

    Parameters
    ----------
    report : Report
    out : path
        Target directory. It is created, or replaced when it holds an earlier
        report (a ``report.json``); any other existing directory is an error.
    png : bool, default False
        Also write every figure as PNG (``figures/<id>.png``); SVG is always written.

    Returns
    -------
    Path
        The report directory.

    Raises
    ------
    OutputError
        If ``out`` is a file, an existing directory that is not an annokit
        report, or cannot be written (missing or read-only parent, full disk).
    """
    out = Path(out)
    if out.exists() and out.is_dir() and any(out.iterdir()) \
            and not (out / "report.json").exists():
        raise OutputError(f"--out {out} is a non-empty directory without report.json; "
                          "refusing to replace it (choose a new or empty directory)")
    svgs = report_figures(report, fmt="svg")
    pngs = report_figures(report, fmt="png") if png else {}
    links = {key: f"figures/{key}.{'png' if key in pngs else 'svg'}" for key in svgs}
    files = {"report.json": dump_json(report),
             "report.md": render_markdown(report, figures=links),
             "report.html": render_html(report, svgs)}
    with atomic_directory(out) as tmp:
        figdir = tmp / "figures"
        figdir.mkdir()
        for key, svg in svgs.items():
            (figdir / f"{key}.svg").write_text(svg, encoding="utf-8")
        for key, data in pngs.items():
            (figdir / f"{key}.png").write_bytes(data)
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8")
    return out
