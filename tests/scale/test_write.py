"""Tables written from the workers: one file as the in-memory writer writes it, or a dataset."""

from __future__ import annotations

import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe", reason="the Dask engine needs annokit[dask]")

from annokit.errors import DataFormatError  # noqa: E402
from annokit.io.atomic import write_table  # noqa: E402
from annokit.scale.write import output_kind, write_table_dask  # noqa: E402


@pytest.fixture
def frame():
    return pd.DataFrame({"item": ["c", "=b", "a", "d", "e"], "label": ["x", "y", "x", "y", "x"],
                         "p": [0.1, 0.25, 1 / 3, 0.0, 1.0], "first": [4, 1, 0, 3, 2]})


@pytest.mark.parametrize("name", ["labels.csv", "labels.tsv", "labels.jsonl"])
def test_one_file_byte_for_byte_as_in_memory(frame, tmp_path, dask_client, name):
    """Parts written by the workers and joined: the bytes of write_table on the sorted frame
    (formulas neutralised for people, header once), and no part left behind."""
    ddf = dd.from_pandas(frame, npartitions=3)
    n = write_table_dask(ddf, tmp_path / name, client=dask_client, for_people=True,
                         order="first")
    assert n == 5
    mem = frame.sort_values("first").drop(columns="first")
    write_table(mem, tmp_path / f"mem_{name}", for_people=True)
    assert (tmp_path / name).read_bytes() == (tmp_path / f"mem_{name}").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([name, f"mem_{name}"])


def test_a_parquet_path_is_a_dataset_in_order(frame, tmp_path, dask_client):
    ddf = dd.from_pandas(frame, npartitions=2)
    assert write_table_dask(ddf, tmp_path / "labels.parquet", client=dask_client,
                            order="first") == 5
    parts = sorted((tmp_path / "labels.parquet").glob("part.*.parquet"))
    back = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
    assert back["item"].tolist() == ["a", "=b", "e", "d", "c"]
    assert list(back.columns) == ["item", "label", "p"]


def test_an_empty_frame_writes_the_header(frame, tmp_path, dask_client):
    ddf = dd.from_pandas(frame.iloc[:0], npartitions=1)
    assert write_table_dask(ddf, tmp_path / "x.csv", client=dask_client) == 0
    assert (tmp_path / "x.csv").read_text() == "item,label,p,first\n"


@pytest.mark.parametrize("path, jsonl, text", [
    ("labels", True, "labels: cannot write '' with --engine dask; use .csv, .tsv or .jsonl "
                     "(one file) or .parquet (a directory of Parquet parts, one per partition)"),
    ("x.jsonl", False, "x.jsonl: cannot write '.jsonl' with --engine dask; use .csv or .tsv "
                       "(one file) or .parquet"),
])
def test_other_paths_are_refused(path, jsonl, text):
    with pytest.raises(DataFormatError, match="^" + text.replace("(", r"\(").replace(")", r"\)")
                       .replace(".", r"\.")):
        output_kind(path, jsonl=jsonl)


@pytest.mark.parametrize("name", ["labels.csv", "labels.parquet"])
def test_ordered_output_over_many_ranges(tmp_path, dask_client, monkeypatch, name):
    """Rows cut into several ranges of the order column (each merged and written by one task)
    come out in the order of that column, as the in-memory writer writes the sorted frame."""
    import numpy as np

    from annokit.scale import write

    monkeypatch.setattr(write, "_RANGE_ROWS", 7)
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"item": [f"i{k}" for k in range(60)], "p": rng.random(60),
                          "first": rng.permutation(60) * 3})
    ddf = dd.from_pandas(frame, npartitions=4)
    assert write_table_dask(ddf, tmp_path / name, client=dask_client, for_people=True,
                            order="first") == 60
    mem = frame.sort_values("first").drop(columns="first").reset_index(drop=True)
    if name.endswith(".csv"):
        write_table(mem, tmp_path / "mem.csv", for_people=True)
        assert (tmp_path / name).read_bytes() == (tmp_path / "mem.csv").read_bytes()
    else:
        parts = sorted((tmp_path / name).glob("part.*.parquet"))
        assert len(parts) == 9  # ceil(60 / 7) ranges
        back = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
        pd.testing.assert_frame_equal(back, mem, check_dtype=False)  # str read back as Arrow
