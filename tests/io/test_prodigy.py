"""Prodigy db-out JSONL (annokit.io.prodigy), built from Prodigy's documented task format
(prodi.gy/docs/api-interfaces: answer accept/reject/ignore, choice options and accept, binary
label; _annotator_id/_session_id of named multi-user sessions)."""

from __future__ import annotations

import json

import pytest

from annokit.errors import DataFormatError, InvalidValueError
from annokit.io import read_votes
from annokit.io.prodigy import looks_like_prodigy, read_prodigy

OPTIONS = [{"id": "A"}, {"id": "B"}]


def _by_id(votes):
    return {str(i): dict(zip(votes.labels.names, map(int, row), strict=True))
            for i, row in zip(votes.item_ids, votes.counts(), strict=True)}


def _write(tmp_path, rows):
    path = tmp_path / "db-out.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_choice_example_hand_counted():
    votes = read_votes("docs/examples/prodigy_choice.jsonl")
    # sam ignored r2 and rejected r3: left out; kim's NEG on r1 is a vote
    assert _by_id(votes) == {"-1179465473": {"NEG": 1, "NEU": 0, "POS": 2},
                             "200462577": {"NEG": 1, "NEU": 0, "POS": 0},
                             "1530271440": {"NEG": 0, "NEU": 2, "POS": 0}}
    assert votes.prodigy_info["left_out"] == {"ignore": 1, "reject (choice)": 1}
    assert sorted(votes.annotator_ids) == ["sentiment-alex", "sentiment-kim", "sentiment-sam"]
    by_meta = read_votes("docs/examples/prodigy_choice.jsonl", columns={"item": "meta.id"})
    assert sorted(map(str, by_meta.item_ids)) == ["r1", "r2", "r3"]


def test_binary_example_hand_counted():
    votes = read_votes("docs/examples/prodigy_binary.jsonl")
    assert _by_id(votes) == {"88112233": {"accept": 2, "reject": 0},
                             "-40211876": {"accept": 0, "reject": 2},
                             "571029384": {"accept": 1, "reject": 0}}
    assert votes.read_info.endswith("label=answer (accept/reject) to label ['INSULT']; left out: "
                                    "ignore 1")


def test_binary_tasks_about_several_labels_are_several_items(tmp_path):
    rows = [{"_input_hash": 1, "label": lab, "answer": ans, "_session_id": s}
            for lab, ans, s in [("A", "accept", "x"), ("B", "reject", "x"), ("A", "accept", "y")]]
    votes = read_prodigy(_write(tmp_path, rows))
    assert _by_id(votes) == {"1:A": {"accept": 2, "reject": 0}, "1:B": {"accept": 0, "reject": 1}}
    assert votes.prodigy_info["annotator"] == "_session_id"


def test_multi_choice_answer_is_several_votes(tmp_path):
    rows = [{"_input_hash": 1, "options": OPTIONS, "accept": ["A", "B"], "answer": "accept",
             "_annotator_id": "d-x"},
            {"_input_hash": 1, "options": OPTIONS, "accept": [], "answer": "accept",
             "_annotator_id": "d-y"}]
    votes = read_prodigy(_write(tmp_path, rows))
    assert (votes.n_votes, votes.prodigy_info["multi_choice"]) == (2, 1)
    assert votes.prodigy_info["left_out"] == {"accepted without a choice": 1}


@pytest.mark.parametrize("row, match", [
    ({"_input_hash": 1, "options": OPTIONS, "accept": ["C"], "answer": "accept",
      "_annotator_id": "d-x"},
     r"^line 1 of db-out.jsonl, field accept: 'C' is not the id of one of the options "
     r"\['A', 'B'\]$"),
    ({"_input_hash": 1, "label": "A", "answer": "maybe", "_annotator_id": "d-x"},
     r"^line 1 of db-out.jsonl, field answer: 'maybe' is not accept, reject or ignore$"),
    ({"_input_hash": 1, "label": "A", "answer": "accept"},
     r"^line 1 of db-out.jsonl: no _annotator_id or _session_id"),
    ({"text": "x", "label": "A", "answer": "accept", "_annotator_id": "d-x"},
     r"^line 1 of db-out.jsonl: no item id in field '_input_hash' \(--item-col names another "
     r"field, e.g. meta.id\)$"),
    ({"_input_hash": 1, "spans": [], "answer": "accept", "_annotator_id": "d-x"},
     r"neither options \(a choice task\) nor label \(a binary task\)"),
])
def test_bad_tasks_name_line_and_field(tmp_path, row, match):
    with pytest.raises(DataFormatError, match=match):
        read_prodigy(_write(tmp_path, [row]))


def test_detection_and_label_col_refused(tmp_path):
    assert looks_like_prodigy({"answer": "accept", "_input_hash": 1})
    assert not looks_like_prodigy({"answer": "yes", "item": 1})
    path = _write(tmp_path, [{"_input_hash": 1, "label": "A", "answer": "accept",
                              "_annotator_id": "d-x"}])
    with pytest.raises(InvalidValueError, match="--label-col does not apply"):
        read_votes(path, columns={"label": "label"})
