"""Toloka's results file ("Download results" of a pool): one row per task per assignment.

The file is a TSV whose columns are documented by Toloka (toloka.ai/docs/guide/result-of-eval):
``INPUT:<field>`` (the task's input data), ``OUTPUT:<field>`` (the Toloker's response),
``GOLDEN:<field>`` (the correct response of a control task), ``HINT:text`` (the hint of a
training task) and ``ASSIGNMENT:link``, ``ASSIGNMENT:assignment_id``, ``ASSIGNMENT:worker_id``,
``ASSIGNMENT:started``, ``ASSIGNMENT:status`` (``SUBMITTED``, ``APPROVED`` or ``REJECTED``).
The reader maps:

- item: the one ``INPUT:`` column, else the one id-like one (``INPUT:id``, ``INPUT:item_id``,
  ...), else ``--item-col``;
- annotator: ``ASSIGNMENT:worker_id``;
- label: the one ``OUTPUT:`` column, else ``--label-col``;
- gold: ``GOLDEN:<field>`` of the label's field. A control task's golden response is the answer
  Toloka checks Tolokers against, which is what a gold label is; Tolokers' responses to control
  tasks are votes like any other (their number is stated).

Left out and counted: assignments whose status is not ``SUBMITTED`` or ``APPROVED`` (by status),
rows of training tasks (a ``HINT:text``: their responses are first attempts at a lesson, not
judgements), and blank responses.

Examples
--------
>>> import tempfile, pathlib
>>> text = ("INPUT:id\\tINPUT:text\\tOUTPUT:result\\tGOLDEN:result\\tASSIGNMENT:worker_id\\t"
...         "ASSIGNMENT:status\\n"
...         "t1\\thi\\tOK\\t\\tw1\\tAPPROVED\\n"
...         "t1\\thi\\tBAD\\t\\tw2\\tREJECTED\\n"
...         "t2\\tyo\\tBAD\\tBAD\\tw1\\tSUBMITTED\\n")
>>> path = pathlib.Path(tempfile.mkdtemp()) / "assignments.tsv"
>>> _ = path.write_text(text)
>>> votes = read_toloka(path)
>>> votes.counts().tolist(), votes.read_details.details["excluded"]
([[0, 1], [1, 0]], {'REJECTED': 1})
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pandas as pd

from annokit.core.labels import LabelSet, scalar_to_str
from annokit.core.votes import DuplicatePolicy, ReadInfo, Votes
from annokit.errors import SchemaError
from annokit.io.export_common import Answers, answers_to_votes, counted
from annokit.io.source import Input
from annokit.io.tables import read_table, row_where

__all__ = ["KEPT_STATUSES", "looks_like_toloka", "read_toloka"]

#: Assignment statuses read as votes.
KEPT_STATUSES = ("SUBMITTED", "APPROVED")
_WORKER = "ASSIGNMENT:worker_id"
_STATUS = "ASSIGNMENT:status"
_ID_NAMES = ("id", "item", "item_id", "itemid", "task_id", "uid", "key")


def looks_like_toloka(columns: Sequence[str]) -> bool:
    """Whether a header is a Toloka results header (a worker column and a response column)."""
    names = [str(c) for c in columns]
    return _WORKER in names and any(c.startswith("OUTPUT:") for c in names)


def _pick(columns: list[str], prefix: str, given: str | None, what: str, option: str,
          name: str, ids: bool = False) -> str:
    """The column of a role among the ``prefix`` columns (or the one named)."""
    under = [c for c in columns if c.startswith(prefix)]
    if given is not None:
        for col in (given, prefix + given):
            if col in columns:
                return col
        raise SchemaError(f"{name}: no column {given!r} for the {what}; {prefix}* columns: {under}")
    if len(under) == 1:
        return under[0]
    if ids:
        like = [c for c in under if c[len(prefix):].lower() in _ID_NAMES]
        if len(like) == 1:
            return like[0]
    raise SchemaError(f"{name}: {len(under)} {prefix} columns {under}; say which holds the "
                      f"{what} with {option}")


def _gold(df: pd.DataFrame, item: pd.Series, golden: str | None, name: str) -> dict[str, str]:
    """Each control task's golden response; two different ones for one item are refused."""
    if golden is None:
        return {}
    cells = df[golden]
    known = cells.notna() & (cells.astype(str).str.strip() != "")
    out: dict[str, str] = {}
    for row, it, value in zip(df.index[known], item[known], cells[known], strict=True):
        text = scalar_to_str(value)
        if out.setdefault(it, text) != text:
            raise SchemaError(f"{row_where(df, int(row))} of {name}, column {golden}: item {it!r} "
                              f"has golden responses {out[it]!r} and {text!r}; correct the file")
    return out


