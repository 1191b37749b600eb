"""Table formats of the files annokit writes (the CLI's ``--out-format``), and what was written.

:func:`table_format` decides the format of an output table: the one ``--out-format`` names, or
else the one the path's extension names; :func:`output_info` and :func:`describe_output` state
what a command wrote (its ``--json`` key ``output`` and its ``wrote ...`` line). The writers
are :func:`annokit.io.atomic.write_table` (one file) and, on Dask,
:func:`annokit.scale.write.write_table_dask` (one file, or a Parquet dataset).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from annokit.errors import DataFormatError

__all__ = ["TABLE_FORMATS", "describe_output", "output_info", "table_format"]

PathArg = str | os.PathLike

#: Table formats (the CLI's ``--out-format``) and the extensions that name each one.
TABLE_FORMATS: dict[str, tuple[str, ...]] = {
    "csv": (".csv",), "tsv": (".tsv", ".tab"), "jsonl": (".jsonl", ".ndjson"),
    "parquet": (".parquet", ".pq"),
}
_FORMAT_NAMES = {"csv": "CSV", "tsv": "TSV", "jsonl": "JSON Lines", "parquet": "Parquet"}


def table_format(path: PathArg, format: str | None = None, *, jsonl: bool = True) -> str:
    """The format a table is written in at ``path``: ``format`` (the CLI's ``--out-format``)
    or, without it, the one the extension names.

    Raises
    ------
    DataFormatError
        No ``format`` and an extension that names none (the message names ``--out-format``),
        a ``format`` the extension contradicts (``labels.csv`` as Parquet), or JSON Lines
        where ``jsonl`` is False.

    Examples
    --------
    >>> table_format("labels.tsv"), table_format("labels", "parquet"), table_format("x.dat", "csv")
    ('tsv', 'parquet', 'csv')
    """
    path = Path(path)
    suffix = path.suffix.lower()
    named = next((f for f, exts in TABLE_FORMATS.items() if suffix in exts), None)
    allowed = [f for f in TABLE_FORMATS if jsonl or f != "jsonl"]
    if format is None:
        if named in allowed:
            return str(named)
        choices = ", ".join(TABLE_FORMATS[f][0] for f in allowed[:-1]) + f" or .{allowed[-1]}"
        raise DataFormatError(f"{path.name}: cannot write {suffix!r}; use {choices}, or name the "
                              f"format with --out-format ({'|'.join(allowed)})")
    if format not in allowed:
        raise DataFormatError(f"{path.name}: --out-format {format} is not written here; use "
                              f"{', '.join(allowed)}")
    if named is not None and named != format:
        raise DataFormatError(f"{path.name}: its extension {suffix} names {named}, --out-format "
                              f"{format}; give a path ending in {TABLE_FORMATS[format][0]} (or "
                              "with no table extension)")
    return format


def output_info(path: PathArg, format: str, n_rows: int | None, *,
                n_files: int | None = None) -> dict[str, Any]:
    """What a command wrote, for its ``--json`` output (key ``output``) and its ``wrote``
    line (:func:`describe_output`): ``path``, ``format`` (csv, tsv, jsonl or parquet),
    ``layout`` ("file", or "dataset": a directory of ``n_files`` Parquet files), ``n_files``
    and ``n_rows``.

    Examples
    --------
    >>> describe_output(output_info("labels", "parquet", 10_000_000, n_files=100))
    'labels/ (Parquet dataset, 100 files, 10,000,000 rows)'
    >>> describe_output(output_info("labels.csv", "csv", 90))
    'labels.csv (CSV, 90 rows)'
    """
    return {"path": os.fspath(path), "format": format,
            "layout": "file" if n_files is None else "dataset",
            "n_files": 1 if n_files is None else int(n_files),
            "n_rows": None if n_rows is None else int(n_rows)}


def describe_output(info: Mapping[str, Any]) -> str:
    """The ``wrote ...`` text of :func:`output_info`."""
    n = info["n_rows"]
    rows = "" if n is None else f", {n:,} row{'' if n == 1 else 's'}"
    name = _FORMAT_NAMES[info["format"]]
    if info["layout"] == "dataset":
        files = f"{info['n_files']:,} file{'s' if info['n_files'] != 1 else ''}"
        return f"{str(info['path']).rstrip('/')}/ ({name} dataset, {files}{rows})"
    return f"{info['path']} ({name}{rows})"
