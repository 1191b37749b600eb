"""A DataFrame of predictions is read as a prediction file's table wherever a file is accepted:
``read_predictions``, ``align``, ``evaluate_files``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from annokit.core.votes import Votes
from annokit.errors import AlignmentError, DataFormatError, InvalidValueError
from annokit.io.predictions import read_predictions
from annokit.metrics.records import align


def _votes():
    return Votes.from_long(pd.DataFrame({"item": ["q", "q", "r", "r", "s"],
                                         "annotator": ["a", "b", "a", "b", "a"],
                                         "label": ["cat", "dog", "dog", "dog", "cat"]}))


def test_a_frame_with_an_item_column_and_one_column_per_label(tmp_path):
    frame = pd.DataFrame({"item": ["s", "q", "r"], "dog": [0.1, 0.6, 0.9],
                          "cat": [0.9, 0.4, 0.1]})
    frame.to_csv(tmp_path / "p.csv", index=False)
    from_file = align(_votes(), tmp_path / "p.csv")
    from_frame = align(_votes(), frame)
    assert from_frame.item_ids.tolist() == ["q", "r", "s"]
    np.testing.assert_array_equal(from_frame.probs, from_file.probs)
    np.testing.assert_array_equal(from_frame.probs, [[0.4, 0.6], [0.1, 0.9], [0.9, 0.1]])


def test_rows_rounded_by_a_spreadsheet_are_accepted_and_evaluated(tmp_path):
    """Four labels saved to 6 decimals (Excel's CSV UTF-8: BOM, CRLF) can sum to 0.999998:
    inside the reader's tolerance (1e-4), so the rows are divided by their sum, and the
    metrics' tighter simplex check then passes; rows already on the simplex are kept as read."""
    from annokit.metrics.engine import evaluate

    votes = Votes.from_long(pd.DataFrame({"item": ["q", "q", "r", "s"],
                                          "annotator": ["a", "b", "a", "a"],
                                          "label": ["w", "x", "y", "z"]}))
    text = ('\ufeffItem ID,w,x,y,z\r\nq,0.333333,0.333333,0.333332,0.000000\r\n'
            'r,0.100000,0.200000,0.300000,0.400000\r\ns,0.250000,0.250000,0.250000,0.250002\r\n')
    (tmp_path / "p.csv").write_bytes(text.encode("utf-8"))
    rec = align(votes, read_predictions(tmp_path / "p.csv", id_field="Item ID"))
    np.testing.assert_allclose(rec.probs.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(rec.probs[1], [0.1, 0.2, 0.3, 0.4])
    np.testing.assert_allclose(rec.probs[0], np.array([0.333333, 0.333333, 0.333332, 0.0])
                               / 0.999998, rtol=1e-15)
    assert np.isfinite(evaluate(rec, metrics=["jsd"], baselines=False).metrics["jsd"])


def test_an_item_index_and_integer_label_columns():
    votes = Votes.from_long(pd.DataFrame({"item": [1, 1, 2], "annotator": ["a", "b", "a"],
                                          "label": [0, 1, 1]}))
    counts = votes.counts(as_frame=True)  # index named item, columns 0 and 1
    probs = counts.div(counts.sum(axis=1), axis=0)
    rec = align(votes, probs)
    np.testing.assert_array_equal(rec.probs, [[0.5, 0.5], [0.0, 1.0]])


def test_a_probs_column_and_the_same_checks_as_files():
    frame = pd.DataFrame({"uid": ["q", "r", "s"], "probs": [[0.5, 0.5], [0.2, 0.8], [1, 0]]})
    assert read_predictions(frame).item_ids.tolist() == ["q", "r", "s"]
    bad = pd.DataFrame({"item": ["q", "r"], "cat": [0.5, 0.7], "dog": [0.5, 0.7]})
    with pytest.raises(DataFormatError, match=r"^row 1 of DataFrame \(item 'r'\): probs sum "
                                              r"to 1.4, not 1 within 0.0001"):
        read_predictions(bad)
    with pytest.raises(AlignmentError, match=r"^none of the 3 vote items has a prediction"):
        align(_votes(), pd.DataFrame({"item": ["x"], "cat": [0.5], "dog": [0.5]}))


@pytest.mark.parametrize(("value", "got"), [(np.zeros((2, 2)), "ndarray"),
                                             ({"q": [0.5, 0.5]}, "dict"),
                                             ([pd.DataFrame()], "a list holding DataFrame")])
def test_other_types_are_refused_naming_the_accepted_ones(value, got):
    with pytest.raises(InvalidValueError) as caught:
        align(_votes(), value)
    assert str(caught.value) == (
        "predictions: expected a path, a list of paths, a pandas DataFrame (an item column and "
        "one column per label, or probs/logits columns, as in a file) or annokit.io.Predictions; "
        f"got {got}")


def test_evaluate_files_takes_a_frame():
    from annokit import evaluate_files

    frame = pd.DataFrame({"item": ["q", "r", "s"], "cat": [0.5, 0.1, 0.9], "dog": [0.5, 0.9, 0.1]})
    run = evaluate_files(_votes(), frame)
    assert run.result.n_items == 3


def test_an_unnamed_index_of_ids_says_to_name_it():
    """Item ids kept as a DataFrame's unnamed index (``df.set_index(ids)`` without a name):
    the error says how to make them the ids."""
    frame = pd.DataFrame({"no": [0.2, 0.6], "yes": [0.8, 0.4]}, index=["a", "b"])
    with pytest.raises(DataFormatError, match=r"an index without a name: name the index to read "
                                              r"it as the item ids, or name the id column \(Python: "
                                              r"df.rename_axis\('item'\), id_field=\)"):
        read_predictions(frame)
    assert list(read_predictions(frame.rename_axis("item")).item_ids) == ["a", "b"]
