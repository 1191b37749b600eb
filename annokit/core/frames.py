"""Votes from pandas frames: the coding behind ``Votes.from_long`` and ``Votes.from_wide``.

Each function checks a frame and returns the arguments of the :class:`~annokit.core.votes.Votes`
constructor: integer codes for items, annotators and labels (every raw column hashed once,
see :mod:`annokit.core.labels`), the id tables, per-item metadata and gold codes.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.checks import first_offenders
from annokit.core.columns import detect_columns
from annokit.core.gold import factorize_gold, gold_value_codes, item_gold
from annokit.core.labels import LabelSet, as_str_values, factorize_ids, factorize_values
from annokit.errors import DegenerateInputWarning, InputError, SchemaError


def long_parts(df: pd.DataFrame, *, item: str, label: str, annotator: str | None,
               labels: LabelSet | Sequence[Any] | None, gold: str | None,
               item_columns: Sequence[str], source: str) -> dict[str, Any]:
    """Constructor arguments of :meth:`Votes.from_long` (see there)."""
    if not isinstance(df, pd.DataFrame):
        raise SchemaError(f"{source}: expected a pandas DataFrame; got {type(df).__name__}")
    if annotator == "annotator" and "annotator" not in df.columns:
        annotator = None
    wanted = [c for c in (item, label, annotator, gold, *item_columns) if c is not None]
    missing = [c for c in wanted if c not in df.columns]
    if missing:
        raise SchemaError(
            f"{source} is missing column(s) {missing}; got {list(map(str, df.columns))}"
        )
    if len(df) == 0:
        raise SchemaError(f"{source} has no votes")
    attrs = df.attrs.get("annokit", {})
    if labels is None and "labels" in attrs:
        labels = LabelSet.from_dict(attrs["labels"])
    elif labels is None and isinstance(df[label].dtype, pd.CategoricalDtype):
        labels = LabelSet(list(df[label].cat.categories))
    label_values = df[label]
    if isinstance(label_values.dtype, pd.CategoricalDtype):
        label_values = label_values.astype(object)
    where_label = f"{source}, column {label!r}"
    raw_codes, raw_labels = factorize_values(label_values, what="label", where=where_label)
    labelset = LabelSet.coerce(labels, raw_labels)
    try:
        label_codes = labelset.encode(raw_labels, where=where_label)[raw_codes]
    except InputError:  # name the row, not the position among distinct labels
        label_codes = labelset.encode(label_values, where=where_label)

    def ids_of(col: str, what: str) -> tuple[np.ndarray, np.ndarray]:
        column = df[col]
        if isinstance(column.dtype, pd.CategoricalDtype):
            return factorize_ids(column.astype(object), what=what,
                                  where=f"{source}, column {col!r}",
                                  order=list(column.cat.categories))
        return factorize_ids(column, what=what, where=f"{source}, column {col!r}")

    item_codes, item_ids = ids_of(item, "item id")
    ann_codes = ann_ids = None
    if annotator is not None:
        ann_codes, ann_ids = ids_of(annotator, "annotator id")
    meta_cols = [c for c in item_columns if c != gold]
    needs_rows = gold is not None or bool(meta_cols)
    first_rows = _first_row_per_item(item_codes, len(item_ids)) if needs_rows else None
    if "item_metadata" in attrs and not meta_cols:
        meta = pd.DataFrame(attrs["item_metadata"], index=pd.RangeIndex(len(item_ids)))
    else:
        meta = _item_fields(df, item_codes, first_rows, meta_cols, item_ids, source)
    gold_codes = None
    if gold is not None:
        if first_rows is None:  # needs_rows holds with a gold column
            raise ValueError(f"{source}: gold codes need each item's first row")
        gold_codes = gold_column_codes(df[gold], item_codes, first_rows, labelset, item_ids,
                                 f"{source}, column {gold!r}")
    elif "gold" in attrs:
        gold_codes = np.asarray(attrs["gold"], dtype=np.int64)
    return {"item_index": item_codes, "label_index": label_codes, "item_ids": item_ids,
            "labels": labelset, "annotator_index": ann_codes, "annotator_ids": ann_ids,
            "item_metadata": meta, "gold": gold_codes, "_ids_unique": True}


def wide_parts(df: pd.DataFrame, *, item: str, annotator_columns: Sequence[str] | None,
               labels: LabelSet | Sequence[Any] | None, gold: str | None,
               item_columns: Sequence[str], source: str) -> dict[str, Any]:
    """Constructor arguments of :meth:`Votes.from_wide` (see there)."""
    if item not in df.columns:
        raise SchemaError(f"{source} is missing column {item!r}; got {list(df.columns)}")
    reserved = {item, gold, *item_columns}
    if annotator_columns is None:
        annotator_columns = [c for c in df.columns if c not in reserved]
    missing = [c for c in annotator_columns if c not in df.columns]
    if missing:
        raise SchemaError(f"{source} is missing annotator column(s) {missing}")
    if not annotator_columns:
        raise SchemaError(f"{source} has no annotator columns")
    item_codes_row, item_ids = factorize_ids(df[item].astype(object), what="item id",
                                              where=f"{source}, column {item!r}")
    if len(item_ids) != len(df):
        dup = df[item][df[item].duplicated()].tolist()
        raise SchemaError(f"{source}: each item must be on one row; repeated {first_offenders(dup)}")
    cells = df[list(annotator_columns)].to_numpy(dtype=object)
    # blank = missing or whitespace-only; decided once per distinct cell value
    codes, distinct = pd.factorize(cells.ravel(), use_na_sentinel=True)
    blank = pd.Series(np.asarray(distinct, dtype=object)).astype(str).str.strip().eq("")
    is_blank = np.append(blank.to_numpy(), True)  # code -1 (NaN/None) takes the last entry
    present = ~is_blank[codes].reshape(cells.shape)
    empty_rows = np.flatnonzero(~present.any(axis=1))
    if empty_rows.size:
        raise SchemaError(
            f"{source}: {empty_rows.size} item(s) have zero votes, e.g. "
            f"{first_offenders(item_ids[empty_rows])}"
        )
    rows, cols = np.nonzero(present)  # row-major: votes grouped by item
    values = cells[rows, cols]
    labelset = LabelSet.coerce(labels, as_str_values(values, what="label", where=source))
    label_codes = labelset.encode(values, where=source)
    meta = df[list(item_columns)].reset_index(drop=True) if item_columns else None
    gold_codes = None
    if gold is not None:
        gold_codes = gold_column_codes(df[gold], np.arange(len(df)), np.arange(len(df)), labelset,
                                 item_ids, f"{source}, column {gold!r}")
    return {"item_index": item_codes_row[rows], "label_index": label_codes,
            "item_ids": item_ids, "labels": labelset, "annotator_index": cols,
            "annotator_ids": [str(c) for c in annotator_columns], "item_metadata": meta,
            "gold": gold_codes}


def _first_row_per_item(item_codes: np.ndarray, n_items: int) -> np.ndarray:
    """Row of each item's first vote: a stable sort by item, then the start of each run."""
    if n_items == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(item_codes, kind="stable")
    starts = np.searchsorted(item_codes[order], np.arange(n_items), side="left")
    return order[starts]


