"""Label Studio JSON exports: tasks with their annotations, votes out.

A Label Studio export ("JSON" in the export dialog) is a list of tasks; each task has
an ``id``, its ``data`` and a list of ``annotations``, each made by one user
(``completed_by``: a user id, or an object with an ``id``/``email``) and holding a
``result`` list, one entry per control tag (``from_name``) with a ``type`` and a
``value``: ``{"choices": [...]}`` for Choices, ``{"rating": 4}`` for Rating,
``{"number": 3}`` for Number. The reader maps:

- item: the task ``id``, or the ``data`` field named by ``item=``;
- annotator: ``completed_by`` (its ``id``; ``email`` with ``annotator="email"``);
- label: the value of the one Choices / Rating / Number control, or the control named by
  ``from_name=``. Several ticked choices are several votes of one annotator on one item
  (multi-label data; ``votes.read_details.details["multi_choice"]`` counts such answers).

Cancelled (skipped) annotations are excluded and counted; an annotation without a value
for the control is counted as blank; the mapping and the counts are in ``read_info``.

Examples
--------
>>> import json, tempfile, pathlib
>>> tasks = [{"id": 1, "data": {"text": "a"}, "annotations": [
...     {"completed_by": 7, "was_cancelled": False, "result": [
...         {"from_name": "sentiment", "type": "choices", "value": {"choices": ["pos"]}}]},
...     {"completed_by": 8, "was_cancelled": True, "result": []}]}]
>>> path = pathlib.Path(tempfile.mkdtemp()) / "export.json"
>>> _ = path.write_text(json.dumps(tasks))
>>> votes = read_labelstudio(path)
>>> votes.n_votes, votes.read_details.details["cancelled"]
(1, 1)
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pandas as pd

from annokit.core.labels import LabelSet, scalar_to_str
from annokit.core.votes import DuplicatePolicy, ReadInfo, Votes
from annokit.errors import DataFormatError, SchemaError
from annokit.io.source import Input, loads_json

__all__ = ["looks_like_labelstudio", "looks_like_labelstudio_file", "read_labelstudio"]

_VALUE_KEYS = {"choices": "choices", "rating": "rating", "number": "number"}


def looks_like_labelstudio(doc: Any) -> bool:
    """Whether a parsed JSON document is a Label Studio export (tasks with annotations)."""
    return (isinstance(doc, list) and bool(doc) and isinstance(doc[0], dict)
            and "annotations" in doc[0] and "data" in doc[0])


def looks_like_labelstudio_file(source: Input) -> bool:
    """Whether a file starts like a Label Studio export: a JSON list whose first task has
    ``annotations`` (only the first 64 KiB are looked at)."""
    head = source.data[:65536].decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    return head.startswith("[") and '"annotations"' in head and '"data"' in head


def _annotator(ann: dict[str, Any], key: str, where: str) -> str:
    who = ann.get("completed_by")
    if isinstance(who, dict):
        who = who.get(key, who.get("id"))
    if who is None or isinstance(who, (list, dict, bool)) or str(who).strip() == "":
        raise DataFormatError(f"{where}: annotation without completed_by")
    return scalar_to_str(who)


def _values(result: list[Any], from_name: str | None, where: str) -> tuple[str | None, list[Any]]:
    """(control name, values) of the label control in one annotation's result."""
    found = []
    for entry in result:
        if not isinstance(entry, dict) or not isinstance(entry.get("value"), dict):
            raise DataFormatError(f"{where}: a result entry is not an object with a value")
        kind = next((k for k in _VALUE_KEYS if k in entry["value"]), None)
        if kind is None or (from_name is not None and entry.get("from_name") != from_name):
            continue
        found.append((entry.get("from_name"), entry["value"][kind]))
    if not found:
        return None, []
    names = {name for name, _ in found}
    if len(names) > 1:
        raise SchemaError(f"{where}: answers from several controls {sorted(map(str, names))}; "
                          "say which holds the label with --label-col (Python: from_name=)")
    values: list[Any] = []
    for _, value in found:
        values.extend(value if isinstance(value, list) else [value])
    return found[0][0], values


