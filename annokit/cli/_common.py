"""Options and helpers shared by several commands.

Inputs are named the same way on every command: ``--votes PATH`` (a positional
``VOTES`` path is a shorthand for it on every command that reads votes),
``--predictions``, ``--gold``. Every numeric option has a declared range that
click checks before any work starts (:data:`SEED`, :func:`finite`); sizes whose
memory grows with the option's value are estimated and refused above
:data:`MEMORY_LIMIT` (:func:`check_memory`). Text printed to a terminal passes
through :func:`term_safe`, which escapes control characters and terminal escape
codes coming from ids and labels.
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Callable
from typing import Any

import click

#: Largest estimated allocation an option may ask for (bytes).
MEMORY_LIMIT = 2 * 1024**3

FORMAT_OPTION = click.option(
    "--format", "fmt",
    type=click.Choice(["auto", "chaosnli", "long", "wide", "mturk", "toloka", "labelstudio",
                       "prodigy", "argilla", "lewidi", "lists", "counts", "soft"]),
    default="auto", show_default=True,
    help="Input format of the votes file (auto sniffs the file): ChaosNLI JSON Lines, long or "
         "wide tables, Mechanical Turk batch results, a Toloka results TSV, a Label Studio "
         "export (JSON, JSON-MIN or CSV), Prodigy JSONL (db-out), Argilla records, a "
         "Learning-With-Disagreements (LeWiDi 2023/2025) JSON split, JSON Lines with one row "
         "per item and a list of its labels or ratings (annotators unknown); counts: a count "
         "matrix (.npy/.npz of shape items x labels, read as such without --format) or a table "
         "with an item column and one count column per label; soft: the same holding "
         "probabilities (annotators unknown).",
)

#: Seeds are non-negative integers on every command.
SEED = click.IntRange(min=0)

def term_safe(text: Any, *, keep_newlines: bool = True) -> str:
    """``text`` with control characters and terminal escape codes shown as ``\\xNN``.

    Tabs and (with ``keep_newlines``) newlines are kept; every other C0/C1
    control character, including ESC, is escaped so that ids and labels from the
    data cannot move the cursor, change colours or hide text.

    >>> term_safe("a\\x1b[31mred\\x00")
    'a\\\\x1b[31mred\\\\x00'
    """
    from annokit.io.escape import printable  # here: `annokit --help` imports no pandas

    text = str(text)
    if not keep_newlines:
        text = text.replace("\n", "\\n").replace("\r", "\\r")
    return printable(text)


def one_line(message: Any) -> str:
    """A message on one line: whitespace runs collapsed, control characters escaped."""
    return term_safe(" ".join(str(message).split()), keep_newlines=False)


#: The keys of the library's read options that have a command-line flag ("--" + the key with
#: dashes; a column role ``columns[role]`` is ``--ROLE-col``): :func:`column_options`,
#: ``--format`` and ``--gold``.
CLI_READ_OPTIONS = frozenset({"format", "no_header", "missing", "scale", "duplicates", "sep",
                              "labels", "flags", "item_ids", "gold", "columns"})


def cli_option(option: Any) -> str:
    """An :class:`annokit.errors.Option` as the command line spells it: ``--no-header``,
    ``--duplicates first|last``, ``--item-col``; an option the command line does not have
    keeps its Python spelling, marked ``Python: max_count_bytes=``; an aside is the Python
    spelling in brackets, `` (Python: duplicates='first', 'last' or 'keep')``."""
    if option.aside:
        return f" (Python: {option.python()})"
    if option.role is not None:
        return f"--{option.role}-col"
    if option.key not in CLI_READ_OPTIONS:
        return f"Python: {option.python()}"
    flag = "--" + option.key.replace("_", "-")
    if option.value is None or option.value is True:
        return flag
    if isinstance(option.value, tuple):
        return f"{flag} {'|'.join(str(v) for v in option.value)}"
    return f"{flag} {option.value}"


def error_message(exc: Any) -> str:
    """An :class:`~annokit.errors.AnnokitError` on one line, its options spelled for the
    command line (:func:`cli_option`)."""
    return one_line(exc.render(cli_option))


def echo(text: str = "", **kwargs: Any) -> None:
    """``click.echo`` for human-readable text: control characters from the data escaped."""
    click.echo(term_safe(text), **kwargs)


def echo_warning(message: Any) -> None:
    """Print a library warning as one ``Warning: ...`` line on stderr."""
    click.echo(f"Warning: {one_line(message)}", err=True)


def echo_json(obj: Any) -> None:
    """Print one strict-JSON object on stdout (control characters are \\u-escaped by JSON)."""
    from annokit.core.jsonable import jsonable

    click.echo(json.dumps(jsonable(obj), indent=2, sort_keys=False, allow_nan=False))


class FiniteFloat(click.FloatRange):
    """A float range that also refuses ``nan`` and ``inf`` (click's FloatRange lets NaN through)."""

    name = "finite float"

    def __init__(self, min: float | None = None, max: float | None = None, *,
                 min_open: bool = False, max_open: bool = False,
                 exclude: tuple[float, ...] = (), infinite: dict[str, str] | None = None) -> None:
        super().__init__(min=min, max=max, min_open=min_open, max_open=max_open)
        self.exclude = exclude
        self.infinite = infinite or {}  # "inf"/"-inf": what that value would do, said instead

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                self.fail(f"{value!r} is not a number.", param, ctx)
        else:
            number = value
        if isinstance(number, float) and not math.isfinite(number):
            what = self.infinite.get("" if math.isnan(number) else "inf" if number > 0 else "-inf")
            self.fail(f"{value!r} {what}" if what else f"{value!r} is not a finite number.", param,
                      ctx)
        number = super().convert(number, param, ctx)
        if number in self.exclude:
            self.fail(f"{value!r} is not allowed (excluded: "
                      f"{', '.join(f'{x:g}' for x in self.exclude)}).", param, ctx)
        return number

    def _describe_range(self) -> str:
        """The range shown in --help; nothing for an unbounded number (click: ``x<=None``)."""
        if self.min is None and self.max is None:
            return ""
        return super()._describe_range()


def finite(min: float | None = None, max: float | None = None, **kwargs: Any) -> FiniteFloat:
    """A :class:`FiniteFloat` parameter type."""
    return FiniteFloat(min, max, **kwargs)


def _size(n_bytes: float) -> str:
    for unit, scale in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.1f} {unit}"
    return f"{n_bytes:.0f} bytes"