def _item_fields(df: pd.DataFrame, item_codes: np.ndarray, first_rows: np.ndarray | None,
                 columns: Sequence[str], item_ids: np.ndarray, source: str) -> pd.DataFrame:
    """Per-item metadata from columns that must be constant within each item.

    ``first_rows`` (each item's first row) may be None when there are no ``columns``."""
    if not columns:
        return pd.DataFrame(index=pd.RangeIndex(len(item_ids)))
    if first_rows is None:
        raise ValueError("_item_fields: metadata columns need each item's first row")
    meta = df[list(columns)].iloc[first_rows].reset_index(drop=True)
    for c in columns:
        col = df[c]
        if (col.dtype == object and pd.api.types.infer_dtype(meta[c], skipna=True) == "mixed"
                and meta[c].map(lambda v: isinstance(v, (list, dict, np.ndarray))).any()):
            continue  # nested values (lists, dicts) are taken from each item's first row
        values = col.to_numpy(dtype=object)
        expected = meta[c].to_numpy(dtype=object)[item_codes]
        same = (values == expected) | (pd.isna(values) & pd.isna(expected))
        if not same.all():
            row = int(np.argmin(same))
            raise SchemaError(
                f"{source}: column {c!r} must be constant within an item; item "
                f"{item_ids[item_codes[row]]!r} has {expected[row]!r} and {values[row]!r} (row {row})"
            )
    return meta


