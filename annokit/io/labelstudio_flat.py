"""Label Studio's JSON-MIN and CSV exports: one record per annotation, votes out.

Label Studio's converter (label-studio-sdk ``converter``: ``convert_to_json_min``, and the CSV
export built on the same records) writes one record per annotation that was not cancelled, with
the task's ``data`` fields at the top level, the task ``id``, one key per control tag (its
``from_name``) holding the answer, and ``annotator`` (the user's email, or id), ``annotation_id``,
``created_at``, ``updated_at``, ``lead_time`` (the CSV adds ``was_cancelled``; both may add
``agreement``). An answer is written "prettified": one ticked choice as its text (``"pos"``),
several as ``{"choices": ["pos", "neu"]}``, a rating or number as ``[{"rating": 4}]``; the CSV
holds the latter two as JSON text. A task nobody annotated is one record with no answer.

The reader maps item to ``id`` (or the data field named by ``--item-col``), annotator to
``annotator``, and label to the control named by ``--label-col``, else the one key holding
answer-shaped values (an object with ``choices``/``rating``/``number``), else the one key whose
value differs between two annotations of a task. Tasks without an annotation, blank answers and
(CSV) cancelled annotations are counted; cancelled annotations are not in these exports at all,
which ``read_info`` says (the full JSON export keeps and counts them,
:mod:`annokit.io.labelstudio`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from annokit.core.labels import LabelSet, scalar_to_str
from annokit.core.votes import DuplicatePolicy, ReadInfo, Votes
from annokit.errors import DataFormatError, SchemaError
from annokit.io.export_common import Answers, answers_to_votes, counted, label_values
from annokit.io.source import Input, loads_json
from annokit.io.tables import read_table, row_where, table_kind

__all__ = ["FIXED_KEYS", "looks_like_labelstudio_flat", "read_labelstudio_flat"]

#: Keys every JSON-MIN/CSV record has besides the data fields and the controls.
FIXED_KEYS = ("id", "annotator", "annotation_id", "created_at", "updated_at", "lead_time",
              "was_cancelled", "agreement", "draft_id")
_MARK = {"annotator", "annotation_id", "lead_time"}
_VALUE_KEYS = ("choices", "rating", "number")


def looks_like_labelstudio_flat(keys: Iterable[Any]) -> bool:
    """Whether the keys of a record (or a CSV header) are those of a JSON-MIN/CSV export."""
    return _MARK <= {str(k) for k in keys}


def _decoded(value: Any) -> Any:
    """A CSV cell holding JSON (``{"choices": [...]}``, ``[{"rating": 4}]``) as the object."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _shaped(value: Any) -> bool:
    """Whether a value is an answer as the converter writes one (not a data field's text)."""
    parts = value if isinstance(value, list) else [value]
    return bool(parts) and all(isinstance(p, dict) and any(k in p for k in _VALUE_KEYS)
                               for p in parts)


def _answer(value: Any, where: str) -> list[str]:
    value = _decoded(value)
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return []
    parts = value if isinstance(value, list) else [value]
    out: list[str] = []
    for part in parts:
        if isinstance(part, dict):
            kind = next((k for k in _VALUE_KEYS if k in part), None)
            if kind is None:
                raise DataFormatError(f"{where}: answer {value!r} holds no choices, rating or "
                                      "number (other controls are not votes)")
            out += label_values(part[kind], where)
        else:
            out += label_values(part, where)
    return out


def _records(source: Input) -> tuple[pd.DataFrame, str]:
    """The records as a frame of raw values (JSON-MIN) or cells (CSV), and the kind."""
    if table_kind(source) == "jsonl":
        doc = loads_json(source.text, source.name)
        if not isinstance(doc, list) or not all(isinstance(r, dict) for r in doc):
            raise DataFormatError(f"{source.name}: a Label Studio JSON-MIN export is a JSON list "
                                  "of objects")
        return pd.DataFrame.from_records(doc), "JSON-MIN"
    return read_table(source), "CSV"


