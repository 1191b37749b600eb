"""Prediction readers and aligned records."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit.core.soft_labels import softmax
from annokit.core.votes import CHAOSNLI_NLI_LABELS, Votes
from annokit.errors import (
    AlignmentError,
    DataFormatError,
    DegenerateInputWarning,
    InvalidValueError,
    SchemaError,
    VoteSchemaError,
)
from annokit.io.predictions import Predictions, read_predictions
from annokit.metrics.records import AlignedRecords, agreement_bins, align

NLI = CHAOSNLI_NLI_LABELS


def _votes(ids=("a", "b", "c"), counts=((80, 20, 0), (10, 10, 80), (5, 60, 35))):
    return Votes.from_counts(np.array(counts), labels=NLI, item_ids=list(ids))


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# --------------------------------------------------------------------------- readers


def test_softmax_is_stable_and_normalised():
    p = softmax([[1000.0, 0.0, -1000.0], [1.0, 1.0, 1.0]])
    assert np.isfinite(p).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_allclose(p[1], 1 / 3)
    assert p[0, 0] == 1.0


def test_jsonl_probs_and_logits(tmp_path):
    f = _jsonl(tmp_path / "p.json", [{"uid": "a", "probs": [0.5, 0.25, 0.25], "logits": [1, 0, 0]},
                                     {"uid": "b", "probs": [0.1, 0.1, 0.8], "logits": [0, 0, 2]}])
    p = read_predictions(f)
    assert p.item_ids.tolist() == ["a", "b"]
    assert p.probs.tolist() == [[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]  # file probs kept
    assert p.logits.tolist() == [[1, 0, 0], [0, 0, 2]]
    assert p.where(1) == f"line 2 of {f}"


def test_jsonl_logits_only_applies_softmax(tmp_path):
    f = _jsonl(tmp_path / "p.jsonl", [{"id": 7, "logits": [0.0, np.log(3.0)]}])
    p = read_predictions(f)
    assert p.item_ids.tolist() == ["7"]
    np.testing.assert_allclose(p.probs, [[0.25, 0.75]])


def test_json_array_and_id_field_priority(tmp_path):
    f = tmp_path / "p.json"
    f.write_text(json.dumps([{"item": "x", "uid": "u", "probs": [1.0, 0.0]}]))
    assert read_predictions(f).item_ids.tolist() == ["x"]  # item before id before uid
    assert read_predictions(f, id_field="uid").item_ids.tolist() == ["u"]


def test_chaosnli_official_shape(tmp_path):
    f = tmp_path / "m.json"
    body = {"modelA": {"a": {"uid": "a", "logits": [0, 0, 0], "predicted_label": "e"},
                       "b": {"uid": "b", "logits": [5, 0, 0], "predicted_label": "e"}}}
    f.write_text(json.dumps(body))
    p = read_predictions(f)
    assert p.item_ids.tolist() == ["a", "b"]
    np.testing.assert_allclose(p.probs[0], 1 / 3)
    body["modelB"] = body["modelA"]
    f.write_text(json.dumps(body))
    with pytest.raises(DataFormatError, match=re.escape("holds predictions of 2 models "
                                                        "['modelA', 'modelB']; choose one with")):
        read_predictions(f)
    assert read_predictions(f, model="modelB").n_rows == 2
    with pytest.raises(DataFormatError, match=re.escape("no model 'C'; models are ['modelA', "
                                                        "'modelB']")):
        read_predictions(f, model="C")


def test_uid_keyed_dict_without_ids_inside(tmp_path):
    f = tmp_path / "k.json"
    f.write_text(json.dumps({"a": {"probs": [0.2, 0.8]}, "b": {"probs": [0.6, 0.4]}}))
    p = read_predictions(f)
    assert p.item_ids.tolist() == ["a", "b"]
    assert p.where(1) == f"entry 'b' of {f}"


def test_csv_json_list_column(tmp_path):
    f = tmp_path / "p.csv"
    pd.DataFrame({"item": ["a", "b"], "probs": ["[0.5, 0.5]", "[0.9, 0.1]"]}).to_csv(f, index=False)
    p = read_predictions(f)
    assert p.probs.tolist() == [[0.5, 0.5], [0.9, 0.1]] and p.label_names is None


def test_csv_per_class_columns_name_the_labels(tmp_path):
    f = tmp_path / "p.csv"
    pd.DataFrame({"id": ["a"], "prob_n": [0.2], "prob_e": [0.7], "prob_c": [0.1]}).to_csv(
        f, index=False)
    p = read_predictions(f)
    assert p.label_names == ("n", "e", "c")
    rec = align(_votes(ids=["a"], counts=[(1, 2, 3)]), p)  # no pred_labels needed
    np.testing.assert_allclose(rec.probs, [[0.7, 0.2, 0.1]])
    g = tmp_path / "q.tsv"
    pd.DataFrame({"uid": ["a"], "logit_e": [0.0], "logit_n": [0.0]}).to_csv(g, sep="\t",
                                                                            index=False)
    q = read_predictions(g)
    assert q.label_names == ("e", "n") and q.probs.tolist() == [[0.5, 0.5]]
    h = tmp_path / "r.csv"
    pd.DataFrame({"uid": ["a"], "yes": [0.3], "no": [0.7]}).to_csv(h, index=False)
    assert read_predictions(h).label_names == ("yes", "no")


def test_csv_non_numeric_class_column(tmp_path):
    f = tmp_path / "p.csv"
    pd.DataFrame({"uid": ["a", "b"], "yes": ["0.3", "x"], "no": [0.7, 0.5]}).to_csv(f, index=False)
    with pytest.raises(DataFormatError, match=re.escape(f"line 3 of {f}: column 'yes' is not "
                                                        "numeric (got 'x')")):
        read_predictions(f)


def test_parquet_list_and_columns(tmp_path):
    f = tmp_path / "p.parquet"
    pd.DataFrame({"uid": ["a", "b"], "probs": [[0.1, 0.9], [0.5, 0.5]]}).to_parquet(f)
    assert read_predictions(f).probs.tolist() == [[0.1, 0.9], [0.5, 0.5]]
    g = tmp_path / "q.parquet"
    pd.DataFrame({"uid": [1, 2], "p_yes": [0.1, 0.5], "p_no": [0.9, 0.5]}).to_parquet(g)
    q = read_predictions(g)
    assert q.item_ids.tolist() == ["1", "2"] and q.label_names == ("yes", "no")


def test_npy_structured_and_sidecar(tmp_path):
    arr = np.zeros(2, dtype=[("uid", "U8"), ("logits", "f8", (3,))])
    arr["uid"] = ["a", "b"]
    arr["logits"] = [[0, 0, 0], [1, 2, 3]]
    np.save(tmp_path / "s.npy", arr)
    p = read_predictions(tmp_path / "s.npy")
    np.testing.assert_allclose(p.probs, softmax([[0, 0, 0], [1, 2, 3]]))
    assert p.logits is not None
    np.save(tmp_path / "plain.npy", np.array([[0.2, 0.8], [1.0, 0.0]]))
    with pytest.raises(DataFormatError, match=re.escape("a plain 2-D array needs its item ids in "
                                                        f"{tmp_path / 'plain.ids.txt'}")):
        read_predictions(tmp_path / "plain.npy")
    (tmp_path / "plain.ids.txt").write_text("x\ny\n")
    q = read_predictions(tmp_path / "plain.npy")
    assert q.item_ids.tolist() == ["x", "y"] and q.probs.tolist() == [[0.2, 0.8], [1.0, 0.0]]
    (tmp_path / "plain.ids.txt").write_text("x\n")
    with pytest.raises(DataFormatError, match="has 1 ids but .* has 2 rows"):
        read_predictions(tmp_path / "plain.npy")


def test_npy_errors(tmp_path):
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(DataFormatError, match="cannot load without pickle"):
        read_predictions(tmp_path / "obj.npy")
    arr = np.zeros(1, dtype=[("uid", "U4"), ("score", "f8")])
    arr["uid"] = ["a"]
    np.save(tmp_path / "nofield.npy", arr)
    with pytest.raises(DataFormatError, match=re.escape("structured array has no probs or logits "
                                                        "field; got fields ['uid', 'score']")):
        read_predictions(tmp_path / "nofield.npy")
    np.save(tmp_path / "cube.npy", np.zeros((2, 2, 2)))
    with pytest.raises(DataFormatError, match=re.escape("got shape (2, 2, 2)")):
        read_predictions(tmp_path / "cube.npy")


# --------------------------------------------------------------------------- row validation


@pytest.mark.parametrize("row, message", [
    ({"uid": "b", "probs": [0.5, float("nan")]}, ("line 2 of {f} (item 'b'): probs has a NaN or "
                                                 "infinite value: [0.5, nan]")),
    ({"uid": "b", "probs": [1.2, -0.2]}, ("line 2 of {f} (item 'b'): probs has a negative value: "
                                         "[1.2, -0.2]")),
    ({"uid": "b", "probs": [0.5, 0.6]}, ("line 2 of {f} (item 'b'): probs sum to 1.1, not 1 within "
                                        "0.0001 (1 such row(s)); pass --renormalize")),
    ({"uid": "b", "probs": [0.5, 0.3, 0.2]}, "line 2 of {f}: probs has 3 values; earlier rows have 2"),
    ({"uid": "b", "probs": ["x", 1]}, "line 2 of {f}: probs is not a list of numbers; got ['x', 1]"),
    ({"uid": "b", "probs": [[0.5], [0.5]]}, "line 2 of {f}: probs is not a list of numbers"),
    ({"uid": "b"}, "line 2 of {f} (item 'b'): field 'probs' is missing"),
    ({"probs": [0.5, 0.5]}, "line 2 of {f}: id field 'uid' is missing"),
    ({"uid": None, "probs": [0.5, 0.5]}, "line 2 of {f}: item id is missing"),
    ({"uid": " ", "probs": [0.5, 0.5]}, "line 2 of {f}: item id is empty"),
    ({"uid": "a", "probs": [0.5, 0.5]}, "{f}: item id 'a' appears more than once (line 1, line 2)"),
], ids=["nan", "negative", "sum", "ragged", "non_numeric", "nested", "no_probs", "no_id",
        "null_id", "blank_id", "duplicate"])
def test_bad_rows_name_file_line_and_item(tmp_path, row, message):
    f = _jsonl(tmp_path / "p.jsonl", [{"uid": "a", "probs": [0.5, 0.5]}, row])
    with pytest.raises(DataFormatError, match=re.escape(message.format(f=f))):
        read_predictions(f)


def test_renormalize_opt_in(tmp_path):
    f = _jsonl(tmp_path / "p.jsonl", [{"uid": "a", "probs": [2.0, 2.0]}])
    assert read_predictions(f, renormalize=True).probs.tolist() == [[0.5, 0.5]]
    g = _jsonl(tmp_path / "z.jsonl", [{"uid": "a", "probs": [0.0, 0.0]}])
    with pytest.raises(DataFormatError, match=re.escape("probs sum to 0 and cannot be "
                                                        "renormalised")):
        read_predictions(g, renormalize=True)


def test_atol(tmp_path):
    f = _jsonl(tmp_path / "p.jsonl", [{"uid": "a", "probs": [0.5, 0.50005]}])
    assert read_predictions(f).n_rows == 1
    with pytest.raises(DataFormatError, match="not 1 within 1e-06"):
        read_predictions(f, atol=1e-6)


def test_nonfinite_logits(tmp_path):
    f = _jsonl(tmp_path / "p.jsonl", [{"uid": "a", "logits": [0.0, float("inf")]}])
    with pytest.raises(DataFormatError, match=re.escape("(item 'a'): logits has a NaN or "
                                                        "infinite value")):
        read_predictions(f)


def test_file_level_errors(tmp_path):
    with pytest.raises(DataFormatError, match="prediction file not found: .*nope.jsonl"):
        read_predictions(tmp_path / "nope.jsonl")
    (tmp_path / "p.txt").write_text("x")
    with pytest.raises(DataFormatError, match="unknown prediction file type"):
        read_predictions(tmp_path / "p.txt")
    (tmp_path / "bad.jsonl").write_text('{"uid": "a", "probs": [1, 0]}\n{oops\n')
    with pytest.raises(DataFormatError, match=re.escape(f"line 2 of {tmp_path / 'bad.jsonl'}: not "
                                                        "valid JSON")):
        read_predictions(tmp_path / "bad.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(DataFormatError, match="no prediction rows"):
        read_predictions(tmp_path / "empty.jsonl")
    (tmp_path / "empty.csv").write_text("uid,probs\n")
    with pytest.raises(DataFormatError, match="no prediction rows"):
        read_predictions(tmp_path / "empty.csv")
    (tmp_path / "arr.json").write_text("[1, 2]")
    with pytest.raises(DataFormatError, match="element 0 of .*: expected a JSON object; got int"):
        read_predictions(tmp_path / "arr.json")
    (tmp_path / "noid.jsonl").write_text('{"name": "a", "probs": [1, 0]}\n')
    with pytest.raises(DataFormatError, match=re.escape("no item id field (tried ['item', 'id', "
                                                        "'uid'] and the vote tables' item spellings, "
                                                        "e.g. item_id, Item ID); got fields "
                                                        "['name', 'probs']")):
        read_predictions(tmp_path / "noid.jsonl")
    with pytest.raises(DataFormatError, match=re.escape("id field 'key' not found; got fields "
                                                        "['name', 'probs']")):
        read_predictions(tmp_path / "noid.jsonl", id_field="key")
    (tmp_path / "noprob.jsonl").write_text('{"uid": "a", "score": 1}\n')
    with pytest.raises(DataFormatError, match="no probability field"):
        read_predictions(tmp_path / "noprob.jsonl")
    (tmp_path / "bin.csv").write_bytes(b"\xff\xfe\x00\x81\x00")
    with pytest.raises(DataFormatError, match=r"bin.csv: starts with a UTF-16 byte-order mark but is "
                                              r"not UTF-16 text"):
        read_predictions(tmp_path / "bin.csv")
    (tmp_path / "bad.parquet").write_text("not parquet")
    with pytest.raises(DataFormatError, match="not a readable Parquet file"):
        read_predictions(tmp_path / "bad.parquet")
    with pytest.raises(VoteSchemaError, match="needs at least one path"):
        read_predictions([])


def test_from_arrays_errors():
    with pytest.raises(VoteSchemaError, match="give probs or logits"):
        Predictions.from_arrays(["a"])
    with pytest.raises(DataFormatError, match=re.escape("probs must be 2-D; got shape (2,)")):
        Predictions.from_arrays(["a", "b"], probs=np.array([0.5, 0.5]))
    with pytest.raises(DataFormatError, match="probs could not be read as a matrix"):
        Predictions.from_arrays([], probs=[])
    with pytest.raises(DataFormatError, match="2 item ids but 1 probs rows"):
        Predictions.from_arrays(["a", "b"], probs=[[0.5, 0.5]])
    with pytest.raises(DataFormatError, match="probs need at least 2 classes; got 1"):
        Predictions.from_arrays(["a"], probs=[[1.0]])
    with pytest.raises(DataFormatError, match=re.escape("probs have shape (1, 2) but logits (1, 3)")):
        Predictions.from_arrays(["a"], probs=[[0.5, 0.5]], logits=[[0.0, 0.0, 0.0]])
    with pytest.raises(DataFormatError, match="1 label names for 2 columns"):
        Predictions.from_arrays(["a"], probs=[[0.5, 0.5]], label_names=["x"])


def test_several_files_concatenate_and_duplicates_name_both(tmp_path):
    a = _jsonl(tmp_path / "dev.jsonl", [{"uid": "a", "probs": [1, 0]}, {"uid": "b", "probs": [0, 1]}])
    b = _jsonl(tmp_path / "test.jsonl", [{"uid": "c", "probs": [0.5, 0.5]}])
    p = read_predictions([a, b])
    assert p.item_ids.tolist() == ["a", "b", "c"] and p.sources == (str(a), str(b))
    assert p.where(2) == f"line 1 of {b}"
    assert p.logits is None
    c = _jsonl(tmp_path / "again.jsonl", [{"uid": "x", "probs": [1, 0]}, {"uid": "b", "probs": [1, 0]}])
    with pytest.raises(DataFormatError, match=re.escape(f"item id 'b' appears in {a} (line 2) and "
                                                        f"{c} (line 2); 1 id(s) are duplicated")):
        read_predictions([a, c])
    d = _jsonl(tmp_path / "three.jsonl", [{"uid": "z", "probs": [1, 0, 0]}])
    with pytest.raises(DataFormatError, match=re.escape(f"disagree on the number of classes: {a}: 2, "
                                                        f"{d}: 3")):
        read_predictions([a, d])
    e = tmp_path / "named.csv"
    pd.DataFrame({"uid": ["q"], "yes": [0.5], "no": [0.5]}).to_csv(e, index=False)
    with pytest.raises(DataFormatError, match="name their classes differently"):
        read_predictions([a, e])


# --------------------------------------------------------------------------- align


def test_align_by_id_and_label_name():
    votes = _votes()
    preds = Predictions.from_arrays(["c", "zz", "a", "b"],
                                    probs=[[0.1, 0.3, 0.6], [1, 0, 0], [0.7, 0.2, 0.1],
                                           [0.2, 0.5, 0.3]])
    rec = align(votes, preds, pred_labels=["entailment", "c", "N"])
    assert rec.item_ids.tolist() == ["a", "b", "c"]
    # file columns [e, c, n] -> votes' [e, n, c]
    np.testing.assert_allclose(rec.probs, [[0.7, 0.1, 0.2], [0.2, 0.3, 0.5], [0.1, 0.6, 0.3]])
    np.testing.assert_allclose(rec.human[0], [0.8, 0.2, 0.0])
    assert rec.counts.dtype == np.int64 and rec.counts.sum(axis=1).tolist() == [100, 100, 100]
    assert rec.majority.labels.tolist() == [0, 2, 1]
    assert rec.n_unmatched_predictions == 1 and rec.n_dropped_items == 0
    assert rec.labels == NLI and len(rec) == 3
    assert "n_unmatched_predictions=1" in repr(rec)
    frame = rec.to_frame()
    assert list(frame.columns[:4]) == ["item", "prob_entailment", "prob_neutral",
                                      "prob_contradiction"]
    assert frame["majority"].tolist() == ["entailment", "contradiction", "neutral"]
    # a comma-separated string works too
    rec2 = align(votes, preds, pred_labels="e,c,n")
    np.testing.assert_array_equal(rec2.probs, rec.probs)


def test_align_logits_follow_the_permutation():
    preds = Predictions.from_arrays(["a"], logits=[[3.0, 1.0, 2.0]])
    rec = align(_votes(ids=["a"], counts=[(1, 1, 1)]), preds, pred_labels=["e", "c", "n"])
    assert rec.logits.tolist() == [[3.0, 2.0, 1.0]]


@pytest.mark.parametrize("labels, message", [
    (["e", "c", "x"], ("prediction labels ['e', 'c', 'x'] do not match the votes' labels "
                      "['entailment', 'neutral', 'contradiction'] (names or aliases ['entailment', "
                      "'neutral', 'contradiction', 'e', 'n', 'c']): unknown ['x']; missing "
                      "['neutral']")),
    (["e", "c", "c"], "named twice ['contradiction']; missing ['neutral']"),
    (["e", "c"], "pred_labels names 2 classes ['e', 'c'] but the predictions have 3 columns"),
], ids=["unknown", "repeated", "count"])
def test_align_mismatched_labels(labels, message):
    preds = Predictions.from_arrays(["a"], probs=[[0.2, 0.3, 0.5]])
    with pytest.raises(VoteSchemaError, match=re.escape(message)):
        align(_votes(ids=["a"], counts=[(1, 1, 1)]), preds, pred_labels=labels)


def test_align_label_set_size_mismatch():
    votes = Votes.from_counts([[1, 2]], labels=["yes", "no"], item_ids=["a"])
    preds = Predictions.from_arrays(["a"], probs=[[0.2, 0.3, 0.5]])
    with pytest.raises(VoteSchemaError, match=re.escape("unknown ['maybe']")):
        align(votes, preds, pred_labels=["yes", "no", "maybe"])


def test_align_needs_pred_labels():
    preds = Predictions.from_arrays(["a"], probs=[[0.2, 0.3, 0.5]])
    with pytest.raises(VoteSchemaError, match=re.escape(
            "the class order of the 3 prediction columns is not known: give pred_labels (CLI: "
            "--pred-labels), the class of each column in the file's column order, by label name "
            "or alias (entailment, neutral, contradiction, e, n, c)")):
        align(_votes(ids=["a"], counts=[(1, 1, 1)]), preds)


def _swapped(n=30):
    """Votes in [e, n, c] order and predictions whose file columns are [n, c, e]."""
    rng = np.random.default_rng(3)
    majority_label = rng.integers(0, 3, n)
    counts = np.eye(3, dtype=np.int64)[majority_label] * 5 + 1
    ids = [f"i{j}" for j in range(n)]
    votes = Votes.from_counts(counts, labels=NLI, item_ids=ids)
    probs = np.full((n, 3), 0.1)
    probs[np.arange(n), majority_label] = 0.8  # right in the votes' order ...
    return votes, Predictions.from_arrays(ids, probs=probs[:, [1, 2, 0]])  # ... written n, c, e


def test_align_hint_names_the_order_that_fits_the_majority():
    """The --pred-labels hint once gave the votes' order (e,n,c), the wrong one for a file
    in another order; it now names the order that agrees best with the human majority."""
    votes, preds = _swapped()
    with pytest.raises(VoteSchemaError, match=re.escape(
            "; the order that agrees best with the human majority is n,c,e (accuracy 1.000 on "
            "30 items without a tied majority)")):
        align(votes, preds)


def test_align_warns_below_chance_and_names_the_best_order():
    votes, preds = _swapped()
    with pytest.warns(DegenerateInputWarning, match=re.escape(
            "under the label order e,n,c the model's accuracy against the human majority is "
            "0.000, below chance (0.333) on 30 items without a tied majority; the order n,c,e "
            "would score 1.000: check pred_labels (CLI: --pred-labels)")):
        align(votes, preds, pred_labels="e,n,c")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rec = align(votes, preds, pred_labels="n,c,e")
    assert (rec.probs.argmax(axis=1) == rec.majority.labels).all()


def test_best_label_order_is_the_best_assignment():
    from itertools import permutations

    from annokit.metrics.records import best_label_order

    rng = np.random.default_rng(0)
    probs, maj = rng.dirichlet([1, 1, 1, 1], 50), rng.integers(0, 4, 50)
    order, acc, n = best_label_order(probs, maj, ["a", "b", "c", "d"])
    brute = max(np.mean(np.asarray(p)[probs.argmax(axis=1)] == maj)
                for p in permutations(range(4)))
    assert n == 50 and acc == pytest.approx(brute)
    assert sorted(order) == ["a", "b", "c", "d"]


def test_align_missing_items_error_then_drop():
    votes = _votes()
    preds = Predictions.from_arrays(["b", "q"], probs=[[0.2, 0.3, 0.5], [1, 0, 0]])
    with pytest.raises(VoteSchemaError, match=re.escape(
            "2 of 3 vote items have no prediction, e.g. ['a', 'c']; pass --on-missing drop to "
            "evaluate only the items with predictions (Python: on_missing='drop')")):
        align(votes, preds, pred_labels=["e", "n", "c"])
    with pytest.warns(DegenerateInputWarning, match=re.escape(
            "2 of 3 vote items have no prediction, e.g. ['a', 'c']; they are dropped and 1 items "
            "are kept")):
        rec = align(votes, preds, pred_labels=["e", "n", "c"], on_missing="drop")
    assert rec.item_ids.tolist() == ["b"] and rec.n_dropped_items == 2
    assert rec.dropped_item_ids.tolist() == ["a", "c"] and rec.n_unmatched_predictions == 1
    with pytest.raises(VoteSchemaError, match=re.escape("on_missing must be one of ['error', "
                                                        "'drop']; got 'skip'")):
        align(votes, preds, pred_labels=["e", "n", "c"], on_missing="skip")


def test_align_nothing_matches():
    preds = Predictions.from_arrays(["x"], probs=[[0.2, 0.3, 0.5]])
    with pytest.raises(VoteSchemaError, match=re.escape(
            "none of the 3 vote items has a prediction (vote item ids e.g. ['a', 'b', 'c']; "
            "prediction ids e.g. ['x']); check the id field")):
        align(_votes(), preds, pred_labels=["e", "n", "c"], on_missing="drop")


def test_align_reads_paths(tmp_path):
    f = _jsonl(tmp_path / "p.jsonl", [{"key": "a", "probs": [0.2, 0.3, 0.5]}])
    rec = align(_votes(ids=["a"], counts=[(1, 1, 1)]), f, pred_labels=["e", "n", "c"],
                id_field="key")
    assert rec.probs.tolist() == [[0.2, 0.3, 0.5]]


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 8), st.integers(2, 5), st.randoms(use_true_random=False))
def test_align_invariant_to_row_and_column_order(n, k, rnd):
    rng = np.random.default_rng(rnd.randint(0, 2**31))
    names = [f"l{j}" for j in range(k)]
    counts = rng.integers(0, 5, size=(n, k))
    counts[:, 0] += 1
    ids = [f"i{j}" for j in range(n)]
    votes = Votes.from_counts(counts, labels=names, item_ids=ids)
    probs = rng.dirichlet(np.ones(k), size=n)
    base = align(votes, Predictions.from_arrays(ids, probs=probs), pred_labels=names)
    rows, cols = rng.permutation(n), rng.permutation(k)
    shuffled = Predictions.from_arrays(np.array(ids)[rows], probs=probs[rows][:, cols])
    rec = align(votes, shuffled, pred_labels=[names[c] for c in cols])
    np.testing.assert_array_equal(rec.probs, base.probs)
    np.testing.assert_array_equal(rec.item_ids, base.item_ids)
    np.testing.assert_allclose(rec.human.sum(axis=1), 1.0)


def test_records_from_arrays_select_and_errors():
    rec = AlignedRecords.from_arrays([[0.7, 0.3], [0.2, 0.8], [0.5, 0.5]], [[3, 1], [0, 2], [1, 1]],
                                     labels=["yes", "no"], item_ids=["p", "q", "r"])
    sub = rec.select(np.array([False, True, True]))
    assert sub.item_ids.tolist() == ["q", "r"] and sub.majority.is_tied.tolist() == [False, True]
    assert rec.select([2, 0]).counts.tolist() == [[1, 1], [3, 1]]
    with pytest.raises(VoteSchemaError, match=re.escape("mask has shape (2,); expected (3,)")):
        rec.select(np.array([True, False]))
    with pytest.raises(VoteSchemaError, match=re.escape("new probs have shape (1, 2); expected "
                                                        "(3, 2)")):
        rec.with_probs(np.ones((1, 2)))
    with pytest.raises(VoteSchemaError, match=re.escape("probs shape (1, 2) differs from counts "
                                                        "shape (2, 2)")):
        AlignedRecords.from_arrays([[0.5, 0.5]], [[1, 1], [1, 1]])
    with pytest.raises(VoteSchemaError, match="probs contain NaN or infinite values"):
        AlignedRecords.from_arrays([[np.nan, 0.5]], [[1, 1]])
    with pytest.raises(VoteSchemaError, match=re.escape("counts shape (2, 2) differs from probs "
                                                        "(1, 2)")):
        AlignedRecords(item_ids=np.array(["a"], dtype=object), labels=rec.labels,
                       probs=np.ones((1, 2)) / 2, counts=np.ones((2, 2), dtype=np.int64),
                       human=np.ones((1, 2)) / 2, majority=rec.majority)
    with pytest.raises(VoteSchemaError, match=re.escape("logits shape (1, 3) differs from probs")):
        AlignedRecords.from_arrays([[0.5, 0.5]], [[1, 1]], logits=[[0.0, 0.0, 0.0]])
    with pytest.raises(VoteSchemaError, match=re.escape("2 item ids and 2 labels for probs of "
                                                        "shape (1, 2)")):
        AlignedRecords.from_arrays([[0.5, 0.5]], [[1, 1]], item_ids=["a", "b"])


# --------------------------------------------------------------------------- real data


def test_baan_files_align_with_chaosnli(shared_data):
    from annokit.io import read_votes

    votes = read_votes(shared_data("chaosnli", "chaosNLI_snli.jsonl"))
    d = shared_data("chaosnli_predictions_baan2022")
    files = [d / "SNLI_dev_roberta-base_0.json", d / "SNLI_test_roberta-base_0.json"]
    rec = align(votes, files, pred_labels=["e", "c", "n"])
    assert rec.n_items == 1514 and rec.n_unmatched_predictions == 4921 + 4921 - 1514
    # independent check: the raw rows permuted [0, 2, 1] (the source repository's loader)
    raw = {}
    for f in files:
        for line in f.read_text().splitlines():
            row = json.loads(line)
            raw[row["uid"]] = row["probs"]
    expected = np.array([raw[i] for i in rec.item_ids])[:, [0, 2, 1]]
    np.testing.assert_array_equal(rec.probs, expected)
    # labels from ChaosNLI's own label_dist order
    dist = {}
    for line in shared_data("chaosnli", "chaosNLI_snli.jsonl").read_text().splitlines():
        row = json.loads(line)
        dist[row["uid"]] = row["label_dist"]
    np.testing.assert_allclose(rec.human, np.array([dist[i] for i in rec.item_ids]))


def test_chaosnli_official_sample_file(shared_data):
    from annokit.io import read_votes

    votes = read_votes(shared_data("chaosnli", "chaosNLI_snli.jsonl"))
    path = shared_data("chaosnli_prediction_samples", "snli_random_baseline.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rec = align(votes, path, pred_labels=["e", "n", "c"])
    assert rec.n_items == 1514 and rec.n_unmatched_predictions == 0
    first = json.loads(path.read_text())["random_baseline"]["3515378674.jpg#2r1c"]
    pos = rec.item_ids.tolist().index("3515378674.jpg#2r1c")
    np.testing.assert_allclose(rec.probs[pos], first["predicted_probabilities"])


# --------------------------------------------------------------------------- agreement bins


def test_agreement_bins_quantiles_have_roughly_equal_counts_and_report_their_edges():
    h = np.random.default_rng(0).uniform(0, 1.58, 1000)
    edges, idx, method, notes = agreement_bins(h, 5)
    assert method == "quantile" and notes == []
    assert edges[0] == h.min() and edges[-1] == h.max() and edges.size == 6
    counts = np.bincount(idx, minlength=5)
    assert counts.max() - counts.min() <= 1
    assert np.all((h >= edges[idx]) & ((h < edges[idx + 1]) | (idx == 4)))


def test_agreement_bins_user_edges_and_the_last_bin_is_closed():
    edges, idx, method, _ = agreement_bins([0.0, 0.5, 1.0, 1.5], [0.0, 0.5, 1.5])
    assert method == "edges" and edges.tolist() == [0.0, 0.5, 1.5]
    assert idx.tolist() == [0, 1, 1, 1]


def test_agreement_bins_merge_repeated_quantiles_with_a_warning():
    h = np.r_[np.zeros(80), np.linspace(0.5, 1.5, 20)]
    with pytest.warns(DegenerateInputWarning, match="repeated entropy quantile"):
        edges, idx, _, notes = agreement_bins(h, 5)
    assert edges.size - 1 < 5 and notes and np.bincount(idx).min() > 0
    with pytest.warns(DegenerateInputWarning, match=re.escape(
            "every item has the same human entropy (0 nats): 3 bins requested, 1 formed")):
        edges, idx, _, _ = agreement_bins(np.zeros(4), 3)
    assert edges.tolist() == [0.0, 0.0] and idx.tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("bins, h, error, match", [
    (0, [0.1, 0.2], InvalidValueError, "bins must be a positive integer"),
    ([0.0, 0.0, 1.0], [0.1], InvalidValueError, "strictly increasing"),
    ([0.0], [0.1], InvalidValueError, "at least two finite numbers"),
    ([0.0, 0.5], [0.1, 0.9], InvalidValueError, r"leave out 1 item\(s\)"),
    (3, [], SchemaError, "non-empty 1-D"),
])
def test_agreement_bins_reject_bad_input(bins, h, error, match):
    with pytest.raises(error, match=match):
        agreement_bins(h, bins)


def test_pred_labels_that_contradict_the_files_class_names_are_refused(tmp_path):
    """--pred-labels does not silently override prob_<label> headers that say something else."""
    f = tmp_path / "p.csv"
    pd.DataFrame({"id": ["a"], "prob_n": [0.2], "prob_e": [0.7], "prob_c": [0.1]}).to_csv(
        f, index=False)
    votes = _votes(ids=["a"], counts=[(1, 2, 3)])
    with pytest.raises(AlignmentError, match=r"pred_labels \['e', 'n', 'c'\] contradict the class "
                                             r"names the predictions carry \['n', 'e', 'c'\]"):
        align(votes, f, pred_labels="e,n,c")
    same = align(votes, f, pred_labels=["neutral", "entailment", "contradiction"])  # aliases agree
    np.testing.assert_allclose(same.probs, [[0.7, 0.2, 0.1]])


def test_agreement_bins_do_not_depend_on_the_entropy_base(shared_data):
    """ChaosNLI-SNLI (Nie et al. 2020): the same equal-count bins in bits and in nats."""
    from annokit.core.soft_labels import distributions, entropy
    from annokit.io import read_votes
    from annokit.metrics.records import agreement_entropy

    probs = distributions(read_votes(shared_data("chaosnli", "chaosNLI_snli.jsonl")).counts())
    _, nats, _, _ = agreement_bins(agreement_entropy(probs), 5)
    _, bits, _, _ = agreement_bins(np.round(entropy(probs, base=2), 12), 5)
    assert np.bincount(nats).tolist() == np.bincount(bits).tolist() == [295, 311, 300, 300, 308]
