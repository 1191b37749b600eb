"""Shared input checks and parameter constraints.

Every check raises the most specific :class:`~annokit.errors.InputError` (a
``ValueError``): :class:`~annokit.errors.SchemaError` for a wrong shape or
dtype, :class:`~annokit.errors.InvalidValueError` for a value outside its
domain. Messages say what was expected, what was found and where (the row).

Parameters
----------
Numeric options are checked by one small set of functions, used by every public
function: :func:`check_int` (an integer in a range; ``bool`` is not an integer
here), :func:`check_open_unit` (a number in the open interval (0, 1): confidence
levels, fractions, ``eps``) and :func:`check_finite` (a finite number, optionally
bounded below). Their messages name the option: "n_bins must be a positive
integer; got 0", "confidence must be in (0, 1); got 1.0".

Probability rows
----------------
A matrix of distributions has finite, non-negative rows that sum to 1 within
``atol = 1e-6``. Every metric, divergence and score checks its inputs with
:func:`check_simplex`; nothing is renormalised silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from annokit.errors import InputError, InvalidValueError, SchemaError

__all__ = [
    "check_seed",
    "seed_or_rng",
    "SIMPLEX_ATOL",
    "check_counts",
    "check_finite",
    "check_int",
    "check_open_unit",
    "check_option",
    "check_probs",
    "check_rng",
    "check_simplex",
    "first_offenders",
]

RngLike = "np.random.Generator | int | None"

#: Tolerance on row sums of probability rows.
SIMPLEX_ATOL = 1e-6


def seed_or_rng(seed: int | None, rng: Any, where: str, *, default: Any = None) -> Any:
    """``rng`` of a function that also takes ``seed=``, an int: the name ``evaluate``, ``plan``
    and ``build_report`` use, so ``seed=`` works everywhere (``seed=3`` is ``rng=3``; giving
    both is an error naming ``where``; ``default`` is the function's default ``rng``)."""
    if seed is None:
        return rng
    if rng is not default:
        raise InvalidValueError(f"{where}: give seed= or rng=, not both (seed=3 is rng=3)")
    return check_seed(seed)


def check_seed(seed: Any) -> int:
    """``seed`` as a non-negative int, else an error naming it."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidValueError(f"seed must be a non-negative integer; got {seed!r}")
    return int(seed)


def check_rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    """Return a Generator from ``rng`` (a Generator, a seed, or None for fresh entropy)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    raise InputError(
        f"rng must be a numpy Generator, an int seed or None; got {type(rng).__name__}"
    )


def check_int(name: str, value: Any, *, low: int = 0, high: int | None = None) -> int:
    """``value`` as an int, if it is an integer (not a bool) in ``[low, high]``.

    Raises
    ------
    InvalidValueError
        "{name} must be a positive integer" (``low`` 1), "an integer >= {low}" or
        "an integer in [{low}, {high}]"; got the value.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low \
            or (high is not None and value > high):
        what = (f"an integer in [{low}, {high}]" if high is not None
                else "a positive integer" if low == 1 else f"an integer >= {low}")
        raise InvalidValueError(f"{name} must be {what}; got {value!r}")
    return int(value)


def check_open_unit(name: str, value: Any) -> float:
    """``value`` as a float, if it is a number (not a bool) in the open interval (0, 1).

    Raises
    ------
    InvalidValueError
        "{name} must be in (0, 1); got ...".
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not 0 < value < 1:
        raise InvalidValueError(f"{name} must be in (0, 1); got {value!r}")
    return float(value)


def check_finite(name: str, value: Any, *, low: float | None = None,
                 strict: bool = False) -> float:
    """``value`` as a float, if it is a finite number (not a bool), ``>= low`` (``> low``
    with ``strict``) when ``low`` is given.

    Raises
    ------
    InvalidValueError
        "{name} must be a finite number[ > low | >= low]; got ...".
    """
    ok = not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating))
    out = float(value) if ok else float("nan")
    if not np.isfinite(out) or (low is not None and (out <= low if strict else out < low)):
        bound = "" if low is None else f" {'>' if strict else '>='} {low:g}"
        raise InvalidValueError(f"{name} must be a finite number{bound}; got {value!r}")
    return out


