"""Hugging Face datasets that hold one list of responses per record, votes out.

Annotation platforms that publish to the Hub (Argilla, and datasets built by hand) store
one record per item with the annotators' answers in a list column, in one of two shapes:

- a list of objects, one per response: ``[{"user_id": "u1", "value": "pos",
  "status": "submitted"}, ...]`` (Argilla 1.x exports);
- parallel lists: a list of answers and a list of the annotators who gave them, e.g.
  ``label.responses`` and ``label.responses.users`` (Argilla 2.x exports), or
  ``labels`` and ``annotators``.

:func:`from_hf_responses` reads either shape with pyarrow compute (no loop over records),
keeps responses whose status is kept (by default ``submitted``, when the responses carry
a status; ``discarded`` and ``draft`` are excluded and counted), counts empty answers,
and states the mapping in ``read_info``.

Examples
--------
>>> import datasets
>>> ds = datasets.Dataset.from_list([
...     {"id": "q1", "label": [{"user_id": "a", "value": "yes", "status": "submitted"},
...                            {"user_id": "b", "value": "no", "status": "discarded"}]},
...     {"id": "q2", "label": [{"user_id": "a", "value": "no", "status": "submitted"}]}])
>>> votes = from_hf_responses(ds, item="id", responses="label")
>>> votes.counts().tolist(), votes.read_details.details["excluded"]
([[0, 1], [1, 0]], {'discarded': 1})
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from annokit.core.labels import LabelSet
from annokit.core.votes import DuplicatePolicy, ReadInfo, Votes
from annokit.errors import SchemaError

if TYPE_CHECKING:  # pragma: no cover
    import datasets

__all__ = ["KEPT_RESPONSE_STATUSES", "from_hf_responses"]

#: Response statuses read as votes by default (when responses carry a status).
KEPT_RESPONSE_STATUSES = ("submitted",)


def _column(table: Any, name: str, what: str, source: str) -> Any:
    if name not in table.column_names:
        raise SchemaError(f"{source}: no column {name!r} for the {what}; columns: "
                          f"{table.column_names}")
    return table.column(name).combine_chunks()


def from_hf_responses(dataset: datasets.Dataset | Any, *, item: str = "id",
                      responses: str = "responses", annotators: str | None = None,
                      annotator_field: str = "user_id", value_field: str = "value",
                      status_field: str = "status",
                      statuses: Sequence[str] = KEPT_RESPONSE_STATUSES,
                      labels: LabelSet | Sequence[Any] | None = None,
                      duplicates: DuplicatePolicy = "error", source: str = "dataset") -> Votes:
    """Votes from a dataset with one list of responses per record.

    Parameters
    ----------
    dataset : datasets.Dataset or pyarrow.Table
    item : str, default="id"
        Column of item ids.
    responses : str, default="responses"
        The list column: of objects (``annotator_field``, ``value_field``, optional
        ``status_field``) or of answers (with ``annotators`` naming the parallel list of
        annotator ids; without it annotators are unknown).
    annotators : str, optional
        Parallel list column of annotator ids, for a list of answers.
    annotator_field, value_field, status_field : str
        Field names inside response objects.
    statuses : sequence of str, default=("submitted",)
        Response statuses read as votes, when the responses carry one.
    labels, duplicates, source
        As for :meth:`annokit.core.votes.Votes.from_long`.

    Returns
    -------
    Votes
        With ``read_info`` and ``read_details.details`` (mapping, ``excluded`` {status: responses},
        ``empty``: responses without a value, ``records_without_votes``: records left with
        no vote, which are not items).

    Raises
    ------
    SchemaError
        Missing columns or fields, parallel lists of different lengths (the first record
        named), or no votes.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    table, ids, lists = _item_and_response_columns(dataset, item, responses, source)
    parents = pc.list_parent_indices(lists).to_numpy()
    flat = pc.list_flatten(lists)
    if pa.types.is_struct(flat.type):
        values, who, status, mapping = _response_fields(flat, item, responses, annotator_field,
                                                        value_field, status_field, source)
    else:
        values, who, status = flat, None, None
        if annotators is not None:
            who = _parallel_annotators(table, annotators, lists, ids, responses, source)
        mapping = (f"item={item!r}, annotator={annotators!r}, label={responses!r}"
                   if annotators else f"item={item!r}, annotators unknown, label={responses!r}")
    keep, excluded = _kept_by_status(status, statuses, len(values))
    empty_mask = values.is_null().to_numpy(zero_copy_only=False) & keep
    keep &= ~values.is_null().to_numpy(zero_copy_only=False)
    frame = pd.DataFrame({
        "item": ids.take(pa.array(parents[keep])).cast(pa.string()).to_numpy(zero_copy_only=False),
        "label": values.filter(pa.array(keep)).cast(pa.string()).to_numpy(zero_copy_only=False),
    })
    if who is not None:
        frame["annotator"] = who.filter(pa.array(keep)).cast(pa.string()).to_numpy(
            zero_copy_only=False)
    if frame.empty:
        raise SchemaError(f"{source}: no votes in {table.num_rows} record(s): "
                          f"excluded {excluded or 'none'}, {int(empty_mask.sum())} empty answers")
    votes = Votes.from_long(frame, annotator="annotator" if who is not None else None,
                            labels=labels, duplicates=duplicates, source=source)
    no_votes = table.num_rows - int(np.unique(parents[keep]).size)
    votes.read_details = ReadInfo("hf", {
        "mapping": mapping, "excluded": excluded, "empty": int(empty_mask.sum()),
        "records": table.num_rows, "records_without_votes": no_votes})
    excl = ", ".join(f"{k} {v}" for k, v in excluded.items()) or "none"
    votes.read_info = (f"{source}: Hugging Face responses, {table.num_rows} records; {mapping}; "
                       f"excluded responses: {excl}; empty answers: {int(empty_mask.sum())}; records "
                       f"without a vote (not items): {no_votes}")
    return votes


