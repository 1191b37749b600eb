"""Shared input checks and parameter constraints.

Every check raises :class:`~annokit.errors.VoteSchemaError` (a ``ValueError``)
with a message that says what was expected, what was found and where.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from annokit.errors import VoteSchemaError

__all__ = ["check_counts", "check_option", "check_probs", "check_rng", "first_offenders"]

RngLike = "np.random.Generator | int | None"


def check_rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    """Return a Generator from ``rng`` (a Generator, a seed, or None for fresh entropy)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    raise VoteSchemaError(
        f"rng must be a numpy Generator, an int seed or None; got {type(rng).__name__}"
    )


def check_option(name: str, value: Any, allowed: Sequence[Any]) -> Any:
    """Raise unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        raise VoteSchemaError(f"{name} must be one of {list(allowed)}; got {value!r}")
    return value


def first_offenders(values: Sequence[Any] | np.ndarray, n: int = 5) -> str:
    """Format the first ``n`` offending values for an error message."""
    values = list(values)
    shown = ", ".join(repr(v) for v in values[:n])
    more = f" and {len(values) - n} more" if len(values) > n else ""
    return f"[{shown}{more}]"


def check_counts(counts: Any, *, name: str = "counts", allow_empty_rows: bool = False) -> np.ndarray:
    """Validate an (n_items, n_labels) matrix of non-negative integer vote counts.

    Returns an int64 array. Float input is accepted when every value is integral.
    """
    arr = np.asarray(counts)
    if arr.ndim != 2:
        raise VoteSchemaError(f"{name} must be 2-D (n_items, n_labels); got shape {arr.shape}")
    if arr.shape[1] == 0:
        raise VoteSchemaError(f"{name} has no label columns")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)):
            bad = np.argwhere(~np.isfinite(arr))[0]
            raise VoteSchemaError(f"{name} has a non-finite value at item {bad[0]}, label {bad[1]}")
        if np.any(arr != np.round(arr)):
            bad = np.argwhere(arr != np.round(arr))[0]
            raise VoteSchemaError(
                f"{name} must hold whole vote counts; got {arr[tuple(bad)]!r} at item {bad[0]}, "
                f"label {bad[1]}"
            )
    elif arr.dtype.kind not in "iub":
        raise VoteSchemaError(f"{name} must be numeric; got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and arr.min() < 0:
        bad = np.argwhere(arr < 0)[0]
        raise VoteSchemaError(f"{name} has a negative count at item {bad[0]}, label {bad[1]}")
    if not allow_empty_rows:
        empty = np.flatnonzero(arr.sum(axis=1) == 0)
        if empty.size:
            raise VoteSchemaError(
                f"{name} has {empty.size} item(s) with zero votes, e.g. rows {first_offenders(empty)}"
            )
    return arr


def check_probs(probs: Any, *, name: str = "probs", atol: float = 1e-6) -> np.ndarray:
    """Validate an (n_items, n_labels) matrix whose rows are probability distributions."""
    arr = np.asarray(probs, dtype=np.float64)
    if arr.ndim != 2:
        raise VoteSchemaError(f"{name} must be 2-D (n_items, n_labels); got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise VoteSchemaError(f"{name} has no rows")
    finite = np.isfinite(arr).all(axis=1)
    if not finite.all():
        raise VoteSchemaError(f"{name} has NaN or infinite values in row {int(np.argmin(finite))}")
    if arr.min() < 0:
        raise VoteSchemaError(f"{name} has a negative value in row {int(np.argwhere(arr < 0)[0, 0])}")
    sums = arr.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > atol)
    if bad.size:
        raise VoteSchemaError(
            f"{name} rows must sum to 1 (tolerance {atol}); row {bad[0]} sums to {sums[bad[0]]!r}"
        )
    return arr
