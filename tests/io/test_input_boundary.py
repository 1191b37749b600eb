"""The input boundary (annokit.io.source, io.tables): one test per reader defect found."""

from __future__ import annotations

import io
import os
import re
import warnings

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from annokit.errors import DataFormatError, DegenerateInputWarning, InvalidValueError, SchemaError
from annokit.io import read_chaosnli, read_gold, read_long, read_votes
from annokit.io.predictions import read_predictions
from annokit.io.source import MAX_JSON_DEPTH, decode_text, loads_json, loads_json_lenient


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


# -- labels as written -----------------------------------------------------------------------


@pytest.mark.parametrize("ext, sep", [("csv", ","), ("tsv", "\t")])
def test_nan_na_none_null_are_labels_as_written(tmp_path, ext, sep):
    rows = ["item,annotator,label", "1,a,nan", "1,b,NA", "2,a,N/A", "2,b,None", "3,a,null", "3,b,NA"]
    f = _write(tmp_path / f"v.{ext}", "\n".join(r.replace(",", sep) for r in rows) + "\n")
    v = read_votes(f)
    assert list(v.labels.names) == ["N/A", "NA", "None", "nan", "null"]
    assert v.n_votes == 6


def test_declared_missing_words_skip_long_rows_with_a_count(tmp_path):
    f = _write(tmp_path / "v.csv", "item,annotator,label\n1,a,x\n1,b,NA\n2,a,y\n2,b, n/a \n")
    with pytest.warns(DegenerateInputWarning, match=r"v.csv: 2 row\(s\) whose label is a missing"):
        v = read_votes(f, missing=["NA", "n/a"])
    assert v.n_votes == 2 and list(v.labels.names) == ["x", "y"]


def test_declared_missing_words_are_no_vote_in_wide_tables(tmp_path):
    f = _write(tmp_path / "w.csv", "item,a1,a2\n1,x,NA\n2,NA,y\n")
    assert read_votes(f, format="wide", missing=["NA"]).n_votes == 2
    assert list(read_votes(f, format="wide").labels.names) == ["NA", "x", "y"]


def test_empty_label_is_still_an_error_naming_line_and_column(tmp_path):
    f = _write(tmp_path / "v.csv", "item,annotator,label\n1,a,x\n1,b,  \n")
    with pytest.raises(DataFormatError, match="line 3 of v.csv, column 'label': empty label"):
        read_votes(f)


# -- columns -----------------------------------------------------------------------------------


def test_header_names_clashing_after_strip_are_refused(tmp_path):
    f = _write(tmp_path / "v.csv", "item, item ,label\n1,2,x\n")
    with pytest.raises(SchemaError, match=r"column 'item' appears twice \(columns 1 and 2"):
        read_votes(f)


@pytest.mark.parametrize("header", ["item,item,label", "item,label,label",
                                    "item,annotator,annotator,label"])
def test_duplicated_item_label_or_annotator_columns_are_refused(tmp_path, header):
    f = _write(tmp_path / "v.csv", header + "\n" + ",".join("1" * len(header.split(","))) + "\n")
    with pytest.raises(SchemaError, match="appears twice"):
        read_votes(f)


def test_duplicated_answer_columns_in_jsonl_are_refused(tmp_path):
    f = _write(tmp_path / "v.jsonl", '{"item": "1", "answer": "x", "answer": "y"}\n')
    with pytest.raises(DataFormatError, match="key 'answer' appears twice"):
        read_votes(f, format="long")


def test_label_and_answer_columns_conflict_until_one_is_named(tmp_path):
    f = _write(tmp_path / "v.csv", "item,annotator,label,answer\n1,a,x,y\n1,b,x,x\n")
    with pytest.raises(SchemaError, match=r"columns \['label', 'answer'\] could each be the label "
                                          r"column; name one with --label-col"):
        read_votes(f)
    assert read_votes(f, columns={"label": "answer"}).counts().tolist() == [[1, 1]]


