"""The per-partition work of :func:`annokit.scale.votes.read_votes_dask`.

Each function runs on a worker on one partition (or, for :func:`disjoint`, on the client on
the partitions' distinct item keys): :func:`code_part` codes a partition read from a file
(item ids to 64-bit keys, labels and annotators factorised, blank values refused),
:func:`remap` maps its local codes to the merged dictionaries, and :func:`finish_part` puts
it in item order and refuses duplicate votes, conflicting gold and shared keys.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.gold import GOLD_NONE
from annokit.core.ids import has_repeated_pairs
from annokit.core.labels import MISSING_STRINGS, scalar_to_str
from annokit.core.resample import item_keys
from annokit.errors import SchemaError
from annokit.io.tables import row_where

__all__ = ["SPACES", "code_part", "disjoint", "finish_part", "order_by_key", "remap",
           "where_value"]

#: Bits of the row number in an item's first-seen position (``items["first"]``).
ROW_BITS = 40


def _where(df: pd.DataFrame, row: int, column: str, part: int) -> str:
    name = df.attrs.get("annokit_source")
    if name is None:
        return f"partition {part}, row {row}, column {column!r}"
    return f"{row_where(df, row)} of {name}, column {column!r}"


def where_value(df: pd.DataFrame, part: int, column: str, value: Any) -> str:
    """Where ``value`` first occurs in ``column`` of one partition (file and line, as the
    partition's other messages say it), for an error found after the partitions were coded."""
    col = df[column]
    hit = (col == value).to_numpy(dtype=bool, na_value=False)
    if not hit.any():
        hit = (col.astype(str) == str(value)).to_numpy(dtype=bool, na_value=False)
    return _where(df, int(np.argmax(hit)), column, part)


def code_part(df: pd.DataFrame, part: int, roles: Mapping[str, str | None]) -> tuple:
    """Local coding of one partition: (numeric frame, items frame, label uniques,
    annotator uniques (an Arrow string array: sent to the client as buffers, not one Python
    object per id), gold uniques, sorted distinct item keys)."""
    item_c, label_c, annot_c, gold_c = (roles["item"], roles["label"], roles["annotator"],
                                        roles["gold"])
    if item_c is None or label_c is None:  # read_votes_dask refuses such roles before coding
        raise ValueError(f"partition {part}: the item and label columns are required")
    for col in [c for c in (item_c, label_c, annot_c) if c]:
        blank = df[col].isna().to_numpy()
        if blank.any():
            row = int(np.argmax(blank))
            what = {item_c: "item id", label_c: "label", annot_c: "annotator id"}[col]
            raise SchemaError(f"{_where(df, row, col, part)}: missing {what}")
    # every column is hashed once; text conversion and keys are computed on distinct values
    coded = {}
    named = [(c, what) for c, what in ((item_c, "item id"), (label_c, "label"),
                                       (annot_c, "annotator id")) if c]
    for col, what in named:
        codes, uniques, arrow = _factorize(df[col])
        blank = _blank(uniques, arrow)
        if blank.size:
            row = int(np.argmax(codes == blank[0]))
            raise SchemaError(f"{_where(df, row, col, part)}: {what} is empty "
                              f"(got {uniques[blank[0]]!r})")
        coded[col] = codes, uniques
        if col == annot_c:
            annot_arrow = _arrow_text(uniques, arrow)
    item_codes, item_u = coded[item_c]
    item_key = item_keys(item_u).view(np.int64) if len(item_u) else np.zeros(0, np.int64)
    lab_codes, lab_uniques = coded[label_c]
    ann_codes = coded[annot_c][0] if annot_c else np.full(len(df), -1)
    if not annot_c:
        annot_arrow = _arrow_text(np.zeros(0, dtype=object), None)
    frame = pd.DataFrame({"item": item_key[item_codes], "annotator": ann_codes.astype(np.int32),
                          "label": lab_codes.astype(np.int16)})
    # each item's first row, as (partition << 40) + row: the first-seen order of memory
    first = np.zeros(len(item_u), dtype=np.int64)
    first[item_codes[::-1]] = np.arange(len(df), dtype=np.int64)[::-1]
    first += np.int64(part) << ROW_BITS
    gold_uniques = np.zeros(0, dtype=object)
    if gold_c:  # the distinct (item, gold) pairs; conflicts are refused after the shuffle
        gold_codes, gold_uniques, _ = _factorize(df[gold_c], missing_ok=True)
        pair = np.unique(item_codes * (len(gold_uniques) + 1) + (gold_codes + 1))
        it, g = pair // (len(gold_uniques) + 1), pair % (len(gold_uniques) + 1) - 1
        items = pd.DataFrame({"item": item_key[it], "item_id": item_u[it],
                              "gold": g.astype(np.int16), "first": first[it]})
    else:
        items = pd.DataFrame({"item": item_key, "item_id": item_u,
                              "gold": np.full(len(item_u), -1, np.int16), "first": first})
    return frame, items, np.asarray(lab_uniques, dtype=object), annot_arrow, \
        np.asarray(gold_uniques, dtype=object), np.sort(item_key)


def _arrow_text(uniques: np.ndarray, arrow: Any) -> Any:
    """Distinct texts as one Arrow string array (``arrow``: the same, when at hand)."""
    import pyarrow as pa

    if arrow is None:
        return pa.array(uniques, pa.string())
    if isinstance(arrow, pa.ChunkedArray):
        arrow = arrow.combine_chunks()
    if pa.types.is_dictionary(arrow.type):
        arrow = arrow.dictionary_decode()
    return arrow.cast(pa.string())


#: Every character ``str.strip`` removes (``str.isspace``), as the tests check.
SPACES = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
          "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


@functools.cache
def _spaces() -> Any:
    """:data:`SPACES` as an Arrow array."""
    import pyarrow as pa

    return pa.array(list(SPACES), pa.string())


def _blank(uniques: np.ndarray, arrow: Any = None) -> np.ndarray:
    """Positions of the distinct texts that read as missing (``s.strip().lower()`` in
    :data:`MISSING_STRINGS`). Only short texts and texts starting or ending with white space
    can (``lower`` never shortens a text); those few are checked in Python. ``arrow``: the
    same texts as an Arrow array, when at hand."""
    if not len(uniques):
        return np.zeros(0, np.int64)
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = pa.array(uniques, pa.string()) if arrow is None else arrow
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    short = pc.less_equal(pc.utf8_length(arr), max(map(len, MISSING_STRINGS)))
    edge = pc.or_(pc.is_in(pc.utf8_slice_codeunits(arr, 0, 1), value_set=_spaces()),
                  pc.is_in(pc.utf8_slice_codeunits(arr, -1), value_set=_spaces()))
    cand = np.flatnonzero(pc.or_(short, edge).to_numpy(zero_copy_only=False))
    return cand[np.fromiter((str(uniques[i]).strip().lower() in MISSING_STRINGS for i in cand),
                            dtype=bool, count=cand.size)]


def _factorize(column: pd.Series, *, missing_ok: bool = False
               ) -> tuple[np.ndarray, np.ndarray, Any]:
    """Codes and distinct values (as str, as in memory) of one column, with no per-row Python:
    distinct raw values that read as the same text (``1`` and ``"1"``) share a code. Third:
    the distinct values as an Arrow array when the column holds Arrow strings, else None."""
    codes, found = pd.factorize(column, use_na_sentinel=True)
    codes = np.asarray(codes, dtype=np.int64)
    if isinstance(column.dtype, (pd.CategoricalDtype, pd.ArrowDtype)) and len(found):
        # a categorical or dictionary column may list values no row of this part uses
        used = np.bincount(codes[codes >= 0], minlength=len(found)) > 0
        if not used.all():
            codes = np.where(codes >= 0, np.cumsum(used)[np.maximum(codes, 0)] - 1, -1)
            found = found[used]
    uniques = np.asarray(found, dtype=object)
    if _is_text(column.dtype):  # str(v) is v: distinct values are distinct texts
        if not missing_ok and len(codes) and (codes < 0).any():  # pragma: no cover - checked before
            raise SchemaError("missing value")
        values = getattr(found, "array", found)  # an Index of an ArrowExtensionArray
        arrow = getattr(values, "_pa_array", None) if isinstance(column.dtype, pd.ArrowDtype) \
            else None
        return np.asarray(codes, dtype=np.int64), uniques, arrow
    text = np.fromiter((scalar_to_str(v) for v in uniques), dtype=object, count=len(uniques))
    merged, distinct = pd.factorize(text) if len(text) else (np.zeros(0, np.int64), text)
    if len(distinct) != len(text):
        codes = np.where(codes >= 0, merged[np.maximum(codes, 0)], -1)
    if not missing_ok and len(codes) and (codes < 0).any():  # pragma: no cover - checked before
        raise SchemaError("missing value")
    return np.asarray(codes, dtype=np.int64), np.asarray(distinct, dtype=object), None


def _is_text(dtype: Any) -> bool:
    """Whether a column holds strings only (Arrow string types, pandas' string dtype)."""
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa

        t = dtype.pyarrow_dtype
        if pa.types.is_dictionary(t):
            t = t.value_type
        return bool(pa.types.is_string(t) or pa.types.is_large_string(t))
    return isinstance(dtype, pd.StringDtype)


def remap(parts: tuple, label_map: np.ndarray, annotators: Any,
          gold_map: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One coded partition (:func:`code_part`) with the merged codes: labels and gold through
    the client's maps, annotators by their position in ``annotators`` (the merged Arrow
    dictionary, None without annotators), found here, next to the partition."""
    frame, items = parts[0].copy(), parts[1].copy()
    if len(frame):
        frame["label"] = label_map[frame["label"].to_numpy()].astype(np.int16)
        if annotators is not None and len(parts[3]):
            import pyarrow.compute as pc

            annot_map = pc.index_in(parts[3], value_set=annotators).to_numpy(
                zero_copy_only=False).astype(np.int32)
            frame["annotator"] = annot_map[frame["annotator"].to_numpy()]
    if len(items):
        g = items["gold"].to_numpy()
        items["gold"] = np.where(g >= 0, gold_map[np.maximum(g, 0)] if gold_map.size else -1,
                                 -1).astype(np.int16)
    return frame, items


def finish_part(frame: pd.DataFrame, items: pd.DataFrame, part: int, check_duplicates: bool,
                source: str, annotator_ids: Any = None, count_pairs: bool = False
                ) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """After the shuffle (if any): sort by item, refuse duplicate votes (naming the item and the
    annotator by their ids) and conflicting gold.

    ``count_pairs`` (votes kept with ``duplicates="keep"``): also count the repeated (item,
    annotator) pairs, each pair once, as the in-memory reader reports them
    (:func:`annokit.io.duplicates_note`); the third value (0 otherwise)."""
    order = order_by_key(frame["item"].to_numpy())
    frame = pd.DataFrame({c: frame[c].to_numpy()[order] for c in frame.columns})
    keys = items["item"].to_numpy()
    by_key = np.argsort(keys, kind="stable")
    if not (keys[by_key][1:] == keys[by_key][:-1]).any():  # one row per item: nothing to merge
        items = items.take(by_key).reset_index(drop=True)
    else:
        items = _merge_items(items, source)
    if check_duplicates and len(frame) and _may_repeat(frame, annotator_ids):
        pair = frame.duplicated(["item", "annotator"])
        if pair.any():
            first = frame[pair].iloc[0]
            item_id = items.loc[items["item"] == first["item"], "item_id"].iloc[0]
            code = int(first["annotator"])
            who = (repr(str(annotator_ids[code])) if annotator_ids is not None
                   and 0 <= code < len(annotator_ids) else f"code {code}")
            raise SchemaError(f"{source}: duplicate votes: item {item_id!r} has two or more "
                              f"votes from annotator {who}; the Dask engine refuses them: read "
                              "with --engine memory and --duplicates first|last|keep (Python: "
                              "read_votes_dask(duplicates='keep') keeps them)")
    n_pairs = 0
    if count_pairs and len(frame) and _may_repeat(frame, annotator_ids):
        repeated = frame.loc[frame.duplicated(["item", "annotator"]), ["item", "annotator"]]
        n_pairs = len(repeated.drop_duplicates())
    return frame, items, n_pairs


def _merge_items(items: pd.DataFrame, source: str) -> pd.DataFrame:
    """One row per item, sorted by key, from rows of an item read in several partitions or
    with several gold values; refuses conflicting gold and two ids with one key."""
    # an item read in several partitions: its first row in the first of them
    items = items.assign(first=items.groupby("item")["first"].transform("min"))
    items = items.drop_duplicates(["item", "item_id", "gold"])
    known = items[items["gold"] != GOLD_NONE]  # a label, or -2: not among the labels
    clash = known["item"].duplicated(keep=False)
    if clash.any():
        bad = known[clash].iloc[0]
        raise SchemaError(f"{source}: item {bad['item_id']!r} has conflicting gold labels")
    items = items.sort_values(["item", "gold"], ascending=[True, False], kind="stable")
    items = items.drop_duplicates(["item", "item_id"])
    twice = items["item"].duplicated(keep=False)
    if twice.any():
        ids = items.loc[twice, "item_id"].tolist()[:2]
        raise SchemaError(f"{source}: item ids {ids[0]!r} and {ids[1]!r} share a 64-bit key; "
                          "rename one")
    return items.reset_index(drop=True)


def order_by_key(key: np.ndarray) -> np.ndarray:
    """``np.argsort(key, kind="stable")``; linear when each key's rows are consecutive (votes
    written item by item): the runs are put in key order, each kept as it is."""
    n = key.size
    if n == 0:
        return np.zeros(0, np.int64)
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    by_key = np.argsort(key[starts], kind="stable")
    run_keys = key[starts][by_key]
    if (run_keys[1:] == run_keys[:-1]).any():  # a key in several runs
        return np.argsort(key, kind="stable")
    lengths = np.diff(np.r_[starts, n])[by_key]
    moved = starts[by_key] - (np.cumsum(lengths) - lengths)  # old start - new start, per run
    return np.repeat(moved, lengths) + np.arange(n)


def _may_repeat(frame: pd.DataFrame, annotator_ids: Any) -> bool:
    """Whether some (item, annotator) pair occurs twice in a partition sorted by item: the
    in-memory reader's check (:func:`annokit.core.ids.has_repeated_pairs`) on the item runs."""
    key = frame["item"].to_numpy()
    rows = np.zeros(key.size, dtype=np.int64)
    np.cumsum(key[1:] != key[:-1], out=rows[1:])
    annotators = frame["annotator"].to_numpy()
    n_annotators = len(annotator_ids) if annotator_ids is not None else int(annotators.max()) + 1
    return has_repeated_pairs(rows, annotators, int(rows[-1]) + 1, n_annotators)


def disjoint(keys: Sequence[np.ndarray]) -> bool:
    """Whether no item key occurs in two partitions (each array: a partition's distinct keys)."""
    if len(keys) < 2:
        return True
    every = np.sort(np.concatenate(keys))
    return not bool((every[1:] == every[:-1]).any())