def check_option(name: str, value: Any, allowed: Sequence[Any]) -> Any:
    """Raise :class:`~annokit.errors.InvalidValueError` unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        raise InvalidValueError(f"{name} must be one of {list(allowed)}; got {value!r}")
    return value


def first_offenders(values: Sequence[Any] | np.ndarray, n: int = 5, *,
                    total: int | None = None) -> str:
    """Format the first ``n`` offending values for an error message.

    ``total``: how many offenders there are when ``values`` holds only the first
    ones (the Dask engine knows a list by its head and size).
    """
    values = list(values)
    total = len(values) if total is None else int(total)
    shown = ", ".join(repr(v) for v in values[:n])
    more = f" and {total - n} more" if total > n else ""
    return f"[{shown}{more}]"


def check_counts(counts: Any, *, name: str = "counts", allow_empty_rows: bool = False) -> np.ndarray:
    """Validate an (n_items, n_labels) matrix of non-negative integer vote counts.

    Returns an int64 array. Float input is accepted when every value is integral.
    """
    arr = np.asarray(counts)
    if arr.ndim != 2:
        raise SchemaError(f"{name} must be 2-D (n_items, n_labels); got shape {arr.shape}")
    if arr.shape[1] == 0:
        raise SchemaError(f"{name} has no label columns")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)):
            bad = np.argwhere(~np.isfinite(arr))[0]
            raise InvalidValueError(
                f"{name} has a non-finite value at item {bad[0]}, label {bad[1]}")
        if np.any(arr != np.round(arr)):
            bad = np.argwhere(arr != np.round(arr))[0]
            raise InvalidValueError(
                f"{name} must hold whole vote counts; got {arr[tuple(bad)]!r} at item {bad[0]}, "
                f"label {bad[1]}"
            )
    elif arr.dtype.kind not in "iub":
        raise SchemaError(f"{name} must be numeric; got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and arr.min() < 0:
        bad = np.argwhere(arr < 0)[0]
        raise InvalidValueError(f"{name} has a negative count at item {bad[0]}, label {bad[1]}")
    if not allow_empty_rows:
        empty = np.flatnonzero(arr.sum(axis=1) == 0)
        if empty.size:
            raise InvalidValueError(
                f"{name} has {empty.size} item(s) with zero votes, e.g. rows {first_offenders(empty)}"
            )
    return arr


def check_simplex(arr: np.ndarray, *, name: str = "probs", atol: float = SIMPLEX_ATOL) -> None:
    """Raise unless every row of a 2-D float array is a probability distribution.

    Values only (the shape is the caller's business): every entry finite and
    ``>= 0``, every row sum within ``atol`` of 1.

    Parameters
    ----------
    arr : ndarray of shape (n_items, n_labels), float64
    name : str
        The argument's name, used in the message.
    atol : float, default 1e-6
        Tolerance on ``|sum_j arr_ij - 1|``.

    Raises
    ------
    InvalidValueError
        Naming the first offending row: NaN or infinite values, a negative
        value, or a row sum off by more than ``atol``.
    """
    if arr.size == 0:
        return
    finite = np.isfinite(arr).all(axis=1)
    if not finite.all():
        raise InvalidValueError(
            f"{name} has NaN or infinite values in row {int(np.argmin(finite))}")
    if arr.min() < 0:
        raise InvalidValueError(
            f"{name} has a negative value in row {int(np.argwhere(arr < 0)[0, 0])}")
    sums = arr.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > atol)
    if bad.size:
        raise InvalidValueError(
            f"{name} rows must sum to 1 (tolerance {atol}); row {bad[0]} sums to {float(sums[bad[0]])!r}"
        )


def check_probs(probs: Any, *, name: str = "probs", atol: float = SIMPLEX_ATOL) -> np.ndarray:
    """Validate an (n_items, n_labels) matrix whose rows are probability distributions.

    Returns the float64 array. Shape problems raise
    :class:`~annokit.errors.SchemaError`, values off the simplex
    :class:`~annokit.errors.InvalidValueError` (see :func:`check_simplex`).
    """
    arr = np.asarray(probs.to_numpy() if hasattr(probs, "to_numpy") else probs,
                     dtype=np.float64)
    if arr.ndim != 2:
        raise SchemaError(f"{name} must be 2-D (n_items, n_labels); got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise SchemaError(f"{name} has no rows")
    check_simplex(arr, name=name, atol=atol)
    return arr
