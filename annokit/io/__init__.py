"""Loaders and writers: files in, :class:`~annokit.core.votes.Votes` out.

``read_votes`` is the single entry point the CLI uses; it dispatches on
``format`` ("auto" sniffs the file): ChaosNLI JSON Lines, long tables (one
row per vote) or wide tables (one column per annotator).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from annokit.core.checks import check_option
from annokit.core.gold import warn_unknown_gold_dropped
from annokit.core.votes import DuplicatePolicy, LabelSet, Votes
from annokit.errors import DataFormatError, InvalidValueError
from annokit.io.arrow import VoteCounts, count_batches, votes_from_arrow
from annokit.io.atomic import write_table
from annokit.io.chaosnli import looks_like_chaosnli, read_chaosnli
from annokit.io.hf import from_hf, to_hf
from annokit.io.hf_responses import from_hf_responses
from annokit.io.labelstudio import looks_like_labelstudio_file, read_labelstudio
from annokit.io.lewidi import looks_like_lewidi, read_lewidi
from annokit.io.mturk import looks_like_mturk, read_mturk
from annokit.io.ratings import apply_scale, read_ratings
from annokit.io.registry import REGISTRY, dataset_path, list_datasets, load_dataset
from annokit.io.source import Input
from annokit.io.tables import table_kind
from annokit.io.tabular import (
    COLUMN_OPTIONS,
    attach_gold,
    detect_columns,
    read_columns,
    read_gold,
    read_long,
    read_table,
    read_wide,
)

__all__ = [
    "FORMATS",
    "MAX_COUNT_BYTES",
    "REGISTRY",
    "VoteCounts",
    "attach_gold",
    "check_count_size",
    "count_batches",
    "dataset_path",
    "detect_columns",
    "from_hf",
    "from_hf_responses",
    "list_datasets",
    "load_dataset",
    "read_chaosnli",
    "read_columns",
    "read_labelstudio",
    "read_lewidi",
    "read_mturk",
    "read_ratings",
    "read_gold",
    "read_long",
    "read_table",
    "read_votes",
    "read_wide",
    "to_hf",
    "votes_from_arrow",
    "votes_table",
    "write_votes",
]

Format = Literal["auto", "chaosnli", "long", "wide", "mturk", "labelstudio", "lewidi"]
FORMATS = ("auto", "chaosnli", "long", "wide", "mturk", "labelstudio", "lewidi")


#: Largest dense item x label count matrix (bytes of int64) a read accepts; see ``read_votes``.
MAX_COUNT_BYTES = 2 * 1024**3

_FORMAT_HINT = "--format (chaosnli, long, wide, mturk or labelstudio)"


def sniff_format(path: str | os.PathLike | Input, *,
                 columns: Mapping[str, str | None] | None = None, no_header: bool = False) -> str:
    """Guess the format from a file's extension, first line and columns.

    "chaosnli" (JSON Lines with ``label_counter``), "labelstudio" (a JSON list of tasks with
    ``annotations``), "mturk" (a CSV with ``HITId``, ``WorkerId`` and ``Answer.*`` columns),
    "long" or "wide".

    Raises
    ------
    DataFormatError
        The columns fit no layout, or fit two (the message names both and ``--format``).
    """
    source = Input(path, what="votes")
    if no_header:
        return "long"
    if table_kind(source) == "jsonl" and looks_like_chaosnli(source):
        return "chaosnli"
    if looks_like_lewidi(source):
        return "lewidi"
    if table_kind(source) == "jsonl" and looks_like_labelstudio_file(source):
        return "labelstudio"
    names = read_columns(source)
    if looks_like_mturk(names) and {k for k, v in (columns or {}).items() if v} <= {"item", "label"}:
        return "mturk"
    given = dict(columns or {})
    if {"annotator", "label"} & {k for k, v in given.items() if v}:
        return "long"
    roles = detect_columns(names, given=given, source=source.name)
    if roles["item"] is not None and roles["label"] is not None:
        return "long"
    if roles["item"] is not None and len(names) > 1:
        return "wide"
    raise DataFormatError(
        f"{source.name}: cannot tell the format from columns {names}: a long table needs item "
        f"and label columns, a wide table an item column and one column per annotator; pass "
        f"{_FORMAT_HINT} and name the columns ({COLUMN_OPTIONS})"
    )


def read_votes(
    path: str | os.PathLike,
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
) -> Votes:
    """Read votes from a file in any supported format.

    Every input goes through one boundary (:mod:`annokit.io.source`): a regular file or
    ``-`` for standard input (FIFOs, devices and directories are refused), UTF-8 with or
    without a byte-order mark, strict JSON, unique column names. The layout chosen is stated
    in ``votes.read_info`` (e.g. ``"votes.csv: long table (csv); item='item', ..."``).

    Parameters
    ----------
    path : path-like
        A ChaosNLI ``.jsonl`` file, or a CSV / TSV / JSON Lines / Parquet table,
        ``-`` for standard input, or the name of a registered dataset (``"chaosnli-snli"``),
        which is then loaded from the cache.
    format : {"auto", "chaosnli", "long", "wide", "mturk", "labelstudio"}
        "auto" sniffs the file and refuses a file that fits no layout. "mturk" reads
        Mechanical Turk batch results (:func:`annokit.io.mturk.read_mturk`), "labelstudio"
        a Label Studio JSON export (:func:`annokit.io.labelstudio.read_labelstudio`); for
        both, ``columns`` may name only the ``item`` and ``label`` columns (MTurk:
        ``Input.*``/``Answer.*`` names or families; Label Studio: a ``data`` field and the
        control's ``from_name``). "lewidi" reads a LeWiDi 2023/2025 split file
        (:func:`annokit.io.lewidi.read_lewidi`, which also takes a folder and ``split=``).
    columns : mapping, optional
        Column roles (``item``, ``annotator``, ``label``, ``gold``) for long tables, and
        ``item`` and ``gold`` for wide tables (see :func:`annokit.io.read_long`). Columns not
        named are detected from common spellings; two columns that could fill one role are
        refused.
    labels : LabelSet or sequence of names, optional
    gold : path-like, optional
        A separate gold file for long and wide tables; a blank gold cell means no gold.
    duplicates : {"error", "first", "last", "keep"}
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

    Raises
    ------
    DataFormatError
        Unreadable, ambiguous or malformed input; the message names the file, line or row
        and column.
    SchemaError
        Missing, repeated or conflicting columns.
    InvalidValueError
        Options that do not apply to the format, or a count matrix over ``max_count_bytes``.
    """
    check_option("format", format, FORMATS)
    if scale is not None:
        # a separate gold file is coded against the scaled labels (LabelSet.encode on the
        # scale, as the votes were), so it is attached after the scale
        later = gold is not None and _gold_file_applies(path, format, columns, no_header)
        votes = read_votes(path, format=format, columns=columns, labels=labels,
                           gold=None if later else gold, duplicates=duplicates,
                           no_header=no_header, missing=missing, max_count_bytes=max_count_bytes)
        votes = apply_scale(votes, scale, declared=labels is not None)
        return attach_gold(votes, read_gold(gold, missing=missing)) if later else votes
    if str(path) in REGISTRY and not Path(path).exists():
        return load_dataset(str(path))
    source = path if format == "lewidi" and Path(path).is_dir() else Input(path, what="votes")
    fmt = sniff_format(source, columns=columns, no_header=no_header) if format == "auto" else format
    if fmt == "lewidi":  # LeWiDi JSON (2023/2025), or its folder (read_lewidi(folder, split=...))
        if columns or gold is not None or no_header or missing:
            raise InvalidValueError(f"{source}: a LeWiDi file has fixed fields; column options, "
                                    "gold, no_header and missing do not apply to it")
        return read_lewidi(source, labels=labels if isinstance(labels, LabelSet) else None)
    if fmt in ("mturk", "labelstudio"):
        used = [opt for opt, on in (("no_header", no_header), ("missing", bool(missing)),
                                    ("gold", gold is not None)) if on]
        unknown = sorted(set(k for k, v in (columns or {}).items() if v)
                         - {"item", "label"})
        if used or unknown:
            raise InvalidValueError(
                f"{source.name} is a {fmt} export; {', '.join(used + unknown)} do not apply "
                "to it (name the item and label columns only)")
        cols = dict(columns or {})
        if fmt == "mturk":
            votes = read_mturk(source, item=cols.get("item"), label=cols.get("label"),
                               labels=labels, duplicates=duplicates)
        else:
            votes = read_labelstudio(source, item=cols.get("item"), from_name=cols.get("label"),
                                     labels=labels, duplicates=duplicates)
        check_count_size(votes.n_items, votes.n_labels, source.name, limit=max_count_bytes)
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
        votes = read_wide(source, labels=labels, columns=columns, missing=missing)
        if gold is not None:
            votes = attach_gold(votes, read_gold(gold, missing=missing))
        info = f"{source.name}: wide table ({table_kind(source)}), {votes.n_annotators} annotator columns"
    else:
        votes = read_long(source, columns=columns, labels=labels, gold=gold, duplicates=duplicates,
                          no_header=no_header, missing=missing)
        info = getattr(votes, "read_info", None) or f"{source.name}: long table ({table_kind(source)})"
    check_count_size(votes.n_items, votes.n_labels, source.name, limit=max_count_bytes)
    votes.read_info = info
    return votes


def _gold_file_applies(path: str | os.PathLike, format: str,
                       columns: Mapping[str, str | None] | None, no_header: bool) -> bool:
    """Whether ``read_votes`` takes a separate gold file for this input (long and wide tables)."""
    if str(path) == "-" or (str(path) in REGISTRY and not Path(path).exists()):
        return False  # standard input is read once; registered datasets take no gold file
    if format == "lewidi" and Path(path).is_dir():
        return False
    fmt = (sniff_format(Input(path, what="votes"), columns=columns, no_header=no_header)
           if format == "auto" else format)
    return fmt in ("long", "wide")


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
            "free-text or id column?) or pass max_count_bytes= to allow more"
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
