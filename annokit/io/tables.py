"""Table files into pandas frames: CSV, TSV, JSON Lines (or a JSON array) and Parquet.

The parsing half of the input boundary (:mod:`annokit.io.source` opens and decodes): values
are kept as written, only blank cells (and declared missing words) are missing, header names
must be unique, and every rejected value is reported with its file, line (or row) and column.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from annokit.errors import DataFormatError, InputError, InvalidValueError
from annokit.io.source import Input, check_header, json_object_lines, loads_json

__all__ = [
    "cell_where",
    "check_present",
    "check_scalars",
    "is_text",
    "read_columns",
    "read_table",
    "table_kind",
]

_SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "tsv", ".jsonl": "jsonl",
             ".ndjson": "jsonl", ".json": "jsonl", ".parquet": "parquet", ".pq": "parquet"}


def table_kind(path: Path | Input, data: bytes | None = None) -> str:
    suffix = path.suffix if isinstance(path, Input) else path.suffix.lower()
    kind = _SUFFIXES.get(suffix)
    if kind is None and isinstance(path, Input) and path.path is None:
        return _sniff_kind(path.data)
    if kind is None:
        name = path.name
        raise DataFormatError(
            f"{name}: unknown file type {suffix!r}; expected one of {sorted(_SUFFIXES)}"
        )
    return kind


def _sniff_kind(data: bytes) -> str:
    """The table kind of standard input, from its content."""
    if data.startswith(b"PAR1"):
        return "parquet"
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if head in (b"{", b"["):
        return "jsonl"
    first = data.split(b"\n", 1)[0]
    return "tsv" if b"\t" in first and b"," not in first else "csv"


def is_text(values: pd.Series) -> bool:
    """True for object and string columns (pandas 3 reads text as ``str`` dtype)."""
    return values.dtype == object or pd.api.types.is_string_dtype(values.dtype)


def _blank_to_na(df: pd.DataFrame, missing: Sequence[str]) -> pd.DataFrame:
    """Blank cells (empty once stripped) and the declared ``missing`` words become NaN."""
    words = sorted({str(m).strip() for m in missing} | {""})
    for col in df.columns:
        values = df[col]
        if not is_text(values):
            continue
        if values.dtype == object:  # JSON values: text, numbers, booleans, lists, ...
            stripped = values.map(lambda v: v.strip() if isinstance(v, str) else None)
        else:
            stripped = values.str.strip()
        na = np.array(stripped.isin(words).fillna(False), dtype=bool)
        if na.any():
            df[col] = values.mask(na)
    return df


def _read_jsonl(text: str, name: str) -> tuple[pd.DataFrame, list[int]]:
    """Rows of a JSON Lines file (or a JSON array of objects) and the line of each row."""
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    if text.lstrip().startswith("["):
        whole = loads_json(text, name)
        if not isinstance(whole, list):
            raise DataFormatError(f"{name}: expected a JSON array of objects")
        for i, row in enumerate(whole):
            if not isinstance(row, dict):
                raise DataFormatError(f"element {i} of {name}: expected a JSON object, got "
                                      f"{type(row).__name__}")
            rows.append(row)
            lines.append(0)
    else:
        rows, lines = json_object_lines(text, name)
    keys: dict[str, None] = {}
    for row in rows:
        keys.update(dict.fromkeys(row))
    columns = check_header(list(keys), name)
    data = {col: [row.get(key) for row in rows] for key, col in zip(keys, columns)}
    df = pd.DataFrame({c: pd.Series(v, dtype=object) for c, v in data.items()},
                      index=pd.RangeIndex(len(rows)))
    return df, lines


def read_table(path: str | os.PathLike | Input, *, no_header: bool = False,
               missing: Sequence[str] = ()) -> pd.DataFrame:
    """Read a CSV / TSV / JSON Lines / Parquet file into a DataFrame of strings.

    Ids and labels are read as strings exactly as written (no ``"007" -> 7`` and no
    ``"NA" -> NaN`` surprises): only blank cells, and the words in ``missing``, are missing
    values (NaN). Parquet keeps its own types. Header names are stripped of surrounding
    blanks and must be unique. The frame's ``attrs["annokit_line_offset"]`` gives the file line
    of data row 0 (2 for files with a header line, 1 for headerless files, 0 when rows are
    counted, not lines); ``attrs["annokit_lines"]`` the line of each JSON Lines row.

    Parameters
    ----------
    path : path-like
        The file, or ``-`` for standard input (its type then sniffed from its content).
    no_header : bool, default=False
        CSV/TSV without a header line: columns are named ``column1``, ``column2``, ...
    missing : sequence of str
        Cell texts that mean "no value", besides the empty cell.
    """
    source = Input(path, what="votes")
    name = source.name
    kind = table_kind(source)
    if no_header and kind not in ("csv", "tsv"):
        raise InvalidValueError(f"{name}: --no-header applies to CSV and TSV files; {kind} files "
                                "name their columns")
    try:
        if kind in ("csv", "tsv"):
            text = source.text
            if not text.strip():
                raise DataFormatError(f"{name} is empty: no header line")
            df = pd.read_csv(io.StringIO(text), sep="," if kind == "csv" else "\t", dtype=str,
                             header=None, keep_default_na=False, na_filter=False,
                             quoting=3 if kind == "tsv" else 0, skip_blank_lines=True)
            if no_header:
                df.columns = [f"column{j + 1}" for j in range(df.shape[1])]
                offset = 1
            else:
                header = ["" if pd.isna(c) else c for c in df.iloc[0].tolist()]
                df = df.iloc[1:].reset_index(drop=True)
                df.columns = check_header(header, name)
                offset = 2
        elif kind == "jsonl":
            df, lines = _read_jsonl(source.text, name)
            df.attrs["annokit_lines"] = lines
            offset = 0 if not lines or lines[0] == 0 else 1
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pq.read_table(pa.BufferReader(source.data))
            names = check_header(table.column_names, name)
            df = table.to_pandas()
            df.columns = names
            offset = 0
    except InputError:
        raise
    except (ValueError, pd.errors.ParserError, OSError, OverflowError, TypeError,
            csv.Error) as exc:
        msg = " ".join(str(exc).split())
        raise DataFormatError(f"{name}: cannot parse as {kind}: {msg}") from None
    except Exception as exc:  # pyarrow.ArrowException subclasses that are not ValueError
        import pyarrow as pa

        if isinstance(exc, pa.ArrowException):
            msg = " ".join(str(exc).split())
            raise DataFormatError(f"{name}: cannot parse as {kind}: {msg}") from None
        raise
    df = _blank_to_na(df, missing)
    df.attrs["annokit_line_offset"] = offset
    df.attrs["annokit_source"] = name
    return df


def read_columns(path: str | os.PathLike | Input) -> list[str]:
    """Column names of a table file, reading only its header (or schema, or first JSON line)."""
    source = Input(path, what="votes")
    kind = table_kind(source)
    name = source.name
    try:
        if kind in ("csv", "tsv"):
            first = source.first_line()
            if not first:
                raise DataFormatError(f"{name} is empty: no header line")
            frame = pd.read_csv(io.StringIO(first), sep="," if kind == "csv" else "\t", header=None,
                                dtype=str, keep_default_na=False, na_filter=False,
                                quoting=3 if kind == "tsv" else 0)
            return check_header(frame.iloc[0].tolist() if len(frame) else [], name)
        if kind == "jsonl":
            first = source.first_line()
            if first.lstrip().startswith("["):
                return list(read_table(source).columns)
            row = loads_json(first, f"line 1 of {name}")
            return check_header(list(row), name) if isinstance(row, dict) else []
        import pyarrow as pa
        import pyarrow.parquet as pq

        if source.path is not None:
            return check_header(pq.read_schema(source.path).names, name)
        return check_header(pq.read_schema(pa.BufferReader(source.data)).names, name)
    except InputError:
        raise
    except (OSError, ValueError, pd.errors.ParserError, csv.Error) as exc:  # ArrowInvalid
        msg = " ".join(str(exc).split())
        raise DataFormatError(f"{name}: cannot parse as {kind}: {msg}") from None


def check_scalars(df: pd.DataFrame, path: Path | Input | str, columns: Sequence[str]) -> None:
    """Ids and labels must be text, numbers or booleans: refuse lists, objects and bytes."""
    for col in columns:
        values = df[col]
        if values.dtype != object:
            continue
        bad = values.map(lambda v: isinstance(v, (list, dict, tuple, set, np.ndarray, bytes))
                         ).to_numpy(dtype=bool)
        if bad.any():
            row = int(np.argmax(bad))
            value = values.iloc[row]
            kind = {list: "a list", dict: "an object", tuple: "a list", np.ndarray: "a list",
                    bytes: "bytes", set: "a set"}.get(type(value), type(value).__name__)
            raise DataFormatError(f"{cell_where(path, df, row, col)}: expected text or a number; got "
                                  f"{kind} ({_short(value)})")


def _short(value: Any) -> str:
    text = repr(value.tolist() if isinstance(value, np.ndarray) else value)
    return text if len(text) <= 60 else text[:57] + "..."


def cell_where(path: Path | Input | str, df: pd.DataFrame, row: int, column: str) -> str:
    lines = df.attrs.get("annokit_lines")
    offset = df.attrs.get("annokit_line_offset", 0)
    if lines and lines[row]:
        place = f"line {lines[row]}"
    else:
        place = f"line {row + offset}" if offset else f"row {row}"
    name = path if isinstance(path, str) else path.name
    return f"{place} of {name}, column {column!r}"


def check_present(df: pd.DataFrame, path: Path | Input, columns: Sequence[str],
                   what: Sequence[str]) -> None:
    for col, role in zip(columns, what):
        values = df[col]
        blank = np.array(values.isna(), dtype=bool)
        if values.dtype == object:  # JSON values
            blank |= np.array(values.map(lambda v: isinstance(v, str) and not v.strip()), dtype=bool)
        elif is_text(values):
            blank |= np.array(values.str.strip().eq("").fillna(False), dtype=bool)
        if blank.any():
            row = int(np.argmax(blank))
            raise DataFormatError(f"{cell_where(path, df, row, col)}: empty {role}")


