"""Label lists: JSON Lines with one row per item and the item's labels as a list.

Released crowd data often come this way when the annotators' ids were not kept:
Pavlick & Kwiatkowski's graded NLI ratings (``{"id": "73712e", "labels": [49.99, -50.0,
...], ...}``: 15-45 slider ratings from -50 to 50 per premise/hypothesis pair), or a
dataset exported with a ``labels`` sequence per row. The layout is read without conversion:

* the **item** column is ``--item-col`` or the one column, among the usual item spellings
  (``item``, ``id``, ``task``, ...), whose values are unique per row (Pavlick's ``task``
  names the source corpus and repeats, ``id`` does not);
* the **label list** column is ``--label-col`` or the one field holding a list of numbers or
  texts; several are settled by name (``labels``, ``ratings``, ``scores``, ...), and the
  lists left unread are named in ``read_info``;
* numbers are ratings on an **interval** scale (labels are the distinct values in numeric
  order; ``--scale`` changes it); when every value lies within 0.001 of a whole number (a
  slider's steps released with a small jitter, as Pavlick's) the values are read as whole
  numbers, and ``read_info`` says so with the largest offset; texts are nominal labels;
* **annotators are unknown** unless a parallel list names them (``annotators``,
  ``workers``, ... or ``--annotator-col``: one id per label, same length): without one the
  votes carry no annotator ids (``annotator_index`` is None), so nothing can pretend to know
  who gave which label, and per-annotator quality, filters and anything else that needs
  annotators refuse the votes; with one, repeated (item, annotator) pairs follow
  ``--duplicates``;
* the row's other fields (premise, hypothesis, original label, ...) are ``item_metadata``.

References
----------
Pavlick, E. & Kwiatkowski, T. (2019). Inherent disagreements in human textual inferences.
TACL 7, 677-694. doi:10.1162/tacl_a_00293. Data: github.com/epavlick/NLI-variation-data.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.checks import first_offenders
from annokit.core.labels import LabelSet, scalar_to_str
from annokit.core.scales import ordered_names
from annokit.core.votes import DuplicatePolicy, Votes
from annokit.errors import DataFormatError, DegenerateInputWarning, Option, SchemaError
from annokit.io.source import Input, json_object_lines, loads_json
from annokit.io.tables import table_kind
from annokit.io.tabular import ROLE_SPELLINGS

__all__ = ["LIST_SPELLINGS", "looks_like_label_lists", "read_label_lists"]

#: Names that settle which list holds the labels when a row has several lists, in order.
LIST_SPELLINGS: tuple[str, ...] = ("labels", "ratings", "scores", "label", "rating", "score",
                                   "responses", "annotations", "votes", "answers")
#: Names of a list of annotator ids parallel to the labels (``--annotator-col`` names another).
ANNOTATOR_LISTS: tuple[str, ...] = (*(s + "s" for s in ROLE_SPELLINGS["annotator"]),
                                    "annotator_ids", "worker_ids", "rater_ids")
#: Largest distance from a whole number that is read as jitter around a slider step.
JITTER = 1e-3


def _scalar(v: Any) -> bool:
    return isinstance(v, (str, int, float)) and not isinstance(v, bool)


def _list_fields(row: Mapping[str, Any]) -> list[str]:
    return [k for k, v in row.items() if isinstance(v, list) and v and all(map(_scalar, v))]


def looks_like_label_lists(path: str | os.PathLike | Input) -> bool:
    """True for JSON Lines whose first row has a non-empty list of numbers or texts and no
    annotator or scalar label field (which would make it a long table)."""
    try:
        source = path if isinstance(path, Input) else Input(path)
        if table_kind(source) != "jsonl":
            return False
        row = loads_json(source.first_line(), source.name)
    except (DataFormatError, OSError, ValueError):
        return False
    if not isinstance(row, dict) or not _list_fields(row):
        return False
    keys = {str(k).lower() for k in row}
    scalar_labels = {str(k).lower() for k, v in row.items() if _scalar(v)}
    return not (keys & set(ROLE_SPELLINGS["annotator"])) and not (
        scalar_labels & set(ROLE_SPELLINGS["label"]))


def _pick_item(rows: list[dict], given: str | None, name: str) -> str:
    fields = list(dict.fromkeys(k for r in rows for k in r))
    if given is not None:
        if given not in fields:
            raise SchemaError(f"{name} is missing column(s) [{given!r}] (given for item); got "
                              f"{fields}")
        return given
    lower = {f.lower(): f for f in fields}
    found = [lower[s] for s in ROLE_SPELLINGS["item"] if s in lower]
    unique = [f for f in found if all(_scalar(r.get(f)) for r in rows)
              and pd.Series([scalar_to_str(r[f]) for r in rows]).is_unique]
    if len(unique) == 1:
        return unique[0]
    if not unique:
        raise SchemaError(f"{name}: no item column with one value per row; got fields {fields}"
                          + (f" ({found} repeat values)" if found else "")
                          + "; name it with --item-col (Python: columns={'item': ...})")
    raise SchemaError(f"{name}: fields {unique} could each be the item column; name one with "
                      "--item-col (Python: columns={'item': ...})")


def _pick_annotators(rows: list[dict], given: str | None, name: str) -> str | None:
    if given is not None:
        if all(given not in r for r in rows):
            raise SchemaError(f"{name} is missing column(s) [{given!r}] (given for annotator); "
                              f"got {list(rows[0])}")
        return given
    found = [k for k in rows[0] if str(k).lower() in ANNOTATOR_LISTS]
    if len(found) > 1:
        raise SchemaError(f"{name}: fields {found} could each list the annotators; name one with "
                          "--annotator-col (Python: columns={'annotator': ...})")
    return found[0] if found else None


def _pick_list(rows: list[dict], given: str | None, name: str,
               annotators: str | None = None) -> tuple[str, list[str]]:
    lists = list(dict.fromkeys(k for r in rows[:1] for k in _list_fields(r) if k != annotators))
    if given is not None:
        if given not in lists and all(given not in r for r in rows):
            raise SchemaError(f"{name} is missing column(s) [{given!r}] (given for label); got "
                              f"{list(rows[0])}")
        return given, [f for f in lists if f != given]
    if len(lists) == 1:
        return lists[0], []
    named = [s for s in LIST_SPELLINGS if s in {f.lower() for f in lists}]
    if named:
        chosen = next(f for f in lists if f.lower() == named[0])
        return chosen, [f for f in lists if f != chosen]
    raise SchemaError(f"{name}: fields {lists} could each hold the labels; name one with "
                      "--label-col (Python: columns={'label': ...})")


def read_label_lists(path: str | os.PathLike | Input, *,
                     columns: Mapping[str, str | None] | None = None,
                     duplicates: DuplicatePolicy = "error") -> Votes:
    """Read JSON Lines with one row per item and a list of its labels (see the module docstring).

    Parameters
    ----------
    path : path-like or Input
    columns : mapping, optional
        ``item``, ``label`` (the field holding the list) and ``annotator`` (a parallel list
        of annotator ids); detected when not given.
    duplicates : {"error", "first", "last", "keep"}, default="error"
        Repeated (item, annotator) pairs, when a parallel list names the annotators.

    Returns
    -------
    Votes
        One vote per list element, without annotator ids. Numbers are labels on an
        interval scale (distinct values in numeric order), texts nominal labels.
        ``read_info`` states the fields used, the lists left unread, the rounding of
        jittered numbers and that annotators are unknown; ``item_metadata`` holds the
        other fields of each row.

    Raises
    ------
    DataFormatError
        A row that is not a JSON object, a list element that is not a number or a text,
        or lists that mix numbers and texts (naming the line).
    SchemaError
        No (or an ambiguous) item or list field; a given field that is missing.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "graded.jsonl"
    >>> _ = f.write_text('{"id": "a", "labels": [49.9999, -50.00002]}\\n'
    ...                  '{"id": "b", "labels": [3.00001, 3, 10]}\\n')
    >>> v = read_label_lists(f)
    >>> v.labels.names, v.labels.scale, v.n_annotators
    (('-50', '3', '10', '50'), 'interval', None)
    >>> v.counts().tolist()
    [[1, 0, 0, 1], [0, 2, 1, 0]]
    """
    source = path if isinstance(path, Input) else Input(path, what="votes")
    name = source.name
    given = dict(columns or {})
    unknown = sorted(k for k, v in given.items() if v and k not in ("item", "label", "annotator"))
    if unknown:
        item, label, ann = (Option("columns", role=r) for r in ("item", "label", "annotator"))
        raise SchemaError(f"{name}: a file of label lists has an item field, a list field and "
                          f"maybe a list of annotators; {unknown} do not apply ({item}, "
                          f"{label} and {ann} do)", options=[item, label, ann])
    rows, lines = json_object_lines(source.text, name)
    if not rows:
        raise DataFormatError(f"{name}: no rows")
    item_col = _pick_item(rows, given.get("item"), name)
    ann_col = _pick_annotators(rows, given.get("annotator"), name)
    list_col, unread = _pick_list(rows, given.get("label"), name, ann_col)
    keep, sizes, flat, who, empty = _lists(rows, lines, item_col, list_col, ann_col, name)
    row_of = np.repeat(np.asarray(keep), sizes)  # the row of each vote
    labels, label_index, note = _code_labels(flat, lambda at: lines[row_of[at]], list_col, name)
    item_ids = np.asarray([scalar_to_str(rows[i][item_col]) for i in keep], dtype=object)
    meta = pd.DataFrame([{k: v for k, v in rows[i].items()
                          if k not in (item_col, list_col, ann_col)} for i in keep])
    ann_codes: np.ndarray | None = None
    ann_ids: np.ndarray | None = None
    if ann_col is not None:
        ann_codes, found = pd.factorize(pd.Series(who, dtype=object), sort=False)
        ann_ids = np.asarray(found, dtype=object)
    votes = Votes(np.repeat(np.arange(len(keep)), sizes), label_index, item_ids=item_ids,
                  labels=labels, item_metadata=meta, annotator_index=ann_codes,
                  annotator_ids=ann_ids, duplicates=duplicates, source=name)
    votes.read_info = (
        f"{name}: label lists (JSON Lines, one row per item); item={item_col!r}, "
        f"labels={list_col!r}" + (f" (other lists not read: {unread})" if unread else "")
        + _counts_text(votes, np.asarray(sizes)) + note
        + ("; annotators unknown (no ids in the file): per-annotator scores are not available"
           if ann_col is None else f"; annotators={ann_col!r} ({votes.n_annotators} annotators)")
        + (f"; {len(empty)} item(s) with no labels left out" if empty else ""))
    return votes


def _counts_text(votes: Votes, n: np.ndarray) -> str:
    """Items, votes per item and the labels, for ``read_info``."""
    labels = votes.labels
    kind = (f"interval scale, {len(labels)} distinct values from {labels.names[0]} to "
            f"{labels.names[-1]}"
            if labels.scale == "interval" else f"nominal labels {list(labels.names)[:8]}")
    return (f"; {votes.n_items} items, {int(n.sum())} votes ({int(n.min())}-{int(n.max())} per "
            f"item); {kind}")


def _lists(rows: list[dict[str, Any]], lines: list[int], item_col: str, list_col: str,
           ann_col: str | None, name: str
           ) -> tuple[list[int], list[int], list[Any], list[str], list[str]]:
    """The rows with labels, their number of labels, the labels in row order, the annotator
    of each label (with ``ann_col``) and the items with an empty list (warned about)."""
    keep: list[int] = []
    sizes: list[int] = []
    flat: list[Any] = []
    who: list[str] = []
    empty: list[str] = []
    for i, (row, line) in enumerate(zip(rows, lines, strict=True)):
        values = row.get(list_col)
        if values in (None, []):
            empty.append(scalar_to_str(row[item_col]))
            continue
        if not isinstance(values, list):
            raise DataFormatError(f"line {line} of {name}: {list_col!r} is "
                                  f"{type(values).__name__}, not a list")
        bad = next((j for j, v in enumerate(values) if not _scalar(v)), None)
        if bad is not None:
            raise DataFormatError(f"line {line} of {name}: {list_col}[{bad}] is {values[bad]!r}, "
                                  "not a number or a text")
        if ann_col is not None:
            ids = row.get(ann_col)
            if not isinstance(ids, list) or len(ids) != len(values) or not all(map(_scalar, ids)):
                raise DataFormatError(
                    f"line {line} of {name}: {ann_col!r} must list one annotator id per label "
                    f"({len(values)} in {list_col!r}); got {ids!r}"[:300])
            who.extend(scalar_to_str(a) for a in ids)
        keep.append(i)
        sizes.append(len(values))
        flat.extend(values)
    if not keep:
        raise DataFormatError(f"{name}: no row has labels in {list_col!r}")
    if empty:
        warnings.warn(f"{name}: {len(empty)} item(s) with an empty {list_col!r} left out, e.g. "
                      f"{first_offenders(empty)}", DegenerateInputWarning, stacklevel=3)
    return keep, sizes, flat, who, empty


def _code_labels(flat: list[Any], line_of: Callable[[int], int], list_col: str, name: str
                 ) -> tuple[LabelSet, np.ndarray, str]:
    """The label set (numbers: an interval scale in numeric order, jitter rounded; texts:
    nominal), the label code of each vote and a note on the rounding for ``read_info``."""
    is_number = np.fromiter((not isinstance(v, str) for v in flat), dtype=bool, count=len(flat))
    if is_number.any() and not is_number.all():
        first_text = int(np.argmin(is_number))
        raise DataFormatError(f"line {line_of(first_text)} of {name}: {list_col!r} mixes numbers "
                              f"and texts ({flat[first_text]!r}); give one kind of label")
    note = ""
    if is_number.all():
        x = np.asarray(flat, dtype=np.float64)
        if not np.isfinite(x).all():
            at = int(np.argmin(np.isfinite(x)))
            raise DataFormatError(f"line {line_of(at)} of {name}: {list_col!r} holds "
                                  f"{flat[at]!r}, not a finite number")
        offset = np.abs(x - np.rint(x))
        if 0 < offset.max() <= JITTER:
            x = np.rint(x)
            note = (f"; values within {JITTER:g} of whole numbers read as whole numbers "
                    f"(largest offset {offset.max():.2g})")
        text = np.asarray([scalar_to_str(v) for v in x], dtype=object)
        labels = LabelSet(ordered_names(pd.unique(text), "interval"), scale="interval")
    else:
        text = np.asarray(flat, dtype=object)
        labels = LabelSet(list(pd.unique(text)))
    return labels, labels.encode(text, where=name), note
