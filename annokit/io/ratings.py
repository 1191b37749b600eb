"""Numeric ratings from long tables, and label scales for votes read from files.

:func:`read_ratings` reads one row per rating (item, annotator, a numeric rating
column) from CSV, TSV, JSON Lines or Parquet into
:class:`~annokit.core.ratings.Ratings`; a cell that is not a finite number is
refused with its file, line and column. :func:`apply_scale` gives votes
read by :func:`annokit.io.read_votes` a declared scale (``scale="ordinal"``):
the declared label order, or numeric order for numeric labels.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from annokit.core.labels import LabelSet
from annokit.core.ratings import Ratings
from annokit.core.scales import check_scale
from annokit.core.votes import DuplicatePolicy, Votes
from annokit.errors import DataFormatError, Option, SchemaError
from annokit.io.source import Input
from annokit.io.tables import cell_where, check_present, read_table, table_kind
from annokit.io.tabular import detect_columns

__all__ = ["RATING_SPELLINGS", "apply_scale", "read_ratings"]

#: Column spellings tried, in order, for the rating column when none is named.
RATING_SPELLINGS: tuple[str, ...] = ("rating", "score", "value", "label", "response", "answer")
#: Roles of a headerless ratings table, by its number of columns.
_HEADERLESS = {2: ("item", "rating"), 3: ("item", "annotator", "rating")}


def _rating_column(columns: Sequence[str], taken: set[str], name: str) -> str:
    by_lower: dict[str, list[str]] = {}
    for c in columns:
        by_lower.setdefault(c.lower(), []).append(c)
    for spelling in RATING_SPELLINGS:
        found = [c for c in by_lower.get(spelling, []) if c not in taken]
        if len(found) > 1:
            raise SchemaError(f"{name}: columns {found} could each be the rating column; name one "
                              "with --label-col (Python: columns={'rating': ...})")
        if found:
            others = [c for s in RATING_SPELLINGS[RATING_SPELLINGS.index(spelling) + 1:]
                      for c in by_lower.get(s, []) if c not in taken]
            if others:
                raise SchemaError(f"{name}: columns {[found[0], *others]} could each be the "
                                  "rating column; name one with --label-col (Python: "
                                  "columns={'rating': ...})")
            return found[0]
    raise SchemaError(f"{name}: no rating column; got columns {list(columns)}; name it with "
                      "--label-col (Python: columns={'rating': ...}, or 'item', 'annotator')")


def _numbers(df: pd.DataFrame, col: str, source: Input) -> np.ndarray:
    """The column as float64; the first cell that is not a finite number is an error."""
    raw = df[col]
    if raw.dtype.kind in "iuf":
        values = raw.to_numpy(dtype=np.float64)
        bad = ~np.isfinite(values)
    elif raw.dtype != object and pd.api.types.is_string_dtype(raw.dtype):  # CSV text: no booleans
        values = pd.to_numeric(raw.str.strip(), errors="coerce").to_numpy(dtype=np.float64,
                                                                          na_value=np.nan)
        bad = ~np.isfinite(values)
    else:  # JSON values: numbers, text, booleans (refused), one by one
        obj = raw.astype(object)
        is_bool = obj.map(lambda v: isinstance(v, (bool, np.bool_))).to_numpy(dtype=bool)
        text = obj.map(lambda v: v.strip() if isinstance(v, str) else v)
        values = pd.to_numeric(text.where(~is_bool, None), errors="coerce").to_numpy(
            dtype=np.float64)
        bad = ~np.isfinite(values) | is_bool
    if bad.any():
        row = int(np.argmax(bad))
        raise DataFormatError(f"{cell_where(source, df, row, col)}: rating {raw.iloc[row]!r} is "
                              "not a finite number")
    return values


def read_ratings(
    path: str | os.PathLike,
    *,
    columns: Mapping[str, str | None] | None = None,
    scale: str = "interval",
    duplicates: DuplicatePolicy = "error",
    no_header: bool = False,
    missing: Sequence[str] = (),
) -> Ratings:
    """Read numeric ratings (one row per rating) from CSV, TSV, JSON Lines or Parquet.

    Parameters
    ----------
    path : path-like
        The file, or ``-`` for standard input.
    columns : mapping, optional
        Column roles ``item``, ``annotator`` (None: annotators unknown) and ``rating``
        (``label`` is accepted for it). Roles not named are detected: item and annotator
        as in :func:`annokit.io.read_long`, the rating from :data:`RATING_SPELLINGS`.
    scale : {"interval", "ratio"}, default="interval"
    duplicates : {"error", "first", "last", "keep"}
        Repeated (item, annotator) ratings (see :meth:`Ratings.from_long`).
    no_header : bool, default=False
        A headerless CSV/TSV: item, rating or item, annotator, rating.
    missing : sequence of str
        Cell texts that mean "no value" besides the empty cell (a missing rating is an error).

    Returns
    -------
    Ratings
        ``read_info`` states the columns used.

    Raises
    ------
    DataFormatError
        A rating that is not a finite number, or an empty id or rating (file, line, column).
    SchemaError
        Missing or ambiguous columns, repeated (item, annotator) ratings.
    InvalidValueError
        A scale other than interval or ratio; a negative rating on a ratio scale.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "r.csv"
    >>> _ = f.write_text("item,annotator,rating\\na,x,10\\na,y,-20\\nb,x,3.5\\n")
    >>> r = read_ratings(f)
    >>> r.n_items, r.mean().tolist()
    (2, [-5.0, 3.5])
    """
    source = Input(path, what="ratings")
    name = source.name
    check_scale(scale)
    df = read_table(source, no_header=no_header, missing=missing)
    given = _given_roles(df, columns, no_header, name)
    rating = given.pop("rating", None)
    if rating is not None and rating not in df.columns:
        raise SchemaError(f"{name} is missing column(s) [{rating!r}] (given for rating); got "
                          f"{list(df.columns)}")
    roles = detect_columns(list(df.columns), ("item", "annotator"), given=given, source=name)
    if roles["item"] is None:
        opt, aside = Option("columns", role="item"), Option("columns", role="item", aside=True)
        raise SchemaError(f"{name}: no item column; got columns {list(df.columns)}; name it with "
                          f"{opt}{aside}", options=[opt, aside])
    taken = {c for c in roles.values() if c}
    rating = rating or _rating_column(list(df.columns), taken, name)
    used = [c for c in (roles["item"], roles["annotator"], rating) if c]
    check_present(df, source, used,
                  ["item id", *(["annotator id"] if roles["annotator"] else []), "rating"])
    values = _numbers(df, rating, source)
    annotator = None if roles["annotator"] is None else df[roles["annotator"]].to_numpy()
    ratings = Ratings.from_long(df[roles["item"]].to_numpy(), annotator, values, scale=scale,
                                duplicates=duplicates, source=name)
    ratings.read_info = (f"{name}: ratings table ({table_kind(source)}); item={roles['item']!r}, "
                         f"annotator={roles['annotator']!r}, rating={rating!r}, scale={scale}")
    return ratings


def _given_roles(df: pd.DataFrame, columns: Mapping[str, str | None] | None, no_header: bool,
                 name: str) -> dict[str, str | None]:
    """The column roles given (``label`` read as ``rating``), or those of a headerless file's
    columns by their number."""
    given = dict(columns or {})
    if "label" in given and "rating" not in given:
        given["rating"] = given.pop("label")
    if no_header:
        order = _HEADERLESS.get(df.shape[1])
        if order is None:
            raise SchemaError(f"{name}: a headerless ratings file has 2 (item, rating) or 3 (item, "
                              f"annotator, rating) columns; got {df.shape[1]}")
        given = {**dict(zip(order, df.columns, strict=True)), **given}
        given.setdefault("annotator", None)
    return given


def scaled_labels(labels: LabelSet, scale: str, *, declared: bool) -> LabelSet:
    """``labels`` on ``scale``: declared names keep their order, others are put in the
    scale's order (:func:`annokit.core.scales.ordered_names`); aliases are kept.

    :func:`apply_scale` recodes votes to it; the Dask reader
    (:func:`annokit.scale.votes.read_votes_dask`) codes its votes with it directly.

    Raises
    ------
    InvalidValueError
        As :func:`apply_scale`.

    Examples
    --------
    >>> scaled_labels(LabelSet(["10", "-5", "2"]), "ordinal", declared=False)
    LabelSet(['-5', '2', '10'], scale='ordinal')
    """
    return labels.to_scale(scale, declared=declared)[0]


def apply_scale(votes: Votes, scale: str | None, *, declared: bool) -> Votes:
    """``votes`` with a label set on ``scale`` (None: unchanged).

    Parameters
    ----------
    votes : Votes
    scale : {"nominal", "ordinal", "interval", "ratio"} or None
    declared : bool
        Whether the reader was given the labels (then their order is kept); otherwise
        numeric labels are put in numeric order and the votes recoded.

    Raises
    ------
    InvalidValueError
        Ordinal labels that are not numbers and were not declared in order; interval or
        ratio labels that are not numbers.

    Examples
    --------
    >>> v = Votes.from_counts([[1, 2, 0], [0, 1, 1]], labels=["10", "-5", "2"])
    >>> s = apply_scale(v, "ordinal", declared=False)
    >>> s.labels, s.counts().tolist()
    (LabelSet(['-5', '2', '10'], scale='ordinal'), [[2, 0, 1], [1, 1, 0]])
    """
    if scale is None:
        return votes
    return votes.with_scale(scale, declared=declared)
