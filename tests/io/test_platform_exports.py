"""Mechanical Turk batch results and Label Studio exports (annokit.io.mturk, annokit.io.labelstudio)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from annokit.errors import DataFormatError, InvalidValueError, SchemaError
from annokit.io import read_votes
from annokit.io.labelstudio import read_labelstudio
from annokit.io.mturk import looks_like_mturk, read_mturk

HEADER = ("HITId,HITTypeId,AssignmentId,WorkerId,AssignmentStatus,WorkTimeInSeconds,"
          "Input.id1,Input.text1,Input.id2,Input.text2,Input.id3,Input.text3,"
          "Answer.label1,Answer.label2,Answer.label3,Approve,Reject\n")


def _write(tmp_path, text, name="batch.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _by_id(votes):
    counts = votes.counts()
    return {str(i): dict(zip(votes.labels.names, map(int, row), strict=True))
            for i, row in zip(votes.item_ids, counts, strict=True)}


def test_mturk_several_items_per_hit_hand_counted(tmp_path):
    rows = [
        "H1,T,A1,w1,Approved,30,q1,t,q2,t,q3,t,yes,no,yes,,",
        "H1,T,A2,w2,Submitted,31,q1,t,q2,t,q3,t,yes,yes,,,",       # blank third answer
        "H1,T,A3,w3,Rejected,2,q1,t,q2,t,q3,t,no,no,no,,x",         # rejected: not votes
        "H2,T,A4,w1,Approved,40,q4,t,q5,t,q6,t,no,no,no,,",
        "H2,T,A5,w4,Returned,0,q4,t,q5,t,q6,t,,,,,",
    ]
    votes = read_mturk(_write(tmp_path, HEADER + "\n".join(rows) + "\n"))
    assert _by_id(votes) == {"q1": {"no": 0, "yes": 2}, "q2": {"no": 1, "yes": 1},
                             "q3": {"no": 0, "yes": 1}, "q4": {"no": 1, "yes": 0},
                             "q5": {"no": 1, "yes": 0}, "q6": {"no": 1, "yes": 0}}
    info = votes.mturk_info
    assert info["excluded"] == {"Rejected": 1, "Returned": 1}
    assert info["blank_answers"] == 1 and info["items_per_hit"] == 3
    assert info["item"] == "Input.id{n}" and info["label"] == "Answer.label{n}"
    assert "excluded assignments: Rejected 1, Returned 1" in votes.read_info
    assert sorted(votes.annotator_ids) == ["w1", "w2"]


def test_mturk_one_item_per_hit_uses_hit_id_without_id_column(tmp_path):
    text = ("HITId,WorkerId,AssignmentStatus,Input.text,Answer.sentiment\n"
            "H1,w1,Approved,good,pos\nH1,w2,Approved,good,neg\nH2,w1,Approved,bad,neg\n")
    votes = read_mturk(_write(tmp_path, text))
    assert _by_id(votes) == {"H1": {"neg": 1, "pos": 1}, "H2": {"neg": 1, "pos": 0}}
    assert votes.mturk_info["item"] == "HITId"


def test_mturk_mapping_override_and_statuses(tmp_path):
    text = ("HITId,WorkerId,AssignmentStatus,Input.sent_1,Input.sent_2,Answer.a_1,Answer.a_2,"
            "Answer.comment\n"
            "H1,w1,Rejected,s1,s2,x,y,hm\nH1,w2,Approved,s1,s2,x,x,\n")
    with pytest.raises(SchemaError, match="say which holds the label"):
        read_mturk(_write(tmp_path, text))
    votes = read_mturk(_write(tmp_path, text), item="sent", label="a",
                       statuses=("Approved", "Rejected"))
    assert _by_id(votes) == {"s1": {"x": 2, "y": 0}, "s2": {"x": 1, "y": 1}}
    with pytest.raises(SchemaError, match="no column Answer.nope"):
        read_mturk(_write(tmp_path, text), label="nope")


@pytest.mark.parametrize("text, match", [
    ("WorkerId,Answer.x\nw1,a\n", "missing column"),
    ("HITId,WorkerId,AssignmentStatus,Answer.x\nH1,,Approved,a\n", "line 2 of batch.csv: blank WorkerId"),
    ("HITId,WorkerId,AssignmentStatus,Answer.x\nH1,w1,Rejected,a\n", "no votes"),
    ("HITId,WorkerId,AssignmentStatus,Input.id1,Input.id2,Answer.l1,Answer.l2\n"
     "H1,w1,Approved,,q2,a,b\n", "line 2 of batch.csv, column Input.id1: blank item id"),
])
def test_mturk_bad_files_fail_with_where(tmp_path, text, match):
    with pytest.raises(SchemaError, match=match):
        read_mturk(_write(tmp_path, text))


def test_mturk_same_worker_twice_on_an_item_is_an_error_unless_asked(tmp_path):
    text = ("HITId,WorkerId,AssignmentStatus,Input.id,Answer.l\n"
            "H1,w1,Approved,q1,a\nH2,w1,Approved,q1,b\n")
    with pytest.raises(SchemaError):
        read_mturk(_write(tmp_path, text))
    assert read_mturk(_write(tmp_path, text), duplicates="last").counts().tolist() == [[0, 1]]


def test_looks_like_mturk():
    assert looks_like_mturk(["HITId", "WorkerId", "Answer.x"])
    assert not looks_like_mturk(["item", "annotator", "label"])


def _task(task_id, *annotations, **data):
    return {"id": task_id, "data": data or {"text": "t"}, "annotations": list(annotations)}


def _ann(user, *choices, cancelled=False, kind="choices", control="sentiment"):
    value = {kind: list(choices) if kind == "choices" else choices[0]}
    result = [{"from_name": control, "to_name": "text", "type": kind, "value": value}] \
        if choices else []
    return {"completed_by": user, "was_cancelled": cancelled, "result": result}


def test_labelstudio_choices_cancelled_and_blank_counted(tmp_path):
    tasks = [_task(1, _ann(7, "pos"), _ann(8, "neg"), _ann(9, cancelled=True)),
             _task(2, _ann({"id": 7, "email": "a@x"}, "pos"), _ann(8))]
    path = _write(tmp_path, json.dumps(tasks), "export.json")
    votes = read_labelstudio(path)
    assert _by_id(votes) == {"1": {"neg": 1, "pos": 1}, "2": {"neg": 0, "pos": 1}}
    info = votes.labelstudio_info
    assert (info["cancelled"], info["blank"], info["annotations"]) == (1, 1, 5)
    assert sorted(votes.annotator_ids) == ["7", "8"]


def test_labelstudio_ratings_item_field_and_multichoice(tmp_path):
    tasks = [_task(1, _ann(1, 4, kind="rating", control="stars"),
                   _ann(2, 5, kind="rating", control="stars"), item_id="a"),
             _task(2, _ann(1, 2, kind="rating", control="stars"), item_id="b")]
    votes = read_labelstudio(_write(tmp_path, json.dumps(tasks), "r.json"), item="item_id")
    assert _by_id(votes) == {"a": {"2": 0, "4": 1, "5": 1}, "b": {"2": 1, "4": 0, "5": 0}}
    multi = [_task(1, _ann(1, "x", "y"), _ann(2, "y"))]
    votes = read_labelstudio(_write(tmp_path, json.dumps(multi), "m.json"))
    assert votes.labelstudio_info["multi_choice"] == 1
    np.testing.assert_array_equal(votes.counts(), [[1, 2]])


@pytest.mark.parametrize("doc, error, match", [
    ({"id": 1}, DataFormatError, "JSON list of task objects"),
    ([{"id": 1, "data": {}}], DataFormatError, "task 1 .*no 'annotations'"),
    ([_task(None, _ann(1, "x"))], DataFormatError, "no item id"),
    ([_task(1, {"completed_by": None, "result": []})], DataFormatError, "without completed_by"),
    ([_task(1, _ann(1, "x"), _ann(2, "y", control="other"))], SchemaError, "several controls"),
    ([_task(1, _ann(1, cancelled=True))], SchemaError, "no votes"),
])
def test_labelstudio_bad_exports(tmp_path, doc, error, match):
    with pytest.raises(error, match=match):
        read_labelstudio(_write(tmp_path, json.dumps(doc), "bad.json"))


def test_hf_response_objects_and_parallel_lists():
    datasets = pytest.importorskip("datasets")
    from annokit.io.hf_responses import from_hf_responses

    ds = datasets.Dataset.from_list([
        {"id": "q1", "label": [{"user_id": "a", "value": "yes", "status": "submitted"},
                               {"user_id": "b", "value": "no", "status": "submitted"},
                               {"user_id": "c", "value": None, "status": "submitted"}]},
        {"id": "q2", "label": [{"user_id": "a", "value": "no", "status": "draft"}]},
        {"id": "q3", "label": [{"user_id": "b", "value": "no", "status": "submitted"}]},
    ])
    votes = from_hf_responses(ds, item="id", responses="label")
    assert _by_id(votes) == {"q1": {"no": 1, "yes": 1}, "q3": {"no": 1, "yes": 0}}
    assert votes.hf_info["excluded"] == {"draft": 1}
    assert votes.hf_info["empty"] == 1 and votes.hf_info["records_without_votes"] == 1

    par = datasets.Dataset.from_dict({"item": ["x", "y"], "answers": [["1", "2"], ["2"]],
                                      "users": [["u", "v"], ["u"]]})
    votes = from_hf_responses(par, item="item", responses="answers", annotators="users")
    assert _by_id(votes) == {"x": {"1": 1, "2": 1}, "y": {"1": 0, "2": 1}}
    bad = datasets.Dataset.from_dict({"item": ["x"], "answers": [["1", "2"]], "users": [["u"]]})
    with pytest.raises(SchemaError, match="record 0 .*different lengths"):
        from_hf_responses(bad, item="item", responses="answers", annotators="users")
    with pytest.raises(SchemaError, match="no column 'nope'"):
        from_hf_responses(par, item="nope", responses="answers")


FLAG_BATCH = (
    "HITId,WorkerId,AssignmentStatus,Input.id1,Input.id2,Answer.label1,Answer.label2,"
    "Answer.cannotjudge1,Answer.cannotjudge2\n"
    "H1,w1,Approved,q1,q2,yes,no,false,true\n"
    "H1,w2,Approved,q1,q2,yes,yes,FALSE,false\n"
    "H1,w3,Submitted,q1,q2,no,,true,false\n"
)


def test_mturk_cannot_judge_flags_are_dropped_and_counted(tmp_path):
    path = _write(tmp_path, FLAG_BATCH)
    votes = read_mturk(path)
    assert _by_id(votes) == {"q1": {"no": 0, "yes": 2}, "q2": {"no": 0, "yes": 1}}
    assert votes.mturk_info["flags"] == {"fields": ["Answer.cannotjudge{n}"], "flagged_votes": 2,
                                         "action": "dropped"}
    assert votes.read_info.endswith("; blank answers: 1; flag field(s) ['Answer.cannotjudge{n}']: 2 "
                                    "flagged vote(s) dropped (--flags keep to keep them)")
    kept = read_mturk(path, flags="keep")
    assert _by_id(kept) == {"q1": {"no": 1, "yes": 2}, "q2": {"no": 1, "yes": 1}}
    assert kept.read_info.endswith("2 flagged vote(s) kept (--flags drop to drop them)")
    with pytest.raises(InvalidValueError, match="flags"):
        read_mturk(path, flags="ignore")


def test_mturk_checkbox_named_on_and_a_hit_wide_flag(tmp_path):
    one = ("HITId,WorkerId,AssignmentStatus,Input.id,Answer.sentiment,Answer.cannot_judge.on\n"
           "H1,w1,Approved,q1,pos,on\nH1,w2,Approved,q1,neg,\nH2,w1,Approved,q2,pos,{}\n")
    votes = read_mturk(_write(tmp_path, one))
    assert _by_id(votes) == {"q1": {"neg": 1, "pos": 0}, "q2": {"neg": 0, "pos": 1}}
    assert votes.mturk_info["flags"]["fields"] == ["Answer.cannot_judge.on"]
    hit_wide = ("HITId,WorkerId,AssignmentStatus,Input.id1,Input.id2,Answer.l1,Answer.l2,"
                "Answer.unsure\nH1,w1,Approved,q1,q2,a,b,true\nH1,w2,Approved,q1,q2,a,a,false\n")
    votes = read_mturk(_write(tmp_path, hit_wide))
    assert votes.mturk_info["flags"]["flagged_votes"] == 2
    assert _by_id(votes) == {"q1": {"a": 1, "b": 0}, "q2": {"a": 1, "b": 0}}


def test_mturk_flags_not_numbered_like_the_label(tmp_path):
    text = ("HITId,WorkerId,AssignmentStatus,Input.id1,Input.id2,Answer.l1,Answer.l2,"
            "Answer.unsure1,Answer.unsure3\nH1,w1,Approved,q1,q2,a,b,true,false\n")
    with pytest.raises(SchemaError, match=r"batch.csv: the flag field Answer.unsure\{n\} is not "
                                          r"numbered like the label \(item 2 has no flag column\)"):
        read_mturk(_write(tmp_path, text))


def test_mturk_which_answer_is_the_label_names_label_col(tmp_path):
    text = ("HITId,WorkerId,AssignmentStatus,Input.id,Answer.toxic,Answer.unsure\n"
            "H1,w1,Approved,q1,true,false\n")
    with pytest.raises(SchemaError, match=r"^batch.csv: 2 answer columns \['toxic', 'unsure'\] all "
                                          r"holding checkbox values; say which holds the label with "
                                          r"--label-col \(Python: label=\)$"):
        read_mturk(_write(tmp_path, text))
    votes = read_mturk(_write(tmp_path, text), label="toxic")
    assert (votes.n_votes, list(votes.labels.names)) == (1, ["true"])
    assert votes.mturk_info["flags"] == {"fields": ["Answer.unsure"], "flagged_votes": 0,
                                         "action": "dropped"}


def test_mturk_all_votes_flagged(tmp_path):
    text = ("HITId,WorkerId,AssignmentStatus,Input.id,Answer.l,Answer.unsure.on\n"
            "H1,w1,Approved,q1,a,on\n")
    with pytest.raises(SchemaError, match=r"^batch.csv: no votes: 1 assignment\(s\), 0 excluded by "
                                          r"status, 0 blank answers, 1 flagged votes dropped "
                                          r"\(--flags keep keeps them\)$"):
        read_mturk(_write(tmp_path, text))


def test_mturk_from_a_european_spreadsheet_through_read_votes(tmp_path):
    path = tmp_path / "batch.csv"
    path.write_bytes(b"\xef\xbb\xbf" + FLAG_BATCH.replace(",", ";").replace("\n", "\r\n").encode())
    votes = read_votes(path)
    assert votes.mturk_info["flags"]["flagged_votes"] == 2 and votes.n_votes == 3
    assert read_votes(path, flags="keep").n_votes == 5
    with pytest.raises(InvalidValueError, match=r"^v.csv: flags= applies to Mechanical Turk batch "
                                                r"results \(flag fields beside the answer\); this is "
                                                r"read as long$"):
        read_votes(_write(tmp_path, "item,annotator,label\nq,a,x\n", "v.csv"), flags="keep")


# Pavlick & Kwiatkowski (2019)'s raw batches (epavlick/NLI-variation-data,
# sentence-pair-analysis/raw/batch1.csv): 20 items per HIT numbered from 0 with a separator in the
# inputs (Input.pair_id_0) and none in the answers, a slider Answer.rating0 and a checkbox
# Answer.na0 that holds its own name, "na", when ticked. A miniature with the same header shape.
PAVLICK_BATCH = (
    '"HITId","WorkerId","AssignmentStatus","Input.task_name_0","Input.pair_id_0","Input.label_0",'
    '"Input.task_name_1","Input.pair_id_1","Input.label_1","Answer.na0","Answer.na1",'
    '"Answer.rating0","Answer.rating1","Approve","Reject"\n'
    '"H1","A1","Approved","dnc","sentiment_448380","entailed","snli","6979303317.jpg#4r1n",'
    '"neutral","","na","100","78","",""\n'
    '"H1","A2","Approved","dnc","sentiment_448380","entailed","snli","6979303317.jpg#4r1n",'
    '"neutral","","","100","50","",""\n'
    '"H1","A3","Rejected","dnc","sentiment_448380","entailed","snli","6979303317.jpg#4r1n",'
    '"neutral","na","","0","0","",""\n')


def test_mturk_checkbox_holding_its_own_name_is_a_flag(tmp_path):
    path = _write(tmp_path, PAVLICK_BATCH)
    votes = read_mturk(path)
    assert _by_id(votes) == {"sentiment_448380": {"100": 2, "50": 0, "78": 0},
                             "6979303317.jpg#4r1n": {"100": 0, "50": 1, "78": 0}}
    assert votes.mturk_info["flags"] == {"fields": ["Answer.na{n}"], "flagged_votes": 1,
                                         "action": "dropped"}
    assert votes.read_info.endswith("excluded assignments: Rejected 1; blank answers: 0; flag "
                                    "field(s) ['Answer.na{n}']: 1 flagged vote(s) dropped (--flags "
                                    "keep to keep them)")
    assert read_mturk(path, flags="keep").n_votes == 4


def test_mturk_own_name_flag_through_the_cli(tmp_path):
    from click.testing import CliRunner

    from annokit.cli import main

    result = CliRunner().invoke(main, ["stats", str(_write(tmp_path, PAVLICK_BATCH)), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output[result.output.index("{"):])
    assert "flag field(s) ['Answer.na{n}']: 1 flagged vote(s) dropped" in doc["read_as"]
    assert doc["n_votes"] == 3
