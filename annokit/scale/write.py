"""Tables written from the workers: one CSV/TSV/JSON Lines file, or a Parquet dataset.

The path says which (:func:`output_kind`): ``.csv``, ``.tsv`` (``.tab``), ``.jsonl``
(``.ndjson``) give **one file**, written as :func:`annokit.io.atomic.write_table` writes
it in memory (the same columns, cells and header); ``.parquet`` (``.pq``) gives a
**Parquet dataset**, a directory of ``part.<i>.parquet`` files, one per partition.

Each partition is written by the worker that holds it into a scratch directory beside
the target (a local or shared file system both workers and client see). For one file the
client then joins the parts, byte for byte and in partition order (each part's header
line dropped but the first), into a temporary file renamed over the target in one step
(:func:`annokit.io.atomic.atomic_path`); a dataset directory replaces the target in one
step (:func:`annokit.io.atomic.atomic_directory`). A failed run leaves the old output.
No table is collected on the client.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from annokit.errors import DataFormatError
from annokit.io.atomic import TABLE_FORMATS, atomic_directory, atomic_path, dump_table, table_format
from annokit.scale.progress import compute

__all__ = ["output_kind", "write_partitioned", "write_table_dask"]

#: Extensions written as one file (the others: a Parquet dataset, or refused).
ONE_FILE = (".csv", ".tsv", ".tab", ".jsonl", ".ndjson")
_ONE_FILE = ONE_FILE
_DATASET = (".parquet", ".pq")


def output_kind(path: str | os.PathLike, *, jsonl: bool = True, format: str | None = None) -> str:
    """``"file"`` (one CSV/TSV/JSON Lines file) or ``"dataset"`` (a Parquet directory).

    ``format`` (the CLI's ``--out-format``) decides instead of the extension: ``parquet``
    is a dataset (checked against the extension by :func:`annokit.io.atomic.table_format`).

    Raises
    ------
    DataFormatError
        Another extension (the CLI's ``--out``).

    Examples
    --------
    >>> output_kind("labels.csv"), output_kind("labels.parquet")
    ('file', 'dataset')
    """
    if format is not None:
        return "dataset" if table_format(path, format, jsonl=jsonl) == "parquet" else "file"
    suffix = Path(path).suffix.lower()
    files = _ONE_FILE if jsonl else _ONE_FILE[:3]
    if suffix in files:
        return "file"
    if suffix in _DATASET:
        return "dataset"
    choices = ".csv, .tsv or .jsonl" if jsonl else ".csv or .tsv"
    raise DataFormatError(f"{Path(path).name}: cannot write {suffix!r} with --engine dask; use "
                          f"{choices} (one file) or .parquet (a directory of Parquet parts, one "
                          "per partition)")


def _write_part(df: pd.DataFrame, folder: str, part: int, suffix: str, for_people: bool,
                drop: tuple[str, ...]) -> int:
    df = df.drop(columns=[c for c in drop if c in df.columns])
    name = os.path.join(folder, f"part.{part:05d}{suffix}")
    if suffix in _DATASET:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), name)
    else:
        dump_table(df, name, for_people=for_people)
    return len(df)


def write_partitioned(frame: Any, out: str | os.PathLike, *, client: Any = None,
                      drop: tuple[str, ...] = ()) -> int:
    """Write a dask DataFrame to the directory ``out`` (one Parquet file per partition).

    ``drop``: columns left out. Returns the number of rows written.

    Examples
    --------
    >>> import dask, dask.dataframe as dd, pandas as pd, tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "labels"
    >>> ddf = dd.from_pandas(pd.DataFrame({"item": ["a", "b", "c"]}), npartitions=2)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     write_partitioned(ddf, out)
    3
    >>> sorted(p.name for p in out.iterdir())
    ['part.00000.parquet', 'part.00001.parquet']
    """
    import dask

    with atomic_directory(out) as tmp:
        tasks = [dask.delayed(_write_part)(p, str(tmp), i, ".parquet", False, drop)
                 for i, p in enumerate(frame.to_delayed())]
        sizes = compute(client, tasks, desc=f"writing {os.path.basename(os.fspath(out))}")
    return int(sum(sizes))


def _sample(df: pd.DataFrame, column: str, n: int = 64) -> tuple[np.ndarray, int]:
    """``n`` evenly spaced values of a partition's sorted column (its minimum and maximum),
    and its number of rows."""
    values = np.sort(df[column].to_numpy(dtype=np.int64))
    if values.size <= n:
        return values, int(values.size)
    return values[np.linspace(0, values.size - 1, n).astype(np.int64)], int(values.size)


#: Rows per range of the ordered output (each range is sorted and written by one task).
_RANGE_ROWS = 1_000_000


def _cuts(frame: Any, column: str, client: Any) -> np.ndarray:
    """Boundaries of the ranges of ``column`` (distinct integers) the ordered output is cut
    into: about :data:`_RANGE_ROWS` rows each (two at least when there are several
    partitions, so that two workers share the work), from a few sorted values of each
    partition computed on ``client``."""
    import dask

    got = compute(client, [dask.delayed(_sample)(p, column) for p in frame.to_delayed()],
                  desc="ordering rows")
    values = np.unique(np.concatenate([np.zeros(0, np.int64), *[g[0] for g in got]]))
    n_rows = sum(g[1] for g in got)
    n = max(-(-n_rows // _RANGE_ROWS), min(frame.npartitions, 2))
    n = max(1, min(n, values.size))
    inner = values[np.linspace(0, values.size - 1, n + 1).astype(np.int64)[1:-1]] \
        if values.size else np.zeros(0, np.int64)
    return np.unique(inner)


def _split(df: pd.DataFrame, column: str, cuts: np.ndarray) -> list[pd.DataFrame]:
    """A partition's rows sorted by ``column``, cut at ``cuts`` (range ``r`` holds the
    values in ``[cuts[r - 1], cuts[r])``)."""
    values = df[column].to_numpy(dtype=np.int64)
    order = np.argsort(values, kind="stable")
    edges = np.searchsorted(values[order], cuts, side="left")
    bounds = [0, *edges.tolist(), len(df)]
    # one take per range: each piece owns its rows (a slice would ship the whole partition)
    return [df.iloc[order[a:b]] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _merge_write(pieces: list[pd.DataFrame], column: str, folder: str, part: int, suffix: str,
                 for_people: bool, drop: tuple[str, ...]) -> int:
    """One range: its pieces (each sorted) merged in the order of ``column``, written as
    part ``part`` without ``column``."""
    df = pd.concat(pieces, ignore_index=True) if len(pieces) > 1 else pieces[0]
    values = df[column].to_numpy(dtype=np.int64)
    if values.size > 1 and not (values[1:] > values[:-1]).all():
        df = df.iloc[np.argsort(values, kind="stable")]
    return _write_part(df.drop(columns=[column]).reset_index(drop=True), folder, part, suffix,
                       for_people, drop)


def _ordered_tasks(frame: Any, column: str, client: Any, folder: str, suffix: str,
                   for_people: bool, drop: tuple[str, ...]) -> list[Any]:
    """Tasks writing ``frame`` in the order of ``column`` as parts 0, 1, ... of ``folder``.

    Each partition is sorted and cut into ranges of ``column`` on its worker; each range's
    pieces are merged and written by one task. No shuffle: the pieces go straight to the
    task that writes their range.
    """
    import dask

    cuts = _cuts(frame, column, client)
    splits = [dask.delayed(_split, nout=cuts.size + 1)(p, column, cuts)
              for p in frame.to_delayed()]
    return [dask.delayed(_merge_write)([s[r] for s in splits], column, folder, r, suffix,
                                       for_people, drop)
            for r in range(cuts.size + 1)]


def _header(meta: pd.DataFrame, suffix: str, for_people: bool, folder: str) -> bytes:
    """What ``dump_table`` writes for no rows (the header line; nothing for JSON Lines)."""
    if suffix in (".jsonl", ".ndjson"):
        return b""
    name = os.path.join(folder, f"header{suffix}")
    dump_table(meta, name, for_people=for_people)
    with open(name, "rb") as f:
        return f.read()


def write_table_dask(frame: Any, out: str | os.PathLike, *, client: Any = None,
                     for_people: bool = False, order: str | None = None,
                     jsonl: bool = True, format: str | None = None) -> int:
    """Write a dask DataFrame to ``out``: one file, or a Parquet dataset.

    A ``.csv``, ``.tsv`` or ``.jsonl`` path is one file; any other (``.parquet``, a
    directory) a Parquet dataset. The CLI accepts the paths of :func:`output_kind`.

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
    out : path
    client : distributed.Client, optional
    for_people : bool, default False
        As :func:`annokit.io.atomic.write_table`: CSV/TSV text cells that a spreadsheet
        would read as a formula get a leading ``'``.
    order : str, optional
        A column of distinct integers to put the rows in (e.g. the items' first-seen
        positions), left out of the output; default: partition order.
    jsonl : bool, default True
        Whether JSON Lines is accepted.
    format : {"csv", "tsv", "jsonl", "parquet"}, optional
        The format whatever the extension (the CLI's ``--out-format``): ``parquet`` is a
        Parquet dataset, the others one file.

    Returns
    -------
    int
        The number of rows written.

    Examples
    --------
    >>> import dask, dask.dataframe as dd, pandas as pd, tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "labels.csv"
    >>> ddf = dd.from_pandas(pd.DataFrame({"item": ["a", "b", "c"], "n": [2, 0, 1]}),
    ...                      npartitions=2)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     write_table_dask(ddf, out, order="n")
    3
    >>> out.read_text().split()
    ['item', 'b', 'c', 'a']
    """
    import dask

    kind, suffix = _kind(out, jsonl=jsonl, format=format)
    drop: tuple[str, ...] = ()
    meta = frame._meta.drop(columns=[order] if order is not None else [])

    def tasks(folder: str) -> list[Any]:
        if order is not None:
            return _ordered_tasks(frame, order, client, folder, suffix if kind == "file"
                                  else ".parquet", for_people, drop)
        return [dask.delayed(_write_part)(p, folder, i, suffix if kind == "file"
                                          else ".parquet", for_people, drop)
                for i, p in enumerate(frame.to_delayed())]

    path = Path(out)
    desc = f"writing {path.name}"
    if kind == "dataset":
        with atomic_directory(out) as tmp:
            sizes = compute(client, tasks(str(tmp)), desc=desc)
        return int(sum(sizes))
    with atomic_path(path) as tmp:
        folder = tempfile.mkdtemp(prefix=f".{path.name}.parts-", dir=path.parent)
        try:
            parts = tasks(folder)
            sizes = compute(client, parts, desc=desc)
            _concatenate(tmp, folder, len(parts), suffix,
                         _header(meta, suffix, for_people, folder))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return int(sum(sizes))


def _kind(out: str | os.PathLike, *, jsonl: bool, format: str | None) -> tuple[str, str]:
    """``"file"`` or ``"dataset"``, and the parts' suffix: the format given, else the path's."""
    suffix = Path(out).suffix.lower()
    if format is not None:
        return output_kind(out, jsonl=jsonl, format=format), TABLE_FORMATS[format][0]
    if suffix in ONE_FILE:
        return output_kind(out, jsonl=jsonl), suffix  # refuses JSON Lines when not wanted
    return "dataset", suffix  # .parquet, or any other path (the CLI asks for .parquet)


def _concatenate(tmp: Any, folder: str, n_parts: int, suffix: str, header: bytes) -> None:
    """The parts' files in order into ``tmp``, under one header (each part's own skipped)."""
    with open(tmp, "wb") as dst:
        dst.write(header)
        for i in range(n_parts):
            with open(os.path.join(folder, f"part.{i:05d}{suffix}"), "rb") as src:
                src.seek(len(header))
                shutil.copyfileobj(src, dst, 1 << 20)
