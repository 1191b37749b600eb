"""The file line of a table's data row, found only when a message needs it.

Readers number the rows they keep; a message about a bad row names the line a user sees in
an editor. The two differ as soon as a delimited file holds a blank line (the reader skips
it), a quoted cell spanning lines (a comment column exported from a survey or annotation
tool), a row whose cells are all blank (dropped), an Excel ``sep=`` first line, or CRLF and
LF line ends mixed. So the line is never computed as ``row + 2``: a frame read from a file
carries a :class:`LineMap` in ``attrs["annokit_lines"]``, which re-reads the file and scans
it only when asked (after a bad row is found), never while reading; :func:`row_lines` is the
one place a frame's row becomes a line (or stays a row, for Parquet).

Lines are physical and 1-based: ``\\n``, ``\\r\\n`` and a lone ``\\r`` each end one (Python's
universal newlines, what editors count), including those inside quoted cells; a byte-order
mark does not count.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from annokit.errors import AnnokitError
from annokit.io.delimited import sep_line
from annokit.io.source import decode_text, read_bytes

__all__ = ["LineMap", "RowLines", "RowPlaces", "record_lines", "row_lines"]

_WS = b" \t"  # what pandas' tokenizer takes for a blank line's content
#: ASCII bytes str.strip removes (a cell of only these is blank)
_BLANK = b" \t\x0b\x0c\x1c\x1d\x1e\x1f"


def record_lines(text: str, *, sep: str = ",", quoting: bool = True,
                 skip_initial_space: bool = False, first_line: int = 1,
                 limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The line each record of a delimited text starts on, as pandas' reader splits it.

    Lines holding nothing but spaces and tabs (other than the separator) are skipped, as
    pandas does with ``skip_blank_lines=True``; a record is one line, or several when a
    quoted field holds line breaks.

    Parameters
    ----------
    text : str
        The decoded text (no byte-order mark).
    sep : str
        The separator.
    quoting : bool
        Quotes are honoured (a quoted field may span lines).
    skip_initial_space : bool
        Blanks after a separator are skipped (as the reader was told).
    first_line : int
        The file line ``text`` starts on (2 after an Excel ``sep=`` line).
    limit : int, optional
        Stop after this many records.

    Returns
    -------
    starts : ndarray of int64, shape (n_records,)
        The 1-based file line of each record's first character.
    blank : ndarray of bool, shape (n_records,)
        The record's cells are all empty or blank (``;;;``, a row spreadsheets leave).

    Examples
    --------
    >>> starts, blank = record_lines('item,note\\na,"two\\nlines"\\n\\nb,x\\n,\\n')
    >>> starts.tolist(), blank.tolist()
    ([1, 2, 5, 6], [False, False, False, True])
    """
    if not quoting or '"' not in text:
        starts, blank = _plain_lines(text, sep)
        if limit is not None:
            starts, blank = starts[:limit], blank[:limit]
        return starts + (first_line - 1), blank
    starts, blank = _quoted_lines(text, sep, skip_initial_space, limit)
    return starts + (first_line - 1), blank


