"""A directory, glob or list of partitions: which files (``partition_files``) and the votes
``read_votes`` reads from them (those of the files concatenated in order)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from annokit.errors import DataFormatError, InvalidValueError, SchemaError
from annokit.io import partition_files, read_votes
from annokit.io.partitions import is_partitioned


def _votes(n: int = 600, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [(f"q{int(i)}", f"w{int(a)}") for i, a in zip(rng.integers(0, 120, n),
                                                         rng.integers(0, 15, n), strict=True)]
    df = pd.DataFrame(rows, columns=["item", "annotator"]).drop_duplicates().reset_index(drop=True)
    df["label"] = rng.choice(["pos", "neg", "neu"], len(df))
    df["gold"] = np.where(rng.random(len(df)) < 0.1, "pos", "")
    return df


def _split(df: pd.DataFrame, n: int) -> list[pd.DataFrame]:
    return [df.iloc[idx] for idx in np.array_split(np.arange(len(df)), n)]


def _write_csv_parts(folder: Path, df: pd.DataFrame, n: int = 4) -> Path:
    """CSV parts as pandas and spreadsheets export them: CRLF in some, a BOM in one."""
    folder.mkdir()
    for i, part in enumerate(_split(df, n)):
        part.to_csv(folder / f"part-{i:05d}.csv", index=False,
                    lineterminator="\r\n" if i % 2 else "\n",
                    encoding="utf-8-sig" if i == 1 else "utf-8")
    return folder


def _same(a, b) -> None:
    assert list(a.item_ids) == list(b.item_ids)
    assert list(a.labels.names) == list(b.labels.names)
    assert (a.annotator_ids is None) == (b.annotator_ids is None)
    if a.annotator_ids is not None:
        assert list(a.annotator_ids) == list(b.annotator_ids)
    np.testing.assert_array_equal(a.item_index, b.item_index)
    np.testing.assert_array_equal(a.label_index, b.label_index)
    np.testing.assert_array_equal(a.annotator_index, b.annotator_index)
    if a.gold is None or b.gold is None:
        assert a.gold is None and b.gold is None
    else:
        np.testing.assert_array_equal(a.gold, b.gold)


# -- which files --------------------------------------------------------------------------

def test_directory_files_sorted_skipping_hidden_underscore_and_other_types(tmp_path):
    for name in ("part-00001.csv", "part-00000.csv", "_SUCCESS", ".part-00000.csv.crc",
                 "README.md", "sub/part-00002.csv", "_temporary/0/part-00009.csv",
                 ".hidden/part-00008.csv"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("item,annotator,label\n")
    got = [os.path.relpath(f, tmp_path) for f in partition_files(tmp_path)]
    assert got == ["part-00000.csv", "part-00001.csv", os.path.join("sub", "part-00002.csv")]


def test_glob_list_and_single_file(tmp_path):
    for name in ("b.parquet", "a.parquet", "c.pq", "_meta.parquet"):
        (tmp_path / name).write_bytes(b"")
    assert [Path(f).name for f in partition_files(str(tmp_path / "*.parquet"))] == [
        "a.parquet", "b.parquet"]
    listed = [tmp_path / "b.parquet", str(tmp_path / "a.parquet"), tmp_path]
    assert [Path(f).name for f in partition_files(listed)] == [
        "b.parquet", "a.parquet", "a.parquet", "b.parquet", "c.pq"]
    assert partition_files(tmp_path / "c.pq") == [str(tmp_path / "c.pq")]
    assert is_partitioned(tmp_path) and is_partitioned([tmp_path / "c.pq"])
    assert is_partitioned(str(tmp_path / "*.pq")) and not is_partitioned(tmp_path / "c.pq")
    assert not is_partitioned("-") and not is_partitioned(pd.DataFrame())


@pytest.mark.parametrize(("make", "source", "message"), [
    (lambda d: None, "nothing-*.csv", r"nothing-\*\.csv: no file matches this pattern$"),
    (lambda d: None, "missing", r"missing: no such file, directory or matching files$"),
    (lambda d: (d / "x").mkdir() or (d / "x" / "a.json").write_text("[]"), "x",
     r"x: a directory with no \.parquet, \.csv or \.tsv files \(LeWiDi JSON splits: "
     r"--format lewidi\)$"),
    (lambda d: ((d / "a.csv").write_text("") and 0) or (d / "b.parquet").write_bytes(b""), ".",
     r"mixes csv and parquet files \(a\.csv, b\.parquet\); give one kind$"),
    (lambda d: (d / "a.txt").write_text(""), ["a.txt"],
     r"a\.txt: unknown file type; partitions are \.parquet, \.csv or \.tsv files$"),
    (lambda d: None, [], r"^an empty list of input files; give at least one file$"),
], ids=["glob-no-match", "no-such-path", "no-partitions", "mixed-kinds", "unknown-type",
        "empty-list"])
def test_expansion_errors(tmp_path, monkeypatch, make, source, message):
    monkeypatch.chdir(tmp_path)
    make(tmp_path)
    with pytest.raises(DataFormatError, match=message):
        partition_files(source)


# -- the votes: those of the concatenated file ----------------------------------------------

def test_csv_directory_equals_the_concatenated_file(tmp_path):
    df = _votes()
    folder = _write_csv_parts(tmp_path / "votes", df)
    df.to_csv(tmp_path / "all.csv", index=False)
    one = read_votes(tmp_path / "all.csv")
    parts = read_votes(folder)
    _same(parts, one)
    assert parts.gold is not None and (parts.gold >= 0).any()
    assert parts.read_info == ("votes/: long table (csv); columns item='item', "
                               "annotator='annotator', label='label', gold='gold'; 4 csv "
                               "partitions (part-00000.csv ... part-00003.csv)")
    _same(read_votes(str(folder / "part-*.csv")), one)
    _same(read_votes(sorted(folder.iterdir())), one)


def test_parquet_directory_equals_the_file_on_the_fast_and_general_paths(tmp_path):
    df = _votes(seed=1)
    (tmp_path / "votes").mkdir()
    for i, part in enumerate(_split(df, 5)):
        part.to_parquet(tmp_path / "votes" / f"part-{i}.parquet", index=False)
    df.to_parquet(tmp_path / "all.parquet", index=False)
    one = read_votes(tmp_path / "all.parquet")
    _same(read_votes(tmp_path / "votes"), one)
    # --missing takes the general path (the partitions concatenated through pandas)
    _same(read_votes(tmp_path / "votes", missing=["n/a"]),
          read_votes(tmp_path / "all.parquet", missing=["n/a"]))
    # a separate gold file and --scale, as for one file
    pd.DataFrame({"item": ["q1", "q2"], "gold": ["neg", "neu"]}).to_csv(tmp_path / "g.csv",
                                                                         index=False)
    no_gold = df.drop(columns="gold")
    for i, part in enumerate(_split(no_gold, 3)):
        part.to_parquet(tmp_path / f"ng-{i}.parquet", index=False)
    no_gold.to_parquet(tmp_path / "ng.parquet", index=False)
    _same(read_votes(str(tmp_path / "ng-*.parquet"), gold=tmp_path / "g.csv", scale="nominal"),
          read_votes(tmp_path / "ng.parquet", gold=tmp_path / "g.csv", scale="nominal"))


def test_first_seen_order_is_file_order_then_row_order(tmp_path):
    (tmp_path / "p").mkdir()
    pd.DataFrame({"item": ["z", "y"], "annotator": ["b", "a"], "label": ["2", "1"]}).to_csv(
        tmp_path / "p" / "p0.csv", index=False)
    pd.DataFrame({"item": ["a", "z"], "annotator": ["c", "a"], "label": ["3", "1"]}).to_csv(
        tmp_path / "p" / "p1.csv", index=False)
    (tmp_path / "p" / "README.md").write_text("# votes\n")
    votes = read_votes(tmp_path / "p")
    assert votes.read_info.endswith("; 2 csv partitions (p0.csv ... p1.csv); 1 file(s) of other "
                                    "types skipped")
    assert list(votes.item_ids) == ["z", "y", "a"]
    assert list(votes.annotator_ids) == ["b", "a", "c"]


def test_duplicates_across_partitions_as_in_one_file(tmp_path):
    (tmp_path / "p").mkdir()
    pd.DataFrame({"item": ["a", "b"], "annotator": ["w1", "w1"], "label": ["x", "y"]}).to_csv(
        tmp_path / "p" / "p0.csv", index=False)
    pd.DataFrame({"item": ["a"], "annotator": ["w1"], "label": ["y"]}).to_csv(
        tmp_path / "p" / "p1.csv", index=False)
    with pytest.raises(SchemaError, match=r"^p/: 1 \(item, annotator\) pair\(s\) have more than "
                                          r"one vote, e\.g\. \[\('a', 'w1'\)\]"):
        read_votes(tmp_path / "p")
    with pytest.warns(match="the last vote of each kept, 1 vote"):
        last = read_votes(tmp_path / "p", duplicates="last")
    assert last.counts().tolist() == [[0, 1], [0, 1]]
    assert last.read_info.endswith("1 vote(s) left out (--duplicates last); 2 csv partitions "
                                   "(p0.csv ... p1.csv)")


def test_a_single_partition_is_read_as_its_file(tmp_path):
    (tmp_path / "w").mkdir()
    pd.DataFrame({"item": ["a", "b"], "w1": ["x", "y"], "w2": ["x", "x"]}).to_csv(
        tmp_path / "w" / "only.csv", index=False)
    votes = read_votes(tmp_path / "w")
    assert votes.n_annotators == 2
    assert votes.read_info.endswith("; 1 csv partition (only.csv)")


# -- what is refused, and where errors point -----------------------------------------------

def test_bad_label_names_the_partition_and_its_line(tmp_path):
    folder = _write_csv_parts(tmp_path / "v", _votes().drop(columns="gold"), n=3)
    lines = (folder / "part-00002.csv").read_bytes().split(b"\n")
    lines[4] = lines[4].replace(b"pos", b"p0s").replace(b"neg", b"p0s").replace(b"neu", b"p0s")
    (folder / "part-00002.csv").write_bytes(b"\n".join(lines))
    with pytest.raises(DataFormatError, match=r"^line 5 of part-00002\.csv, column 'label': "
                                              r"unknown label 'p0s'; expected one of "):
        read_votes(folder, labels=["neg", "neu", "pos"])


def test_parquet_errors_name_the_partition_and_its_row(tmp_path):
    (tmp_path / "p").mkdir()
    pd.DataFrame({"item": ["a", "b"], "annotator": ["w1", "w1"], "label": ["x", "y"]}).to_parquet(
        tmp_path / "p" / "p0.parquet")
    pd.DataFrame({"item": ["c", "d"], "annotator": ["w1", "w1"], "label": ["x", "zz"]}).to_parquet(
        tmp_path / "p" / "p1.parquet")
    with pytest.raises(DataFormatError, match=r"^row 1 of p1\.parquet, column 'label': unknown "
                                              r"label 'zz'; expected one of \['x', 'y'\]$"):
        read_votes(tmp_path / "p", labels=["x", "y"])
    pd.DataFrame({"item": [1, 2], "annotator": ["w1", "w1"], "label": ["x", "y"]}).to_parquet(
        tmp_path / "p" / "p2.parquet")
    with pytest.raises(SchemaError, match=r"^p2\.parquet: column 'item' is int64, but in "
                                          r"p0\.parquet it is \w*string; every partition needs "
                                          r"the same column types$"):
        read_votes(tmp_path / "p")


def test_header_and_separator_mismatch_name_both_files(tmp_path):
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "a.csv").write_text("item,annotator,label\nq,w,x\n")
    (tmp_path / "h" / "b.csv").write_text("item,worker,label\nq,v,x\n")
    with pytest.raises(SchemaError, match=r"^b\.csv: columns \['item', 'worker', 'label'\] differ "
                                          r"from a\.csv's \['item', 'annotator', 'label'\]; every "
                                          r"partition needs the same header"):
        read_votes(tmp_path / "h")
    (tmp_path / "h" / "b.csv").write_text("item;annotator;label\nq;v;x\nr;v;y\n")
    with pytest.raises(DataFormatError, match=r"^b\.csv: separator ';', but a\.csv's is ','; every "
                                              r"partition needs the same separator \(--sep names "
                                              r"it\)$"):
        read_votes(tmp_path / "h")


def test_wide_counts_and_remote_are_refused(tmp_path):
    (tmp_path / "w").mkdir()
    for i in range(2):
        pd.DataFrame({"item": [f"a{i}", f"b{i}"], "w1": ["x", "y"], "w2": ["x", "x"]}).to_csv(
            tmp_path / "w" / f"p{i}.csv", index=False)
    with pytest.raises(InvalidValueError, match=r"^w/: p0\.csv reads as a wide table; partitions "
                                                r"are read as one long table"):
        read_votes(tmp_path / "w")
    with pytest.raises(InvalidValueError, match=r"^w/: partitions are read as one long table \(one "
                                                r"row per vote\); --format counts reads one file$"):
        read_votes(tmp_path / "w", format="counts")
    with pytest.raises(InvalidValueError, match=r"the in-memory engine reads local files; read a "
                                                r"path with a protocol with --engine dask$"):
        read_votes("s3://bucket/votes/")


def test_hundred_parquet_parts_read_like_one_file(tmp_path):
    """The fast path reads partitions row group after row group: 100 parts are one table."""
    df = _votes(3000, seed=3).drop(columns="gold")
    (tmp_path / "h").mkdir()
    for i, part in enumerate(_split(df, 100)):
        part.to_parquet(tmp_path / "h" / f"part-{i:03d}.parquet", index=False)
    df.to_parquet(tmp_path / "one.parquet", index=False)
    _same(read_votes(tmp_path / "h"), read_votes(tmp_path / "one.parquet"))


def test_spreadsheet_quirks_of_later_parts(tmp_path):
    """A later part with an Excel sep= line, blank lines before its header, UTF-16 text (Excel's
    Unicode Text) or a quoted cell reads as its rows; text that is not UTF-8 names its part."""
    (tmp_path / "q").mkdir()
    (tmp_path / "q" / "p0.csv").write_text("item,annotator,label\na,w1,x\n")
    (tmp_path / "q" / "p1.csv").write_text("sep=,\n\nitem,annotator,label\nb,w1,y\n")
    (tmp_path / "q" / "p2.csv").write_bytes("item,annotator,label\r\nc,w1,\"x\"\r\n".encode("utf-16"))
    (tmp_path / "one.csv").write_text("item,annotator,label\na,w1,x\nb,w1,y\nc,w1,\"x\"\n")
    _same(read_votes(tmp_path / "q"), read_votes(tmp_path / "one.csv"))
    (tmp_path / "q" / "p1.csv").write_bytes(b"item,annotator,label\nb,w1,caf\xe9\n")
    with pytest.raises(DataFormatError, match=r"^p1\.csv: not UTF-8 text: byte 29 \(line 2\)"):
        read_votes(tmp_path / "q")


def test_paths_with_a_protocol_are_expanded_by_fsspec():
    fsspec = pytest.importorskip("fsspec", reason="fsspec comes with annokit[dask]")
    fs = fsspec.filesystem("memory")
    for name in ("b.csv", "a.csv", "_SUCCESS", "_tmp/c.csv", "notes.md"):
        fs.pipe(f"/annokit-parts/{name}", b"item,annotator,label\n")
    assert partition_files("memory://annokit-parts") == [
        "memory:///annokit-parts/a.csv", "memory:///annokit-parts/b.csv"]
    with pytest.raises(DataFormatError, match=r"^memory://nowhere: no such file, directory or "
                                              r"matching files$"):
        partition_files("memory://nowhere")
    fs.rm("/annokit-parts", recursive=True)
