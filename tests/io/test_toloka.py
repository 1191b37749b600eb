"""Toloka results TSV (annokit.io.toloka), built from Toloka's documented columns
(toloka.ai/docs/guide/result-of-eval: INPUT:, OUTPUT:, GOLDEN:, HINT:text, ASSIGNMENT:*)."""

from __future__ import annotations

import pytest

from annokit.errors import SchemaError
from annokit.io import read_votes
from annokit.io.toloka import looks_like_toloka, read_toloka

EXAMPLE = "docs/examples/toloka_assignments.tsv"
HEAD = "INPUT:id\tOUTPUT:label\tGOLDEN:label\tASSIGNMENT:worker_id\tASSIGNMENT:status\n"


def _by_id(votes):
    return {str(i): dict(zip(votes.labels.names, map(int, row), strict=True))
            for i, row in zip(votes.item_ids, votes.counts(), strict=True)}


def _write(tmp_path, text):
    path = tmp_path / "assignments.tsv"
    path.write_text(text)
    return path


def test_example_hand_counted():
    votes = read_votes(EXAMPLE)
    # w3's REJECTED suite (t2, t3) and the training task t0 are out; w2's blank t3 is out
    assert _by_id(votes) == {"t1": {"neg": 1, "neu": 0, "pos": 2},
                             "t2": {"neg": 2, "neu": 0, "pos": 0},
                             "t3": {"neg": 0, "neu": 1, "pos": 0},
                             "t4": {"neg": 1, "neu": 0, "pos": 2}}
    info = votes.toloka_info
    assert (info["excluded"], info["training"], info["blank"], info["control_items"]) == (
        {"REJECTED": 2}, 1, 1, 1)
    gold = {str(i): g for i, g in zip(votes.item_ids, votes.gold, strict=True)}
    assert gold["t4"] == votes.labels.names.index("pos") and gold["t1"] < 0
    assert votes.read_info == (
        "toloka_assignments.tsv: Toloka results, 13 rows; item='INPUT:id', "
        "annotator='ASSIGNMENT:worker_id', label='OUTPUT:sentiment', gold=GOLDEN:sentiment (1 "
        "control item(s)); rows excluded by assignment status: REJECTED 2; training-task rows: "
        "1; blank responses: 1")


def test_detection_and_override(tmp_path):
    assert looks_like_toloka(["INPUT:x", "OUTPUT:y", "ASSIGNMENT:worker_id"])
    assert not looks_like_toloka(["INPUT:x", "ASSIGNMENT:worker_id"])
    text = ("INPUT:url\tINPUT:key\tOUTPUT:a\tOUTPUT:b\tASSIGNMENT:worker_id\n"
            "u1\tk1\tx\ty\tw1\n")
    with pytest.raises(SchemaError, match=r"^assignments.tsv: 2 INPUT: columns \['INPUT:url', "
                                          r"'INPUT:page'\]; say which holds the item id with "
                                          r"--item-col$"):
        read_toloka(_write(tmp_path, text.replace("INPUT:key", "INPUT:page")))
    with pytest.raises(SchemaError, match=r"2 OUTPUT: columns .*--label-col"):
        read_toloka(_write(tmp_path, text))
    votes = read_votes(_write(tmp_path, text), columns={"label": "b"})
    assert (list(votes.item_ids), list(votes.labels.names)) == (["k1"], ["y"])


def test_two_golden_responses_name_the_line(tmp_path):
    text = HEAD + "q1\tyes\tyes\tw1\tAPPROVED\nq1\tno\tno\tw2\tAPPROVED\n"
    with pytest.raises(SchemaError, match=r"^line 3 of assignments.tsv, column GOLDEN:label: item "
                                          r"'q1' has golden responses 'yes' and 'no'; correct "
                                          r"the file$"):
        read_toloka(_write(tmp_path, text))


def test_blank_worker_and_no_votes(tmp_path):
    with pytest.raises(SchemaError, match=r"^line 2 of assignments.tsv: blank "
                                          r"ASSIGNMENT:worker_id$"):
        read_toloka(_write(tmp_path, HEAD + "q1\tyes\t\t\tAPPROVED\n"))
    with pytest.raises(SchemaError, match=r"^assignments.tsv: no votes: 2 row\(s\), excluded by "
                                          r"status: REJECTED 1, training tasks: 0, blank "
                                          r"responses: 1$"):
        read_toloka(_write(tmp_path, HEAD + "q1\tyes\t\tw1\tREJECTED\nq1\t\t\tw2\tAPPROVED\n"))


def test_an_annotator_answering_twice(tmp_path):
    path = _write(tmp_path, HEAD + "q1\tyes\t\tw1\tAPPROVED\nq1\tno\t\tw1\tAPPROVED\n")
    with pytest.raises(SchemaError, match=r"annotator 'w1' answered item 'q1' more than once "
                                          r"\(1 such pair\(s\)\); keep one answer of each with "
                                          r"--duplicates first\|last"):
        read_toloka(path)
    assert read_toloka(path, duplicates="last").counts().tolist() == [[1, 0]]
