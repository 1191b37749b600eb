"""Levels of measurement of a label set, and the difference function of each level.

A :class:`~annokit.core.labels.LabelSet` declares its *scale* (Stevens 1946):

- ``"nominal"``: unordered categories (the default; every earlier annokit result);
- ``"ordinal"``: ordered categories (Likert 1-6, -5..5); the order is the
  declared order of the names, or numeric order when the names are numbers and
  the order is inferred (:func:`ordered_names`);
- ``"interval"``: numbers whose differences are meaningful (slider ratings);
- ``"ratio"``: non-negative numbers with a true zero (counts, durations).

The squared difference :math:`\\delta^2_{ck}` between two values of each level
is Krippendorff's (2011, section E): nominal 0/1, ordinal through the marginal
frequencies of the values (:func:`ordinal_positions`), interval
:math:`(c - k)^2` and ratio :math:`((c - k)/(c + k))^2`.

References
----------
Stevens, S. S. (1946). On the theory of scales of measurement. Science 103(2684), 677-680.
doi:10.1126/science.103.2684.677

Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability.
https://repository.upenn.edu/asc_papers/43
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Literal

import numpy as np

from annokit.errors import InvalidValueError

__all__ = [
    "NUMERIC_SCALES",
    "SCALES",
    "Scale",
    "check_scale",
    "difference",
    "numeric_names",
    "ordered_names",
    "ordinal_positions",
    "scale_values",
]

Scale = Literal["nominal", "ordinal", "interval", "ratio"]
#: The levels of measurement, from the weakest to the strongest.
SCALES: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")
#: Levels whose label names must be numbers.
NUMERIC_SCALES: tuple[str, ...] = ("interval", "ratio")


def check_scale(scale: Any, *, name: str = "scale") -> str:
    """``scale`` if it is one of :data:`SCALES`, else an error naming the choices.

    Examples
    --------
    >>> check_scale("ordinal")
    'ordinal'
    """
    if not isinstance(scale, str) or scale not in SCALES:
        raise InvalidValueError(f"{name} must be one of {list(SCALES)}; got {scale!r}")
    return scale


def numeric_names(names: Iterable[str]) -> np.ndarray | None:
    """The names as finite floats, or None when one of them is not a finite number.

    Examples
    --------
    >>> numeric_names(["-5", "0", "2.5"]).tolist()
    [-5.0, 0.0, 2.5]
    >>> numeric_names(["low", "high"]) is None
    True
    """
    out = []
    for name in names:
        try:
            value = float(str(name).strip())
        except ValueError:
            return None
        if not math.isfinite(value):
            return None
        out.append(value)
    return np.asarray(out, dtype=np.float64)


def scale_values(names: Iterable[str], scale: str) -> np.ndarray | None:
    """The numeric value of each label name under ``scale`` (None for non-numeric names).

    Interval and ratio names must be finite numbers, and ratio values must be
    non-negative (a ratio scale has a true zero); ordinal and nominal names
    get values when they are all numbers, else None.

    Raises
    ------
    InvalidValueError
        A non-numeric name on an interval or ratio scale, or a negative one on a ratio scale.

    Examples
    --------
    >>> scale_values(["1", "2", "5"], "interval").tolist()
    [1.0, 2.0, 5.0]
    """
    names = [str(n) for n in names]
    values = numeric_names(names)
    if scale in NUMERIC_SCALES:
        if values is None:
            bad = next(n for n in names if numeric_names([n]) is None)
            raise InvalidValueError(f"a label set on the {scale} scale needs numeric label names; "
                                    f"{bad!r} is not a finite number")
        if scale == "ratio" and (values < 0).any():
            bad = names[int(np.argmax(values < 0))]
            raise InvalidValueError(f"a ratio scale has a true zero, so its values must be >= 0; "
                                    f"got {bad!r} (use the interval scale)")
    return values


def ordered_names(names: Iterable[Any], scale: str) -> list[str]:
    """Names in the order a label set of ``scale`` takes when no order was declared.

    Numbers are put in numeric order (``"-5" < "-1" < "0" < "10"``) on every
    scale but nominal, which keeps the names as given.

    Raises
    ------
    InvalidValueError
        On an ordinal scale whose names are not all numbers: their order cannot be
        guessed, so it must be declared (``labels=[...]``).

    Examples
    --------
    >>> ordered_names(["10", "-5", "2"], "ordinal")
    ['-5', '2', '10']
    """
    check_scale(scale)
    names = [str(n) for n in names]
    if scale == "nominal":
        return names
    values = numeric_names(names)
    if values is None:
        if scale == "ordinal":
            raise InvalidValueError(
                f"the order of ordinal labels {names[:8]} cannot be inferred from non-numeric "
                "names; declare it with labels=[...] in order (Python; on the command line "
                "ordinal labels must be numbers, or --scale nominal reads them unordered)")
        scale_values(names, scale)  # raises with the offending name
    return [names[j] for j in np.argsort(values, kind="stable")]


def ordinal_positions(totals: np.ndarray) -> np.ndarray:
    """Positions of ordered categories under their marginal frequencies (mid-ranks).

    Parameters
    ----------
    totals : ndarray of shape (..., n_categories)
        :math:`n_g`, how often each category occurs among the pairable values, in order.

    Returns
    -------
    ndarray of shape (..., n_categories)
        :math:`r_c = \\sum_{g < c} n_g + n_c / 2`.

    Notes
    -----
    Krippendorff's (2011) ordinal difference is
    :math:`\\delta^2_{ck} = (\\sum_{g=c}^{k} n_g - (n_c + n_k)/2)^2` for
    :math:`c \\le k`, which equals :math:`(r_k - r_c)^2`: ordinal alpha is interval
    alpha on the mid-rank positions of the categories.

    Examples
    --------
    >>> ordinal_positions(np.array([2.0, 4.0, 2.0])).tolist()
    [1.0, 4.0, 7.0]
    """
    totals = np.asarray(totals, dtype=np.float64)
    return np.cumsum(totals, axis=-1) - totals / 2


def difference(level: str, a: Any, b: Any, *, totals: Any = None) -> np.ndarray:
    """Krippendorff's squared difference :math:`\\delta^2` between values ``a`` and ``b``.

    Parameters
    ----------
    level : {"nominal", "ordinal", "interval", "ratio"}
    a, b : array-like (broadcastable)
        Values (interval, ratio), any comparable codes (nominal), or category
        indices into ``totals`` (ordinal).
    totals : array-like of shape (n_categories,), optional
        Ordinal only: the marginal frequencies of the ordered categories.

    Returns
    -------
    ndarray
        nominal ``a != b``; ordinal :math:`(r_a - r_b)^2` with :func:`ordinal_positions`;
        interval :math:`(a - b)^2`; ratio :math:`((a - b)/(a + b))^2` (0 where ``a + b = 0``).

    Examples
    --------
    >>> difference("ratio", 1.0, 3.0).item()
    0.25
    >>> difference("ordinal", 0, 2, totals=[2, 4, 2]).item()
    36.0
    """
    check_scale(level, name="level")
    if level == "nominal":
        return (np.asarray(a) != np.asarray(b)).astype(np.float64)
    if level == "ordinal":
        if totals is None:
            raise InvalidValueError("the ordinal difference needs the category totals (totals=)")
        r = ordinal_positions(np.asarray(totals, dtype=np.float64))
        return (r[np.asarray(a)] - r[np.asarray(b)]) ** 2
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if level == "interval":
        return (a - b) ** 2
    s = a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(s != 0, ((a - b) / np.where(s != 0, s, 1.0)) ** 2, 0.0)
