"""``read_votes`` of a pandas DataFrame: its columns detected as a file's, then
:meth:`Votes.from_long` or :meth:`Votes.from_wide`. A DataFrame is read from Python only, so
its messages spell options as Python arguments."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from annokit.core.votes import DuplicatePolicy, LabelSet, Votes
from annokit.errors import DegenerateInputWarning, InvalidValueError, SchemaError
from annokit.io.layout import frame_layout
from annokit.io.tabular import attach_gold, detect_columns, read_gold, warn_unused_columns

__all__ = ["read_frame"]


def read_frame(df: pd.DataFrame, *, format: str, columns: Mapping[str, str | None] | None,
               labels: LabelSet | Sequence[Any] | None, gold: str | os.PathLike | None,
               duplicates: DuplicatePolicy, no_header: bool, missing: Sequence[str]) -> Votes:
    """``read_votes`` of a DataFrame: the columns detected as a file's, then
    :meth:`Votes.from_long` or :meth:`Votes.from_wide`; ``read_info`` states the layout and
    the columns used."""
    if format not in ("auto", "long", "wide"):
        raise InvalidValueError(f"a DataFrame is a long or wide table; format {format!r} reads "
                                "files (give format='auto', 'long' or 'wide')")
    if no_header:
        raise InvalidValueError("no_header applies to files; a DataFrame has its column names")
    frame = df.rename(columns=str) if not all(isinstance(c, str) for c in df.columns) else df
    names = list(frame.columns)
    if len(set(names)) != len(names):
        dup = sorted({c for c in names if names.count(c) > 1})
        raise SchemaError(f"{_NAME}: column names must be unique; repeated {dup}")
    if missing:
        frame = _blank_missing(frame, missing)
    fmt, columns, note = frame_layout(frame.head(1000), _NAME, fmt=format, columns=columns)
    given = dict(columns or {})
    if fmt == "wide":
        votes, chosen, info = _wide_frame(frame, given, labels)
    else:
        votes, chosen, info = _long_frame(frame, given, labels, gold=gold, missing=missing,
                                          duplicates=duplicates)
    if gold is not None:
        votes = attach_gold(votes, read_gold(gold, missing=missing))
    used = ", ".join(f"{role}={col!r}" for role, col in chosen.items() if col is not None)
    votes.read_info = f"{info}; columns {used}" + (f" ({note})" if note else "")
    return votes


_NAME = "DataFrame"


def _blank_missing(frame: pd.DataFrame, missing: Sequence[str]) -> pd.DataFrame:
    """``frame`` with the text cells that are one of the ``missing`` words made blank."""
    words = {str(w).strip() for w in missing}
    frame = frame.copy()
    for col in frame.columns:  # text columns only: the words are cell texts
        if frame[col].dtype == object or pd.api.types.is_string_dtype(frame[col]):
            text = frame[col].where(frame[col].map(lambda v: isinstance(v, str)))
            frame[col] = frame[col].mask(text.str.strip().isin(words))
    return frame


def _wide_frame(frame: pd.DataFrame, given: dict[str, Any], labels: Any
                ) -> tuple[Votes, dict[str, Any], str]:
    """The votes of a wide frame, the columns used and the layout read."""
    extra = sorted(k for k in given if k not in ("item", "gold"))
    if extra:
        raise InvalidValueError(f"a wide table names its item and gold columns only; got "
                                f"roles {extra}")
    names = list(frame.columns)
    roles = detect_columns(names, ("item", "gold"), given=given, source=_NAME)
    if roles["item"] is None:
        raise SchemaError(f"{_NAME}: no item column; got columns {names}; name it "
                          "(columns={'item': ...})")
    votes = Votes.from_wide(frame, item=roles["item"], labels=labels, gold=roles["gold"],
                            source=_NAME)
    chosen = {"item": roles["item"], "gold": roles["gold"]}
    return votes, chosen, f"{_NAME}: wide table, {votes.n_annotators} annotator columns"


def _long_frame(frame: pd.DataFrame, given: dict[str, Any], labels: Any, *, gold: Any,
                missing: Sequence[str], duplicates: DuplicatePolicy
                ) -> tuple[Votes, dict[str, Any], str]:
    """The votes of a long frame (rows whose label is missing skipped, with a warning), the
    columns used and the layout read."""
    names = list(frame.columns)
    roles = detect_columns(names, given=given, source=_NAME)
    for role in ("item", "label"):
        if roles[role] is None:
            raise SchemaError(f"{_NAME}: no {role} column; got columns {names}; name it "
                              f"(columns={{'{role}': ...}})")
    if missing:
        skip = frame[roles["label"]].isna().to_numpy()
        if skip.any():
            warnings.warn(f"{_NAME}: {int(skip.sum())} row(s) whose label is a missing value "
                          f"({sorted(missing)} or empty) were skipped",
                          DegenerateInputWarning, stacklevel=5)
            frame = frame[~skip]
    in_frame_gold = roles["gold"] if gold is None else None
    if labels is None:  # the votes' labels: gold is coded against them, never added
        labels = LabelSet.infer(frame[roles["label"]])
    votes = Votes.from_long(frame, item=roles["item"], label=roles["label"],
                            annotator=roles["annotator"], labels=labels, gold=in_frame_gold,
                            duplicates=duplicates, source=_NAME)
    warn_unused_columns(names, roles, given, _NAME)
    return votes, roles, f"{_NAME}: long table"