def _label_key(df: pd.DataFrame, item: str, given: str | None, name: str) -> str:
    if given is not None:
        if given not in df.columns:
            raise SchemaError(f"{name}: no key {given!r} for the label; keys: {list(df.columns)}")
        return given
    candidates = [c for c in df.columns if c not in FIXED_KEYS and c != item]
    shaped = [c for c in candidates if df[c].map(lambda v: _shaped(_decoded(v))).any()]
    if len(shaped) == 1:
        return shaped[0]
    annotated = df[df["annotator"].notna()]
    varying = [c for c in (shaped or candidates)
               if (annotated[c].map(repr).groupby(annotated[item].map(repr)).nunique() > 1).any()]
    if len(varying) == 1:
        return varying[0]
    raise SchemaError(f"{name}: cannot tell the control holding the label from the data fields "
                      f"{shaped or candidates}; name it with --label-col (Python: from_name=)")


def read_labelstudio_flat(path: str | os.PathLike | Input, *, item: str | None = None,
                          from_name: str | None = None,
                          labels: LabelSet | Sequence[Any] | None = None,
                          duplicates: DuplicatePolicy = "error") -> Votes:
    """Votes from a Label Studio JSON-MIN (``.json``) or CSV export.

    Parameters
    ----------
    path : path-like
    item : str, optional
        A data field holding item ids; default the task ``id``.
    from_name : str, optional
        The control whose answers are the labels (see the module docstring for the default).
    labels, duplicates
        As for :meth:`annokit.core.votes.Votes.from_long`; ``duplicates`` applies to a user's
        two annotations of one task (the choices of one annotation are always kept).

    Returns
    -------
    Votes
        With ``read_info`` and ``read_details.details`` (``export``, ``item``, ``label``,
        ``records``, ``unannotated``, ``cancelled``, ``blank``, ``multi_choice``).

    Raises
    ------
    DataFormatError, SchemaError
        Not such an export, a blank item id, an answer that is not a choice, rating or number,
        or a label control that cannot be told (naming ``--label-col``).
    """
    source = Input(path, what="votes")
    name = source.name
    df, kind = _records(source)
    if not looks_like_labelstudio_flat(df.columns):
        raise DataFormatError(f"{name}: not a Label Studio JSON-MIN/CSV export: it lacks "
                              f"{sorted(_MARK - set(df.columns))}")
    item_key = item or "id"
    if item_key not in df.columns:
        raise SchemaError(f"{name}: no key {item_key!r} for the item ids; keys: {list(df.columns)}")
    label_key = _label_key(df, item_key, from_name, name)
    answers = Answers()
    cancelled = df["was_cancelled"].map(lambda v: str(v).lower() in ("true", "1")) \
        if "was_cancelled" in df.columns else pd.Series(False, index=df.index)
    for pos, (raw, who, value, skip) in enumerate(zip(df[item_key], df["annotator"],
                                                       df[label_key], cancelled, strict=True)):
        where = (f"{row_where(df, pos)} of {name}" if kind == "CSV"
                 else f"{name}, record {pos + 1}") + f", key {label_key!r}"
        if raw is None or pd.isna(raw) or str(raw).strip() == "":
            raise DataFormatError(f"{where.rsplit(', key', 1)[0]}: blank item id in {item_key!r}")
        if skip:
            answers.left_out["cancelled"] += 1
        elif who is None or (isinstance(who, float) and pd.isna(who)):
            answers.left_out["tasks without annotation"] += 1
        elif values := _answer(value, where):
            answers.add(scalar_to_str(raw), scalar_to_str(who), values)
        else:
            answers.left_out["blank"] += 1
    left = dict(answers.left_out)
    votes = answers_to_votes(answers, name=name, labels=labels, duplicates=duplicates,
                             nothing=f"{len(df)} record(s), left out: {counted(left)}")
    votes.read_details = ReadInfo("labelstudio", {
        "export": kind, "item": item_key, "label": label_key, "records": len(df),
        "unannotated": left.get("tasks without annotation", 0),
        "cancelled": left.get("cancelled", 0), "blank": left.get("blank", 0),
        "multi_choice": answers.multi})
    votes.read_info = (f"{name}: Label Studio {kind} export, {len(df)} records; item={item_key!r}, "
                       f"annotator='annotator', label=control {label_key!r}; left out: "
                       f"{counted(left)}; multi-choice answers: {answers.multi} (cancelled "
                       "annotations are not in this export; the full JSON export counts them)")
    return votes
