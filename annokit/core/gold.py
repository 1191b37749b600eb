"""Gold labels: coding them against the votes' label set, and accuracy against them.

Gold never changes the label set: the labels come from the votes (or a declared label
set), and each gold value is coded with :meth:`LabelSet.encode`, the votes' own coding, so
aliases and any normalisation the label set does apply to gold alike. A gold value that is
not one of the labels gets the code :data:`GOLD_UNKNOWN` (-2): it is kept (an item with
such gold still *has* gold, so the count can be stated beside every accuracy) but it never
counts as right or wrong. :data:`GOLD_NONE` (-1) means the item has no gold.

A gold value that differs from a label only by case or by surrounding spaces is *not*
matched (the label set's case-insensitive lookup is not applied to gold): it is unknown,
and the one warning listing unknown gold values says which label it resembles, so the
gold file can be fixed. Nothing is folded silently.

Everything is vectorised over the distinct gold values (few), never over items.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.labels import LabelSet, scalar_to_str
from annokit.errors import InputError, SchemaError

__all__ = ["GOLD_NONE", "GOLD_UNKNOWN", "GoldAccuracy", "UnknownGold", "check_gold_codes",
           "describe_accuracy", "describe_gold_items", "encode_gold", "factorize_gold",
           "gold_accuracy", "gold_value_codes", "gold_clash_error", "item_gold", "merge_gold",
           "unknown_gold",
           "warn_unknown_gold_dropped"]

#: Gold code of an item without gold.
GOLD_NONE = -1
#: Gold code of an item whose gold label is not among the labels (never right or wrong).
GOLD_UNKNOWN = -2

#: How many unknown gold values a warning shows.
SHOWN = 5


def factorize_gold(values: Any) -> tuple[np.ndarray, np.ndarray]:
    """The distinct non-blank values of a gold column, and each cell's index among them.

    Parameters
    ----------
    values : array-like or Series of shape (n,)
        Raw gold cells: label names (or aliases, or numbers), blank or missing for no gold.

    Returns
    -------
    value_index : ndarray of int64, shape (n,)
        Index of each cell's value in ``distinct``; -1 for a blank or missing cell.
    distinct : ndarray of str (object)
        The distinct non-blank values as text (:func:`~annokit.core.labels.scalar_to_str`;
        ``1`` and ``"1"`` are one value).
    """
    raw, uniques = _factorize(values)
    text = (uniques.astype(str).astype(object) if uniques.dtype.kind in "iu"
            else np.asarray([scalar_to_str(v) for v in uniques.astype(object)], dtype=object))
    blank = pd.Series(text, dtype=object).str.strip().eq("").to_numpy(dtype=bool)
    keep = np.flatnonzero(~blank)
    merged, distinct = pd.factorize(text[keep], sort=False)
    slot = np.full(len(uniques) + 1, -1, dtype=np.int64)  # last slot: NaN (code -1)
    slot[keep] = merged
    return slot[raw], np.asarray(distinct, dtype=object)


def _factorize(values: Any) -> tuple[np.ndarray, np.ndarray]:
    """Codes (-1 for missing) and distinct raw values; Arrow columns are dictionary-encoded
    by Arrow."""
    if type(values).__module__.startswith("pyarrow"):
        import pyarrow as pa
        import pyarrow.compute as pc

        encoded = pc.dictionary_encode(values)
        if isinstance(encoded, pa.ChunkedArray):
            encoded = encoded.unify_dictionaries() if encoded.num_chunks > 1 else encoded
            chunks = encoded.chunks
            dictionary = (chunks[0].dictionary if chunks else pa.array([], pa.string()))
            indices = pa.chunked_array([c.indices for c in chunks], type=encoded.type.index_type)
        else:
            dictionary, indices = encoded.dictionary, encoded.indices
        raw = np.asarray(indices.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
        return raw, np.asarray(dictionary.to_numpy(zero_copy_only=False))
    column = values if isinstance(values, pd.Series) else pd.Series(
        np.asarray(values, dtype=object).reshape(-1), dtype=object)
    if isinstance(column.dtype, pd.CategoricalDtype):
        column = column.astype(object)
    raw, uniques = pd.factorize(column, sort=False, use_na_sentinel=True)
    return raw, np.asarray(uniques)


def encode_gold(values: Any, labels: LabelSet) -> np.ndarray:
    """Code raw gold values against ``labels`` without adding labels.

    Parameters
    ----------
    values : array-like or Series of shape (n,)
        Raw gold cells: label names (or aliases, or numbers), blank or missing for no gold.
    labels : LabelSet
        The votes' labels.

    Returns
    -------
    ndarray of int64, shape (n,)
        Label index, :data:`GOLD_NONE` for a blank or missing cell, :data:`GOLD_UNKNOWN`
        for a value that is not one of the labels.

    Examples
    --------
    >>> encode_gold(["cat", "Cat", "", None, "fish"], LabelSet(["cat", "dog"])).tolist()
    [0, -2, -1, -1, -2]
    """
    value_index, distinct = factorize_gold(values)
    return np.append(gold_value_codes(distinct, labels), GOLD_NONE)[value_index]


def gold_value_codes(distinct: Any, labels: LabelSet) -> np.ndarray:
    """Code of each distinct gold text: the label it names exactly, as the label set codes
    it (:meth:`LabelSet.encode`), else :data:`GOLD_UNKNOWN` (:data:`GOLD_NONE` for a blank).

    A value the label set matches only by case or surrounding spaces is unknown.
    """
    distinct = np.asarray(distinct, dtype=object)
    out = np.full(len(distinct), GOLD_UNKNOWN, dtype=np.int64)
    blank = pd.Series(distinct, dtype=object).astype(str).str.strip().eq("").to_numpy(dtype=bool)
    if blank.any():  # a blank value is no gold (callers that factorised gold have none)
        out[blank] = GOLD_NONE
        out[~blank] = gold_value_codes(distinct[~blank], labels)
        return out
    if not len(distinct):
        return out
    try:  # the common case: every gold value is a label (one call, no per-value Python)
        out[:] = labels.encode(distinct, where="gold")
    except InputError:
        for j, value in enumerate(distinct):  # some value is not a label: find which (few)
            try:
                out[j] = labels.encode([value], where="gold")[0]
            except InputError:
                pass
    # a match only by case or surrounding spaces (the label set's lenient lookup) is no match
    spellings = _spellings(labels)
    for k in np.flatnonzero(out >= 0):  # distinct values: few
        near = spellings[out[k]]
        if distinct[k] not in near and any(_fold(distinct[k]) == _fold(s) for s in near):
            out[k] = GOLD_UNKNOWN
    return out


def _spellings(labels: LabelSet) -> list[set[str]]:
    """Each label's exact spellings: its name and its aliases."""
    out = [{name} for name in labels.names]
    for alias, target in labels.aliases.items():
        out[labels.names.index(target)].add(alias)
    return out


