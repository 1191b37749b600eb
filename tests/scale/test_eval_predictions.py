"""Prediction files on Dask (annokit.scale.eval_predictions): a bad value is named at its
file's physical line when each file is one partition, as in memory; a file cut into blocks of
bytes names the row within its partition."""

from __future__ import annotations

import pytest

pytest.importorskip("dask.dataframe", reason="the Dask engine needs annokit[dask]")

from annokit.errors import DataFormatError  # noqa: E402
from annokit.io.predictions import read_predictions  # noqa: E402
from annokit.scale.eval_predictions import read_predictions_dask  # noqa: E402

FILES = {
    "blank_line": "item,1,2\na1,0.5,0.5\n\nb1,0.2,x\n",
    "quoted_crlf": 'item,1,2\r\n"a\r\n1",0.5,0.5\r\n\r\nb1,0.2,x\r\n',
    "quoted_lf_bom": '\ufeffitem,1,2\n"a\n\n1",0.5,0.5\nb1,0.2,x\n',
}


@pytest.mark.parametrize("case", list(FILES))
def test_a_bad_prediction_value_names_the_line_on_both_engines(tmp_path, case):
    (tmp_path / "ok.csv").write_text("item,1,2\nz1,0.5,0.5\n")
    path = tmp_path / "p.csv"
    path.write_bytes(FILES[case].encode())
    text = FILES[case]
    before = text[:text.index("b1,0.2,x")]
    line = before.count("\n") + 1
    expected = (f"line {line} of {path}: column '2' is not numeric (got 'x'); class columns "
                "used: ['1', '2'] (every column but the id is read as a class unless the classes "
                "are named prob_<label> or logit_<label>: rename them so, and other columns are "
                "not read)")
    with pytest.raises(DataFormatError) as mem:
        read_predictions(path)
    assert str(mem.value) == expected
    with pytest.raises(DataFormatError) as got:
        read_predictions_dask([tmp_path / "ok.csv", path]).frame.compute(scheduler="sync")
    assert str(got.value) == expected


def test_a_file_cut_into_blocks_names_the_row_of_its_partition(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("item,1,2\n" + "".join(f"a{i},0.5,0.5\n" for i in range(20)) + "b1,0.2,x\n")
    with pytest.raises(DataFormatError, match=r"^row \d+ of partition \d+ of .*p\.csv: column "
                                              r"'2' is not numeric \(got 'x'\)"):
        read_predictions_dask(path, blocksize=64).frame.compute(scheduler="sync")
