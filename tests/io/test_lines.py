"""The line a message names is the file's physical line (annokit.io.lines): past blank lines,
quoted cells spanning lines (LF, CRLF, CR), rows of empty cells, an Excel ``sep=`` line and a
byte-order mark; found only when a message needs it."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pandas as pd
import pytest

from annokit.errors import DataFormatError, SchemaError
from annokit.io import read_votes
from annokit.io.lines import LineMap, RowLines, RowPlaces, record_lines, row_lines
from annokit.io.predictions import read_predictions
from annokit.io.source import text_lines
from annokit.io.tables import read_table, row_where
from annokit.io.tabular import read_gold

# What precedes the bad row, in files shaped the way spreadsheets and survey tools export them
# (a free-text "comment" column whose cells hold line breaks).
PREFIXES = {
    "blank_line": "a1,x,1,ok\n\n",
    "blank_lines_and_spaces": "a1,x,1,ok\n\n   \n\t\n",
    "quoted_lf": 'a1,x,1,"first line\nsecond line"\n',
    "quoted_crlf": 'a1,x,1,"first line\r\nsecond\r\n\r\nfourth"\r\n',
    "quoted_cr": 'a1,x,1,"old Mac\rline"\n',
    "empty_cells_row": "a1,x,1,ok\n,,,\n",
    "crlf_mixed": "a1,x,1,ok\r\n\r\na2,y,2,ok\n",
}


def _votes_file(tmp_path, prefix, bad_row, *, head="item,annotator,label,comment\n",
                name="v.csv", bom=False, sep_line=False, tail="a3,z,2,fine\n"):
    """The file and the 1-based line its bad row starts on, counted from the text itself."""
    text = ("sep=,\n" if sep_line else "") + head + prefix + bad_row + tail
    path = tmp_path / name
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    before = text[:text.index(bad_row)]
    line = before.count("\n") + before.replace("\r\n", "").count("\r") + 1
    return path, line


CASES = [pytest.param(p, False, False, id=p) for p in PREFIXES] + [
    pytest.param("quoted_lf", True, False, id="bom_quoted_lf"),
    pytest.param("blank_line", False, True, id="sep_line_blank_line"),
    pytest.param("quoted_crlf", True, True, id="bom_sep_line_quoted_crlf"),
]


@pytest.mark.parametrize(("prefix", "bom", "sep_line"), CASES)
def test_unknown_label_names_the_physical_line(tmp_path, prefix, bom, sep_line):
    path, line = _votes_file(tmp_path, PREFIXES[prefix], "bad,y,zz,x\n", bom=bom,
                             sep_line=sep_line)
    with pytest.raises(DataFormatError) as got:
        read_votes(path, labels=["1", "2"])
    assert str(got.value) == (f"line {line} of v.csv, column 'label': unknown label 'zz'; "
                              "expected one of ['1', '2']")


@pytest.mark.parametrize(("prefix", "bom", "sep_line"), CASES)
def test_missing_item_id_names_the_physical_line(tmp_path, prefix, bom, sep_line):
    path, line = _votes_file(tmp_path, PREFIXES[prefix], ",y,2,empty item\n", bom=bom,
                             sep_line=sep_line)
    with pytest.raises(DataFormatError) as got:
        read_votes(path)
    assert str(got.value) == f"line {line} of v.csv, column 'item': empty item id"


def test_the_reproduction_in_the_task(tmp_path):
    """The two files of the report: a blank line, and a quoted id spanning two lines."""
    (tmp_path / "v.csv").write_text("item,annotator,label\na,x,1\n\nb,y,2\nc,z,zz\n")
    (tmp_path / "w.csv").write_text('item,annotator,label\na,x,1\n"b\nc",y,2\nc,z,zz\n')
    for name in ("v.csv", "w.csv"):
        with pytest.raises(DataFormatError) as got:
            read_votes(tmp_path / name, labels=["1", "2"])
        assert str(got.value) == (f"line 5 of {name}, column 'label': unknown label 'zz'; "
                                  "expected one of ['1', '2']")


@pytest.mark.parametrize("prefix", ["blank_line", "quoted_crlf", "empty_cells_row"])
def test_gold_that_differs_within_an_item_names_the_line(tmp_path, prefix):
    path, line = _votes_file(tmp_path, PREFIXES[prefix] + "b1,x,1,1\n", "b1,y,2,2\n",
                             head="item,annotator,label,gold\n")
    with pytest.raises(SchemaError) as got:
        read_votes(path)
    assert str(got.value) == ("v.csv, column 'gold': gold must be the same on every row of an "
                              f"item; item 'b1' has '1' and '2' (line {line})")


@pytest.mark.parametrize("prefix", ["blank_line", "quoted_lf", "quoted_crlf"])
def test_a_gold_file_with_an_empty_item_names_the_line(tmp_path, prefix):
    (tmp_path / "v.csv").write_text("item,annotator,label\na1,x,1\nb1,y,2\n")
    path, line = _votes_file(tmp_path, PREFIXES[prefix], ",y,2,no item\n",
                             head="item,annotator,gold,comment\n", name="g.csv")
    with pytest.raises(DataFormatError) as got:
        read_gold(path)
    assert str(got.value) == f"line {line} of g.csv, column 'item': empty item id"
    with pytest.raises(DataFormatError) as got:
        read_votes(tmp_path / "v.csv", gold=path)
    assert str(got.value) == f"line {line} of g.csv, column 'item': empty item id"


# quoted item ids spanning lines where every other column is read as numbers or annotators
QUOTED_IDS = {"blank_line": "a1,1,2\n\n", "quoted_lf": '"a\n0",1,2\n',
              "quoted_crlf": '"a\r\n0",1,2\r\n', "empty_cells_row": "a1,1,2\n,,\n"}


@pytest.mark.parametrize("prefix", ["blank_line", "quoted_lf", "empty_cells_row"])
def test_a_wide_table_item_on_a_second_row_names_the_line(tmp_path, prefix):
    rows = QUOTED_IDS[prefix] + "c1,1,1\n"
    path, line = _votes_file(tmp_path, rows, "c1,2,2\n", head="item,w1,w2\n", tail="")
    with pytest.raises(SchemaError) as got:
        read_votes(path, format="wide")
    assert str(got.value) == (
        f"line {line} of v.csv, column 'item': item 'c1' is on a second row; a wide table has one "
        "row per item (for one row per vote, read it as a long table: --format long)")


@pytest.mark.parametrize("prefix", ["blank_line", "quoted_lf", "quoted_crlf", "empty_cells_row"])
def test_a_bad_prediction_value_names_the_line(tmp_path, prefix):
    rows = QUOTED_IDS[prefix].replace(",1,2", ",0.5,0.5")
    path, line = _votes_file(tmp_path, rows, "b1,0.2,x\n", head="item,1,2\n", name="p.csv",
                             tail="")
    with pytest.raises(DataFormatError) as got:
        read_predictions(path)
    assert str(got.value) == (f"line {line} of {path}: column '2' is not numeric (got 'x'); "
                              "class columns used: ['1', '2'] (every column but the id is read "
                              "as a class unless the classes are named prob_<label> or "
                              "logit_<label>: rename them so, and other columns are not read)")


def test_the_lines_of_duplicated_prediction_ids_across_blank_lines(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text('item,1,2\n"a\n1",0.5,0.5\n\n"a\n1",0.2,0.8\n')
    with pytest.raises(DataFormatError) as got:
        read_predictions(path)
    assert str(got.value) == (f"{path}: item id 'a\\n1' appears more than once (line 2, line 5); "
                              "1 duplicated id(s) in all")


def test_skipped_missing_labels_keep_the_lines_of_the_rows_after_them(tmp_path):
    path = tmp_path / "v.csv"
    path.write_text('item,annotator,label,comment\na1,x,NA,"a\nb"\n\na2,y,1,ok\n,z,2,no item\n')
    with pytest.warns(UserWarning, match="1 row"), pytest.raises(DataFormatError) as got:
        read_votes(path, missing=["NA"])
    assert str(got.value) == "line 6 of v.csv, column 'item': empty item id"


def test_json_lines_count_blank_lines_and_keep_a_line_separator_inside_a_string(tmp_path):
    """U+2028 is legal inside a JSON string; str.splitlines would cut the row there."""
    path = tmp_path / "v.jsonl"
    path.write_text('{"item": "a", "annotator": "x", "label": "1", "note": "p\u2028q"}\r\n\n'
                    '{"item": "b", "annotator": "y", "label": "zz"}\n', encoding="utf-8")
    with pytest.raises(DataFormatError) as got:
        read_votes(path, labels=["1", "2"])
    assert str(got.value) == ("line 3 of v.jsonl, column 'label': unknown label 'zz'; expected "
                              "one of ['1', '2']")


def test_json_lines_predictions_with_a_line_separator_in_a_string(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"item": "a", "probs": [0.5, 0.5], "note": "p\u2028q"}\n\n'
                    '{"item": "b", "probs": [0.5, "x"]}\n', encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"^line 3 of .*p\.jsonl: probs is not a list of "
                                              r"numbers"):
        read_predictions(path)


def test_parquet_keeps_rows(tmp_path):
    path = tmp_path / "v.parquet"
    pd.DataFrame({"item": ["a", "b", "c"], "annotator": ["x", "y", "z"],
                  "label": ["1", "2", "zz"]}).to_parquet(path, index=False)
    with pytest.raises(DataFormatError) as got:
        read_votes(path, labels=["1", "2"], missing=["NA"])  # the general path, through pandas
    assert str(got.value) == ("row 2 of v.parquet, column 'label': unknown label 'zz'; expected "
                              "one of ['1', '2']")


# -- the helper itself ------------------------------------------------------------------


def _oracle(text):
    """Record start lines by walking the text character by character (RFC 4180 quotes)."""
    starts, line, quoted, at_start, i = [], 1, False, True, 0
    content = False
    while i < len(text):
        ch = text[i]
        if at_start:
            start, at_start, content = line, False, False
        if ch == '"':
            if quoted and text[i + 1:i + 2] == '"':
                i += 1
            else:
                quoted = not quoted
            content = True
        elif ch in "\r\n":
            if ch == "\r" and text[i + 1:i + 2] == "\n":
                i += 1
            if not quoted:
                if content:
                    starts.append(start)
                at_start = True
            line += 1
        elif ch not in " \t":
            content = True
        i += 1
    if not at_start and content:
        starts.append(start)
    return starts


@pytest.mark.parametrize("seed", range(4))
def test_record_lines_match_a_character_walk(seed):
    rng = np.random.default_rng(seed)
    pieces = ["a,b", "c,1", '"x\ny",2', '"p\r\nq\r\n",3', '"r""s",4', "", "  ", '"t\ru",5', ",,"]
    breaks = ["\n", "\r\n", "\r"]
    for _ in range(200):
        text = "".join(str(rng.choice(pieces)) + str(rng.choice(breaks))
                       for _ in range(int(rng.integers(1, 9))))
        starts, _ = record_lines(text)
        assert starts.tolist() == _oracle(text), repr(text)


def test_record_lines_without_quotes_agree_with_the_csv_scan():
    """Two scans, one answer: numpy over the bytes (no quotes) and the csv module."""
    text = "h1,h2\r\na,1\n   \n\nb,2\r\rc,3\n,\n \xa0 ,\xa0\n\t\nd,4"
    plain = record_lines(text)
    quoted = record_lines(text + '\n"e",5')
    np.testing.assert_array_equal(plain[0], quoted[0][:-1])
    np.testing.assert_array_equal(plain[1], quoted[1][:-1])
    assert plain[0].tolist() == [1, 2, 5, 7, 8, 9, 11]
    assert plain[1].tolist() == [False, False, False, False, True, True, False]


def test_record_lines_of_tab_separated_text():
    starts, blank = record_lines("a\tb\n \t\n\t\nc\td\n", sep="\t", quoting=False)
    assert starts.tolist() == [1, 2, 3, 4]  # a line holding the separator is a row
    assert blank.tolist() == [False, True, True, False]


def test_rows_match_what_read_table_keeps(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('item,note\r\na,"x\r\ny"\r\n\r\n,\r\nb,\r\n  \r\nc,"1\n2\n3"\nd,4\n')
    df = read_table(path)
    assert df["item"].tolist() == ["a", "b", "c", "d"]
    assert row_lines(df.attrs, np.arange(4)).tolist() == [2, 6, 8, 11]


def test_the_line_map_reads_nothing_until_asked(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("item,label\na,1\n\nb,2\n")
    df = read_table(path)
    lines = df.attrs["annokit_lines"]
    assert isinstance(lines, LineMap) and lines._starts is None
    assert copy.deepcopy(df.attrs)["annokit_lines"] is lines  # pandas' copies share it
    again = pickle.loads(pickle.dumps(lines))  # sent to a Dask worker: scanned there
    assert again._starts is None and again[1] == 4 and lines[1] == 4
    assert lines.take([1]).lines([0]).tolist() == [4]
    path.write_text("item,label\na,1\n")  # the file changed since: no line rather than a wrong one
    assert LineMap(path)[1] == 0
    path.unlink()  # gone: the message names the row
    assert LineMap(path)[0] == 0


def test_a_file_deleted_before_the_message_names_the_row(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("item,label\na,1\n\nb,zz\n")
    df = read_table(path)
    path.unlink()
    assert row_where(df, 1) == "row 1"


def test_places_of_stacked_tables():
    places = RowPlaces.concat([RowPlaces([(RowLines([3, 5]), 2)]),
                               np.array(["row 0"], dtype=object)])
    assert [places[i] for i in range(len(places))] == ["line 3", "line 5", "row 0"]
    assert places[-1] == "row 0"


def test_text_lines_split_only_at_line_breaks():
    assert text_lines("a\u2028b\x85c\r\n\rd\n") == ["a\u2028b\x85c", "", "d"]


def test_a_headerless_file_counts_its_first_line_as_a_row(tmp_path):
    path = tmp_path / "v.csv"
    path.write_text('a1,x,1\n\n"b\n1",y,2\n\nc1,z,zz\n')
    with pytest.raises(DataFormatError) as got:
        read_votes(path, no_header=True, labels=["1", "2"])
    assert str(got.value) == ("line 6 of v.csv, column 'column3': unknown label 'zz'; expected "
                              "one of ['1', '2']")


def test_a_semicolon_file_with_a_sep_line_given_sep_too(tmp_path):
    path = tmp_path / "v.csv"
    path.write_text('sep=;\nitem;annotator;label\na1;x;1\n\n"b\n1";y;2\nc1;z;zz\n')
    for sep in (None, ";"):
        with pytest.raises(DataFormatError) as got:
            read_votes(path, labels=["1", "2"], sep=sep)
        assert str(got.value) == ("line 7 of v.csv, column 'label': unknown label 'zz'; expected "
                                  "one of ['1', '2']")