def test_unknown_layout_lists_columns_and_the_column_options(tmp_path):
    f = _write(tmp_path / "v.csv", "foo,bar\n1,2\n")
    with pytest.raises(DataFormatError, match=r"columns \['foo', 'bar'\].*--item-col, "
                                              r"--annotator-col, --label-col, --gold-col, --no-header"):
        read_votes(f)


@pytest.mark.parametrize("ext", ["csv", "tsv", "jsonl", "parquet"])
def test_columns_mapping_accepted_for_every_tabular_format(tmp_path, ext):
    rows = {"q": ["1", "1", "2"], "w": ["a", "b", "a"], "resp": ["x", "y", "y"]}
    f = tmp_path / f"v.{ext}"
    if ext == "parquet":
        pq.write_table(pa.table(rows), f)
    elif ext == "jsonl":
        f.write_text("".join(f'{{"q": "{q}", "w": "{w}", "resp": "{r}"}}\n'
                             for q, w, r in zip(*rows.values(), strict=True)))
    else:
        sep = "," if ext == "csv" else "\t"
        f.write_text(sep.join(rows) + "\n"
                     + "".join(sep.join(r) + "\n" for r in zip(*rows.values(), strict=True)))
    v = read_votes(f, columns={"item": "q", "annotator": "w", "label": "resp"})
    assert v.counts().tolist() == [[1, 1], [0, 1]] and v.n_annotators == 2


def test_columns_mapping_for_wide_tables(tmp_path):
    f = _write(tmp_path / "w.csv", "q,truth,a1,a2\n1,x,x,y\n2,,y,y\n")
    v = read_votes(f, format="wide", columns={"item": "q", "gold": "truth"})
    assert v.n_annotators == 2 and v.gold.tolist() == [0, -1]
    with pytest.raises(InvalidValueError, match="a wide table names its item and gold columns only"):
        read_votes(f, format="wide", columns={"label": "a1"})


def test_given_column_that_does_not_exist(tmp_path):
    f = _write(tmp_path / "v.csv", "item,label\n1,x\n")
    with pytest.raises(SchemaError, match=r"v.csv is missing column\(s\) \['who'\] \(given for "
                                          r"annotator\)"):
        read_votes(f, columns={"annotator": "who"})


def test_no_header_reads_item_annotator_label(tmp_path):
    f = _write(tmp_path / "v.csv", "1,a,x\n1,b,y\n2,a,y\n")
    v = read_votes(f, no_header=True)
    assert (v.n_items, v.n_annotators, v.n_votes) == (2, 2, 3)
    assert read_votes(_write(tmp_path / "two.tsv", "1\tx\n2\ty\n"), no_header=True).n_votes == 2
    with pytest.raises(SchemaError, match="a headerless long file has 2 .* got 5"):
        read_votes(_write(tmp_path / "five.csv", "1,2,3,4,5\n"), no_header=True)
    with pytest.raises(InvalidValueError, match="no_header=True applies to CSV and TSV files"):
        read_long(_write(tmp_path / "v.jsonl", '{"item": 1, "label": 2}\n'), no_header=True)


def test_column_options_do_not_apply_to_chaosnli(tmp_path):
    f = _write(tmp_path / "c.jsonl", '{"uid": "u", "label_counter": {"e": 3}}\n')
    with pytest.raises(InvalidValueError, match=re.escape(
            "c.jsonl: columns={'item': ...} names a column of a table; this is read as chaosnli")):
        read_votes(f, columns={"item": "uid"})


# -- nested values -------------------------------------------------------------------------------


@pytest.mark.parametrize("value, kind", [('["x"]', "a list"), ('{"x": 1}', "an object")])
def test_jsonl_labels_that_are_lists_or_objects(tmp_path, value, kind):
    f = _write(tmp_path / "v.jsonl", '{"item": "1", "label": "x"}\n\n{"item": "2", "label": '
               + value + "}\n")
    with pytest.raises(DataFormatError, match=f"line 3 of v.jsonl, column 'label': expected text "
                                              f"or a number; got {kind}"):
        read_votes(f)


