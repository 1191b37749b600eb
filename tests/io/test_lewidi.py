"""LeWiDi reader: the shared 2023 sets, and small synthetic files in the 2023 and 2025 layouts.

Expected values are computed here from the JSON with plain Python (independent of the reader)
or written by hand.
"""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from annokit.core.multilabel import multilabel_soft_labels
from annokit.errors import DataFormatError, DegenerateInputWarning, InvalidValueError, SchemaError
from annokit.io import read_votes, sniff_format
from annokit.io.lewidi import file_soft_labels, looks_like_lewidi, read_lewidi
from annokit.io.lewidi_checks import file_hard_labels


def _write(path, doc):
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return path


def _item23(annotators, annotations, soft, hard, **extra):
    return {"text": "t", "annotation task": "x", "number of annotations": len(annotators.split(",")),
            "annotations": annotations, "annotators": annotators, "lang": "en",
            "hard_label": hard, "soft_label": soft, "split": "dev", **extra}


# -- the shared 2023 data -----------------------------------------------------------------

@pytest.mark.parametrize("dataset", ["ArMIS", "HS-Brexit"])
@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_shared_2023_votes_agree_with_the_json(shared_data, dataset, split):
    path = shared_data("lewidi2023", dataset, f"{dataset}_{split}.json")
    doc = json.loads(path.read_text(encoding="utf-8"))
    votes = read_votes(path)
    assert votes.item_ids.tolist() == list(doc)  # ids kept as written, in file order
    expected = np.array([[r["annotations"].split(",").count(k) for k in ("0", "1")]
                         for r in doc.values()])
    np.testing.assert_array_equal(votes.counts(), expected)
    info = votes.lewidi_info
    assert info["edition"] == 2023 and info["dataset"] == dataset and info["split"] == split
    assert info["soft_label_mismatches"] == [] and info["hard_label_mismatches"] == []
    ties = [k for k, r in doc.items() if 2 * r["annotations"].split(",").count("1")
            == len(r["annotations"].split(","))]
    assert info["hard_label_ties"] == ties
    assert votes.item_metadata["hard_label"].tolist() == [r["hard_label"] for r in doc.values()]
    np.testing.assert_array_equal(file_soft_labels(votes),
                                  [[r["soft_label"]["0"], r["soft_label"]["1"]] for r in doc.values()])
    assert "soft_label mismatches: 0" in votes.read_info


def test_shared_2023_annotator_attributes(shared_data):
    armis = read_lewidi(shared_data("lewidi2023", "ArMIS"), split="dev")
    assert armis.annotator_metadata.loc["Ann3", "other_info"] == "Conservative_Male"
    brexit = read_lewidi(shared_data("lewidi2023", "HS-Brexit"), split="train")
    assert brexit.annotator_metadata["annotators group"].to_dict() == {
        "Ann1": "group1", "Ann2": "group1", "Ann3": "group1",
        "Ann4": "group2", "Ann5": "group2", "Ann6": "group2"}


def test_shared_2023_is_sniffed(shared_data):
    path = shared_data("lewidi2023", "ArMIS", "ArMIS_dev.json")
    assert sniff_format(path) == "lewidi" and looks_like_lewidi(path)
    assert read_votes(path, format="lewidi") == read_votes(path)


# -- 2023 layout, synthetic ------------------------------------------------------------

def test_mismatched_soft_and_hard_labels_are_counted_reported_and_kept(tmp_path):
    doc = {
        "007": _item23("Ann1,Ann2,Ann3", "1,0,0", {"0": 0.67, "1": 0.33}, "0"),
        "8": _item23("Ann1,Ann2,Ann3", "1,1,0", {"0": 0.67, "1": 0.33}, "0"),  # both wrong
        "9": _item23("Ann1,Ann2", "1,0", {"0": 0.5, "1": 0.5}, "1"),  # tie: file picked one
    }
    path = _write(tmp_path / "Toy_dev.json", doc)
    with pytest.warns(DegenerateInputWarning, match=r"soft label mismatches: 1 item\(s\), e.g. \['8'\]"):
        votes = read_votes(path)
    info = votes.lewidi_info
    assert info["soft_label_mismatches"] == ["8"] and info["hard_label_mismatches"] == ["8"]
    assert info["hard_label_ties"] == ["9"]
    assert "soft_label mismatches: 1 (e.g. ['8'])" in votes.read_info
    assert "hard_label mismatches: 1 (e.g. ['8'])" in votes.read_info
    assert votes.item_ids.tolist() == ["007", "8", "9"]
    # the file's own values are kept, not replaced by the votes'
    assert votes.item_metadata["soft_label"][1] == {"0": 0.67, "1": 0.33}
    assert file_hard_labels(votes).tolist() == [0, 0, 1]


