"""Hugging Face ``datasets`` round trips: one row per item, votes as a ``ClassLabel`` sequence.

``datasets`` is imported inside the functions, so importing annokit (and
``annokit --help``) never pays for it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from annokit.core.gold import warn_unknown_gold_dropped
from annokit.core.labels import LabelSet, as_str_values, factorize_ids
from annokit.core.votes import Votes
from annokit.errors import InvalidValueError, SchemaError

if TYPE_CHECKING:  # pragma: no cover
    import datasets

__all__ = ["from_hf", "to_hf"]


def to_hf(votes: Votes) -> datasets.Dataset:
    """A Hugging Face ``datasets.Dataset`` with one row per item.

    Columns: ``item`` (str), ``labels`` (sequence of ``ClassLabel`` in this
    label order), ``annotators`` (sequence of str, when known), ``gold``
    (``ClassLabel``, -1 for none, when present), then the item metadata.
    Label aliases are kept in the dataset's ``info.description`` as JSON.
    """
    import datasets
    import pyarrow as pa

    # one row per item: sort votes by item (stable keeps vote order) and cut by offsets
    order = np.argsort(votes.item_index, kind="stable")
    offsets = pa.array(np.concatenate([[0], np.cumsum(votes.votes_per_item())]).astype(np.int32))
    class_label = datasets.ClassLabel(names=list(votes.labels.names))
    columns: dict[str, Any] = {
        "item": pa.array(votes.item_ids.astype(str)),
        "labels": pa.ListArray.from_arrays(offsets, pa.array(votes.label_index[order].astype(np.int64))),
    }
    features: dict[str, Any] = {"item": datasets.Value("string"),
                                "labels": datasets.Sequence(class_label)}
    if votes.annotator_index is not None and votes.annotator_ids is not None:  # set together
        names = pa.array(votes.annotator_ids.astype(str))
        columns["annotators"] = pa.ListArray.from_arrays(
            offsets, names.take(pa.array(votes.annotator_index[order])))
        features["annotators"] = datasets.Sequence(datasets.Value("string"))
    if votes.gold is not None:
        columns["gold"] = pa.array(np.maximum(votes.gold, -1))  # -2 (not a label): missing
        warn_unknown_gold_dropped(votes.gold, votes.source)
        features["gold"] = class_label
    meta = votes.item_metadata
    reserved = set(columns)
    clash = [c for c in meta.columns if c in reserved]
    if clash:
        raise SchemaError(f"item metadata column(s) {clash} clash with reserved names")
    if len(meta.columns):
        meta_table = pa.Table.from_pandas(meta, preserve_index=False)
        meta_features = datasets.Features.from_arrow_schema(meta_table.schema)
        for c in meta.columns:
            columns[c] = meta_table.column(str(c))
            features[c] = meta_features[str(c)]
    schema = datasets.Features(features)
    info = datasets.DatasetInfo(features=schema, description=json.dumps(
        {"annokit": {"labels": votes.labels.to_dict(),
                     "annotator_ids_known": votes.annotator_index is not None,
                     "annotator_ids": None if votes.annotator_ids is None
                     else [str(a) for a in votes.annotator_ids],
                     "metadata_columns": [str(c) for c in meta.columns]}}))
    table = pa.table(columns).cast(schema.arrow_schema)
    return datasets.Dataset(table, info=info)


def from_hf(
    dataset: datasets.Dataset,
    *,
    item: str = "item",
    labels_column: str = "labels",
    annotators_column: str | None = "annotators",
    gold: str | None = "gold",
    source: str = "dataset",
) -> Votes:
    """Votes from a Hugging Face dataset with one row per item and a list of votes.

    Label names come from a ``ClassLabel`` feature when the votes are
    class-coded, else from the values. Other columns become item metadata.
    """
    import datasets

    cols = dataset.column_names
    for c in (item, labels_column):
        if c not in cols:
            raise SchemaError(f"{source} is missing column {c!r}; got {cols}")
    stored: dict[str, Any] = {}
    try:
        stored = json.loads(dataset.info.description or "{}").get("annokit", {})
    except (json.JSONDecodeError, AttributeError):
        stored = {}
    feat = dataset.features[labels_column]
    inner = getattr(feat, "feature", None)
    if inner is None and isinstance(feat, list) and feat:
        inner = feat[0]
    table = dataset.data.table
    import pyarrow.compute as pc

    lists = table.column(labels_column).combine_chunks()
    lengths = pc.list_value_length(lists).to_numpy(zero_copy_only=False)
    item_ids = as_str_values(table.column(item).to_pylist(), what="item id", where=source)
    flat_values = pc.list_flatten(lists).to_numpy(zero_copy_only=False)
    if isinstance(inner, datasets.ClassLabel):
        names = inner.names
        aliases = stored.get("labels", {}).get("aliases", {})
        labelset = LabelSet(names, aliases=aliases)
        label_codes = flat_values.astype(np.int64)
        if label_codes.size and (label_codes.min() < 0 or label_codes.max() >= len(names)):
            raise InvalidValueError(f"{source}: class-coded votes outside the ClassLabel range")
    else:
        labelset = (LabelSet.from_dict(stored["labels"]) if "labels" in stored
                    else LabelSet.infer(flat_values))
        label_codes = labelset.encode(flat_values, where=f"{source}, column {labels_column!r}")
    item_index = np.repeat(np.arange(len(item_ids)), lengths)
    ann_codes = ann_ids = None
    if annotators_column and annotators_column in cols:
        ann_flat = pc.list_flatten(table.column(annotators_column).combine_chunks())
        order = stored.get("annotator_ids")
        ann_codes, ann_ids = factorize_ids(ann_flat.to_numpy(zero_copy_only=False),
                                            what="annotator id", where=source, order=order)
    gold_codes = None
    reserved = {item, labels_column, annotators_column}
    if gold and gold in cols:
        reserved.add(gold)
        gfeat = dataset.features[gold]
        gvals = table.column(gold).to_numpy(zero_copy_only=False)
        if isinstance(gfeat, datasets.ClassLabel):
            gold_codes = gvals.astype(np.int64)
        else:
            gold_codes = np.full(len(item_ids), -1, dtype=np.int64)
            have = ~pd.isna(gvals)
            gold_codes[have] = labelset.encode(gvals[have], where=f"{source}, column {gold!r}")
    meta_cols = [c for c in cols if c not in reserved]
    meta = (dataset.select_columns(meta_cols).to_pandas() if meta_cols
            else pd.DataFrame(index=pd.RangeIndex(len(item_ids))))
    return Votes(item_index, label_codes, item_ids=item_ids, labels=labelset,
               annotator_index=ann_codes, annotator_ids=ann_ids, item_metadata=meta,
               gold=gold_codes, duplicates="error", source=source)