@pytest.mark.parametrize("column", [pa.array([["x"], ["y"]]), pa.array([{"k": 1}, {"k": 2}])],
                         ids=["list", "struct"])
def test_parquet_list_and_struct_columns(tmp_path, column):
    pq.write_table(pa.table({"item": ["a", "b"], "label": column}), tmp_path / "v.parquet")
    with pytest.raises(DataFormatError, match="row 0 of v.parquet, column 'label': expected text"):
        read_votes(tmp_path / "v.parquet")


def test_stats_format_wide_on_a_chaosnli_file(tmp_path):
    f = _write(tmp_path / "c.jsonl", '{"uid": "u", "label_counter": {"e": 3, "n": 1}}\n')
    with pytest.raises(DataFormatError, match="c.jsonl is a ChaosNLI file .* not a wide table; "
                                              "read it with format='chaosnli'"):
        read_votes(f, format="wide")


# -- ChaosNLI counts --------------------------------------------------------------------------------


@pytest.mark.parametrize("count, message", [
    ("NaN", "NaN is not valid JSON"), ("Infinity", "Infinity is not valid JSON"),
    ("-Infinity", "-Infinity is not valid JSON"),
    ("1e400", r"label_counter\['e'\] must be a non-negative integer; got inf"),
    ("99999999999999999999999", r"must be a non-negative integer; got 99999999999999999999999"),
])
def test_chaosnli_nonfinite_and_huge_counts(tmp_path, count, message):
    f = _write(tmp_path / "c.jsonl", '{"uid": "u", "label_counter": {"e": ' + count + "}}\n")
    with pytest.raises(DataFormatError, match=f"line 1 of c.jsonl: .*{message}"):
        read_votes(f)


def test_chaosnli_non_numeric_redundant_fields(tmp_path):
    f = _write(tmp_path / "c.jsonl",
               '{"uid": "u", "label_counter": {"e": 3}, "label_count": ["x", 0, 0]}\n')
    with pytest.raises(DataFormatError, match="line 1 of c.jsonl: label_count"):
        read_votes(f)
    f = _write(tmp_path / "d.jsonl", '{"uid": "u", "label_counter": {"e": 3}, "entropy": "x"}\n')
    with pytest.raises(DataFormatError, match="line 1 of d.jsonl: entropy must be a number"):
        read_votes(f)


# -- encodings, JSON depth, odd files ------------------------------------------------------------


def test_encoding_error_names_line_and_byte(tmp_path):
    f = tmp_path / "v.csv"
    f.write_bytes(b"item,annotator,label\n1,a,x\n1,b,caf\xe9\n")
    with pytest.raises(DataFormatError, match=r"v.csv: not UTF-8 text: byte 34 \(line 3\)"):
        read_votes(f)


@pytest.mark.parametrize("label", ["cafe", "caf\u00e9"], ids=["ascii", "utf8"])
def test_the_arrow_csv_path_checks_utf8_unless_the_file_is_ascii(tmp_path, label):
    from annokit.io.fast_csv import read_csv_arrow
    from annokit.io.source import Input

    f = tmp_path / "v.csv"
    f.write_text(f"item,annotator,label\n1,a,x\n1,b,{label}\n", encoding="utf-8")
    table = read_csv_arrow(Input(f, what="votes"), "csv")
    assert table.column("label").to_pylist() == ["x", label]
    assert read_votes(f).labels.names == tuple(sorted(["x", label]))
    f.write_bytes(f"item,annotator,label\n1,a,x\n1,b,{label}\n".encode("latin-1"))
    assert (read_csv_arrow(Input(f, what="votes"), "csv") is None) == (label != "cafe")


def test_bom_is_accepted_for_votes(tmp_path):
    f = tmp_path / "v.csv"
    f.write_bytes(b"\xef\xbb\xbfitem,annotator,label\n1,a,x\n")
    assert read_votes(f).n_votes == 1
    assert decode_text(b"\xef\xbb\xbfab", "x") == "ab"


