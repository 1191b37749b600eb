"""Table files into pandas frames: CSV, TSV, JSON Lines (or a JSON array) and Parquet.

The parsing half of the input boundary (:mod:`annokit.io.source` opens and decodes): values
are kept as written, only blank cells (and declared missing words) are missing, header names
must be unique, and every rejected value is reported with its file, line (or row) and column.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from annokit.errors import DataFormatError, InputError, InvalidValueError, Option
from annokit.io.delimited import (
    SAMPLE_CHARS,
    Dialect,
    blank_rows,
    read_delimited,
    sep_line,
    sniff_dialect,
    unnamed_extras,
)
from annokit.io.lines import LineMap, RowLines, row_lines
from annokit.io.source import Input, check_header, json_object_lines, loads_json

__all__ = [
    "cell_where",
    "check_present",
    "check_scalars",
    "is_text",
    "read_columns",
    "read_table",
    "row_where",
    "rows_as_lines",
    "sample_table",
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
        hint = ("; save the sheet as CSV UTF-8 (File > Save as / Download as)"
                if suffix in (".xlsx", ".xls", ".xlsm", ".ods", ".numbers") else "")
        raise DataFormatError(
            f"{name}: unknown file type {suffix!r}; expected one of {sorted(_SUFFIXES)}{hint}"
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
    data = {col: [row.get(key) for row in rows] for key, col in zip(keys, columns, strict=True)}
    df = pd.DataFrame({c: pd.Series(v, dtype=object) for c, v in data.items()},
                      index=pd.RangeIndex(len(rows)))
    return df, lines


def read_table(path: str | os.PathLike | Input, *, no_header: bool = False,
               missing: Sequence[str] = (), sep: str | None = None) -> pd.DataFrame:
    """Read a CSV / TSV / JSON Lines / Parquet file into a DataFrame of strings.

    Ids and labels are read as strings exactly as written (no ``"007" -> 7`` and no
    ``"NA" -> NaN`` surprises): only blank cells, and the words in ``missing``, are missing
    values (NaN). Parquet keeps its own types. Header names are stripped of surrounding
    blanks and must be unique. The frame's ``attrs["annokit_lines"]`` gives the file line of
    each row when a message asks (:func:`annokit.io.lines.row_lines`: a text table's file is
    scanned then, past blank lines and quoted cells spanning lines; a JSON Lines row's line
    is counted while reading); ``attrs["annokit_line_offset"]`` is 0 when rows are counted,
    not lines (Parquet, a JSON array);
    ``attrs["annokit_read_as"]`` how the file was read (``"csv"``, or ``"csv; separator ';'
    sniffed, --sep to override"``), ``attrs["annokit_ignored"]`` what of a text table was
    left out (an unnamed row-index column, empty rows or trailing columns; also in
    ``read_as``), ``attrs["annokit_sep"]`` a text table's separator.

    A CSV/TSV file's separator (``,`` ``;`` tab or ``|``) is sniffed from its first lines
    whatever its extension says (:mod:`annokit.io.delimited`), unless ``sep`` is given.

    Parameters
    ----------
    path : path-like
        The file, or ``-`` for standard input (its type then sniffed from its content).
    no_header : bool, default=False
        CSV/TSV without a header line: columns are named ``column1``, ``column2``, ...
    missing : sequence of str
        Cell texts that mean "no value", besides the empty cell.
    sep : str, optional
        The separator of a CSV/TSV file (``","``, ``";"``, ``"\\t"`` or ``"|"``; CLI ``--sep``),
        instead of sniffing it.
    """
    source = Input(path, what="votes")
    name = source.name
    kind = table_kind(source)
    if no_header and kind not in ("csv", "tsv"):
        opt = Option("no_header", True)
        raise InvalidValueError(f"{name}: {opt} applies to CSV and TSV files; {kind} files "
                                "name their columns", options=[opt])
    _check_sep(sep, kind, name)
    read_as: str = kind
    ignored: list[str] = []
    try:
        if kind in ("csv", "tsv"):
            text = source.text
            if not text.strip():
                raise DataFormatError(f"{name} is empty: no header line")
            dialect, text, first = _dialect(text, name, kind, sep, len(text) <= SAMPLE_CHARS)
            df, offset, read_as, ignored = _text_frame(
                read_delimited(text, name, dialect, first_line=first), name, kind, dialect,
                no_header, first)
            df.attrs["annokit_lines"] = LineMap(
                source.path if source.path is not None else source.data, sep=dialect.sep,
                quoting=dialect.quoting, skip_initial_space=dialect.skip_initial_space,
                header=not no_header, skip_sep_line=first == 2)
        elif kind == "jsonl":
            df, lines = _read_jsonl(source.text, name)
            df.attrs["annokit_lines"] = RowLines(lines)
            offset = 0 if not lines or lines[0] == 0 else 1
        else:
            df, offset = _parquet_frame(source, name), 0
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
    df.attrs["annokit_read_as"] = read_as
    df.attrs["annokit_ignored"] = ignored
    return df


def _check_sep(sep: str | None, kind: str, name: str) -> None:
    if sep is not None and kind not in ("csv", "tsv"):
        raise InvalidValueError(f"{name}: --sep applies to delimited text files (CSV, TSV); this "
                                f"is a {kind} file")


def _dialect(text: str, name: str, kind: str, sep: str | None,
             complete: bool) -> tuple[Dialect, str, int]:
    """The dialect of a text table, the text without an Excel ``sep=`` first line, and the file
    line that text starts on."""
    named, rest = sep_line(text)
    if named is None:
        return sniff_dialect(text[:SAMPLE_CHARS], name, kind=kind, sep=sep, complete=complete), text, 1
    if sep is not None:
        return sniff_dialect(rest[:SAMPLE_CHARS], name, kind=kind, sep=sep, complete=complete), rest, 2
    given = sniff_dialect(rest[:SAMPLE_CHARS], name, kind=kind, sep=named, complete=complete)
    return Dialect(given.sep, given.quoting, "sep line", given.skip_initial_space), rest, 2


def _text_frame(raw: pd.DataFrame, name: str, kind: str, dialect: Dialect, no_header: bool,
                first: int = 1) -> tuple[pd.DataFrame, int, str, list[str]]:
    """Name the columns of a text table read with its header as row 0 (file line ``first``);
    drop rows with no value and the columns :func:`annokit.io.delimited.unnamed_extras` finds.
    Returns the frame, the file line of its first row, the ``read_as`` text and what was
    left out (each said in ``read_as`` too)."""
    read_as = dialect.describe(kind)
    notes: list[str] = []
    if no_header:
        raw.columns = [f"column{j + 1}" for j in range(raw.shape[1])]
        df, offset = raw, first
    else:
        header = ["" if pd.isna(c) else c for c in raw.iloc[0].tolist()]
        df = raw.iloc[1:].reset_index(drop=True)
        drop, notes = unnamed_extras(header, df)
        if drop:
            keep = [j for j in range(len(header)) if j not in drop]
            df = df.iloc[:, keep]
            header = [header[j] for j in keep]
        df.columns = check_header(header, name)
        offset = first + 1
    empty = blank_rows(df)
    if empty.any():
        df = df.iloc[np.flatnonzero(~empty)].reset_index(drop=True)
        notes.append(f"{int(empty.sum())} empty row(s) ignored")
    df.attrs["annokit_sep"] = dialect.sep
    return df, offset, "; ".join([read_as, *notes]), notes


def sample_table(path: str | os.PathLike | Input, *, sep: str | None = None,
                 rows: int = 1000) -> pd.DataFrame:
    """The header and first rows of a table file, read cheaply (the first 64 KiB of a text
    table, the first ``rows`` JSON lines, the first record batch of a Parquet file), as
    :func:`read_table` reads them: to decide a layout without reading a large file whole."""
    source = Input(path, what="votes")
    kind = table_kind(source)
    name = source.name
    _check_sep(sep, kind, name)
    if kind in ("csv", "tsv"):
        text, complete = source.head(SAMPLE_CHARS)
        if not text.strip():
            raise DataFormatError(f"{name} is empty: no header line")
        dialect, text, first = _dialect(text, name, kind, sep, complete)
        try:
            raw = read_delimited(text, name, dialect, first_line=first)
        except DataFormatError:
            if complete:
                raise
            # a quoted field cut at the end of the sample: its header alone
            raw = read_delimited(text.split("\n", 1)[0], name, dialect, first_line=first)
        df, _, _, _ = _text_frame(raw, name, kind, dialect, False, first)
        return df.head(rows)
    if kind == "jsonl":
        text, complete = source.head(SAMPLE_CHARS)
        if text.lstrip().startswith("[") or complete or not text.endswith(("\n", "\r")):
            return read_table(source).head(rows)  # an array, or a first line longer than 64 KiB
        df, _ = _read_jsonl(text, name)
        return df.head(rows)
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(source.path if source.path is not None
                                 else pa.BufferReader(source.data))
        names = check_header(parquet.schema_arrow.names, name)
        batch = (next(parquet.iter_batches(batch_size=max(rows, 1), row_groups=[0]), None)
                 if parquet.num_row_groups else None)
    except (OSError, ValueError, pa.ArrowException) as exc:
        msg = " ".join(str(exc).split())
        raise DataFormatError(f"{name}: cannot parse as parquet: {msg}") from None
    df = (batch.to_pandas() if batch is not None
          else pd.DataFrame({c: pd.Series(dtype=object) for c in parquet.schema_arrow.names}))
    df.columns = names
    return df


def read_columns(path: str | os.PathLike | Input, *, sep: str | None = None) -> list[str]:
    """Column names of a table file, reading only its start (or schema, or first JSON line)."""
    source = Input(path, what="votes")
    kind = table_kind(source)
    name = source.name
    if kind in ("csv", "tsv"):
        return list(sample_table(source, sep=sep, rows=0).columns)
    _check_sep(sep, kind, name)
    try:
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
    except (OSError, ValueError) as exc:  # ArrowInvalid
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


def row_where(df: pd.DataFrame | Mapping[Any, Any], row: int) -> str:
    """``line 7`` (the file line of data row ``row`` of a frame read from a file, or of the
    frame whose ``attrs`` are given: :func:`annokit.io.lines.row_lines`) or ``row 5`` (rows
    counted: Parquet, a JSON array, a frame made in memory)."""
    attrs = df.attrs if isinstance(df, pd.DataFrame) else df
    lines = row_lines(attrs, [row])
    return f"line {int(lines[0])}" if lines is not None and lines[0] else f"row {row}"


_ROW = re.compile(r"\(row (\d+)\)")


def rows_as_lines(exc: InputError, df: pd.DataFrame | Mapping[Any, Any]) -> InputError:
    """``exc`` (raised about the rows of ``df``, e.g. by :meth:`Votes.from_long`) with each
    ``(row N)`` written as the file line, ``(line L)``; the same class."""
    out = exc.retold(lambda m: _ROW.sub(lambda r: f"({row_where(df, int(r.group(1)))})", m))
    return exc if str(out) == str(exc) else out


def _parquet_frame(source: Input, name: str) -> pd.DataFrame:
    """A Parquet file as a DataFrame of its own types, its header checked."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(pa.BufferReader(source.data))
    names = check_header(table.column_names, name)
    df = table.to_pandas()
    df.columns = names
    return df


def cell_where(path: Path | Input | str, df: pd.DataFrame, row: int, column: str) -> str:
    name = path if isinstance(path, str) else path.name
    return f"{row_where(df, row)} of {name}, column {column!r}"


def check_present(df: pd.DataFrame, path: Path | Input, columns: Sequence[str],
                   what: Sequence[str]) -> None:
    for col, role in zip(columns, what, strict=True):
        values = df[col]
        blank = np.array(values.isna(), dtype=bool)
        if values.dtype == object:  # JSON values
            blank |= np.array(values.map(lambda v: isinstance(v, str) and not v.strip()), dtype=bool)
        elif is_text(values):
            blank |= np.array(values.str.strip().eq("").fillna(False), dtype=bool)
        if blank.any():
            row = int(np.argmax(blank))
            raise DataFormatError(f"{cell_where(path, df, row, col)}: empty {role}")


