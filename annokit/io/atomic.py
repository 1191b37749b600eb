"""The one writing layer: every file and directory annokit writes goes through here.

* A file is written to a temporary file in the target's directory, flushed to
  disk (``fsync``), given the mode a new file would get (``0o666 & ~umask``)
  and renamed onto the target (:func:`atomic_path`), so a reader sees the old
  file or the new one, never half of one; a failed or killed write leaves the
  old file as it was.
* Several files that belong together (``filter``'s votes and audit) are all
  written first and renamed last, and renamed back if one rename fails
  (:func:`atomic_paths`).
* A directory (a report) is built beside the target and swapped in with one
  rename (:func:`atomic_directory`; ``renameat2(RENAME_EXCHANGE)`` on Linux),
  and the old one is removed only after the swap.
* :func:`check_outputs` refuses, before any work, an output that names an
  input (same path, a symlink or a hard link to it, or a report directory
  holding it), two outputs with the same path, and a missing or read-only
  directory. Every :class:`OSError` while writing becomes one
  :class:`~annokit.errors.OutputError` line naming the file.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from annokit.errors import DataFormatError, OutputError
from annokit.io.escape import neutralise_formulas
from annokit.io.table_formats import TABLE_FORMATS, describe_output, output_info, table_format

__all__ = ["TABLE_FORMATS", "atomic_directory", "atomic_path", "atomic_paths", "check_outputs",
           "check_table_path", "describe_output", "dump_table", "file_mode", "output_error",
           "output_info", "table_format", "write_bytes_atomic", "write_table",
           "write_text_atomic"]

PathArg = str | os.PathLike

#: Table writers by file extension; ``.jsonl`` / ``.ndjson`` only where ``jsonl=True``.
_TABLE_WRITERS: dict[str, Callable[[Any, Path], Any]] = {
    ".csv": lambda df, tmp: df.to_csv(tmp, index=False),
    ".tsv": lambda df, tmp: df.to_csv(tmp, sep="\t", index=False),
    ".tab": lambda df, tmp: df.to_csv(tmp, sep="\t", index=False),
    ".parquet": lambda df, tmp: df.to_parquet(tmp, index=False),
    ".pq": lambda df, tmp: df.to_parquet(tmp, index=False),
    ".jsonl": lambda df, tmp: df.to_json(tmp, orient="records", lines=True),
    ".ndjson": lambda df, tmp: df.to_json(tmp, orient="records", lines=True),
}

#: Plain-language reasons for the errors a write can meet.
_REASONS = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOENT: "no such directory",
    errno.ENOTDIR: "a parent is not a directory",
    errno.EISDIR: "is a directory",
    errno.EFBIG: "file too large",
    errno.EIO: "input/output error",
    errno.ENAMETOOLONG: "file name too long",
    errno.EPIPE: "broken pipe",
}


def output_error(path: PathArg, exc: OSError, *, what: str = "cannot write") -> OutputError:
    """One-line :class:`OutputError` for an :class:`OSError` met while writing ``path``.

    Examples
    --------
    >>> import errno
    >>> str(output_error("out.csv", OSError(errno.ENOSPC, "No space left on device")))
    'cannot write out.csv: no space left on the device'
    """
    known = None if exc.errno is None else _REASONS.get(exc.errno)
    reason = known or (exc.strerror or str(exc) or type(exc).__name__).lower()
    return OutputError(f"{what} {os.fspath(path)}: {reason}")


def file_mode() -> int:
    """The mode of a new file under the current umask: ``0o666 & ~umask``.

    Examples
    --------
    >>> import os
    >>> old = os.umask(0o027); mode = file_mode(); _ = os.umask(old)
    >>> oct(mode)
    '0o640'
    """
    return 0o666 & ~_umask()


def _directory(path: Path) -> Path:
    return path.parent if str(path.parent) else Path(".")


def _check_target(path: Path, label: str, *, directory: bool = False) -> None:
    """A target's folder exists and is writable, and the target is not of the wrong kind."""
    name = f"{label} {path}" if label else str(path)
    parent = _directory(path)
    if not parent.exists():
        raise OutputError(f"{name}: directory {parent} does not exist")
    if not parent.is_dir():
        raise OutputError(f"{name}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        readonly = bool(os.statvfs(parent).f_flag & os.ST_RDONLY)
        raise OutputError(f"{name}: directory {parent} is "
                          f"{'on a read-only file system' if readonly else 'not writable'}")
    if os.path.lexists(path):
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):
            mode = os.stat(path).st_mode if os.path.exists(path) else stat.S_IFREG
        if directory and not stat.S_ISDIR(mode):
            raise OutputError(f"{name} exists and is not a directory")
        if not directory and stat.S_ISDIR(mode):
            raise OutputError(f"{name} is a directory; give a file name")
        if not directory and not stat.S_ISREG(mode):
            raise OutputError(f"{name} is not a regular file; refusing to replace it")