def test_nul_byte_is_refused(tmp_path):
    f = tmp_path / "v.csv"
    f.write_bytes(b"item,annotator,label\n1,a,x\x00\n")
    with pytest.raises(DataFormatError, match="line 2 holds a NUL character"):
        read_votes(f)


def test_deeply_nested_json_is_refused_without_recursion_error(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    f = _write(tmp_path / "v.jsonl", '{"item": ' + deep + ', "label": "x"}\n')
    with pytest.raises(DataFormatError, match=f"line 1 of v.jsonl: JSON nested deeper than "
                                              f"{MAX_JSON_DEPTH} levels"):
        read_votes(f, format="long")
    with pytest.raises(DataFormatError, match="nested deeper"):
        read_predictions(_write(tmp_path / "p.json", deep))
    assert loads_json("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH, "x") is not None


def test_directories_and_fifos_are_refused(tmp_path):
    with pytest.raises(DataFormatError, match="is a directory; give a regular file, or '-'"):
        read_chaosnli(tmp_path)
    with pytest.raises(DataFormatError, match=r": a directory with no \.parquet, \.csv or "
                                              r"\.tsv files$"):
        read_votes(tmp_path)  # a directory of votes is read as partitions (test_partitions.py)
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    with pytest.raises(DataFormatError, match=r"is a FIFO \(named pipe\)"):
        read_votes(fifo)


def test_dash_reads_standard_input(monkeypatch):
    data = b"item,annotator,label\n1,a,x\n1,b,y\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    v = read_votes("-")
    assert v.n_votes == 2 and v.read_info == ("<stdin>: long table (csv); "
                                          "columns item='item', annotator='annotator', label='label'")


def test_read_info_states_the_format(tmp_path):
    f = _write(tmp_path / "w.csv", "item,a1,a2\n1,x,y\n")
    assert read_votes(f).read_info == "w.csv: wide table (csv), 2 annotator columns"


def test_empty_votes_file(tmp_path):
    with pytest.raises(DataFormatError, match="v.csv is empty: no header line"):
        read_votes(_write(tmp_path / "v.csv", ""))


@pytest.mark.parametrize("read", [read_votes, read_long], ids=["auto", "long"])
def test_file_of_two_byte_order_marks_is_empty(tmp_path, read):
    # Found by tests/io/test_fuzz_readers.py: the decoder drops the first BOM, pandas the second,
    # and the layout sampling let pandas' EmptyDataError escape.
    f = tmp_path / "v.csv"
    f.write_bytes(b"\xef\xbb\xbf\xef\xbb\xbf")
    with pytest.raises(DataFormatError, match=r"^v\.csv is empty: no header line$"):
        read(f)


# -- gold -------------------------------------------------------------------------------------------


def test_blank_gold_cells_mean_no_gold(tmp_path):
    f = _write(tmp_path / "v.csv", "item,annotator,label,gold\n1,a,x,x\n1,b,y,\n2,a,y,\n2,b,y, \n")
    assert read_votes(f).gold.tolist() == [0, -1]
    g = _write(tmp_path / "g.csv", "item,gold\n1,y\n2,\n")
    assert read_gold(g).to_dict() == {"1": "y"}
    v = read_votes(_write(tmp_path / "u.csv", "item,annotator,label\n1,a,x\n2,a,y\n"), gold=g)
    assert v.gold.tolist() == [1, -1]


def test_gold_cells_of_one_item_must_agree(tmp_path):
    f = _write(tmp_path / "v.csv", "item,annotator,label,gold\n1,a,x,x\n1,b,y,y\n")
    with pytest.raises(SchemaError, match="gold must be the same on every row of an item; item '1'"):
        read_votes(f)


# -- size ------------------------------------------------------------------------------------------


def test_sixty_thousand_labels_refused_with_the_memory_estimate(tmp_path):
    f = _write(tmp_path / "v.csv", "item,annotator,label\n"
               + "".join(f"i{i},a,l{i}\n" for i in range(60_000)))
    with pytest.raises(InvalidValueError, match=r"60000 items x 60000 distinct labels need a 26.8 "
                                                r"GiB count matrix \(limit 2.0 GiB\)"):
        read_votes(f)


def test_many_labels_on_few_items_are_fine(tmp_path):
    f = _write(tmp_path / "v.csv", "item,annotator,label\n"
               + "".join(f"i{i % 3},a{i},l{i}\n" for i in range(3000)))
    assert read_votes(f).n_labels == 3000


# -- predictions -----------------------------------------------------------------------------------


def test_zero_byte_prediction_csv(tmp_path):
    f = tmp_path / "p.csv"
    f.write_bytes(b"")
    with pytest.raises(DataFormatError, match="p.csv is empty"):
        read_predictions(f)


@pytest.mark.parametrize("name", ["p.json", "p.jsonl"])
def test_non_utf8_prediction_json(tmp_path, name):
    f = tmp_path / name
    f.write_bytes(b'{"uid": "\xe9", "probs": [0.5, 0.5]}\n')
    with pytest.raises(DataFormatError, match=r"not UTF-8 text: byte 9 \(line 1\)"):
        read_predictions(f)


def test_bom_prefixed_prediction_jsonl(tmp_path):
    f = tmp_path / "p.jsonl"
    f.write_bytes(b'\xef\xbb\xbf{"uid": "a", "probs": [0.5, 0.5]}\n{"uid": "b", "probs": [1, 0]}\n')
    assert read_predictions(f).item_ids.tolist() == ["a", "b"]


def test_prediction_ids_that_are_lists(tmp_path):
    f = _write(tmp_path / "p.jsonl", '{"uid": [1, 2], "probs": [0.5, 0.5]}\n')
    with pytest.raises(DataFormatError, match="line 1 of .*p.jsonl: item id must be text or a number"):
        read_predictions(f)


def test_duplicated_prediction_columns(tmp_path):
    f = _write(tmp_path / "p.csv", "uid,prob_a,prob_a\nx,0.5,0.5\n")
    with pytest.raises(SchemaError, match="column 'prob_a' appears twice"):
        read_predictions(f)


def test_labels_in_a_json_array_file(tmp_path):
    f = _write(tmp_path / "v.json", '[{"item": 1, "label": "x"}, {"item": 2, "label": "NA"}]')
    v = read_votes(f)
    assert v.n_votes == 2 and list(v.labels.names) == ["NA", "x"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.array_equal(v.counts(), [[0, 1], [1, 0]])


# -- lenient JSON for side files (annotator metadata) --------------------------------------

@pytest.mark.parametrize("text, expected, tolerated", [
    ('{"a": 1}', {"a": 1}, []),
    ('{"a": [1, 2,],}', {"a": [1, 2]}, ["2 trailing commas"]),
    ('{"a": 1 , \n // note, with a comma,\n}', {"a": 1}, ["1 trailing comma", "1 comment"]),
    ('/* head */ {"a": -Infinity, "b": Infinity, "c": NaN}', None, ["1 comment", "1 -Infinity",
                                                                  "1 Infinity", "1 NaN"]),
    ('{"x,}": "// not a comment", "y": "a\\",]"}', {"x,}": "// not a comment", "y": 'a",]'}, []),
])
def test_lenient_json_tolerates_trailing_commas_comments_and_nan(text, expected, tolerated):
    doc, found = loads_json_lenient(text, "meta.json")
    assert found == tolerated
    if expected is not None:
        assert doc == expected
    else:
        assert doc["a"] == -np.inf and doc["b"] == np.inf and np.isnan(doc["c"])


@pytest.mark.parametrize("text, message", [
    ('{\n"a": 1,\n"b" 2}', (r"^meta.json: not valid JSON, even read leniently \(Expecting ':' "
                             r"delimiter, line 3, column 5\)$")),
    ('{"a": 1, "a": 2,}', r"^meta.json: not valid JSON \(key 'a' appears twice in one object\)$"),
    ("[" * (MAX_JSON_DEPTH + 1), "nested deeper than"),
])
def test_lenient_json_still_refuses_what_is_not_json(text, message):
    with pytest.raises(DataFormatError, match=message):
        loads_json_lenient(text, "meta.json")
