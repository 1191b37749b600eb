"""Atomic file writes: write beside the target, then ``os.replace`` into place.

A reader never sees a half-written file, and a failed write leaves the old file
(if any) untouched and no temporary file behind.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from annokit.errors import DataFormatError

__all__ = ["atomic_path", "check_table_path", "write_bytes_atomic", "write_table",
           "write_text_atomic"]

#: Table writers by file extension; ``.jsonl`` / ``.ndjson`` only where ``jsonl=True``.
_TABLE_WRITERS = {
    ".csv": lambda df, tmp: df.to_csv(tmp, index=False),
    ".tsv": lambda df, tmp: df.to_csv(tmp, sep="\t", index=False),
    ".tab": lambda df, tmp: df.to_csv(tmp, sep="\t", index=False),
    ".parquet": lambda df, tmp: df.to_parquet(tmp, index=False),
    ".jsonl": lambda df, tmp: df.to_json(tmp, orient="records", lines=True),
    ".ndjson": lambda df, tmp: df.to_json(tmp, orient="records", lines=True),
}


@contextmanager
def atomic_path(path: str | os.PathLike, *, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path in the target's folder; move it onto ``path`` on success.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("done")
    >>> target.read_text(), sorted(p.name for p in target.parent.iterdir())
    ('done', ['out.txt'])
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".",
                               prefix=f".{path.name}.", suffix=suffix)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write UTF-8 text to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write bytes to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def check_table_path(path: str | os.PathLike, *, jsonl: bool = True) -> Path:
    """Raise unless ``path`` ends in a table extension :func:`write_table` can write.

    Raises
    ------
    DataFormatError
        "x.txt: cannot write '.txt'; use .csv, .tsv, .jsonl or .parquet".

    Examples
    --------
    >>> check_table_path("labels.tsv").name
    'labels.tsv'
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in _TABLE_WRITERS or (not jsonl and suffix in (".jsonl", ".ndjson")):
        choices = ".csv, .tsv, .jsonl or .parquet" if jsonl else ".csv, .tsv or .parquet"
        raise DataFormatError(f"{path.name}: cannot write {suffix!r}; use {choices}")
    return path


def write_table(df: Any, path: str | os.PathLike, *, jsonl: bool = True) -> Path:
    """Write a DataFrame as CSV, TSV, JSON Lines or Parquet by extension, atomically.

    Parameters
    ----------
    df : pandas.DataFrame
    path : path-like
        ``.csv``, ``.tsv`` (or ``.tab``), ``.parquet``, and with ``jsonl=True``
        ``.jsonl`` (or ``.ndjson``).
    jsonl : bool, default=True
        Whether JSON Lines is accepted.

    Raises
    ------
    DataFormatError
        Any other extension (see :func:`check_table_path`).
    """
    path = check_table_path(path, jsonl=jsonl)
    with atomic_path(path) as tmp:
        _TABLE_WRITERS[path.suffix.lower()](df, tmp)
    return path
