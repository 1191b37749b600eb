"""Datasets published as counts or soft labels: count matrices, per-label count columns and
probability tables, read into :class:`~annokit.core.votes.Votes` (annotator ids unknown).

Arrays (``--format counts``, or ``--format soft`` for probabilities):

* ``.npy``: one 2-D array of shape (items, labels).
* ``.npz``: the array under the key ``counts`` (``probs`` for soft labels; a file holding one
  array is read whatever its key), with optional keys ``labels`` (one name per column),
  ``item_ids`` (one id per row) and, for soft labels, ``n_annotators`` (one number per row).

Item ids are the row positions ``"0"``, ``"1"``, ... (0-based) unless the file holds
``item_ids`` or ``--item-ids FILE`` gives them (one id per line, or a 1-D ``.npy`` array).
Label names come from ``--labels`` or the ``labels`` key, else they are the column positions
``"0"``, ``"1"``, ...; a number of names that differs from the columns is refused. What was
decided is stated in ``read_info``.

Tables (CSV/TSV/JSON Lines/Parquet): an item column and one count (or probability) column
per label; read with ``--format counts`` / ``--format soft``, and detected without
``--format`` when the columns besides the item column are exactly the declared ``--labels``
(:func:`is_count_table`). A soft table may carry the number of annotators of each item in a
column ``n_annotators`` (or ``n_votes``).

Counts are whole numbers >= 0 (integer dtype, or floats that are whole); probabilities are
rows of numbers >= 0 summing to 1 within :data:`SOFT_ATOL`. With the number of annotators,
soft labels whose ``n * p`` are whole numbers (within :data:`WHOLE_ATOL`) become counts;
otherwise the distributions are kept as :class:`~annokit.core.soft_votes.SoftLabels` (stated in
``read_info``): what needs only distributions works, what needs votes is refused in one line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.checks import first_offenders
from annokit.core.columns import detect_columns
from annokit.core.labels import LabelSet
from annokit.core.soft_votes import SoftLabels
from annokit.core.votes import Votes
from annokit.errors import DataFormatError, InvalidValueError, SchemaError
from annokit.io.source import Input, read_text
from annokit.io.tables import cell_where, read_table

__all__ = ["ARRAY_SUFFIXES", "SOFT_ATOL", "WHOLE_ATOL", "is_array", "is_count_table",
           "read_count_array", "read_count_table"]

#: File endings read as arrays.
ARRAY_SUFFIXES = (".npy", ".npz")
#: How far a row of soft labels may sum from 1.
SOFT_ATOL = 1e-6
#: How far ``n * p`` may be from a whole number for counts to be reconstructed.
WHOLE_ATOL = 1e-9
#: Column names of the number of annotators per item in a soft table.
N_COLUMNS = ("n_annotators", "n_votes")


def is_array(path: str | os.PathLike | Input) -> bool:
    """Whether ``path`` names a NumPy array file (``.npy``/``.npz``)."""
    return str(path).lower().endswith(ARRAY_SUFFIXES)


def is_count_table(names: Sequence[str], labels: Sequence[Any] | None, *, item: str | None) -> bool:
    """Whether a table's columns besides its item column are exactly the declared labels (one
    count column per label): such a table is never a wide table of annotators."""
    if labels is None or item is None:
        return False
    rest = [c for c in names if c != item]
    declared = labels.names if isinstance(labels, LabelSet) else [str(x) for x in labels]
    return sorted(rest) == sorted(declared)


def _load(source: Input, *, soft: bool) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The main array of an .npy/.npz file and, for .npz, its other arrays by key."""
    import io

    name, key = source.name, "probs" if soft else "counts"
    try:
        loaded = np.load(io.BytesIO(source.data), allow_pickle=False)
    except (OSError, EOFError, ValueError) as exc:
        raise DataFormatError(f"{name}: not a readable NumPy file without pickle ({exc}); save "
                              "it with numpy.save / numpy.savez, ids and labels as strings") from None
    if isinstance(loaded, np.ndarray):
        if source.suffix == ".npz":
            raise DataFormatError(f"{name}: an .npz file that holds one bare array; save it with "
                                  "numpy.savez")
        return loaded, {}
    with loaded:
        arrays = {k: loaded[k] for k in loaded.files}
    if key in arrays:
        return arrays.pop(key), arrays
    if len(arrays) == 1:
        return arrays.popitem()[1], {}
    raise DataFormatError(f"{name}: no array {key!r} among the keys {sorted(arrays)}; save the "
                          f"{'probabilities' if soft else 'counts'} under {key!r} (numpy.savez)")


