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
