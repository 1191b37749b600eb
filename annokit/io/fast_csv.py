"""CSV and TSV tables through Arrow's multi-threaded reader, for the fast reading paths.

:func:`read_csv_arrow` reads a CSV/TSV file the way :func:`annokit.io.tables.read_table` does
(every cell text as written, header names stripped and unique, blank lines skipped) but into a
pyarrow Table, without a Python string per cell. It returns None whenever the file is not
plainly parseable that way (a sniffed separator other than the extension's, a ``sep=`` line, a
CSV with quotes, ragged rows, text that is not UTF-8, NUL bytes, no data rows): the caller then
takes the general path, which reads the file again and reports the problem with its line and
column. So the fast path never decides what a bad file means.
"""

from __future__ import annotations

import csv
from typing import Any

from annokit.errors import InputError
from annokit.io.delimited import SAMPLE_CHARS
from annokit.io.source import Input, check_header

__all__ = ["read_csv_arrow"]

_BOM = b"\xef\xbb\xbf"


def read_csv_arrow(source: Input, kind: str) -> Any:
    """The table of a CSV (``kind="csv"``) or TSV file as a pyarrow Table of strings, or None.

    Parameters
    ----------
    source : Input
        A regular file (standard input is read by the general path).
    kind : {"csv", "tsv"}

    Returns
    -------
    pyarrow.Table or None
        Columns named by the stripped header; None when the general reader must decide.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv

    if ((source.path is None and not source.held) or kind not in ("csv", "tsv")
            or not _plain_dialect(source, kind)):
        return None
    try:
        first = source.first_line()
    except InputError:
        return None
    if not first.strip():
        return None
    names = next(csv.reader([first], delimiter="," if kind == "csv" else "\t",
                            quoting=csv.QUOTE_MINIMAL if kind == "csv" else csv.QUOTE_NONE))
    if any(not n.strip() for n in names):
        return None  # unnamed columns (a row-number index, trailing separators): read_table's
    try:
        columns = check_header(names, source.name)
    except InputError:
        return None
    data = source.data
    if b"\x00" in data or (kind == "csv" and b'"' in data):
        return None  # quoting (unbalanced quotes, quoted newlines) is the general reader's
    buffer = pa.py_buffer(data)
    if data.startswith(_BOM):
        buffer = buffer.slice(len(_BOM))
    try:
        table = pcsv.read_csv(
            pa.BufferReader(buffer),
            read_options=pcsv.ReadOptions(use_threads=True, block_size=1 << 22),
            parse_options=pcsv.ParseOptions(
                delimiter="," if kind == "csv" else "\t",
                quote_char=False, ignore_empty_lines=True),
            convert_options=pcsv.ConvertOptions(
                column_types={raw: pa.string() for raw in names},
                # ASCII text is UTF-8: Arrow's own check (a tenth of the parse) is then moot
                check_utf8=not data.isascii(),
                strings_can_be_null=False,
                quoted_strings_can_be_null=False),
        )
    except (pa.ArrowException, ValueError, OSError):
        return None
    if table.num_rows == 0 or table.column_names != names:
        return None
    return table.rename_columns(columns) if columns != names else table


def _plain_dialect(source: Input, kind: str) -> bool:
    """Whether :func:`annokit.io.tables.read_table` would split the file at its extension's own
    separator (``,`` for CSV, tab for TSV, quotes not honoured in TSV), with no Excel ``sep=``
    line and no spaces after separators: only then does Arrow read it the same way."""
    from annokit.io.tables import _dialect

    try:
        text, complete = source.head(SAMPLE_CHARS)
        dialect, _, first = _dialect(text, source.name, kind, None, complete)
    except InputError:
        return False
    return (first == 1 and dialect.sep == ("," if kind == "csv" else "\t")
            and not dialect.skip_initial_space and (kind == "csv" or not dialect.quoting))