def read_toloka(path: str | os.PathLike | Input, *, item: str | None = None,
                label: str | None = None, statuses: Sequence[str] = KEPT_STATUSES,
                labels: LabelSet | Sequence[Any] | None = None,
                duplicates: DuplicatePolicy = "error", sep: str | None = None) -> Votes:
    """Votes from a Toloka results file (TSV).

    Parameters
    ----------
    path : path-like
    item : str, optional
        The ``INPUT:`` column of item ids (with or without the prefix).
    label : str, optional
        The ``OUTPUT:`` column of responses; default the only one.
    statuses : sequence of str, default=("SUBMITTED", "APPROVED")
        Assignment statuses read as votes; the others are excluded and counted.
    labels, duplicates
        As for :meth:`annokit.core.votes.Votes.from_long`.
    sep : str, optional
        The separator; default sniffed (Toloka writes tabs).

    Returns
    -------
    Votes
        With ``gold`` from the control tasks, ``read_info`` and ``read_details.details`` (``item``,
        ``label``, ``gold``, ``rows``, ``excluded`` {status: rows}, ``training``, ``blank``,
        ``control_items``).

    Raises
    ------
    SchemaError
        A column missing or ambiguous (naming the option that settles it), a blank worker id,
        or two golden responses for one item (naming the line).
    """
    source = Input(path, what="votes")
    name = source.name
    df = read_table(source, sep=sep)
    columns = [str(c) for c in df.columns]
    if _WORKER not in columns:
        raise SchemaError(f"{name}: not a Toloka results file: no {_WORKER} column; got "
                          f"{columns[:8]}")
    item_col = _pick(columns, "INPUT:", item, "item id", "--item-col", name, ids=True)
    label_col = _pick(columns, "OUTPUT:", label, "label", "--label-col", name)
    golden: str | None = "GOLDEN:" + label_col[len("OUTPUT:"):]
    golden = golden if golden in columns else None
    n_rows = len(df)
    df, excluded, n_training = _kept_rows(df, statuses)
    items = _item_ids(df, item_col, name)
    gold = _gold(df, items, golden, name)
    answers = Answers()
    for it, who, value in zip(items, df[_WORKER], df[label_col], strict=True):
        if pd.isna(value) or str(value).strip() == "":
            answers.left_out["blank responses"] += 1
            continue
        answers.add(it, scalar_to_str(who), [scalar_to_str(value)], gold.get(it))
    nothing = (f"{n_rows} row(s), excluded by status: {counted(excluded)}, training tasks: "
               f"{n_training}, blank responses: {answers.left_out['blank responses']}")
    votes = answers_to_votes(answers, name=name, labels=labels, duplicates=duplicates,
                             nothing=nothing)
    control = len(set(gold) & set(answers.items))
    info: dict[str, Any] = {"item": item_col, "annotator": _WORKER, "label": label_col,
                            "gold": golden, "rows": n_rows,
                            "excluded": dict(sorted(excluded.items())), "training": n_training,
                            "blank": answers.left_out["blank responses"],
                            "control_items": control}
    votes.read_details = ReadInfo("toloka", info)
    votes.read_info = (f"{name}: Toloka results, {n_rows} rows; item={item_col!r}, "
                       f"annotator={_WORKER!r}, label={label_col!r}, gold="
                       f"{golden if golden else 'none'} ({control} control item(s)); rows excluded by "
                       f"assignment status: {counted(info['excluded'])}; training-task rows: "
                       f"{n_training}; blank responses: {info['blank']}")
    return votes


def _kept_rows(df: pd.DataFrame, statuses: Sequence[str]) -> tuple[pd.DataFrame, Counter, int]:
    """The rows read as votes (a kept status, not a training task), the rows excluded by
    status, counted by status, and the training-task rows of a kept status."""
    status = (df[_STATUS].fillna("(blank)").astype(str) if _STATUS in df.columns
              else pd.Series(KEPT_STATUSES[0], index=df.index))
    keep = status.isin(list(statuses))
    training = (df["HINT:text"].fillna("").astype(str).str.strip() != "") if "HINT:text" in \
        df.columns else pd.Series(False, index=df.index)
    return (df[(keep & ~training).to_numpy()], Counter(status[~keep].tolist()),
            int((training & keep).sum()))


def _item_ids(df: pd.DataFrame, item_col: str, name: str) -> pd.Series:
    """Each row's item id as text; a blank worker or item id is refused, naming its line."""
    blank_worker = df[_WORKER].isna()
    if blank_worker.any():
        row = int(df.index[int(blank_worker.to_numpy().argmax())])
        raise SchemaError(f"{row_where(df, row)} of {name}: blank {_WORKER}")
    blank_item = df[item_col].isna()
    if blank_item.any():
        row = int(df.index[int(blank_item.to_numpy().argmax())])
        raise SchemaError(f"{row_where(df, row)} of {name}, column {item_col}: blank item id")
    return df[item_col].map(scalar_to_str)
