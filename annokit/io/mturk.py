"""Amazon Mechanical Turk batch results: one row per assignment, votes out.

A batch-results CSV (the "Download CSV" of a batch) has one row per assignment with
``HITId``, ``WorkerId``, ``AssignmentStatus``, the HIT's inputs as ``Input.<name>``
columns and the worker's answers as ``Answer.<name>`` columns. A HIT that shows several
items numbers them: ``Input.id1``, ``Input.text1``, ``Answer.label1``, ``Input.id2``, ...
(``Input.id_2`` and ``Input.id-2`` too). The reader maps the columns to item, annotator
and label, states the mapping in ``votes.read_info`` and takes an explicit mapping where
the guess is not wanted:

- annotator: ``WorkerId``;
- label: the one ``Answer.*`` column (or numbered family of columns), else ``label=``;
- item: an ``Input.*`` id column (``id``, ``item``, ``item_id``, ``itemid``, ``uid``,
  ``pair_id``, numbered alike when the answers are numbered), else ``item=``, else the
  HIT id (with ``#<n>`` for the n-th item of a HIT).

Assignments whose status is not kept (by default only ``Submitted`` and ``Approved`` are;
``Rejected``, returned or abandoned assignments are not votes) are excluded and counted by
status; a blank answer is not a vote and is counted.

Flag fields: a HIT often shows a checkbox beside the answer ("cannot judge", "not sure").
When one ``Answer.*`` field (or numbered family) holds the responses and every other one
holds only checkbox values (``true``/``false``, ``on``/blank, ``checked``, ``{}``, or the
field's own name/blank, as ``Answer.na0`` holding ``na`` when ticked; a ``.on`` suffix, as
in ``Answer.cannot_judge.on``, is part of the checkbox's name), the
response field is the label and the others are flags: a vote whose flag is ticked (``true``,
``on``, ``checked``, its own name) is dropped (``flags="drop"``, the default: the worker said the answer is
not a judgement) or kept (``flags="keep"``); either way the flagged votes are counted in
``read_info`` and ``mturk_info["flags"]``. An unnumbered flag beside numbered answers flags
every item of its HIT.

Examples
--------
>>> import io, tempfile, pathlib
>>> text = ("HITId,WorkerId,AssignmentStatus,Input.id1,Input.id2,Answer.label1,Answer.label2\\n"
...         "H1,w1,Approved,q1,q2,yes,no\\n"
...         "H1,w2,Submitted,q1,q2,yes,yes\\n"
...         "H1,w3,Rejected,q1,q2,no,no\\n")
>>> path = pathlib.Path(tempfile.mkdtemp()) / "batch.csv"
>>> _ = path.write_text(text)
>>> votes = read_mturk(path)
>>> votes.counts().tolist(), votes.read_details.details["excluded"]
([[0, 2], [1, 1]], {'Rejected': 1})
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.checks import check_option
from annokit.core.labels import LabelSet
from annokit.core.votes import DuplicatePolicy, ReadInfo, Votes
from annokit.errors import SchemaError
from annokit.io.source import Input
from annokit.io.tables import read_table, row_where

__all__ = ["FLAG_TICKED", "FLAG_VALUES", "KEPT_STATUSES", "looks_like_mturk", "read_mturk"]

#: Assignment statuses read as votes by default.
KEPT_STATUSES = ("Submitted", "Approved")

_ID_NAMES = ("id", "item", "item_id", "itemid", "uid", "pair_id", "pairid")
#: Checkbox values of a flag field (compared lower-case, blanks stripped); the first are ticked.
FLAG_TICKED = ("true", "on", "checked")
FLAG_VALUES = FLAG_TICKED + ("false", "off", "unchecked", "{}")
_NUMBERED = re.compile(r"^(?P<base>.*?)[_-]?(?P<n>\d+)$")
_REQUIRED = ("HITId", "WorkerId")


def looks_like_mturk(columns: Sequence[str]) -> bool:
    """Whether a header is a Mechanical Turk batch-results header."""
    names = set(columns)
    return set(_REQUIRED) <= names and any(str(c).startswith("Answer.") for c in columns)


def _families(columns: Sequence[str], prefix: str) -> dict[str, dict[str, str]]:
    """``{base: {number or "": column}}`` for the columns under ``prefix``."""
    out: dict[str, dict[str, str]] = {}
    for col in columns:
        if not col.startswith(prefix):
            continue
        name = col[len(prefix):]
        if name.endswith(".on"):  # a checkbox: Answer.cannot_judge.on, Answer.cannot_judge2.on
            name = name[:-3]
        m = _NUMBERED.match(name)
        base, n = (m["base"], m["n"]) if m and m["base"] else (name, "")
        out.setdefault(base, {})[n] = col
    # a family of one numbered column is an ordinary column whose name ends in a digit
    for base in [b for b, cols in out.items() if len(cols) == 1 and "" not in cols]:
        (n, col), = out.pop(base).items()
        out.setdefault(base + n, {})[""] = col
    return out


def _pick(families: dict[str, dict[str, str]], given: str | None, what: str, name: str,
          option: str) -> dict[str, str] | None:
    if given is not None:
        given = given.removeprefix(option).removesuffix("{n}")
        if given in families:
            return families[given]
        for cols in families.values():  # a full column name, numbered or not
            for col in cols.values():
                if col in (given, option + given):
                    return {"": col}
        raise SchemaError(f"{name}: no column {option}{given} for the {what}; "
                          f"{option}* columns: {sorted(c for f in families.values() for c in f.values())}")
    return None


def _cells(values: pd.Series) -> pd.Series:
    return values.dropna().astype(str).str.strip().str.lower()


def _is_flag(df: pd.DataFrame, family: dict[str, str], base: str) -> bool:
    """Every cell of the family is blank or a checkbox value; a checkbox may send its own name
    when ticked (Pavlick and Kwiatkowski's ``Answer.na0`` holds "na" or nothing)."""
    values = (*FLAG_VALUES, base.lower())
    return all(_cells(df[col]).isin(values).all() for col in family.values())


def _ticked(df: pd.DataFrame, family: dict[str, str], base: str, n: str,
            name: str) -> np.ndarray:
    col = family.get(n, family.get(""))
    if col is None:
        raise SchemaError(f"{name}: the flag field {_family_text(family)} is not numbered like "
                          f"the label (item {n} has no flag column)")
    cells = df[col].fillna("").astype(str).str.strip().str.lower()
    return cells.isin((*FLAG_TICKED, base.lower())).to_numpy()


def read_mturk(path: str | os.PathLike | Input, *, item: str | None = None,
               label: str | None = None, statuses: Sequence[str] = KEPT_STATUSES,
               labels: LabelSet | Sequence[Any] | None = None,
               duplicates: DuplicatePolicy = "error", sep: str | None = None,
               flags: str = "drop") -> Votes:
    """Votes from a Mechanical Turk batch-results CSV.

    Parameters
    ----------
    path : path-like
    item : str, optional
        The ``Input.*`` column (or numbered family, e.g. ``"id"`` for ``Input.id1``,
        ``Input.id2``, ...) holding item ids. Default: an id-like input column, else the
        HIT id.
    label : str, optional
        The ``Answer.*`` column or family holding the label. Default: the only one.
    statuses : sequence of str, default=("Submitted", "Approved")
        Assignment statuses that count as votes; the others are excluded and counted.
    labels : LabelSet or sequence of names, optional
    duplicates : {"error", "first", "last", "keep"}
        A worker answering the same item twice (in two HITs).
    sep : str, optional
        The file's separator; default: sniffed (:mod:`annokit.io.delimited`).
    flags : {"drop", "keep"}, default="drop"
        What to do with votes whose flag field (a "cannot judge" checkbox) is ticked; they are
        counted either way.

    Returns
    -------
    Votes
        With ``read_info`` (the mapping and what was excluded, one line) and
        ``read_details.details`` (a dict: ``item``, ``label``, ``items_per_hit``, ``excluded``
        {status: assignments}, ``blank_answers``, ``flags`` {``fields``, ``flagged_votes``,
        ``action``}).

    Raises
    ------
    SchemaError
        Not a batch-results file, or the columns do not say which answer is the label.
    """
    source = Input(path, what="votes")
    name = source.name
    check_option("flags", flags, ("drop", "keep"))
    df = read_table(source, sep=sep)
    chosen, flag_families, item_family = _mapping(df, item, label, name)
    numbers = sorted(chosen, key=lambda n: (n != "", int(n) if n else 0))
    n_rows = len(df)
    df, excluded = _by_status(df, statuses)
    long = _answers(df, numbers, chosen, flag_families, item_family, name)
    blank_answers = int(long["label"].isna().sum())
    long = long[long["label"].notna()]
    flagged = long["flagged"].to_numpy(dtype=bool)
    n_flagged = int(flagged.sum())
    if flags == "drop" and n_flagged:
        if labels is None:  # the label set of the task, whether flagged votes are kept or not
            labels = LabelSet.infer(long["label"])
        long = long[~flagged]
    long = long.drop(columns="flagged")
    if long.empty:
        raise SchemaError(f"{name}: no votes: {n_rows} assignment(s), "
                          f"{int(excluded.sum())} excluded by status, {blank_answers} blank answers"
                          + (f", {n_flagged} flagged votes dropped (--flags keep keeps them)"
                             if flags == "drop" and n_flagged else ""))
    votes = Votes.from_long(long, labels=labels, duplicates=duplicates, source=name)
    item_text = ("HITId" + ("#n" if len(numbers) > 1 else "") if item_family is None
                 else _family_text(item_family))
    info: dict[str, Any] = {"item": item_text, "annotator": "WorkerId",
                            "label": _family_text(chosen), "items_per_hit": len(numbers),
                            "assignments": n_rows,
                            "excluded": {str(k): int(v) for k, v in excluded.items()},
                            "blank_answers": blank_answers}
    flag_text = _flag_details(info, flag_families, flags, n_flagged)
    votes.read_details = ReadInfo("mturk", info)
    excl = ", ".join(f"{k} {v}" for k, v in info["excluded"].items()) or "none"
    votes.read_info = (f"{name}: Mechanical Turk batch results, {len(numbers)} item(s) per HIT; "
                       f"item={item_text!r}, annotator='WorkerId', label={info['label']!r}; "
                       f"excluded assignments: {excl}; blank answers: {blank_answers}{flag_text}")
    return votes


def _mapping(df: pd.DataFrame, item: str | None, label: str | None, name: str
             ) -> tuple[dict[str, str], dict[str, dict[str, str]], dict[str, str] | None]:
    """Which columns hold the label (an ``Answer.*`` family), the flags beside it and the item
    ids (an ``Input.*`` family, or None: the HIT id)."""
    columns = [str(c) for c in df.columns]
    missing = [c for c in _REQUIRED if c not in columns]
    if missing:
        raise SchemaError(f"{name}: not Mechanical Turk batch results: missing column(s) "
                          f"{missing}; got {columns[:8]}{' ...' if len(columns) > 8 else ''}")
    answers = _families(columns, "Answer.")
    inputs = _families(columns, "Input.")
    chosen = _pick(answers, label, "label", name, "Answer.")
    if chosen is None:
        responses = [f for b, f in answers.items() if not _is_flag(df, f, b)]
        if len(answers) == 1:
            chosen = next(iter(answers.values()))
        elif len(responses) == 1:
            chosen = responses[0]
        else:
            raise SchemaError(f"{name}: {len(answers)} answer columns {sorted(answers)}"
                              f"{'' if responses else ' all holding checkbox values'}; say which "
                              "holds the label with --label-col (Python: label=)")
    flag_families = {b: f for b, f in answers.items() if f is not chosen and _is_flag(df, f, b)}
    item_family = _pick(inputs, item, "item id", name, "Input.")
    if item_family is None:
        ids = [cols for base, cols in inputs.items() if base.lower() in _ID_NAMES
               and set(chosen) <= set(cols)]
        item_family = ids[0] if len(ids) == 1 else None
    if item_family is not None and not set(chosen) <= set(item_family):
        numbers = sorted(chosen, key=lambda n: (n != "", int(n) if n else 0))
        raise SchemaError(f"{name}: the label columns are numbered {numbers} but the item "
                          f"columns {sorted(item_family.values())} are not")
    return chosen, flag_families, item_family


def _by_status(df: pd.DataFrame, statuses: Sequence[str]) -> tuple[pd.DataFrame, pd.Series]:
    """The assignments whose status counts as votes, and how many of each other status."""
    if "AssignmentStatus" in df.columns:
        status = df["AssignmentStatus"].fillna("(blank)")
        keep = status.isin(list(statuses))
    else:  # a hand-made file without statuses: every row is an assignment to read
        status = pd.Series("", index=df.index)
        keep = pd.Series(True, index=df.index)
    return df[keep.to_numpy()], status[~keep].value_counts().sort_index()


def _answers(df: pd.DataFrame, numbers: list[str], chosen: dict[str, str],
             flag_families: dict[str, dict[str, str]], item_family: dict[str, str] | None,
             name: str) -> pd.DataFrame:
    """One row per answer (item, annotator, label, flagged), items numbered within a HIT."""
    def where(blank: pd.Series) -> str:  # the file line of the first row flagged
        return row_where(df, int(df.index[int(np.argmax(blank.to_numpy()))]))

    blank_workers = df["WorkerId"].isna()
    if blank_workers.any():
        raise SchemaError(f"{where(blank_workers)} of {name}: blank WorkerId")
    parts = []
    for n in numbers:
        labels_n = df[chosen[n]]
        ticked = np.zeros(len(df), dtype=bool)
        for base, family in flag_families.items():
            ticked |= _ticked(df, family, base, n, name)
        if item_family is not None:
            items_n = df[item_family[n]]
            blank = items_n.isna() & labels_n.notna()
            if blank.any():
                raise SchemaError(f"{where(blank)} of {name}, column {item_family[n]}: blank "
                                  "item id")
        else:
            hit = df["HITId"].astype(str)
            items_n = hit + f"#{n}" if len(numbers) > 1 else hit
        parts.append(pd.DataFrame({"item": items_n.to_numpy(dtype=object),
                                   "annotator": df["WorkerId"].to_numpy(dtype=object),
                                   "label": labels_n.to_numpy(dtype=object),
                                   "flagged": ticked}))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["item", "annotator", "label", "flagged"])


def _flag_details(info: dict[str, Any], flag_families: dict[str, dict[str, str]], flags: str,
                  n_flagged: int) -> str:
    """``info["flags"]`` set when the batch has flag fields; the text for ``read_info``."""
    if not flag_families:
        return ""
    action = "dropped" if flags == "drop" else "kept"
    info["flags"] = {"fields": [_family_text(f) for f in flag_families.values()],
                     "flagged_votes": n_flagged, "action": action}
    other = "keep" if flags == "drop" else "drop"
    return (f"; flag field(s) {info['flags']['fields']}: {n_flagged} flagged vote(s) "
            f"{action} (--flags {other} to {other} them)")


def _family_text(family: dict[str, str]) -> str:
    if list(family) == [""]:
        return family[""]
    first = family[min((n for n in family if n), key=int)]
    m = _NUMBERED.match(first)
    return f"{m['base']}{{n}}" if m else first