def check_memory(option: str, value: Any, n_bytes: float, *, what: str = "") -> None:
    """Refuse ``option value`` when its estimated memory ``n_bytes`` exceeds :data:`MEMORY_LIMIT`.

    Raises
    ------
    click.BadParameter
        Naming the option, the estimate and the limit.
    """
    if n_bytes > MEMORY_LIMIT:
        raise click.BadParameter(
            f"{value} would need about {_size(n_bytes)}{f' ({what})' if what else ''}, above the "
            f"limit of {_size(MEMORY_LIMIT)}; choose a smaller value", param_hint=f"'{option}'")


def check_bootstrap(n_boot: int, n_bins: int | None = None, *, n_groups: int = 1) -> None:
    """Refuse ``--n-boot`` / ``--n-bins`` values whose replicate results would not fit in memory.

    The estimate counts 8-byte values: every metric (about 32) for every replicate
    and group, and, for the binned metrics, three sums per bin for two targets
    and every replicate kept at once (the bootstrap itself is processed in
    chunks of replicates, ``annokit.core.resample``).
    """
    check_memory("--n-boot", n_boot, 8 * 32 * max(n_boot, 1) * n_groups,
                 what="replicate values of every metric")
    if n_bins is not None:
        check_memory("--n-bins", n_bins, 8 * 3 * 2 * n_bins * max(n_boot, 1) * n_groups,
                     what=f"binned sums for {max(n_boot, 1)} replicate(s)")


def memory_error(*options: tuple[str, Any, Any]) -> Exception:
    """The error for running out of memory, naming the options (``(name, value, default)``)
    whose values were raised above their defaults; the generic line when none was."""
    from annokit.errors import AnnokitError

    raised = [(name, value, default) for name, value, default in options
              if value is not None and default is not None and value > default]
    if not raised:
        return MemoryError()
    given = " and ".join(f"{name} {value}" for name, value, _ in raised)
    smaller = ", ".join(f"{name} (default {default})" for name, _, default in raised)
    return AnnokitError(f"out of memory with {given}: the memory they need grows with their value "
                        f"(and with the items, labels and models); choose a smaller {smaller}")


