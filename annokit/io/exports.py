"""The exports of annotation tools: which tool wrote a file, and its reader.

``read_votes`` asks :func:`export_format` (a JSON document's first record, or a table's header)
before it tries the table layouts, and reads a tool's export with :func:`read_export`. One
place names every tool format, so ``--format``, the detection and the messages agree:

======================  ==============================================  ====================
format                  recognised by                                   reader
======================  ==============================================  ====================
``mturk``               ``HITId``, ``WorkerId``, ``Answer.*`` columns   :mod:`.mturk`
``toloka``              ``ASSIGNMENT:worker_id`` and ``OUTPUT:*``       :mod:`.toloka`
``labelstudio``         tasks with ``annotations`` (full JSON), or       :mod:`.labelstudio`,
                        ``annotator``/``annotation_id``/``lead_time``    :mod:`.labelstudio_flat`
                        records (JSON-MIN, CSV)
``prodigy``             JSONL tasks with an ``answer`` and ``_*_hash``  :mod:`.prodigy`
                        or ``_annotator_id``
``argilla``             records with ``fields`` and ``responses``, or   :mod:`.argilla`
                        ``<question>.responses(.users)`` columns
======================  ==============================================  ====================
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from annokit.core.votes import DuplicatePolicy, LabelSet, Votes
from annokit.errors import InvalidValueError
from annokit.io.argilla import looks_like_argilla, read_argilla
from annokit.io.labelstudio import looks_like_labelstudio_file, read_labelstudio
from annokit.io.labelstudio_flat import looks_like_labelstudio_flat, read_labelstudio_flat
from annokit.io.mturk import looks_like_mturk, read_mturk
from annokit.io.prodigy import looks_like_prodigy, read_prodigy
from annokit.io.source import Input
from annokit.io.tables import table_kind
from annokit.io.toloka import looks_like_toloka, read_toloka

__all__ = ["TOOL_FORMATS", "export_format", "first_record", "read_export"]

#: The formats of annotation tools' exports.
TOOL_FORMATS = ("mturk", "toloka", "labelstudio", "prodigy", "argilla")


def first_record(source: Input) -> dict[str, Any] | None:
    """The first object of a JSON list or JSON Lines file (only that much is parsed), or None."""
    text = source.data[:1 << 20].decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    try:
        if text.startswith("["):
            text = text[1:].lstrip()
        doc, _ = json.JSONDecoder().raw_decode(text)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def export_format(source: Input, names: Sequence[str] | None = None) -> str | None:
    """The tool that wrote the file, from its first record (JSON) or its header (``names``,
    for a table), or None."""
    if names is None:
        if looks_like_labelstudio_file(source) and not _flat_labelstudio(source):
            return "labelstudio"
        first = first_record(source)
        if first is None:
            return None
        if looks_like_prodigy(first):
            return "prodigy"
        if looks_like_argilla(first):
            return "argilla"
        return "labelstudio" if looks_like_labelstudio_flat(first) else None
    if looks_like_mturk(names):
        return "mturk"
    if looks_like_toloka(names):
        return "toloka"
    if looks_like_labelstudio_flat(names):
        return "labelstudio"
    if any(str(n).endswith(".responses.users") for n in names):  # an Argilla Hub dataset
        return "argilla"
    return None


def _flat_labelstudio(source: Input) -> bool:
    if table_kind(source) != "jsonl":
        return True
    first = first_record(source)
    return first is not None and looks_like_labelstudio_flat(first) and "annotations" not in first


def read_export(fmt: str, source: Input, *, columns: Mapping[str, str | None] | None,
                labels: LabelSet | Sequence[Any] | None, duplicates: DuplicatePolicy,
                sep: str | None, flags: str | None) -> Votes:
    """Read a tool's export; ``columns`` may name the ``item`` and ``label`` (each reader's
    own sense: an ``Input.*``/``INPUT:`` column, a data field, a control, a question)."""
    cols = dict(columns or {})
    item, label = cols.get("item"), cols.get("label")
    if fmt == "mturk":
        return read_mturk(source, item=item, label=label, labels=labels, duplicates=duplicates,
                          sep=sep, flags=flags or "drop")
    if fmt == "toloka":
        return read_toloka(source, item=item, label=label, labels=labels, duplicates=duplicates,
                           sep=sep)
    if fmt == "prodigy":
        if label is not None:
            raise InvalidValueError(f"{source.name}: a Prodigy task's label is its answer "
                                    "(accept, or the ticked options); --label-col does not apply")
        return read_prodigy(source, item=item, labels=labels, duplicates=duplicates)
    if fmt == "argilla":
        return read_argilla(source, item=item, question=label, labels=labels,
                            duplicates=duplicates)
    if _flat_labelstudio(source):
        return read_labelstudio_flat(source, item=item, from_name=label, labels=labels,
                                     duplicates=duplicates)
    return read_labelstudio(source, item=item, from_name=label, labels=labels,
                            duplicates=duplicates)
