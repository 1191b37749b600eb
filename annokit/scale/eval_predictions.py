"""Model predictions as a Dask DataFrame, for :func:`annokit.scale.evaluate.evaluate_dask`.

The formats are those of the in-memory reader (:mod:`annokit.io.predictions`)
for tables: Parquet and CSV/TSV files (a directory, a glob or a list of files)
with an item id column (``item``, ``id``, ``uid`` or ``id_field``) and either
one column per class (``prob_<label>`` / ``logit_<label>``, or every other
column) or a ``probs`` / ``logits`` list column; also a dask or pandas
DataFrame of that shape, or an in-memory :class:`~annokit.io.predictions.Predictions`.
Every other format the in-memory reader takes (JSON, JSON Lines, ``.npy``) is read once
on the client with :func:`annokit.io.predictions.read_predictions` (one row per item:
far smaller than the votes) and joined with the votes' partitions by item id, as tables are.

Each partition is validated by the in-memory reader's own code (finite,
non-negative rows summing to 1 within ``atol``, ``renormalize``, logits through
softmax), so the probabilities are bit for bit those read in memory. The
result has columns ``item_id`` (str), ``_key`` (:func:`annokit.core.resample.item_keys`
of the id: the bootstrap key, also the shuffle key) and ``p0 .. p{m-1}`` in the
file's class order.
"""

from __future__ import annotations

import glob
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.resample import item_keys
from annokit.errors import DataFormatError, InputError, InvalidValueError
from annokit.io.lines import LineMap, RowPlaces
from annokit.io.predictions import (
    Predictions,
    prediction_columns,
    predictions_from_frame,
    read_predictions,
)
from annokit.scale.votes import _file_bytes

__all__ = ["DaskPredictions", "read_predictions_dask"]

_PARQUET = (".parquet", ".pq")
_CSV = (".csv", ".tsv", ".tab")


@dataclass
class DaskPredictions:
    """One model's predictions on Dask.

    Attributes
    ----------
    frame : dask.dataframe.DataFrame
        Columns ``item_id``, ``_key`` and ``p0 .. p{n_labels-1}`` (file class order).
    label_names : tuple of str or None
        Class names when the columns name them (``prob_<label>``), else None.
    n_labels : int
    source : str
        What was read (for messages).
    """

    frame: Any
    label_names: tuple[str, ...] | None
    n_labels: int
    source: str


def _columns(columns: Sequence[str], id_field: str | None, source: str
             ) -> tuple[str, tuple[str, ...] | None, int | None]:
    """The id column, the class names (None when unnamed) and the width (None: list column)."""
    layout = prediction_columns(columns, id_field, source)
    if layout.label_names is None:
        return layout.id_field, None, None
    return layout.id_field, layout.label_names, len(layout.label_names)


def _side_file(paths: Any) -> bool:
    """Whether ``paths`` name files only the in-memory reader reads (JSON, JSON Lines, .npy):
    they are read whole on the client (predictions are one row per item, far fewer than
    the votes) and joined with the votes' partitions by item id."""
    listed = [paths] if isinstance(paths, (str, Path)) else list(paths)
    return any(not Path(p).is_dir() and not any(ch in str(p) for ch in "*?[")
               and not str(p).lower().endswith(_PARQUET + _CSV) for p in listed)


def _files(paths: Any) -> list[str]:
    if isinstance(paths, (str, Path)):
        paths = [paths]
    out: list[str] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = sorted(str(f) for f in path.iterdir()
                           if f.is_file() and f.name.lower().endswith(_PARQUET + _CSV))
            if not found:
                raise DataFormatError(f"{path}: no .parquet or .csv prediction files in the "
                                      "directory")
            out += found
        elif any(ch in str(p) for ch in "*?["):
            found = sorted(glob.glob(str(p)))
            if not found:
                raise DataFormatError(f"no prediction files match {p}")
            out += found
        elif not path.exists():
            raise DataFormatError(f"prediction file not found: {path}")
        else:
            out.append(str(path))
    if not out:
        raise InvalidValueError("read_predictions_dask needs at least one path")
    kinds = {Path(f).suffix.lower() in _PARQUET for f in out}
    if len(kinds) > 1:
        raise DataFormatError(f"prediction files mix Parquet and CSV: {out[:4]}")
    return out


def _part(df: pd.DataFrame, idf: str, width: int, source: str, id_field: str | None,
          renormalize: bool, atol: float, files: tuple[str, ...] | None = None, sep: str = ",",
          partition_info: dict | None = None) -> pd.DataFrame:
    """One partition through the in-memory reader's validation, as item_id, _key, p0..

    ``files``: the file of each partition when each file is one partition (a message then
    names the file's line, found in it only for the message); else rows of the partition."""
    if len(df) == 0:
        out = pd.DataFrame({"item_id": pd.Series([], dtype=object),
                            "_key": pd.Series([], dtype=np.uint64)})
        for j in range(width):
            out[f"p{j}"] = pd.Series([], dtype=np.float64)
        return out
    part = 0 if partition_info is None else partition_info["number"]
    name = idf if id_field is None else id_field
    where = source

    def validated(locs: Any) -> Predictions:
        return predictions_from_frame(df.copy(deep=False), locs, source=where, id_field=name,
                                      renormalize=renormalize, atol=atol)

    if files is not None and part < len(files):
        where = files[part]
        pred = validated(RowPlaces.of_frame({"annokit_lines": LineMap(
            where, sep=sep, blank_rows="kept", opener=_file_bytes)}, len(df)))
    else:
        try:  # the row names are only read by messages: built when a check fails
            pred = validated(np.broadcast_to(np.array(["?"], dtype=object), (len(df),)))
        except InputError:  # the same checks again, naming the row ("row 3 of partition 2")
            pred = validated(np.strings.add(np.strings.add(
                "row ", np.arange(len(df)).astype(str)), f" of partition {part}").astype(object))
    if pred.n_labels != width:
        raise DataFormatError(f"partition {part} of {source}: {pred.n_labels} class columns; "
                              f"other partitions have {width}")
    ids = np.asarray(pred.item_ids, dtype=object)
    column = df.iloc[:, [str(c) for c in df.columns].index(name)]
    # ids read as text are the column's own strings: kept as they are (Arrow), not rebuilt
    text = column.array if isinstance(column.dtype, pd.StringDtype) else ids
    out = {"item_id": text, "_key": item_keys(ids)}
    out.update({f"p{j}": pred.probs[:, j] for j in range(width)})
    return pd.DataFrame(out)