def gold_column_codes(column: pd.Series, item_codes: np.ndarray, first_rows: np.ndarray,
                      labels: LabelSet, item_ids: np.ndarray, where: str) -> np.ndarray:
    """Gold code per item (-1: no gold, -2: a gold label not among ``labels``). Blank cells
    carry no gold; the cells of an item that do must agree (gold may be given on one row of
    each item only). Gold values that are not labels are counted in one warning
    (:mod:`annokit.core.gold`); they never join the label set.

    The column is hashed once; blanks are found and labels coded among its distinct values
    only, so the cost is one factorisation, whatever the number of rows."""
    value_index, distinct = factorize_gold(column)
    gold, unknown = item_gold(gold_value_codes(distinct, labels), value_index, distinct,
                              item_codes, len(first_rows), labels, where=where, item_ids=item_ids)
    if unknown is not None:
        warnings.warn(unknown.message(where), DegenerateInputWarning, stacklevel=4)
    return gold


def long_frame(item_ids: Any, item_index: np.ndarray, annotator_ids: Any,
               annotator_index: np.ndarray | None, label_names: Sequence[str],
               label_index: np.ndarray, gold: np.ndarray | None) -> pd.DataFrame:
    """One row per vote with plain string columns (:meth:`annokit.core.votes.Votes.to_frame`)."""
    data = {"item": np.asarray(item_ids, dtype=object)[item_index]}
    if annotator_index is not None:
        data["annotator"] = np.asarray(annotator_ids, dtype=object)[annotator_index]
    data["label"] = np.asarray(list(label_names), dtype=object)[label_index]
    if gold is not None:
        names = np.asarray([*label_names, None], dtype=object)  # codes -1 and -2 -> None
        data["gold"] = names[np.maximum(np.asarray(gold), -1)[item_index]]
    return pd.DataFrame(data)


def long_columns(df: Any, item: str | None, annotator: str | None, label: str | None,
                  source: str) -> tuple[Any, Any, Any]:
    """The item, annotator and label columns of a long frame: given, named as the role, or
    detected from known spellings (:func:`annokit.core.columns.detect_columns`)."""
    if not isinstance(df, pd.DataFrame):
        return item or "item", annotator, label or "label"
    by_text = {str(c): c for c in df.columns}
    given: dict[str, str | None] = {}
    for role, col in (("item", item), ("label", label)):
        if col is not None or role in by_text:
            given[role] = col if col is not None else role
    if annotator is None or annotator != "annotator" or "annotator" in by_text:
        given["annotator"] = annotator
    given = {k: (None if v is None else str(v)) for k, v in given.items()
             if v is None or str(v) in by_text}  # a column it lacks: long_parts names it
    roles = detect_columns(list(by_text), ("item", "annotator", "label"), given=given,
                           source=source)
    found = {k: by_text[v] if v is not None else None for k, v in roles.items()}
    return (found["item"] if found["item"] is not None else item or "item",
            found["annotator"] if found["annotator"] is not None else
            (annotator if annotator not in (None, "annotator") else None),
            found["label"] if found["label"] is not None else label or "label")


def frames_equal(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """Whether two item metadata frames hold equal values (NaN equal to NaN, arrays by value)."""
    if list(a.columns) != list(b.columns) or len(a) != len(b):
        return False
    for c in a.columns:
        x = a[c].tolist()
        y = b[c].tolist()
        if len(x) != len(y):
            return False
        for u, v in zip(x, y, strict=True):
            if isinstance(u, np.ndarray):
                u = u.tolist()
            if isinstance(v, np.ndarray):
                v = v.tolist()
            if u != v and not (pd.api.types.is_scalar(u) and pd.isna(u) and pd.isna(v)):
                return False
    return True
