"""Options and helpers shared by several commands."""

from __future__ import annotations

import json
from typing import Any

import click

from annokit.core.jsonable import jsonable

FORMAT_OPTION = click.option(
    "--format", "fmt", type=click.Choice(["auto", "chaosnli", "long", "wide"]), default="auto",
    show_default=True, help="Input format of the votes file (auto sniffs the file).",
)


def echo_json(obj: Any) -> None:
    """Print one strict-JSON object on stdout."""
    click.echo(json.dumps(jsonable(obj), indent=2, sort_keys=False, allow_nan=False))


_READ_KEY = "annokit.read_options"


def _store(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Keep a column option for :func:`read_options` (the options are not passed to the command)."""
    options = ctx.meta.setdefault(_READ_KEY, {"columns": {}, "no_header": False, "missing": ()})
    if param.name == "no_header":
        options["no_header"] = bool(value)
    elif param.name == "missing":
        words = [w for v in value for w in v.split(",")]
        if any(not w.strip() for w in words):
            raise click.BadParameter(f"expected comma-separated non-blank words, e.g. NA,n/a; got "
                                     f"{','.join(value)!r}", ctx=ctx, param=param)
        options["missing"] = tuple(w.strip() for w in words)
    elif value is not None:
        if not value.strip():
            raise click.BadParameter("expected a column name; got an empty one", ctx=ctx, param=param)
        options["columns"][param.name.removesuffix("_col")] = value.strip()
    return value


def column_options(command: Any) -> Any:
    """The options that say how a votes file is laid out, shared by every command reading votes:
    ``--item-col``, ``--annotator-col``, ``--label-col``, ``--gold-col``, ``--no-header`` and
    ``--missing``. The command gets them from :func:`read_options`, passed on to
    :func:`annokit.io.read_votes`."""
    options = [
        click.option("--item-col", "item_col", metavar="NAME", expose_value=False, callback=_store,
                     help="Column of item ids (default: detected, e.g. item, question, id)."),
        click.option("--annotator-col", "annotator_col", metavar="NAME", expose_value=False,
                     callback=_store,
                     help="Column of annotator ids in a long table (default: detected, e.g. "
                          "annotator, worker)."),
        click.option("--label-col", "label_col", metavar="NAME", expose_value=False, callback=_store,
                     help="Column of labels in a long table (default: detected, e.g. label, "
                          "answer)."),
        click.option("--gold-col", "gold_col", metavar="NAME", expose_value=False, callback=_store,
                     help="Column of gold labels (default: detected, e.g. gold, truth; a blank "
                          "cell means no gold)."),
        click.option("--no-header", "no_header", is_flag=True, expose_value=False, callback=_store,
                     help="The CSV/TSV votes file has no header line: its columns are item, "
                          "annotator, label (2 columns: item, label; 4: ... gold)."),
        click.option("--missing", "missing", metavar="WORD[,WORD]", multiple=True,
                     expose_value=False, callback=_store,
                     help="Cell texts that mean no value, besides an empty cell (e.g. NA,n/a). "
                          "By default NA, nan, None and null are labels as written."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def read_options() -> dict[str, Any]:
    """The keyword arguments of :func:`annokit.io.read_votes` given by :func:`column_options`."""
    ctx = click.get_current_context()
    options = ctx.meta.get(_READ_KEY, {"columns": {}, "no_header": False, "missing": ()})
    return {"columns": dict(options["columns"]) or None, "no_header": options["no_header"],
            "missing": options["missing"]}
