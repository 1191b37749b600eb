"""The input boundary: every file annokit reads is opened, decoded and parsed here.

One place decides what a readable input is:

* a regular file, or ``-`` for standard input (read whole, then parsed like a file whose
  type is given by ``--format`` or sniffed from its content); FIFOs, devices and directories
  are refused, so a command never blocks on a pipe or reads a terminal by accident;
* UTF-8 text, with or without a byte-order mark; an encoding error names the line and the byte;
* JSON that is standard JSON: no ``NaN``/``Infinity`` literals, no repeated keys in an object,
  and nesting deeper than :data:`MAX_JSON_DEPTH` refused instead of a ``RecursionError``;
  side files that describe the votes (annotator metadata) are read leniently instead
  (:func:`loads_json_lenient`: trailing commas, comments, ``NaN``), and say what they tolerated;
* table headers whose names, once surrounding blanks are stripped, are unique.

Every failure is an :class:`~annokit.errors.AnnokitError` naming the file (and line, byte or
column where there is one).
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from annokit.errors import DataFormatError, SchemaError

__all__ = [
    "MAX_JSON_DEPTH",
    "near_files",
    "STDIN",
    "Input",
    "check_header",
    "check_regular",
    "decode_text",
    "depth_ok",
    "display_name",
    "json_object_lines",
    "loads_json",
    "loads_json_lenient",
    "read_bytes",
    "read_text",
    "text_lines",
]

#: The path that means standard input.
STDIN = "-"
#: Deepest JSON nesting accepted (arrays and objects); deeper documents are refused.
MAX_JSON_DEPTH = 64
_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def display_name(path: str | os.PathLike) -> str:
    """How messages name an input: the file name, or ``<stdin>``."""
    return "<stdin>" if str(path) == STDIN else Path(path).name


def read_bytes(path: str | os.PathLike, *, what: str = "input") -> bytes:
    """The bytes of a regular file, or of standard input for ``-``.

    Raises
    ------
    DataFormatError
        No such file, a directory, FIFO, socket or device, or an unreadable file.
    """
    if str(path) == STDIN:
        stream = getattr(sys.stdin, "buffer", None)
        return stream.read() if stream is not None else sys.stdin.read().encode("utf-8")
    check_regular(path, what=what)
    path = Path(path)
    try:
        return path.read_bytes()
    except OSError as exc:
        raise DataFormatError(f"{what} {path}: cannot read ({exc.strerror or exc})") from None


def decode_text(data: bytes, name: str) -> str:
    """UTF-8 text of ``data`` without a leading byte-order mark (UTF-16 text when it starts
    with a UTF-16 byte-order mark, as Excel's "Unicode Text" files do).

    Raises
    ------
    DataFormatError
        Bytes that are not UTF-8, naming the line and the byte offset (counted from 0 in the
        file, BOM included).
    """
    if data[:2] in _UTF16_BOMS:  # Excel's "Unicode Text" (.txt, tab-separated) is UTF-16
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise DataFormatError(f"{name}: starts with a UTF-16 byte-order mark but is not UTF-16 "
                                  f"text: byte {exc.start} ({exc.reason}); save it as UTF-8") from None
    else:
        skip = len(_BOM) if data.startswith(_BOM) else 0
        try:
            text = data[skip:].decode("utf-8")
        except UnicodeDecodeError as exc:
            at = exc.start + skip
            line = data.count(b"\n", 0, at) + 1
            raise DataFormatError(f"{name}: not UTF-8 text: byte {at} (line {line}) is "
                                  f"{data[at:at + 1]!r} ({exc.reason}); save the file as UTF-8 "
                                  "(in Excel: CSV UTF-8)") from None
    if "\x00" in text:
        at = text.index("\x00")
        line = text.count("\n", 0, at) + 1
        raise DataFormatError(f"{name}: line {line} holds a NUL character; not a text file")
    return text


def read_text(path: str | os.PathLike, *, what: str = "input") -> str:
    """:func:`read_bytes` then :func:`decode_text`."""
    return decode_text(read_bytes(path, what=what), display_name(path))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (only finite numbers are)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {key!r} appears twice in one object")
        out[key] = value
    return out


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKETS = re.compile(r"[\[\]{}]")


def depth_ok(text: str) -> bool:
    """True when brackets nest at most :data:`MAX_JSON_DEPTH` deep (strings skipped)."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return True
    brackets = "".join(_BRACKETS.findall(_STRING.sub("", text)))
    steps = np.frombuffer(brackets.encode("ascii"), dtype=np.uint8)
    depth = np.cumsum(np.where((steps == ord("[")) | (steps == ord("{")), 1, -1))
    return not depth.size or int(depth.max()) <= MAX_JSON_DEPTH


def loads_json(text: str, where: str, *, allow_nan: bool = False) -> Any:
    """Parse one JSON document strictly (see the module docstring).

    Raises
    ------
    DataFormatError
        Invalid JSON, a NaN/Infinity literal (unless ``allow_nan``: prediction files written
        by Python hold them, and their reader reports the row), a repeated key or nesting
        deeper than :data:`MAX_JSON_DEPTH`; ``where`` ("line 3 of votes.jsonl") starts the
        message.
    """
    if not depth_ok(text):
        raise DataFormatError(f"{where}: JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(text, parse_constant=None if allow_nan else _no_constant,
                          object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise DataFormatError(f"{where}: not valid JSON ({exc.msg}, column {exc.colno})") from None
    except ValueError as exc:
        raise DataFormatError(f"{where}: not valid JSON ({exc})") from None
    except RecursionError:
        raise DataFormatError(f"{where}: JSON nested too deeply") from None

#: What the lenient reader removes, outside strings: comments and trailing commas (a comma
#: followed, across blanks and comments, by a closing bracket). Strings are matched first so
#: that nothing inside one is touched.
_LENIENT = re.compile(
    r'(?P<string>"(?:[^"\\]|\\.)*")'
    r"|(?P<comment>//[^\n]*|/\*.*?\*/)"
    r"|(?P<comma>,(?=(?:\s|//[^\n]*|/\*.*?\*/)*[}\]]))",
    re.DOTALL,
)


def _blank(text: str) -> str:
    """``text`` as blanks, newlines kept, so later line and column numbers stay right."""
    return re.sub(r"[^\n]", " ", text)


def loads_json_lenient(text: str, where: str) -> tuple[Any, list[str]]:
    """Parse JSON as hand-edited and exported files write it, and say what was tolerated.

    Accepted beyond standard JSON: trailing commas (``{"a": 1,}``), ``//`` and ``/* */``
    comments, and the literals ``NaN``, ``Infinity`` and ``-Infinity`` (read as floats).
    Repeated keys and nesting deeper than :data:`MAX_JSON_DEPTH` are still refused. Meant
    for small side files (annotator metadata); vote files are read strictly
    (:func:`loads_json`).

    Notes
    -----
    A pre-pass over Python's :mod:`json` rather than a JSON5 parser (``json5``): one regular
    expression blanks comments and trailing commas outside strings (keeping line and column
    numbers), and :func:`json.loads` reads the non-finite literals itself. On a 220 kB
    metadata file with ``NaN`` values (the size of LeWiDi 2025 MP's) this takes about 20 ms,
    ``json5.loads`` (json5 0.17, pure Python) about 1.4 s; and it adds no dependency.

    Returns
    -------
    doc : object
        The parsed document.
    tolerated : list of str
        What was not standard JSON, e.g. ``["4 trailing commas", "2 NaN"]``; empty for a
        standard document.

    Raises
    ------
    DataFormatError
        Text that is not JSON even so, naming ``where``, the line and the column.

    Examples
    --------
    >>> loads_json_lenient('{"Ann1": {"Age": NaN, "Gender": "F",},}', "meta.json")
    ({'Ann1': {'Age': nan, 'Gender': 'F'}}, ['2 trailing commas', '1 NaN'])
    """
    if not depth_ok(text):
        raise DataFormatError(f"{where}: JSON nested deeper than {MAX_JSON_DEPTH} levels")
    found = {"comma": 0, "comment": 0}

    def repair(m: re.Match) -> str:
        kind = m.lastgroup
        if kind is None or kind == "string":  # (each alternative is a named group)
            return m.group()
        found[kind] += 1
        return _blank(m.group())

    cleaned = _LENIENT.sub(repair, text)
    constants: dict[str, int] = {}

    def constant(name: str) -> float:
        constants[name] = constants.get(name, 0) + 1
        return float(name.replace("Infinity", "inf"))

    try:
        doc = json.loads(cleaned, parse_constant=constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise DataFormatError(f"{where}: not valid JSON, even read leniently ({exc.msg}, line "
                              f"{exc.lineno}, column {exc.colno})") from None
    except ValueError as exc:
        raise DataFormatError(f"{where}: not valid JSON ({exc})") from None
    except RecursionError:
        raise DataFormatError(f"{where}: JSON nested too deeply") from None
    tolerated = [f"{n} {what}{'s' if n > 1 else ''}" for n, what in
                 ((found["comma"], "trailing comma"), (found["comment"], "comment")) if n]
    tolerated += [f"{n} {name}" for name, n in constants.items()]
    return doc, tolerated


_BREAK = re.compile(r"\r\n|\r|\n")


def text_lines(text: str) -> list[str]:
    r"""The physical lines of ``text``, split at ``\n``, ``\r\n`` and ``\r`` only.

    Not :meth:`str.splitlines`, which also splits at characters a JSON string may hold as
    they are (U+2028, U+2029, U+0085): a JSON Lines row with such a character is one line.

    Examples
    --------
    >>> text_lines('{"a": "x\u2028y"}\r\n\n{"b": 1}\rend\n')
    ['{"a": "x\u2028y"}', '', '{"b": 1}', 'end']
    """
    lines = _BREAK.split(text)
    if lines and not lines[-1]:
        lines.pop()  # the break ending the last line starts no line
    return lines


def json_object_lines(text: str, name: str) -> tuple[list[dict[str, Any]], list[int]]:
    """The objects of a JSON Lines text, one per non-blank line, and the line number of each.

    Raises
    ------
    DataFormatError
        A line that is not strict JSON (see :func:`loads_json`) or not an object, naming it.
    """
    rows: list[dict[str, Any]] = []
    line_numbers: list[int] = []
    for lineno, line in enumerate(text_lines(text), start=1):
        if not line.strip():
            continue
        row = loads_json(line, f"line {lineno} of {name}")
        if not isinstance(row, dict):
            raise DataFormatError(f"line {lineno} of {name}: expected a JSON object, got "
                                  f"{type(row).__name__}")
        rows.append(row)
        line_numbers.append(lineno)
    return rows, line_numbers



def check_header(columns: Sequence[Any], name: str) -> list[str]:
    """Column names stripped of surrounding blanks; refuses empty or repeated names.

    Raises
    ------
    SchemaError
        A column named twice (after stripping), naming both positions.
    """
    out = [str(c).strip() for c in columns]
    seen: dict[str, int] = {}
    for pos, col in enumerate(out):
        if col in seen:
            raise SchemaError(
                f"{name}: column {col!r} appears twice (columns {seen[col] + 1} and {pos + 1}, "
                f"after stripping blanks); got {out}. Rename one so each column has one name"
            )
        seen[col] = pos
    return out


def near_files(path: str | os.PathLike, *, n: int = 3) -> str:
    """``"; did you mean ...?"`` naming files beside a missing ``path`` whose names are close
    to its name (a typo, another extension: ``chaosNLI_snli.json`` for ``.jsonl``), or ``""``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "chaosNLI_snli.jsonl").write_text("")
    >>> near_files(d / "chaosNLI_snli.json")
    '; did you mean chaosNLI_snli.jsonl?'
    """
    import difflib

    folder, name = os.path.split(os.fspath(path))
    try:
        names = [e.name for e in os.scandir(folder or ".") if not e.name.startswith(".")]
    except OSError:
        return ""
    ratio = {e: difflib.SequenceMatcher(None, name, e).ratio() for e in names}
    best = max(ratio.values(), default=0.0)
    close = sorted((e for e in names if ratio[e] >= max(0.75, best - 0.03)),
                   key=lambda e: -ratio[e])[:n]
    if not close:
        stem = name.rsplit(".", 1)[0].lower()
        close = [e for e in sorted(names) if e.rsplit(".", 1)[0].lower() == stem][:n]
    return f"; did you mean {' or '.join(close)}?" if close else ""


def check_regular(path: str | os.PathLike, *, what: str = "input") -> None:
    """Refuse a missing path, a directory, FIFO, socket or device (``-`` is standard input)."""
    if str(path) == STDIN:
        return
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise DataFormatError(f"{path}: no such file{near_files(path)}") from None
    except OSError as exc:
        raise DataFormatError(f"{what} {path}: cannot read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(mode):
        kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
        hint = (" (votes are read from a directory of Parquet/CSV/TSV partitions too: --votes "
                "DIR, annokit.io.read_votes)" if stat.S_ISDIR(mode) else "")
        raise DataFormatError(f"{what} {path} is {kind}; give a regular file, or '-' to read "
                              f"standard input{hint}")


class Input:
    """One input: its name for messages, its path (None for standard input) and its bytes,
    read once on first use.

    Parameters
    ----------
    path : path-like or Input
        A regular file, or ``-`` for standard input (read at once).
    """

    name: str
    path: Path | None
    suffix: str
    _data: bytes | None
    _what: str = "input"
    #: Bytes made in memory as a file's (:meth:`from_bytes`), not read from standard input:
    #: the fast table readers take them as they take a file.
    held: bool = False

    def __init__(self, path: str | os.PathLike | Input, *, what: str = "input"):
        if isinstance(path, Input):
            self.name, self.path, self._data, self.suffix = path.name, path.path, path._data, path.suffix
            self.held = path.held
            return
        check_regular(path, what=what)
        self.name = display_name(path)
        self.path = None if str(path) == STDIN else Path(path)
        self.suffix = "" if self.path is None else self.path.suffix.lower()
        self._data = read_bytes(path, what=what) if self.path is None else None
        self._what = what

    @classmethod
    def from_bytes(cls, data: bytes, *, name: str, suffix: str) -> Input:
        """An input held in memory (no file): read as a file named ``name`` whose extension is
        ``suffix`` would be, the way standard input is (used for the concatenation of a
        directory of partitions, :mod:`annokit.io.partitions`)."""
        source = cls.__new__(cls)
        source.name, source.path, source._data, source.suffix = name, None, data, suffix.lower()
        source.held = True
        return source

    @property
    def data(self) -> bytes:
        if self._data is None:
            if self.path is None:  # standard input is read when the Input is made
                raise ValueError(f"{self.name}: an Input with neither a path nor data")
            self._data = read_bytes(self.path, what=self._what)
        return self._data

    def first_line(self, limit: int = 1 << 20) -> str:
        """The first non-blank line (at most ``limit`` bytes read), decoded; "" for none."""
        if self._data is not None or self.path is None:
            chunk = self.data[:limit]
        else:
            try:
                with open(self.path, "rb") as fh:
                    chunk = fh.read(limit)
            except OSError as exc:
                raise DataFormatError(f"{self.path}: cannot read ({exc.strerror or exc})") from None
        if chunk[:2] in _UTF16_BOMS:
            text = decode_text(self.data, self.name)
            return next((line for line in text.splitlines() if line.strip()), "")
        lines = chunk.splitlines()
        if len(chunk) == limit and lines:
            lines = lines[:-1]  # the last line may be cut
        first = next((line for line in lines if line.strip()), b"").removeprefix(_BOM)
        return decode_text(first, self.name)

    def head(self, limit: int = 1 << 16) -> tuple[str, bool]:
        """The first ``limit`` bytes cut after their last complete line, decoded (BOM removed),
        and whether that is the whole input."""
        if self._data is not None or self.path is None or self._utf16():
            chunk = self.data[:limit + 1]
            if chunk[:2] in _UTF16_BOMS:  # decoded whole: a cut could split a character
                return decode_text(self.data, self.name), True
        else:
            try:
                with open(self.path, "rb") as fh:
                    chunk = fh.read(limit + 1)
            except OSError as exc:
                raise DataFormatError(f"{self.path}: cannot read ({exc.strerror or exc})") from None
        complete = len(chunk) <= limit
        if not complete:
            cut = chunk.rfind(b"\n", 0, limit)
            chunk = chunk[:cut + 1] if cut > 0 else chunk[:limit]
            while chunk and (chunk[-1] & 0xC0) == 0x80:  # no UTF-8 sequence cut in two
                chunk = chunk[:-1]
            if chunk and chunk[-1] >= 0xC0:
                chunk = chunk[:-1]
        return decode_text(chunk, self.name), complete

    def _utf16(self) -> bool:
        if self.path is None:  # standard input: its bytes are already read
            return self.data[:2] in _UTF16_BOMS
        try:
            with open(self.path, "rb") as fh:
                return fh.read(2) in _UTF16_BOMS
        except OSError:
            return False

    @property
    def text(self) -> str:
        return decode_text(self.data, self.name)

    def __fspath__(self) -> str:
        return str(self.path) if self.path is not None else STDIN
