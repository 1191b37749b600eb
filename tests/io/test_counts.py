"""Count matrices, per-label count tables and soft labels as inputs (annokit.io.counts)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from annokit.core.soft_votes import SoftLabels
from annokit.core.votes import Votes
from annokit.errors import DataFormatError, InputError, InvalidValueError, SchemaError
from annokit.io import read_votes
from annokit.io.counts import is_count_table

CIFAR_LABELS = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
                "truck"]


def cifar_like(n_items: int = 10_000, seed: int = 0) -> np.ndarray:
    """Synthetic counts shaped like CIFAR-10H: 47-63 votes per item over 10 labels, seeded."""
    rng = np.random.default_rng(seed)
    n = rng.integers(47, 64, size=n_items)
    p = rng.dirichlet(np.full(10, 0.1), size=n_items)
    return rng.multinomial(n, p)


def test_counts_npy_reads_as_from_counts_with_row_ids(tmp_path):
    counts = cifar_like(2_000)
    np.save(tmp_path / "c.npy", counts)
    votes = read_votes(tmp_path / "c.npy", labels=CIFAR_LABELS)
    assert votes.equals(Votes.from_counts(counts, labels=CIFAR_LABELS))
    assert np.array_equal(votes.counts(), counts)
    assert votes.item_ids[:3].tolist() == ["0", "1", "2"] and votes.annotator_index is None
    assert votes.read_info == ("c.npy: counts array (2000 items x 10 labels); item ids: the row "
                               "positions 0-1999 (0-based; --item-ids names them); labels from "
                               "--labels")
    assert votes.input_kind == "counts" and votes.row_ids


def test_counts_without_labels_are_named_by_column(tmp_path):
    np.save(tmp_path / "c.npy", np.array([[1, 0], [2, 3]], dtype=np.float32))  # whole floats
    votes = read_votes(tmp_path / "c.npy", format="counts")
    assert list(votes.labels.names) == ["0", "1"] and votes.n_votes == 6
    assert votes.read_info.endswith("labels: the column positions 0-1 (--labels names them)")


def test_npz_keys_counts_labels_item_ids(tmp_path):
    counts = np.array([[2, 1], [0, 3]])
    np.savez(tmp_path / "c.npz", counts=counts, labels=np.array(["yes", "no"]),
             item_ids=np.array(["q1", "q2"]))
    votes = read_votes(tmp_path / "c.npz")
    assert list(votes.labels.names) == ["yes", "no"] and votes.item_ids.tolist() == ["q1", "q2"]
    assert "item ids from the file's 'item_ids' array" in votes.read_info
    assert not votes.row_ids
    np.savez(tmp_path / "one.npz", whatever=counts)  # one array: read whatever its key
    assert read_votes(tmp_path / "one.npz").n_votes == 6


@pytest.mark.parametrize("kind", ["txt", "npy"])
def test_item_ids_file(tmp_path, kind):
    np.save(tmp_path / "c.npy", np.array([[1, 0], [0, 1]]))
    ids = tmp_path / f"ids.{kind}"
    if kind == "txt":
        ids.write_text("img-a\nimg-b\n")
    else:
        np.save(ids, np.array(["img-a", "img-b"]))
    votes = read_votes(tmp_path / "c.npy", item_ids=ids)
    assert votes.item_ids.tolist() == ["img-a", "img-b"]
    assert f"item ids from ids.{kind}" in votes.read_info and not votes.row_ids


@pytest.mark.parametrize("array, message", [
    (np.array([[1, -2]]), "c.npy, row 0, column 1: negative count -2; counts are whole numbers >= 0"),
    (np.array([[1.0, 0.5]]), "c.npy, row 0, column 1: 0.5 is not a whole count; probabilities "
                             "are read with --format soft"),
    (np.array([[1.0, np.nan]]), "c.npy, row 0, column 1: nan is not a count; counts are whole "
                                "numbers >= 0"),
    (np.array([1, 2, 3]), "c.npy: 1-D array of shape (3,); --format counts reads a 2-D array of "
                          "shape (items, labels)"),
    (np.zeros((2, 2, 2)), "c.npy: 3-D array of shape (2, 2, 2); --format counts reads a 2-D "
                          "array of shape (items, labels)"),
    (np.zeros((0, 3)), "c.npy: empty array of shape (0, 3); it needs one row per item and one "
                       "column per label"),
    (np.array([[1, 0], [0, 0]]), "c.npy, row 1: no votes (all counts 0; 1 such row(s)); every "
                                 "item needs a vote"),
])
def test_bad_count_arrays(tmp_path, array, message):
    np.save(tmp_path / "c.npy", array)
    with pytest.raises(DataFormatError, match=re.escape(message)):
        read_votes(tmp_path / "c.npy")


def test_label_names_must_match_columns(tmp_path):
    np.save(tmp_path / "c.npy", np.array([[1, 0, 2]]))
    with pytest.raises(SchemaError, match=re.escape(
            "c.npy: --labels names 2 labels for 3 columns; give one name per column, in column "
            "order")):
        read_votes(tmp_path / "c.npy", labels=["a", "b"])
    np.savez(tmp_path / "c.npz", counts=np.array([[1, 0, 2]]), labels=np.array(["a"]))
    with pytest.raises(SchemaError, match=re.escape(
            "c.npz: the array 'labels' holds 1 names for 3 columns")):
        read_votes(tmp_path / "c.npz")


def test_npz_refusals(tmp_path):
    np.savez(tmp_path / "c.npz", a=np.ones((2, 2)), b=np.ones((2, 2)))
    with pytest.raises(DataFormatError, match=re.escape(
            "c.npz: no array 'counts' among the keys ['a', 'b']")):
        read_votes(tmp_path / "c.npz")
    np.savez(tmp_path / "d.npz", counts=np.ones((2, 2)), weights=np.ones(2))
    with pytest.raises(DataFormatError, match=re.escape("d.npz: unknown array(s) ['weights']")):
        read_votes(tmp_path / "d.npz")


def test_item_ids_refusals(tmp_path):
    np.save(tmp_path / "c.npy", np.array([[1, 0], [0, 1]]))
    (tmp_path / "ids.txt").write_text("a\n")
    with pytest.raises(SchemaError, match=re.escape(
            "ids.txt (--item-ids) holds 1 item ids for the 2 rows of c.npy")):
        read_votes(tmp_path / "c.npy", item_ids=tmp_path / "ids.txt")
    (tmp_path / "ids.txt").write_text("a\na\n")
    with pytest.raises(DataFormatError, match=re.escape(
            "ids.txt (--item-ids): repeated item ids, e.g. ['a']")):
        read_votes(tmp_path / "c.npy", item_ids=tmp_path / "ids.txt")
    (tmp_path / "v.csv").write_text("item,annotator,label\nq,a,x\n")
    with pytest.raises(InvalidValueError, match=re.escape(
            "v.csv: item_ids= names the rows of a count or probability array (.npy/.npz); this "
            "input has its own item column")):
        read_votes(tmp_path / "v.csv", item_ids=tmp_path / "ids.txt")


def test_array_refuses_vote_table_options(tmp_path):
    np.save(tmp_path / "c.npy", np.array([[1, 0]]))
    with pytest.raises(InvalidValueError, match=re.escape(
            "c.npy: duplicates= applies to votes with annotator ids; this is read as a NumPy "
            "array of counts")):
        read_votes(tmp_path / "c.npy", duplicates="first")
    with pytest.raises(DataFormatError, match=re.escape(
            "c.npy is a NumPy array: read it with format='counts' (vote counts) or format='soft' "
            "(probabilities), not long")):
        read_votes(tmp_path / "c.npy", format="long")


# -- tables with one count column per label ------------------------------------------------

def test_count_table_detected_from_declared_labels_never_wide(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("id,cat,dog\nx1,3,0\nx2,1,2\n")
    votes = read_votes(path, labels=["dog", "cat"])
    assert votes.annotator_index is None and list(votes.labels.names) == ["dog", "cat"]
    assert votes.counts().tolist() == [[0, 3], [2, 1]]
    assert votes.read_info == ("t.csv: counts table (csv); item='id', one column per label; "
                               "labels from --labels (one count column per label: the columns "
                               "besides the item are the --labels)")
    wide = read_votes(path)  # without declared labels: a wide table of annotators, as before
    assert wide.n_annotators == 2
    with pytest.raises(SchemaError, match=re.escape(
            "t.csv: the columns besides 'id' are the labels given with --labels: a table of "
            "counts per label, not of annotators; read it with --format counts")):
        read_votes(path, format="wide", labels=["cat", "dog"])


def test_count_table_parquet_and_explicit_format(tmp_path):
    pd.DataFrame({"item": ["a", "b"], "x": [2, 0], "y": [1, 4]}).to_parquet(tmp_path / "t.parquet")
    votes = read_votes(tmp_path / "t.parquet", format="counts")
    assert list(votes.labels.names) == ["x", "y"] and votes.counts().tolist() == [[2, 1], [0, 4]]
    assert "labels: the column names" in votes.read_info


@pytest.mark.parametrize("row, message", [
    ("x2,1.5,2", "line 3 of t.csv, column 'cat': 1.5 is not a whole count; probabilities are "
                 "read with --format soft"),
    ("x2,-1,2", "line 3 of t.csv, column 'cat': negative count -1; counts are whole numbers >= 0"),
    ("x2,many,2", "line 3 of t.csv, column 'cat': 'many' is not a count"),
])
def test_count_table_bad_cells(tmp_path, row, message):
    path = tmp_path / "t.csv"
    path.write_text(f"id,cat,dog\nx1,3,0\n{row}\n")
    with pytest.raises(DataFormatError, match=re.escape(message)):
        read_votes(path, format="counts")


def test_count_table_labels_differ(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("id,cat,dog\nx1,3,0\n")
    with pytest.raises(SchemaError, match=re.escape(
            "t.csv: the counts columns ['cat', 'dog'] are not the labels given with --labels "
            "cat,bird; give one column per label")):
        read_votes(path, format="counts", labels=["cat", "bird"])


def test_count_table_empty(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("id,cat,dog\n")
    with pytest.raises(DataFormatError, match=re.escape(
            "t.csv: no rows; a counts table holds one row per item")):
        read_votes(path, format="counts")


def test_is_count_table():
    assert is_count_table(["item", "b", "a"], ["a", "b"], item="item")
    assert not is_count_table(["item", "a", "c"], ["a", "b"], item="item")
    assert not is_count_table(["item", "a", "b"], None, item="item")


# -- soft labels -----------------------------------------------------------------------------

def test_soft_with_annotator_numbers_reconstructs_counts(tmp_path):
    counts = cifar_like(500)
    n = counts.sum(axis=1)
    np.savez(tmp_path / "p.npz", probs=counts / n[:, None], n_annotators=n)
    votes = read_votes(tmp_path / "p.npz", format="soft")
    assert np.array_equal(votes.counts(), counts)
    assert votes.input_kind == "soft labels"
    assert votes.read_info.startswith(
        "p.npz: soft labels array (500 items x 10 labels); counts reconstructed as n_annotators "
        "x p (whole numbers within 1e-09; rows sum to 1 within 1e-06)")


def test_soft_without_whole_counts_keeps_distributions(tmp_path):
    probs = np.array([[0.5, 0.5], [0.3, 0.7]])
    np.savez(tmp_path / "p.npz", probs=probs, n_annotators=np.array([2, 3]))
    soft = read_votes(tmp_path / "p.npz", format="soft")
    assert isinstance(soft, SoftLabels) and soft.input_kind == "soft labels"
    assert np.array_equal(soft.distributions(), probs)
    assert ("soft labels only (no votes): distributions kept (n_annotators x p is not a whole "
            "number at p.npz, row 1, column 0 (0.8999999999999999); rows sum to 1 within "
            "1e-06), what needs votes is refused") in soft.read_info
    np.save(tmp_path / "q.npy", probs)
    assert "(the number of annotators is not given;" in read_votes(
        tmp_path / "q.npy", format="soft").read_info
    with pytest.raises(InputError, match=re.escape(
            "q.npy has soft labels only (no votes): vote counts needs votes; give the "
            "per-annotator votes or counts")):
        read_votes(tmp_path / "q.npy", format="soft").counts()


def test_soft_refusals(tmp_path):
    np.save(tmp_path / "q.npy", np.array([[0.5, 0.6]]))
    with pytest.raises(DataFormatError, match=re.escape(
            "q.npy, row 0: the probabilities sum to 1.1, not 1 (tolerance 1e-06); counts are "
            "read with --format counts")):
        read_votes(tmp_path / "q.npy", format="soft")
    np.save(tmp_path / "r.npy", np.array([[1.5, -0.5]]))
    with pytest.raises(DataFormatError, match=re.escape(
            "r.npy, row 0, column 0: 1.5 is not a probability (0 to 1)")):
        read_votes(tmp_path / "r.npy", format="soft")


def test_soft_table_with_annotator_column(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("item,pos,neg,n_annotators\na,0.25,0.75,4\nb,1,0,3\n")
    votes = read_votes(path, format="soft")
    assert list(votes.labels.names) == ["pos", "neg"]
    assert votes.counts().tolist() == [[1, 3], [3, 0]]