def _fold(text: str) -> str:
    return text.strip().casefold()


def _resemblance(value: str, labels: LabelSet) -> str | None:
    """Hint for a gold value that is not a label: the label it matches but for case, surrounding
    spaces or how a number is written; None when it matches none."""
    for k, spellings in enumerate(_spellings(labels)):
        for s in sorted(spellings):
            if _fold(value) == _fold(s):
                how = [w for w, differs in (("case", value.strip() != s.strip()),
                                            ("surrounding spaces", value != value.strip()
                                             or s != s.strip())) if differs]
                return f"gold {value!r} matches label {labels.names[k]!r} but for {' and '.join(how)}"
    number = _as_number(value)
    if number is not None and labels.values is not None:
        hit = np.flatnonzero(labels.values == number)
        if hit.size:
            return f"gold {value!r} is the number of label {labels.names[int(hit[0])]!r}"
    if number is not None:
        for name in labels.names:
            if _as_number(name) == number:
                return f"gold {value!r} is the number of label {name!r}"
    return None


def _as_number(text: str) -> float | None:
    try:
        x = float(text)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class UnknownGold:
    """Gold values that are not among the labels, as found when gold was read.

    Attributes
    ----------
    values : tuple of (str, int or None)
        Each distinct unknown gold value and the number of items giving it, most frequent
        first (None where the items were not counted: the Dask engine counts them beside
        each accuracy instead).
    labels : LabelSet
    """

    values: tuple[tuple[str, int | None], ...]
    labels: LabelSet

    @property
    def n_items(self) -> int | None:
        counts = [n for _, n in self.values if n is not None]
        return sum(counts) if len(counts) == len(self.values) else None

    def message(self, source: str) -> str:
        """One line for the warning: counted, the first few shown, hints for near misses."""
        shown = ", ".join(repr(v) if n is None else f"{v!r} ({n} item{'s' if n != 1 else ''})"
                          for v, n in self.values[:SHOWN])
        more = (f" and {len(self.values) - SHOWN} more value(s)" if len(self.values) > SHOWN
                else "")
        hints = [h for h in (_resemblance(v, self.labels) for v, _ in self.values[:SHOWN]) if h]
        hint = (f"; {'; '.join(hints)} (correct their spelling in the gold to match)" if hints
                else "")
        names = list(self.labels.names)
        names = names if len(names) <= 10 else [*names[:10], "..."]
        n = self.n_items
        who = (f"{n} item(s) have a gold label that is" if n is not None
               else f"{len(self.values)} gold value(s) are")
        return (f"{source}: {who} not among the votes' labels {names}: {shown}{more}; "
                f"their gold is left out of accuracy{hint}")


