"""Label lists (annokit.io.lists): one JSON Lines row per item with a list of its labels.

The shared Pavlick & Kwiatkowski (2019) files are read in place; expected counts are computed
here from the JSON with plain Python.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from annokit.errors import DataFormatError, DegenerateInputWarning, InvalidValueError, SchemaError
from annokit.io import read_votes, sniff_format
from annokit.io.lists import looks_like_label_lists, read_label_lists


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("folder,name,n_items,n_votes", [
    ("sentence-pair-analysis", "preprocessed-data.jsonl", 496, 19360),
    ("context-analysis", "preprocessed-context-data.jsonl", 416, 15278)])
def test_pavlick2019_files_load_as_written(shared_data, folder, name, n_items, n_votes):
    path = shared_data("pavlick2019_nli_variation", folder, name)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    votes = read_votes(path)
    assert sniff_format(path) == "lists"
    assert votes.item_ids.tolist() == [r["id"] for r in rows]
    assert (votes.n_items, votes.n_votes) == (n_items, n_votes) == (
        len(rows), sum(len(r["labels"]) for r in rows))
    np.testing.assert_array_equal(votes.counts().sum(axis=1), [len(r["labels"]) for r in rows])
    assert votes.labels.scale == "interval"
    assert votes.labels.names == tuple(str(v) for v in range(-50, 51))
    # every value is a slider step plus a jitter below 1e-3: the vote is the nearest step
    first = rows[0]["labels"]
    expected = np.bincount(np.rint(first).astype(int) + 50, minlength=101)
    np.testing.assert_array_equal(votes.counts()[0], expected)
    assert votes.annotator_index is None and votes.n_annotators is None
    assert votes.item_metadata.loc[0, "task"] == rows[0]["task"]
    assert votes.read_info.startswith(
        f"{name}: label lists (JSON Lines, one row per item); item='id', labels='labels' (other "
        f"lists not read: ['normed-labels']); {n_items} items, {n_votes} votes (")
    assert votes.read_info.endswith(
        "interval scale, 101 distinct values from -50 to 50; values within 0.001 of whole "
        "numbers read as whole numbers (largest offset 0.0001); annotators unknown (no ids in "
        "the file): per-annotator scores are not available")


def test_numbers_without_jitter_are_kept_and_texts_are_nominal(tmp_path):
    votes = read_votes(_jsonl(tmp_path / "a.jsonl", [{"id": "x", "labels": [0.5, 1, 0.5]},
                                                     {"id": "y", "labels": [2.25]}]))
    assert votes.labels.names == ("0.5", "1", "2.25") and votes.labels.scale == "interval"
    assert "whole numbers" not in votes.read_info
    votes = read_votes(_jsonl(tmp_path / "b.jsonl", [{"uid": "1", "labels": ["e", "n", "e"]}]))
    assert votes.labels.names == ("e", "n") and votes.labels.scale == "nominal"
    assert votes.counts().tolist() == [[2, 1]]


def test_the_item_column_is_the_unique_one(tmp_path):
    rows = [{"task": "snli", "id": "a", "labels": [1]}, {"task": "snli", "id": "b", "labels": [2]}]
    assert read_votes(_jsonl(tmp_path / "a.jsonl", rows)).item_ids.tolist() == ["a", "b"]
    both = [{"item": "1", "id": "a", "labels": [1]}, {"item": "2", "id": "b", "labels": [2]}]
    with pytest.raises(SchemaError, match=r"^b.jsonl: fields \['item', 'id'\] could each be the "
                       r"item column; name one with --item-col \(Python: columns=\{'item': \.\.\.\}\)$"):
        read_votes(_jsonl(tmp_path / "b.jsonl", both))
    assert read_votes(tmp_path / "b.jsonl", columns={"item": "id"}).item_ids.tolist() == ["a", "b"]
    none = [{"task": "snli", "labels": [1]}, {"task": "snli", "labels": [2]}]
    with pytest.raises(SchemaError, match=r"^c.jsonl: no item column with one value per row; got "
                       r"fields \['task', 'labels'\] \(\['task'\] repeat values\); name it with "
                       r"--item-col"):
        read_label_lists(_jsonl(tmp_path / "c.jsonl", none))


def test_the_list_column(tmp_path):
    rows = [{"id": "a", "x": [1, 2], "y": [3]}]
    with pytest.raises(SchemaError, match=r"^a.jsonl: fields \['x', 'y'\] could each hold the "
                       r"labels; name one with --label-col \(Python: columns=\{'label': \.\.\.\}\)$"):
        read_votes(_jsonl(tmp_path / "a.jsonl", rows))
    votes = read_votes(tmp_path / "a.jsonl", columns={"label": "y"})
    assert votes.n_votes == 1 and "other lists not read: ['x']" in votes.read_info


@pytest.mark.parametrize("rows, message", [
    ([{"id": "a", "labels": [1, "x"]}], r"^line 1 of v.jsonl: 'labels' mixes numbers and texts \('x'\)"),
    ([{"id": "a", "labels": [1]}, {"id": "b", "labels": [1, [2]]}],
     r"^line 2 of v.jsonl: labels\[1\] is \[2\], not a number or a text$"),
    ([{"id": "a", "labels": [1]}, {"id": "b", "labels": 3}],
     r"^line 2 of v.jsonl: 'labels' is int, not a list$"),
])
def test_bad_lists_name_the_line(tmp_path, rows, message):
    with pytest.raises(DataFormatError, match=message):
        read_label_lists(_jsonl(tmp_path / "v.jsonl", rows))


def test_empty_lists_are_left_out_counted(tmp_path):
    rows = [{"id": "a", "labels": [1, 2]}, {"id": "b", "labels": []}]
    with pytest.warns(DegenerateInputWarning, match=r"v.jsonl: 1 item\(s\) with an empty 'labels' "
                      r"left out, e.g. \['b'\]"):
        votes = read_label_lists(_jsonl(tmp_path / "v.jsonl", rows))
    assert votes.item_ids.tolist() == ["a"] and votes.read_info.endswith(
        "; 1 item(s) with no labels left out")


def test_a_parallel_list_of_annotators(tmp_path):
    rows = [{"id": "a", "labels": ["x", "y"], "annotators": ["w1", "w2"]},
            {"id": "b", "labels": ["x", "x"], "annotators": ["w1", "w1"]}]
    path = _jsonl(tmp_path / "v.jsonl", rows)
    assert looks_like_label_lists(path)
    with pytest.raises(SchemaError, match=r"1 \(item, annotator\) pair\(s\) have more than one "
                                          r"vote, e.g. \[\('b', 'w1'\)\]; keep one vote"):
        read_votes(path)
    with pytest.warns(DegenerateInputWarning, match=r"v.jsonl: 1 repeated \(item, annotator\) "
                      r"pair\(s\); the first vote of each kept, 1 vote\(s\) left out"):
        votes = read_votes(path, duplicates="first")
    assert votes.annotator_ids.tolist() == ["w1", "w2"] and votes.n_votes == 3
    assert "annotators='annotators' (2 annotators)" in votes.read_info
    assert votes.read_info.endswith("repeated (item, annotator) pairs: 1, the first vote of each "
                                    "kept, 1 vote(s) left out (--duplicates first)")
    bad = _jsonl(tmp_path / "w.jsonl", [{"id": "a", "labels": [1, 2], "workers": ["w1"]}])
    with pytest.raises(DataFormatError, match=r"^line 1 of w.jsonl: 'workers' must list one "
                                              r"annotator id per label \(2 in 'labels'\); got \['w1'\]"):
        read_votes(bad)


def test_long_tables_with_a_list_are_not_label_lists(tmp_path):
    long = _jsonl(tmp_path / "l.jsonl", [{"item": "1", "annotator": "a", "label": "x", "tags": [1]}])
    assert not looks_like_label_lists(long) and sniff_format(long) == "long"
    scalar = _jsonl(tmp_path / "s.jsonl", [{"item": "1", "label": "x", "tags": [1]}])
    assert not looks_like_label_lists(scalar)
    with pytest.raises(InvalidValueError, match=r"^v.jsonl: no_header=True reads long CSV/TSV "
                       r"tables without a header line \(item, annotator, label\); this is read "
                       r"as lists$"):
        read_votes(_jsonl(tmp_path / "v.jsonl", [{"id": "a", "labels": [1]}]), no_header=True,
                   format="lists")
