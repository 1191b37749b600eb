"""The item id field of prediction files (annokit.io.predictions.find_id_field): found under
the spellings a vote table's item column has, so votes and predictions written by the same
spreadsheet or script read alike."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from annokit.cli import main
from annokit.errors import AnnokitWarning, DataFormatError
from annokit.io import read_votes
from annokit.io.predictions import find_id_field, read_predictions


@pytest.mark.parametrize(("fields", "found"), [
    (["item_id", "a", "b"], "item_id"),
    (["Item ID", "a", "b"], "Item ID"),
    (["ID", "a", "b"], "ID"),
    (["example_id", "a", "b"], "example_id"),
    (["example_id", "ID", "OOD"], "example_id"),  # classes in- and out-of-distribution
    (["item_id", "id", "a"], "id"),      # the exact names first: what read before reads the same
    (["uid", "item", "a"], "item"),
    (["a", "b"], None),
])
def test_id_field_spellings(fields, found):
    assert find_id_field(fields) == found


def test_spreadsheet_csv_with_item_id_header(tmp_path):
    """A spreadsheet's CSV (byte-order mark, CRLF, "Item ID", quoted label headers) reads with
    the same header as its votes."""
    path = tmp_path / "preds.csv"
    path.write_bytes('\ufeffItem ID,"yes","no"\r\n"a",0.25,0.75\r\n"b",0.6,0.4\r\n'.encode())
    pred = read_predictions(path)
    assert list(pred.item_ids) == ["a", "b"]
    assert np.allclose(pred.probs, [[0.25, 0.75], [0.6, 0.4]])


def test_jsonl_with_item_id_and_keyed_json_unchanged(tmp_path):
    (tmp_path / "p.jsonl").write_text('{"item_id": 7, "probs": [0.5, 0.5]}\n')
    assert list(read_predictions(tmp_path / "p.jsonl").item_ids) == ["7"]
    keyed = {"m": {"x": {"probs": [0.1, 0.9]}, "y": {"probs": [0.3, 0.7]}}}
    (tmp_path / "k.json").write_text(json.dumps(keyed))
    assert list(read_predictions(tmp_path / "k.json").item_ids) == ["x", "y"]


def test_cli_evaluate_votes_and_predictions_with_the_same_header(tmp_path):
    votes = tmp_path / "votes.csv"
    votes.write_text("Item ID,Worker,Answer\n" + "".join(
        f"i{i},w{j},{'yes' if (i + j) % 3 else 'no'}\n" for i in range(30) for j in range(4)))
    preds = tmp_path / "preds.csv"
    preds.write_text("Item ID,yes,no\n" + "".join(f"i{i},0.7,0.3\n" for i in range(30)))
    assert read_votes(votes).n_items == 30
    res = CliRunner().invoke(main, ["evaluate", "--votes", str(votes), "--predictions",
                                    str(preds), "--metrics", "accuracy", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["metrics"]["accuracy"] == pytest.approx(20 / 30)


def test_probabilities_keyed_by_class(tmp_path):
    """``{"probs": {class: p}}`` rows: the classes are named by the keys (in the first row's
    order; later rows may list them in any order), as prob_<class> columns name them."""
    (tmp_path / "p.jsonl").write_text('{"item": "a", "probs": {"no": 0.2, "yes": 0.8}}\n'
                                      '{"item": "b", "probs": {"yes": 0.4, "no": 0.6}}\n')
    pred = read_predictions(tmp_path / "p.jsonl")
    assert list(pred.label_names) == ["no", "yes"]
    assert np.allclose(pred.probs, [[0.2, 0.8], [0.6, 0.4]])


def test_hugging_face_pipeline_scores(tmp_path):
    """A text-classification pipeline's output with ``top_k=None`` (a list of
    ``{"label", "score"}`` objects per item), saved beside an id."""
    rows = [{"id": "a", "scores": [{"label": "POSITIVE", "score": 0.9},
                                   {"label": "NEGATIVE", "score": 0.1}]},
            {"id": "b", "scores": [{"label": "NEGATIVE", "score": 0.7},
                                   {"label": "POSITIVE", "score": 0.3}]}]
    (tmp_path / "hf.json").write_text(json.dumps(rows))
    pred = read_predictions(tmp_path / "hf.json")
    assert list(pred.label_names) == ["POSITIVE", "NEGATIVE"]
    assert np.allclose(pred.probs, [[0.9, 0.1], [0.3, 0.7]])


@pytest.mark.parametrize(("second", "message"), [
    ('{"no": 0.2, "maybe": 0.8}', "has classes ['maybe', 'no']; the first row maps the classes "
                                  "['no', 'yes'] to values, and every row must"),
    ('[0.2, 0.8]', "is a list; the first row maps the classes ['no', 'yes']"),
])
def test_keyed_rows_must_name_the_same_classes(tmp_path, second, message):
    (tmp_path / "p.jsonl").write_text('{"item": "a", "probs": {"no": 0.2, "yes": 0.8}}\n'
                                      f'{{"item": "b", "probs": {second}}}\n')
    with pytest.raises(DataFormatError, match=r"^line 2 of .*p\.jsonl \(item 'b'\): field "
                                              r"'probs' " + re.escape(message)):
        read_predictions(tmp_path / "p.jsonl")


def test_pandas_index_of_a_split_is_not_a_class(tmp_path):
    """``test_df.to_csv("preds.csv")`` after a split: the unnamed index column holds distinct
    row numbers out of order; it is dropped with a warning, not read as a class."""
    frame = pd.DataFrame({"item": ["a", "b", "c"], "no": [0.2, 0.5, 0.9], "yes": [0.8, 0.5, 0.1]},
                         index=[17, 3, 42])
    frame.to_csv(tmp_path / "p.csv")
    with pytest.warns(AnnokitWarning, match=r"^p\.csv: unnamed row-number column ignored$"):
        pred = read_predictions(tmp_path / "p.csv")
    assert list(pred.label_names) == ["no", "yes"]
    assert np.allclose(pred.probs[:, 1], [0.8, 0.5, 0.1])
    frame.index = [1.5, 2.0, 3.0]  # not whole numbers: a column like any other (a class here)
    frame.to_csv(tmp_path / "q.csv")
    with pytest.raises(DataFormatError, match="sum to"):
        read_predictions(tmp_path / "q.csv")


def test_a_directory_or_glob_of_prediction_shards(tmp_path):
    """Sharded predictions (part files of a Spark or batched inference job) read as one file,
    in the order votes' partitions are read; `--engine dask` reads the same directory."""
    shards = tmp_path / "preds"
    shards.mkdir()
    (shards / "part-00001.csv").write_text("item,no,yes\nc,0.5,0.5\n")
    (shards / "part-00000.csv").write_text("item,no,yes\na,0.2,0.8\nb,0.6,0.4\n")
    (shards / "_SUCCESS").write_text("")
    for given in (shards, str(shards / "part-*.csv"), [shards]):
        pred = read_predictions(given)
        assert list(pred.item_ids) == ["a", "b", "c"]
        assert np.allclose(pred.probs[:, 0], [0.2, 0.6, 0.5])
    with pytest.raises(DataFormatError, match="no file matches this pattern"):
        read_predictions(str(tmp_path / "none-*.csv"))


def test_a_label_named_twice_in_pipeline_scores(tmp_path):
    rows = [{"id": "a", "scores": [{"label": "x", "score": 0.5}, {"label": "x", "score": 0.5}]}]
    (tmp_path / "hf.json").write_text(json.dumps(rows))
    with pytest.raises(DataFormatError, match=r"field 'scores' names a label twice: \['x', 'x'\]"):
        read_predictions(tmp_path / "hf.json")


def test_keyed_logits_follow_the_keyed_probabilities_and_a_mix_is_refused(tmp_path):
    (tmp_path / "k.jsonl").write_text('{"item": "a", "probs": {"no": 0.3, "yes": 0.7}, '
                                      '"logits": {"yes": 2.0, "no": 1.0}}\n')
    pred = read_predictions(tmp_path / "k.jsonl")
    assert list(pred.label_names) == ["no", "yes"] and pred.logits.tolist() == [[1.0, 2.0]]
    (tmp_path / "m.jsonl").write_text('{"item": "a", "probs": {"no": 0.3, "yes": 0.7}, '
                                      '"logits": [1.0, 2.0]}\n')
    with pytest.raises(DataFormatError, match="must both be keyed by class or both be lists"):
        read_predictions(tmp_path / "m.jsonl")
