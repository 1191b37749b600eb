"""Label Studio JSON-MIN and CSV exports (annokit.io.labelstudio_flat), built from the
converter's documented records (label-studio-sdk converter: convert_to_json_min, the CSV
export's fixed keys, prettify_result's answer shapes)."""

from __future__ import annotations

import json

import pytest

from annokit.errors import DataFormatError, SchemaError
from annokit.io import read_votes
from annokit.io.labelstudio_flat import looks_like_labelstudio_flat, read_labelstudio_flat

EXPECTED = {"1": {"neg": 0, "neu": 0, "pos": 2}, "2": {"neg": 2, "neu": 1, "pos": 0},
            "3": {"neg": 0, "neu": 1, "pos": 0}}


def _by_id(votes):
    return {str(i): dict(zip(votes.labels.names, map(int, row), strict=True))
            for i, row in zip(votes.item_ids, votes.counts(), strict=True)}


def _record(**kw):
    base = {"id": 1, "text": "t", "annotator": "a@x", "annotation_id": 1, "created_at": "c",
            "updated_at": "u", "lead_time": 1.0}
    return {**base, **kw}


def _write(tmp_path, records):
    path = tmp_path / "min.json"
    path.write_text(json.dumps(records))
    return path


@pytest.mark.parametrize("path", ["docs/examples/labelstudio_min.json",
                                  "docs/examples/labelstudio.csv"])
def test_examples_hand_counted(path):
    votes = read_votes(path)
    assert _by_id(votes) == EXPECTED  # sam's neg+neu is one answer, two votes
    info = votes.labelstudio_info
    assert (info["label"], info["blank"], info["unannotated"], info["multi_choice"]) == (
        "sentiment", 1, 1, 1)


def test_ratings_and_the_varying_key(tmp_path):
    rows = [_record(id=1, stars=[{"rating": 4}], annotator="a"),
            _record(id=1, stars=[{"rating": 2}], annotator="b")]
    assert _by_id(read_labelstudio_flat(_write(tmp_path, rows))) == {"1": {"2": 1, "4": 1}}
    # single choices are plain text: the key that differs between two annotations of a task
    rows = [_record(id=1, mood="pos", annotator="a"), _record(id=1, mood="neg", annotator="b")]
    assert read_labelstudio_flat(_write(tmp_path, rows)).labelstudio_info["label"] == "mood"


def test_a_label_that_cannot_be_told_names_label_col(tmp_path):
    rows = [_record(id=1, mood="pos", annotator="a"), _record(id=2, mood="neg", annotator="a")]
    with pytest.raises(SchemaError, match=r"^min.json: cannot tell the control holding the label "
                                          r"from the data fields \['text', 'mood'\]; name it with "
                                          r"--label-col \(Python: from_name=\)$"):
        read_labelstudio_flat(_write(tmp_path, rows))
    assert read_votes(_write(tmp_path, rows), columns={"label": "mood"}).n_votes == 2


def test_bad_records_name_where(tmp_path):
    with pytest.raises(DataFormatError, match=r"^min.json, record 1, key 'mood': answer "
                                              r"\[\{'x': 1\}\] holds no choices, rating or number"):
        read_labelstudio_flat(_write(tmp_path, [_record(mood=[{"x": 1}])]), from_name="mood")
    with pytest.raises(DataFormatError, match=r"^min.json, record 1: blank item id in 'id'$"):
        read_labelstudio_flat(_write(tmp_path, [_record(id=None, mood="pos")]), from_name="mood")
    csv = tmp_path / "export.csv"
    csv.write_text("annotation_id,annotator,id,lead_time,mood,was_cancelled\n"
                   "1,7,1,2.0,\"[{\"\"x\"\": 1}]\",False\n")
    with pytest.raises(DataFormatError, match=r"^line 2 of export.csv, key 'mood': answer"):
        read_labelstudio_flat(csv, from_name="mood")


def test_cancelled_rows_of_a_csv_are_counted(tmp_path):
    csv = tmp_path / "export.csv"
    csv.write_text("annotation_id,annotator,id,lead_time,mood,was_cancelled\n"
                   "1,7,1,2.0,pos,False\n2,8,1,2.0,neg,True\n")
    votes = read_votes(csv)
    assert (votes.n_votes, votes.labelstudio_info["cancelled"]) == (1, 1)


def test_detection():
    assert looks_like_labelstudio_flat(["id", "annotator", "annotation_id", "lead_time"])
    assert not looks_like_labelstudio_flat(["id", "annotator", "label"])