def item_gold(value_codes: np.ndarray, value_index: np.ndarray, distinct: np.ndarray,
              item_codes: np.ndarray, n_items: int, labels: LabelSet, *, where: str,
              item_ids: Any = None,
              distinct_items: bool = False) -> tuple[np.ndarray, UnknownGold | None]:
    """One gold code per item from the cells of a gold column.

    A blank cell carries no gold; the non-blank cells of an item must give the same value
    (gold may be given on one row of each item only).

    Parameters
    ----------
    value_codes : ndarray of int64, shape (n_distinct,)
        :func:`gold_value_codes` of ``distinct``.
    value_index, distinct
        :func:`factorize_gold` of the cells.
    item_codes : ndarray of int, shape (n,)
        Item of each cell.
    n_items : int
    labels : LabelSet
    where : str
        File and column, for messages.
    item_ids : array-like, optional
        Item ids, to name an item in messages.
    distinct_items : bool, default=False
        The cells name distinct items (a gold file, whose repeated items are refused): each
        item's gold is its one cell's, with nothing to compare.

    Returns
    -------
    gold : ndarray of int64, shape (n_items,)
    unknown : UnknownGold or None
        The unknown gold values and the number of items giving each; None when all are labels.

    Raises
    ------
    SchemaError
        Two different gold values on the rows of one item.
    """
    out = np.full(n_items, GOLD_NONE, dtype=np.int64)
    rows = np.flatnonzero(value_index >= 0)
    if not rows.size:
        return out, None
    vals = value_index[rows]
    items = np.asarray(item_codes)[rows]
    if distinct_items:
        codes = value_codes[vals]
        out[items] = codes
        return out, unknown_gold(vals[codes == GOLD_UNKNOWN], distinct, labels)
    first = np.full(n_items, -1, dtype=np.int64)
    first[items[::-1]] = vals[::-1]  # each item's first gold cell
    # values naming the same label (a name and its alias) agree; unknown values by their text
    key_of_value = np.where(value_codes >= 0, value_codes, len(labels) + np.arange(len(distinct)))
    clash = key_of_value[first[items]] != key_of_value[vals]
    if clash.any():
        k = int(np.argmax(clash))
        item = items[k] if item_ids is None else str(np.asarray(item_ids, dtype=object)[items[k]])
        raise SchemaError(
            f"{where}: gold must be the same on every row of an item; item {item!r} has "
            f"{distinct[first[items[k]]]!r} and {distinct[vals[k]]!r} (row {int(rows[k])})")
    has = first >= 0
    out[has] = value_codes[first[has]]
    return out, unknown_gold(first[out == GOLD_UNKNOWN], distinct, labels)


