"""Loaders and writers: files in, :class:`~annokit.core.votes.Votes` out.

``read_votes`` is the single entry point the CLI uses; it dispatches on
``format`` ("auto" sniffs the file): ChaosNLI JSON Lines, long tables (one
row per vote) or wide tables (one column per annotator).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from annokit.core.checks import check_option
from annokit.core.gold import warn_unknown_gold_dropped
from annokit.core.votes import DuplicatePolicy, LabelSet, Votes
from annokit.errors import (
    DataFormatError,
    DegenerateInputWarning,
    InvalidValueError,
    SchemaError,
)
from annokit.io.argilla import read_argilla
from annokit.io.arrow import VoteCounts, count_batches, votes_from_arrow
from annokit.io.atomic import write_table
from annokit.io.chaosnli import looks_like_chaosnli, read_chaosnli
from annokit.io.counts import is_array, read_count_array, read_count_table
from annokit.io.exports import TOOL_FORMATS, export_format, read_export
from annokit.io.hf import from_hf, to_hf
from annokit.io.hf_responses import from_hf_responses
from annokit.io.labelstudio import read_labelstudio
from annokit.io.layout import frame_layout, table_layout
from annokit.io.lewidi import looks_like_lewidi, read_lewidi
from annokit.io.lists import looks_like_label_lists, read_label_lists
from annokit.io.mturk import read_mturk
from annokit.io.partitions import is_partitioned, partition_files, read_partitions
from annokit.io.prodigy import read_prodigy
from annokit.io.ratings import apply_scale, read_ratings
from annokit.io.read_checks import checked_labels
from annokit.io.registry import REGISTRY, dataset_path, list_datasets, load_dataset
from annokit.io.source import Input
from annokit.io.tables import table_kind
from annokit.io.tabular import (
    attach_gold,
    detect_columns,
    read_columns,
    read_gold,
    read_long,
    read_table,
    read_wide,
    warn_unused_columns,
)
from annokit.io.toloka import read_toloka

__all__ = [
    "FORMATS",
    "MAX_COUNT_BYTES",
    "REGISTRY",
    "VoteCounts",
    "attach_gold",
    "check_count_size",
    "count_batches",
    "dataset_path",
    "duplicates_note",
    "detect_columns",
    "from_hf",
    "from_hf_responses",
    "list_datasets",
    "load_dataset",
    "read_chaosnli",
    "read_columns",
    "read_count_array",
    "read_count_table",
    "read_argilla",
    "read_label_lists",
    "read_labelstudio",
    "read_lewidi",
    "read_mturk",
    "read_prodigy",
    "read_ratings",
    "read_gold",
    "read_long",
    "read_table",
    "read_toloka",
    "read_votes",
    "read_wide",
    "partition_files",
    "to_hf",
    "votes_from_arrow",
    "votes_table",
    "write_votes",
]

Format = Literal["auto", "chaosnli", "long", "wide", "mturk", "toloka", "labelstudio", "prodigy",
                 "argilla", "lewidi", "lists", "counts", "soft"]
FORMATS = ("auto", "chaosnli", "long", "wide", *TOOL_FORMATS, "lewidi", "lists", "counts", "soft")


#: Largest dense item x label count matrix (bytes of int64) a read accepts; see ``read_votes``.
MAX_COUNT_BYTES = 2 * 1024**3

#: The formats ``--format`` can force, as the detection errors name them (every one of FORMATS).
_FORMAT_HINT = f"--format ({', '.join(FORMATS[1:-1])} or {FORMATS[-1]})"


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
    """Read votes from a file in any supported format.

    Every input goes through one boundary (:mod:`annokit.io.source`): a regular file or
    ``-`` for standard input (FIFOs, devices and directories are refused), UTF-8 with or
    without a byte-order mark, strict JSON, unique column names (a directory is read as
    partitions, below). The layout chosen is stated
    in ``votes.read_info`` (e.g. ``"votes.csv: long table (csv); item='item', ..."``).

    Parameters
    ----------
    path : path-like or pandas DataFrame
        A ChaosNLI ``.jsonl`` file, or a CSV / TSV / JSON Lines / Parquet table,
        ``-`` for standard input, or the name of a registered dataset (``"chaosnli-snli"``),
        which is then loaded from the cache. A directory, a glob (``"votes/part-*.csv"``) or
        a list of Parquet/CSV/TSV partitions is read as the long table of the files
        concatenated in order (:mod:`annokit.io.partitions`: the same header in every file;
        errors name the partition and its line or row). A DataFrame is a long or wide table already
        read: its columns are detected exactly as a file's (``format`` "auto", "long" or
        "wide"; ``columns``, ``labels``, ``gold`` (a gold file), ``duplicates``, ``missing``
        and ``scale`` apply as to a file).
    format : str, one of FORMATS
        "auto" sniffs the file and refuses a file that fits no layout. The exports of
        annotation tools (:mod:`annokit.io.exports`): "mturk" reads Mechanical Turk batch
        results (:func:`annokit.io.mturk.read_mturk`), "toloka" a Toloka results TSV
        (:func:`annokit.io.toloka.read_toloka`), "labelstudio" a Label Studio JSON export
        (:func:`annokit.io.labelstudio.read_labelstudio`) or its JSON-MIN and CSV exports
        (:mod:`annokit.io.labelstudio_flat`), "prodigy" Prodigy's ``db-out`` JSONL
        (:func:`annokit.io.prodigy.read_prodigy`), "argilla" Argilla records
        (:func:`annokit.io.argilla.read_argilla`); for these, ``columns`` may name only the
        ``item`` and ``label`` columns (MTurk: ``Input.*``/``Answer.*`` names or families;
        Label Studio: a ``data`` field and the control's ``from_name``; Argilla: the
        question). "lewidi" reads a LeWiDi 2023/2025 split file
        (:func:`annokit.io.lewidi.read_lewidi`, which also takes a folder and ``split=``).
        "lists" reads JSON Lines with one row per item and a list of its labels, such as
        graded ratings released without annotator ids
        (:func:`annokit.io.lists.read_label_lists`: ``columns`` may name ``item`` and
        ``label``, the list field). "counts" reads a count matrix (``.npy``/``.npz`` of shape
        (items, labels), read without ``format`` too) or a table with an item column and one
        count column per label (detected when those columns are the declared ``labels``);
        "soft" the same layouts holding probabilities (:mod:`annokit.io.counts`).
    columns : mapping, optional
        Column roles (``item``, ``annotator``, ``label``, ``gold``) for long tables, and
        ``item`` and ``gold`` for wide tables (see :func:`annokit.io.read_long`). Columns not
        named are detected from common spellings; two columns that could fill one role are
        refused.
    labels : LabelSet or sequence of names, optional
    gold : path-like, optional
        A separate gold file for long and wide tables; a blank gold cell means no gold.
    duplicates : {"error", "first", "last", "keep"}
        Repeated (item, annotator) votes (the CLI's ``--duplicates``): refuse them, keep the
        first or last vote of each, or keep all (multi-label votes). Unless refused, the
        number of repeated pairs and what was done is appended to ``votes.read_info``, and
        votes left out are also a warning. A LeWiDi file applies it to annotators repeated
        in a 2023 item (:func:`annokit.io.lewidi.read_lewidi`).
    no_header : bool, default=False
        A headerless CSV/TSV long table: item, annotator, label (see :func:`read_long`).
    missing : sequence of str
        Cell texts that mean "no value" besides the empty cell. By default ``NA``, ``nan``,
        ``None`` and ``null`` are labels as written.
    max_count_bytes : int
        Refuse votes whose dense item x label count matrix would need more memory than this
        (the message gives the estimate).
    scale : {"nominal", "ordinal", "interval", "ratio"}, optional
        The label set's level of measurement (:func:`annokit.io.ratings.apply_scale`):
        ordinal labels keep the order of ``labels``, or numeric order for numeric labels
        read without ``labels``. None keeps the label set's own (nominal by default).
    sep : str, optional
        The separator of a CSV/TSV votes file (``","``, ``";"``, ``"\\t"``, ``"|"``; CLI
        ``--sep``). Default: sniffed from the first lines whatever the extension says
        (:mod:`annokit.io.delimited`); the choice is stated in ``read_info``.
    flags : {"drop", "keep"}, optional
        Mechanical Turk batches with flag fields (a "cannot judge" checkbox beside the answer,
        :func:`annokit.io.mturk.read_mturk`): drop (the default) or keep the flagged votes;
        either way they are counted in ``read_info``.
    item_ids : path-like, optional
        The item ids of a count or probability array (CLI ``--item-ids``): one per line, or a
        1-D ``.npy`` array; by default the row positions ``"0"``, ``"1"``, ... (stated).

    Raises
    ------
    DataFormatError
        Unreadable, ambiguous or malformed input; the message names the file, line or row
        and column.
    SchemaError
        Missing, repeated or conflicting columns.
    InvalidValueError
        Options that do not apply to the format, or a count matrix over ``max_count_bytes``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"task": ["q1", "q1", "q2"], "worker": ["w1", "w2", "w1"],
    ...                    "answer": ["yes", "no", "yes"]})
    >>> votes = read_votes(df)
    >>> votes.read_info
    "DataFrame: long table; columns item='task', annotator='worker', label='answer'"
    >>> votes.counts(as_frame=True)
    label  no  yes
    item
    q1      1    1
    q2      0    1
    """
    check_option("format", format, FORMATS)
    if item_ids is not None and not (format in ("counts", "soft") or (
            not isinstance(path, (pd.DataFrame, list, tuple)) and is_array(path))):
        raise InvalidValueError(f"{path if not isinstance(path, pd.DataFrame) else 'DataFrame'}: "
                                "--item-ids names the rows of a count or probability array "
                                "(.npy/.npz); this input has its own item column")
    if scale is not None:
        if labels is not None and not isinstance(labels, LabelSet):
            labels = LabelSet(labels, scale=scale)  # declared numbers match any spelling
        # a separate gold file is coded against the scaled labels (LabelSet.encode on the
        # scale, as the votes were), so it is attached after the scale
        later = gold is not None and _gold_file_applies(path, format, columns, no_header, sep)
        votes = read_votes(path, format=format, columns=columns, labels=labels,
                           gold=None if later else gold, duplicates=duplicates,
                           no_header=no_header, missing=missing, max_count_bytes=max_count_bytes,
                           sep=sep, flags=flags, item_ids=item_ids)
        votes = apply_scale(votes, scale, declared=labels is not None)
        if later and gold is not None:
            votes = attach_gold(votes, read_gold(gold, missing=missing))
        return votes
    if isinstance(path, pd.DataFrame):
        votes = _read_frame(path, format=format, columns=columns, labels=labels, gold=gold,
                            duplicates=duplicates, no_header=no_header, missing=missing)
        check_count_size(votes.n_items, votes.n_labels, "DataFrame", limit=max_count_bytes)
        votes.read_info = (votes.read_info or "DataFrame") + duplicates_note(votes, duplicates)
        return votes
    if format == "lewidi" and not isinstance(path, (list, tuple)) and Path(path).is_dir():
        if sep is not None or flags is not None:  # a LeWiDi folder (read_lewidi(folder, split=))
            raise InvalidValueError(f"{path}: --sep and --flags apply to CSV/TSV tables; a LeWiDi "
                                    "folder holds JSON splits")
        return _read_lewidi(path, labels=labels, columns=columns, gold=gold, no_header=no_header,
                            missing=missing, duplicates=duplicates, max_count_bytes=max_count_bytes)
    if isinstance(path, (list, tuple)) or is_partitioned(path):  # partitions: concatenated
        return read_partitions(path, read_votes, format=format, columns=columns, labels=labels,
                               gold=gold, duplicates=duplicates, no_header=no_header,
                               missing=missing, sep=sep, max_count_bytes=max_count_bytes,
                               flags=flags, item_ids=item_ids)
    if str(path) in REGISTRY and not Path(path).exists():
        return load_dataset(str(path))
    source = Input(path, what="votes")
    if is_array(path) or format in ("counts", "soft"):
        return _read_counts(source, format=format, columns=columns, labels=labels, gold=gold,
                            duplicates=duplicates, no_header=no_header, missing=missing,
                            max_count_bytes=max_count_bytes, sep=sep, flags=flags,
                            item_ids=item_ids)
    if flags is not None:
        check_option("flags", flags, ("drop", "keep"))
    note = None
    if format == "auto":
        fmt, columns, note = _sniff(source, columns=columns, no_header=no_header, sep=sep,
                                    labels=labels)
        if fmt == "counts":
            return _read_counts(source, format=fmt, columns=columns, labels=labels, gold=gold,
                                duplicates=duplicates, no_header=no_header, missing=missing,
                                max_count_bytes=max_count_bytes, sep=sep, flags=flags,
                                item_ids=item_ids, note=note)
    else:
        fmt = format
        if fmt in ("long", "wide") and not no_header and not (
                table_kind(source) == "jsonl" and looks_like_chaosnli(source)):
            fmt, columns, note = table_layout(source, fmt=fmt, columns=columns, sep=sep,
                                              labels=labels)
    if flags is not None and fmt != "mturk":
        raise InvalidValueError(f"{source.name}: --flags applies to Mechanical Turk batch "
                                f"results (flag fields beside the answer); this is read as {fmt}")
    if sep is not None and fmt not in ("long", "wide", "mturk", "toloka"):
        raise InvalidValueError(f"{source.name}: --sep applies to delimited text tables (CSV, "
                                f"TSV); this is read as {fmt}")
    if (fmt == "lists" and labels is not None) or (
            fmt == "chaosnli" and labels is not None and not isinstance(labels, LabelSet)):
        raise InvalidValueError(_fixed_labels(source.name, fmt))
    if fmt == "lewidi":  # a LeWiDi JSON split (2023/2025)
        return _read_lewidi(source, labels=labels, columns=columns, gold=gold, no_header=no_header,
                            missing=missing, duplicates=duplicates, max_count_bytes=max_count_bytes)
    if fmt == "lists":  # one JSON Lines row per item with a list of its labels (no annotators)
        used = [opt for opt, on in (("--no-header", no_header), ("--missing", bool(missing)),
                                    ("--gold", gold is not None)) if on]
        if used:
            raise InvalidValueError(f"{source.name} is a file of label lists (one row per item); "
                                    f"{', '.join(used)} do not apply to it")
        votes = read_label_lists(source, columns=columns, duplicates=duplicates)
        check_count_size(votes.n_items, votes.n_labels, source.name, limit=max_count_bytes)
        votes.read_info = ((votes.read_info or f"{source.name}: label lists")
                           + duplicates_note(votes, duplicates))
        return votes
    if fmt in TOOL_FORMATS:
        used = [opt for opt, on in (("no_header", no_header), ("missing", bool(missing)),
                                    ("gold", gold is not None)) if on]
        unknown = sorted(set(k for k, v in (columns or {}).items() if v)
                         - {"item", "label"})
        if used or unknown:
            raise InvalidValueError(
                f"{source.name} is a {fmt} export; {', '.join(used + unknown)} do not apply "
                "to it (name the item and label columns only)")
        votes = read_export(fmt, source, columns=columns, labels=labels, duplicates=duplicates,
                            sep=sep, flags=flags)
        check_count_size(votes.n_items, votes.n_labels, source.name, limit=max_count_bytes)
        votes.read_info = (getattr(votes, "read_info", None) or f"{source.name}: {fmt} export") + \
            duplicates_note(votes, duplicates)
        return votes
    if fmt == "chaosnli":
        used = [opt for opt, on in (("columns", bool(columns)), ("no_header", no_header),
                                    ("missing", bool(missing)), ("gold", gold is not None)) if on]
        if used:
            raise InvalidValueError(
                f"{source.name} is a ChaosNLI file (fixed fields uid and label_counter); "
                f"{', '.join(used)} (CLI: column options, --no-header, --missing, --gold) apply to "
                "long and wide tables only"
            )
        votes = read_chaosnli(source, labels=labels if isinstance(labels, LabelSet) else None)
        info = f"{source.name}: ChaosNLI JSON Lines"
    elif table_kind(source) == "jsonl" and looks_like_chaosnli(source):
        raise DataFormatError(f"{source.name} is a ChaosNLI file (its lines have a label_counter), "
                              f"not a {fmt} table; read it with --format chaosnli (or auto)")
    elif fmt == "wide":
        if no_header:
            raise InvalidValueError(f"{source.name}: --no-header reads long tables (item, "
                                    "annotator, label); a wide table needs its header")
        votes = read_wide(source, labels=labels, columns=columns, missing=missing, sep=sep)
        info = votes.read_info or f"{source.name}: wide table"
        if gold is not None:
            votes = attach_gold(votes, read_gold(gold, missing=missing))
    else:
        votes = read_long(source, columns=columns, labels=labels, gold=gold, duplicates=duplicates,
                          no_header=no_header, missing=missing, sep=sep)
        info = getattr(votes, "read_info", None) or f"{source.name}: long table ({table_kind(source)})"
    if note:
        info = f"{info} ({note})"
    check_count_size(votes.n_items, votes.n_labels, source.name, limit=max_count_bytes)
    votes.read_info = info + duplicates_note(votes, duplicates)
    return votes


def _read_counts(source: Input, *, format: str, columns: Mapping[str, str | None] | None,
                 labels: Any, gold: Any, duplicates: str, no_header: bool, missing: Sequence[str],
                 max_count_bytes: int, sep: str | None, flags: Any, item_ids: Any,
                 note: str | None = None) -> Votes:
    """``read_votes`` of counts or soft labels: an array, or a table of one column per label."""
    name = source.name
    array = is_array(source.name)
    fmt = format if format in ("counts", "soft") else "counts"
    if format not in ("auto", "counts", "soft"):
        raise DataFormatError(f"{name} is a NumPy array: read it with --format counts (vote "
                              f"counts) or --format soft (probabilities), not {format}")
    roles = sorted(f"--{k}-col" for k, v in (columns or {}).items() if v and k != "item")
    used = [opt for opt, on in (("--no-header", no_header), ("--gold", gold is not None),
                                ("--duplicates", duplicates != "error"),
                                ("--flags", flags is not None)) if on] + roles
    if array:
        used += [opt for opt, on in (("--item-col", bool((columns or {}).get("item"))),
                                     ("--sep", sep is not None),
                                     ("--missing", bool(missing))) if on]
    if used:
        what = "a NumPy array of" if array else "a table of"
        raise InvalidValueError(f"{name} is {what} {'probabilities' if fmt == 'soft' else 'counts'}"
                                f" (--format {fmt}; annotators unknown): {', '.join(used)} "
                                "do(es) not apply to it")
    if array:
        votes = read_count_array(source, soft=fmt == "soft", labels=labels, item_ids=item_ids)
    else:
        if item_ids is not None:
            raise InvalidValueError(f"{name}: --item-ids names the rows of an array; a table "
                                    "has its item column (--item-col)")
        votes = read_count_table(source, soft=fmt == "soft", labels=labels, columns=columns,
                                 missing=missing, sep=sep)
    check_count_size(votes.n_items, votes.n_labels, name, limit=max_count_bytes)
    if note:
        votes.read_info = f"{votes.read_info} ({note})"
    votes.duplicates_info = None
    return votes


def _fixed_labels(name: str, fmt: str) -> str:
    """The message for ``--labels`` on a format whose labels the file fixes."""
    return (f"{name}: --labels applies to tables and tool exports (long, wide, "
            f"{', '.join(TOOL_FORMATS)}); a {fmt} file's labels are read from the file")


def _read_lewidi(source: Input | str | os.PathLike, *, labels: Any, columns: Any, gold: Any,
                 no_header: bool, missing: Sequence[str], duplicates: DuplicatePolicy,
                 max_count_bytes: int) -> Votes:
    """``read_votes`` of a LeWiDi split file or folder: fixed fields, no column options."""
    name = source.name if isinstance(source, Input) else Path(source).name
    if columns or gold is not None or no_header or missing:
        raise InvalidValueError(f"{name}: a LeWiDi file has fixed fields; the column options "
                                "(--item-col, ...), --gold, --no-header and --missing do not "
                                "apply to it")
    if labels is not None and not isinstance(labels, LabelSet):
        raise InvalidValueError(_fixed_labels(name, "lewidi"))
    votes = read_lewidi(source, labels=labels if isinstance(labels, LabelSet) else None,
                        duplicates=duplicates)
    check_count_size(votes.n_items, votes.n_labels, votes.source, limit=max_count_bytes)
    return votes
def _gold_file_applies(path: Any, format: str,
                       columns: Mapping[str, str | None] | None, no_header: bool,
                       sep: str | None = None) -> bool:
    """Whether ``read_votes`` takes a separate gold file for this input (long and wide tables)."""
    if isinstance(path, pd.DataFrame) or is_partitioned(path):
        return True
    if str(path) == "-" or (str(path) in REGISTRY and not Path(path).exists()):
        return False  # standard input is read once; registered datasets take no gold file
    if format == "lewidi" and Path(path).is_dir():
        return False
    if format in ("counts", "soft") or is_array(path):
        return False  # refused by the counts reader, which names the option
    fmt = (sniff_format(Input(path, what="votes"), columns=columns, no_header=no_header, sep=sep)
           if format == "auto" else format)
    return fmt in ("long", "wide")


def _read_frame(df: pd.DataFrame, *, format: str, columns: Mapping[str, str | None] | None,
                labels: LabelSet | Sequence[Any] | None, gold: str | os.PathLike | None,
                duplicates: DuplicatePolicy, no_header: bool, missing: Sequence[str]) -> Votes:
    """``read_votes`` of a DataFrame: the columns detected as a file's, then
    :meth:`Votes.from_long` or :meth:`Votes.from_wide`."""
    name = "DataFrame"
    if format not in ("auto", "long", "wide"):
        raise InvalidValueError(f"a DataFrame is a long or wide table; format {format!r} reads "
                                "files (Python: format='auto', 'long' or 'wide')")
    if no_header:
        raise InvalidValueError("no_header applies to files; a DataFrame has its column names")
    frame = df.rename(columns=str) if not all(isinstance(c, str) for c in df.columns) else df
    names = list(frame.columns)
    if len(set(names)) != len(names):
        dup = sorted({c for c in names if names.count(c) > 1})
        raise SchemaError(f"{name}: column names must be unique; repeated {dup}")
    if missing:
        words = {str(w).strip() for w in missing}
        frame = frame.copy()
        for col in names:  # text columns only: the words are cell texts
            if frame[col].dtype == object or pd.api.types.is_string_dtype(frame[col]):
                text = frame[col].where(frame[col].map(lambda v: isinstance(v, str)))
                frame[col] = frame[col].mask(text.str.strip().isin(words))
    fmt, columns, note = frame_layout(frame.head(1000), name, fmt=format, columns=columns)
    given = dict(columns or {})
    if fmt == "wide":
        extra = sorted(k for k in given if k not in ("item", "gold"))
        if extra:
            raise InvalidValueError(f"a wide table names its item and gold columns only; got "
                                    f"roles {extra}")
        roles = detect_columns(names, ("item", "gold"), given=given, source=name)
        if roles["item"] is None:
            raise SchemaError(f"{name}: no item column; got columns {names}; name it (Python: "
                              "columns={'item': ...})")
        votes = Votes.from_wide(frame, item=roles["item"], labels=labels, gold=roles["gold"],
                                source=name)
        chosen = {"item": roles["item"], "gold": roles["gold"]}
        info = f"{name}: wide table, {votes.n_annotators} annotator columns"
    else:
        roles = detect_columns(names, given=given, source=name)
        for role in ("item", "label"):
            if roles[role] is None:
                raise SchemaError(f"{name}: no {role} column; got columns {names}; name it (Python: "
                                  f"columns={{'{role}': ...}})")
        if missing:
            skip = frame[roles["label"]].isna().to_numpy()
            if skip.any():
                warnings.warn(f"{name}: {int(skip.sum())} row(s) whose label is a missing value "
                              f"({sorted(missing)} or empty) were skipped",
                              DegenerateInputWarning, stacklevel=3)
                frame = frame[~skip]
        in_frame_gold = roles["gold"] if gold is None else None
        if labels is None:  # the votes' labels: gold is coded against them, never added
            labels = LabelSet.infer(frame[roles["label"]])
        votes = Votes.from_long(frame, item=roles["item"], label=roles["label"],
                                annotator=roles["annotator"], labels=labels, gold=in_frame_gold,
                                duplicates=duplicates, source=name)
        chosen = roles
        info = f"{name}: long table"
        warn_unused_columns(names, roles, given, name)
    if gold is not None:
        votes = attach_gold(votes, read_gold(gold, missing=missing))
    used = ", ".join(f"{role}={col!r}" for role, col in chosen.items() if col is not None)
    votes.read_info = f"{info}; columns {used}" + (f" ({note})" if note else "")
    return votes


def duplicates_note(votes: Votes, duplicates: DuplicatePolicy) -> str:
    """What was done with repeated (item, annotator) votes, for ``read_info`` ("" when the
    default refused none); warns when votes were left out, and sets
    ``votes.duplicates_info`` (``policy``, ``repeated_pairs``, ``votes_removed``; None for
    the default, which refuses them).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": ["q", "q", "r"], "annotator": ["a", "a", "a"],
    ...                    "label": ["x", "y", "x"]})
    >>> duplicates_note(Votes.from_long(df, duplicates="keep"), "keep")
    '; repeated (item, annotator) pairs: 1, all votes kept (--duplicates keep: multi-label)'
    """
    votes.duplicates_info = None
    if duplicates == "error":
        return ""
    if votes.annotator_index is None:
        votes.duplicates_info = {"policy": duplicates, "repeated_pairs": None, "votes_removed": 0}
        return f"; --duplicates {duplicates}: annotators unknown, no (item, annotator) pairs"
    if duplicates == "keep":
        n_pairs = 0
        if votes.has_duplicate_pairs():
            key = pd.Series(votes.pair_keys())
            n_pairs = int(key[key.duplicated(keep=False)].nunique())
        votes.duplicates_info = {"policy": "keep", "repeated_pairs": n_pairs, "votes_removed": 0}
        return (f"; repeated (item, annotator) pairs: {n_pairs}, all votes kept "
                "(--duplicates keep: multi-label)")
    n_pairs = int(getattr(votes, "n_duplicate_pairs", 0))
    removed = int(getattr(votes, "n_duplicates_removed", 0))
    votes.duplicates_info = {"policy": duplicates, "repeated_pairs": n_pairs,
                             "votes_removed": removed}
    if removed:
        warnings.warn(f"{votes.source}: {n_pairs} repeated (item, annotator) pair(s); the "
                      f"{duplicates} vote of each kept, {removed} vote(s) left out "
                      f"(--duplicates {duplicates})", DegenerateInputWarning, stacklevel=3)
    return (f"; repeated (item, annotator) pairs: {n_pairs}, the {duplicates} vote of each kept, "
            f"{removed} vote(s) left out (--duplicates {duplicates})")


def check_count_size(n_items: int, n_labels: int, name: str, *, limit: int = MAX_COUNT_BYTES) -> None:
    """Refuse an item x label count matrix larger than ``limit`` bytes, with the estimate.

    Raises
    ------
    InvalidValueError
        ``n_items * n_labels * 8`` over ``limit``.
    """
    need = int(n_items) * int(n_labels) * 8
    if need > limit:
        raise InvalidValueError(
            f"{name}: {n_items} items x {n_labels} distinct labels need a {need / 1024**3:.1f} GiB "
            f"count matrix (limit {limit / 1024**3:.1f} GiB); check the label column (is it a "
            "free-text or id column? --label-col names the right one; Python: max_count_bytes= "
            "allows more)"
        )


def votes_table(votes: Votes) -> Any:
    """Votes as the long table :func:`write_votes` writes (a pandas DataFrame).

    Columns: ``item``, ``annotator`` (when known), ``label`` (names), and
    ``gold`` when the votes carry gold labels; every value is text, exactly as
    it reads back.
    """
    df = votes.to_long()
    df.attrs = {}
    for col in ("item", "annotator", "label"):
        if col in df:
            df[col] = df[col].astype(str)
    if votes.gold is not None:
        names = [*votes.labels.names, ""]  # codes -1 and -2 -> blank
        df["gold"] = np.asarray(names, dtype=object)[np.maximum(votes.gold, -1)[votes.item_index]]
        warn_unknown_gold_dropped(votes.gold, votes.source)
    return df


def write_votes(votes: Votes, path: str | os.PathLike) -> Path:
    """Write votes as a long table (CSV, TSV, JSON Lines or Parquet by extension), atomically.

    The table is :func:`votes_table`; values are written exactly (no spreadsheet
    escaping), so the file reads back as the same votes.

    Raises
    ------
    DataFormatError
        An extension other than .csv, .tsv, .jsonl or .parquet.
    OutputError
        The file cannot be written (missing or read-only directory, full disk).
    """
    return write_table(votes_table(votes), Path(path))
