"""Long or wide decided from the names and the first rows (annokit.io.layout)."""

from __future__ import annotations

import pandas as pd
import pytest

from annokit.errors import DataFormatError, SchemaError
from annokit.io import read_votes, sniff_format


def _write(tmp_path, text, name="v.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_long_table_whose_label_column_is_named_category(tmp_path):
    path = _write(tmp_path, "item,annotator,category\nq1,a,x\nq1,b,y\nq2,a,x\n")
    votes = read_votes(path)
    assert sniff_format(path) == "long"
    assert votes.n_votes == 3 and votes.n_annotators == 2
    assert votes.read_info == ("v.csv: long table (csv); columns item='item', annotator='annotator', "
                               "label='category' (label: the one column besides item and annotator)")
    assert read_votes(path, format="long").counts().tolist() == votes.counts().tolist()


@pytest.mark.parametrize("ext", ["jsonl", "parquet"])
def test_the_label_column_is_found_in_json_lines_and_parquet_too(tmp_path, ext):
    df = pd.DataFrame({"question": ["q1", "q1", "q2"], "worker": ["a", "b", "a"],
                       "category": ["x", "y", "x"]})
    path = tmp_path / f"v.{ext}"
    if ext == "jsonl":
        df.to_json(path, orient="records", lines=True)
    else:
        df.to_parquet(path)
    votes = read_votes(path)
    assert (votes.n_votes, votes.n_annotators) == (3, 2)
    assert votes.read_info.endswith("label='category' (label: the one column besides item and "
                                    "annotator)")


def test_item_and_annotator_without_a_label_column_names_label_col(tmp_path):
    path = _write(tmp_path, "item,annotator\nq1,a\nq1,b\n")
    message = ("v.csv: item ('item') and annotator ('annotator') columns but no label column; got "
               "['item', 'annotator']; name it with --label-col (Python: columns={'label': ...})")
    for fmt in ("auto", "long"):
        with pytest.raises(SchemaError) as info:
            read_votes(path, format=fmt)
        assert str(info.value) == message
    with pytest.raises(SchemaError, match=r"^v.csv: column 'annotator' is named like the annotator "
                                          r"column of a long table, not like an annotator of a wide "
                                          r"table; read the file as a long table \(--format long"):
        read_votes(path, format="wide")
    assert read_votes(_write(tmp_path, "item,annotator,x\nq1,a,l\n"), columns={"label": "x"}).n_votes == 1


def test_two_candidate_label_columns_name_label_col(tmp_path):
    path = _write(tmp_path, "item,annotator,category,confidence\nq1,a,x,3\nq1,b,y,4\n")
    with pytest.raises(SchemaError, match=r"^v.csv: item \('item'\) and annotator \('annotator'\) "
                                          r"columns; any of \['category', 'confidence'\] could be the "
                                          r"label; name it with --label-col \(Python: "
                                          r"columns=\{'label': \.\.\.\}\)$"):
        read_votes(path)
    assert read_votes(path, columns={"label": "category"}).n_votes == 2


def test_repeated_item_ids_mean_one_row_per_vote(tmp_path):
    path = _write(tmp_path, "item,category\nq1,x\nq1,y\nq2,x\n")
    votes = read_votes(path)
    assert votes.n_votes == 3 and votes.annotator_index is None
    assert votes.read_info == ("v.csv: long table (csv); columns item='item', label='category' "
                               "(label: the one column besides item; no annotator ids; item ids "
                               "repeat in 'item', so one row is one vote)")
    with pytest.raises(SchemaError, match=r"^line 3 of v.csv, column 'item': item 'q1' is on a second "
                                          r"row; a wide table has one row per item \(for one row per "
                                          r"vote, read it as a long table: --format long\)$"):
        read_votes(path, format="wide")


def test_repeated_item_ids_with_unnamed_annotator_and_label_columns(tmp_path):
    path = _write(tmp_path, "item,person,tag\nq1,a,x\nq1,b,y\nq2,a,x\n")
    with pytest.raises(SchemaError) as info:
        read_votes(path)
    assert str(info.value) == (
        "v.csv: item ids repeat in 'item', so one row is one vote, but which of ['person', 'tag'] "
        "holds the annotator and which the label is not said by their names; name them with "
        "--annotator-col and --label-col (or --format wide)")
    votes = read_votes(path, columns={"annotator": "person", "label": "tag"})
    assert (votes.n_votes, votes.n_annotators) == (3, 2)
    votes = read_votes(path, columns={"annotator": "person"})
    assert votes.read_info.endswith("label='tag' (label: the one column besides item and annotator)")


def test_one_row_per_item_is_wide(tmp_path):
    path = _write(tmp_path, "item,alice,bob\nq1,x,y\nq2,x,\n")
    assert sniff_format(path) == "wide"
    votes = read_votes(path)
    assert (votes.n_votes, list(votes.annotator_ids)) == (3, ["alice", "bob"])
    assert votes.read_info == "v.csv: wide table (csv), 2 annotator columns"


def test_one_row_per_item_and_one_other_column(tmp_path):
    path = _write(tmp_path, "item,category\nq1,x\nq2,y\n")
    votes = read_votes(path)
    assert votes.read_info == ("v.csv: long table (csv); columns item='item', label='category' "
                               "(label: the one column besides item; no annotator ids; one row per "
                               "item; --format wide reads the column as one annotator)")
    assert list(read_votes(path, format="wide").annotator_ids) == ["category"]


def test_only_an_item_column(tmp_path):
    with pytest.raises(SchemaError, match=r"^v.csv: 'item' is the only column; a long table needs a "
                                          r"label column \(--label-col\), a wide table one column per "
                                          r"annotator$"):
        read_votes(_write(tmp_path, "item\nq1\nq2\n"))
    with pytest.raises(SchemaError, match=r"^v.csv: item ids repeat in 'item', so one row is one vote, "
                                          r"but 'item' is the only column; the votes need a label "
                                          r"column \(--label-col\)$"):
        read_votes(_write(tmp_path, "item\nq1\nq1\n"))


def test_a_wide_table_with_label_like_annotator_columns_is_refused(tmp_path):
    path = _write(tmp_path, "item,answer,bob\nq1,x,y\n")
    assert read_votes(path).read_info.startswith("v.csv: long table (csv); columns item='item', "
                                                 "label='answer'")
    with pytest.raises(SchemaError, match=r"^v.csv: column 'answer' is named like the label column"):
        read_votes(path, format="wide")


def test_pandas_index_column_is_not_an_annotator(tmp_path):
    path = tmp_path / "w.csv"
    pd.DataFrame({"item": ["q1", "q2"], "alice": ["x", "y"], "bob": ["y", None]}).to_csv(path)
    votes = read_votes(path)
    assert list(votes.annotator_ids) == ["alice", "bob"] and votes.n_votes == 3
    assert votes.read_info == ("w.csv: wide table (csv; unnamed row-number column ignored), "
                               "2 annotator columns")


def test_second_tier_spellings_are_used_only_when_no_usual_one_is_there(tmp_path):
    votes = read_votes(_write(tmp_path, "doc_id,coder_id,code\nd1,a,x\nd1,b,y\n"))
    assert votes.read_info == ("v.csv: long table (csv); columns item='doc_id', annotator='coder_id', "
                               "label='code' (label: the one column besides item and annotator)")
    votes = read_votes(_write(tmp_path, "item,sentence_id,annotator,label\nq1,s1,a,x\nq1,s1,b,y\n"))
    assert votes.read_info.endswith("columns item='item', annotator='annotator', label='label'")


def test_json_lines_longer_than_the_sample(tmp_path):
    """The layout is decided from the first 64 KiB; a first line longer than that is read whole."""
    import json

    path = tmp_path / "v.jsonl"
    path.write_text("".join(json.dumps({"item": "q1", "annotator": f"a{i}", "category": "x",
                                        "note": "w" * 70000 if i == 0 else ""}) + "\n"
                            for i in range(2)))
    with pytest.raises(SchemaError, match=r"any of \['category', 'note'\] could be the label; name "
                                          r"it with --label-col \(Python: "):
        read_votes(path)
    assert read_votes(path, columns={"label": "category"}).n_votes == 2


def test_unnamed_columns_get_no_role(tmp_path):
    with pytest.raises(SchemaError, match=r"^v.csv: column 3 has no name in the header; name it "
                                          r"\(e.g. label\) so its role can be read$"):
        read_votes(_write(tmp_path, "item,annotator,\nq1,a,x\nq1,b,y\n"))
    with pytest.raises(SchemaError, match=r"^v.csv: column 2 has no name, so it cannot be an annotator "
                                          r"of a wide table; name it in the header, or remove it$"):
        read_votes(_write(tmp_path, "item,,bob\nq1,x,y\nq2,y,x\n"))


def test_annotator_and_label_and_one_other_column(tmp_path):
    votes = read_votes(_write(tmp_path, "sentence,annotator,label\nthe cat,a,x\nthe cat,b,y\n"))
    assert votes.read_info == ("v.csv: long table (csv); columns item='sentence', annotator='annotator', "
                               "label='label' (item: the one column besides annotator and label)")
    with pytest.raises(DataFormatError, match=r"^v.csv: cannot tell the format from columns "
                                              r"\['sentence', 'source', 'annotator', 'label'\]"):
        read_votes(_write(tmp_path, "sentence,source,annotator,label\ns,w,a,x\n"))


def test_a_gold_file_given_as_votes(tmp_path):
    with pytest.raises(SchemaError, match=r"^v.csv: item \('question'\) and gold \('truth'\) columns "
                                          r"only: a gold file \(give it with --gold\), not votes; "
                                          r"votes need a label column \(--label-col\)$"):
        read_votes(_write(tmp_path, "question,truth\n1,2\n2,0\n"))
