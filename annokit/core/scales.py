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
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

import numpy as np

from annokit.errors import InvalidValueError

__all__ = [
    "NUMERIC_SCALES",
    "SCALES",
    "Scale",
    "check_scale",
    "difference",
    "not_a_number",
    "number_name",
    "number_names",
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


def number_name(value: Any) -> str | None:
    """The one text of a numeric label, or None when ``value`` is not a finite number.

    On ordinal (numeric), interval and ratio scales labels are numbers, so every spelling
    of a number is one label: ``1``, ``1.0``, ``" 1"``, ``"+1"``, ``"1e0"`` and ``"01"`` are
    all ``"1"``; ``"-0"`` is ``"0"``, ``"2.50"`` is ``"2.5"``. Numbers are compared exactly
    (decimal, not binary: ``"0.1"`` stays ``"0.1"``, and long integers are not rounded).
    Text with a decimal comma (``"1,5"``), a thousands separator (``"1,000"``) or
    underscores is not a number: ``1,5`` could be one and a half or, in a CSV written with
    ``;``, a list, and guessing would merge or split labels silently. Booleans are not numbers.

    Examples
    --------
    >>> [number_name(v) for v in (1, 1.0, " 1", "+1", "1.50", "-0", 2.5, "1e2")]
    ['1', '1', '1', '1', '1.5', '0', '2.5', '100']
    >>> number_name("1,5") is None, number_name("high") is None, number_name(float("nan")) is None
    (True, True, True)
    """
    if isinstance(value, (bool, np.bool_)) or value is None:
        return None
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            return None
        text = repr(float(value))
    else:
        text = str(value).strip()
        if not text or "," in text or "_" in text:
            return None
    try:
        number = Decimal(text)
    except InvalidOperation:
        return None
    if not number.is_finite():
        return None
    if number == number.to_integral_value() and number.adjusted() < 40:
        return str(int(number))
    number = number.normalize()
    if -7 <= number.adjusted() < 40:
        return format(number, "f")
    return str(number).lower()


def number_names(values: Iterable[Any]) -> list[str | None]:
    """:func:`number_name` of each value (None where a value is not a number).

    Examples
    --------
    >>> number_names(["2", "2.0", "x"])
    ['2', '2', None]
    """
    return [number_name(v) for v in values]


#: Words that usually mean "no value" in a numeric column (for the hint of :func:`not_a_number`).
_MISSING_WORDS = frozenset({"na", "n/a", "nan", "none", "null", "-", "?", "missing"})


def not_a_number(value: Any, scale: str) -> str:
    """Why ``value`` is not a label on the numeric ``scale``, and the option that reads it.

    The one wording of the error for votes, gold labels and declared label sets.

    Examples
    --------
    >>> print(not_a_number("1,5", "interval"))
    '1,5' is not a number (a decimal comma? write 1.5) and labels on the interval scale are
    numbers; read the labels as categories with --scale nominal
    """
    text = str(value)
    hint = ""
    if "," in text and number_name(text.replace(",", ".", 1)) is not None:
        hint = f" (a decimal comma? write {text.strip().replace(',', '.', 1)})"
    elif text.strip().lower() in _MISSING_WORDS:
        hint = f" (a missing value? mark it with --missing {text.strip()})"
    return (f"{text!r} is not a number{hint} and labels on the {scale} scale are numbers; "
            "read the labels as categories with --scale nominal")


def numeric_names(names: Iterable[str]) -> np.ndarray | None:
    """The names as finite floats, or None when one of them is not a number (:func:`number_name`).

    Examples
    --------
    >>> numeric_names(["-5", "0", "2.5"]).tolist()
    [-5.0, 0.0, 2.5]
    >>> numeric_names(["low", "high"]) is None
    True
    """
    out = []
    for name in names:
        text = number_name(name)
        if text is None:
            return None
        out.append(float(text))
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
            bad = next(n for n in names if number_name(n) is None)
            raise InvalidValueError(f"label {not_a_number(bad, scale)}")
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
        raise ValueError(f"ordered_names: unknown scale {scale!r}")  # check_scale refused it
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
