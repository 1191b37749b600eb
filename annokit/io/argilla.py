"""Argilla 2.x exports: records with each user's responses, votes out.

Argilla's SDK writes records in two documented shapes (``argilla.records._io``):

- **nested** (``dataset.records.to_json(path)``, ``dataset.to_disk(path)``'s records file,
  ``records.to_list(flatten=False)``): a JSON list of records ``{"id", "fields", "metadata",
  "suggestions", "responses": {question: [{"value", "user_id"}, ...]}, "vectors",
  "_server_id"}``; a response may carry its ``status``;
- **flat** (``records.to_list(flatten=True)``, and ``dataset.to_hub(...)``, whose Hugging Face
  dataset is these dicts as columns): the fields and metadata at the top level and, per
  question, parallel lists ``<question>.responses`` (values), ``<question>.responses.users``
  (user ids) and ``<question>.responses.status``; ``None`` where a record has no response.

The reader takes a JSON list, JSON Lines or Parquet file (a Hub dataset's files) in either
shape. It maps item to ``id`` (the record's id; ``_server_id`` when that is blank, or the field
named by ``--item-col``), annotator to the response's user id, label to the response's value
for the one question answered (``--label-col`` names one of several). A multi-label question's
list of labels is several votes of one user on one record. Responses whose status is not
``submitted`` (``draft``, ``discarded``) are left out and counted, as are empty values; records
without a response are counted and are not items. Responses without a status are read as
submitted, and ``read_info`` says so.
"""

from __future__ import annotations

import io
import os
from collections import Counter
from collections.abc import Sequence
from typing import Any

from annokit.core.labels import LabelSet, scalar_to_str
from annokit.core.votes import DuplicatePolicy, ReadInfo, Votes
from annokit.errors import DataFormatError, SchemaError
from annokit.io.export_common import Answers, answers_to_votes, counted, label_values
from annokit.io.source import Input, json_object_lines, loads_json
from annokit.io.tables import table_kind

__all__ = ["KEPT_STATUSES", "looks_like_argilla", "read_argilla"]

#: Response statuses read as votes.
KEPT_STATUSES = ("submitted",)
_FLAT = ".responses"


def looks_like_argilla(first: dict[str, Any]) -> bool:
    """Whether a record (the first of a file) is an Argilla record, nested or flat."""
    nested = isinstance(first.get("responses"), dict) and "fields" in first
    flat = any(str(k).endswith(_FLAT) for k in first) and any(
        str(k).endswith(_FLAT + ".users") for k in first)
    return nested or flat


def _load(source: Input) -> list[dict[str, Any]]:
    kind = table_kind(source)
    if kind == "parquet":
        import pyarrow.parquet as pq

        return pq.read_table(io.BytesIO(source.data)).to_pylist()
    text = source.text
    if text.lstrip("\ufeff \t\r\n").startswith("["):
        doc = loads_json(text, source.name)
        if not all(isinstance(r, dict) for r in doc):
            raise DataFormatError(f"{source.name}: an Argilla export is a list of record objects")
        return list(doc)
    return json_object_lines(text, source.name)[0]


def _responses(record: dict[str, Any], question: str, flat: bool,
               where: str) -> list[tuple[Any, Any, Any]]:
    """(value, user id, status) of each response to ``question`` in one record."""
    if not flat:
        found = (record.get("responses") or {}).get(question) or []
        if not isinstance(found, list) or not all(isinstance(r, dict) for r in found):
            raise DataFormatError(f"{where}, responses.{question}: not a list of response objects")
        return [(r.get("value"), r.get("user_id"), r.get("status")) for r in found]
    values = record.get(question + _FLAT) or []
    users = record.get(question + _FLAT + ".users") or []
    status = record.get(question + _FLAT + ".status") or [None] * len(values)
    if not (len(values) == len(users) == len(status)):
        raise DataFormatError(f"{where}: {question}.responses, .users and .status have "
                              f"different lengths ({len(values)}, {len(users)}, {len(status)})")
    return list(zip(values, users, status, strict=True))


def _questions(records: list[dict[str, Any]], flat: bool) -> list[str]:
    found: dict[str, None] = {}
    for r in records:
        if flat:
            found.update((k[:-len(_FLAT)], None) for k, v in r.items()
                         if str(k).endswith(_FLAT) and v)
        else:
            found.update((k, None) for k, v in (r.get("responses") or {}).items() if v)
    return list(found)