def test_rounding_of_written_soft_labels_is_not_a_mismatch(tmp_path):
    doc = {"1": _item23("A,B,C", "1,0,0", {"0": 0.667, "1": 0.333}, "0"),
           "2": _item23("A,B,C", "1,0,0", {"0": 0.6666666666666666, "1": 0.3333333333333333}, "0"),
           "3": _item23("A,B,C", "1,0,0", {"0": 0.66, "1": 0.34}, "0")}  # off by more than 0.005
    with pytest.warns(DegenerateInputWarning):
        votes = read_lewidi(_write(tmp_path / "T_train.json", doc))
    assert votes.lewidi_info["soft_label_mismatches"] == ["3"]


def test_convabuse_severities_are_mapped_as_the_readme_says(tmp_path):
    doc = {"1": _item23("Ann1,Ann2,Ann3", "-3,0,1", {"0": 0.67, "1": 0.33}, "0",
                        other_info={"bot": "x", "other_annotations": {"sexist": "1,0,0"}}),
           "2": _item23("Ann2,Ann4,Ann5,Ann6", "-1,-2,0,1", {"0": 0.5, "1": 0.5}, "1")}
    doc["2"]["number of annotations"] = 5  # stated count wrong
    with pytest.warns(DegenerateInputWarning, match="number of annotations|count"):
        votes = read_lewidi(_write(tmp_path / "ConvAbuse_dev.json", doc))
    assert votes.labels.names == ("0", "1")
    np.testing.assert_array_equal(votes.counts(), [[2, 1], [2, 2]])
    info = votes.lewidi_info
    assert info["severity_mapped"] and info["soft_label_mismatches"] == []
    assert info["count_mismatches"] == ["2"] and info["hard_label_ties"] == ["2"]
    assert votes.item_metadata["annotations"][0] == "-3,0,1"  # the raw severities are kept
    assert "severities" in votes.read_info


def test_2023_errors_name_the_item(tmp_path):
    doc = {"1": _item23("Ann1,Ann2", "1,0,0", {"0": 0.67, "1": 0.33}, "0")}
    with pytest.raises(DataFormatError, match=r"item '1': 3 annotations for 2 annotators"):
        read_lewidi(_write(tmp_path / "T_dev.json", doc))
    mixed = {"1": _item23("A,B", "1,0", {"0": 0.5, "1": 0.5}, "0"),
             "2": {"annotations": {"A": "1"}, "annotators": "A"}}
    with pytest.raises(DataFormatError, match="all be comma-separated strings"):
        read_lewidi(_write(tmp_path / "T_dev.json", mixed))
    with pytest.raises(DataFormatError, match="non-empty JSON object"):
        read_lewidi(_write(tmp_path / "T_dev.json", {}))


def test_folder_and_split(tmp_path):
    doc = {"1": _item23("A,B", "1,1", {"0": 0.0, "1": 1.0}, "1")}
    _write(tmp_path / "Toy_dev.json", doc)
    _write(tmp_path / "Toy_train.json", {"5": _item23("A,B", "0,0", {"0": 1.0, "1": 0.0}, "0")})
    assert read_lewidi(tmp_path, split="train").item_ids.tolist() == ["5"]
    with pytest.raises(DataFormatError, match=r"give the path of one split file \(Python: or split="):
        read_lewidi(tmp_path)
    with pytest.raises(DataFormatError, match="0 files for split 'test'"):
        read_lewidi(tmp_path, split="test")
    with pytest.raises(InvalidValueError, match="is the dev split, not 'train'"):
        read_lewidi(tmp_path / "Toy_dev.json", split="train")
    with pytest.raises(InvalidValueError, match="split"):
        read_lewidi(tmp_path, split="validation")
    with pytest.raises(InvalidValueError, match=r"^Toy_dev.json: gold= \(a separate gold file\) "
                                                r"applies to long and wide tables; this is read "
                                                r"as lewidi$"):
        read_votes(tmp_path / "Toy_dev.json", gold=tmp_path / "x.csv")