def _flat(value: Any) -> list[Path]:
    if value is None:
        return []
    if isinstance(value, (str, os.PathLike)):
        return [Path(value)]
    return [p for v in value for p in _flat(v)]


def _input_files(value: Any) -> list[tuple[Path, bool]]:
    """The paths of an input and the files of each directory or glob of partitions, each
    with whether it is a directory of partitions."""
    from annokit.io.partitions import is_partitioned, partition_files

    out: list[tuple[Path, bool]] = []
    for path in _flat(value):
        files: list[str] = []
        if is_partitioned(path):
            try:
                files = [f for f in partition_files(path) if "://" not in f]
            except DataFormatError:
                pass  # the reader says what is wrong with the input
        out.append((path, bool(files) and path.is_dir()))
        out.extend((Path(f), False) for f in files)
    return out


def _same_file(a: Path, b: Path) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        sa, sb = os.stat(a), os.stat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _inside(path: Path, directory: Path) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(directory)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def check_outputs(outputs: Mapping[str, PathArg | None],
                  inputs: Mapping[str, PathArg | Iterable[PathArg] | None] | None = None, *,
                  directories: Iterable[str] = ()) -> None:
    """Refuse, before any work, outputs that would overwrite an input or cannot be written.

    Parameters
    ----------
    outputs : mapping of str to path or None
        Option name (as the user typed it, e.g. ``"--out"``) to target path;
        None entries are skipped.
    inputs : mapping of str to path, paths or None, optional
        Option name to the files the command reads. Names that are not files
        (registered datasets, ``-``) are skipped.
    directories : iterable of str
        Output names that are directories (a report): an input inside them
        is refused too, since replacing the directory would delete it.

    Raises
    ------
    OutputError
        An output is an input (same path, symlink or hard link), two outputs
        are the same file, an output's directory is missing or read-only, or
        an output is a directory (a file, for ``directories``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "votes.csv").write_text("x")
    >>> check_outputs({"--out": d / "votes.csv"}, {"--votes": d / "votes.csv"})
    Traceback (most recent call last):
    ...
    annokit.errors.OutputError: --out ...votes.csv is the input --votes; refusing to overwrite ...
    """
    dirs = set(directories)
    seen: list[tuple[str, Path]] = []
    named = [(name, p, parts) for name, v in (inputs or {}).items()
             for p, parts in _input_files(v)]
    sources = [(name, p) for name, p, _ in named if str(p) != "-" and os.path.exists(p)]
    folders = [(name, p) for name, p, parts in named if parts]
    for label, value in outputs.items():
        if value is None:
            continue
        path = Path(value)
        for name, source in sources:
            clash = _inside(source, path) if label in dirs else _same_file(path, source)
            if clash:
                where = "holds" if label in dirs and not _same_file(path, source) else "is"
                raise OutputError(f"{label} {path} {where} the input {name}"
                                  f"{'' if where == 'is' else f' ({source})'}; refusing to "
                                  "overwrite an input (choose another path)")
        for name, folder in folders:
            if (_inside(path, folder) and path.suffix.lower() in (".parquet", ".pq", ".csv", ".tsv")):
                raise OutputError(f"{label} {path} is inside the input {name} {folder}/, a "
                                  "directory of partitions: it would be read as one of them; "
                                  "choose a path outside it")
        for other, prev in seen:
            if _same_file(path, prev):
                raise OutputError(f"{label} {path} and {other} {prev} are the same file; "
                                  "give two different paths")
        _check_target(path, label, directory=label in dirs)
        seen.append((label, path))


def _fsync_path(path: PathArg, *, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0))
    try:
        os.fsync(fd)
    except OSError as exc:  # some file systems cannot fsync a directory: not a failure
        if not directory or exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def _temp_file(path: Path, suffix: str) -> Path:
    try:
        fd, tmp = tempfile.mkstemp(dir=_directory(path), prefix=f".{path.name}.",
                                   suffix=suffix)
    except OSError as exc:
        raise output_error(path, exc) from None
    os.close(fd)
    return Path(tmp)


