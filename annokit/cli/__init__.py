"""The ``annokit`` command line: a thin click layer over the library.

One command per stage, each in its own module (``annokit/cli/<name>.py``),
imported only when that command runs so ``annokit --help`` stays fast.

Errors are converted once, here, at the edge (:meth:`_Group.invoke`): an
:class:`~annokit.errors.AnnokitError` or an operating-system error (a missing
file, a full disk) becomes ``Error: ...`` on one line of stderr and exit status
1; usage errors (bad options) exit with 2 (click); any other exception is a bug
or an unforeseen case and becomes a short message with the hint to rerun with
``annokit --debug`` for the traceback (exit status 3). Library warnings are
printed as one ``Warning: ...`` line each, without source paths.
"""

from __future__ import annotations

import errno
import importlib
import importlib.util
import os
import sys
import warnings

import click

from annokit.cli._common import echo_warning, error_message, one_line
from annokit.errors import AnnokitError

__all__ = ["COMMANDS", "EXIT_CODES", "main"]

#: Exit status -> meaning (also in ``annokit --help``).
EXIT_CODES = {
    0: "success",
    1: "error in the input, the data or the environment (a one-line 'Error: ...' on stderr)",
    2: "usage error: an unknown, missing, invalid or conflicting option",
    3: "internal error (rerun with --debug for the traceback and please report it)",
}

_EPILOG = ("Exit status: " + "; ".join(f"{code} {text}" for code, text in EXIT_CODES.items())
           + ". Run 'annokit --debug COMMAND ...' to see the traceback of an unexpected error.")

#: command name -> (module, function, one-line help). The help is repeated here so
#: that ``annokit --help`` lists commands without importing them.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "demo": ("annokit.cli.demo", "demo", "Run the main job on a built-in synthetic dataset."),
    "stats": ("annokit.cli.stats", "stats",
              "Dataset statistics: votes, entropy, ties, majority change, agreement."),
    "evaluate": ("annokit.cli.evaluate", "evaluate",
                 "Calibration of model predictions against human label distributions."),
    "subsample": ("annokit.cli.subsample", "subsample",
                  "How many annotations are enough: subsampling curves and a recommendation."),
    "annotators": ("annokit.cli.quality", "annotators",
                   "Annotator quality scores, flagged annotators marked."),
    "filter": ("annokit.cli.quality", "filter_cmd",
               "Remove low-quality annotators, writing the votes and an audit."),
    "aggregate": ("annokit.cli.quality", "aggregate",
                  "Aggregate votes per item: majority, weighted majority, Dawid-Skene, MACE."),
    "plan": ("annokit.cli.plan", "plan",
             "Where to spend the next votes: extra votes per item for a goal, in rounds."),
    "report": ("annokit.cli.report", "report",
               "The agreement-binned analysis report (HTML, Markdown, JSON)."),
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
        debug = bool(ctx.params.get("debug"))
        with warnings.catch_warnings():
            if not debug:
                warnings.showwarning = _show_warning
            try:
                return super().invoke(ctx)
            except (click.exceptions.Exit, click.ClickException, click.Abort):
                raise
            except Exception as exc:
                if debug:
                    raise
                if (isinstance(exc, OSError) and exc.errno in _STDOUT_ERRNOS
                        and getattr(exc, "filename", None) is None):
                    _stdout_failed(exc)  # files go through annokit.io.atomic: this is stdout
                message, status = _error_line(exc)
                click.echo(f"Error: {message}", err=True)
                sys.exit(status)


def _error_line(exc: Exception) -> tuple[str, int]:
    """The one line printed for an error and the exit status: 1 for input, data or
    environment errors, 3 for anything unexpected (an annokit defect)."""
    if isinstance(exc, AnnokitError):
        return error_message(exc), 1
    if isinstance(exc, (OSError, MemoryError, RecursionError)):
        return _describe(exc), 1
    return (f"unexpected {type(exc).__name__}: {one_line(exc)[:300]} "
            "(rerun with 'annokit --debug ...' for the traceback)"), 3


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


def _describe(exc: BaseException) -> str:
    """One line for an environment error: what failed and on which file."""
    if isinstance(exc, MemoryError):
        return "out of memory; use a smaller input or smaller option values"
    if isinstance(exc, RecursionError):
        return "input nested too deeply to process"
    reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    filename = getattr(exc, "filename", None)
    where = f": {filename}" if filename else ""
    return one_line(f"{reason}{where}")


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """``warnings.showwarning`` for the CLI: one line, no source path."""
    echo_warning(message)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]},
             epilog=_EPILOG)
@click.option("--debug", is_flag=True, help="Show the full traceback of an error and warnings "
                                            "with their source.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars on stderr (they are shown "
                                                  "only on a terminal, for work over ~2 s).")
@click.version_option(package_name="annokit")
def main(debug: bool, quiet: bool) -> None:
    """annokit: datasets with many annotators per item.

    Prepare multi-annotator datasets, evaluate models against the distribution
    of human judgements, and decide how many annotations are enough.
    """
    if quiet:
        from annokit.core.progress import reset_progress, set_progress

        token = set_progress(False)  # for this command only (a caller's process goes on)
        click.get_current_context().call_on_close(lambda: reset_progress(token))
