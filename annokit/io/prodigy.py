"""Prodigy's JSONL (``prodigy db-out DATASET``): one line per annotated task, votes out.

Each line is a task as Prodigy's documentation describes it (prodi.gy/docs/api-interfaces): its
input (``text``, ``meta``, ``_input_hash``), the question (``_task_hash``, ``_view_id``), and
the annotator's ``answer``: ``accept``, ``reject`` or ``ignore``. Multi-user sessions add
``_annotator_id`` and ``_session_id`` (``dataset-alex``, the dataset and the session name).
Two kinds of task are read:

- **choice** (``textcat.manual`` with several labels, ``choice`` recipes): ``options`` (each
  with an ``id``) and the ids ticked in ``accept``; an accepted answer is one vote per ticked
  id (several on a multi-label task). A rejected choice task says the question was wrong, not
  which option is right: it is left out and counted, as is an accepted answer that ticks none.
- **binary** (``textcat.teach``, a ``label`` and no ``options``): "does ``label`` fit?"; the vote
  is ``accept`` or ``reject`` and the item is the input (the input and the label, when the file
  asks about several labels).

The mapping:

- item: ``_input_hash`` (or the field named by ``--item-col``: a top-level key, or
  ``meta.<key>``);
- annotator: ``_annotator_id``, else ``_session_id`` (exports from before named sessions hold
  one timestamped session per run);
- label: as above.

``ignore`` answers are left out and counted, with rejected choice tasks and empty answers.

Examples
--------
>>> import json, tempfile, pathlib
>>> rows = [{"text": "a", "_input_hash": 1, "options": [{"id": "POS"}, {"id": "NEG"}],
...          "accept": ["POS"], "answer": "accept", "_annotator_id": "d-ann"},
...         {"text": "a", "_input_hash": 1, "options": [{"id": "POS"}, {"id": "NEG"}],
...          "accept": [], "answer": "ignore", "_annotator_id": "d-bob"}]
>>> path = pathlib.Path(tempfile.mkdtemp()) / "db-out.jsonl"
>>> _ = path.write_text("".join(json.dumps(r) + "\\n" for r in rows))
>>> votes = read_prodigy(path)
>>> votes.counts().tolist(), votes.read_details.details["left_out"]
([[1]], {'ignore': 1})
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from annokit.core.labels import LabelSet, scalar_to_str
from annokit.core.votes import DuplicatePolicy, ReadInfo, Votes
from annokit.errors import DataFormatError
from annokit.io.export_common import Answers, answers_to_votes, counted, label_values
from annokit.io.source import Input, json_object_lines

__all__ = ["looks_like_prodigy", "read_prodigy"]

_ANSWERS = ("accept", "reject", "ignore")


def looks_like_prodigy(first: dict[str, Any]) -> bool:
    """Whether the first object of a JSON Lines file is an annotated Prodigy task."""
    return "answer" in first and any(
        k in first for k in ("_input_hash", "_task_hash", "_annotator_id", "_session_id"))


def _field(row: dict[str, Any], key: str) -> Any:
    if key.startswith("meta.") and key not in row:
        meta = row.get("meta")
        return meta.get(key[5:]) if isinstance(meta, dict) else None
    return row.get(key)


def _annotator(row: dict[str, Any], where: str) -> str:
    who = row.get("_annotator_id", row.get("_session_id"))
    if who is None or isinstance(who, (list, dict)) or str(who).strip() == "":
        raise DataFormatError(f"{where}: no _annotator_id or _session_id (Prodigy writes them "
                              "when the task is saved; a file without annotators is not votes)")
    return scalar_to_str(who)


def _answer(row: dict[str, Any], where: str) -> tuple[str, list[str] | None]:
    """(kind, labels) of one task; labels None when the answer is left out."""
    answer = row.get("answer")
    if answer not in _ANSWERS:
        raise DataFormatError(f"{where}, field answer: {answer!r} is not accept, reject or ignore")
    if "options" in row:
        if not isinstance(row["options"], list):
            raise DataFormatError(f"{where}, field options: not a list of options")
        ids = {scalar_to_str(o.get("id")) for o in row["options"] if isinstance(o, dict)}
        ticked = label_values(row.get("accept") or [], f"{where}, field accept")
        unknown = [t for t in ticked if t not in ids]
        if unknown:
            raise DataFormatError(f"{where}, field accept: {unknown[0]!r} is not the id of one of "
                                  f"the options {sorted(ids)}")
        return "choice", ticked if answer == "accept" else None
    if "label" in row:
        return "binary", [answer] if answer != "ignore" else None
    raise DataFormatError(f"{where}: neither options (a choice task) nor label (a binary task); "
                          "spans and other interfaces are not votes")


def read_prodigy(path: str | os.PathLike | Input, *, item: str | None = None,
                 labels: LabelSet | Sequence[Any] | None = None,
                 duplicates: DuplicatePolicy = "error") -> Votes:
    """Votes from a Prodigy ``db-out`` JSONL file of choice or binary classification tasks.

    Parameters
    ----------
    path : path-like
    item : str, optional
        The field holding item ids: a top-level key or ``meta.<key>``; default
        ``_input_hash``.
    labels, duplicates
        As for :meth:`annokit.core.votes.Votes.from_long`; ``duplicates`` applies to one
        annotator answering one task twice (the ticks of one answer are always kept).

    Returns
    -------
    Votes
        With ``read_info`` and ``read_details.details`` (``item``, ``annotator``, ``kind``, ``tasks``,
        ``left_out`` {reason: tasks}, ``multi_choice``).

    Raises
    ------
    DataFormatError
        A line that is not a task, an answer outside accept/reject/ignore, a tick that is no
        option, or a task without annotator (naming the line and field).
    """
    source = Input(path, what="votes")
    name = source.name
    rows, line_numbers = json_object_lines(source.text, name)
    key = item or "_input_hash"
    answers = Answers()
    kinds: set[str] = set()
    asked = {str(r.get("label")) for r in rows if "options" not in r and "label" in r}
    for row, lineno in zip(rows, line_numbers, strict=True):
        where = f"line {lineno} of {name}"
        raw = _field(row, key)
        if raw is None or isinstance(raw, (list, dict)) or str(raw).strip() == "":
            raise DataFormatError(f"{where}: no item id in field {key!r} (--item-col names "
                                  "another field, e.g. meta.id)")
        who = _annotator(row, where)
        kind, values = _answer(row, where)
        kinds.add(kind)
        it = scalar_to_str(raw)
        if kind == "binary" and len(asked) > 1:
            it = f"{it}:{scalar_to_str(row['label'])}"
        if values is None:
            answers.left_out["ignore" if row["answer"] == "ignore" else "reject (choice)"] += 1
        elif not values:
            answers.left_out["accepted without a choice"] += 1
        else:
            answers.add(it, who, values)
    if len(kinds) > 1:
        raise DataFormatError(f"{name}: choice tasks (options) and binary tasks (label) in one "
                              "file; export one recipe's dataset at a time")
    kind = next(iter(kinds), "choice")
    left = dict(answers.left_out)
    votes = answers_to_votes(answers, name=name, labels=labels, duplicates=duplicates,
                             nothing=f"{len(rows)} task(s), left out: {counted(left)}")
    who_key = "_annotator_id" if any("_annotator_id" in r for r in rows) else "_session_id"
    item_text = key + (":label" if kind == "binary" and len(asked) > 1 else "")
    votes.read_details = ReadInfo("prodigy", {
        "item": item_text, "annotator": who_key, "kind": kind, "tasks": len(rows),
        "left_out": left, "multi_choice": answers.multi})
    label_text = ("the ids in accept" if kind == "choice"
                  else f"answer (accept/reject) to label {sorted(asked)}")
    votes.read_info = (f"{name}: Prodigy JSONL, {len(rows)} {kind} tasks; item={item_text!r}, "
                       f"annotator={who_key!r}, label={label_text}; left out: {counted(left)}"
                       + (f"; multi-choice answers: {answers.multi}" if answers.multi else ""))
    return votes