def unknown_gold(value_of_item: np.ndarray, distinct: np.ndarray,
                 labels: LabelSet) -> UnknownGold | None:
    """The unknown gold values (index into ``distinct``, one per item) counted, most frequent
    first; None when there are none."""
    if not value_of_item.size:
        return None
    counts = np.bincount(value_of_item, minlength=len(distinct))
    order = np.lexsort((np.arange(len(distinct)), -counts))
    order = order[counts[order] > 0]
    return UnknownGold(tuple((str(distinct[j]), int(counts[j])) for j in order), labels)


def voteless_gold_message(source: str, n_rows: int, examples: Any) -> str:
    """The warning about gold rows naming items without votes (not used); both engines."""
    return (f"{source}: {n_rows} gold row(s) name items without votes and were not used "
            f"(e.g. {', '.join(map(repr, list(examples)[:3]))})")


@dataclass(frozen=True)
class GoldAccuracy:
    """Accuracy of one label per item against gold, as counts (mergeable with ``+``).

    Attributes
    ----------
    n_right : int
        Items whose label equals their (known) gold label.
    n_items : int
        Items whose gold is one of the labels (the denominator).
    n_unknown : int
        Items whose gold label is not among the labels (left out of ``accuracy``).
    """

    n_right: int
    n_items: int
    n_unknown: int

    @property
    def accuracy(self) -> float | None:
        """``n_right / n_items``; None when no item has a known gold label."""
        return self.n_right / self.n_items if self.n_items else None

    @property
    def n_gold(self) -> int:
        """Items with gold, known or not."""
        return self.n_items + self.n_unknown

    def __add__(self, other: GoldAccuracy) -> GoldAccuracy:
        return GoldAccuracy(self.n_right + other.n_right, self.n_items + other.n_items,
                            self.n_unknown + other.n_unknown)

    def describe(self, extra: str = "") -> str:
        """See :func:`describe_accuracy`."""
        return describe_accuracy(self.accuracy, self.n_items, self.n_unknown, extra)


def describe_accuracy(accuracy: float | None, n_items: int, n_unknown: int,
                      extra: str = "") -> str:
    """An accuracy against gold with its denominator, for people.

    ``"0.9120 on 95 of 100 gold items (5 gold labels not among the votes' labels)"``,
    ``"0.9120 on 100 gold items"``, ``"n/a (no gold)"``; ``extra`` joins the parenthesis
    (``"0.9120 on 100 gold items (3 tied)"``).

    Examples
    --------
    >>> describe_accuracy(0.912, 95, 5)
    "0.9120 on 95 of 100 gold items (5 gold labels not among the votes' labels)"
    """
    n_gold = n_items + n_unknown
    if n_gold == 0:
        return "n/a (no gold)"
    if accuracy is None or n_items == 0:
        return f"n/a (none of the {n_gold:,} gold labels is among the votes' labels)"
    return f"{accuracy:.4f} on {describe_gold_items(n_items, n_unknown, extra)}"


def describe_gold_items(n_items: int, n_unknown: int, extra: str = "") -> str:
    """``"95 of 100 gold items (5 gold labels not among the votes' labels)"``, or ``"100 gold
    items"`` when every gold label is known; ``extra`` joins the parenthesis."""
    plural = "s" if n_unknown != 1 else ""
    notes = [f"{n_unknown:,} gold label{plural} not among the votes' labels"] if n_unknown else []
    notes += [extra] if extra else []
    of = f"{n_items:,} of " if n_unknown else ""
    paren = f" ({'; '.join(notes)})" if notes else ""
    return f"{of}{n_items + n_unknown:,} gold items{paren}"


