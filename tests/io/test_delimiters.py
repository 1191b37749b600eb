"""Delimited text tables as spreadsheets and data tools write them.

Each file holds the same three votes, written the way Excel (European locale), LibreOffice,
Google Sheets, pandas and R write a CSV or TSV; each must read as the same votes, with the
separator it was read with stated in ``read_info``.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest

from annokit.errors import DataFormatError, InvalidValueError
from annokit.io import read_gold, read_table, read_votes
from annokit.io.delimited import SAMPLE_CHARS, parse_sep, sniff_dialect
from annokit.io.predictions import read_predictions

from _shared import data_path

ROWS = [("q1", "a", "yes"), ("q1", "b", "no, not really"), ("q2", "a", "yes")]


def _csv(sep=",", *, quoting=csv.QUOTE_MINIMAL, header=("item", "annotator", "label"),
         lineterminator="\n", rows=ROWS):
    out = io.StringIO()
    writer = csv.writer(out, delimiter=sep, quoting=quoting, lineterminator=lineterminator)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def _pandas(shuffled=False, **kwargs):
    out = io.StringIO()
    frame = pd.DataFrame(ROWS, columns=["item", "annotator", "label"])
    if shuffled:  # rows shuffled, sampled or split off after the index was made
        frame.index = [7, 3, 12]
    frame.to_csv(out, **kwargs)
    return out.getvalue()


SHAPES = {
    "excel_eu_semicolon_bom_crlf": ("v.csv", b"\xef\xbb\xbf" + _csv(";", lineterminator="\r\n").encode(),
                                    "csv; separator ';' sniffed, --sep to override"),
    "tsv_saved_as_csv": ("v.csv", _csv("\t").encode(), "csv; separator tab sniffed, --sep to override"),
    "libreoffice_quoted_text": ("v.csv", _csv(",", quoting=csv.QUOTE_NONNUMERIC).encode(), "csv"),
    "google_sheets_crlf": ("v.csv", _csv(",", lineterminator="\r\n").encode(), "csv"),
    "pipe_txt": ("v.txt", _csv("|").encode(), "tsv; separator '|' sniffed, --sep to override"),
    "csv_named_tsv": ("v.tsv", _csv(",").encode(), "tsv; separator ',' sniffed, --sep to override"),
    "pandas_index": ("v.csv", _pandas().encode(), "csv; unnamed row-number column ignored"),
    "pandas_index_shuffled": ("v.csv", _pandas(shuffled=True).encode(),
                              "csv; unnamed row-number column ignored"),
    "pandas_tsv_index": ("v.tsv", _pandas(sep="\t").encode(), "tsv; unnamed row-number column ignored"),
    "r_write_csv": ("v.csv", (b'"","item","annotator","label"\n"1","q1","a","yes"\n'
                              b'"2","q1","b","no, not really"\n"3","q2","a","yes"\n'),
                    "csv; unnamed row-number column ignored"),
    "r_write_table_tab": ("v.tsv", (b'"item"\t"annotator"\t"label"\n"q1"\t"a"\t"yes"\n'
                                    b'"q1"\t"b"\t"no, not really"\n"q2"\t"a"\t"yes"\n'), "tsv"),
    "excel_trailing_empty_columns": ("v.csv", _csv(";", header=("item", "annotator", "label", "", ""),
                                                   rows=[r + ("", "") for r in ROWS]).encode(),
                                     "csv; separator ';' sniffed, --sep to override; 2 empty unnamed "
                                     "trailing column(s) ignored"),
    "header_with_spaces": ("v.csv", _csv(",", header=(" item ", "annotator ", " label")).encode(), "csv"),
    "hand_typed_comma_space": ("v.csv", b"item, annotator, label\nq1, a, yes\nq1, b, \"no, not really\"\n"
                                        b"q2, a, yes\n", "csv"),
    "extra_empty_fields_on_some_lines": ("v.csv", (_csv(",").replace("q2,a,yes", "q2,a,yes,,")).encode(),
                                         "csv; 2 empty unnamed trailing column(s) ignored"),
    "excel_sep_line": ("v.csv", b"sep=;\r\n" + _csv(";", lineterminator="\r\n").encode(),
                       "csv; separator ';' named by its sep= line, --sep to override"),
    "excel_unicode_text_utf16": ("v.txt", _csv("\t", lineterminator="\r\n").encode("utf-16"), "tsv"),
    "excel_phantom_rows": ("v.csv", (_csv(";") + ";;\n;;\n").encode(),
                           "csv; separator ';' sniffed, --sep to override; 2 empty row(s) ignored"),
    "pandas_round_trip_unnamed_0": ("v.csv", _pandas().replace(",item,", ",Unnamed: 0,item,").replace(
        "\n0,", "\n0,0,").replace("\n1,", "\n1,1,").replace("\n2,", "\n2,2,").replace(
        ",Unnamed", ",Unnamed", 1).encode(), "csv; 2 unnamed row-number columns ignored"),
    "old_mac_cr": ("v.csv", _csv(";", lineterminator="\r").encode(),
                   "csv; separator ';' sniffed, --sep to override"),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_spreadsheet_and_tool_exports_read_as_the_same_votes(tmp_path, shape):
    name, data, read_as = SHAPES[shape]
    path = tmp_path / name
    path.write_bytes(data)
    votes = read_votes(path)
    assert votes.to_long()[["item", "annotator", "label"]].values.tolist() == [list(r) for r in ROWS]
    assert votes.read_info == (f"{name}: long table ({read_as}); columns item='item', "
                               "annotator='annotator', label='label'")


def test_wide_table_from_a_european_spreadsheet(tmp_path):
    path = tmp_path / "w.csv"
    path.write_bytes(b"\xef\xbb\xbfitem;alice;bob;;\r\nq1;yes;no;;\r\nq2;;yes;;\r\n")
    votes = read_votes(path)
    assert votes.read_info == ("w.csv: wide table (csv; separator ';' sniffed, --sep to override; "
                               "2 empty unnamed trailing column(s) ignored), 2 annotator columns")
    assert votes.n_votes == 3 and list(votes.annotator_ids) == ["alice", "bob"]


def test_the_gold_file_is_sniffed_too(tmp_path):
    gold = tmp_path / "gold.csv"
    gold.write_text("item;gold\nq1;yes\nq2;no, not really\n")
    assert read_gold(gold).to_dict() == {"q1": "yes", "q2": "no, not really"}
    votes = tmp_path / "v.csv"
    votes.write_text(_csv("\t"))
    read = read_votes(votes, gold=gold)
    assert [read.labels.names[g] for g in read.gold] == ["yes", "no, not really"]


def test_sep_forces_the_separator(tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("item|annotator|label\nq1|a|x;y\nq1|b|z\n")
    assert read_votes(path).read_info.startswith("v.csv: long table (csv; separator '|' sniffed")
    votes = read_votes(path, sep="|")
    assert votes.read_info.startswith("v.csv: long table (csv; separator '|' given); ")
    assert list(votes.labels.names) == ["x;y", "z"]
    for text in ("tab", "\\t", "\t"):
        assert parse_sep(text) == "\t"
    with pytest.raises(InvalidValueError, match=r"--sep ':': expected one of ',' ';' '\|' or tab"):
        read_votes(path, sep=":")
    with pytest.raises(DataFormatError, match=r"^v.csv: --sep ';' does not split the header line; "
                                              r"'\|' does \(give --sep '\|', or leave --sep out to "
                                              r"sniff it\)$"):
        read_votes(path, sep=";")


def test_sep_does_not_apply_to_json_and_parquet(tmp_path):
    path = tmp_path / "v.jsonl"
    path.write_text('{"item": "q1", "annotator": "a", "label": "x"}\n')
    with pytest.raises(InvalidValueError, match=r"^v.jsonl: --sep applies to delimited text files "
                                                r"\(CSV, TSV\); this is a jsonl file$"):
        read_votes(path, sep=";")


def test_two_separators_that_both_fit_are_refused_unless_the_extension_names_one(tmp_path):
    text = "item,annotator;x,label\nq1,a;1,yes\nq1,b;2,no\n"
    assert sniff_dialect(text, "v.csv", kind="csv", complete=True).sep == ","
    with pytest.raises(DataFormatError, match=r"^v.txt: cannot tell the separator: ';' and '\|' "
                                              r"each split the header and the first lines alike; "
                                              r"name it with --sep \(e.g. --sep ';'\)$"):
        sniff_dialect("item|annotator;x|label\nq1|a;1|yes\n", "v.txt", kind="tsv", complete=True)


@pytest.mark.parametrize("text, message", [
    ("item,annotator,label\nq1,a,x\nq1,b,y,z\nq2,a,x\n",
     "v.csv: line 3 has 4 fields, the header has 3 (read as comma-separated: quote a field that "
     "holds a comma, or name the separator with --sep)"),
    ("item;annotator;label\r\nq1;a;x\r\n\r\nq1;b;\"y\r\nq2;a;x\r\n",
     "v.csv: line 4: a quoted field opened on this line is never closed (unterminated quote)"),
    ('item,annotator,label\nq1,a,"multi\nline"\nq2,a,x,y\n',
     "v.csv: line 4 has 4 fields, the header has 3 (read as comma-separated: quote a field that "
     "holds a comma, or name the separator with --sep)"),
], ids=["ragged_row", "unterminated_quote_crlf", "line_after_a_multiline_field"])
def test_parse_errors_name_the_file_and_line_in_our_words(tmp_path, text, message):
    path = tmp_path / "v.csv"
    path.write_bytes(text.encode())
    with pytest.raises(DataFormatError) as info:
        read_votes(path)
    assert str(info.value) == message
    assert "C error" not in str(info.value) and "tokenizing" not in str(info.value)


def test_sniffing_reads_a_sample_not_the_whole_file(tmp_path):
    """The separator comes from the first 64 KiB; a ragged line far below is still found by
    the full read, with its line number."""
    n = SAMPLE_CHARS // 10 + 1000
    body = "".join(f"q{i};a;x\n" for i in range(n))
    path = tmp_path / "v.csv"
    path.write_text("item;annotator;label\n" + body + "q0;b;y;extra\n")
    with pytest.raises(DataFormatError, match=rf"^v.csv: line {n + 2} has 4 fields, the header has 3"):
        read_votes(path)


def test_tab_files_keep_quotes_as_text_unless_the_header_is_quoted(tmp_path):
    path = tmp_path / "v.tsv"
    path.write_text('item\tannotator\tlabel\nq1\ta\t"yes" he said\nq1\tb\t"no\n')
    assert list(read_votes(path).labels.names) == ['"no', '"yes" he said']


def test_tab_files_written_by_pandas_quote_like_csv(tmp_path):
    path = tmp_path / "v.tsv"
    pd.DataFrame({"item": ["q1", "q1", "q2"], "annotator": ["a", "b", "a"],
                  "label": ['he said "hi"', "x\ty", "plain"]}).to_csv(path, sep="\t", index=False)
    assert list(read_votes(path).labels.names) == ['he said "hi"', "plain", "x\ty"]


def test_predictions_with_decimal_commas_in_a_semicolon_file(tmp_path):
    path = tmp_path / "p.csv"
    path.write_bytes(b"\xef\xbb\xbfitem;prob_yes;prob_no\r\nq1;0,25;0,75\r\nq2;1;0\r\n")
    preds = read_predictions(path)
    np.testing.assert_allclose(preds.probs, [[0.25, 0.75], [1.0, 0.0]])
    assert preds.label_names == ("yes", "no")
    mixed = tmp_path / "m.csv"
    mixed.write_text("item;prob_yes;prob_no\nq1;0,25;0,75\nq2;0.5;0,5\n")
    with pytest.raises(DataFormatError, match=r"line 3 of .*m.csv: column 'prob_yes' is not numeric "
                                              r"\(got '0.5'\)|line 2 of .*m.csv: column 'prob_yes' is "
                                              r"not numeric \(got '0,25'\); a decimal comma is read "
                                              r"only in a ';'-separated file where every value"):
        read_predictions(mixed)
    quoted = tmp_path / "q.csv"
    quoted.write_text('item,prob_yes,prob_no\nq1,"0,25","0,75"\n')
    with pytest.raises(DataFormatError, match=r"line 2 of .*q.csv: column 'prob_yes' is not numeric "
                                              r"\(got '0,25'\); a decimal comma is read only in "
                                              r"';'-separated files"):
        read_predictions(quoted)


def test_predictions_tsv_named_csv_and_forced_sep(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("item\tprobs\nq1\t[0.2, 0.8]\n")
    np.testing.assert_allclose(read_predictions(path).probs, [[0.2, 0.8]])
    np.testing.assert_allclose(read_predictions(path, sep="\t").probs, [[0.2, 0.8]])


def test_read_table_states_how_it_read(tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("item;label\nq1;x\n")
    df = read_table(path)
    assert df.attrs["annokit_read_as"] == "csv; separator ';' sniffed, --sep to override"
    assert df.attrs["annokit_sep"] == ";"


@pytest.mark.parametrize("dataset", ["dog", "face", "bluebirds", "product_jn"])
def test_real_crowd_files_read_alike_from_a_european_spreadsheet(tmp_path, dataset):
    """The real answer files, re-written with ';', a BOM and CRLF (European Excel), read as the
    same votes and gold."""
    answers = data_path(dataset, "answer.csv")
    truth = data_path(dataset, "truth.csv")
    plain = read_votes(answers, gold=truth)
    eu_votes, eu_gold = tmp_path / "answer.csv", tmp_path / "truth.csv"
    for src, dst in ((answers, eu_votes), (truth, eu_gold)):
        dst.write_bytes(b"\xef\xbb\xbf" + src.read_text().replace(",", ";").replace("\n", "\r\n").encode())
    eu = read_votes(eu_votes, gold=eu_gold)
    assert (eu.n_votes, eu.n_items, eu.n_annotators) == (plain.n_votes, plain.n_items, plain.n_annotators)
    np.testing.assert_array_equal(eu.counts(), plain.counts())
    np.testing.assert_array_equal(eu.gold, plain.gold)
    assert "separator ';' sniffed" in eu.read_info


def test_an_empty_row_in_the_middle_keeps_the_line_numbers(tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("item;annotator;label\nq1;a;x\n;;\nq1;;y\n")
    with pytest.raises(DataFormatError, match=r"^line 4 of v.csv, column 'annotator': empty "
                                              r"annotator id$"):
        read_votes(path)
    path.write_text("sep=;\nitem;annotator;label\nq1;a;x\n;;\nq1;;y\n")
    with pytest.raises(DataFormatError, match=r"^line 5 of v.csv, column 'annotator': empty "
                                              r"annotator id$"):
        read_votes(path)


def test_spreadsheet_column_names(tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("Item ID;Worker-Id;Label\nq1;a;x\nq1;b;y\n")
    assert read_votes(path).read_info.endswith("columns item='Item ID', annotator='Worker-Id', "
                                               "label='Label'")


def test_files_that_are_not_csv_say_what_to_do(tmp_path):
    sheet = tmp_path / "v.xlsx"
    sheet.write_bytes(b"PK\x03\x04")
    with pytest.raises(DataFormatError, match=r"v.xlsx: unknown file type '.xlsx'; expected one of "
                                              r"\[.*\]; save the sheet as CSV UTF-8"):
        read_votes(sheet)
    latin = tmp_path / "v.csv"
    latin.write_bytes("item;annotator;label\nq1;a;caf\u00e9\n".encode("cp1252"))
    with pytest.raises(DataFormatError, match=r"^v.csv: not UTF-8 text: byte 29 \(line 2\) is "
                                              r"b'\\xe9' \(invalid continuation byte\); save the file "
                                              r"as UTF-8 \(in Excel: CSV UTF-8\)$"):
        read_votes(latin)
    spaces = tmp_path / "s.csv"
    spaces.write_text("item annotator label\nq1 a x\n")
    with pytest.raises(DataFormatError, match=r"^s.csv: the header 'item annotator label' is one "
                                              r"column: none of , ; tab \| splits it into item, "
                                              r"annotator and label columns; write the file with one "
                                              r"of these separators$"):
        read_votes(spaces)