# -- 2025 layout, synthetic ------------------------------------------------------------

def _item25(annotations, soft, **extra):
    return {"annotation task": "t", "text": {"a": "b"}, "number of annotators": len(annotations),
            "annotators": ",".join(annotations), "number of annotations": len(annotations),
            "annotations": annotations, "soft_label": soft, "split": "dev", "lang": "en",
            "other_info": {}, **extra}


def test_csc_likert_is_ordinal_with_every_scale_point(tmp_path):
    soft = {str(k): 0.0 for k in range(1, 7)}
    doc = {"3944": _item25({"Ann844": "1", "Ann845": "4", "Ann846": "1", "Ann847": "6"},
                           {**soft, "1": 0.5, "4": 0.25, "6": 0.25})}
    _write(tmp_path / "CSC_annotators_meta.json",
           {"Ann844": {"Gender": "Female", "Age": "56"}, "Ann845": {"Gender": "Male", "Age": "30"}})
    votes = read_votes(_write(tmp_path / "CSC_dev.json", doc))
    assert votes.labels.names == ("1", "2", "3", "4", "5", "6")
    assert votes.lewidi_info["scale"] == "ordinal" and votes.lewidi_info["edition"] == 2025
    assert votes.labels.scale == "ordinal" and votes.labels.values.tolist() == [1, 2, 3, 4, 5, 6]
    assert votes.lewidi_info["label_values"] == ["1", "2", "3", "4", "5", "6"]
    np.testing.assert_array_equal(votes.counts(), [[2, 0, 0, 1, 0, 1]])
    meta = votes.annotator_metadata
    assert meta.loc["Ann845", "Age"] == "30" and meta.loc["Ann846"].isna().all()
    assert votes.lewidi_info["annotators_without_metadata"] == ["Ann846", "Ann847"]
    assert "2 of 4 annotators matched" in votes.read_info


def test_paraphrase_scale_in_numeric_order(tmp_path):
    soft = {str(k): 0.0 for k in range(-5, 6)}
    doc = {"108774": _item25({"Ann1": "-4", "Ann2": "-3", "Ann3": "0", "Ann4": "-1"},
                             {**soft, "-4": 0.25, "-3": 0.25, "-1": 0.25, "0": 0.25})}
    votes = read_lewidi(_write(tmp_path / "Paraphrase_dev.json", doc), annotator_metadata=False)
    assert votes.labels.names == tuple(str(k) for k in range(-5, 6))
    assert votes.labels.scale == "ordinal" and votes.labels.values[0] == -5
    assert votes.lewidi_info["soft_label_mismatches"] == []
    assert votes.lewidi_info["annotator_metadata"] == "none"


def test_mp_binary_with_float_keys_and_unprefixed_metadata(tmp_path):
    doc = {"2": _item25({"Ann0": "0", "Ann20": "1", "Ann59": "1"}, {"0.0": 0.3333333333333333,
                                                                    "1.0": 0.6666666666666666}),
           "5": _item25({"Ann0": "0", "Ann7": "0"}, {"0.0": 1.0, "1.0": 0})}
    for rec in doc.values():
        del rec["number of annotators"]  # MP files have no such field
    _write(tmp_path / "MP_annotators_meta.json",
           {"0": {"Age": 19.0, "Gender": "Female"}, "20": {"Age": 34.0, "Gender": "Male"}})
    votes = read_lewidi(_write(tmp_path / "MP_dev.json", doc))
    assert votes.labels.names == ("0", "1") and votes.lewidi_info["scale"] == "nominal"
    assert votes.labels.scale == "nominal"
    np.testing.assert_array_equal(file_soft_labels(votes), [[1 / 3, 2 / 3], [1.0, 0.0]])
    assert votes.lewidi_info["soft_label_mismatches"] == []
    assert votes.annotator_metadata.loc["Ann20", "Gender"] == "Male"
    assert "'Ann' prefix" in votes.read_info