def _item(record: dict[str, Any], key: str | None, where: str) -> str:
    if key is None:
        raw = record.get("id") if record.get("id") not in (None, "") else record.get("_server_id")
    else:
        raw = record.get(key, (record.get("fields") or {}).get(key,
                                                              (record.get("metadata") or {}).get(key)))
    if raw is None or isinstance(raw, (list, dict)) or str(raw).strip() == "":
        raise DataFormatError(f"{where}: no item id in {key or 'id or _server_id'} (--item-col "
                              "names a field holding one)")
    return scalar_to_str(raw)


def read_argilla(path: str | os.PathLike | Input, *, item: str | None = None,
                 question: str | None = None, statuses: Sequence[str] = KEPT_STATUSES,
                 labels: LabelSet | Sequence[Any] | None = None,
                 duplicates: DuplicatePolicy = "error") -> Votes:
    """Votes from an Argilla 2.x export (nested or flat records; JSON, JSON Lines or Parquet).

    Parameters
    ----------
    path : path-like
    item : str, optional
        A field or metadata key holding item ids; default the record ``id``.
    question : str, optional
        The question whose responses are the labels; default the only one answered.
    statuses : sequence of str, default=("submitted",)
        Response statuses read as votes.
    labels, duplicates
        As for :meth:`annokit.core.votes.Votes.from_long`.

    Returns
    -------
    Votes
        With ``read_info`` and ``read_details.details`` (``shape``, ``item``, ``question``, ``records``,
        ``left_out`` {reason: responses}, ``records_without_responses``, ``multi_label``).

    Raises
    ------
    DataFormatError, SchemaError
        Not Argilla records, several questions without ``question``, malformed responses
        (naming the record).
    """
    source = Input(path, what="votes")
    name = source.name
    records = _load(source)
    if not records or not looks_like_argilla(records[0]):
        raise DataFormatError(f"{name}: not an Argilla export (records with 'fields' and "
                              "'responses', or '<question>.responses' and '.responses.users')")
    flat = not isinstance(records[0].get("responses"), dict)
    asked = _questions(records, flat)
    if question is None:
        if not asked:
            raise SchemaError(f"{name}: no votes: none of the {len(records)} record(s) has a "
                              "response")
        if len(asked) > 1:
            raise SchemaError(f"{name}: the questions {asked} have responses; name the label's "
                              "with --label-col (Python: question=)")
        question = asked[0]
    elif question not in asked:
        raise SchemaError(f"{name}: no responses to question {question!r}; answered: {asked}")
    answers, no_status, empty_records = Answers(), 0, 0
    for pos, record in enumerate(records):
        where = f"{name}, record {pos + 1}"
        found = _responses(record, question, flat, where)
        if not found:
            empty_records += 1
            continue
        it = _item(record, item, where)
        for value, user, status in found:
            no_status += status is None
            if status is not None and str(status) not in statuses:
                answers.left_out[str(status)] += 1
            elif not (values := label_values(value, f"{where}, {question}")):
                answers.left_out["empty"] += 1
            elif user is None or str(user).strip() == "":
                raise DataFormatError(f"{where}, {question}: a response without user_id")
            else:
                answers.add(it, scalar_to_str(user), values)
    left = dict(sorted(answers.left_out.items()))
    votes = answers_to_votes(answers, name=name, labels=labels, duplicates=duplicates,
                             nothing=f"{len(records)} record(s), left out: {counted(left)}")
    shape = "flat" if flat else "nested"
    votes.read_details = ReadInfo("argilla", {
        "shape": shape, "item": item or "id", "question": question, "records": len(records),
        "left_out": left, "records_without_responses": empty_records, "multi_label": answers.multi})
    votes.read_info = (f"{name}: Argilla records ({shape}), {len(records)} records; "
                       f"item={item or 'id'!r}, annotator=user_id, label=question {question!r}; "
                       f"left out responses: {counted(Counter(left))}; records without a "
                       f"response (not items): {empty_records}"
                       + (f"; {no_status} response(s) without a status read as submitted"
                          if no_status else ""))
    return votes
