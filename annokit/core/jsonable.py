"""Plain, strict-JSON values from numpy and Python results.

The one helper behind every ``--json`` output, audit file and report document:
numpy scalars become Python numbers, arrays become lists, and NaN or infinite
floats become ``None`` (``null``), since strict JSON has no NaN.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["finite_or_none", "jsonable"]


def finite_or_none(value: Any, *, digits: int | None = None) -> float | None:
    """A float, or None when ``value`` is NaN, infinite or None.

    Parameters
    ----------
    value : float, numpy floating or None
    digits : int, optional
        Round to this many significant digits (``-0.0`` becomes ``0.0``).

    Examples
    --------
    >>> finite_or_none(np.float32(0.5)), finite_or_none(float("nan")), finite_or_none(None)
    (0.5, None, None)
    >>> finite_or_none(1 / 3, digits=3)
    0.333
    """
    if value is None:
        return None
    out = float(value)
    if not math.isfinite(out):
        return None
    if digits is not None:
        out = float(f"{out:.{digits}g}")
        out = 0.0 if out == 0 else out
    return out


def jsonable(value: Any, *, digits: int | None = None) -> Any:
    """``value`` with NaN/inf -> None, numpy scalars and arrays -> Python, recursively.

    Dict keys become ``str``; tuples and arrays become lists; other objects are
    returned unchanged (``json.dumps`` decides about them).

    Parameters
    ----------
    value : Any
    digits : int, optional
        Round every float to this many significant digits.

    Examples
    --------
    >>> jsonable({"a": np.float64("nan"), "b": [np.int64(2), (np.True_, 0.25)]})
    {'a': None, 'b': [2, [True, 0.25]]}
    >>> jsonable(np.array([1.0, np.inf]))
    [1.0, None]
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return finite_or_none(value, digits=digits)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, digits=digits) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return [jsonable(v, digits=digits) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [jsonable(v, digits=digits) for v in value]
    if isinstance(value, np.generic):
        return jsonable(value.item(), digits=digits)
    return value