def int_list(text: str, option: str, *, min: int = 1) -> list[int]:
    """Comma-separated integers >= ``min``; an empty element (``1,,2``) is refused."""
    parts = [p.strip() for p in str(text).split(",")]
    expected = (f"expected comma-separated {'positive ' if min == 1 else ''}integers"
                f"{f' >= {min}' if min not in (0, 1) else ''}, e.g. 1,2,5,10")
    if any(p == "" for p in parts):
        raise click.BadParameter(f"empty element in {text!r}; {expected}",
                                 param_hint=f"'{option}'")
    try:
        values = [int(p) for p in parts]
    except ValueError:
        raise click.BadParameter(f"{expected}; got {text!r}", param_hint=f"'{option}'") from None
    low = [v for v in values if v < min]
    if low:
        raise click.BadParameter(f"{expected}; got {low[0]} in {text!r}",
                                 param_hint=f"'{option}'")
    return values


def float_list(text: str, option: str) -> list[float]:
    """Comma-separated finite numbers; an empty element, ``nan`` or ``inf`` is refused."""
    parts = [p.strip() for p in str(text).split(",")]
    if any(p == "" for p in parts):
        raise click.BadParameter(f"empty element in {text!r}; expected comma-separated numbers",
                                 param_hint=f"'{option}'")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise click.BadParameter(f"expected comma-separated numbers; got {text!r}",
                                 param_hint=f"'{option}'") from None
    bad = [p for p, v in zip(parts, values, strict=True) if not math.isfinite(v)]
    if bad:
        raise click.BadParameter(f"{bad[0]!r} in {text!r} is not a finite number",
                                 param_hint=f"'{option}'")
    return values


def votes_input(help: str = "Votes file (ChaosNLI .jsonl, long or wide CSV/TSV/JSONL/Parquet) "
                            "or a registered dataset name such as chaosnli-snli.") -> Callable:
    """Add ``--votes PATH`` and its positional shorthand ``[VOTES]`` to a command.

    The command receives the path as ``votes_path``; giving both, or neither, is
    a usage error (exit status 2).
    """

    def decorate(f: Callable) -> Callable:
        @functools.wraps(f)
        def wrapper(*args: Any, votes_arg: str | None = None, votes_path: str | None = None,
                    **kwargs: Any) -> Any:
            if votes_arg is not None and votes_path is not None:
                raise click.UsageError("give the votes once: --votes PATH or a positional VOTES "
                                       "path, not both")
            if votes_arg is None and votes_path is None:
                raise click.UsageError("Missing option '--votes' (or a positional VOTES path).")
            return f(*args, votes_path=votes_path or votes_arg, **kwargs)

        wrapper = click.option("--votes", "votes_path", type=click.Path(),
                               default=None,
                               help=help + " A directory or a quoted glob ('votes/part-*.csv') "
                                           "of Parquet/CSV/TSV partitions is read as one long "
                                           "table, the files concatenated (with either "
                                           "--engine). A positional VOTES path is the same.",
                               )(wrapper)
        return click.argument("votes_arg", required=False, metavar="[VOTES]",
                              type=click.Path())(wrapper)

    return decorate


_READ_KEY = "annokit.read_options"


