"""Arrow input: votes from Arrow tables or record batches, and chunked, mergeable counts.

Ids and labels are dictionary-encoded by Arrow's C++ kernels, never by a Python
loop, and counting is a ``bincount`` per chunk, so the same code runs over
data larger than memory: ``count_batches`` is a map-reduce whose partial
results (:class:`VoteCounts`) merge by item id.

Votes are coded chunk by chunk (:class:`_ColumnCoder`): each chunk's dictionary
indices are stored as they arrive and the chunk released, so a Parquet file is
read one row group at a time (``annokit.io.tabular``) and never held whole.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from annokit.core.ids import string_buffers
from annokit.core.labels import MISSING_STRINGS, LabelSet, as_str_values
from annokit.core.votes import DuplicatePolicy, Votes
from annokit.errors import AlignmentError, InputError, SchemaError

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

    table = data if isinstance(data, pa.Table) else pa.Table.from_batches(list(data))
    if annotator == "annotator" and "annotator" not in table.column_names:
        annotator = None
    wanted = [c for c in (item, label, annotator) if c is not None]
    missing = [c for c in wanted if c not in table.column_names]
    if missing:
        raise SchemaError(f"{source} is missing column(s) {missing}; got {table.column_names}")
    return votes_from_tables([table], table.num_rows, item=item, label=label, annotator=annotator,
                              labels=labels, duplicates=duplicates, source=source)


def votes_from_tables(
    tables: Iterable[pa.Table],
    n_rows: int,
    *,
    item: str,
    label: str,
    annotator: str | None,
    labels: LabelSet | Sequence[Any] | None,
    duplicates: DuplicatePolicy,
    source: str,
) -> Votes:
    """Votes from consecutive tables of ``n_rows`` votes in all (one table, or a file's row groups).

    Each table is coded and can be released before the next is read (see :class:`_ColumnCoder`),
    so a Parquet file is never held whole.
    """
    from concurrent.futures import ThreadPoolExecutor

    if n_rows == 0:
        raise SchemaError(f"{source} has no votes")
    roles = {item: "item id", label: "label"}
    if annotator is not None:
        roles[annotator] = "annotator id"
    coders = _code_tables(tables, roles, n_rows, item, source)

    def values_of(col: str) -> tuple[pa.ChunkedArray, np.ndarray]:
        """The column's distinct str values, none blank, and the lookup from its stored codes
        to their positions."""
        dictionary, lookup, entry = coders[col].dictionary()
        if entry >= 0:
            row = coders[col].first_row(lookup, entry)
            raise SchemaError(f"{source}: {roles[col]} is empty at row {row} (column {col!r}, "
                              f"got {dictionary[entry].as_py()!r})")
        return dictionary, lookup

    def item_column() -> tuple[np.ndarray, pa.ChunkedArray]:
        item_ids, lookup = values_of(item)  # Arrow strings: Votes makes str objects on first use
        return coders[item].map(lookup), item_ids

    # The item column (most of what is left) is finished in a thread beside the label and
    # annotator columns: numpy and Arrow release the GIL. An item error still comes first.
    with ThreadPoolExecutor(max_workers=1) as pool:
        items = pool.submit(item_column)
        try:
            label_dict, label_lookup = values_of(label)
            label_dict = label_dict.to_numpy(zero_copy_only=False)
            labelset = LabelSet.coerce(labels, label_dict)
            try:
                table_map = labelset.encode(label_dict, where=f"{source}, column {label!r}")
            except InputError as exc:
                raise exc.retold(lambda m: m.replace(" at row", " (dictionary entry)")) from None
            label_codes = coders[label].map(table_map[label_lookup])
            ann_codes = ann_ids = None
            if annotator is not None:
                ann_ids, lookup = values_of(annotator)
                ann_ids = ann_ids.to_numpy(zero_copy_only=False)
                ann_codes = coders[annotator].map(lookup)
        except InputError:
            try:
                items.result()
            except InputError as item_error:
                raise item_error from None
            raise
        item_codes, item_ids = items.result()
    return Votes(item_codes, label_codes, item_ids=item_ids, labels=labelset,
                 annotator_index=ann_codes, annotator_ids=ann_ids, duplicates=duplicates,
                 source=source, _ids_unique=True, _coded=True)


# -- dictionary coding helpers --------------------------------------------------

# Fingerprints are a polynomial hash mod 2**64 over the bytes of a string. The base is odd, so it
# has an inverse mod 2**64 and a fingerprint can be read off prefix sums at any string offset.
_FP_BASE = 0x100000001B3
_FP_BASE_INV = pow(_FP_BASE, -1, 2**64)
_FP_LENGTH_MIX = np.uint64(0x9E3779B97F4A7C15)
_FP_MIN_VALUES = 1 << 18  # below this Arrow's hash table fits in cache and is as fast
_FP_BLOCK = 1 << 13  # strings per block: keeps the per-byte uint64 buffers in cache
_LITTLE = sys.byteorder == "little"


def _code_tables(tables: Iterable[pa.Table], roles: dict[str, str], n_rows: int, item: str,
                 source: str) -> dict[str, _ColumnCoder]:
    """One coder per column of ``roles`` (column: what it holds), fed table by table; a
    missing value is refused naming its row."""
    import pyarrow as pa

    coders = {col: _ColumnCoder(n_rows, mostly_distinct=col == item) for col in roles}
    start = 0
    for table in tables:
        for col, what in roles.items():
            arr = table.column(col)
            if arr.null_count:
                row = start + int(np.argmax(arr.is_null().to_numpy(zero_copy_only=False)))
                raise SchemaError(f"{source}: {what} is missing at row {row} (column {col!r})")
            if pa.types.is_dictionary(arr.type):
                coders[col].add(arr)
            else:
                coders[col].add(_dictionary_encode(arr), encoded=True)
        start += table.num_rows
    return coders


class _ColumnCoder:
    """Codes of one dictionary-encoded column, fed chunk by chunk, into one dictionary.

    Without ``ChunkedArray.unify_dictionaries`` (slow with many chunks): chunks read from one
    Parquet row group share a dictionary, so each distinct dictionary is kept once, and a
    chunk's indices are stored at once, offset to point into the concatenation of the kept
    dictionaries, and marked used; the chunk itself can then be released. :meth:`dictionary`
    codes the concatenated dictionaries once (:func:`_first_seen_codes`) and :meth:`map` maps
    the stored codes in place. No temporary is the size of the column: on this kind of
    workload, faulting in a fresh buffer of a few hundred MB costs more than filling it.

    With ``mostly_distinct`` (item ids) each new string dictionary is also fingerprinted as it
    arrives, while the next row group is being read.

    A column added whole as its own dictionary encoding (``add(..., encoded=True)``: a CSV
    table's columns) is already coded: its one dictionary holds distinct values, each used, in
    first-seen order, so :meth:`dictionary` keeps it as it is and :meth:`map` leaves the codes.
    """

    def __init__(self, n_rows: int, *, mostly_distinct: bool = False):
        self.codes = np.empty(n_rows, dtype=np.int32)
        self.n = 0
        self.dictionaries: list[pa.Array] = []  # kept alive, so buffer addresses stay unique
        self.used: list[np.ndarray] = []  # per kept dictionary: entries some row uses
        self.starts: dict[tuple, tuple[int, int]] = {}  # dictionary -> (position, first code)
        self.size = 0
        self.mostly_distinct = mostly_distinct
        self.fingerprints: list[np.ndarray] | None = [] if mostly_distinct else None
        self.sorted_fingerprints: list[np.ndarray] = []
        # stored codes of blank entries, found as each string dictionary arrives (None once a
        # dictionary is not strings: then the coded dictionary is checked at the end)
        self.blank: list[np.ndarray] | None = []
        self.encoded = True  # every kept dictionary is an encoding of the rows that use it

    def add(self, arr: pa.ChunkedArray, *, encoded: bool = False) -> None:
        """Store the codes of ``arr`` (dictionary-encoded). ``encoded``: ``arr`` is the
        dictionary encoding of exactly these rows (``pyarrow.compute.dictionary_encode``,
        :func:`_dictionary_encode`), so its dictionary holds distinct values, each used."""
        import pyarrow as pa

        for chunk in arr.chunks:
            if not len(chunk):
                continue
            dictionary = chunk.dictionary
            key = (tuple(b.address if b is not None else 0 for b in dictionary.buffers()),
                   dictionary.offset, len(dictionary))
            if key not in self.starts:
                self.starts[key] = (len(self.dictionaries), self.size)
                self.dictionaries.append(dictionary)
                self.used.append(np.full(len(dictionary), encoded, dtype=bool))
                self.encoded &= encoded
                if self.blank is not None and _is_string(dictionary):
                    self.blank.append(self.size + _blank_entries(dictionary))
                elif self.blank is not None and pa.types.is_integer(dictionary.type):
                    pass  # an integer is never blank
                else:
                    self.blank = None
                self.size += len(dictionary)
                if self.size >= 2**31 and self.codes.dtype == np.int32:
                    self.codes = self.codes.astype(np.int64)
                if encoded and len(self.dictionaries) == 1:
                    pass  # distinct already; a second dictionary then goes to Arrow's hash
                elif self.fingerprints is not None and _is_string(dictionary) \
                        and not dictionary.null_count \
                        and len(self.fingerprints) == len(self.dictionaries) - 1:
                    self.fingerprints.append(_fingerprints(*string_buffers(dictionary)))
                    self.sorted_fingerprints.append(np.sort(self.fingerprints[-1]))
                else:
                    self.fingerprints = None
            w, start = self.starts[key]
            indices = chunk.indices.to_numpy(zero_copy_only=False)
            used = self.used[w]
            if encoded:
                pass  # every entry is used
            elif len(indices) >= len(used) // 8:
                used |= np.bincount(indices, minlength=len(used)) > 0
            else:  # a short chunk of a long dictionary
                used[indices] = True
            part = self.codes[self.n:self.n + len(chunk)]
            if indices.dtype == part.dtype:
                np.add(indices, part.dtype.type(start), out=part)
            else:
                part[:] = indices
                part += start
            self.n += len(chunk)

    def dictionary(self) -> tuple[pa.ChunkedArray, np.ndarray, int]:
        """The distinct values some row uses, as str (first-seen order of the dictionaries),
        the lookup from stored codes to their positions, and the first blank position (-1)."""
        import pyarrow as pa

        if self.encoded and len(self.dictionaries) == 1:  # coded already
            dictionary = self.dictionaries[0]
            self.dictionaries, self.fingerprints, self.sorted_fingerprints, self.used = \
                [], None, [], []
            dictionary, entry = self._text_and_blank(dictionary, lambda blank: blank)
            return pa.chunked_array([dictionary]), np.arange(len(dictionary)), entry
        values = pa.chunked_array(self.dictionaries)  # not concatenated: no copy of the strings
        fingerprints = ordered = None
        if self.fingerprints is not None:
            fingerprints = np.concatenate(self.fingerprints)
            # sorted runs, merged by timsort in about log2(runs) linear passes
            ordered = np.concatenate(self.sorted_fingerprints)
            ordered.sort(kind="stable")
        seen = np.concatenate(self.used)
        self.dictionaries, self.fingerprints, self.sorted_fingerprints, self.used = [], None, [], []
        table, dictionary = _first_seen_codes(values, mostly_distinct=self.mostly_distinct,
                                              fingerprints=fingerprints, ordered=ordered)
        del values, fingerprints, ordered
        used = np.zeros(len(dictionary), dtype=bool)
        used[table[seen]] = True
        if not used.all():  # a dictionary can hold entries no row uses
            table = (np.cumsum(used) - 1)[table]
            dictionary = dictionary.filter(pa.array(used))
        # only the blank entries some row uses, at their final positions
        dictionary, entry = self._text_and_blank(dictionary, lambda blank: table[blank[seen[blank]]])
        return dictionary, table, entry

    def _text_and_blank(self, dictionary: Any, final: Any) -> tuple[Any, int]:
        """The distinct values as text, and the first blank one's position (-1 for none):
        the blank entries found as dictionaries arrived, mapped to their final positions by
        ``final``, or looked for in the values."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if not _is_string(dictionary):
            dictionary = pc.cast(dictionary, pa.string())
        if self.blank is None:
            entry = _first_blank(dictionary)
        else:
            blank = final(np.concatenate([np.zeros(0, dtype=np.int64), *self.blank]))
            entry = int(blank.min()) if blank.size else -1
        self.blank = []
        return dictionary, entry

    def first_row(self, lookup: np.ndarray, entry: int) -> int:
        """The first row whose stored code ``lookup`` maps to ``entry``."""
        return int(np.argmax(np.isin(self.codes[:self.n], np.flatnonzero(lookup == entry))))

    def map(self, lookup: np.ndarray) -> np.ndarray:
        """The codes, mapped in place through ``lookup`` (stored code -> final code)."""
        codes = self.codes[:self.n]
        lookup = np.asarray(lookup)
        if len(lookup) and lookup[0] == 0 and lookup[-1] == len(lookup) - 1 and bool(
                (np.diff(lookup) == 1).all()):
            return codes  # the identity (a column coded already)
        _map_in_place(codes, lookup.astype(codes.dtype))
        return codes


def _is_string(values: pa.Array) -> bool:
    import pyarrow as pa

    return pa.types.is_string(values.type) or pa.types.is_large_string(values.type)


def _dictionary_encode(arr: pa.ChunkedArray) -> pa.ChunkedArray:
    """``pyarrow.compute.dictionary_encode(arr)``: the same dictionary (first-seen order) and
    indices.

    Integer ids (the canonical integer ids of a CSV) spanning a range not much wider than the
    column are coded through a lookup table over that range instead of a hash table, which is
    cache-bound with a million distinct ids (5M votes, 1M items: 0.07 s vs 0.41 s of CPU). The
    distinct values come out in first-seen order from the rows where each first appears
    (``np.minimum.at``), marked in a boolean array and read back in row order: no sort.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(arr)
    if not pa.types.is_int64(arr.type) or arr.null_count or not 0 < n < 2**31:
        return pc.dictionary_encode(arr)
    values = np.asarray(arr.to_numpy(), dtype=np.int64)
    low, high = int(values.min()), int(values.max())
    span = high - low + 1
    if span > 2 * n + (1 << 16):
        return pc.dictionary_encode(arr)
    if low:
        values = values - low
    first = np.full(span, n, dtype=np.int32)  # first row of each value in the range (n: absent)
    np.minimum.at(first, values, np.arange(n, dtype=np.int32))
    # the first rows, in row order, without a sort: mark them (absent values mark row n)
    is_first = np.zeros(n + 1, dtype=bool)
    is_first[first] = True
    order = values[np.flatnonzero(is_first[:n])]  # distinct values, first seen first
    del first, is_first
    lookup = np.empty(span, dtype=np.int32)
    lookup[order] = np.arange(len(order), dtype=np.int32)
    order += low
    return pa.chunked_array([pa.DictionaryArray.from_arrays(
        pa.array(lookup[values]), pa.array(order, type=pa.int64()))])


def _map_in_place(codes: np.ndarray, table: np.ndarray, *, block: int = 1 << 20) -> None:
    """``codes[:] = table[codes]``, a block at a time."""
    for a in range(0, len(codes), block):
        part = codes[a:a + block]
        part[:] = table[part]


def _first_seen_codes(
    values: pa.ChunkedArray | pa.Array, *, mostly_distinct: bool,
    fingerprints: np.ndarray | None = None, ordered: np.ndarray | None = None,
) -> tuple[np.ndarray, pa.ChunkedArray]:
    """Codes of ``values`` into their distinct values (first-seen order), and those values.

    Codes and values equal ``pyarrow.compute.dictionary_encode``'s; ``fingerprints`` are
    :func:`_fingerprints` of ``values`` when already computed, ``ordered`` the same sorted. For a
    large string column whose values are mostly distinct (item ids: the merged row-group
    dictionaries of a file repeat only the items that straddle row groups), a hash table of
    millions of strings is cache-bound; instead equal values are found by sorting 32-bit
    fingerprints (:func:`_fingerprints`), and only the values whose fingerprints tie are hashed,
    so ties between different strings are resolved exactly, and the distinct values are zero-copy
    slices of ``values`` when few are dropped. Falls back to Arrow's hash when ties are common.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(values, pa.Array):
        values = pa.chunked_array([values])
    n = len(values)
    if (mostly_distinct and _FP_MIN_VALUES <= n < 2**31 and values.null_count == 0
            and (pa.types.is_string(values.type) or pa.types.is_large_string(values.type))):
        if fingerprints is None:
            fingerprints = np.concatenate(
                [_fingerprints(*string_buffers(c)) for c in values.chunks] or [np.zeros(0, np.uint32)])
        fp = fingerprints
        ordered = np.sort(fp) if ordered is None else ordered
        tied = ordered[1:][ordered[1:] == ordered[:-1]]
        del ordered
        if not tied.size:
            return np.arange(n, dtype=np.int32), values
        if tied.size <= n // 16:
            tied = np.unique(tied)
            # a 64 Ki-entry table of the tied values' low 16 bits rules out nearly every value
            # cheaply; binary search confirms the rest
            low = np.zeros(1 << 16, dtype=bool)
            low[tied & 0xFFFF] = True
            maybe = np.flatnonzero(low[fp.view(np.uint16)[0::2] if _LITTLE else fp & 0xFFFF])
            candidates = maybe[tied.take(np.searchsorted(tied, fp[maybe]), mode="clip") == fp[maybe]]
            del fp
            sub = pc.dictionary_encode(values.take(pa.array(candidates)).combine_chunks())
            sub = sub.indices.to_numpy(zero_copy_only=False)
            _, first = np.unique(sub, return_index=True)  # sub codes are first-seen ordered
            # every copy of a value is a candidate, so its first candidate is its first copy
            rep = candidates[first[sub]]
            repeat = rep != candidates
            keep = np.ones(n, dtype=bool)
            keep[candidates[repeat]] = False
            codes = np.cumsum(keep, dtype=np.int32)
            codes -= 1
            codes[candidates[repeat]] = codes[rep[repeat]]
            return codes, _keep_entries(values, keep)
    encoded = pc.dictionary_encode(values.combine_chunks())
    return encoded.indices.to_numpy(zero_copy_only=False), pa.chunked_array([encoded.dictionary])


def _keep_entries(values: pa.ChunkedArray, keep: np.ndarray) -> pa.ChunkedArray:
    """``values.filter(keep)``; as zero-copy slices between the dropped entries when few are."""
    import pyarrow as pa

    dropped = np.flatnonzero(~keep)
    if len(dropped) > 1024:
        return values.filter(pa.array(keep))
    bounds = np.concatenate([[-1], dropped, [len(values)]])
    pieces = [values.slice(int(a) + 1, int(b - a) - 1) for a, b in pairwise(bounds) if b - a > 1]
    return pa.chunked_array([c for piece in pieces for c in piece.chunks if len(c)], values.type)


def _fingerprints(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """A 32-bit fingerprint of each string; equal strings get equal fingerprints.

    The high half of ``h(s) = (sum_i (s_i + 1) * B**i mod 2**64) xor (len(s) * M)`` for the bytes
    ``s_i``: within a block of strings, the prefix sums ``P_k = sum_{j<k} (d_j + 1) * B**j`` over
    the block's bytes ``d`` give ``h`` of the string at ``[a, b)`` as ``(P_b - P_a) * B**-a``.
    32 bits sort faster than 64; distinct strings may share a fingerprint (about ``n**2 / 2**33``
    pairs among ``n`` random strings), so callers resolve ties exactly.
    """
    n = len(offsets) - 1
    out = np.empty(n, dtype=np.uint32)
    bounds = np.append(np.arange(0, n, _FP_BLOCK), n)
    span = int(np.diff(offsets[bounds]).max()) if n else 0
    powers = np.full(span + 1, _FP_BASE, dtype=np.uint64)
    powers[0] = 1
    np.multiply.accumulate(powers, out=powers)
    inverse = np.full(span + 1, _FP_BASE_INV, dtype=np.uint64)
    inverse[0] = 1
    np.multiply.accumulate(inverse, out=inverse)
    prefix = np.empty(span + 1, dtype=np.uint64)
    prefix[0] = 0
    for a, b in pairwise(bounds):
        start = int(offsets[a])
        rel = offsets[a:b + 1] - start
        size = int(rel[-1])
        x = data[start:start + size].astype(np.uint64)
        x += np.uint64(1)
        x *= powers[:size]
        np.cumsum(x, out=prefix[1:size + 1])
        h = prefix[rel[1:]] - prefix[rel[:-1]]
        h *= inverse[rel[:-1]]
        h ^= np.diff(rel).astype(np.uint64) * _FP_LENGTH_MIX
        h >>= np.uint64(32)
        out[a:b] = h
    return out


def _first_blank(dictionary: pa.Array | pa.ChunkedArray) -> int:
    """Index of the first blank entry (see :func:`_blank_entries`), or -1."""
    import pyarrow as pa

    start = 0
    for chunk in dictionary.chunks if isinstance(dictionary, pa.ChunkedArray) else [dictionary]:
        blank = _blank_entries(chunk)
        if blank.size:
            return start + int(blank[0])
        start += len(chunk)
    return -1


def _blank_entries(dictionary: pa.Array) -> np.ndarray:
    """Indices of the entries that are blank: empty, or a missing-value word once trimmed and
    lower-cased (see ``MISSING_STRINGS``).

    Only entries that could be blank are trimmed and lower-cased: those of at most 4 bytes (the
    longest missing-value word) and those whose first or last byte is not printable ASCII (so
    trimming might change them). Any other entry is its own trimmed form, longer than every
    word, and lower-casing cannot shorten it into one (Arrow's simple case mapping takes
    non-ASCII characters to ASCII only for the Kelvin sign and dotted capital I: "k" and "i").
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    offsets, data = string_buffers(dictionary)
    maybe = np.diff(offsets) <= max(len(w) for w in MISSING_STRINGS)
    if data.size:  # first and last bytes (of a neighbour for empty entries, which are "maybe")
        for ends in (np.minimum(offsets[:-1], data.size - 1), np.maximum(offsets[1:] - 1, 0)):
            byte = data[ends]
            maybe |= byte <= 0x20
            maybe |= byte >= 0x7F
    idx = np.flatnonzero(maybe)
    if not idx.size:
        return idx
    trimmed = pc.utf8_lower(pc.utf8_trim_whitespace(dictionary.take(pa.array(idx))))
    blank = pc.is_in(trimmed, value_set=pa.array(sorted(MISSING_STRINGS)))
    return idx[blank.to_numpy(zero_copy_only=False).astype(bool)]


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
                raise SchemaError(f"{where} is missing column {col!r}; got {batch.schema.names}")
            if batch.column(col).null_count:
                raise SchemaError(f"{where}: column {col!r} has missing values")
        items = batch.column(item)
        items = items if pa.types.is_dictionary(items.type) else pc.dictionary_encode(items)
        labs = batch.column(label)
        labs = labs if pa.types.is_dictionary(labs.type) else pc.dictionary_encode(labs)
        lab_map = labelset.encode(
            as_str_values(labs.dictionary.to_pylist(), what="label", where=where), where=where
        )
        ic = items.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        lc = lab_map[labs.indices.to_numpy(zero_copy_only=False)]
        n_i, n_l = len(items.dictionary), len(labelset)
        counts = np.bincount(ic * n_l + lc, minlength=n_i * n_l).reshape(n_i, n_l)
        dictionary = items.dictionary
        if not (pa.types.is_string(dictionary.type) or pa.types.is_large_string(dictionary.type)):
            dictionary = pc.cast(dictionary, pa.string())
        used = counts.sum(axis=1) > 0
        blank = _blank_entries(dictionary)
        blank = blank[used[blank]]
        if blank.size:
            row = int(np.argmax(np.isin(ic, blank)))
            raise SchemaError(f"{where}: item id is empty at row {row} (column {item!r}, "
                              f"got {dictionary[int(blank[0])].as_py()!r})")
        ids = dictionary.to_numpy(zero_copy_only=False).astype(object)
        parts.append(VoteCounts(ids[used], counts[used], labelset))
    if not parts:
        raise SchemaError(f"{source} has no votes")
    return _merge_counts(parts)


def _merge_counts(parts: Sequence[VoteCounts]) -> VoteCounts:
    """Sum partial counts by item id in one pass: one factorisation, one bincount per label."""
    first = parts[0]
    for other in parts[1:]:
        if other.labels.names != first.labels.names:
            raise AlignmentError(
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