def test_varierrnli_multilabel_responses(tmp_path):
    doc = {"49807": _item25({"Ann1": "neutral", "Ann2": "entailment,neutral", "Ann3": "neutral",
                             "Ann4": "entailment"},
                            {"contradiction": {"0": 1.0, "1": 0.0}, "entailment": {"0": 0.5, "1": 0.5},
                             "neutral": {"0": 0.25, "1": 0.75}}),
           "76947": _item25({"Ann1": "neutral", "Ann3": "entailment,neutral", "Ann4": "neutral"},
                            {"contradiction": {"0": 1.0, "1": 0.0},
                             "entailment": {"0": 0.667, "1": 0.333}, "neutral": {"0": 0.0, "1": 1.0}}),
           "1": _item25({"Ann1": "contradiction", "Ann2": "contradiction"},
                        {"contradiction": {"0": 0.5, "1": 0.5}, "entailment": {"0": 1.0, "1": 0.0},
                         "neutral": {"0": 1.0, "1": 0.0}})}  # wrong: both ticked contradiction
    doc["49807"]["number of annotations"] = 5
    doc["76947"]["number of annotations"] = 4
    with pytest.warns(DegenerateInputWarning, match=r"soft label mismatches: 1 item\(s\), e.g. \['1'\]"):
        votes = read_lewidi(_write(tmp_path / "VariErrNLI_dev.json", doc))
    assert votes.lewidi_info["multilabel"] and votes.lewidi_info["scale"] == "multilabel"
    assert votes.labels.names == ("contradiction", "entailment", "neutral")
    assert votes.n_votes == 5 + 4 + 2 and votes.n_annotators == 4
    np.testing.assert_allclose(multilabel_soft_labels(votes),
                               [[0, 0.5, 0.75], [0, 1 / 3, 1.0], [1.0, 0, 0]])
    np.testing.assert_allclose(file_soft_labels(votes), [[0, 0.5, 0.75], [0, 0.333, 1.0], [0.5, 0, 0]])
    assert votes.lewidi_info["count_mismatches"] == []


def test_2025_single_label_file_refuses_a_label_list(tmp_path):
    doc = {"1": _item25({"Ann1": "1,2"}, {"1": 0.5, "2": 0.5})}
    with pytest.raises(DataFormatError, match="gave several labels"):
        read_lewidi(_write(tmp_path / "CSC_dev.json", doc))


def test_test_split_without_annotations(tmp_path):
    bare = {"1": {"text": {"a": "b"}, "annotators": "Ann1,Ann2", "split": "test"},
            "2": {"text": {"a": "c"}, "annotators": "Ann1,Ann2", "split": "test", "annotations": {}}}
    with pytest.raises(DataFormatError, match="none of its 2 items has annotations"):
        read_lewidi(_write(tmp_path / "MP_test.json", bare))
    some = {**bare, "3": _item25({"Ann1": "0", "Ann2": "1"}, {"0.0": 0.5, "1.0": 0.5})}
    path = _write(tmp_path / "MP_test.json", some)
    with pytest.raises(DataFormatError, match=r"2 item\(s\) have no annotations, e.g. \['1', '2'\]"):
        read_lewidi(path)
    with pytest.warns(DegenerateInputWarning, match="without annotations left out"):
        votes = read_lewidi(path, unannotated="skip", annotator_metadata=False)
    assert votes.item_ids.tolist() == ["3"]
    assert votes.lewidi_info["skipped_unannotated"] == ["1", "2"]
    assert "items without annotations left out: 2" in votes.read_info


def test_non_lewidi_json_is_not_sniffed(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"uid": "1", "label_counter": {"e": 3}}\n', encoding="utf-8")
    assert not looks_like_lewidi(path) and not looks_like_lewidi(tmp_path)
    counts = Counter(sniff_format(path) for _ in range(2))
    assert counts == {"chaosnli": 2}


# -- the shared 2025 data: every file loads, counts as the file states them ---------------

@pytest.mark.parametrize("dataset,split", [("CSC", "dev"), ("CSC", "test"), ("VariErrNLI", "train"),
                                           ("VariErrNLI", "dev"), ("VariErrNLI", "test")])
