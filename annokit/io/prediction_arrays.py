"""The :class:`Predictions` container and the checks every prediction reader shares.

A :class:`Predictions` holds one model's validated probability rows keyed by unique item ids;
:func:`_build` makes one from ids and probability and/or logit rows, whichever reader
(:mod:`annokit.io.predictions`) or in-memory arrays (:meth:`Predictions.from_arrays`) they came
from, naming the first bad row and where it is on failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.checks import SIMPLEX_ATOL
from annokit.core.soft_labels import softmax
from annokit.errors import DataFormatError, InvalidValueError

__all__ = ["Predictions"]


@dataclass(frozen=True, eq=False)
class Predictions:
    """Probability rows of one model, keyed by item id.

    Attributes
    ----------
    item_ids : ndarray of str, shape (n_rows,)
        Unique item ids.
    probs : ndarray of shape (n_rows, n_labels)
        Validated probability rows in the file's class order.
    logits : ndarray of shape (n_rows, n_labels) or None
        The logits when the file had them (``probs`` is then the file's
        probabilities if it had both, else ``softmax(logits)``).
    label_names : tuple of str or None
        Class names when the file names them (per-class columns); else None.
    sources : tuple of str
        The files read, in order.
    source_index : ndarray of int, shape (n_rows,)
        Which file each row came from.
    locations : ndarray of str or RowPlaces, shape (n_rows,)
        Where each row is in its file ("line 3", "row 0", "entry 5"); a text table's
        lines are found when a message asks (:class:`annokit.io.lines.RowPlaces`).
    """

    item_ids: np.ndarray
    probs: np.ndarray
    logits: np.ndarray | None = None
    label_names: tuple[str, ...] | None = None
    sources: tuple[str, ...] = ("arrays",)
    source_index: np.ndarray | None = None
    locations: Any = None

    @property
    def n_rows(self) -> int:
        return int(self.probs.shape[0])

    @property
    def n_labels(self) -> int:
        return int(self.probs.shape[1])

    def where(self, row: int) -> str:
        """'line 3 of preds.jsonl' for a row."""
        src = self.sources[int(self.source_index[row])] if self.source_index is not None else self.sources[0]
        loc = self.locations[row] if self.locations is not None else f"row {row}"
        return f"{loc} of {src}"

    @classmethod
    def from_arrays(cls, item_ids: Any, *, probs: Any = None, logits: Any = None,
                    label_names: Sequence[str] | None = None, renormalize: bool = False,
                    atol: float = 1e-4, source: str = "arrays") -> Predictions:
        """Predictions from in-memory arrays, validated like a file.

        Examples
        --------
        >>> p = Predictions.from_arrays(["a", "b"], logits=[[0.0, 0.0], [2.0, 0.0]])
        >>> p.probs.round(3).tolist()
        [[0.5, 0.5], [0.881, 0.119]]
        """
        ids = _ids_to_str(item_ids, source=source)
        n = len(ids)
        locations = locations_of("row", n)
        return _build(ids, probs, logits, label_names=label_names, source=source,
                      locations=locations, renormalize=renormalize, atol=atol)


# ---------------------------------------------------------------------------
# validation shared by every reader


#: ``pandas.api.types.infer_dtype`` kinds that hold no lists, objects or bytes.
_SCALAR_KINDS = ("string", "integer", "floating", "mixed-integer-float", "boolean", "empty")


def locations_of(prefix: str, n: int, start: int = 0) -> np.ndarray:
    """``["<prefix> <start>", "<prefix> <start + 1>", ...]`` for messages, built by numpy."""
    return np.strings.add(f"{prefix} ", np.arange(start, start + n).astype(str)).astype(object)


def _ids_to_str(values: Any, *, source: str, locations: Any = None) -> np.ndarray:
    if not isinstance(values, np.ndarray):
        values = list(values)
        arr = np.empty(len(values), dtype=object)
        arr[:] = values
    else:
        arr = np.asarray(values, dtype=object).reshape(-1)
    kind = pd.api.types.infer_dtype(arr, skipna=True)
    nested = (np.zeros(len(arr), dtype=bool) if kind in _SCALAR_KINDS else  # no per-id Python
              np.array([isinstance(v, (list, dict, tuple, np.ndarray)) or (
                  isinstance(v, bytes) and not _is_utf8(v)) for v in arr], dtype=bool))
    if nested.any():
        i = int(np.argmax(nested))
        loc = locations[i] if locations is not None else f"row {i}"
        raise DataFormatError(f"{loc} of {source}: item id must be text or a number; got "
                              f"{type(arr[i]).__name__}{' (not UTF-8)' * isinstance(arr[i], bytes)}")
    bad = pd.isna(arr)
    if bad.any():
        i = int(np.argmax(bad))
        loc = locations[i] if locations is not None else f"row {i}"
        raise DataFormatError(f"{loc} of {source}: item id is missing")
    out: np.ndarray | None = None
    if kind == "string":
        out = arr
    elif kind == "integer":  # formatted by numpy, not one str() per id
        try:
            out = arr.astype(np.int64).astype(str).astype(object)
        except OverflowError:  # beyond int64: Python formats them
            out = None
    if out is None:
        out = np.array([_id_str(v) for v in arr], dtype=object)
    blank = ~pd.Series(out, dtype=object).str.strip().astype(bool).to_numpy()
    if blank.any():
        i = int(np.argmax(blank))
        loc = locations[i] if locations is not None else f"row {i}"
        raise DataFormatError(f"{loc} of {source}: item id is empty")
    return out


def _is_utf8(v: bytes) -> bool:
    try:
        v.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _id_str(v: Any) -> str:
    if isinstance(v, bytes):
        return v.decode("utf-8")
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    if isinstance(v, np.integer):
        return str(int(v))
    return str(v)


def _matrix(values: Any, *, field: str, source: str, locations: Any) -> np.ndarray:
    """Stack per-row vectors into a float matrix; name the first bad row on failure."""
    if isinstance(values, np.ndarray) and values.dtype != object:
        arr = values.astype(np.float64)
        if arr.ndim != 2:
            raise DataFormatError(f"{source}: {field} must be 2-D; got shape {arr.shape}")
        return arr
    rows = list(values)
    try:
        arr = np.asarray(rows, dtype=np.float64)
        if arr.ndim == 2:
            return arr
    except (TypeError, ValueError):
        pass
    width = None
    for i, r in enumerate(rows):  # error path only: find the offending row
        try:
            v = np.asarray(r, dtype=np.float64)
        except (TypeError, ValueError):
            raise DataFormatError(f"{locations[i]} of {source}: {field} is not a list of numbers; "
                                  f"got {r!r}") from None
        if v.ndim != 1:
            raise DataFormatError(f"{locations[i]} of {source}: {field} is not a list of numbers; "
                                  f"got {r!r}")
        if width is None:
            width = v.shape[0]
        elif v.shape[0] != width:
            raise DataFormatError(f"{locations[i]} of {source}: {field} has {v.shape[0]} values; "
                                  f"earlier rows have {width}")
    raise DataFormatError(f"{source}: {field} could not be read as a matrix")


def _classes_read(label_names: Sequence[str] | None) -> str:
    """The classes a row sum was taken over, for the message (a column that is not a class,
    such as a length or a score, shows there)."""
    return "" if label_names is None else f" over the classes {[str(n) for n in label_names]}"


def _build(ids: np.ndarray, probs: Any, logits: Any, *, label_names: Sequence[str] | None,
           source: str, locations: Any, renormalize: bool, atol: float) -> Predictions:
    if probs is None and logits is None:
        raise InvalidValueError(f"{source}: give probs or logits")
    P = None if probs is None else _matrix(probs, field="probs", source=source, locations=locations)
    Z = None if logits is None else _matrix(logits, field="logits", source=source, locations=locations)
    for name, m in (("probs", P), ("logits", Z)):
        if m is None:
            continue
        if m.shape[0] != len(ids):
            raise DataFormatError(f"{source}: {len(ids)} item ids but {m.shape[0]} {name} rows")
        if m.shape[1] < 2:
            hint = (" (a binary model's single probability p: write both classes' values, "
                    "1 - p and p, each named by its class)") if m.shape[1] == 1 else ""
            raise DataFormatError(f"{source}: {name} need at least 2 classes; got "
                                  f"{m.shape[1]}{hint}")
        finite = np.isfinite(m).all(axis=1)
        if not finite.all():
            i = int(np.argmin(finite))
            raise DataFormatError(f"{locations[i]} of {source} (item {ids[i]!r}): {name} has a "
                                  f"NaN or infinite value: {m[i].tolist()}")
    if P is not None and Z is not None and P.shape != Z.shape:
        raise DataFormatError(f"{source}: probs have shape {P.shape} but logits {Z.shape}")
    if P is None:
        P = softmax(Z)
    else:
        neg = (P < 0).any(axis=1)
        if neg.any():
            i = int(np.argmax(neg))
            raise DataFormatError(f"{locations[i]} of {source} (item {ids[i]!r}): probs has a "
                                  f"negative value: {P[i].tolist()} (logits are read from a "
                                  "logits field or logit_<label> columns)")
        sums = P.sum(axis=1)
        off = np.abs(sums - 1.0) > atol
        if renormalize:
            zero = sums <= 0
            if zero.any():
                i = int(np.argmax(zero))
                raise DataFormatError(f"{locations[i]} of {source} (item {ids[i]!r}): probs sum "
                                      f"to 0 and cannot be renormalised")
            P = P / sums[:, None]
        elif off.any():
            i = int(np.argmax(off))
            raise DataFormatError(
                f"{locations[i]} of {source} (item {ids[i]!r}): probs sum to {sums[i]:.6g}, not 1 "
                f"within {atol:g} ({off.sum()} such row(s)){_classes_read(label_names)}; pass "
                f"--renormalize to divide each row by its sum (Python: renormalize=True)")
        elif np.isfinite(atol):  # rows on the simplex within atol (an infinite atol: per-label
            # probabilities, not a distribution): rows rounded in the file (a spreadsheet's 6
            # decimals) are divided by their sum, so that the metrics' simplex check holds too
            rounded = np.abs(sums - 1.0) > SIMPLEX_ATOL
            P = np.where(rounded[:, None], P / np.where(rounded, sums, 1.0)[:, None], P)
    if label_names is not None:
        label_names = tuple(str(n) for n in label_names)
        if len(label_names) != P.shape[1]:
            raise DataFormatError(f"{source}: {len(label_names)} label names for {P.shape[1]} columns")
    _check_unique(ids, locations, source)
    return Predictions(item_ids=ids, probs=P, logits=Z, label_names=label_names,
                       sources=(source,), source_index=np.zeros(len(ids), dtype=np.int64),
                       locations=locations)


def _check_unique(ids: np.ndarray, locations: Any, source: str) -> None:
    dup = pd.Series(ids).duplicated(keep=False).to_numpy()
    if dup.any():
        first = ids[np.argmax(dup)]
        rows = np.flatnonzero(ids == first)
        raise DataFormatError(f"{source}: item id {first!r} appears more than once "
                              f"({', '.join(str(locations[r]) for r in rows[:3])}); "
                              f"{int(pd.Series(ids[dup]).nunique())} duplicated id(s) in all")
