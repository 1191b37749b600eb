"""``read_votes``: one table of the formats it reads, each with its reader and the options it
accepts, and one helper that refuses an option the chosen format does not take.

The options are :class:`ReadOptions` (the keyword arguments of :func:`read_votes`); a refusal
names the option by its key (an :class:`annokit.errors.Option`), which Python spells
``no_header=True`` and the command line ``--no-header``.

Inputs
------
Every input goes through one boundary (:mod:`annokit.io.source`): a regular file or ``-`` for
standard input (FIFOs, devices and directories are refused), UTF-8 with or without a
byte-order mark, strict JSON, unique column names. A path may also be the name of a registered
dataset (``"chaosnli-snli"``), loaded from the cache. A directory, a glob
(``"votes/part-*.csv"``) or a list of Parquet/CSV/TSV partitions is read as the long table of
the files concatenated in order (:mod:`annokit.io.partitions`: the same header in every file;
errors name the partition and its line or row). A DataFrame is a long or wide table already
read: its columns are detected exactly as a file's (``format`` "auto", "long" or "wide";
``columns``, ``labels``, ``gold`` (a gold file), ``duplicates``, ``missing`` and ``scale``
apply as to a file). The layout chosen is stated in ``votes.read_info`` (e.g.
``"votes.csv: long table (csv); item='item', ..."``).

Formats (:data:`VOTE_FORMATS`)
------------------------------
"auto" sniffs the file and refuses a file that fits no layout. "chaosnli" reads ChaosNLI JSON
Lines; "long" a table of one row per vote (:func:`annokit.io.read_long`), "wide" one of one
column per annotator. The exports of annotation tools (:mod:`annokit.io.exports`): "mturk"
reads Mechanical Turk batch results (:func:`annokit.io.mturk.read_mturk`), "toloka" a Toloka
results TSV (:func:`annokit.io.toloka.read_toloka`), "labelstudio" a Label Studio JSON export
(:func:`annokit.io.labelstudio.read_labelstudio`) or its JSON-MIN and CSV exports
(:mod:`annokit.io.labelstudio_flat`), "prodigy" Prodigy's ``db-out`` JSONL
(:func:`annokit.io.prodigy.read_prodigy`), "argilla" Argilla records
(:func:`annokit.io.argilla.read_argilla`); for these, ``columns`` may name only the ``item`` and
``label`` columns (MTurk: ``Input.*``/``Answer.*`` names or families; Label Studio: a ``data``
field and the control's ``from_name``; Argilla: the question). "lewidi" reads a LeWiDi
2023/2025 split file (:func:`annokit.io.lewidi.read_lewidi`, which also takes a folder and
``split=``). "lists" reads JSON Lines with one row per item and a list of its labels, such as
graded ratings released without annotator ids (:func:`annokit.io.lists.read_label_lists`:
``columns`` may name ``item`` and ``label``, the list field). "counts" reads a count matrix
(``.npy``/``.npz`` of shape (items, labels), read without ``format`` too) or a table with an
item column and one count column per label (detected when those columns are the declared
``labels``); "soft" the same layouts holding probabilities (:mod:`annokit.io.counts`).

Options
-------
``columns`` names column roles (``item``, ``annotator``, ``label``, ``gold``) of long tables,
and ``item`` and ``gold`` of wide tables; columns not named are detected from common
spellings, and two columns that could fill one role are refused. ``gold`` is a separate gold
file for long and wide tables (a blank gold cell means no gold). ``duplicates`` says what to do
with repeated (item, annotator) votes: refuse them, keep the first or last vote of each, or
keep all (multi-label votes); unless refused, the number of repeated pairs and what was done
is appended to ``votes.read_info``, and votes left out are also a warning (a LeWiDi file
applies it to annotators repeated in a 2023 item). ``missing`` lists cell texts that mean "no
value" besides the empty cell (by default ``NA``, ``nan``, ``None`` and ``null`` are labels as
written). ``scale`` is the label set's level of measurement
(:func:`annokit.io.ratings.apply_scale`): ordinal labels keep the order of ``labels``, or
numeric order for numeric labels read without ``labels``. ``sep`` is sniffed from the first
lines whatever the extension says (:mod:`annokit.io.delimited`). ``flags`` keeps or drops the
flagged votes of Mechanical Turk batches with flag fields (a "cannot judge" checkbox beside the
answer), counted in ``read_info`` either way. ``item_ids`` of a count or probability array are
by default the row positions ``"0"``, ``"1"``, ... (stated).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from annokit.core.checks import check_option
from annokit.core.votes import DuplicatePolicy, LabelSet, Votes
from annokit.errors import DataFormatError, InvalidValueError, Option
from annokit.io.chaosnli import looks_like_chaosnli, read_chaosnli
from annokit.io.counts import is_array, read_count_array, read_count_table
from annokit.io.exports import TOOL_FORMATS, export_format, read_export
from annokit.io.frames import read_frame
from annokit.io.layout import table_layout
from annokit.io.lewidi import looks_like_lewidi, read_lewidi
from annokit.io.lists import looks_like_label_lists, read_label_lists
from annokit.io.partitions import is_partitioned, read_partitions
from annokit.io.ratings import apply_scale
from annokit.io.read_checks import (
    MAX_COUNT_BYTES,
    check_count_size,
    checked_labels,
    duplicates_note,
)
from annokit.io.registry import REGISTRY, load_dataset
from annokit.io.source import Input
from annokit.io.tables import table_kind
from annokit.io.tabular import attach_gold, read_columns, read_gold, read_long, read_wide

__all__ = ["FORMATS", "Format", "ReadOptions", "VOTE_FORMATS", "VoteFormat", "read_votes",
           "refuse_options", "sniff_format"]

Format = Literal["auto", "chaosnli", "long", "wide", "mturk", "toloka", "labelstudio", "prodigy",
                 "argilla", "lewidi", "lists", "counts", "soft"]
FORMATS = ("auto", "chaosnli", "long", "wide", *TOOL_FORMATS, "lewidi", "lists", "counts", "soft")


@dataclass(frozen=True)
class ReadOptions:
    """The options of :func:`read_votes` beside the path and the format (documented there)."""

    columns: Mapping[str, str | None] | None = None
    labels: Any = None
    gold: Any = None
    duplicates: DuplicatePolicy = "error"
    no_header: bool = False
    missing: Sequence[str] = ()
    max_count_bytes: int = MAX_COUNT_BYTES
    sep: str | None = None
    flags: Literal["drop", "keep"] | None = None
    item_ids: Any = None

    def given(self) -> list[Option]:
        """The options given a value other than their default, in the order they are checked;
        a column role of ``columns`` is an option of its own (``columns['item']``)."""
        on = [Option("item_ids") if self.item_ids is not None else None,
              Option("flags") if self.flags is not None else None,
              Option("sep") if self.sep is not None else None,
              Option("labels") if self.labels is not None else None,
              Option("no_header", True) if self.no_header else None,
              *(Option("columns", role=role) for role, col in (self.columns or {}).items() if col),
              Option("missing") if self.missing else None,
              Option("gold") if self.gold is not None else None,
              Option("duplicates") if self.duplicates != "error" else None]
        return [o for o in on if o is not None]


#: Where each option applies, and what a refusal says after it ("{format}": the format read).
_APPLIES: dict[str, tuple[str, str]] = {
    "item_ids": ("names the rows of a count or probability array (.npy/.npz)",
                 "this input has its own item column"),
    "flags": ("applies to Mechanical Turk batch results (flag fields beside the answer)",
              "this is read as {format}"),
    "sep": ("applies to delimited text tables (CSV, TSV)", "this is read as {format}"),
    "labels": (f"applies to tables and tool exports (long, wide, {', '.join(TOOL_FORMATS)})",
               "a {format} file's labels are read from the file"),
    "no_header": ("reads long CSV/TSV tables without a header line (item, annotator, label)",
                  "this is read as {format}"),
    "columns": ("names a column of a table", "this is read as {format}"),
    "missing": ("applies to the cells of long and wide tables", "this is read as {format}"),
    "gold": ("(a separate gold file) applies to long and wide tables",
             "this is read as {format}"),
    "duplicates": ("applies to votes with annotator ids", "this is read as {format}"),
}


def refuse_options(name: str, fmt: str, options: ReadOptions, accepts: frozenset[str]) -> None:
    """Refuse the first option given that format ``fmt`` does not accept: a one-line error
    naming the option and the format.

    ``accepts`` holds option keys (``"sep"``), column roles (``"columns[item]"``) and
    ``"labelset"`` (a :class:`LabelSet`, as a declared scale builds it, is taken where the
    file's labels are otherwise fixed).

    Raises
    ------
    InvalidValueError
        Naming the option (its key; ``str(error)`` spells it as a Python argument).
    """
    for option in options.given():
        key = option.key if option.role is None else f"columns[{option.role}]"
        if key in accepts or (key == "labels" and "labelset" in accepts
                              and isinstance(options.labels, LabelSet)):
            continue
        where, then = _APPLIES[option.key]
        raise InvalidValueError(f"{name}: {option} {where}; {then.format(format=fmt)}",
                                options=[option])


def _finish(votes: Votes, name: str, options: ReadOptions, info: str) -> Votes:
    """``votes`` checked for size, with ``info`` and what was done with repeated votes as its
    ``read_info``."""
    check_count_size(votes.n_items, votes.n_labels, name, limit=options.max_count_bytes)
    votes.read_info = info + duplicates_note(votes, options.duplicates)
    return votes


def _noted(info: str, note: str | None) -> str:
    return f"{info} ({note})" if note else info


# -- the readers of the table -----------------------------------------------------------------
# Each takes the file, the format it is read as, the options and what layout detection inferred
# (a note for ``read_info``), and returns the votes with their ``read_info``.

def _read_long_table(source: Input, fmt: str, options: ReadOptions, note: str | None) -> Votes:
    _not_chaosnli(source, fmt)
    votes = read_long(source, columns=options.columns, labels=options.labels, gold=options.gold,
                      duplicates=options.duplicates, no_header=options.no_header,
                      missing=options.missing, sep=options.sep)
    info = getattr(votes, "read_info", None) or f"{source.name}: long table ({table_kind(source)})"
    return _finish(votes, source.name, options, _noted(info, note))


def _read_wide_table(source: Input, fmt: str, options: ReadOptions, note: str | None) -> Votes:
    _not_chaosnli(source, fmt)
    votes = read_wide(source, labels=options.labels, columns=options.columns,
                      missing=options.missing, sep=options.sep)
    info = votes.read_info or f"{source.name}: wide table"
    if options.gold is not None:
        votes = attach_gold(votes, read_gold(options.gold, missing=options.missing))
    return _finish(votes, source.name, options, _noted(info, note))


def _not_chaosnli(source: Input, fmt: str) -> None:
    if table_kind(source) == "jsonl" and looks_like_chaosnli(source):
        opt = Option("format", "chaosnli")
        raise DataFormatError(f"{source.name} is a ChaosNLI file (its lines have a label_counter), "
                              f"not a {fmt} table; read it with {opt} (or auto)", options=[opt])


def _read_chaosnli(source: Input, fmt: str, options: ReadOptions, note: str | None) -> Votes:
    labels = options.labels if isinstance(options.labels, LabelSet) else None
    votes = read_chaosnli(source, labels=labels)
    return _finish(votes, source.name, options, _noted(f"{source.name}: ChaosNLI JSON Lines", note))


def _read_lists(source: Input, fmt: str, options: ReadOptions, note: str | None) -> Votes:
    votes = read_label_lists(source, columns=options.columns, duplicates=options.duplicates)
    return _finish(votes, source.name, options, votes.read_info or f"{source.name}: label lists")


def _read_tool(source: Input, fmt: str, options: ReadOptions, note: str | None) -> Votes:
    votes = read_export(fmt, source, columns=options.columns, labels=options.labels,
                        duplicates=options.duplicates, sep=options.sep, flags=options.flags)
    info = getattr(votes, "read_info", None) or f"{source.name}: {fmt} export"
    return _finish(votes, source.name, options, info)


def _read_lewidi(source: Input | str | os.PathLike, fmt: str, options: ReadOptions,
                 note: str | None) -> Votes:
    """A LeWiDi split file or folder: ``read_lewidi`` states what it read and did with
    repeated votes itself."""
    labels = options.labels if isinstance(options.labels, LabelSet) else None
    votes = read_lewidi(source, labels=labels, duplicates=options.duplicates)
    check_count_size(votes.n_items, votes.n_labels, votes.source, limit=options.max_count_bytes)
    return votes


def _read_counts(source: Input, fmt: str, options: ReadOptions, note: str | None) -> Votes:
    """Counts or soft labels: an array, or a table of one column per label."""
    soft = fmt == "soft"
    if is_array(source.name):
        votes = read_count_array(source, soft=soft, labels=options.labels,
                                 item_ids=options.item_ids)
    else:
        votes = read_count_table(source, soft=soft, labels=options.labels,
                                 columns=options.columns, missing=options.missing, sep=options.sep)
    check_count_size(votes.n_items, votes.n_labels, source.name, limit=options.max_count_bytes)
    if note:
        votes.read_info = f"{votes.read_info} ({note})"
    votes.duplicates_info = None
    return votes


@dataclass(frozen=True)
class VoteFormat:
    """A format :func:`read_votes` reads: its reader and the options it accepts.

    Attributes
    ----------
    name : str
        The ``format`` value (``"long"``, ``"mturk"``, ...).
    read : callable
        ``read(source, format, options, note) -> Votes``, with ``read_info`` set.
    accepts : frozenset of str
        The options it takes (see :func:`refuse_options`); the others are refused.
    shown : str, optional
        How a refusal names what the file is read as (default: ``name``).
    """

    name: str
    read: Callable[[Any, str, ReadOptions, str | None], Votes]
    accepts: frozenset[str]
    shown: str | None = None


def _roles(*roles: str) -> frozenset[str]:
    return frozenset(f"columns[{role}]" for role in roles)


_ALL_ROLES = _roles("item", "annotator", "label", "gold")
_TABLE = frozenset({"sep", "labels", "missing", "gold", "duplicates"}) | _ALL_ROLES


def _tool(name: str) -> VoteFormat:
    extra = {"mturk": {"sep", "flags"}, "toloka": {"sep"}}.get(name, set())
    return VoteFormat(name, _read_tool, frozenset({"labels", "duplicates", *extra})
                      | _roles("item", "label"))


#: Every format of a file, by name (arrays, whatever the format, are :data:`ARRAY_FORMATS`).
VOTE_FORMATS: dict[str, VoteFormat] = {
    "long": VoteFormat("long", _read_long_table, _TABLE | {"no_header"}),
    "wide": VoteFormat("wide", _read_wide_table, _TABLE),
    "chaosnli": VoteFormat("chaosnli", _read_chaosnli, frozenset({"labelset", "duplicates"})),
    "lewidi": VoteFormat("lewidi", _read_lewidi, frozenset({"labelset", "duplicates"})),
    "lists": VoteFormat("lists", _read_lists, frozenset({"duplicates"}) | _ALL_ROLES),
    **{name: _tool(name) for name in TOOL_FORMATS},
    "counts": VoteFormat("counts", _read_counts, frozenset({"labels", "missing", "sep"})
                         | _roles("item"), shown="a table of counts"),
    "soft": VoteFormat("soft", _read_counts, frozenset({"labels", "missing", "sep"})
                       | _roles("item"), shown="a table of probabilities"),
}

#: A NumPy count or probability array (``.npy``/``.npz``), read as counts or as soft labels.
ARRAY_FORMATS: dict[str, VoteFormat] = {
    "counts": VoteFormat("counts", _read_counts, frozenset({"labels", "item_ids"}),
                         shown="a NumPy array of counts"),
    "soft": VoteFormat("soft", _read_counts, frozenset({"labels", "item_ids"}),
                       shown="a NumPy array of probabilities"),
}


def _read_file(source: Input, format: str, options: ReadOptions) -> Votes:
    """``read_votes`` of one file: its format resolved, the options it does not take refused,
    then its reader."""
    fmt, columns, note = _resolve_format(source, format, options)
    spec = (ARRAY_FORMATS if is_array(source.name) else VOTE_FORMATS)[fmt]
    refuse_options(source.name, spec.shown or spec.name, options, spec.accepts)
    return spec.read(source, fmt, replace(options, columns=columns), note)


def _resolve_format(source: Input, format: str, options: ReadOptions
                    ) -> tuple[str, Mapping[str, str | None] | None, str | None]:
    """The format a file is read as, the column roles to read it with and what was inferred."""
    if is_array(source.name):
        if format not in ("auto", "counts", "soft"):
            counts, soft = Option("format", "counts"), Option("format", "soft")
            raise DataFormatError(f"{source.name} is a NumPy array: read it with {counts} (vote "
                                  f"counts) or {soft} (probabilities), not {format}",
                                  options=[counts, soft])
        return ("soft" if format == "soft" else "counts"), options.columns, None
    if format == "auto":
        return _sniff(source, columns=options.columns, no_header=options.no_header,
                      sep=options.sep, labels=options.labels)
    if format in ("long", "wide") and not options.no_header and not (
            table_kind(source) == "jsonl" and looks_like_chaosnli(source)):
        return table_layout(source, fmt=format, columns=options.columns, sep=options.sep,
                            labels=options.labels)
    return format, options.columns, None


def sniff_format(path: str | os.PathLike | Input, *,
                 columns: Mapping[str, str | None] | None = None, no_header: bool = False,
                 sep: str | None = None) -> str:
    """Guess the format from a file's extension, first line, columns and first rows.

    "chaosnli" (JSON Lines with ``label_counter``), "lewidi" (a LeWiDi JSON split),
    "labelstudio" (a JSON list of tasks with ``annotations``), "lists" (JSON Lines, one row
    per item with a list of its labels, :mod:`annokit.io.lists`), "mturk" (a CSV with
    ``HITId``, ``WorkerId`` and ``Answer.*`` columns), "long" or "wide" (decided by
    :func:`annokit.io.layout.table_layout`).

    Raises
    ------
    DataFormatError
        The columns fit no layout, or fit two (the message names the option that settles it).
    """
    return _sniff(Input(path, what="votes"), columns=columns, no_header=no_header, sep=sep)[0]


def _sniff(source: Input, *, columns: Mapping[str, str | None] | None, no_header: bool,
           sep: str | None, labels: Any = None
           ) -> tuple[str, Mapping[str, str | None] | None, str | None]:
    """The format, the column roles to read a table with and what was inferred (see
    :func:`annokit.io.layout.table_layout`)."""
    if no_header:
        return "long", columns, None
    if sep is None:
        if table_kind(source) == "jsonl" and looks_like_chaosnli(source):
            return "chaosnli", columns, None
        if looks_like_lewidi(source):
            return "lewidi", columns, None
        tool = export_format(source) if table_kind(source) == "jsonl" else None
        if tool is not None:
            return tool, columns, None
        if looks_like_label_lists(source):
            return "lists", columns, None
    names = read_columns(source, sep=sep)
    tool = export_format(source, names)
    if tool is not None and {k for k, v in (columns or {}).items() if v} <= {"item", "label"}:
        return tool, columns, None
    return table_layout(source, columns=columns, sep=sep, labels=labels)


@checked_labels
def read_votes(
    path: str | os.PathLike | pd.DataFrame | list[str | os.PathLike] | tuple[str | os.PathLike, ...],
    *,
    format: Format = "auto",
    columns: Mapping[str, str | None] | None = None,
    labels: LabelSet | Sequence[Any] | None = None,
    gold: str | os.PathLike | None = None,
    duplicates: DuplicatePolicy = "error",
    no_header: bool = False,
    missing: Sequence[str] = (),
    max_count_bytes: int = MAX_COUNT_BYTES,
    scale: str | None = None,
    sep: str | None = None,
    flags: Literal["drop", "keep"] | None = None,
    item_ids: str | os.PathLike | None = None,
) -> Votes:
    """Read votes from a file, a DataFrame or partitions, in any supported format.

    The inputs, formats and options are described in :mod:`annokit.io.dispatch`.

    Parameters
    ----------
    path : path-like, list of path-likes, ``"-"``, registered dataset name or DataFrame
    format : str, one of FORMATS
        "auto" sniffs the file; the others force a format (:data:`VOTE_FORMATS`).
    columns : mapping of role to column name, optional
    labels : LabelSet or sequence of names, optional
    gold : path-like, optional
        A separate gold file (long and wide tables).
    duplicates : {"error", "first", "last", "keep"}
    no_header : bool, default=False
        A headerless CSV/TSV long table: item, annotator, label (see :func:`read_long`).
    missing : sequence of str
    max_count_bytes : int
        Refuse votes whose dense item x label count matrix needs more memory than this.
    scale : {"nominal", "ordinal", "interval", "ratio"}, optional
    sep : str, optional
    flags : {"drop", "keep"}, optional
    item_ids : path-like, optional
        Ids of the rows of a count or probability array: one per line, or a 1-D ``.npy``.

    Raises
    ------
    DataFormatError, SchemaError
        Unreadable, ambiguous or malformed input, naming the file, line or row and column;
        missing, repeated or conflicting columns.
    InvalidValueError
        An option the format does not accept, or a count matrix over ``max_count_bytes``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"task": ["q1", "q1", "q2"], "worker": ["w1", "w2", "w1"],
    ...                    "answer": ["yes", "no", "yes"]})
    >>> read_votes(df).read_info
    "DataFrame: long table; columns item='task', annotator='worker', label='answer'"
    """
    check_option("format", format, FORMATS)
    if flags is not None:
        check_option("flags", flags, ("drop", "keep"))
    options = ReadOptions(columns=columns, labels=labels, gold=gold, duplicates=duplicates,
                          no_header=no_header, missing=missing, max_count_bytes=max_count_bytes,
                          sep=sep, flags=flags, item_ids=item_ids)
    _check_item_ids(path, format, options)
    if scale is not None:
        return _read_scaled(path, format, scale, options)
    if isinstance(path, pd.DataFrame):
        votes = read_frame(path, format=format, columns=columns, labels=labels, gold=gold,
                           duplicates=duplicates, no_header=no_header, missing=missing)
        return _finish(votes, "DataFrame", options, votes.read_info or "DataFrame")
    if format == "lewidi" and not isinstance(path, (list, tuple)) and Path(path).is_dir():
        # a LeWiDi folder of splits (read_lewidi(folder, split=))
        refuse_options(Path(path).name, "lewidi", options, VOTE_FORMATS["lewidi"].accepts)
        return _read_lewidi(path, "lewidi", options, None)
    if isinstance(path, (list, tuple)) or is_partitioned(path):  # partitions: concatenated
        return read_partitions(path, read_votes, format=format, **_keywords(options))
    if str(path) in REGISTRY and not Path(path).exists():
        return load_dataset(str(path))
    return _read_file(Input(path, what="votes"), format, options)


def _check_item_ids(path: Any, format: str, options: ReadOptions) -> None:
    """Refuse ``item_ids`` before anything is read unless the input is an array (or read as
    counts or soft labels): they name an array's rows."""
    if options.item_ids is None or format in ("counts", "soft") or (
            not isinstance(path, (pd.DataFrame, list, tuple)) and is_array(path)):
        return
    where = "DataFrame" if isinstance(path, pd.DataFrame) else str(path)
    refuse_options(where, format, ReadOptions(item_ids=options.item_ids), frozenset())


