"""``annokit.io.read_votes`` on a pandas DataFrame: columns detected as a file's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from annokit.core.votes import Votes
from annokit.errors import DataFormatError, DegenerateInputWarning, InvalidValueError, SchemaError
from annokit.io import read_votes


def crowd() -> pd.DataFrame:
    return pd.DataFrame({"task": ["q1", "q1", "q2", "q2"], "worker": ["w1", "w2", "w1", "w2"],
                         "answer": ["yes", "no", "yes", "yes"]})


def test_a_frame_reads_as_the_same_table_written_to_a_file(tmp_path):
    df = crowd()
    path = tmp_path / "crowd.csv"
    df.to_csv(path, index=False)
    from_frame, from_file = read_votes(df), read_votes(path)
    assert from_frame == from_file
    assert from_frame.read_info == ("DataFrame: long table; columns item='task', "
                                    "annotator='worker', label='answer'")


def test_votes_from_long_detects_the_same_columns():
    assert Votes.from_long(crowd()) == read_votes(crowd())
    assert Votes.from_long(crowd()).n_annotators == 2
    assert Votes.from_long(crowd(), annotator=None).n_annotators is None


def test_a_wide_frame_and_a_gold_column():
    wide = pd.DataFrame({"item": ["q1", "q2"], "ann1": ["yes", None], "ann2": ["no", "no"],
                         "gold": ["yes", "no"]})
    votes = read_votes(wide)
    assert votes.n_annotators == 2 and votes.counts().tolist() == [[1, 1], [1, 0]]
    assert votes.gold.tolist() == [1, 0] and votes.labels.names == ("no", "yes")
    assert votes.read_info == "DataFrame: wide table, 2 annotator columns; columns item='item', gold='gold'"
    long = crowd().assign(truth=["no", "no", "yes", "yes"])
    assert read_votes(long).gold.tolist() == [0, 1]


def test_frame_options_apply_as_to_files():
    df = crowd().assign(answer=["1", "1.0", "2", "NA"])
    with pytest.warns(DegenerateInputWarning, match=r"1 row\(s\) whose label is a missing value"):
        votes = read_votes(df, missing=["NA"], scale="interval")
    assert votes.labels.names == ("1", "2") and votes.counts().tolist() == [[2, 0], [0, 1]]
    named = read_votes(crowd().rename(columns={"answer": "choice"}), columns={"label": "choice"})
    assert named.n_votes == 4
    ints = pd.DataFrame({0: ["a", "a"], 1: ["x", "y"], 2: [1, 2]})
    assert read_votes(ints, columns={"item": "0", "annotator": "1", "label": "2"}).n_votes == 2


@pytest.mark.parametrize("call, error, match", [
    (lambda: read_votes(crowd(), format="chaosnli"), InvalidValueError,
     r"^a DataFrame is a long or wide table; format 'chaosnli' reads files"),
    (lambda: read_votes(crowd(), no_header=True), InvalidValueError,
     "^no_header applies to files; a DataFrame has its column names$"),
    (lambda: read_votes(pd.DataFrame({"x": [1], "y": [2]})), DataFormatError,
     r"^DataFrame: cannot tell the format from columns \['x', 'y'\]"),
    (lambda: read_votes(crowd().assign(label=1)), SchemaError,
     r"^DataFrame: columns \['label', 'answer'\] could each be the label column"),
    (lambda: read_votes(pd.DataFrame([[1, 2, 3]], columns=["item", "a", "a"])), SchemaError,
     r"^DataFrame: column names must be unique; repeated \['a'\]"),
    (lambda: read_votes(pd.DataFrame({"item": ["q"], "worker": ["w"]}), format="long"), SchemaError,
     r"^DataFrame: item \('item'\) and annotator \('worker'\) columns but no label column; got "
     r"\['item', 'worker'\]; name it with --label-col \(Python: columns=\{'label': \.\.\.\}\)$"),
    (lambda: read_votes(pd.DataFrame({"id2": ["q"], "a": ["x"]}), format="wide"), SchemaError,
     r"^DataFrame: no item column; got columns \['id2', 'a'\]"),
    (lambda: read_votes(pd.DataFrame({"item": ["q"], "a": ["x"]}), format="wide",
                        columns={"label": "a"}), InvalidValueError,
     r"^a wide table names its item and gold columns only; got roles \['label'\]"),
])
def test_frame_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_counts_and_distributions_as_frames():
    votes = read_votes(crowd())
    counts = votes.counts(as_frame=True)
    assert counts.index.name == "item" and counts.columns.name == "label"
    assert counts.loc["q1"].to_dict() == {"no": 1, "yes": 1}
    assert np.array_equal(counts.to_numpy(), votes.counts())
    soft = votes.distributions(as_frame=True)
    assert soft.loc["q2", "yes"] == 1.0 and np.allclose(soft.sum(axis=1), 1.0)
    assert soft.idxmax(axis=1).to_dict() == {"q1": "no", "q2": "yes"}


def test_a_frame_is_told_long_or_wide_like_a_file():
    frame = pd.DataFrame({"item": ["q1", "q1", "q2"], "annotator": ["a", "b", "a"],
                          "category": ["x", "y", "x"]})
    votes = read_votes(frame)
    assert votes.read_info == ("DataFrame: long table; columns item='item', annotator='annotator', "
                               "label='category' (label: the one column besides item and annotator)")
    assert read_votes(pd.DataFrame({"item": ["q"], "who": ["w"]}), format="long").n_votes == 1
