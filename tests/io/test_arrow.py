"""The fast Parquet / Arrow vote path: row-group reading, fingerprint deduplication, blank checks,
blocked duplicate and count passes. Each shortcut is checked against the plain computation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit import LabelSet, Votes, VoteSchemaError
from annokit.core.ids import string_buffers
from annokit.core.labels import MISSING_STRINGS
from annokit.io import arrow, read_votes, votes_from_arrow

# a small alphabet makes repeats, whitespace and missing-value words likely
_CHARS = st.sampled_from(list("anNAul/oe x") + ["\t", "\u00a0", "\u3000", "\u0130", "\u212a", "é"])
_TEXT = st.text(_CHARS, max_size=7)


def _blank_reference(values: pa.Array) -> int:
    trimmed = pc.utf8_lower(pc.utf8_trim_whitespace(values))
    hit = np.flatnonzero(pc.is_in(trimmed, value_set=pa.array(sorted(MISSING_STRINGS)))
                         .to_numpy(zero_copy_only=False))
    return int(hit[0]) if hit.size else -1


@settings(max_examples=50, deadline=None)
@given(st.lists(_TEXT, min_size=1, max_size=30), st.integers(0, 3))
def test_first_blank_equals_trimming_every_entry(values, cut):
    for arr in (pa.array(values, pa.string()), pa.array(values, pa.large_string())):
        arr = arr.slice(min(cut, len(values) - 1))
        assert arrow._first_blank(arr) == _blank_reference(arr)


@pytest.mark.parametrize("value", ["  ", "\u3000", "\t\t", "\u00a0", ""])
def test_blank_entries_are_empty_once_trimmed(value):
    arr = pa.array(["item1", "longer-id", value, "x"])
    assert arrow._first_blank(arr) == 2


@pytest.mark.parametrize("value", [" N/A ", "\u3000nan", "\tNULL\t", "none\u00a0", "NaN", "NA"])
def test_missing_words_are_labels_not_blank(value):
    # nan/NA/N/A/None are labels as written unless declared missing
    arr = pa.array(["item1", "longer-id", value, "x"])
    assert arrow._first_blank(arr) == -1
    assert arrow._first_blank(pa.array(["item1", "\u212aelvin", "na\u0130ve"])) == -1


def _dedupe_reference(values: pa.Array):
    enc = pc.dictionary_encode(values.combine_chunks() if isinstance(values, pa.ChunkedArray)
                               else values)
    return enc.indices.to_numpy(zero_copy_only=False).tolist(), enc.dictionary.to_pylist()


@settings(max_examples=50, deadline=None)
@given(st.lists(_TEXT, min_size=1, max_size=60), st.sampled_from([None, 1, 3]))
def test_fingerprint_dedupe_equals_arrow_dictionary_encode(values, collide):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(arrow, "_FP_MIN_VALUES", 1)
        mp.setattr(arrow, "_FP_BLOCK", 4)  # strings spread over several blocks
        if collide is not None:  # force fingerprint ties between different strings
            real = arrow._fingerprints
            mp.setattr(arrow, "_fingerprints", lambda o, d: real(o, d) % np.uint32(collide + 1))
        half = len(values) // 2
        for arr in (pa.array(values, pa.string()), pa.array(values, pa.large_string()),
                    pa.array(["pad", *values], pa.string()).slice(1),
                    pa.chunked_array([values[:half], values[half:]], pa.string())):
            codes, dictionary = arrow._first_seen_codes(arr, mostly_distinct=True)
            assert (codes.tolist(), dictionary.to_pylist()) == _dedupe_reference(arr)


def test_fingerprints_do_not_depend_on_position_or_block():
    words = ["item7", "", "é", "item7", "x" * 40, "", "item70", "é"]
    arr = pa.array(["lead", *words]).slice(1)
    for block in (1, 3, 1 << 13):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(arrow, "_FP_BLOCK", block)
            fp = arrow._fingerprints(*string_buffers(arr))
        assert fp[0] == fp[3] and fp[1] == fp[5] and fp[2] == fp[7]
        assert len({fp[0], fp[1], fp[2], fp[4], fp[6]}) == 5


def _votes_frame(n_items=300, k=3, seed=0):
    rng = np.random.default_rng(seed)
    item = np.repeat(np.arange(n_items), k)
    return pd.DataFrame({
        "item": [f"it{i}" for i in item],
        "annotator": [f"w{(i * 7 + s * 13) % 40}"
                      for i, s in zip(item, np.tile(np.arange(k), n_items), strict=True)],
        "label": rng.choice(["yes", "no", "maybe"], n_items * k),
    })


@pytest.mark.parametrize("row_group_size", [7, 100, 10_000])
def test_row_group_reading_equals_the_general_path(tmp_path, row_group_size, monkeypatch):
    df = _votes_frame()
    df.to_csv(tmp_path / "v.csv", index=False)
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp_path / "v.parquet",
                   row_group_size=row_group_size)  # items straddle row groups
    monkeypatch.setattr(arrow, "_FP_MIN_VALUES", 1)  # the fingerprint path on a small file
    fast = read_votes(tmp_path / "v.parquet")
    general = read_votes(tmp_path / "v.csv")
    assert fast.equals(general)
    table = pq.read_table(tmp_path / "v.parquet")
    assert votes_from_arrow(table).equals(general)


def test_row_group_errors_name_the_file_row(tmp_path):
    df = _votes_frame(n_items=20)
    bad = df.copy()
    bad.loc[45, "item"] = " "
    pq.write_table(pa.Table.from_pandas(bad, preserve_index=False), tmp_path / "blank.parquet",
                   row_group_size=10)
    with pytest.raises(VoteSchemaError, match=r"item id is empty at row 45 \(column 'item'"):
        read_votes(tmp_path / "blank.parquet")
    missing = pa.Table.from_pandas(df, preserve_index=False)
    missing = missing.set_column(2, "label", pa.array(df["label"].where(df.index != 33, None)))
    pq.write_table(missing, tmp_path / "missing.parquet", row_group_size=10)
    with pytest.raises(VoteSchemaError, match=r"label is missing at row 33 \(column 'label'\)"):
        read_votes(tmp_path / "missing.parquet")
    dup = pd.concat([df.iloc[:12], df.iloc[[2]], df.iloc[12:]], ignore_index=True)
    pq.write_table(pa.Table.from_pandas(dup, preserve_index=False), tmp_path / "dup.parquet",
                   row_group_size=10)  # the repeat sits in the second row group
    with pytest.raises(VoteSchemaError, match=r"1 \(item, annotator\) pair\(s\) have more than one"):
        read_votes(tmp_path / "dup.parquet")
    pq.write_table(pa.table({"item": pa.array([], pa.string()), "label": pa.array([], pa.string())}),
                   tmp_path / "empty.parquet")
    with pytest.raises(VoteSchemaError, match="empty.parquet has no votes"):
        read_votes(tmp_path / "empty.parquet")


def test_unused_dictionary_entries_are_dropped_even_blank_ones():
    items = pa.DictionaryArray.from_arrays(pa.array([0, 2, 2], pa.int32()), pa.array(["a", " ", "b"]))
    labels = pa.DictionaryArray.from_arrays(pa.array([1, 1, 0], pa.int8()),
                                            pa.array(["x", "y", "unused"]))
    v = votes_from_arrow(pa.table({"item": items, "label": labels}))
    assert v.item_ids.tolist() == ["a", "b"] and v.labels.names == ("x", "y")
    assert v.counts().tolist() == [[0, 1], [1, 1]]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 4)), min_size=1, max_size=50),
       st.booleans())
def test_blocked_duplicate_check_equals_a_global_one(pairs, grouped):
    if grouped:
        pairs = sorted(pairs, key=lambda p: p[0])
    items = pd.factorize(pd.Series([p[0] for p in pairs]))[0]
    annotators = np.array([p[1] for p in pairs])
    v = Votes(items, np.zeros(len(pairs), dtype=int), item_ids=[str(i) for i in range(items.max() + 1)],
              labels=LabelSet(["x"]), annotator_index=annotators,
              annotator_ids=[str(a) for a in range(5)], duplicates="keep")
    expected = bool(pd.Series(items * 5 + annotators).duplicated().any())
    assert all(v._scan_duplicate_pairs(block) == expected for block in (1, 2, 5, 1 << 20))


def test_counts_over_more_than_one_block():
    rng = np.random.default_rng(1)
    n = (1 << 20) + 12_345
    items = np.sort(rng.integers(0, 50_000, n))
    items = pd.factorize(items)[0]
    label = rng.integers(0, 3, n)
    v = Votes(items, label, item_ids=np.arange(items.max() + 1).astype(str),
              labels=LabelSet(["a", "b", "c"]))
    expected = np.bincount(items * 3 + label, minlength=v.n_items * 3).reshape(-1, 3)
    np.testing.assert_array_equal(v.counts(), expected)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 399), max_size=20), st.randoms(use_true_random=False))
def test_few_fingerprint_ties_are_resolved_exactly_without_hashing_everything(repeats, rnd):
    values = [f"v{i}" for i in range(400)] + [f"v{i}" for i in repeats]
    rnd.shuffle(values)
    arr = pa.array(values)
    real, real_encode = arrow._fingerprints, pc.dictionary_encode
    hashed = []

    def colliding(offsets, data):  # every copy of values[1] also gets values[0]'s fingerprint
        fp = real(offsets, data)
        fp[fp == fp[1]] = fp[0]
        return fp

    def encode(values):
        hashed.append(len(values))
        return real_encode(values)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(arrow, "_FP_MIN_VALUES", 1)
        mp.setattr(arrow, "_fingerprints", colliding)
        mp.setattr(pc, "dictionary_encode", encode)
        codes, dictionary = arrow._first_seen_codes(arr, mostly_distinct=True)
    assert (codes.tolist(), dictionary.to_pylist()) == _dedupe_reference(arr)
    assert hashed and max(hashed) <= 2 * len(repeats) + 4  # only the tied values


@pytest.mark.parametrize("readers", [1, 2, 3])
def test_row_groups_come_back_in_order_with_any_number_of_readers(tmp_path, readers):
    from annokit.io.tabular import _row_groups

    df = _votes_frame(n_items=100)
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp_path / "v.parquet",
                   row_group_size=29)
    with pq.ParquetFile(tmp_path / "v.parquet", read_dictionary=["item", "label"]) as parquet:
        tables = list(_row_groups(parquet, ["item", "label"], tmp_path / "v.parquet",
                                  readers=readers))
    assert pa.concat_tables(tables).column("item").to_pylist() == df["item"].tolist()


def test_a_corrupt_row_group_is_a_data_format_error(tmp_path):
    from annokit.errors import DataFormatError

    df = _votes_frame(n_items=200)
    path = tmp_path / "v.parquet"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path, row_group_size=200)
    chunk = pq.ParquetFile(path).metadata.row_group(2).column(0)
    start = chunk.dictionary_page_offset or chunk.data_page_offset
    raw = bytearray(path.read_bytes())
    raw[start + 20:start + chunk.total_compressed_size - 5] = \
        b"\xab" * (chunk.total_compressed_size - 25)
    path.write_bytes(bytes(raw))
    with pytest.raises(DataFormatError, match="v.parquet: cannot read row group 2"):
        read_votes(path)


def test_item_ids_from_arrow_are_str_objects_on_first_access(tmp_path):
    df = _votes_frame(n_items=50)
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp_path / "v.parquet",
                   row_group_size=40)
    v = read_votes(tmp_path / "v.parquet")
    assert v.n_items == 50
    ids = v.item_ids
    assert isinstance(ids, np.ndarray) and ids.dtype == object and v.item_ids is ids
    assert ids.tolist() == list(dict.fromkeys(df["item"])) and all(type(i) is str for i in ids)
    w = Votes([0, 1], [0, 0], item_ids=pa.chunked_array([["a"], ["b"]]), labels=LabelSet(["x"]))
    assert w.item_ids.tolist() == ["a", "b"] and w.select_items([1]).item_ids.tolist() == ["b"]


def test_an_item_error_is_reported_before_a_label_error():
    table = pa.table({"item": ["a", " "], "label": ["x", "zzz"]})
    with pytest.raises(VoteSchemaError, match=r"item id is empty at row 1") as info:
        votes_from_arrow(table, labels=["x"])
    assert info.value.__context__ is None or info.value.__suppress_context__
    with pytest.raises(VoteSchemaError, match=r"unknown label 'zzz' \(dictionary entry\)"):
        votes_from_arrow(pa.table({"item": ["a", "b"], "label": ["x", "zzz"]}), labels=["x"])


def test_plain_multi_chunk_tables_equal_one_chunk():
    df = _votes_frame(n_items=60)
    table = pa.Table.from_pandas(df, preserve_index=False)
    chunked = pa.Table.from_batches(table.to_batches(max_chunksize=17))
    assert chunked.column("item").num_chunks > 1
    assert votes_from_arrow(chunked).equals(votes_from_arrow(table))
    assert votes_from_arrow(table).equals(Votes.from_long(df))


@st.composite
def _dictionary_chunks(draw):
    """Chunks of a dictionary column: some share a dictionary, dictionaries may repeat values
    (within and across) and hold entries no row uses."""
    dictionaries = [pa.array(draw(st.lists(_TEXT, min_size=1, max_size=12)), pa.string())
                    for _ in range(draw(st.integers(1, 4)))]
    chunks = []
    for _ in range(draw(st.integers(1, 6))):
        d = dictionaries[draw(st.integers(0, len(dictionaries) - 1))]
        idx = draw(st.lists(st.integers(0, len(d) - 1), min_size=1, max_size=15))
        chunks.append(pa.DictionaryArray.from_arrays(pa.array(idx, pa.int32()), d))
    return chunks


def _coded_reference(chunks):
    order, keys = [], set()
    for c in chunks:
        key = c.dictionary.buffers()[2].address if c.dictionary.buffers()[2] else id(c.dictionary)
        if key not in keys:
            keys.add(key)
            order.extend(c.dictionary.to_pylist())
    rows = [v for c in chunks for v in c.to_pylist()]
    dictionary = [v for v in dict.fromkeys(order) if v in set(rows)]
    return [dictionary.index(v) for v in rows], dictionary


@settings(max_examples=60, deadline=None)
@given(_dictionary_chunks(), st.sampled_from([None, 0, 2]))
def test_column_coder_equals_first_seen_coding(chunks, collide):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(arrow, "_FP_MIN_VALUES", 1)  # the fingerprint path even on tiny columns
        if collide is not None:  # distinct strings share fingerprints (0: all of them)
            real = arrow._fingerprints
            mp.setattr(arrow, "_fingerprints", lambda o, d: real(o, d) % np.uint32(collide + 1))
        for mostly_distinct in (True, False):
            coder = arrow._ColumnCoder(sum(len(c) for c in chunks), mostly_distinct=mostly_distinct)
            for c in chunks:
                coder.add(pa.chunked_array([c]))
            dictionary, lookup, _ = coder.dictionary()
            codes = coder.map(lookup)
            assert (codes.tolist(), dictionary.to_pylist()) == _coded_reference(chunks)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.one_of(_TEXT, st.integers(-3, 3)), min_size=1, max_size=15),
                min_size=1, max_size=3), st.booleans())
def test_column_coder_of_encoded_columns_equals_first_seen_coding(columns, ints):
    """Columns added as their own dictionary encoding (the CSV path, ``encoded=True``): one
    is kept as coded (no re-coding, no map); several are merged like any dictionaries."""
    columns = [[v if isinstance(v, int) == ints else (len(v) if ints else str(v)) for v in c]
               for c in columns]
    encoded = [arrow._dictionary_encode(pa.chunked_array([c[:1], c[1:]],
                                                         pa.int64() if ints else pa.string()))
               for c in columns]
    rows = [str(v) for c in columns for v in c]
    reference, values = pd.factorize(pd.Series(rows, dtype=object))  # first-seen order
    for mostly_distinct in (True, False):
        coder = arrow._ColumnCoder(sum(len(c) for c in columns), mostly_distinct=mostly_distinct)
        for e in encoded:
            coder.add(e, encoded=True)
        dictionary, lookup, blank = coder.dictionary()
        codes = coder.map(lookup)
        assert (codes.tolist(), dictionary.to_pylist()) == (reference.tolist(), list(values))
        assert blank == (-1 if ints else _blank_reference(pa.array(dictionary.to_pylist(),
                                                                    pa.string())))


def test_a_file_not_grouped_by_item_reads_the_same(tmp_path, monkeypatch):
    # items in every row group: fingerprint ties are common and Arrow's hash takes over
    df = _votes_frame(n_items=400).sample(frac=1.0, random_state=3)
    df.to_csv(tmp_path / "v.csv", index=False)
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp_path / "v.parquet",
                   row_group_size=150)
    monkeypatch.setattr(arrow, "_FP_MIN_VALUES", 1)
    assert read_votes(tmp_path / "v.parquet").equals(read_votes(tmp_path / "v.csv"))


def test_parquet_with_a_gold_column_reads_as_the_csv(tmp_path):
    """The Arrow path codes an in-file gold column too (vectorised), equal to the CSV path."""
    import pandas as pd
    import pytest as _pytest

    from annokit.errors import DegenerateInputWarning, SchemaError
    from annokit.io import read_votes

    df = pd.DataFrame({"item": ["a", "a", "b", "b", "c"], "annotator": list("xyxyx"),
                       "label": ["p", "n", "n", "n", "p"], "gold": ["p", "p", None, "", "n"]})
    df.to_parquet(tmp_path / "v.parquet", index=False)
    df.to_csv(tmp_path / "v.csv", index=False)
    fast, slow = read_votes(tmp_path / "v.parquet"), read_votes(tmp_path / "v.csv")
    assert fast == slow and fast.gold.tolist() == [1, -1, 0]
    bad = df.assign(gold=["p", "n", None, None, "n"])
    bad.to_parquet(tmp_path / "clash.parquet", index=False)
    with _pytest.raises(SchemaError, match="item 'a' has 'p' and 'n'"):
        read_votes(tmp_path / "clash.parquet")
    df.assign(gold=["p", "p", "zzz", None, "n"]).to_parquet(tmp_path / "u.parquet", index=False)
    df.assign(gold=["p", "p", "zzz", None, "n"]).to_csv(tmp_path / "u.csv", index=False)
    for name in ("u.parquet", "u.csv"):  # gold never adds a label: 'zzz' is counted, coded -2
        with _pytest.warns(DegenerateInputWarning, match=rf"{name}, column 'gold': 1 item\(s\) "
                           r"have a gold label that is not among the votes' labels \['n', 'p'\]: "
                           r"'zzz' \(1 item\); their gold is left out of accuracy$"):
            unknown = read_votes(tmp_path / name)
        assert unknown.labels.names == ("n", "p") and unknown.gold.tolist() == [1, -2, 0]


@pytest.mark.parametrize("values", [
    [5], [3, 3, 1, 2, 1, -7], list(range(-50, 50)) * 3 + [49, -50],
    [0, 2**40, 7, 2**40],  # a range far wider than the column: Arrow's hash table
], ids=["one", "negative", "dense", "sparse"])
def test_integer_dictionary_encoding_equals_arrows(values):
    rng = np.random.default_rng(0)
    values = list(rng.permutation(values)) if len(values) > 10 else values
    column = pa.chunked_array([pa.array(values[:len(values) // 2], type=pa.int64()),
                               pa.array(values[len(values) // 2:], type=pa.int64())])
    ours, arrows = arrow._dictionary_encode(column), pc.dictionary_encode(column)
    assert ours.type == arrows.type
    assert ours.to_pylist() == arrows.to_pylist()
    assert (pa.concat_arrays([c.indices for c in ours.chunks]).to_pylist()
            == pa.concat_arrays([c.indices for c in arrows.chunks]).to_pylist())
    assert ours.chunks[0].dictionary.to_pylist() == arrows.chunks[-1].dictionary.to_pylist()
