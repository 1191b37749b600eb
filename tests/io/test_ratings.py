"""Numeric rating tables and declared scales on read (annokit/io/ratings.py)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from annokit.errors import DataFormatError, InvalidValueError, SchemaError
from annokit.io import read_ratings, read_votes

ROWS = [("a", "x", "10"), ("a", "y", "-20.5"), ("b", "x", "3"), ("b", "z", "1e1")]


def _write(tmp_path, kind, rows=ROWS, header=("item", "annotator", "rating")):
    path = tmp_path / f"r.{kind}"
    df = pd.DataFrame(rows, columns=list(header))
    if kind == "csv":
        df.to_csv(path, index=False)
    elif kind == "tsv":
        df.to_csv(path, index=False, sep="\t")
    elif kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in df.to_dict(orient="records")))
    else:
        df.to_parquet(path)
    return path


@pytest.mark.parametrize("kind", ["csv", "tsv", "jsonl", "parquet"])
def test_reads_every_table_kind(tmp_path, kind):
    r = read_ratings(_write(tmp_path, kind))
    assert r.item_ids.tolist() == ["a", "b"] and r.annotator_ids.tolist() == ["x", "y", "z"]
    assert r.values.tolist() == [10.0, -20.5, 3.0, 10.0]
    assert r.scale == "interval"
    assert r.read_info.endswith(f"({kind}); item='item', annotator='annotator', rating='rating', "
                                "scale=interval")


def test_numbers_in_json_and_parquet_columns(tmp_path):
    path = tmp_path / "n.jsonl"
    path.write_text('{"item": 1, "annotator": "x", "score": 4}\n'
                    '{"item": 1, "annotator": "y", "score": 2.5}\n')
    r = read_ratings(path, scale="ratio")
    assert r.values.tolist() == [4.0, 2.5] and r.scale == "ratio" and r.item_ids.tolist() == ["1"]
    pq = tmp_path / "n.parquet"
    pd.DataFrame({"item": ["a", "a"], "value": np.array([1, 2], dtype=np.int64)}).to_parquet(pq)
    r = read_ratings(pq)
    assert r.annotator_ids is None and r.values.tolist() == [1.0, 2.0]


def test_columns_named_and_headerless(tmp_path):
    path = _write(tmp_path, "csv", header=("q", "who", "slider"))
    r = read_ratings(path, columns={"item": "q", "annotator": "who", "rating": "slider"})
    assert r.n_ratings == 4
    assert read_ratings(path, columns={"item": "q", "annotator": "who", "label": "slider"}).n_items == 2
    raw = tmp_path / "h.csv"
    raw.write_text("a,x,1\na,y,2\n")
    assert read_ratings(raw, no_header=True).annotator_ids.tolist() == ["x", "y"]
    raw2 = tmp_path / "h2.csv"
    raw2.write_text("a,1\na,2\n")
    assert read_ratings(raw2, no_header=True).mean().tolist() == [1.5]


@pytest.mark.parametrize("cell, shown", [("abc", "'abc'"), ("inf", "'inf'"), ("nan", "'nan'"),
                                         ("1,5", "'1,5'")])
def test_non_numeric_rating_names_file_line_and_column(tmp_path, cell, shown):
    path = tmp_path / "bad.csv"
    path.write_text(f'item,annotator,rating\na,x,1\na,y,"{cell}"\n')
    with pytest.raises(DataFormatError, match=f"^line 3 of bad.csv, column 'rating': rating {shown} "
                                              "is not a finite number$"):
        read_ratings(path)


def test_json_booleans_and_blanks_are_refused(tmp_path):
    path = tmp_path / "b.jsonl"
    path.write_text('{"item": "a", "rating": 1}\n{"item": "a", "rating": true}\n')
    with pytest.raises(DataFormatError, match="line 2 of b.jsonl, column 'rating': rating True is "
                                              "not a finite number"):
        read_ratings(path)
    blank = tmp_path / "blank.csv"
    blank.write_text("item,rating\na,1\na,\n")
    with pytest.raises(DataFormatError, match="line 3 of blank.csv, column 'rating': empty rating"):
        read_ratings(blank)


def test_column_errors(tmp_path):
    path = _write(tmp_path, "csv", header=("item", "annotator", "comment"))
    with pytest.raises(SchemaError, match=r"r.csv: no rating column; got columns \['item', "
                                          r"'annotator', 'comment'\]"):
        read_ratings(path)
    two = _write(tmp_path, "csv", rows=[("a", "1", "2")], header=("item", "score", "rating"))
    with pytest.raises(SchemaError, match=r"columns \['rating', 'score'\] could each be the rating "
                                          "column"):
        read_ratings(two)
    with pytest.raises(SchemaError, match=r"missing column\(s\) \['nope'\] \(given for rating\)"):
        read_ratings(path, columns={"rating": "nope"})
    with pytest.raises(InvalidValueError, match="Ratings hold interval or ratio data"):
        read_ratings(_write(tmp_path, "csv"), scale="ordinal")
    with pytest.raises(InvalidValueError, match="scale must be one of"):
        read_ratings(_write(tmp_path, "csv"), scale="likert")
    with pytest.raises(InvalidValueError, match=r"is -20.5; ratio data are >= 0"):
        read_ratings(_write(tmp_path, "csv"), scale="ratio")


def test_read_votes_with_a_declared_scale(tmp_path):
    path = tmp_path / "likert.csv"
    path.write_text("item,annotator,label\na,x,-5\na,y,10\nb,x,2\nb,y,-5\n")
    nominal = read_votes(path)
    ordinal = read_votes(path, scale="ordinal")
    assert nominal.labels.scale == "nominal"
    assert ordinal.labels.names == ("-5", "2", "10") and ordinal.labels.scale == "ordinal"
    assert ordinal.counts().tolist() == [[1, 0, 1], [1, 1, 0]]
    assert ordinal.read_info.startswith("likert.csv: long table")
    declared = read_votes(path, scale="ordinal", labels=["10", "2", "-5"])
    assert declared.labels.names == ("10", "2", "-5") and declared.counts().tolist() == [[1, 0, 1], [0, 1, 1]]
    assert read_votes(path, scale="interval").labels.values.tolist() == [-5.0, 2.0, 10.0]
    words = tmp_path / "words.csv"
    words.write_text("item,annotator,label\na,x,low\na,y,high\n")
    with pytest.raises(InvalidValueError, match="cannot be inferred from non-numeric names; declare "
                                                "it with labels="):
        read_votes(words, scale="ordinal")
    assert read_votes(words, scale="ordinal", labels=["low", "high"]).labels.scale == "ordinal"