def _shape(arr: np.ndarray, name: str, fmt: str) -> None:
    if arr.dtype.names:
        raise DataFormatError(f"{name}: a structured array; --format {fmt} reads a plain 2-D "
                              "array of shape (items, labels)")
    if arr.ndim != 2:
        raise DataFormatError(f"{name}: {arr.ndim}-D array of shape {arr.shape}; --format {fmt} "
                              "reads a 2-D array of shape (items, labels)")
    if arr.size == 0:
        raise DataFormatError(f"{name}: empty array of shape {arr.shape}; it needs one row per "
                              "item and one column per label")
    if arr.dtype.kind not in "iubf":
        raise DataFormatError(f"{name}: {arr.dtype} values; --format {fmt} reads numbers")


def _show(value: Any) -> str:
    """A cell's value as written: a whole float without its ``.0``, no numpy type names."""
    v = value.item() if hasattr(value, "item") else value
    return repr(int(v)) if isinstance(v, float) and v.is_integer() else repr(v)


def check_count_values(arr: np.ndarray, where: Any) -> np.ndarray:
    """``arr`` as int64 counts, or one line naming the first bad cell (``where(row, col)``)."""
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise DataFormatError(f"{where(r, c)}: {_show(arr[r, c])} is not a count; counts are whole "
                                  "numbers >= 0")
        frac = arr != np.round(arr)
        if frac.any():
            r, c = np.argwhere(frac)[0]
            raise DataFormatError(f"{where(r, c)}: {_show(arr[r, c])} is not a whole count; "
                                  "probabilities are read with --format soft")
    negative = arr < 0
    if negative.any():
        r, c = np.argwhere(negative)[0]
        raise DataFormatError(f"{where(r, c)}: negative count {_show(arr[r, c])}; counts are whole "
                              "numbers >= 0")
    return arr.astype(np.int64, copy=False)


def check_soft_values(arr: np.ndarray, where: Any, row_where: Any) -> np.ndarray:
    """``arr`` as float rows of probabilities, or one line naming the first bad cell or row."""
    arr = arr.astype(np.float64, copy=False)
    bad = ~np.isfinite(arr) | (arr < 0) | (arr > 1)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise DataFormatError(f"{where(r, c)}: {_show(arr[r, c])} is not a probability (0 to 1)")
    off = np.abs(arr.sum(axis=1) - 1.0) > SOFT_ATOL
    if off.any():
        r = int(np.argmax(off))
        raise DataFormatError(f"{row_where(r)}: the probabilities sum to {_show(arr[r].sum())}, not 1 "
                              f"(tolerance {SOFT_ATOL:g}); counts are read with --format counts")
    return arr


def _label_set(labels: Any, n_columns: int, name: str, from_file: Any = None) -> tuple[LabelSet, str]:
    """The label set of ``n_columns`` columns and where its names came from."""
    if labels is not None:
        given = labels if isinstance(labels, LabelSet) else LabelSet([str(x) for x in labels])
        if len(given) != n_columns:
            raise SchemaError(f"{name}: --labels names {len(given)} labels for {n_columns} "
                              "columns; give one name per column, in column order")
        return given, "labels from --labels"
    if from_file is not None:
        names = [str(x) for x in np.asarray(from_file).reshape(-1).tolist()]
        if len(names) != n_columns:
            raise SchemaError(f"{name}: the array 'labels' holds {len(names)} names for "
                              f"{n_columns} columns; give one name per column (or --labels)")
        return LabelSet(names), "labels from the file's 'labels' array"
    return (LabelSet([str(j) for j in range(n_columns)]),
            f"labels: the column positions 0-{n_columns - 1} (--labels names them)")


