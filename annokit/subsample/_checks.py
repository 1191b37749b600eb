"""Input checks shared by the subsampling modules (private)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from annokit.core.checks import check_counts, check_int, check_option, first_offenders
from annokit.core.votes import LabelSet, Votes
from annokit.errors import DegenerateInputWarning, InvalidValueError, SchemaError

__all__: list[str] = []

ShortPolicy = Literal["error", "skip", "keep"]


def as_counts(data: Any) -> tuple[np.ndarray, np.ndarray, LabelSet | None, Votes | None]:
    """(counts, item_ids, labels, votes) from a Votes object or a count matrix."""
    if isinstance(data, Votes):
        return data.counts(), np.asarray(data.item_ids, dtype=object), data.labels, data
    counts = check_counts(data)
    if counts.shape[0] == 0:
        raise SchemaError("counts has no items")
    return counts, np.arange(counts.shape[0]).astype(str).astype(object), None, None


def check_k(k: Any, *, name: str = "k") -> int:
    return check_int(name, k, low=1)


def check_ks(ks: Any) -> np.ndarray:
    """Sorted unique positive integers."""
    if isinstance(ks, (int, np.integer)) and not isinstance(ks, bool):
        ks = [ks]
    try:
        arr = np.asarray(list(ks))
    except TypeError:
        raise InvalidValueError(f"ks must be a sequence of positive integers; got {ks!r}") from None
    if arr.size == 0:
        raise InvalidValueError("ks is empty; give at least one number of votes per item")
    if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu" or arr.min() < 1:
        bad = [v for v in arr.tolist() if not (isinstance(v, int) and v >= 1)]
        raise InvalidValueError(f"ks must be positive integers; got {first_offenders(bad)}")
    return np.unique(arr.astype(np.int64))


def short_items(n: np.ndarray, k: int, short: str, *,
                ids: Sequence[Any] | np.ndarray | None, stacklevel: int = 3) -> np.ndarray:
    """Mask of items with fewer than ``k`` votes; raise or warn per ``short`` (the warning
    ``stacklevel`` levels up: 3, the caller of the public function calling this)."""
    check_option("short", short, ("error", "skip", "keep"))
    mask = n < k
    if not mask.any():
        return mask
    where = np.flatnonzero(mask)
    names = [str(ids[i]) for i in where.tolist()] if ids is not None else where.tolist()
    fewest = int(n[mask].min())
    what = f"{where.size} item(s) have fewer than k={k} votes (fewest: {fewest}), " \
           f"e.g. {first_offenders(names)}"
    if short == "error":
        raise InvalidValueError(f"{what}; pass short='skip' (--short skip) to leave them out "
                                "or short='keep' (--short keep) to use all their votes")
    action = "left out at that k" if short == "skip" else "kept with all their votes"
    warnings.warn(f"{what}; {action} (short={short!r}, --short {short})", DegenerateInputWarning,
                  stacklevel=stacklevel)
    return mask


def check_reps(reps: Any) -> int:
    return check_int("reps", reps, low=1)