def test_shared_2025_files_load_with_the_files_own_counts(shared_data, dataset, split):
    path = shared_data("lewidi2025", dataset, f"{dataset}_{split}.json")
    doc = json.loads(path.read_text(encoding="utf-8"))
    votes = read_votes(path)
    assert votes.item_ids.tolist() == list(doc)
    written = [sum(len(v.split(",")) for v in r["annotations"].values()) for r in doc.values()]
    np.testing.assert_array_equal(votes.counts().sum(axis=1), written)
    stated = [r["number of annotations"] for r in doc.values()]
    assert written == stated and votes.lewidi_info["count_mismatches"] == []
    assert votes.lewidi_info["soft_label_mismatches"] == []  # float noise is not a mismatch
    assert votes.lewidi_info["repeated_pairs"] == []


def test_shared_varierrnli_metadata_with_trailing_commas_is_read(shared_data):
    votes = read_votes(shared_data("lewidi2025", "VariErrNLI", "VariErrNLI_dev.json"))
    assert votes.annotator_metadata.loc["Ann2", "Nationality"] == "German"
    assert ("annotator metadata: VariErrNLI_annotators_meta.json (read leniently: 4 trailing "
            "commas), 4 of 4 annotators matched") in votes.read_info


# -- 2025 annotator metadata as published: lenient, never blocking -----------------------

def _mp_doc():
    doc = {"0": _item25({"Ann0": "1", "Ann17": "1", "Ann61": "0"}, {"0": 0.33, "1": 0.67}),
           "3": _item25({"Ann0": "1", "Ann2": "0"}, {"0": 0.5, "1": 0.5})}
    for rec in doc.values():
        del rec["number of annotators"]
    return doc


def test_mp_like_metadata_with_nan_is_read(tmp_path):
    # MP's file: keys without the Ann prefix, ages as floats, NaN where unknown (not strict JSON)
    (tmp_path / "MP_annotators_meta.json").write_text(
        '{\n    "0": {\n        "Age": 19.0,\n        "Gender": "Female"\n    },\n'
        '    "2": {\n        "Age": NaN,\n        "Gender": "Male"\n    },\n'
        '    "17": {\n        "Age": NaN,\n        "Gender": "DATA_EXPIRED"\n    }\n}\n')
    votes = read_lewidi(_write(tmp_path / "MP_dev.json", _mp_doc()))
    meta = votes.annotator_metadata
    assert meta.loc["Ann0", "Age"] == 19.0 and np.isnan(meta.loc["Ann2", "Age"])
    assert meta.loc["Ann17", "Gender"] == "DATA_EXPIRED" and meta.loc["Ann61"].isna().all()
    assert votes.lewidi_info["annotator_metadata"] == (
        "MP_annotators_meta.json (read leniently: 2 NaN), 3 of 4 annotators matched "
        "(keys read with an 'Ann' prefix)")


def test_paraphrase_like_metadata_with_trailing_commas_is_read(tmp_path):
    (tmp_path / "Paraphrase_annotators_meta.json").write_text(
        '{\n\t"Ann1":{\n\t\t"Gender":"Male",\n\t\t"Age":"26",\n\t\t"Nationality":"Chinese",\n\t},\n'
        '\t"Ann2":{\n\t\t"Gender":"Female",\n\t\t"Age":"30",\n\t\t"Nationality":"Chinese",\n\t}\n}')
    soft = {str(k): 0.0 for k in range(-5, 6)}
    doc = {"108774": _item25({"Ann1": "-4", "Ann2": "-3"}, {**soft, "-4": 0.5, "-3": 0.5})}
    votes = read_votes(_write(tmp_path / "Paraphrase_dev.json", doc))
    assert votes.annotator_metadata["Age"].tolist() == ["26", "30"]
    assert "Paraphrase_annotators_meta.json (read leniently: 2 trailing commas), 2 of 2" in \
        votes.read_info


def test_unreadable_metadata_is_one_warning_and_the_votes_are_read(tmp_path, recwarn):
    (tmp_path / "MP_annotators_meta.json").write_text('{\n  "0": {"Age": 19.0},\n  "2": {"Age" 3}\n}')
    votes = read_lewidi(_write(tmp_path / "MP_dev.json", _mp_doc()))
    messages = [str(w.message) for w in recwarn]
    assert messages == [
        ("MP_annotators_meta.json: not valid JSON, even read leniently (Expecting ':' delimiter, "
         "line 3, column 15); annotator metadata left out (the votes are read without it)")]
    assert votes.n_votes == 5 and votes.annotator_metadata.shape == (4, 0)
    assert votes.lewidi_info["annotator_metadata"] == "MP_annotators_meta.json not read (see the warning)"