def read_item_ids(path: str | os.PathLike, n_rows: int, name: str) -> np.ndarray:
    """Item ids from ``--item-ids FILE``: one per line (UTF-8 text), or a 1-D ``.npy`` array."""
    source = Input(path, what="item ids")
    if source.suffix == ".npy":
        ids, _ = _load(source, soft=False)
        if ids.ndim != 1:
            raise DataFormatError(f"{source.name}: --item-ids takes a 1-D array; got shape "
                                  f"{ids.shape}")
        values = [str(v) for v in ids.tolist()]
    else:
        values = read_text(path, what="item ids").splitlines()
        while values and not values[-1].strip():
            values.pop()
        values = [v.strip() for v in values]
    return _check_ids(values, n_rows, f"{source.name} (--item-ids)", name)


def _check_ids(values: Sequence[str], n_rows: int, where: str, name: str) -> np.ndarray:
    if len(values) != n_rows:
        raise SchemaError(f"{where} holds {len(values)} item ids for the {n_rows} rows of {name}")
    ids = np.asarray(values, dtype=object)
    blank = [i for i, v in enumerate(values) if not v]
    if blank:
        raise DataFormatError(f"{where}: empty item id at row {blank[0]}")
    if len(set(values)) != len(values):
        seen = pd.Series(values)
        raise DataFormatError(f"{where}: repeated item ids, e.g. "
                              f"{first_offenders(seen[seen.duplicated()].unique())}")
    return ids


def _votes(values: np.ndarray, *, soft: bool, n: np.ndarray | None, labels: LabelSet,
           ids: np.ndarray, name: str, where: Any, row_where: Any) -> tuple[Votes, str]:
    """Votes from checked counts or soft labels (:class:`SoftLabels` when no counts can be
    reconstructed), and what was decided for ``read_info`` ("" for counts)."""
    if not soft:
        counts = check_count_values(values, where)
        empty = np.flatnonzero(counts.sum(axis=1) == 0)
        if empty.size:
            raise DataFormatError(f"{row_where(int(empty[0]))}: no votes (all counts 0; "
                                  f"{empty.size} such row(s)); every item needs a vote")
        return Votes.from_counts(counts, labels=labels, item_ids=ids, source=name), ""
    probs = check_soft_values(values, where, row_where)
    if n is None:
        why = "the number of annotators is not given"
    else:
        expected = n.astype(np.float64)[:, None] * probs
        whole = np.round(expected)
        off = np.abs(expected - whole) > WHOLE_ATOL
        if not off.any():
            votes = Votes.from_counts(whole.astype(np.int64), labels=labels, item_ids=ids,
                                      source=name)
            return votes, (f"; counts reconstructed as n_annotators x p (whole numbers within "
                           f"{WHOLE_ATOL:g}; rows sum to 1 within {SOFT_ATOL:g})")
        r, c = np.argwhere(off)[0]
        why = (f"n_annotators x p is not a whole number at {where(r, c)} "
               f"({_show(expected[r, c])})")
    kept = SoftLabels(probs, labels=labels, item_ids=ids, source=name, n_annotators_per_item=n)
    return kept, (f"; soft labels only (no votes): distributions kept ({why}; rows sum to 1 "
                  f"within {SOFT_ATOL:g}), what needs votes is refused")