def read_labelstudio(path: str | os.PathLike | Input, *, item: str | None = None,
                     from_name: str | None = None, annotator: str = "id",
                     labels: LabelSet | Sequence[Any] | None = None,
                     duplicates: DuplicatePolicy = "error") -> Votes:
    """Votes from a Label Studio JSON export.

    Parameters
    ----------
    path : path-like
    item : str, optional
        A ``data`` field holding the item id; default the task ``id``.
    from_name : str, optional
        The control tag whose answers are the labels; default the only one answered.
    annotator : {"id", "email"}, default="id"
        Which field of ``completed_by`` names the annotator when it is an object.
    labels : LabelSet or sequence of names, optional
    duplicates : {"error", "first", "last", "keep"}
        Two annotations of one user on one task. Several choices inside one annotation
        are always kept (multi-label answers).

    Returns
    -------
    Votes
        With ``read_info`` and ``read_details.details`` (``item``, ``label``, ``tasks``,
        ``annotations``, ``cancelled``, ``blank``, ``multi_choice``).

    Raises
    ------
    DataFormatError
        Not a Label Studio export, or a malformed task (named by its position and id).
    """
    source = Input(path, what="votes")
    name = source.name
    doc = loads_json(source.text, name)
    if not isinstance(doc, list) or not all(isinstance(t, dict) for t in doc):
        raise DataFormatError(f"{name}: a Label Studio export is a JSON list of task objects")
    rows: list[tuple[str, str, Any]] = []
    counts: Counter[str] = Counter()
    controls: set[str] = set()
    for pos, task in enumerate(doc):
        where, item_id, anns = _task(task, pos, item, name)
        for ann in anns:
            counts["annotations"] += 1
            if not isinstance(ann, dict):
                raise DataFormatError(f"{where}: an annotation is not an object")
            if ann.get("was_cancelled"):
                counts["cancelled"] += 1
                continue
            who = _annotator(ann, annotator, where)
            control, values = _values(ann.get("result") or [], from_name, where)
            if not values:
                counts["blank"] += 1
                continue
            controls.add(str(control))
            counts["multi_choice"] += len(values) > 1
            rows.extend((item_id, who, label) for label in _scalars(values, where))
    if len(controls) > 1:
        raise SchemaError(f"{name}: answers from several controls {sorted(controls)}; say which "
                          "holds the label with --label-col (Python: from_name=)")
    if not rows:
        raise SchemaError(f"{name}: no votes in {len(doc)} task(s): "
                          f"{counts['cancelled']} cancelled, {counts['blank']} blank annotations")
    long = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    if counts["multi_choice"]:
        _check_multi_choice(long, name)
        duplicates = "keep"
    votes = Votes.from_long(long, labels=labels, duplicates=duplicates, source=name)
    label_text = next(iter(controls))
    info = {"item": "id" if item is None else f"data.{item}", "annotator": "completed_by",
            "label": label_text, "tasks": len(doc), "annotations": counts["annotations"],
            "cancelled": counts["cancelled"], "blank": counts["blank"],
            "multi_choice": counts["multi_choice"]}
    votes.read_details = ReadInfo("labelstudio", info)
    votes.read_info = (f"{name}: Label Studio export, {len(doc)} tasks; item={info['item']!r}, "
                       f"annotator='completed_by', label=control {label_text!r}; cancelled "
                       f"annotations: {info['cancelled']}; blank: {info['blank']}; multi-choice "
                       f"answers: {info['multi_choice']}")
    return votes


def _task(task: dict[str, Any], pos: int, item: str | None, name: str
          ) -> tuple[str, str, list[Any]]:
    """Where a task is (for messages), its item id and its annotations."""
    where = f"{name}, task {pos + 1} (id {task.get('id')!r})"
    if "annotations" not in task:
        raise DataFormatError(f"{where}: no 'annotations' list (is this a JSON-MIN or CSV "
                              "export? use the full JSON export)")
    data: dict[str, Any] = task["data"] if isinstance(task.get("data"), dict) else {}
    raw = task.get("id") if item is None else data.get(item)
    if raw is None or isinstance(raw, (list, dict)) or str(raw).strip() == "":
        raise DataFormatError(f"{where}: no item id in "
                              f"{'id' if item is None else 'data.' + item}")
    anns = task["annotations"]
    if not isinstance(anns, list):
        raise DataFormatError(f"{where}: 'annotations' is not a list")
    return where, scalar_to_str(raw), anns


def _scalars(values: list[Any], where: str) -> list[str]:
    """An answer's values as label texts; nested values are refused."""
    for value in values:
        if isinstance(value, (list, dict)) or value is None:
            raise DataFormatError(f"{where}: label value {value!r} is not a scalar "
                                  "(taxonomy and nested answers are not read)")
    return [scalar_to_str(value) for value in values]


def _check_multi_choice(long: pd.DataFrame, name: str) -> None:
    """Several choices of one user are one vote each; the same label twice is refused (a user
    annotating a task twice is still a duplicate under ``duplicates``)."""
    pair = long[["item", "annotator", "label"]].duplicated()
    if pair.any():
        first = long[pair].iloc[0]
        raise SchemaError(f"{name}: item {first['item']!r}: annotator "
                          f"{first['annotator']!r} gave label {first['label']!r} twice")
