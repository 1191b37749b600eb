"""Arrow input: votes from Arrow tables or record batches, and chunked, mergeable counts.

Ids and labels are dictionary-encoded by Arrow's C++ kernels, never by a Python
loop, and counting is a ``bincount`` per chunk, so the same code runs over
data larger than memory: ``count_batches`` is a map-reduce whose partial
results (:class:`VoteCounts`) merge by item id.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from annokit.errors import VoteSchemaError
from annokit.labels import _MISSING_STRINGS, LabelSet, _as_str_values
from annokit.votes import DuplicatePolicy, Votes

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

__all__ = ["VoteCounts", "count_batches", "votes_from_arrow"]


def votes_from_arrow(
    data: pa.Table | Iterable[pa.RecordBatch],
    *,
    item: str = "item",
    label: str = "label",
    annotator: str | None = "annotator",
    labels: LabelSet | Sequence[Any] | None = None,
    duplicates: DuplicatePolicy = "error",
    source: str = "votes",
) -> Votes:
    """Votes from an Arrow table or an iterable of record batches (long format).

    Ids and labels are dictionary-encoded by Arrow (C++), not by Python.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    table = data if isinstance(data, pa.Table) else pa.Table.from_batches(list(data))
    if annotator == "annotator" and "annotator" not in table.column_names:
        annotator = None
    wanted = [c for c in (item, label, annotator) if c is not None]
    missing = [c for c in wanted if c not in table.column_names]
    if missing:
        raise VoteSchemaError(f"{source} is missing column(s) {missing}; got {table.column_names}")
    if table.num_rows == 0:
        raise VoteSchemaError(f"{source} has no votes")

    def encode(col: str, what: str) -> tuple[np.ndarray, np.ndarray]:
        """Codes and the str values they index, validated by Arrow kernels (no Python loop)."""
        arr = table.column(col)
        if arr.null_count:
            row = int(np.argmax(arr.is_null().to_numpy(zero_copy_only=False)))
            raise VoteSchemaError(f"{source}: {what} is missing at row {row} (column {col!r})")
        if not pa.types.is_dictionary(arr.type):
            arr = pc.dictionary_encode(arr)
        # One global dictionary without ChunkedArray.unify_dictionaries (slow with many
        # chunks): hash the concatenated chunk dictionaries once, then remap each chunk.
        # Chunks read from one Parquet row group share a dictionary: hash each distinct one once.
        chunks = [c for c in arr.chunks if len(c)]
        distinct: dict[tuple, int] = {}
        dicts = []
        which = []
        for c in chunks:
            key = (tuple(b.address if b is not None else 0 for b in c.dictionary.buffers()),
                   c.dictionary.offset, len(c.dictionary))
            if key not in distinct:
                distinct[key] = len(dicts)
                dicts.append(c.dictionary)
            which.append(distinct[key])
        sizes = np.array([len(d) for d in dicts], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        merged = pc.dictionary_encode(pa.concat_arrays(dicts))
        to_global = merged.indices.to_numpy(zero_copy_only=False)  # int32: half the bytes to move
        codes = np.concatenate([
            to_global[c.indices.to_numpy(zero_copy_only=False) + np.int32(starts[w])]
            for w, c in zip(which, chunks)
        ])
        dictionary = merged.dictionary
        if not (pa.types.is_string(dictionary.type) or pa.types.is_large_string(dictionary.type)):
            dictionary = pc.cast(dictionary, pa.string())
        blank = pc.is_in(pc.utf8_lower(pc.utf8_trim_whitespace(dictionary)),
                         value_set=pa.array(sorted(_MISSING_STRINGS)))
        if pc.any(blank).as_py():
            entry = int(np.argmax(blank.to_numpy(zero_copy_only=False)))
            row = int(np.argmax(codes == entry))
            raise VoteSchemaError(f"{source}: {what} is empty at row {row} (column {col!r}, "
                                  f"got {dictionary[entry].as_py()!r})")
        used = np.bincount(codes, minlength=len(dictionary)) > 0
        if not used.all():  # unify_dictionaries can leave entries no row uses
            codes = (np.cumsum(used) - 1)[codes]
            dictionary = dictionary.filter(pa.array(used))
        return codes, dictionary.to_numpy(zero_copy_only=False).astype(object)

    item_codes, item_ids = encode(item, "item id")
    label_codes, label_dict = encode(label, "label")
    labelset = LabelSet.coerce(labels, label_dict)
    try:
        table_map = labelset.encode(label_dict, where=f"{source}, column {label!r}")
    except VoteSchemaError as exc:
        raise VoteSchemaError(str(exc).replace(" at row", " (dictionary entry)")) from None
    ann_codes = ann_ids = None
    if annotator is not None:
        ann_codes, ann_ids = encode(annotator, "annotator id")
    return Votes(item_codes, table_map.astype(np.int32)[label_codes], item_ids=item_ids, labels=labelset,
               annotator_index=ann_codes, annotator_ids=ann_ids, duplicates=duplicates,
               source=source, _ids_unique=True)


class VoteCounts:
    """Item x label vote counts keyed by item id; mergeable across chunks.

    ``count_batches`` produces one per chunk (or per worker); ``merge`` adds
    two, aligning items by id. Merging is associative and commutative up to
    item order (first-seen order is kept), so the same code runs on a
    distributed engine. Duplicate (item, annotator) votes cannot be detected
    across chunks; build a :class:`Votes` when that check matters.
    """

    def __init__(self, item_ids: Any, counts: np.ndarray, labels: LabelSet):
        self.item_ids = np.asarray(item_ids, dtype=object)
        self.counts = np.asarray(counts, dtype=np.int64)
        self.labels = labels

    def merge(self, *others: VoteCounts) -> VoteCounts:
        """Sum these counts with ``others``, aligning items by id (first-seen order)."""
        return _merge_counts([self, *others])

    def to_votes(self, *, source: str = "counts") -> Votes:
        return Votes.from_counts(self.counts, labels=self.labels, item_ids=self.item_ids,
                                 source=source)


def count_batches(
    batches: Iterable[pa.RecordBatch] | pa.Table,
    *,
    labels: LabelSet | Sequence[Any],
    item: str = "item",
    label: str = "label",
    source: str = "votes",
) -> VoteCounts:
    """Count votes chunk by chunk and sum the partial counts.

    Each batch is dictionary-encoded by Arrow and counted with ``bincount``; the
    per-chunk :class:`VoteCounts` are merged by item id. The label set must be
    given up front, so every chunk codes labels the same way.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    labelset = LabelSet.coerce(labels)
    if isinstance(batches, pa.Table):
        batches = batches.to_batches()
    parts: list[VoteCounts] = []
    for n, batch in enumerate(batches):
        if batch.num_rows == 0:
            continue
        where = f"{source}, batch {n}"
        for col in (item, label):
            if col not in batch.schema.names:
                raise VoteSchemaError(f"{where} is missing column {col!r}; got {batch.schema.names}")
            if batch.column(col).null_count:
                raise VoteSchemaError(f"{where}: column {col!r} has missing values")
        items = batch.column(item)
        items = items if pa.types.is_dictionary(items.type) else pc.dictionary_encode(items)
        labs = batch.column(label)
        labs = labs if pa.types.is_dictionary(labs.type) else pc.dictionary_encode(labs)
        lab_map = labelset.encode(
            _as_str_values(labs.dictionary.to_pylist(), what="label", where=where), where=where
        )
        ic = items.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        lc = lab_map[labs.indices.to_numpy(zero_copy_only=False)]
        n_i, n_l = len(items.dictionary), len(labelset)
        counts = np.bincount(ic * n_l + lc, minlength=n_i * n_l).reshape(n_i, n_l)
        dictionary = items.dictionary
        if not (pa.types.is_string(dictionary.type) or pa.types.is_large_string(dictionary.type)):
            dictionary = pc.cast(dictionary, pa.string())
        ids = dictionary.to_numpy(zero_copy_only=False).astype(object)
        used = counts.sum(axis=1) > 0
        parts.append(VoteCounts(ids[used], counts[used], labelset))
    if not parts:
        raise VoteSchemaError(f"{source} has no votes")
    return _merge_counts(parts)


def _merge_counts(parts: Sequence[VoteCounts]) -> VoteCounts:
    """Sum partial counts by item id in one pass: one factorisation, one bincount per label."""
    first = parts[0]
    for other in parts[1:]:
        if other.labels.names != first.labels.names:
            raise VoteSchemaError(
                f"cannot merge counts over labels {list(first.labels.names)} and "
                f"{list(other.labels.names)}"
            )
    ids = np.concatenate([p.item_ids for p in parts])
    stacked = np.concatenate([p.counts for p in parts])
    codes, uniques = pd.factorize(pd.Series(ids, dtype=object), sort=False)
    n = len(uniques)
    merged = np.stack([np.bincount(codes, weights=stacked[:, j], minlength=n)
                       for j in range(stacked.shape[1])], axis=1).astype(np.int64)
    return VoteCounts(np.asarray(uniques, dtype=object), merged, first.labels)