def gold_accuracy(labels: np.ndarray, gold: np.ndarray | None,
                  mask: np.ndarray | None = None) -> GoldAccuracy:
    """Accuracy of ``labels`` (codes, one per item) against ``gold`` codes.

    Items with :data:`GOLD_UNKNOWN` gold are counted but never right or wrong; ``mask``
    (boolean, one per item) restricts every count, e.g. to tied items.

    Examples
    --------
    >>> r = gold_accuracy(np.array([0, 1, 1, 0]), np.array([0, 0, -2, -1]))
    >>> r.accuracy, r.n_items, r.n_unknown
    (0.5, 2, 1)
    """
    if gold is None:
        return GoldAccuracy(0, 0, 0)
    gold = np.asarray(gold)
    known = gold >= 0
    unknown = gold == GOLD_UNKNOWN
    if mask is not None:
        known &= mask
        unknown &= mask
    right = int(np.count_nonzero(np.asarray(labels)[known] == gold[known]))
    return GoldAccuracy(right, int(known.sum()), int(unknown.sum()))


def check_gold_codes(gold: Sequence[int] | np.ndarray, n_items: int, n_labels: int,
                     where: str) -> np.ndarray:
    """Gold codes as int64, refused unless one per item in ``{-2, -1} + range(n_labels)``."""
    from annokit.errors import InvalidValueError

    arr = np.asarray(gold)
    if arr.shape != (n_items,):
        raise SchemaError(f"{where}: gold must have one code per item, shape ({n_items},); "
                          f"got {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        raise SchemaError(f"{where}: gold codes must be integers (-1 = none); got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if arr.size and (arr.min() < GOLD_UNKNOWN or arr.max() >= n_labels):
        raise InvalidValueError(f"{where}: gold codes must be -1 (no gold), -2 (a gold label "
                                f"not among the labels) or in range({n_labels})")
    return arr


def warn_unknown_gold_dropped(gold: np.ndarray | None, where: str) -> None:
    """Warn, counting them, that gold labels not among the labels (code -2) are written as
    missing: a writer has only the label names to write."""
    n = 0 if gold is None else int(np.count_nonzero(np.asarray(gold) == GOLD_UNKNOWN))
    if n:
        import warnings

        from annokit.errors import DegenerateInputWarning

        warnings.warn(f"{where}: {n} item(s) have a gold label that is not among the votes' "
                      "labels; it is written as missing (no gold)", DegenerateInputWarning,
                      stacklevel=3)



def merge_gold(column: np.ndarray, file: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gold from a separate gold file over the gold a votes file's own column carried.

    The file's gold fills the items the column left blank; where both give gold they must
    agree: one of the two sources is wrong where they differ, and which one is not guessed
    (:func:`gold_clash_error`).

    Parameters
    ----------
    column, file : ndarray of int, shape (n_items,)
        Gold codes per item (:data:`GOLD_NONE` for none, :data:`GOLD_UNKNOWN` for a value
        not among the labels) from the votes' gold column and from the gold file.

    Returns
    -------
    gold : ndarray of int64, shape (n_items,)
    clashes : ndarray of int64
        Positions of the items whose two gold codes differ.
    """
    column = np.asarray(column, dtype=np.int64)
    file = np.asarray(file, dtype=np.int64)
    clashes = np.flatnonzero((column != GOLD_NONE) & (file != GOLD_NONE) & (column != file))
    return np.where(file != GOLD_NONE, file, column), clashes


def gold_clash_error(labels: LabelSet, item_id: Any, file_code: int, column_code: int,
                     n_clashes: int, *, file_name: str, votes_name: str) -> InputError:
    """The one-line error for items whose gold file and gold column differ
    (:func:`merge_gold`), naming the first such item and both values."""
    def shown(code: int) -> str:
        return repr(labels.names[code]) if code >= 0 else "a value that is not a label"

    return InputError(
        f"{file_name}: item {scalar_to_str(item_id)!r} has gold {shown(int(file_code))}, but the "
        f"gold column of {votes_name} gives {shown(int(column_code))} ({n_clashes} item(s) "
        "differ); keep one gold source: drop --gold, or correct one of the two files")