def _item_and_response_columns(dataset: Any, item: str, responses: str, source: str
                               ) -> tuple[Any, Any, Any]:
    """The dataset's Arrow table, its item ids and its list column of responses."""
    import pyarrow as pa

    table = dataset.data.table if hasattr(dataset, "data") and hasattr(dataset.data, "table") \
        else dataset
    if not isinstance(table, pa.Table):
        raise SchemaError(f"{source}: expected a datasets.Dataset or a pyarrow.Table; got "
                          f"{type(dataset).__name__}")
    ids = _column(table, item, "item ids", source)
    lists = _column(table, responses, "responses", source)
    if not pa.types.is_list(lists.type) and not pa.types.is_large_list(lists.type):
        raise SchemaError(f"{source}: column {responses!r} is {lists.type}, not a list of "
                          "responses")
    return table, ids, lists


def _response_fields(flat: Any, item: str, responses: str, annotator_field: str,
                     value_field: str, status_field: str, source: str) -> tuple[Any, Any, Any, str]:
    """The values, annotators and statuses of response objects (None for a field they do
    not have), and the mapping for ``read_info``."""
    fields = [flat.type.field(i).name for i in range(flat.type.num_fields)]
    if value_field not in fields:
        raise SchemaError(f"{source}: responses in {responses!r} have fields {fields}, "
                          f"no {value_field!r} (value_field=)")
    who = flat.field(annotator_field) if annotator_field in fields else None
    status = flat.field(status_field) if status_field in fields else None
    mapping = (f"item={item!r}, annotator={responses}[].{annotator_field if who is not None else '?'}, "
               f"label={responses}[].{value_field}")
    return flat.field(value_field), who, status, mapping


def _parallel_annotators(table: Any, annotators: str, lists: Any, ids: Any, responses: str,
                         source: str) -> Any:
    """The annotator ids of a list column parallel to the answers, flattened; lists of other
    lengths refused, naming the first record."""
    import pyarrow.compute as pc

    users = _column(table, annotators, "annotator ids", source)
    bad = pc.not_equal(pc.list_value_length(users), pc.list_value_length(lists))
    bad = np.flatnonzero(bad.fill_null(True).to_numpy(zero_copy_only=False))
    if bad.size:
        raise SchemaError(f"{source}: record {int(bad[0])} (item {ids[int(bad[0])]}): "
                          f"{annotators!r} and {responses!r} have different lengths")
    return pc.list_flatten(users)


def _kept_by_status(status: Any, statuses: Sequence[str], n: int
                    ) -> tuple[np.ndarray, dict[str, int]]:
    """Which responses have a status read as votes (all, without statuses), and how many of
    each other status."""
    import pyarrow as pa
    import pyarrow.compute as pc

    keep = np.ones(n, dtype=bool)
    if status is None:
        return keep, {}
    text = pc.fill_null(pc.cast(status, pa.string()), "(none)")
    kept = pc.is_in(text, value_set=pa.array(list(statuses), pa.string()))
    keep &= kept.to_numpy(zero_copy_only=False)
    dropped = pc.value_counts(pc.filter(text, pc.invert(kept))).to_pylist()
    return keep, {d["values"]: int(d["counts"]) for d in sorted(dropped, key=lambda d: d["values"])}