def _keywords(options: ReadOptions) -> dict[str, Any]:
    """The options as keyword arguments of :func:`read_votes`."""
    return {name: getattr(options, name) for name in ReadOptions.__dataclass_fields__}


def _read_scaled(path: Any, format: str, scale: str, options: ReadOptions) -> Votes:
    """``read_votes`` with a declared level of measurement: the votes read, then scaled."""
    labels = options.labels
    if labels is not None and not isinstance(labels, LabelSet):
        labels = LabelSet(labels, scale=scale)  # declared numbers match any spelling
    # a separate gold file is coded against the scaled labels (LabelSet.encode on the
    # scale, as the votes were), so it is attached after the scale
    gold = options.gold
    later = gold is not None and _gold_file_applies(path, format, options)
    read = replace(options, labels=labels, gold=None if later else gold)
    votes = read_votes(path, format=format, **_keywords(read))
    votes = apply_scale(votes, scale, declared=labels is not None)
    if later and gold is not None:
        votes = attach_gold(votes, read_gold(gold, missing=options.missing))
    return votes


def _gold_file_applies(path: Any, format: str, options: ReadOptions) -> bool:
    """Whether ``read_votes`` takes a separate gold file for this input (long and wide tables)."""
    if isinstance(path, pd.DataFrame) or is_partitioned(path):
        return True
    if str(path) == "-" or (str(path) in REGISTRY and not Path(path).exists()):
        return False  # standard input is read once; registered datasets take no gold file
    if format == "lewidi" and Path(path).is_dir():
        return False
    if format in ("counts", "soft") or is_array(path):
        return False  # refused by the counts reader, which names the option
    fmt = (sniff_format(Input(path, what="votes"), columns=options.columns,
                        no_header=options.no_header, sep=options.sep)
           if format == "auto" else format)
    return fmt in ("long", "wide")