def _finish(tmp: Path, mode: int) -> None:
    """Make a written temporary file durable with its final mode."""
    os.chmod(tmp, mode)
    _fsync_path(tmp)


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


@contextmanager
def atomic_paths(paths: Sequence[PathArg]) -> Iterator[list[Path]]:
    """Temporary paths beside each target, moved onto all targets together on success.

    Each temporary file keeps its target's extension (so writers that choose
    a format by extension work). If the block raises, or any file cannot be
    made durable, no target changes; if a rename fails after others were
    done, those are put back (the earlier files are kept as hard links until
    every rename is done).

    Raises
    ------
    OutputError
        An :class:`OSError` while writing or renaming (the message names the file).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with atomic_paths([d / "a.txt", d / "b.txt"]) as (a, b):
    ...     _ = a.write_text("A"); _ = b.write_text("B")
    >>> sorted(p.name for p in d.iterdir())
    ['a.txt', 'b.txt']
    """
    targets = [Path(p) for p in paths]
    for target in targets:
        _check_target(target, "")
    temps: list[Path] = []
    current: Path | None = None
    try:
        for target in targets:
            current = target
            temps.append(_temp_file(target, target.suffix))
        current = None
        yield list(temps)
        mode = file_mode()
        for tmp, target in zip(temps, targets, strict=True):
            current = target
            _finish(tmp, mode)
        _commit(temps, targets)
        current = targets[0]
        _fsync_path(_directory(targets[0]), directory=True)
    except OSError as exc:
        if current is None:  # raised by the caller's block: name the file it was writing
            named = {os.fspath(t): target for t, target in zip(temps, targets, strict=True)}
            current = named.get(os.fspath(exc.filename or ""), targets[0])
        raise output_error(current, exc) from None
    finally:
        for tmp in temps:
            if os.path.lexists(tmp):
                _unlink_quietly(tmp)


def _commit(temps: list[Path], targets: list[Path]) -> None:
    """Rename every temporary file onto its target; undo the done ones if one fails."""
    backups: list[Path | None] = []
    done = 0
    try:
        for tmp, target in zip(temps, targets, strict=True):
            backup = None
            if len(targets) > 1 and os.path.isfile(target) and not os.path.islink(target):
                backup = _temp_file(target, ".old")
                os.unlink(backup)
                try:
                    os.link(target, backup)
                except OSError:
                    backup = None
            backups.append(backup)
            os.replace(tmp, target)
            done += 1
    except OSError:
        for i in range(done):
            backup = backups[i]
            try:
                if backup is not None:
                    os.replace(backup, targets[i])
                else:
                    os.unlink(targets[i])
            except OSError:
                pass
        raise
    finally:
        for backup in backups:
            if backup is not None and os.path.lexists(backup):
                _unlink_quietly(backup)


