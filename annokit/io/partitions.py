"""Partitioned inputs: a directory, glob or list of Parquet / CSV / TSV files read as one table.

One function decides which files a partitioned input names, for both engines
(:func:`partition_files`; the Dask reader, :func:`annokit.scale.read_votes_dask`, calls it too):

* a **directory**: its ``.parquet`` (``.pq``), ``.csv`` and ``.tsv`` files, in any
  sub-directory, sorted by path (``part-00000`` before ``part-00001``: write numbers with
  leading zeros); files and sub-directories whose name starts with ``_`` or ``.`` are
  skipped (``_SUCCESS``, ``_metadata``, Spark's ``_temporary/``, ``.crc`` files, hidden
  files), and so are files of other types (counted in the read-as line);
* a **glob** (``"votes/part-*.csv"``; quote it on the command line): the matching files,
  sorted, with the same rules (a matched directory is read as above);
* a **list** of paths (Python): each expanded as above, in the order given;
* a path with a protocol (``s3://``, ``hf://``): expanded by fsspec (Dask engine only).

Every file must be of one kind (Parquet, CSV or TSV). The in-memory engine
(:func:`annokit.io.read_votes`) reads the partitions as **one long table, the files
concatenated in order**: the votes, their first-seen item and annotator order (file order,
then row order), the detected columns, ``--gold``, ``--duplicates``, ``--missing`` and the
column options are exactly those of the single file made by concatenating the partitions
(with one header line). Every partition must have the same header (the same column names, in
the same order) and, for CSV/TSV, the same separator; a partition that differs is refused in
one line naming it and the first partition. Parquet partitions are read row group after row
group through Arrow, as one file is (no Python loop over rows). Errors name the partition and
its line (CSV/TSV) or row (Parquet). Wide tables, counts, soft labels and the JSON formats
are read from one file.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from annokit.core.votes import DuplicatePolicy
from annokit.errors import AnnokitError, DataFormatError, InvalidValueError, SchemaError
from annokit.io.delimited import SAMPLE_CHARS, sep_line
from annokit.io.source import Input, decode_text, near_files, read_bytes
from annokit.io.tables import _dialect, read_columns
from annokit.io.tabular import _read_long_parquet

__all__ = ["PARTITION_SUFFIXES", "is_partitioned", "partition_files", "read_partitions"]

#: File types a partitioned input may hold, by extension.
PARTITION_SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "tsv"}
_GLOB_CHARS = ("*", "?", "[")
_BOM = b"\xef\xbb\xbf"
_TYPES = ".parquet, .csv or .tsv"


def _skipped_name(name: str) -> bool:
    return name.startswith(("_", "."))


def is_partitioned(source: Any) -> bool:
    """Whether ``source`` names partitions rather than one file: a list or tuple of paths, a
    directory, a path with a protocol (``s3://...``) or a glob that names no existing file.

    Examples
    --------
    >>> is_partitioned("votes.csv"), is_partitioned(["a.csv", "b.csv"]), is_partitioned("p-*.csv")
    (False, True, True)
    """
    if isinstance(source, (list, tuple)):
        return True
    if isinstance(source, Input) or not isinstance(source, (str, os.PathLike)):
        return False
    text = os.fspath(source)
    if text == "-":
        return False
    if "://" in text or os.path.isdir(text):
        return True
    return any(c in text for c in _GLOB_CHARS) and not os.path.lexists(text)


def _directory_files(path: str) -> tuple[list[str], list[str]]:
    """The partition files under a directory, sorted by path, and the other files skipped."""
    found: list[str] = []
    other: list[str] = []
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if not _skipped_name(d)]
        for name in files:
            if _skipped_name(name):
                continue
            full = os.path.join(root, name)
            (found if os.path.splitext(name)[1].lower() in PARTITION_SUFFIXES else other).append(full)
    return sorted(found), sorted(other)


def _remote_files(path: str) -> list[str]:
    import fsspec

    fs, _, found = fsspec.get_fs_token_paths(path)
    files: list[str] = []
    for f in found:
        if not fs.exists(f):
            raise DataFormatError(f"{path}: no such file, directory or matching files"
                                  f"{near_files(path)}")
        if fs.isdir(f):
            inner = sorted(p for p in fs.find(f)
                           if os.path.splitext(p)[1].lower() in PARTITION_SUFFIXES
                           and not any(_skipped_name(part) for part in
                                       p[len(f.rstrip("/")):].split("/") if part))
            if not inner:
                raise DataFormatError(f"{path}: a directory with no {_TYPES} files")
            files.extend(fs.unstrip_protocol(p) for p in inner)
        else:
            files.append(fs.unstrip_protocol(f))
    if not files:
        raise DataFormatError(f"{path}: no such file, directory or matching files")
    return files


def scan_partitions(source: Any) -> tuple[list[str], list[str]]:
    """:func:`partition_files`, and the files skipped in its directories for their type."""
    if isinstance(source, (str, os.PathLike)):
        paths = [os.fspath(source)]
    else:
        paths = [os.fspath(p) for p in source]
        if not paths:
            raise DataFormatError("an empty list of input files; give at least one file")
    files: list[str] = []
    skipped: list[str] = []
    for path in paths:
        if "://" in path:
            files.extend(_remote_files(path))
        elif os.path.isdir(path):
            inner, other = _directory_files(path)
            if not inner:
                hint = (" (LeWiDi JSON splits: --format lewidi)"
                        if any(o.endswith(".json") for o in other) else "")
                raise DataFormatError(f"{path}: a directory with no {_TYPES} files{hint}")
            files.extend(inner)
            skipped.extend(other)
        elif os.path.lexists(path):
            files.append(path)
        elif any(c in path for c in _GLOB_CHARS):
            matched = [m for m in sorted(glob.glob(path, recursive=True))
                       if not _skipped_name(os.path.basename(m))]
            if not matched:
                raise DataFormatError(f"{path}: no file matches this pattern")
            for m in matched:
                if os.path.isdir(m):
                    inner, other = _directory_files(m)
                    files.extend(inner)
                    skipped.extend(other)
                else:
                    files.append(m)
            if not files:
                raise DataFormatError(f"{path}: no {_TYPES} file matches this pattern")
        else:
            raise DataFormatError(f"{path}: no such file, directory or matching files"
                                  f"{near_files(path)}")
    unknown = [f for f in files if os.path.splitext(f)[1].lower() not in PARTITION_SUFFIXES]
    if unknown:
        raise DataFormatError(f"{unknown[0]}: unknown file type; partitions are {_TYPES} files")
    kinds = list(dict.fromkeys(PARTITION_SUFFIXES[os.path.splitext(f)[1].lower()] for f in files))
    if len(kinds) > 1:
        first = {k: next(f for f in files if PARTITION_SUFFIXES[os.path.splitext(f)[1].lower()] == k)
                 for k in kinds}
        raise DataFormatError(
            f"{_display(source)}: mixes {' and '.join(kinds)} files ("
            f"{', '.join(os.path.basename(f) for f in first.values())}); give one kind")
    return files, skipped


def partition_files(source: str | os.PathLike | Iterable[str | os.PathLike]) -> list[str]:
    """The files a directory, glob, path or list of them names, in reading order.

    See the module docstring for the rules. A single file is returned as it is.

    Raises
    ------
    DataFormatError
        No such path, a glob that matches nothing, a directory without partitions, an empty
        list, a file of another type, or files of two kinds (Parquet and CSV).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("part-1.csv", "part-0.csv", "_SUCCESS", ".part-0.csv.crc"):
    ...     _ = (d / name).write_text("item,annotator,label\\n")
    >>> [pathlib.Path(f).name for f in partition_files(d)]
    ['part-0.csv', 'part-1.csv']
    """
    return scan_partitions(source)[0]


def _display(source: Any) -> str:
    """How messages name a partitioned input: ``votes/``, the glob, or ``3 files``."""
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        return os.path.basename(text.rstrip("/")) + "/" if os.path.isdir(text) else text
    return f"{len(list(source))} files"


class _Locator:
    """Maps a line (CSV/TSV) or row (Parquet) of the concatenation back to its partition."""

    def __init__(self, name: str, kind: str):
        self.name, self.kind = name, kind
        self.parts: list[tuple[str, int, int, int]] = []  # (file, first line/row, local first, n)
        self.header_lines = 1

    def add(self, file: str, n: int, local_first: int) -> None:
        start = self.parts[-1][1] + self.parts[-1][3] if self.parts else (
            1 if self.kind != "parquet" else 0)
        self.parts.append((os.path.basename(file), start, local_first, n))

    def where(self, unit: str, number: int) -> str | None:
        if self.kind == "parquet":
            unit, at = "row", number
        elif unit == "row":  # a data row of the concatenation: its line
            unit, at = "line", number + self.header_lines + 1
        else:
            at = number
        for file, start, local_first, n in self.parts:
            if start <= at < start + n:
                return f"{unit} {at - start + local_first} of {file}"
        return None

    def translate(self, message: str) -> str:
        """``line 12 of votes/`` (or a bare ``row 12`` in a message about these votes) as
        the partition's own line or row."""
        own = re.escape(self.name)
        about = message.startswith(self.name)

        def repl(m: re.Match) -> str:
            if m.group(3) is None and (not about or m.group(4)):
                return m.group(0)  # another file's line (a gold file's), left as it is
            found = self.where(m.group(1), int(m.group(2)))
            return m.group(0) if found is None else found + (m.group(4) or "")

        return re.sub(rf"\b(line|row) (\d+)( of {own})?( of )?", repl, message)


def _check_headers(files: Sequence[str], kind: str, sep: str | None, no_header: bool) -> None:
    """Every partition has the first one's columns (and, for CSV/TSV, separator)."""
    first_name = os.path.basename(files[0])
    expected: list[str] | None = None
    expected_sep: str | None = None
    for f in files:
        name = os.path.basename(f)
        source = Input(f, what="votes")
        if kind != "parquet":
            text, complete = source.head(SAMPLE_CHARS)
            this_sep = _dialect(text, name, kind, sep, complete)[0].sep if text.strip() else None
            if expected_sep is not None and this_sep is not None and this_sep != expected_sep:
                raise DataFormatError(
                    f"{name}: separator {this_sep!r}, but {first_name}'s is {expected_sep!r}; every "
                    "partition needs the same separator (--sep names it)")
            expected_sep = expected_sep or this_sep
            if no_header:
                continue
        columns = read_columns(source, sep=sep)
        if expected is None:
            expected = columns
        elif columns != expected:
            raise SchemaError(
                f"{name}: columns {columns} differ from {first_name}'s {expected}; every "
                "partition needs the same header (the same column names, in the same order)")


def _text_part(data: bytes, first: bool, no_header: bool) -> tuple[bytes, int]:
    """A partition's bytes as they go into the concatenation, and the file line they start on
    (the header line, an Excel ``sep=`` line and blank lines before the header are kept from
    the first partition only)."""
    if first or no_header:
        return data, 1
    skipped = 0
    head, nl, rest = data.partition(b"\n")
    if sep_line(head.decode("utf-8", "replace") + "\n")[0] is not None:
        skipped, (head, nl, rest) = 1, rest.partition(b"\n")
    while nl and not head.strip():  # blank lines before the header
        skipped += 1
        head, nl, rest = rest.partition(b"\n")
    return (rest if nl else b""), skipped + 2


def _concatenate_text(files: Sequence[str], name: str, kind: str,
                      no_header: bool) -> tuple[Input, _Locator]:
    """The partitions as one UTF-8 text held in memory, read as a file would be."""
    locator = _Locator(name, kind)
    pieces: list[bytes] = []
    for i, f in enumerate(files):
        data = read_bytes(f, what="votes")
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):  # UTF-16 (Excel's Unicode Text)
            data = decode_text(data, os.path.basename(f)).encode("utf-8")
        else:
            data = data.removeprefix(_BOM)
            if not data.isascii():  # checked here, so that an error names the partition
                decode_text(data, os.path.basename(f))
        if i == 0:
            first_line = data.split(b"\n", 1)[0].decode("utf-8", "replace") + "\n"
            locator.header_lines = (0 if no_header else 1) + (sep_line(first_line)[0] is not None)
        body, local_first = _text_part(data, i == 0, no_header)
        if body and not body.endswith(b"\n"):
            body += b"\n"
        locator.add(f, body.count(b"\n"), local_first)
        pieces.append(body)
    return Input.from_bytes(b"".join(pieces), name=name, suffix=f".{kind}"), locator


