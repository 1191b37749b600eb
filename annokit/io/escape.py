"""Escaping for outputs read by people: spreadsheet formulas and terminal control codes.

* :func:`neutralise_formulas`: a CSV opened in a spreadsheet runs a cell that
  starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return before
  one) as a formula. Tables meant for people (aggregates, per-item tables)
  prefix such text cells with ``'``, as the OWASP guidance on CSV injection
  recommends; vote files written to be read again stay exact.
* :func:`printable`: ids and labels printed to a terminal with their control
  characters (NUL, ESC sequences, bidirectional overrides) shown as ``\\x1b``-style
  escapes, so data cannot move the cursor, recolour or hide text.

References
----------
OWASP, "CSV Injection", https://owasp.org/www-community/attacks/CSV_Injection
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["FORMULA_PREFIXES", "neutralise_formulas", "neutralise_text", "printable"]

#: Leading characters a spreadsheet treats as the start of a formula (OWASP).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")

#: A text cell that starts with one of :data:`FORMULA_PREFIXES`.
_FORMULA_START = "[" + re.escape("".join(FORMULA_PREFIXES)) + "]"

# C0 controls but tab and newline, DEL, C1 controls, and the Unicode bidi controls
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def neutralise_text(value: Any) -> Any:
    """``value`` with a leading ``'`` when it is text a spreadsheet would run as a formula.

    Examples
    --------
    >>> neutralise_text("=1+2"), neutralise_text("-x"), neutralise_text("ok"), neutralise_text(-3)
    ("'=1+2", "'-x", 'ok', -3)
    """
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def neutralise_formulas(df: Any) -> Any:
    """A copy of a DataFrame whose text cells and column names cannot start a formula.

    Only text (object or string columns, and names) changes; numbers, including
    negative ones, are left as they are.

    Examples
    --------
    >>> import pandas as pd
    >>> neutralise_formulas(pd.DataFrame({"item": ["=cmd()", "a"], "p": [-0.5, 1.0]})).to_dict("list")
    {'item': ["'=cmd()", 'a'], 'p': [-0.5, 1.0]}
    """
    from pandas.api import types

    out = df.copy()
    for i in range(out.shape[1]):
        col = out.iloc[:, i]
        if isinstance(col.dtype, types.CategoricalDtype):  # the categories, not every cell
            out.isetitem(i, col.cat.rename_categories(
                [neutralise_text(c) for c in col.cat.categories]).astype(object))
        elif types.is_object_dtype(col) or types.is_string_dtype(col):
            col = col.astype(object)
            # vectorised: text cells starting a formula (non-text cells give NaN -> False)
            risky = col.str.match(_FORMULA_START, na=False).to_numpy(dtype=bool)
            if risky.any():
                col = col.copy()
                col[risky] = "'" + col[risky].astype(str)
            out.isetitem(i, col)
    out.columns = [neutralise_text(c) for c in out.columns]
    return out


def printable(text: Any) -> str:
    """``str(text)`` with control characters escaped for a terminal (newlines and tabs kept).

    Examples
    --------
    >>> printable("a\\x1b[31mb\\x00")
    'a\\\\x1b[31mb\\\\x00'
    """
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))
