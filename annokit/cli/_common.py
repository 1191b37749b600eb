"""Options and helpers shared by several commands."""

from __future__ import annotations

import json
import math
from typing import Any

import click

FORMAT_OPTION = click.option(
    "--format", "fmt", type=click.Choice(["auto", "chaosnli", "long", "wide"]), default="auto",
    show_default=True, help="Input format of the votes file (auto sniffs the file).",
)


def _clean(obj: Any) -> Any:
    """Replace NaN/inf by None so the output is strict JSON."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def echo_json(obj: Any) -> None:
    """Print one strict-JSON object on stdout."""
    click.echo(json.dumps(_clean(obj), indent=2, sort_keys=False, allow_nan=False))