def _quoted_lines(text: str, sep: str, skip_initial_space: bool,
                  limit: int | None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`record_lines` of a text whose quoted fields may hold line breaks."""
    reader = csv.reader(io.StringIO(text, newline=None), delimiter=sep, quotechar='"',
                        doublequote=True, strict=False, skipinitialspace=skip_initial_space,
                        quoting=csv.QUOTE_MINIMAL)
    ws = " \t".replace(sep, "")
    out: list[int] = []
    flags: list[bool] = []
    start = 1
    try:
        for record in reader:
            end = reader.line_num
            if record and not (len(record) == 1 and end == start and not record[0].strip(ws)):
                out.append(start)
                flags.append(not any(f.strip() for f in record))
                if limit is not None and len(out) >= limit:
                    break
            start = end + 1
    except csv.Error:  # past what the reader accepted: the records found so far
        pass
    return np.asarray(out, dtype=np.int64), np.asarray(flags, dtype=bool)


def _plain_lines(text: str, sep: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`record_lines` of a text where every line break ends a record (no quotes): one
    pass of byte masks (a byte each) and per-line sums, no Python loop over lines."""
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    n = data.size
    if not n:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    cr = data == 13
    lf = data == 10
    crlf = np.zeros(n, dtype=bool)
    crlf[:-1] = cr[:-1] & lf[1:]
    lone_lf = lf.copy()
    lone_lf[1:] &= ~cr[:-1]
    ends = np.flatnonzero(cr | lone_lf)  # where each line's break starts
    after = ends + 1 + crlf[ends]
    if not ends.size or after[-1] < n:
        ends = np.append(ends, n)  # a last line with no line break
    begin = np.concatenate(([0], after))[:ends.size]

    def per_line(chars: bytes) -> np.ndarray:
        """Whether each line holds a byte other than ``chars`` (and line breaks)."""
        table = np.ones(256, dtype=bool)
        table[list(chars + b"\r\n")] = False
        return np.logical_or.reduceat(table[data], begin)  # a line runs to the next one's start

    sep_byte = sep.encode()
    rows = np.flatnonzero(per_line(_WS.replace(sep_byte, b"")))  # not a blank line
    blank = ~per_line(_BLANK + sep_byte)[rows]
    ascii_text = per_line(_BLANK + sep_byte + bytes(range(0x80, 0x100)))[rows]
    # cells of non-ASCII blanks only (a no-break space): str.strip decides, as blank_rows does
    for k in np.flatnonzero(~blank & ~ascii_text):
        cells = data[begin[rows[k]]:ends[rows[k]]].tobytes().decode("utf-8").split(sep)
        blank[k] = not any(c.strip() for c in cells)
    return rows.astype(np.int64) + 1, blank


def _read_bytes(path: str) -> bytes:
    return read_bytes(path)


class LineMap:
    """The file lines of a delimited table's data rows, computed when first asked for.

    A frame read from a CSV/TSV file carries one in ``attrs["annokit_lines"]``: it holds
    where to find the text again (a path, or the bytes of standard input) and how it was
    split, and scans it on the first request (a message about a bad row). It is immutable,
    so pandas' copies of ``attrs`` share it.

    Parameters
    ----------
    source : path-like or bytes
        The file (re-read when asked) or its bytes.
    sep, quoting, skip_initial_space
        How the reader split the text.
    header : bool
        The first record is the header (not a data row).
    blank_rows : {"dropped", "kept"}
        Whether the reader left out rows whose cells are all blank (:func:`read_table`) or
        kept them as rows.
    skip_sep_line : bool
        An Excel ``sep=`` first line precedes the header.
    rows : ndarray of int, optional
        The data records behind the frame's rows (a frame filtered after reading); default:
        every one.
    opener : callable, optional
        Reads a path's bytes (the Dask engine passes fsspec's); default: a local file.
    """

    def __init__(self, source: str | os.PathLike | bytes, *, sep: str = ",", quoting: bool = True,
                 skip_initial_space: bool = False, header: bool = True,
                 blank_rows: str = "dropped", skip_sep_line: bool = False,
                 rows: np.ndarray | None = None, opener: Callable[[str], bytes] | None = None):
        self.source = source if isinstance(source, bytes) else str(source)
        self.sep, self.quoting, self.skip_initial_space = sep, quoting, skip_initial_space
        self.header, self.blank_rows, self.skip_sep_line = header, blank_rows, skip_sep_line
        self.rows = None if rows is None else np.asarray(rows, dtype=np.int64)
        self.opener = opener
        self._starts: np.ndarray | None = None

    def __deepcopy__(self, memo: dict) -> LineMap:
        return self  # immutable: pandas deep-copies attrs on every operation

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_starts"] = None  # shipped to a worker: scanned there if needed
        return state

    def take(self, rows: Sequence[int] | np.ndarray) -> LineMap:
        """The map of a frame keeping rows ``rows`` (positions) of this one's."""
        rows = np.asarray(rows, dtype=np.int64)
        out = LineMap(self.source, sep=self.sep, quoting=self.quoting,
                      skip_initial_space=self.skip_initial_space, header=self.header,
                      blank_rows=self.blank_rows, skip_sep_line=self.skip_sep_line,
                      rows=rows if self.rows is None else self.rows[rows], opener=self.opener)
        out._starts = self._starts
        return out

    def __getitem__(self, row: int) -> int:
        return int(self.lines(np.asarray([row]))[0])

    def lines(self, rows: Sequence[int] | np.ndarray) -> np.ndarray:
        """The 1-based file line of each of the frame's rows ``rows`` (0 where the file no
        longer has such a row: it changed since it was read)."""
        rows = np.asarray(rows, dtype=np.int64)
        records = rows if self.rows is None else self.rows[rows]
        starts = self._scan()
        inside = (records >= 0) & (records < starts.size)
        return np.where(inside, starts[np.clip(records, 0, max(starts.size - 1, 0))]
                        if starts.size else 0, 0)

    def _scan(self) -> np.ndarray:
        if self._starts is not None:
            return self._starts
        name = "input" if isinstance(self.source, bytes) else Path(self.source).name
        try:
            data = (self.source if isinstance(self.source, bytes)
                    else (self.opener or _read_bytes)(self.source))
            text = decode_text(data, name)
        except (AnnokitError, OSError):  # gone or changed since: the message names the row
            self._starts = np.zeros(0, dtype=np.int64)
            return self._starts
        first = 1
        if self.skip_sep_line:
            named, rest = sep_line(text)
            if named is not None:
                text, first = rest, 2
        starts, blank = record_lines(text, sep=self.sep, quoting=self.quoting,
                                     skip_initial_space=self.skip_initial_space,
                                     first_line=first)
        if self.header and starts.size:
            starts, blank = starts[1:], blank[1:]
        self._starts = starts[~blank] if self.blank_rows == "dropped" else starts
        return self._starts


class RowLines:
    """Lines already known, one per row (JSON Lines: counted while parsing); the same
    interface as :class:`LineMap`, and shared, not copied, by pandas' copies of ``attrs``."""

    def __init__(self, lines: Sequence[int] | np.ndarray):
        self._lines = np.asarray(lines, dtype=np.int64)

    def __deepcopy__(self, memo: dict) -> RowLines:
        return self

    def __len__(self) -> int:
        return int(self._lines.size)

    def take(self, rows: Sequence[int] | np.ndarray) -> RowLines:
        return RowLines(self._lines[np.asarray(rows, dtype=np.int64)])

    def __getitem__(self, row: int) -> int:
        return int(self._lines[row])

    def lines(self, rows: Sequence[int] | np.ndarray) -> np.ndarray:
        return self._lines[np.asarray(rows, dtype=np.int64)]


def row_lines(attrs: Mapping[Any, Any], rows: Sequence[int] | np.ndarray) -> np.ndarray | None:
    """The file lines of data rows ``rows`` of a frame read from a file, from its ``attrs``;
    None when its rows are counted, not lines (Parquet, a frame built in memory).

    ``attrs["annokit_lines"]`` (a :class:`LineMap` or :class:`RowLines`) gives them; without
    it, ``attrs["annokit_line_offset"]`` is the line of row 0 (0: rows are not lines). A line
    of 0 (a JSON array's element) means the row has none.
    """
    rows = np.asarray(rows, dtype=np.int64)
    lines = attrs.get("annokit_lines")
    if lines is not None:
        if isinstance(lines, (LineMap, RowLines)):
            return lines.lines(rows)
        return np.asarray(lines, dtype=np.int64)[rows]
    offset = attrs.get("annokit_line_offset", 0)
    return rows + offset if offset else None


class RowPlaces:
    """Where each row of a table is, as messages say it (``"line 7"``, ``"row 3"``), looked up
    only when a message asks: the ``locations`` of predictions read from a text table.

    Parameters
    ----------
    parts : list of (places, n)
        Consecutive runs of rows: an array of texts, or a :class:`LineMap` / :class:`RowLines`
        whose rows are those of the run (``n`` rows).
    """

    def __init__(self, parts: Sequence[tuple[Any, int]]):
        self.parts = list(parts)
        self._ends = np.cumsum([n for _, n in self.parts], dtype=np.int64)

    @classmethod
    def of_frame(cls, attrs: Mapping[Any, Any], n: int) -> RowPlaces | np.ndarray:
        """The places of the ``n`` rows of a frame read from a file (see :func:`row_lines`)."""
        lines = attrs.get("annokit_lines")
        if isinstance(lines, (LineMap, RowLines)):
            return cls([(lines, n)])
        offset = attrs.get("annokit_line_offset", 0)
        word = "line" if offset else "row"
        return np.strings.add(f"{word} ", np.arange(offset, offset + n).astype(str)).astype(object)

    def __len__(self) -> int:
        return int(self._ends[-1]) if self._ends.size else 0

    def __getitem__(self, row: int) -> str:
        row = int(row)
        if row < 0:
            row += len(self)
        k = int(np.searchsorted(self._ends, row, side="right"))
        places, _ = self.parts[k]
        local = row - (int(self._ends[k - 1]) if k else 0)
        if isinstance(places, (LineMap, RowLines)):
            line = int(places.lines([local])[0])
            return f"line {line}" if line else f"row {local}"
        return str(places[local])

    @staticmethod
    def concat(items: Sequence[Any]) -> Any:
        """The places of tables stacked: an array when every one is an array."""
        if all(isinstance(p, np.ndarray) for p in items):
            return np.concatenate(list(items))
        parts: list[tuple[Any, int]] = []
        for p in items:
            parts.extend(p.parts if isinstance(p, RowPlaces) else [(p, len(p))])
        return RowPlaces(parts)