def _n_annotators(values: Any, n_rows: int, where: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.shape != (n_rows,):
        raise SchemaError(f"{where}: {arr.size} numbers of annotators for {n_rows} rows")
    num = pd.to_numeric(pd.Series(arr), errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(num) | (num < 1) | (num != np.round(num))
    if bad.any():
        r = int(np.argmax(bad))
        raise DataFormatError(f"{where}, row {r}: {arr[r]!r} is not a number of annotators "
                              "(a whole number >= 1)")
    return num.astype(np.int64)


def read_count_array(path: str | os.PathLike | Input, *, soft: bool = False,
                     labels: LabelSet | Sequence[Any] | None = None,
                     item_ids: str | os.PathLike | None = None) -> Votes:
    """Votes from an ``.npy``/``.npz`` array of counts (or, ``soft``, probabilities) of shape
    (items, labels); see the module docstring for keys, ids and labels.

    Raises
    ------
    DataFormatError
        A 1-D, 3-D, empty or non-numeric array; a negative, fractional or NaN count; soft
        labels that are not probabilities or give no whole counts.
    SchemaError
        A number of label names or item ids that differs from the array's columns or rows.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "counts.npy"
    >>> np.save(path, np.array([[3, 0], [1, 2]]))
    >>> votes = read_count_array(path, labels=["cat", "dog"])
    >>> votes.item_ids.tolist(), votes.n_votes
    (['0', '1'], 6)
    >>> votes.read_info.split("; ")  # doctest: +NORMALIZE_WHITESPACE
    ['counts.npy: counts array (2 items x 2 labels)',
     'item ids: the row positions 0-1 (0-based', '--item-ids names them)',
     'labels from --labels']
    """
    source = Input(path, what="votes")
    name, fmt = source.name, "soft" if soft else "counts"
    arr, extra = _load(source, soft=soft)
    _shape(arr, name, fmt)
    n_rows, n_cols = arr.shape
    unknown = sorted(set(extra) - {"labels", "item_ids", *(("n_annotators",) if soft else ())})
    if unknown:
        raise DataFormatError(f"{name}: unknown array(s) {unknown}; an .npz file holds "
                              f"{'probs' if soft else 'counts'} and optionally labels, item_ids"
                              f"{', n_annotators' if soft else ''}")
    labelset, label_note = _label_set(labels, n_cols, name, extra.get("labels"))
    if item_ids is not None:
        if "item_ids" in extra:
            raise InvalidValueError(f"{name} holds its item ids (array 'item_ids'); --item-ids "
                                    "does not apply to it")
        ids = read_item_ids(item_ids, n_rows, name)
        id_note = f"item ids from {Input(item_ids, what='item ids').name}"
    elif "item_ids" in extra:
        ids = _check_ids([str(v) for v in np.asarray(extra["item_ids"]).reshape(-1).tolist()],
                         n_rows, f"{name}, array 'item_ids'", name)
        id_note = "item ids from the file's 'item_ids' array"
    else:
        ids = np.arange(n_rows).astype(str).astype(object)
        id_note = f"item ids: the row positions 0-{n_rows - 1} (0-based; --item-ids names them)"
    n = (_n_annotators(extra["n_annotators"], n_rows, f"{name}, array 'n_annotators'")
         if "n_annotators" in extra else None)

    def where(r: Any, c: Any) -> str:
        return f"{name}, row {int(r)}, column {int(c)}"

    def row_where(r: Any) -> str:
        return f"{name}, row {int(r)}"

    votes, what = _votes(arr, soft=soft, n=n, labels=labelset, ids=ids, name=name,
                         where=where, row_where=row_where)
    votes.read_info = (f"{name}: {'soft labels' if soft else 'counts'} array ({n_rows} items x "
                       f"{n_cols} labels){what}; {id_note}; {label_note}")
    votes.input_kind = "soft labels" if soft else "counts"
    votes.row_ids = "item_ids" not in extra and item_ids is None
    return votes


def read_count_table(path: str | os.PathLike | Input, *, soft: bool = False,
                     labels: LabelSet | Sequence[Any] | None = None,
                     columns: Mapping[str, str | None] | None = None,
                     missing: Sequence[str] = (), sep: str | None = None) -> Votes:
    """Votes from a table with an item column and one count (``soft``: probability) column per
    label (CSV/TSV/JSON Lines/Parquet). The label columns are the declared ``labels`` (in their
    order), else every column besides the item (and ``n_annotators``) column, in file order.

    Raises
    ------
    SchemaError
        No item column, or label columns that differ from the declared labels.
    DataFormatError
        An empty file, or a blank, negative, fractional or non-numeric count (the message names
        the line and column).
    """
    source = Input(path, what="votes")
    name, fmt = source.name, "soft" if soft else "counts"
    given = {k: v for k, v in dict(columns or {}).items() if v}
    extra_roles = sorted(set(given) - {"item"})
    if extra_roles:
        raise InvalidValueError(f"{name}: a {fmt} table names its item column only (--item-col); "
                                f"got {', '.join(f'--{r}-col' for r in extra_roles)}")
    df = read_table(source, missing=missing, sep=sep)
    names = [str(c) for c in df.columns]
    item = detect_columns(names, ("item",), given=given, source=name)["item"]
    if item is None:
        raise SchemaError(f"{name}: no item column among {names}; name it with --item-col")
    if df.shape[0] == 0:
        raise DataFormatError(f"{name}: no rows; a {fmt} table holds one row per item")
    n_col = next((c for c in names if c in N_COLUMNS), None) if soft else None
    rest = [c for c in names if c not in (item, n_col)]
    if labels is not None:
        declared = labels.names if isinstance(labels, LabelSet) else [str(x) for x in labels]
        if sorted(rest) != sorted(declared):
            raise SchemaError(f"{name}: the {fmt} columns {rest} are not the labels given with "
                              f"--labels {','.join(declared)}; give one column per label")
        label_cols = list(declared)
        labelset, label_note = _label_set(labels, len(label_cols), name)
    else:
        if not rest:
            raise SchemaError(f"{name}: no label columns besides {item!r}; a {fmt} table has one "
                              "column per label")
        label_cols = rest
        labelset, label_note = LabelSet(rest), "labels: the column names"
    values = np.empty((df.shape[0], len(label_cols)), dtype=np.float64)
    for j, col in enumerate(label_cols):
        num = pd.to_numeric(df[col], errors="coerce")
        bad = num.isna().to_numpy()
        if bad.any():
            r = int(np.argmax(bad))
            raise DataFormatError(f"{cell_where(source, df, r, col)}: {df[col].iloc[r]!r} is not a "
                                  f"{'probability' if soft else 'count'}")
        values[:, j] = num.to_numpy(dtype=np.float64)
    ids_raw = df[item]
    if ids_raw.isna().any():
        r = int(np.argmax(ids_raw.isna().to_numpy()))
        raise DataFormatError(f"{cell_where(source, df, r, item)}: empty item id")
    ids = _check_ids([str(v) for v in ids_raw.tolist()], df.shape[0], f"{name}, column {item!r}",
                     name)
    n = None if n_col is None else _n_annotators(df[n_col].to_numpy(), df.shape[0],
                                                 f"{name}, column {n_col!r}")

    def where(r: Any, c: Any) -> str:
        return cell_where(source, df, int(r), label_cols[int(c)])

    def row_where(r: Any) -> str:
        return cell_where(source, df, int(r), item).split(", column")[0]

    votes, what = _votes(values, soft=soft, n=n, labels=labelset, ids=ids, name=name,
                         where=where, row_where=row_where)
    kind = df.attrs.get("annokit_read_as") or source.suffix.lstrip(".")
    votes.read_info = (f"{name}: {'soft labels' if soft else 'counts'} table ({kind}){what}; "
                       f"item={item!r}, one column per label; {label_note}")
    votes.input_kind = "soft labels" if soft else "counts"
    votes.row_ids = False
    return votes
