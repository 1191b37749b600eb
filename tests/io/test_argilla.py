"""Argilla 2.x records (annokit.io.argilla), built from the SDK's documented export shapes
(argilla.records._io: Record.to_dict for to_json, GenericIO._record_to_dict(flatten=True) for
to_list(flatten=True) and to_hub)."""

from __future__ import annotations

import json

import pytest

from annokit.errors import DataFormatError, SchemaError
from annokit.io import read_votes
from annokit.io.argilla import looks_like_argilla, read_argilla

U1, U2, U3 = ("5b0c4bb5-6f0e-4c41-9a36-0f4c1fd1a001", "9d1e7a52-2b7c-4c3f-8f0e-7b2d3c4ea002",
              "c3f1aa90-77d2-4e5e-b1a4-52e6d1b0a003")


def _by_id(votes):
    return {str(i): dict(zip(votes.labels.names, map(int, row), strict=True))
            for i, row in zip(votes.item_ids, votes.counts(), strict=True)}


def _write(tmp_path, records, name="records.json"):
    path = tmp_path / name
    path.write_text(json.dumps(records))
    return path


def test_nested_example_hand_counted():
    votes = read_votes("docs/examples/argilla_records.json")
    assert _by_id(votes) == {"r1": {"neg": 0, "neu": 0, "pos": 2},
                             "r2": {"neg": 2, "neu": 1, "pos": 0},
                             "r3": {"neg": 0, "neu": 1, "pos": 0}}
    info = votes.argilla_info
    assert (info["shape"], info["records_without_responses"], info["left_out"]) == ("nested", 1, {})
    assert votes.read_info.endswith("6 response(s) without a status read as submitted")


def test_flat_hub_example_hand_counted():
    votes = read_votes("docs/examples/argilla_hub.jsonl")
    # a multi-label question: each list is one user's answer, one vote per topic
    assert _by_id(votes) == {"r1": {"food": 2, "price": 1, "service": 0},
                             "r2": {"food": 0, "price": 1, "service": 2},
                             "r3": {"food": 1, "price": 0, "service": 0}}
    assert votes.argilla_info["left_out"] == {"discarded": 1, "draft": 1}
    assert votes.argilla_info["multi_label"] == 2


def test_flat_parquet_as_the_hub_stores_it(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    table = pa.table({"id": ["a", "b"], "label.responses": [["x", "y"], None],
                      "label.responses.users": [[U1, U2], None],
                      "label.responses.status": [["submitted", "submitted"], None]})
    path = tmp_path / "train-00000-of-00001.parquet"
    pq.write_table(table, path)
    votes = read_votes(path)
    assert (_by_id(votes), votes.argilla_info["records_without_responses"]) == (
        {"a": {"x": 1, "y": 1}}, 1)


def test_several_questions_need_label_col(tmp_path):
    record = {"id": "a", "fields": {"text": "t"},
              "responses": {"sentiment": [{"value": "pos", "user_id": U1}],
                            "rating": [{"value": 4, "user_id": U1}]}}
    path = _write(tmp_path, [record])
    with pytest.raises(SchemaError, match=r"^records.json: the questions \['sentiment', 'rating'\] "
                                          r"have responses; name the label's with --label-col "
                                          r"\(Python: question=\)$"):
        read_argilla(path)
    assert list(read_votes(path, columns={"label": "rating"}).labels.names) == ["4"]


@pytest.mark.parametrize("records, error, match", [
    ([{"id": "a", "fields": {}, "responses": {"q": [{"value": "x"}]}}], DataFormatError,
     r"^records.json, record 1, q: a response without user_id$"),
    ([{"id": "a", "fields": {}, "responses": {"q": [{"value": {"x": 1}, "user_id": U1}]}}],
     DataFormatError, r"^records.json, record 1, q: answer \{'x': 1\} is not a label"),
    ([{"id": "", "_server_id": None, "fields": {}, "responses": {"q": [{"value": "x",
                                                                         "user_id": U1}]}}],
     DataFormatError, r"^records.json, record 1: no item id in id or _server_id"),
    ([{"id": "a", "q.responses": ["x"], "q.responses.users": [U1, U2]}], DataFormatError,
     r"^records.json, record 1: q.responses, .users and .status have different lengths"),
    ([{"id": "a", "fields": {}, "responses": {}}], SchemaError,
     r"^records.json: no votes: none of the 1 record\(s\) has a response$"),
])
def test_bad_records_name_the_record(tmp_path, records, error, match):
    with pytest.raises(error, match=match):
        read_argilla(_write(tmp_path, records))


def test_detection():
    assert looks_like_argilla({"id": "a", "fields": {}, "responses": {}})
    assert looks_like_argilla({"q.responses": None, "q.responses.users": None})
    assert not looks_like_argilla({"id": "a", "labels": ["x"]})
