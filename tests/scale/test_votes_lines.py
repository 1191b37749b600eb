"""The Dask reader names a bad row at its file's physical line (annokit.io.lines), past blank
lines, quoted cells spanning lines (LF and CRLF) and a byte-order mark, as the in-memory reader
does; the line is looked up on the worker that found the row."""

from __future__ import annotations

import pytest

pytest.importorskip("dask.dataframe", reason="the Dask engine needs annokit[dask]")

from annokit.errors import DataFormatError, SchemaError  # noqa: E402
from annokit.io import read_votes  # noqa: E402
from annokit.scale.votes import read_votes_dask  # noqa: E402

PREFIXES = {
    "blank_lines": "a1,x,1,ok\n\n  \n",
    "quoted_lf": 'a1,x,1,"first line\nsecond line"\n',
    "quoted_crlf": 'a1,x,1,"first\r\n\r\nthird"\r\n',
    "bom_blank_line": "a1,x,1,ok\n\n",
}


def _parts(tmp_path, prefix, bad_row):
    """Two partitions; the bad row in the second, after ``prefix``. Returns the folder and
    the bad row's line in part-1.csv, counted from the text."""
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "part-0.csv").write_text("item,annotator,label,comment\nq0,x,1,ok\nq0,y,2,ok\n")
    text = "item,annotator,label,comment\n" + PREFIXES[prefix] + bad_row + "a3,z,2,fine\n"
    bom = b"\xef\xbb\xbf" if prefix.startswith("bom") else b""
    (folder / "part-1.csv").write_bytes(bom + text.encode())
    before = text[:text.index(bad_row)]
    return folder, before.count("\n") + 1


@pytest.mark.parametrize("prefix", list(PREFIXES))
def test_an_unknown_label_names_the_physical_line_on_both_engines(tmp_path, prefix):
    folder, line = _parts(tmp_path, prefix, "bad,y,zz,x\n")
    expected = (f"line {line} of part-1.csv, column 'label': unknown label 'zz'; expected one "
                "of ['1', '2']")
    with pytest.raises(DataFormatError) as got:
        read_votes_dask(str(folder), labels=["1", "2"], client=False)
    assert str(got.value) == expected
    with pytest.raises(DataFormatError) as mem:
        read_votes(folder, labels=["1", "2"])
    assert str(mem.value) == expected


@pytest.mark.parametrize("prefix", list(PREFIXES))
def test_a_missing_item_id_names_the_physical_line(tmp_path, prefix):
    folder, line = _parts(tmp_path, prefix, ",y,2,no item\n")
    with pytest.raises(SchemaError) as got:
        read_votes_dask(str(folder), client=False)
    assert str(got.value) == f"line {line} of part-1.csv, column 'item': missing item id"
    with pytest.raises(DataFormatError) as mem:
        read_votes(folder)
    assert str(mem.value) == f"line {line} of part-1.csv, column 'item': empty item id"


def test_the_line_is_found_on_a_cluster_worker(tmp_path, dask_client):
    folder, line = _parts(tmp_path, "quoted_crlf", "q9,,1,no annotator\n")
    with pytest.raises(SchemaError) as got:
        read_votes_dask(str(folder), client=dask_client)
    assert str(got.value) == f"line {line} of part-1.csv, column 'annotator': missing annotator id"


def test_one_file_with_a_blank_line(tmp_path):
    """The reproduction of the task: ``annokit stats v.csv --labels 1,2 --engine dask``."""
    path = tmp_path / "v.csv"
    path.write_text("item,annotator,label\na,x,1\n\nb,y,2\nc,z,zz\n")
    with pytest.raises(DataFormatError) as got:
        read_votes_dask(str(path), labels=["1", "2"], client=False)
    assert str(got.value) == ("line 5 of v.csv, column 'label': unknown label 'zz'; expected "
                              "one of ['1', '2']")