@contextmanager
def atomic_path(path: PathArg, *, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path in the target's folder; move it onto ``path`` on success.

    The file is flushed to disk and given the umask's mode (``0o666 & ~umask``)
    before the rename; on any error the target is untouched and the temporary
    file removed. ``suffix`` is accepted for compatibility: the temporary file
    always keeps the target's extension.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("done")
    >>> target.read_text(), sorted(p.name for p in target.parent.iterdir())
    ('done', ['out.txt'])
    """
    with atomic_paths([path]) as (tmp,):
        yield tmp


def _write_data(tmp: Path, data: bytes) -> None:
    fd = os.open(tmp, os.O_WRONLY | os.O_TRUNC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def write_text_atomic(path: PathArg, text: str) -> Path:
    """Write UTF-8 text to ``path`` atomically."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: PathArg, data: bytes) -> Path:
    """Write bytes to ``path`` atomically."""
    with atomic_path(path) as tmp:
        _write_data(tmp, data)
    return Path(path)


def check_table_path(path: PathArg, *, jsonl: bool = True, format: str | None = None) -> Path:
    """Raise unless ``path`` ends in a table extension :func:`write_table` can write (or,
    with ``format``, unless :func:`table_format` accepts the two together).

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
    if format is not None:
        table_format(path, format, jsonl=jsonl)
        return path
    suffix = path.suffix.lower()
    if suffix not in _TABLE_WRITERS or (not jsonl and suffix in (".jsonl", ".ndjson")):
        choices = ".csv, .tsv, .jsonl or .parquet" if jsonl else ".csv, .tsv or .parquet"
        raise DataFormatError(f"{path.name}: cannot write {suffix!r}; use {choices}")
    return path


def dump_table(df: Any, path: PathArg, *, for_people: bool = False,
               default: str | None = None, format: str | None = None) -> None:
    """Write a DataFrame to ``path`` (no atomicity: use inside :func:`atomic_path`).

    The format is ``format`` (csv, tsv, jsonl or parquet) or comes from the extension
    (see :func:`write_table`), or ``default`` (e.g. ``".csv"``) for another one.
    ``for_people`` neutralises spreadsheet formulas in CSV/TSV text cells
    (:func:`annokit.io.escape.neutralise_formulas`).
    """
    suffix = TABLE_FORMATS[format][0] if format is not None else Path(path).suffix.lower()
    if suffix not in _TABLE_WRITERS and default is not None:
        suffix = default
    if for_people and suffix in (".csv", ".tsv", ".tab"):
        df = neutralise_formulas(df)
    _TABLE_WRITERS[suffix](df, Path(path))


def write_table(df: Any, path: PathArg, *, jsonl: bool = True, for_people: bool = False,
                default: str | None = None, format: str | None = None) -> Path:
    """Write a DataFrame as CSV, TSV, JSON Lines or Parquet by extension, atomically.

    Parameters
    ----------
    df : pandas.DataFrame
    path : path-like
        ``.csv``, ``.tsv`` (or ``.tab``), ``.parquet``, and with ``jsonl=True``
        ``.jsonl`` (or ``.ndjson``).
    jsonl : bool, default=True
        Whether JSON Lines is accepted.
    for_people : bool, default=False
        A table meant to be opened in a spreadsheet (aggregates, per-item
        tables): text cells starting with ``=``, ``+``, ``-``, ``@``, tab or
        carriage return get a leading ``'`` in CSV/TSV. Vote files written to
        be read again keep every value exact (the default).
    default : str, optional
        Extension to write when ``path`` has none of the above (e.g. ``".csv"``);
        without it such a path is an error.
    format : {"csv", "tsv", "jsonl", "parquet"}, optional
        The format, whatever the extension (the CLI's ``--out-format``; an extension that
        names another format is refused, :func:`table_format`). Parquet is one file.

    Raises
    ------
    DataFormatError
        Any other extension (see :func:`check_table_path`).
    OutputError
        The file cannot be written (missing or read-only directory, full disk).
    """
    path = Path(path)
    if default is None or format is not None:
        check_table_path(path, jsonl=jsonl, format=format)
    with atomic_path(path) as tmp:
        dump_table(df, tmp, for_people=for_people, default=default, format=format)
    return path


# -- directories ----------------------------------------------------------------------

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False if unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    rc = fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), os.fspath(b))


def _fsync_tree(top: Path) -> None:
    for root, _dirs, files in os.walk(top):
        for name in files:
            _fsync_path(Path(root) / name)
        _fsync_path(root, directory=True)


@contextmanager
def atomic_directory(path: PathArg) -> Iterator[Path]:
    """Yield a new directory beside ``path``; swap it in for ``path`` on success.

    The new directory replaces an existing one in one step (an atomic exchange
    where the system has one, else two renames with the old directory put back
    on failure); the old directory is deleted only after the swap, so it is
    never lost. Directory and files get the umask's modes.

    Raises
    ------
    OutputError
        The directory cannot be written (missing or read-only parent, full disk).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "report"
    >>> with atomic_directory(out) as tmp:
    ...     _ = (tmp / "a.txt").write_text("1")
    >>> [p.name for p in out.iterdir()]
    ['a.txt']
    """
    path = Path(path)
    _check_target(path, "", directory=True)
    parent = _directory(path)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.new-", dir=parent))
    except OSError as exc:
        raise output_error(path, exc) from None
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())
        _fsync_tree(tmp)
        if os.path.lexists(path) and _exchange(tmp, path):
            _remove(tmp)  # now the old report (or a symlink to it, which is all that goes)
        elif os.path.lexists(path):
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-", dir=parent))
            os.replace(path, old / "report")
            try:
                os.replace(tmp, path)
            except OSError:
                os.replace(old / "report", path)
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, path)
        _fsync_path(parent, directory=True)
    except OSError as exc:
        raise output_error(path, exc) from None
    finally:
        if os.path.lexists(tmp):
            _remove(tmp)


def _remove(path: Path) -> None:
    if os.path.islink(path):
        _unlink_quietly(path)
    else:
        shutil.rmtree(path, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
