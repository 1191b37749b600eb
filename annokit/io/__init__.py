"""Loaders and writers: files in, :class:`~annokit.core.votes.Votes` out.

``read_votes`` is the single entry point the CLI uses; it dispatches on
``format`` ("auto" sniffs the file) through one table of formats, each with its reader
and the options it accepts (:mod:`annokit.io.dispatch`): ChaosNLI JSON Lines, long tables
(one row per vote), wide tables (one column per annotator), annotation-tool exports, LeWiDi
splits, label lists, count and probability tables and arrays.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from annokit.core.gold import warn_unknown_gold_dropped
from annokit.core.votes import Votes
from annokit.io.argilla import read_argilla
from annokit.io.arrow import VoteCounts, count_batches, votes_from_arrow
from annokit.io.atomic import write_table
from annokit.io.chaosnli import read_chaosnli
from annokit.io.counts import read_count_array, read_count_table
from annokit.io.dispatch import FORMATS, read_votes
from annokit.io.dispatch import Format as Format  # the type of read_votes' format
from annokit.io.dispatch import sniff_format as sniff_format
from annokit.io.hf import from_hf, to_hf
from annokit.io.hf_responses import from_hf_responses
from annokit.io.labelstudio import read_labelstudio
from annokit.io.lewidi import read_lewidi
from annokit.io.lists import read_label_lists
from annokit.io.mturk import read_mturk
from annokit.io.partitions import partition_files
from annokit.io.prodigy import read_prodigy
from annokit.io.ratings import read_ratings
from annokit.io.read_checks import MAX_COUNT_BYTES, check_count_size, duplicates_note
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
