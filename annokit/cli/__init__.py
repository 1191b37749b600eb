"""The ``annokit`` command line: a thin click layer over the library.

One command per stage, each in its own module (``annokit/cli/<name>.py``),
imported only when that command runs so ``annokit --help`` stays fast. Every
:class:`~annokit.errors.AnnokitError` is turned into a one-line message on
stderr and exit status 1 here, at the edge; usage errors exit with 2 (click).
"""

from __future__ import annotations

import errno
import importlib
import importlib.util
import os
import sys

import click

from annokit.errors import AnnokitError

__all__ = ["COMMANDS", "main"]

#: command name -> (module, function, one-line help). The help is repeated here so
#: that ``annokit --help`` lists commands without importing them.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "demo": ("annokit.cli.demo", "demo", "Run the main job on a built-in synthetic dataset."),
    "stats": ("annokit.cli.stats", "stats", "Dataset statistics: votes, entropy, ties, majority change, agreement."),
    "evaluate": ("annokit.cli.evaluate", "evaluate", "Calibration of model predictions against human label distributions."),
    "subsample": ("annokit.cli.subsample", "subsample", "How many annotations are enough: subsampling curves and a recommendation."),
    "annotators": ("annokit.cli.quality", "annotators", "Annotator quality scores, flagged annotators marked."),
    "filter": ("annokit.cli.quality", "filter_cmd", "Remove low-quality annotators, writing the votes and an audit."),
    "aggregate": ("annokit.cli.quality", "aggregate", "Aggregate votes per item: majority, weighted majority, Dawid-Skene, MACE."),
    "report": ("annokit.cli.report", "report", "The agreement-binned analysis report (HTML, Markdown, JSON)."),
}


def _available() -> dict[str, tuple[str, str, str]]:
    return {name: spec for name, spec in COMMANDS.items()
            if importlib.util.find_spec(spec[0]) is not None}


class _Group(click.Group):
    """Lazily imports commands and converts AnnokitError into a clean exit."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(_available())

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        spec = _available().get(name)
        if spec is None:
            return None
        module = importlib.import_module(spec[0])
        return getattr(module, spec[1])

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, spec[2]) for name, spec in _available().items()]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except AnnokitError as exc:
            from annokit.io.escape import printable

            message = printable(" ".join(str(exc).split()))
            click.echo(f"Error: {message}", err=True)
            sys.exit(1)
        except OSError as exc:  # files go through annokit.io.atomic: this is stdout
            if exc.errno not in _STDOUT_ERRNOS:
                raise
            _stdout_failed(exc)


#: Errors of a write to standard output (closed pipe, full disk, quota, I/O error).
_STDOUT_ERRNOS = {errno.EPIPE, errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG}


def _stdout_failed(exc: OSError) -> None:
    """One line on stderr for a failed write to stdout, then exit 1 without a second error."""
    from annokit.io.atomic import output_error

    try:  # what is still buffered cannot be written either: drop it at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    message = str(output_error("", exc, what="cannot write to standard output")).replace(" :", ":")
    click.echo(f"Error: {message}", err=True)
    sys.exit(1)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="annokit")
def main() -> None:
    """annokit: datasets with many annotators per item.

    Prepare multi-annotator datasets, evaluate models against the distribution
    of human judgements, and decide how many annotations are enough.
    """