def _one_block_each(files: list[str], blocksize: Any, npartitions: int) -> tuple[str, ...] | None:
    """The files, when each was read as one partition (none larger than a block), so a
    partition's rows are its file's; else None (a file cut into blocks of bytes: its rows are
    counted within the block)."""
    import os

    from dask.utils import parse_bytes

    if npartitions != len(files):
        return None
    limit = None if blocksize is None else parse_bytes(blocksize)
    try:
        if any(os.path.getsize(f) == 0 or (limit is not None and os.path.getsize(f) > limit)
               for f in files):
            return None
    except OSError:  # not a local file (fsspec URL): counted within the partition
        return None
    return tuple(files)


def _list_width(frame: Any, idf: str, source: str, id_field: str | None, renormalize: bool,
                atol: float) -> int:
    """Classes of a list-column file: read from the first non-empty partition."""
    for d in frame.to_delayed():
        df = d.compute()
        if len(df):
            locs = np.array([f"row {i}" for i in range(len(df))], dtype=object)
            return predictions_from_frame(df, locs, source=source,
                                          id_field=idf if id_field is None else id_field,
                                          renormalize=renormalize, atol=atol).n_labels
    raise DataFormatError(f"{source}: no prediction rows")


def read_predictions_dask(predictions: Any, *, id_field: str | None = None,
                          renormalize: bool = False, atol: float = 1e-4,
                          blocksize: Any = "64MB") -> DaskPredictions:
    """One model's predictions as a Dask DataFrame, validated partition by partition.

    Parameters
    ----------
    predictions : path, glob, sequence of paths, dask or pandas DataFrame, or Predictions
        Parquet or CSV/TSV files (a directory reads every such file in it); see
        the module notes for the columns.
    id_field : str, optional
        The item id column; by default the first of ``item``, ``id``, ``uid``.
    renormalize, atol
        As in :func:`annokit.io.predictions.read_predictions`.
    blocksize : str or int, default "64MB"
        CSV block size (one partition per block).

    Returns
    -------
    DaskPredictions

    Raises
    ------
    DataFormatError
        A file that is missing or of another type, no id column, or (when the
        partitions are computed) the in-memory reader's row errors.

    Examples
    --------
    >>> import pandas as pd
    >>> p = read_predictions_dask(pd.DataFrame({"id": ["a"], "prob_x": [0.3], "prob_y": [0.7]}))
    >>> p.label_names, p.frame.compute()[["item_id", "p1"]].values.tolist()
    (('x', 'y'), [['a', 0.7]])
    """
    import dask.dataframe as dd

    per_file: tuple[str, ...] | None = None
    sep = ","
    if isinstance(predictions, Predictions):
        frame = pd.DataFrame({"item": predictions.item_ids})
        names = predictions.label_names
        for j in range(predictions.n_labels):
            frame[f"prob_{names[j]}" if names else f"prob_{j}"] = predictions.probs[:, j]
        out = read_predictions_dask(frame, id_field="item", renormalize=renormalize, atol=atol)
        out.label_names, out.source = names, ", ".join(predictions.sources)
        return out
    if isinstance(predictions, pd.DataFrame):
        import dask

        source = "predictions DataFrame"
        with dask.config.set({"dataframe.convert-string": False}):  # keep list cells as lists
            frame = dd.from_pandas(predictions, npartitions=1, sort=False)
    elif hasattr(predictions, "map_partitions"):
        source, frame = "predictions DataFrame", predictions
    else:
        if _side_file(predictions):  # one row per item: read once here, joined by item id
            return read_predictions_dask(read_predictions(predictions, id_field=id_field,
                                                          renormalize=renormalize, atol=atol))
        files = _files(predictions)
        source = files[0] if len(files) == 1 else f"{files[0]} (and {len(files) - 1} more)"
        if files[0].lower().endswith(_PARQUET):
            frame = dd.read_parquet(files)
        else:
            sep = "," if files[0].lower().endswith(".csv") else "\t"
            frame = dd.read_csv(files, sep=sep, dtype=str, keep_default_na=False,
                                na_filter=False, blocksize=blocksize)
            per_file = _one_block_each(files, blocksize, frame.npartitions)
    idf, names, width = _columns(list(frame.columns), id_field, source)
    if width is None:
        width = _list_width(frame, idf, source, id_field, renormalize, atol)
    meta = _part(frame._meta, idf, width, source, id_field, renormalize, atol)
    out = frame.map_partitions(_part, idf, width, source, id_field, renormalize, atol,
                               per_file, sep, meta=meta, enforce_metadata=False)
    return DaskPredictions(out, names, width, source)