def test_metadata_records_that_are_not_objects_are_left_out_with_their_line(tmp_path):
    (tmp_path / "MP_annotators_meta.json").write_text(
        '{\n "0": {"Age": 19.0},\n "2": "unknown",\n "17": {"Age": 40.0}\n}')
    with pytest.warns(DegenerateInputWarning) as caught:
        votes = read_lewidi(_write(tmp_path / "MP_dev.json", _mp_doc()))
    assert [str(w.message) for w in caught] == [
        "MP_annotators_meta.json, line 3: 1 annotator record(s) are not objects, e.g. ['2']; left out"]
    assert votes.annotator_metadata["Age"].tolist()[:2] == [19.0, 40.0]
    assert votes.lewidi_info["annotator_metadata"].endswith("1 record(s) not an object left out")
    (tmp_path / "MP_annotators_meta.json").write_text('[1, 2]')
    with pytest.warns(DegenerateInputWarning, match=r"^MP_annotators_meta.json, line 1: expected an "
                      r"object of annotator records .*; got list; annotator metadata left out"):
        read_lewidi(tmp_path / "MP_dev.json")


def test_vote_files_stay_strict(tmp_path):
    path = tmp_path / "MP_dev.json"
    path.write_text(json.dumps(_mp_doc(), indent=1)[:-2] + ",\n}")  # a trailing comma
    with pytest.raises(DataFormatError, match=r"^MP_dev.json: not valid JSON"):
        read_lewidi(path, annotator_metadata=False)


# -- repeated (item, annotator) pairs in a 2023 file -----------------------------------

def _repeated_doc():
    return {"1": _item23("Ann1,Ann2,Ann3", "1,0,0", {"0": 0.67, "1": 0.33}, "0"),
            "2": _item23("Ann1,Ann2,Ann2,Ann4", "1,1,0,0", {"0": 0.5, "1": 0.5}, "1")}


def test_repeated_pair_is_refused_naming_the_option(tmp_path):
    path = _write(tmp_path / "ConvAbuse_test.json", _repeated_doc())
    with pytest.raises(SchemaError) as exc:
        read_lewidi(path)
    assert str(exc.value) == (
        "ConvAbuse_test.json: 1 (item, annotator) pair(s) have more than one vote, e.g. "
        "[('2', 'Ann2')]; keep one vote of each with duplicates='first' or 'last', or all as "
        "multi-label votes with duplicates='keep'")


@pytest.mark.parametrize("policy,kept,n_votes", [("first", "1", 6), ("last", "0", 6), ("keep", None, 7)])
def test_repeated_pair_is_accepted_and_stated(tmp_path, policy, kept, n_votes):
    path = _write(tmp_path / "ConvAbuse_test.json", _repeated_doc())
    if policy == "keep":
        votes = read_votes(path, duplicates=policy)
    else:
        with pytest.warns(DegenerateInputWarning, match=(
                rf"^ConvAbuse_test.json: 1 repeated \(item, annotator\) pair\(s\); the {policy} "
                rf"vote of each kept, 1 vote\(s\) left out \(--duplicates {policy}\)$")):
            votes = read_votes(path, duplicates=policy)
    assert votes.n_votes == n_votes
    info = votes.lewidi_info
    assert info["repeated_pairs"] == [("2", "Ann2")] and info["duplicates"] == policy
    # the file's own soft labels and counts are checked against the votes as written
    assert info["soft_label_mismatches"] == [] and info["count_mismatches"] == []
    assert info["duplicate_votes_removed"] == (0 if policy == "keep" else 1)
    done = {"first": "the first vote of each kept, 1 vote(s) left out (--duplicates first)",
            "last": "the last vote of each kept, 1 vote(s) left out (--duplicates last)",
            "keep": "all votes kept (--duplicates keep: multi-label)"}[policy]
    assert f"repeated (item, annotator) pairs: 1 (e.g. [('2', 'Ann2')]), {done}" in votes.read_info
    ann2 = (votes.item_index == 1) & (votes.annotator_ids[votes.annotator_index] == "Ann2")
    labels = sorted(votes.labels.names[c] for c in votes.label_index[ann2])
    assert labels == (["0", "1"] if kept is None else [kept])
