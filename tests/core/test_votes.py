"""The vote model: constructors, round trips, subsetting, chunked counts, errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit import CHAOSNLI_NLI_LABELS, LabelSet, Votes, VoteSchemaError
from annokit.core.labels import factorize_ids, factorize_values
from annokit.errors import AlignmentError, InvalidValueError, SchemaError
from annokit.io import VoteCounts, count_batches, from_hf, to_hf, votes_from_arrow


def long_df():
    return pd.DataFrame({
        "item": ["q1", "q1", "q2", "q2", "q3"],
        "annotator": ["a", "b", "a", "c", "b"],
        "label": ["yes", "no", "yes", "yes", "no"],
        "text": ["t1", "t1", "t2", "t2", "t3"],
    })


@st.composite
def vote_tables(draw):
    """Random long vote tables with unique (item, annotator) pairs."""
    n_items = draw(st.integers(1, 8))
    n_ann = draw(st.integers(1, 6))
    n_labels = draw(st.integers(1, 4))
    pairs = draw(st.lists(st.tuples(st.integers(0, n_items - 1), st.integers(0, n_ann - 1)),
                          min_size=1, max_size=40, unique=True))
    labels = draw(st.lists(st.integers(0, n_labels - 1), min_size=len(pairs), max_size=len(pairs)))
    return pd.DataFrame({
        "item": [f"i{p[0]}" for p in pairs],
        "annotator": [f"a{p[1]}" for p in pairs],
        "label": [f"L{x}" for x in labels],
    }), [f"L{j}" for j in range(n_labels)]


def test_from_long_codes_counts_and_metadata():
    v = Votes.from_long(long_df(), labels=["yes", "no"], item_columns=["text"])
    assert v.n_items == 3 and v.n_votes == 5 and v.n_annotators == 3
    assert v.counts().tolist() == [[1, 1], [2, 0], [0, 1]]
    assert v.item_metadata["text"].tolist() == ["t1", "t2", "t3"]
    assert v.votes_per_item().tolist() == [2, 2, 1]
    assert v.votes_per_annotator().tolist() == [2, 2, 1]
    assert v.annotator_label_counts().tolist() == [[2, 0], [0, 2], [1, 0]]
    assert "n_votes=5" in repr(v) and len(v) == 5


def test_item_columns_may_hold_lists_and_mixed_scalars_are_still_checked():
    df = long_df().assign(tags=[["a"], ["a"], ["b", "c"], ["b", "c"], []])
    v = Votes.from_long(df, labels=["yes", "no"], item_columns=["tags"])
    assert v.item_metadata["tags"].tolist() == [["a"], ["b", "c"], []]
    mixed = long_df().assign(code=["1", 1, 2, 2, 3])
    with pytest.raises(VoteSchemaError, match="column 'code' must be constant within an item"):
        Votes.from_long(mixed, item_columns=["code"])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(-10**12, 10**12), st.integers(0, 5), st.integers(0, 2)),
                min_size=1, max_size=30, unique_by=lambda t: t[:2]),
       st.sampled_from(["int64", "int32", "uint16"]))
def test_integer_id_columns_code_like_their_string_spelling(rows, dtype):
    df = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    if dtype != "int64":
        info = np.iinfo(dtype)
        df["item"] = df["item"].clip(info.min, info.max)
        df = df.drop_duplicates(["item", "annotator"])
    ints = df.astype({"item": dtype, "annotator": dtype, "label": dtype})
    as_str = df.astype({"item": str, "annotator": str, "label": str})
    a, b = Votes.from_long(ints), Votes.from_long(as_str)
    assert a.equals(b)
    assert all(type(x) is str for x in a.item_ids)


def test_label_order_is_natural_by_default():
    df = pd.DataFrame({"item": ["x"] * 3, "annotator": ["a", "b", "c"], "label": [10, 2, 1]})
    assert Votes.from_long(df).labels.names == ("1", "2", "10")


def test_aliases_encode_to_canonical_labels():
    df = pd.DataFrame({"item": ["x", "x", "y"], "label": ["e", "contradiction", "N"]})
    v = Votes.from_long(df, annotator=None, labels=CHAOSNLI_NLI_LABELS)
    assert v.counts().tolist() == [[1, 0, 1], [0, 1, 0]]
    assert not v.has_annotators and v.n_annotators is None


def test_from_wide_blank_cells_are_no_vote():
    wide = pd.DataFrame({"item": ["q1", "q2"], "ann1": ["yes", ""], "ann2": ["no", "no"],
                         "ann3": [None, "yes"]})
    v = Votes.from_wide(wide, labels=["yes", "no"])
    assert v.counts().tolist() == [[1, 1], [1, 1]]
    assert v.annotator_ids.tolist() == ["ann1", "ann2", "ann3"]


def test_round_trips_long_hf_counts_arrow():
    v = Votes.from_long(long_df(), labels=LabelSet(["yes", "no"], aliases={"y": "yes"}),
                        item_columns=["text"])
    assert Votes.from_long(v.to_long()).equals(v)
    assert from_hf(to_hf(v)).equals(v)
    table = pa.Table.from_pandas(long_df()[["item", "annotator", "label"]])
    va = votes_from_arrow(table, labels=["yes", "no"])
    np.testing.assert_array_equal(va.counts(), v.counts())
    vc = Votes.from_counts(v.counts(), labels=v.labels, item_ids=v.item_ids)
    np.testing.assert_array_equal(vc.counts(), v.counts())


def test_hf_round_trip_of_counts_only_chaosnli(shared_data):
    from annokit.io import read_chaosnli

    v = read_chaosnli(shared_data("chaosnli", "chaosNLI_snli.jsonl"))
    ds = to_hf(v)
    assert ds.features["labels"].feature.names == ["entailment", "neutral", "contradiction"]
    back = from_hf(ds)
    assert back.equals(v)
    assert back.labels.aliases == {"e": "entailment", "n": "neutral", "c": "contradiction"}


@settings(max_examples=60, deadline=None)
@given(vote_tables())
def test_counts_round_trip_through_every_constructor(table):
    df, names = table
    v = Votes.from_long(df, labels=names)
    counts = v.counts()
    assert counts.sum() == len(df)
    assert Votes.from_long(v.to_long()).equals(v)
    np.testing.assert_array_equal(Votes.from_counts(counts, labels=names,
                                                    item_ids=v.item_ids).counts(), counts)
    np.testing.assert_array_equal(
        votes_from_arrow(pa.Table.from_pandas(df), labels=names).counts(), counts)
    wide = df.pivot(index="item", columns="annotator", values="label").reindex(v.item_ids)
    wide = wide.reset_index()
    np.testing.assert_array_equal(Votes.from_wide(wide, labels=names).counts(), counts)
    total = count_batches(pa.Table.from_pandas(df).to_batches(max_chunksize=3), labels=names)
    order = pd.Index(total.item_ids).get_indexer(v.item_ids)
    np.testing.assert_array_equal(total.counts[order], counts)


def test_count_batches_merge_is_chunking_invariant():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"item": rng.integers(0, 50, 2000).astype(str),
                       "label": rng.choice(["a", "b", "c"], 2000)})
    table = pa.Table.from_pandas(df)
    one = count_batches(table, labels=["a", "b", "c"])
    many = count_batches(table.to_batches(max_chunksize=77), labels=["a", "b", "c"])
    np.testing.assert_array_equal(one.counts, many.counts)
    assert one.item_ids.tolist() == many.item_ids.tolist()
    assert one.to_votes().n_votes == 2000


def test_count_batches_rejects_blank_item_ids_like_read_votes():
    table = pa.table({"item": ["q1", "q2", "  ", "q1"], "label": ["a", "b", "a", "a"]})
    with pytest.raises(VoteSchemaError,
                       match=r"votes, batch 1: item id is empty at row 0 \(column 'item', got '  '\)"):
        count_batches(table.to_batches(max_chunksize=2), labels=["a", "b"])


def test_duplicates_policies():
    df = pd.DataFrame({"item": ["q", "q", "q"], "annotator": ["a", "a", "b"],
                       "label": ["x", "y", "y"]})
    with pytest.raises(VoteSchemaError, match=r"1 \(item, annotator\) pair\(s\) have more than one "
                       r"vote, e.g. \[\('q', 'a'\)\]"):
        Votes.from_long(df)
    first = Votes.from_long(df, duplicates="first")
    last = Votes.from_long(df, duplicates="last")
    keep = Votes.from_long(df, duplicates="keep")
    assert first.counts().tolist() == [[1, 1]] and first.n_duplicates_removed == 1
    assert last.counts().tolist() == [[0, 2]]
    assert keep.counts().tolist() == [[1, 2]]


def test_select_votes_and_items():
    v = Votes.from_long(long_df(), labels=["yes", "no"], item_columns=["text"])
    sub = v.select_votes(v.label_index == 0)
    assert sub.item_ids.tolist() == ["q1", "q2"]
    assert sub.item_metadata["text"].tolist() == ["t1", "t2"]
    picked = v.select_items([2, 0])
    assert picked.item_ids.tolist() == ["q3", "q1"]
    assert picked.counts().tolist() == [[0, 1], [1, 1]]
    assert v.select_items(np.array([True, False, True])).n_items == 2
    assert v.item_positions(["q2", "zz"]).tolist() == [1, -1]


def test_permutation_to_reorders_columns():
    labels = CHAOSNLI_NLI_LABELS
    perm = labels.permutation_to(["e", "c", "n"])
    probs_ecn = np.array([[0.7, 0.1, 0.2]])
    assert probs_ecn[:, perm].tolist() == [[0.7, 0.2, 0.1]]


ERRORS = [
    (lambda: LabelSet([]), "at least one label"),
    (lambda: LabelSet(["a", "a"]), r"unique; repeated: \['a'\]"),
    (lambda: LabelSet(["a"], aliases={"x": "b"}), "alias 'x' points to unknown label 'b'"),
    (lambda: LabelSet(["a", "b"], aliases={"a": "b"}), "alias 'a' is itself a label name"),
    (lambda: LabelSet(["a"]).index_of("z"), r"unknown label 'z'; expected one of \['a'\]"),
    (lambda: LabelSet(["a", "b"]).encode(["a", "q"]), "unknown label 'q' at row 1"),
    (lambda: LabelSet(["a", "b"]).encode(["a", ""]), "label is empty at row 1"),
    (lambda: LabelSet(["a", "b"]).encode(["a", None]), r"label is missing \(NaN/None\) at row 1"),
    (lambda: LabelSet(["a", "b"]).permutation_to(["a", "a"]), "does not name each of"),
    (lambda: Votes.from_long(long_df().drop(columns="label")),
     r"votes is missing column\(s\) \['label'\]"),
    (lambda: Votes.from_long(long_df().iloc[:0]), "votes has no votes"),
    (lambda: Votes.from_long([1, 2]), "expected a pandas DataFrame"),
    (lambda: Votes.from_long(long_df().assign(item=["q1", None, "q2", "q2", "q3"])),
     r"item id is missing \(NaN/None\) at row 1"),
    (lambda: Votes.from_long(long_df().assign(text=["t1", "X", "t2", "t2", "t3"]),
                             item_columns=["text"]),
     "column 'text' must be constant within an item; item 'q1' has 't1' and 'X'"),
    (lambda: Votes.from_long(long_df(), labels=["yes"]), "unknown label 'no' at row 1"),
    (lambda: Votes.from_counts([[1, 0], [0, 0]], labels=["a", "b"], item_ids=["x", "y"]),
     r"1 item\(s\) have zero votes, e.g. \['y'\]"),
    (lambda: Votes.from_counts([[1, -1]]), "negative count at item 0, label 1"),
    (lambda: Votes.from_counts([[1.5, 0]]), "whole vote counts"),
    (lambda: Votes.from_counts([[np.nan, 0]]), "non-finite value"),
    (lambda: Votes.from_counts([1, 2]), "must be 2-D"),
    (lambda: Votes.from_counts(np.zeros((2, 0))), "has no label columns"),
    (lambda: Votes.from_counts([["a"]]), "must be numeric"),
    (lambda: Votes.from_counts([[1, 1]], labels=["a"]), "1 labels for 2 columns"),
    (lambda: Votes.from_counts([[1, 1]], item_ids=["a", "b"]), "2 item ids for 1 rows"),
    (lambda: Votes.from_wide(pd.DataFrame({"item": ["a"], "x": [None]})),
     r"1 item\(s\) have zero votes"),
    (lambda: Votes.from_wide(pd.DataFrame({"id": ["a"]})), "missing column 'item'"),
    (lambda: Votes.from_wide(pd.DataFrame({"item": ["a"]})), "has no annotator columns"),
    (lambda: Votes.from_wide(pd.DataFrame({"item": ["a"], "x": ["1"]}), annotator_columns=["z"]),
     r"missing annotator column\(s\) \['z'\]"),
    (lambda: Votes.from_wide(pd.DataFrame({"item": ["a", "a"], "x": ["1", "2"]})),
     "each item must be on one row"),
    (lambda: Votes([0, 1], [0], item_ids=["a", "b"], labels=LabelSet(["x"])),
     "must be 1-D of equal length"),
    (lambda: Votes([0, 2], [0, 0], item_ids=["a", "b"], labels=LabelSet(["x"])),
     r"item_index has codes outside range\(2\)"),
    (lambda: Votes([0.5], [0], item_ids=["a"], labels=LabelSet(["x"])), "must be integers"),
    (lambda: Votes([0], [0], item_ids=["a"], labels=["x"]), "labels must be a LabelSet"),
    (lambda: Votes([0, 1], [0, 0], item_ids=["a", "a"], labels=LabelSet(["x"])),
     r"item ids must be unique; repeated \['a'\]"),
    (lambda: Votes([0], [0], item_ids=["a"], labels=LabelSet(["x"]), annotator_ids=["z"]),
     "annotator_ids given without annotator_index"),
    (lambda: Votes([0], [0], item_ids=["a"], labels=LabelSet(["x"]), annotator_index=[0, 1]),
     "annotator_index has shape"),
    (lambda: Votes([0], [0], item_ids=["a"], labels=LabelSet(["x"]),
                   item_metadata=pd.DataFrame({"t": [1, 2]})), "item_metadata has 2 rows for 1 items"),
    (lambda: Votes([0], [0], item_ids=["a"], labels=LabelSet(["x"]), gold=[0, 0]),
     r"gold must have one code per item, shape \(1,\); got \(2,\)"),
    (lambda: Votes([0], [0], item_ids=["a"], labels=LabelSet(["x"]), gold=[3]),
     r"gold codes must be -1 \(no gold\), -2 \(a gold label not among the labels\) or in "
     r"range\(1\)"),
    (lambda: Votes([0], [0], item_ids=["a", "b"], labels=LabelSet(["x"])),
     r"1 item\(s\) have zero votes, e.g. \['b'\]"),
    (lambda: Votes([0], [0], item_ids=["a"], labels=LabelSet(["x"]), duplicates="drop"),
     "duplicates must be one of"),
    (lambda: Votes.from_counts([[1]]).votes_per_annotator(), "needs annotator ids"),
    (lambda: Votes.from_counts([[1]]).select_votes([True, False]), "vote mask has shape"),
    (lambda: Votes.from_counts([[1]]).select_items(np.array([True, False])), "item mask has shape"),
    (lambda: Votes.from_counts([[1], [1]]).select_items([0, 5]), r"positions must be in range\(2\)"),
    (lambda: Votes.from_counts([[1], [1]]).select_items([0, 0]), "must not repeat"),
    (lambda: votes_from_arrow(pa.table({"item": ["a"]})), r"missing column\(s\) \['label'\]"),
    (lambda: votes_from_arrow(pa.table({"item": pa.array([], pa.string()),
                                        "label": pa.array([], pa.string())})), "has no votes"),
    (lambda: votes_from_arrow(pa.table({"item": ["a", None], "label": ["x", "y"]})),
     "item id is missing at row 1"),
    (lambda: votes_from_arrow(pa.table({"item": ["a"], "label": ["x"]}), labels=["y"]),
     "unknown label 'x'"),
    (lambda: count_batches(pa.table({"item": ["a"]}), labels=["x"]), "missing column 'label'"),
    (lambda: count_batches(pa.table({"item": ["a", None], "label": ["x", "x"]}), labels=["x"]),
     "column 'item' has missing values"),
    (lambda: count_batches([], labels=["x"]), "has no votes"),
    (lambda: VoteCounts(["a"], [[1]], LabelSet(["x"])).merge(VoteCounts(["a"], [[1]], LabelSet(["y"]))),
     "cannot merge counts over labels"),
    (lambda: from_hf(to_hf(Votes.from_counts([[1]])).remove_columns("labels")),
     "missing column 'labels'"),
]


@pytest.mark.parametrize("call, message", ERRORS, ids=[m[:40] for _, m in ERRORS])
def test_errors_name_what_and_where(call, message):
    with pytest.raises(VoteSchemaError, match=message):
        call()


def test_to_hf_rejects_metadata_that_clashes_with_reserved_columns():
    v = Votes.from_counts([[1, 0]], item_metadata=pd.DataFrame({"labels": ["oops"]}))
    with pytest.raises(VoteSchemaError, match=r"metadata column\(s\) \['labels'\] clash"):
        to_hf(v)


@pytest.mark.parametrize(("make", "error", "match"), [
    pytest.param(lambda: LabelSet([]), InvalidValueError, "a label set needs at least one label",
                 id="labels_empty_set"),
    pytest.param(lambda: LabelSet(["a"]).encode(["a", "b"]), InvalidValueError,
                 "unknown label 'b' at row 1", id="labels_unknown_label"),
    pytest.param(lambda: LabelSet(["a", "b"]).permutation_to(["a"]), AlignmentError,
                 "does not name each of", id="labels_permutation"),
    pytest.param(lambda: factorize_values(["a", None], what="label", where="x"), SchemaError,
                 "x: label is missing", id="labels_missing_value"),
    pytest.param(lambda: factorize_ids(["q"], what="item id", where="x", order=["p"]),
                 SchemaError, "item id 'q' at row 0 is not in the given ids", id="labels_ids"),
    pytest.param(lambda: Votes.from_long(pd.DataFrame({"item": ["a"]})), SchemaError,
                 r"is missing column\(s\) \['label'\]", id="frames_missing_column"),
    pytest.param(lambda: Votes.from_counts([[1, 0]], labels=["a"]), SchemaError,
                 "1 labels for 2 columns", id="votes_counts_shape"),
    pytest.param(lambda: Votes.from_counts([[1, 0]], labels=["a", "b"]).select_items([3]),
                 InvalidValueError, r"item positions must be in range\(1\)", id="votes_positions"),
])
def test_errors_have_their_specific_type(make, error, match):
    # each still is a VoteSchemaError (the old name of InputError) for old except clauses
    with pytest.raises(error, match=match) as info:
        make()
    assert isinstance(info.value, VoteSchemaError)


def test_value_equality_and_to_frame():
    """``Votes.from_long(v.to_long()) == v`` (value equality) and a plain long frame."""
    v = Votes.from_long(long_df(), labels=LabelSet(["yes", "no"], aliases={"y": "yes"}),
                        item_columns=["text"])
    assert Votes.from_long(v.to_long()) == v
    assert (Votes.from_long(v.to_long()) != v) is False
    assert v != v.select_items([0]) and v != "votes" and (v == "votes") is False
    with pytest.raises(TypeError, match="unhashable"):
        hash(v)
    frame = v.to_frame()
    assert list(frame.columns) == ["item", "annotator", "label"]
    assert all(frame[c].map(type).eq(str).all() for c in frame.columns)
    assert Votes.from_long(frame, labels=["yes", "no"]).counts().tolist() == v.counts().tolist()
    gold = Votes.from_counts([[1, 1], [2, 0]], labels=["no", "yes"], item_ids=["q", "r"],
                             gold=[1, -1])
    frame = gold.to_frame()
    assert frame[["item", "label"]].to_dict("list") == {"item": ["q", "q", "r", "r"],
                                                        "label": ["no", "yes", "no", "no"]}
    assert frame["gold"].tolist()[:2] == ["yes", "yes"] and frame["gold"].isna().tolist() == [
        False, False, True, True]
    assert gold.gold.tolist() == [1, -1] and not hasattr(gold, "gold_labels")  # one way to gold


# -- pandas in and out ----------------------------------------------------------------------

@pytest.mark.parametrize("columns", [("task", "worker", "answer"), ("question", "rater", "response"),
                                     ("item_id", "annotator_id", "label")])
def test_from_long_detects_the_columns_read_votes_detects(columns):
    df = pd.DataFrame(dict(zip(columns, [["q1", "q1", "q2"], ["a", "b", "a"], ["x", "y", "x"]],
                               strict=True)))
    votes = Votes.from_long(df)
    assert votes.n_annotators == 2 and votes.counts().tolist() == [[1, 1], [1, 0]]


def test_from_long_keeps_a_column_named_as_its_role_over_other_spellings():
    df = pd.DataFrame({"item": ["q"], "annotator": ["a"], "label": ["x"], "answer": ["y"]})
    assert Votes.from_long(df).labels.names == ("x",)
    with pytest.raises(SchemaError, match=r"columns \['task', 'question'\] could each be the item"):
        Votes.from_long(pd.DataFrame({"task": ["q"], "question": ["q"], "label": ["x"]}))


def test_repr_is_short_and_names_the_scale():
    df = pd.DataFrame({"item": ["q1", "q1"], "annotator": ["a", "b"], "label": ["yes", "no"]})
    assert repr(Votes.from_long(df)) == (
        "Votes(n_items=1, n_annotators=2, n_votes=2, labels=['no', 'yes'], scale='nominal')")
    slider = Votes.from_counts([[1] * 50], labels=[str(v) for v in range(50)])
    assert repr(slider.with_scale("interval")) == (
        "Votes(n_items=1, n_annotators=None, n_votes=50, labels=['0', '1', '2', '3', '4', '5', "
        "..., '49'] (50), scale='interval')")


def test_repeated_pairs_are_found_in_votes_not_grouped_by_item():
    df = pd.DataFrame({"item": ["q", "r", "q", "s", "r"], "annotator": ["a", "a", "b", "a", "a"],
                       "label": ["x", "y", "x", "x", "x"]})
    assert Votes.from_long(df, duplicates="keep").has_duplicate_pairs()
    assert not Votes.from_long(df.drop(index=4), duplicates="keep").has_duplicate_pairs()
    with pytest.raises(VoteSchemaError, match=r"1 \(item, annotator\) pair\(s\) have more than"):
        Votes.from_long(df)


def test_read_details_and_the_deprecated_per_reader_aliases():
    """A reader sets one ReadInfo; the former per-reader attributes read it (None otherwise)."""
    from annokit.core.votes import ReadInfo

    votes = Votes.from_long(pd.DataFrame({"item": ["q"], "annotator": ["a"], "label": ["x"]}))
    assert votes.read_details is None and votes.mturk_info is None
    votes.read_details = ReadInfo("mturk", {"excluded": {"Rejected": 1}})
    assert votes.mturk_info == {"excluded": {"Rejected": 1}} and votes.lewidi_info is None
    with pytest.raises(AttributeError):
        votes.mturk_info = {}
