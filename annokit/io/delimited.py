"""Delimited text tables (CSV, TSV, semicolon and pipe files): the separator, read from the data.

Spreadsheets write what their locale says: European Excel saves "CSV" with ``;``, a TSV is
saved as ``.csv``, R quotes every field, pandas adds an unnamed row-number column. The reader
does not trust the extension: it looks at the first lines (:data:`SAMPLE_CHARS` characters,
never the whole file) and picks the separator among ``,`` ``;`` tab and ``|`` that splits the
header into several names and every sampled line into as many fields (quotes honoured). Two
separators that both fit are refused with a message naming ``--sep`` (the extension settles a
tie only when it is one of them); ``--sep`` (``sep=``) skips the sniffing.

Why not CleverCSV (the library STYLE.md names) or :class:`csv.Sniffer`: our candidates are
four separators and one quote character, and the question "which one splits the header and
every sampled line alike" is answered by :mod:`csv` in a few milliseconds on 64 KiB; CleverCSV
scores every dialect over its sample with a compiled extension (a build dependency and
seconds on large samples) to solve a harder problem (arbitrary quote and escape characters)
that annotation tables do not pose, and ``csv.Sniffer`` guesses from character frequencies
and picks letters or spaces as delimiters on short files.

Parse errors are reported in our words, with the file and line: an unterminated quote, a
line with more fields than the header. Lines with *fewer* fields than the header are read
with the missing cells blank (what R and pandas do); extra fields that are all empty (the
trailing separators spreadsheets leave) are dropped, as are trailing columns whose header and
cells are all empty and a first column with no name holding row numbers (pandas' and R's row
index): each is stated in the reading's ``read_as`` line.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from annokit.errors import DataFormatError, InvalidValueError

__all__ = ["DECIMAL_COMMA", "SAMPLE_CHARS", "SEPARATORS", "Dialect", "blank_rows", "decimal_comma_hint",
           "decimal_commas", "parse_sep", "read_delimited", "sep_line", "sniff_dialect",
           "unnamed_extras"]

#: Characters of a text table looked at to choose its separator.
SAMPLE_CHARS = 1 << 16
#: The separators sniffed, with the words messages use for them.
SEPARATORS = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
_SEP_WORDS = {",": ",", "comma": ",", ";": ";", "semicolon": ";", "\t": "\t", "\\t": "\t",
              "tab": "\t", "|": "|", "pipe": "|"}
_EXTENSION_SEP = {"csv": ",", "tsv": "\t"}
_MAX_SAMPLE_RECORDS = 500


def parse_sep(value: str) -> str:
    """The separator named by ``value``: ``,`` ``;`` ``|`` or tab (also ``tab``, ``\\t``,
    ``comma``, ``semicolon``, ``pipe``).

    Raises
    ------
    InvalidValueError
        Any other value, naming the accepted ones.
    """
    sep = _SEP_WORDS.get(str(value).strip().lower() if str(value) != "\t" else "\t")
    if sep is None:
        raise InvalidValueError(f"--sep {value!r}: expected one of ',' ';' '|' or tab (also "
                                "written 'tab' or '\\t')")
    return sep


@dataclass(frozen=True)
class Dialect:
    """How a text table is split: its separator, whether quotes are honoured, and how the
    separator was chosen (``"sniffed"``, ``"given"``, or ``"extension"`` for a file whose
    sample does not say)."""

    sep: str
    quoting: bool = True
    how: str = "sniffed"
    skip_initial_space: bool = False

    def describe(self, kind: str) -> str:
        """``"csv"`` when the separator is the extension's own, else e.g.
        ``"csv; separator ';' sniffed, --sep to override"``."""
        if self.sep == _EXTENSION_SEP.get(kind) and self.how != "given":
            return kind
        shown = "tab" if self.sep == "\t" else repr(self.sep)
        if self.how == "given":
            return f"{kind}; separator {shown} given"
        if self.how == "sep line":
            return f"{kind}; separator {shown} named by its sep= line, --sep to override"
        return f"{kind}; separator {shown} {self.how}, --sep to override"


def _records(sample: str, sep: str, quoting: bool, limit: int = _MAX_SAMPLE_RECORDS) -> list[list[str]]:
    reader = csv.reader(io.StringIO(sample, newline=None), delimiter=sep, quotechar='"', doublequote=True,
                        strict=False, quoting=csv.QUOTE_MINIMAL if quoting else csv.QUOTE_NONE)
    out: list[list[str]] = []
    try:
        for record in reader:
            if record and any(f.strip() for f in record):
                out.append(record)
                if len(out) >= limit:
                    break
    except csv.Error:  # a field over the csv module's size limit: not this separator
        return out[:1]
    return out


def _width(record: list[str]) -> int:
    """Fields, not counting trailing empty ones."""
    n = len(record)
    while n > 1 and not record[n - 1].strip():
        n -= 1
    return n


def _fit(records: list[list[str]]) -> tuple[int, float]:
    """The header's width (trailing empty names not counted) and the share of sampled lines
    that split into as many fields (trailing empty fields beyond the header allowed)."""
    header = _width(records[0])
    rows = records[1:]
    if not rows:
        return header, 1.0
    ok = sum(1 for r in rows if len(r) == len(records[0]) or _width(r) == header
             or (len(r) > header and _width(r) <= header))
    return header, ok / len(rows)


def _tab_quoting(sample: str) -> bool:
    """Whether a tab-separated file honours quotes (as pandas and R write them) or keeps them as
    text (a TSV label may start with one: ``"yes" he said``).

    Quotes are honoured when the header is quoted (R's ``write.table``), when they make more
    lines split into the header's number of fields, or, with the fit equal, when every field
    that starts with a quote is a whole quoted field (``"a ""b"" c"``); otherwise they are text.
    """
    stripped = sample.lstrip()
    if stripped.startswith('"'):
        return True
    if '"' not in sample:
        return False
    plain = _records(sample, "\t", False)
    quoted = _records(sample, "\t", True)
    if not plain or not quoted:
        return False
    (_, fit_plain), (w_quoted, fit_quoted) = _fit(plain), _fit(quoted)
    if fit_quoted != fit_plain:
        return fit_quoted > fit_plain and w_quoted >= 2
    pieces = [f for line in sample.splitlines() for f in line.split("\t") if f.startswith('"')]
    return all(len(f) >= 2 and f.endswith('"') and '"' not in f[1:-1].replace('""', "")
               for f in pieces)


def sniff_dialect(sample: str, name: str, *, kind: str = "csv", sep: str | None = None,
                  complete: bool = False) -> Dialect:
    """The separator of a text table from its first :data:`SAMPLE_CHARS` characters.

    Parameters
    ----------
    sample : str
        The start of the decoded text (BOM removed).
    kind : {"csv", "tsv"}
        What the extension says; it settles a tie between two separators that both fit.
    sep : str, optional
        A separator given by the user (``--sep``): no sniffing.
    complete : bool
        The sample is the whole file (else its last, maybe cut, line is not looked at).

    Raises
    ------
    DataFormatError
        Two separators fit the sample equally well and the extension names neither.
    """
    if not complete:
        cut = sample.rfind("\n")
        sample = sample[:cut + 1] if cut > 0 else sample
    if sep is not None:
        sep = parse_sep(sep)
        quoting = sep != "\t" or _tab_quoting(sample)
        records = _records(sample, sep, quoting, limit=1)
        if records and _width(records[0]) < 2:
            splits = [c for c in SEPARATORS if c != sep and _width(
                (_records(sample, c, c != "\t" or _tab_quoting(sample), limit=1) or [[]])[0]) >= 2]
            if splits:
                found = "tab" if splits[0] == "\t" else repr(splits[0])
                raise DataFormatError(
                    f"{name}: --sep {_shown(sep)} does not split the header line; {found} does "
                    f"(give --sep {found}, or leave --sep out to sniff it)")
        return Dialect(sep, quoting, "given", _initial_space(sample, sep))
    scores: dict[str, tuple[int, float]] = {}
    for cand in SEPARATORS:
        records = _records(sample, cand, cand != "\t" or _tab_quoting(sample))
        if records:
            scores[cand] = _fit(records)
    fitting = {c: s for c, s in scores.items() if s[0] >= 2}
    default = _EXTENSION_SEP.get(kind, ",")
    if not fitting:  # one column: nothing to choose
        return Dialect(default, default != "\t" or _tab_quoting(sample), "extension")
    best = max(share for _, share in fitting.values())
    tied = [c for c, (_, share) in fitting.items() if share == best]
    if len(tied) > 1:
        if default in tied:
            chosen = default
        else:
            words = " and ".join(repr(c) if c != "\t" else "tab" for c in tied)
            raise DataFormatError(
                f"{name}: cannot tell the separator: {words} each split the header and the first "
                f"lines alike; name it with --sep (e.g. --sep ';')")
    else:
        chosen = tied[0]
    return Dialect(chosen, chosen != "\t" or _tab_quoting(sample), "sniffed",
                   _initial_space(sample, chosen))


def _shown(sep: str) -> str:
    return "tab" if sep == "\t" else repr(sep)


def _initial_space(sample: str, sep: str) -> bool:
    """``a, b, c``: every separator in the header line followed by a blank (hand-typed files)."""
    if sep == "\t":
        return False
    header = sample.lstrip("\r\n").split("\n", 1)[0].rstrip("\r")
    parts = header.split(sep)
    return len(parts) > 1 and all(p.startswith(" ") for p in parts[1:])


def _pandas(text: str, dialect: Dialect, width: int | None = None) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), sep=dialect.sep, dtype=str, header=None,
                       keep_default_na=False, na_filter=False,
                       quoting=csv.QUOTE_MINIMAL if dialect.quoting else csv.QUOTE_NONE,
                       skip_blank_lines=True, skipinitialspace=dialect.skip_initial_space,
                       names=None if width is None else list(range(width)))


def _diagnose(text: str, dialect: Dialect, name: str, eof_in_quote: bool, first_line: int) -> int:
    """Find why pandas refused ``text``: raise the problem in our words, or return the width
    to read with when the only trouble is empty trailing fields beyond the header."""
    reader = csv.reader(io.StringIO(text, newline=None), delimiter=dialect.sep, quotechar='"', strict=False,
                        quoting=csv.QUOTE_MINIMAL if dialect.quoting else csv.QUOTE_NONE,
                        skipinitialspace=dialect.skip_initial_space)
    header: int | None = None
    widest = 0
    start = first_line
    last_start = first_line
    try:
        for record in reader:
            if record and any(f.strip() for f in record):
                last_start = start
                if header is None:
                    header = len(record)
                elif len(record) > header:
                    if any(f.strip() for f in record[header:]):
                        word = SEPARATORS[dialect.sep]
                        raise DataFormatError(
                            f"{name}: line {start} has {len(record)} fields, the header has "
                            f"{header} (read as {word}-separated: quote a field that holds a "
                            f"{word}, or name the separator with --sep)")
                    widest = max(widest, len(record))
            start = reader.line_num + first_line
    except csv.Error as exc:
        raise DataFormatError(f"{name}: line {start}: cannot split into fields ({exc})") from None
    if eof_in_quote:
        raise DataFormatError(f"{name}: line {last_start}: a quoted field opened on this line is "
                              "never closed (unterminated quote)")
    if not widest:
        raise DataFormatError(f"{name}: cannot split into {SEPARATORS[dialect.sep]}-separated "
                              "fields; name the separator with --sep")
    return widest


def read_delimited(text: str, name: str, dialect: Dialect, *, first_line: int = 1) -> pd.DataFrame:
    """All rows of a text table as strings, header row included (row 0), columns numbered.

    ``first_line`` is the file line ``text`` starts on (2 after a ``sep=`` line).

    Raises
    ------
    DataFormatError
        An unterminated quote or a line with more (non-empty) fields than the header, naming
        the file and line; no header line (text holding only a stray byte-order mark or blanks).
    """
    try:
        return _pandas(text, dialect)
    except pd.errors.EmptyDataError:  # pandas drops a leading BOM and blank lines: nothing left
        raise DataFormatError(f"{name} is empty: no header line") from None
    except pd.errors.ParserError as exc:
        width = _diagnose(text, dialect, name, "EOF inside string" in str(exc), first_line)
    try:
        return _pandas(text, dialect, width)
    except pd.errors.ParserError:
        raise DataFormatError(f"{name}: cannot split into {SEPARATORS[dialect.sep]}-separated "
                              "fields") from None


_UNNAMED = re.compile(r"(Unnamed: \d+)?")  # pandas names a blank header cell "Unnamed: 0"


def unnamed_extras(header: list[str], df: pd.DataFrame) -> tuple[list[int], list[str]]:
    """Columns to drop from a text table: trailing columns with no name and no value, and
    leading columns with no name (or pandas' ``Unnamed: 0``) holding distinct whole numbers
    (pandas' and R's row index, in order or not: :func:`_row_numbers`). Returns their
    positions and what to say about them."""
    drop: list[int] = []
    notes: list[str] = []
    n = len(header)
    trailing = 0
    while n - trailing > 1 and not str(header[n - 1 - trailing]).strip() and _all_blank(
            df.iloc[:, n - 1 - trailing]):
        trailing += 1
    lead = 0
    while (lead < n - trailing - 1 and len(df) and _UNNAMED.fullmatch(str(header[lead]).strip())
           and _row_numbers(df.iloc[:, lead])):
        lead += 1
    if lead:
        drop += list(range(lead))
        notes.append("unnamed row-number column ignored" if lead == 1
                     else f"{lead} unnamed row-number columns ignored")
    if trailing:
        drop += list(range(n - trailing, n))
        notes.append(f"{trailing} empty unnamed trailing column(s) ignored")
    return drop, notes


def _row_numbers(values: pd.Series) -> bool:
    """Whether ``values`` are a row index: distinct whole numbers (pandas' index
    as ``to_csv`` writes it, also after the rows were shuffled, sampled or filtered; R's row
    numbers)."""
    text = values.astype(str).str.strip()
    if not text.str.fullmatch(r"\d+").all():  # "1.0", "-1", "1e3", "": not an index
        return False
    numbers = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)
    return bool(len(numbers)) and not np.isnan(numbers).any() and len(np.unique(numbers)) == len(numbers)


def blank_rows(df: pd.DataFrame) -> np.ndarray:
    """Rows whose every cell is empty or blank (the ``;;;`` lines spreadsheets leave)."""
    blank = np.ones(len(df), dtype=bool)
    for j in range(df.shape[1]):
        values = df.iloc[:, j]
        blank &= np.asarray(values.isna() | values.fillna("").astype(str).str.strip().eq(""),
                            dtype=bool)
        if not blank.any():
            break
    return blank


_SEP_LINE = re.compile(r"sep=(.)[ \t]*\r?(\n|\r)")


def sep_line(text: str) -> tuple[str | None, str]:
    """Excel's ``sep=;`` first line: the separator it names (None without one) and the text
    after it."""
    m = _SEP_LINE.match(text)
    if m is None or m.group(1) not in SEPARATORS:
        return None, text
    return m.group(1), text[m.end():]


def _all_blank(values: pd.Series) -> bool:
    return bool(values.isna().all() or values.fillna("").astype(str).str.strip().eq("").all())


#: A number written with a decimal comma (``0,25``, ``,5``, ``1,5e-3``).
DECIMAL_COMMA = re.compile(r"[+-]?(\d+,\d*|,\d+)([eE][+-]?\d+)?")
_COMMA_OR_INTEGER = re.compile(r"\s*[+-]?(\d+,\d*|,\d+|\d+)([eE][+-]?\d+)?\s*")


def decimal_commas(values: pd.Series) -> pd.Series:
    """A column of a ``;``-separated file written with decimal commas (``0,25``), with points.

    Read so only when every value is a number written with a comma, or an integer, and at least
    one has a comma; any other column is returned as it is (a mix of ``0,25`` and ``0.5`` is
    then reported as not numeric by the caller, never half converted).
    """
    if not (values.dtype == object or pd.api.types.is_string_dtype(values.dtype)):
        return values
    text = values.dropna().astype(str)
    if not len(text) or not text.str.contains(",", regex=False).any():
        return values
    if not text.str.fullmatch(_COMMA_OR_INTEGER).all():
        return values
    return values.str.replace(",", ".", regex=False)


def decimal_comma_hint(value: object, semicolon: bool) -> str:
    """What to add to a "not numeric" message when ``value`` is written with a decimal comma."""
    if not (isinstance(value, str) and DECIMAL_COMMA.fullmatch(value.strip())):
        return ""
    if semicolon:
        return ("; a decimal comma is read only in a ';'-separated file where every value of the "
                "column is written with one")
    return "; a decimal comma is read only in ';'-separated files"