def _concatenate_parquet(files: Sequence[str], name: str) -> tuple[Input, _Locator]:
    """The partitions as one in-memory Parquet file (the general path: types that need it)."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    locator = _Locator(name, "parquet")
    tables: list[Any] = []
    for f in files:
        try:
            table = pq.read_table(f)
        except (OSError, ValueError) as exc:
            raise DataFormatError(f"{os.path.basename(f)}: cannot parse as parquet: "
                                  f"{' '.join(str(exc).split())}") from None
        if tables:
            for field in table.schema:
                before = tables[0].schema.field(field.name).type
                if field.type != before and not (pa.types.is_null(field.type)
                                                 or pa.types.is_null(before)):
                    raise SchemaError(
                        f"{os.path.basename(f)}: column {field.name!r} is {field.type}, but in "
                        f"{os.path.basename(files[0])} it is {before}; every partition needs "
                        "the same column types")
            table = table.select(tables[0].column_names)
        locator.add(f, table.num_rows, 0)
        tables.append(table)
    combined = pa.concat_tables(tables, promote_options="permissive")
    buffer = io.BytesIO()
    pq.write_table(combined, buffer)
    return Input.from_bytes(buffer.getvalue(), name=name, suffix=".parquet"), locator


def read_partitions(source: Any, read: Callable[..., Any], *, format: str, columns: Any,
                    labels: Any, gold: Any, duplicates: DuplicatePolicy, no_header: bool,
                    missing: Sequence[str], sep: str | None, **options: Any) -> Any:
    """Votes of a directory, glob or list of partitions, read as their concatenation.

    ``read`` is :func:`annokit.io.read_votes` (it reads the concatenation, or the one file of
    a single partition); the other arguments are its own. Called by ``read_votes``, which
    documents them.

    Raises
    ------
    DataFormatError, SchemaError, InvalidValueError
        What :func:`partition_files` refuses; a remote path; a format other than a long
        table; partitions whose headers or separators differ; and every error of reading the
        concatenation, naming the partition and its line or row.
    """
    name = _display(source)
    if any("://" in os.fspath(p) for p in ([source] if isinstance(source, (str, os.PathLike))
                                           else source)):
        raise InvalidValueError(f"{name}: the in-memory engine reads local files; read a "
                                "path with a protocol with --engine dask")
    files, skipped = scan_partitions(source)
    kwargs = dict(columns=columns, labels=labels, gold=gold, duplicates=duplicates,
                  no_header=no_header, missing=missing, sep=sep, **options)
    kind = PARTITION_SUFFIXES[os.path.splitext(files[0])[1].lower()]
    last = f" ... {os.path.basename(files[-1])}" if len(files) > 1 else ""
    note = (f"{len(files)} {kind} partition{'s' if len(files) > 1 else ''} "
            f"({os.path.basename(files[0])}{last})"
            + (f"; {len(skipped)} file(s) of other types skipped" if skipped else ""))
    if len(files) == 1:  # one file: read as it is, whatever its layout
        votes = read(files[0], format=format, **kwargs)
        votes.read_info = f"{votes.read_info}; {note}"
        return votes
    if format not in ("auto", "long"):
        raise InvalidValueError(f"{name}: partitions are read as one long table (one row per "
                                f"vote); --format {format} reads one file")
    _check_headers(files, kind, sep, no_header)
    if format == "auto" and not no_header:
        from annokit.io import sniff_format

        layout = sniff_format(files[0], columns=columns, sep=sep)
        if layout != "long":
            raise InvalidValueError(
                f"{name}: {os.path.basename(files[0])} reads as a {layout} table; partitions "
                "are read as one long table (one row per vote: item, annotator, label); give "
                "one file, or --format long with the column options")
    fast = None
    if kind == "parquet" and not missing and sep is None and not no_header:
        try:  # the Arrow path of one Parquet file, over the partitions' row groups in turn
            fast = _read_long_parquet([Path(f) for f in files], columns, labels, gold,
                                      duplicates, name=name)
        except AnnokitError:
            fast = None  # read again by the general path, which names the row of the partition
        if fast is not None:
            from annokit.io import check_count_size, duplicates_note

            limit = options.get("max_count_bytes")
            if limit is not None:
                check_count_size(fast.n_items, fast.n_labels, name, limit=limit)
            fast.read_info = f"{fast.read_info}{duplicates_note(fast, duplicates)}; {note}"
            return fast
    if kind == "parquet":
        combined, locator = _concatenate_parquet(files, name)
    else:
        combined, locator = _concatenate_text(files, name, kind, no_header)
    try:
        votes = read(combined, format="long" if format == "auto" and not no_header else format,
                     **kwargs)
    except AnnokitError as exc:
        raise exc.retold(locator.translate) from None
    votes.read_info = f"{votes.read_info}; {note}"
    return votes
