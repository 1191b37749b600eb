"""Long or wide: a table's layout decided from its column names and its first rows.

The rules (:func:`table_layout`), in order:

1. Column roles are detected from their names (:func:`annokit.io.tabular.detect_columns`:
   ``item``/``question``/``task``/``id``..., ``annotator``/``worker``/``rater``...,
   ``label``/``answer``/``response``..., ``gold``/``truth``...), after the ones named with
   ``--item-col``, ``--annotator-col``, ``--label-col``, ``--gold-col``.
2. Item and label columns: a long table (one row per vote).
3. Item and annotator columns but no label column: the one other column is the label (stated
   in ``read_as``); none, or several, is an error naming ``--label-col``. Likewise annotator and
   label columns and one other column: that column is the item.
4. An item column only: when item ids repeat in the first rows, one row is one vote (a long
   table): the one other column is the label; with several, an error naming
   ``--annotator-col`` and ``--label-col``. When they do not repeat, one row is one item: a
   wide table whose other columns are annotators; with a single other column, a long table
   without annotator ids (the votes are the same either way; no annotator is invented).
5. No item column: an error naming the column options.
6. Declared labels (``--labels``): an item column whose other columns are exactly the labels is
   a table of counts, one column per label (``"counts"``, :mod:`annokit.io.counts`), never a
   wide table whose annotators bear the labels' names; ``--format wide`` on it is refused.

A column whose name means item, annotator or label is never an annotator of a wide table
(:func:`annokit.io.tabular.read_wide` refuses it). Nothing here guesses between two
readings: where the data allows two, the message names the option that settles it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from annokit.errors import DataFormatError, SchemaError
from annokit.io.counts import is_count_table
from annokit.io.source import Input
from annokit.io.tables import sample_table
from annokit.io.tabular import COLUMN_OPTIONS, detect_columns

__all__ = ["FORMAT_HINT", "frame_layout", "table_layout"]

FORMAT_HINT = ("--format (chaosnli, long, wide, mturk, toloka, labelstudio, prodigy, argilla, "
               "lewidi or lists)")


def _repeats(values: Any) -> bool:
    present = values.dropna()  # a sample of at most a thousand rows: repr copes with any value
    return bool(present.map(lambda v: v if isinstance(v, str) else repr(v)).duplicated().any())


Layout = tuple[str, Mapping[str, str | None] | None, str | None]


def table_layout(source: Input, *, fmt: str = "auto", columns: Mapping[str, str | None] | None = None,
                 sep: str | None = None, labels: Any = None) -> Layout:
    """The layout of a table file (``"long"`` or ``"wide"``), the column roles to read it with
    and a note saying what was inferred (None when the names said it all), from its header and
    first rows (:func:`annokit.io.tables.sample_table`); see :func:`frame_layout`."""
    return frame_layout(sample_table(source, sep=sep), source.name, fmt=fmt, columns=columns,
                        labels=labels)


def frame_layout(sample: pd.DataFrame, name: str, *, fmt: str = "auto",
                 columns: Mapping[str, str | None] | None = None, labels: Any = None) -> Layout:
    """The layout of a table whose header and first rows are ``sample`` (a file's, or a
    DataFrame's): ``"long"`` or ``"wide"``, the column roles to read it with and a note saying
    what was inferred (None when the names said it all).

    ``fmt`` is ``"auto"``, or ``"long"``/``"wide"`` when the user said so (only the roles
    are then completed). ``labels`` are the declared labels (``--labels``): a table whose
    columns besides the item column are exactly these is ``"counts"`` (rule 6).

    Raises
    ------
    SchemaError
        Columns that fit no layout, or fit two: one line naming the option that settles it.
    """
    names = [str(c) for c in sample.columns]
    given = dict(columns or {})
    if labels is not None and fmt in ("auto", "wide") and set(given) <= {"item"}:
        item = detect_columns(names, ("item",), given=given, source=name)["item"]
        if is_count_table(names, labels, item=item):
            if fmt == "wide":
                raise SchemaError(f"{name}: the columns besides {item!r} are the labels given "
                                  "with --labels: a table of counts per label, not of annotators; "
                                  "read it with --format counts")
            return ("counts", columns,
                    "one count column per label: the columns besides the item are the --labels")
    if fmt == "wide" or "label" in given:  # read_wide and read_long check what was named
        return fmt if fmt != "auto" else "long", columns, None
    roles = detect_columns(names, given=given, source=name)
    item, annotator, label = roles["item"], roles["annotator"], roles["label"]
    if len(names) == 1 and item is None and not given:
        raise DataFormatError(
            f"{name}: the header {names[0]!r} is one column: none of , ; tab | splits it into "
            "item, annotator and label columns; write the file with one of these separators")
    if item is None and annotator is not None and label is not None:
        rest = [c for c in names if c not in {v for v in roles.values() if v}]
        if len(rest) == 1 and rest[0]:
            return ("long", {**given, "item": rest[0]},
                    "item: the one column besides annotator and label")
    if item is None:
        if fmt == "long":
            return "long", columns, None  # read_long names --item-col
        raise DataFormatError(
            f"{name}: cannot tell the format from columns {names}: a long table needs item "
            f"and label columns, a wide table an item column and one column per annotator; pass "
            f"{FORMAT_HINT} and name the columns ({COLUMN_OPTIONS})")
    if label is not None:
        return "long", columns, None
    used = {c for c in roles.values() if c}
    others = [c for c in names if c not in used]
    if others == [""]:
        raise SchemaError(f"{name}: column {names.index('') + 1} has no name in the header; name it "
                          "(e.g. label) so its role can be read")
    if annotator is not None:
        if len(others) == 1:
            return ("long", {**given, "label": others[0]},
                    "label: the one column besides item and annotator")
        if not others:
            raise SchemaError(f"{name}: item ({item!r}) and annotator ({annotator!r}) columns but "
                              f"no label column; got {names}; name it with --label-col (Python: "
                              "columns={'label': ...})")
        raise SchemaError(f"{name}: item ({item!r}) and annotator ({annotator!r}) columns; any of "
                          f"{others} could be the label; name it with --label-col (Python: "
                          "columns={'label': ...})")
    return _item_without_label(sample, name, fmt, columns, item, others, roles["gold"])


def _item_without_label(sample: pd.DataFrame, name: str, fmt: str,
                        columns: Mapping[str, str | None] | None, item: str, others: list[str],
                        gold: str | None) -> Layout:
    """The layout of a table with an item column but neither annotator nor label columns by
    name: long when item ids repeat (or ``fmt`` says so), else wide (one row per item)."""
    given = dict(columns or {})
    if not others and gold is not None:
        raise SchemaError(f"{name}: item ({item!r}) and gold ({gold!r}) columns only: a "
                          "gold file (give it with --gold), not votes; votes need a label column "
                          "(--label-col)")
    repeats = _repeats(sample[item])
    if fmt == "long" or repeats:
        why = (f"item ids repeat in {item!r}, so one row is one vote" if repeats
               else "read as a long table (--format long)")
        if len(others) == 1:
            return ("long", {**given, "annotator": None, "label": others[0]},
                    f"label: the one column besides item; no annotator ids; {why}")
        if not others:
            raise SchemaError(f"{name}: {why}, but {item!r} is the only column; the votes need a "
                              "label column (--label-col)")
        raise SchemaError(f"{name}: {why}, but which of {others} holds the annotator and which "
                          f"the label is not said by their names; name them with --annotator-col "
                          f"and --label-col{'' if fmt == 'long' else ' (or --format wide)'}")
    if not others:
        raise SchemaError(f"{name}: {item!r} is the only column; a long table needs a label "
                          "column (--label-col), a wide table one column per annotator")
    if len(others) == 1:
        return ("long", {**given, "annotator": None, "label": others[0]},
                "label: the one column besides item; no annotator ids; one row per item; "
                "--format wide reads the column as one annotator")
    return "wide", columns, None
