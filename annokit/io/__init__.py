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
from annokit.core.votes import DuplicatePolicy, LabelSet, Votes
from annokit.errors import DataFormatError
from annokit.io.arrow import VoteCounts, count_batches, votes_from_arrow
from annokit.io.atomic import write_table
from annokit.io.chaosnli import looks_like_chaosnli, read_chaosnli
from annokit.io.hf import from_hf, to_hf
from annokit.io.registry import REGISTRY, dataset_path, list_datasets, load_dataset
from annokit.io.tabular import (
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
    "REGISTRY",
    "VoteCounts",
    "attach_gold",
    "count_batches",
    "dataset_path",
    "detect_columns",
    "from_hf",
    "list_datasets",
    "load_dataset",
    "read_chaosnli",
    "read_columns",
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

Format = Literal["auto", "chaosnli", "long", "wide"]
FORMATS = ("auto", "chaosnli", "long", "wide")


def sniff_format(path: str | os.PathLike) -> str:
    """Guess "chaosnli", "long" or "wide" from a file's extension and columns."""
    path = Path(path)
    if path.suffix.lower() in (".jsonl", ".json", ".ndjson") and looks_like_chaosnli(path):
        return "chaosnli"
    columns = read_columns(path)
    roles = detect_columns(columns)
    if roles["item"] is not None and roles["label"] is not None:
        return "long"
    if roles["item"] is not None and len(columns) > 1:
        return "wide"
    raise DataFormatError(
        f"{path.name}: cannot tell the format from columns {columns}; pass --format "
        "(chaosnli, long or wide) and name the columns"
    )


def read_votes(
    path: str | os.PathLike,
    *,
    format: Format = "auto",
    columns: Mapping[str, str | None] | None = None,
    labels: LabelSet | Sequence[Any] | None = None,
    gold: str | os.PathLike | None = None,
    duplicates: DuplicatePolicy = "error",
) -> Votes:
    """Read votes from a file in any supported format.

    Parameters
    ----------
    path : path-like
        A ChaosNLI ``.jsonl`` file, or a CSV / TSV / JSON Lines / Parquet table,
        or the name of a registered dataset (``"chaosnli-snli"``), which is then
        loaded from the cache.
    format : {"auto", "chaosnli", "long", "wide"}
    columns : mapping, optional
        Column roles for long files (see :func:`annokit.io.read_long`).
    labels : LabelSet or sequence of names, optional
    gold : path-like, optional
        A separate gold file for long files.
    duplicates : {"error", "first", "last", "keep"}
    """
    check_option("format", format, FORMATS)
    if str(path) in REGISTRY and not Path(path).exists():
        return load_dataset(str(path))
    path = Path(path)
    if not path.is_file():
        raise DataFormatError(f"{path}: no such file")
    fmt = sniff_format(path) if format == "auto" else format
    if fmt == "chaosnli":
        return read_chaosnli(path, labels=labels if isinstance(labels, LabelSet) else None)
    if fmt == "wide":
        votes = read_wide(path, labels=labels)
        if gold is not None:
            votes = attach_gold(votes, read_gold(gold))
        return votes
    return read_long(path, columns=columns, labels=labels, gold=gold, duplicates=duplicates)


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
        names = [*votes.labels.names, ""]
        df["gold"] = np.asarray(names, dtype=object)[votes.gold[votes.item_index]]
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
