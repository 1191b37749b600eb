"""Write a report directory atomically: report.json, report.html, report.md, figures/.

Everything is rendered into a temporary directory next to the target and
moved into place with :func:`os.replace` at the end, so a failed run leaves
either the previous report or nothing, never a half-written one.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from annokit.errors import AnnokitError
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
    AnnokitError
        If ``out`` is a file, or an existing directory that is not an annokit report.
    """
    out = Path(out)
    if out.exists():
        if not out.is_dir():
            raise AnnokitError(f"--out {out} exists and is not a directory")
        if any(out.iterdir()) and not (out / "report.json").exists():
            raise AnnokitError(f"--out {out} is a non-empty directory without report.json; "
                               "refusing to replace it (choose a new or empty directory)")
    parent = out.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=parent))
    try:
        figdir = tmp / "figures"
        figdir.mkdir()
        svgs = report_figures(report, fmt="svg")
        links = {}
        for key, svg in svgs.items():
            (figdir / f"{key}.svg").write_text(svg, encoding="utf-8")
            links[key] = f"figures/{key}.svg"
        if png:
            for key, data in report_figures(report, fmt="png").items():
                (figdir / f"{key}.png").write_bytes(data)
                links[key] = f"figures/{key}.png"
        (tmp / "report.json").write_text(dump_json(report), encoding="utf-8")
        (tmp / "report.md").write_text(render_markdown(report, figures=links), encoding="utf-8")
        (tmp / "report.html").write_text(render_html(report, svgs), encoding="utf-8")
        os.chmod(tmp, 0o755)
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=parent))
            os.replace(out, old / "report")
            try:
                os.replace(tmp, out)
            except BaseException:
                os.replace(old / "report", out)
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out