def _store(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Keep a column option for :func:`read_options` (the options are not passed to the command)."""
    options = ctx.meta.setdefault(_READ_KEY, _no_read_options())
    if param.name in ("scale", "duplicates"):
        options[param.name] = value
    elif param.name == "no_header":
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


_TABLE_KEY = "annokit.table_options"


def _store_table(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Keep ``--sep``, ``--flags``, ``--labels`` and ``--item-ids`` for :func:`read_options`."""
    if value is not None:
        if param.name == "labels":
            value = [name.strip() for name in value.split(",")]
            if any(not name for name in value) or len(set(value)) != len(value):
                raise click.BadParameter(f"expected distinct comma-separated label names, e.g. "
                                         f"low,mid,high; got {','.join(value)!r}", ctx=ctx,
                                         param=param)
        elif param.name == "sep":
            from annokit.io.delimited import parse_sep

            try:
                value = parse_sep(value)
            except ValueError:
                raise click.BadParameter(f"expected one of , ; | or tab; got {value!r}", ctx=ctx,
                                         param=param) from None
        ctx.meta.setdefault(_TABLE_KEY, {})[param.name] = value
    return value


def _no_read_options() -> dict[str, Any]:
    return {"columns": {}, "no_header": False, "missing": (), "scale": None, "duplicates": None}


def column_options(command: Any) -> Any:
    """The options that say how a votes file is laid out, shared by every command reading votes:
    ``--item-col``, ``--annotator-col``, ``--label-col``, ``--gold-col``, ``--no-header``,
    ``--missing``, ``--scale``, ``--duplicates``, ``--sep``, ``--labels``, ``--flags`` and
    ``--item-ids``. The
    command gets them from :func:`read_options`, passed on to :func:`annokit.io.read_votes`."""
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
        click.option("--scale", "scale", expose_value=False, callback=_store,
                     type=click.Choice(["nominal", "ordinal", "interval", "ratio"]),
                     help="Level of measurement of the labels (default: the file's own, e.g. "
                          "ordinal for LeWiDi Likert sets; else nominal). ordinal: ordered "
                          "categories (numeric labels in numeric order); interval/ratio: "
                          "numbers. Order-aware metrics and agreement follow it."),
        click.option("--duplicates", "duplicates", expose_value=False, callback=_store,
                     type=click.Choice(["error", "first", "last", "keep"]),
                     help="Repeated (item, annotator) votes: refuse them (the default), keep the "
                          "first or the last vote of each, or keep all as multi-label votes "
                          "(stats and evaluate; implied by --multilabel). How many pairs were "
                          "repeated and what was done is stated (read as, --json, a warning "
                          "when votes are left out)."),
        click.option("--sep", "sep", metavar="SEP", expose_value=False, callback=_store_table,
                     help="Field separator of a CSV/TSV votes file: , ; | or tab (default: "
                          "sniffed from the first lines, whatever the extension says; "
                          "the choice is stated in the read-as line)."),
        click.option("--labels", "labels", metavar="NAME,NAME,...", expose_value=False,
                     callback=_store_table,
                     help="The label set, in order: every label a vote may carry (a vote with "
                          "another label is an error; a label no vote uses is kept, with no "
                          "votes). Ordinal scales take this order (needed when the labels are "
                          "words, e.g. --scale ordinal --labels low,mid,high)."),
        click.option("--flags", "flags", type=click.Choice(["drop", "keep"]),
                     expose_value=False, callback=_store_table,
                     help="Mechanical Turk batches with a checkbox beside the answer (e.g. "
                          "'cannot judge'): drop the votes whose box is ticked (the default) or "
                          "keep them; either way they are counted in the read-as line."),
        click.option("--item-ids", "item_ids", metavar="FILE", expose_value=False,
                     callback=_store_table,
                     help="Item ids of a count or probability array (.npy/.npz), one per row: "
                          "a text file with one id per line, or a 1-D .npy array (default: the "
                          "row positions 0, 1, ..., stated in the read-as line)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def read_options(*, multilabel: bool = False) -> dict[str, Any]:
    """The keyword arguments of :func:`annokit.io.read_votes` given by :func:`column_options`.

    ``multilabel`` (a command's ``--multilabel``) keeps every vote of an (item, annotator)
    pair: ``--duplicates keep``, implied; another ``--duplicates`` conflicts with it.
    """
    ctx = click.get_current_context()
    options = ctx.meta.get(_READ_KEY, _no_read_options())
    duplicates = options["duplicates"]
    if multilabel:
        if duplicates not in (None, "keep"):
            raise click.UsageError(f"--multilabel keeps every label an annotator gave an item; "
                                   f"--duplicates {duplicates} conflicts with it")
        duplicates = "keep"
    return {"columns": dict(options["columns"]) or None, "no_header": options["no_header"],
            "missing": options["missing"], "scale": options["scale"],
            "duplicates": duplicates or "error", **ctx.meta.get(_TABLE_KEY, {})}


def with_duplicates(doc: Any, votes: Any) -> Any:
    """``doc`` (a command's ``--json`` object) with ``duplicates`` when ``--duplicates`` was
    given: ``{"policy", "repeated_pairs", "votes_removed"}`` (the reader's
    ``votes.duplicates_info``); unchanged otherwise."""
    info = getattr(votes, "duplicates_info", None)
    return {**doc, "duplicates": info} if info is not None and isinstance(doc, dict) else doc


def single_label(votes: Any, command: str) -> Any:
    """``votes``, refused when an annotator ticked several labels of an item (multi-label), or
    when they are soft labels without votes (what ``command`` does needs votes)."""
    from annokit.core.multilabel import is_multilabel
    from annokit.core.soft_votes import is_soft_only, soft_only_message
    from annokit.errors import InputError

    if is_soft_only(votes):  # distributions without votes: nothing to subsample or score
        raise InputError(soft_only_message(votes.source, command))
    if is_multilabel(votes):
        raise click.UsageError(f"{command} takes single-label votes; these are multi-label (an "
                               "annotator gave several labels to an item): use stats or "
                               "evaluate --multilabel, or keep one vote of each with "
                               "--duplicates first|last")
    return votes


def out_format_option(*, jsonl: bool = True, option: str = "--out") -> Callable:
    """``--out-format csv|tsv|jsonl|parquet``: the format of the table written to ``option``
    (default: its extension names it; :func:`annokit.io.atomic.table_format`)."""
    choices = ["csv", "tsv", "jsonl", "parquet"] if jsonl else ["csv", "tsv", "parquet"]
    return click.option(
        "--out-format", "out_format", type=click.Choice(choices), default=None,
        help=f"Format of the table written to {option} (default: from its extension). "
             "parquet: one Parquet file in memory; with --engine dask a Parquet dataset (a "
             "directory of part files, one per partition). What was written is stated (the "
             "wrote line; --json: key output).")


def written(path: str, out_format: str | None, n_rows: int | None, *, engine: str = "memory",
            jsonl: bool = True) -> dict[str, Any]:
    """:func:`annokit.io.atomic.output_info` of a table a command wrote to ``path`` (a
    Parquet dataset's files counted in its directory)."""
    from annokit.io.atomic import output_info, table_format

    fmt = table_format(path, out_format, jsonl=jsonl) if out_format or engine == "memory" \
        else _dask_format(path)
    n_files = None
    if engine == "dask" and fmt == "parquet":
        n_files = sum(1 for name in os.listdir(path) if name.endswith(".parquet"))
    return output_info(path, fmt, n_rows, n_files=n_files)


def _dask_format(path: str) -> str:
    """The format ``--engine dask`` writes ``path`` in without ``--out-format``."""
    from annokit.io.atomic import TABLE_FORMATS

    suffix = os.path.splitext(path)[1].lower()
    return next((f for f, exts in TABLE_FORMATS.items() if suffix in exts), "parquet")


def engine_options(f: Callable) -> Callable:
    """Add ``--engine memory|dask`` and ``--scheduler ADDRESS`` to a command."""
    f = click.option("--scheduler", metavar="ADDRESS",
                     help="Dask scheduler to run on with --engine dask (e.g. tcp://host:8786); "
                          "default: a LocalCluster sized to this machine.")(f)
    return click.option("--engine", type=click.Choice(["memory", "dask"]), default="memory",
                        show_default=True,
                        help="memory: read the votes into this process; dask: partitions on a "
                             "Dask cluster (pip install 'annokit[dask]'), for a directory, glob "
                             "or list of Parquet/CSV files beyond one machine's memory.")(f)


def dask_votes(votes_path: str, scheduler: str | None, *, fmt: str = "auto",
               not_on_dask: dict[str, bool] | None = None, gold: str | None = None,
               duplicates: str = "error") -> Any:
    """Votes for ``--engine dask``: refuses options the Dask reader does not take.

    ``gold``: a separate gold file (``--gold``), read once here and joined by item id on
    the workers (:func:`annokit.scale.votes.attach_gold_dask`). ``duplicates="keep"``: a
    command's ``--multilabel`` (every label an annotator ticked; ``--duplicates keep`` may
    then be given too).
    """
    from annokit.scale.votes import attach_gold_dask, read_votes_dask

    options = read_options()
    used = [name for name, on in {**(not_on_dask or {}),
                                  "--format": fmt not in ("auto", "long"),
                                  "--no-header": options["no_header"],
                                  "--missing": bool(options["missing"]),
                                  "--sep": "sep" in options,
                                  "--flags": "flags" in options,
                                  "--item-ids": "item_ids" in options}.items() if on]
    if used:
        raise click.UsageError(f"{', '.join(used)} do(es) not apply with --engine dask (long "
                               "Parquet/CSV/TSV tables)")
    if options["duplicates"] not in ("error", None, duplicates):
        raise click.UsageError(
            f"--duplicates {options['duplicates']} does not apply with --engine dask: repeated "
            "(item, annotator) votes are refused there (which vote comes first is not defined "
            "across files); use --engine memory, or --multilabel (stats, evaluate) to keep "
            "every label of multi-label votes")
    import logging

    from annokit.scale.client import engine_client, shutdown

    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    # the client first, closed when the command ends even if reading fails
    client = engine_client(scheduler=scheduler)
    click.get_current_context().call_on_close(lambda: shutdown(client))
    votes = read_votes_dask(votes_path, columns=options["columns"], client=client,
                            scale=options["scale"], duplicates=duplicates,
                            labels=options.get("labels"))  # --labels: the order of ordinal words
    if gold is not None:
        from annokit.io import read_gold

        votes = attach_gold_dask(votes, read_gold(gold))
    return votes


def check_engine(engine: str, scheduler: str | None) -> None:
    if scheduler is not None and engine != "dask":
        raise click.UsageError("--scheduler applies to --engine dask")
