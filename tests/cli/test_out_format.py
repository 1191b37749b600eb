"""``--out-format csv|tsv|jsonl|parquet`` on aggregate and filter, with either engine: what
the path or the option asks for, and what was written stated in the wrote line and --json."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from annokit.cli import main


@pytest.fixture(scope="module")
def votes(tmp_path_factory):
    root = tmp_path_factory.mktemp("out_format")
    rng = np.random.default_rng(3)
    rows = [(f"q{i}", f"w{a}", ["pos", "neg", "neu"][int(rng.integers(0, 3))])
            for i in range(50) for a in rng.choice(8, size=4, replace=False)]
    df = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    df.to_csv(root / "votes.csv", index=False)
    (root / "parts").mkdir()
    for j, idx in enumerate(np.array_split(np.arange(len(df)), 3)):
        df.iloc[idx].to_parquet(root / "parts" / f"part-{j}.parquet", index=False)
    return root


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_memory_parquet_is_one_file_whatever_the_extension(votes, tmp_path):
    out = tmp_path / "labels.dat"
    res = _run("aggregate", votes / "votes.csv", "--out", out, "--out-format", "parquet")
    assert res.exit_code == 0, res.output
    assert res.output.rstrip().endswith(f"; wrote {out} (Parquet, 50 rows)")
    table = pd.read_parquet(out)
    assert list(table.columns) == ["item", "label", "tied"] and len(table) == 50
    res = _run("aggregate", votes / "votes.csv", "--out", out, "--out-format", "parquet", "--json")
    assert json.loads(res.stdout)["output"] == {"path": str(out), "format": "parquet",
                                                "layout": "file", "n_files": 1, "n_rows": 50}
    res = _run("aggregate", votes / "votes.csv", "--out", tmp_path / "labels.csv", "--json")
    assert json.loads(res.stdout)["output"]["format"] == "csv"


def test_filter_tsv_and_jsonl(votes, tmp_path):
    for fmt, reader in (("tsv", lambda p: pd.read_csv(p, sep="\t")),
                        ("jsonl", lambda p: pd.read_json(p, lines=True))):
        out = tmp_path / f"kept_{fmt}"
        res = _run("filter", votes / "votes.csv", "--method", "agreement", "--top-fraction", "0.25",
                   "--out", out, "--out-format", fmt, "--audit", tmp_path / f"a_{fmt}.json",
                   "--json")
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        assert doc["output"] == {"path": str(out), "format": fmt, "layout": "file",
                                 "n_files": 1, "n_rows": doc["n_votes_after"]}
        assert len(reader(out)) == doc["n_votes_after"]


@pytest.mark.parametrize(("args", "code", "message"), [
    (["aggregate", "{votes}", "--out-format", "parquet"], 2,
     "Error: --out-format applies to --out (the table on stdout is CSV)"),
    (["aggregate", "{votes}", "--out", "{tmp}/labels.csv", "--out-format", "parquet"], 1,
     "Error: labels.csv: its extension .csv names csv, --out-format parquet; give a path ending "
     "in .parquet (or with no table extension)"),
    (["aggregate", "{votes}", "--out", "{tmp}/labels.txt"], 1,
     "Error: labels.txt: cannot write '.txt'; use .csv, .tsv or .parquet"),
    (["aggregate", "{votes}", "--out", "{tmp}/labels.csv", "--out-format", "jsonl"], 2,
     "Invalid value for '--out-format': 'jsonl' is not one of 'csv', 'tsv', 'parquet'."),
    (["aggregate", "{votes}", "--out", "{votes}", "--out-format", "csv"], 1,
     "is the input --votes; refusing to overwrite an input"),
], ids=["without-out", "contradicting-extension", "unknown-extension", "no-jsonl-here",
        "over-the-input"])
def test_refused(votes, tmp_path, args, code, message):
    res = _run(*[a.format(votes=votes / "votes.csv", tmp=tmp_path) for a in args])
    assert res.exit_code == code
    assert message in " ".join(res.output.split())
    assert "Traceback" not in res.output


def test_dask_parquet_is_a_dataset_and_csv_one_file(votes, tmp_path):
    pytest.importorskip("distributed", reason="the Dask engine needs annokit[dask]")
    mem = tmp_path / "mem.parquet"
    assert _run("aggregate", votes / "parts", "--out", mem).exit_code == 0
    out = tmp_path / "labels"
    res = _run("aggregate", votes / "parts", "--engine", "dask", "--out", out, "--out-format",
               "parquet", "--json")
    assert res.exit_code == 0, res.output
    output = json.loads(res.stdout)["output"]
    n_files = len(list(out.glob("*.parquet")))
    assert out.is_dir() and n_files >= 1
    assert output == {"path": str(out), "format": "parquet", "layout": "dataset",
                      "n_files": n_files, "n_rows": 50}
    got = pd.read_parquet(out).sort_values("item").reset_index(drop=True)
    want = pd.read_parquet(mem).sort_values("item").reset_index(drop=True)
    assert got["item"].tolist() == want["item"].tolist()
    assert got["label"].tolist() == want["label"].tolist()
    res = _run("aggregate", votes / "parts", "--engine", "dask", "--out", tmp_path / "l.txt",
               "--out-format", "csv")
    assert res.exit_code == 0, res.output
    assert res.output.rstrip().endswith(f"; wrote {tmp_path / 'l.txt'} (CSV, 50 rows)")
    assert (tmp_path / "l.txt").read_bytes() == (_csv_of(mem)).encode()
    res = _run("filter", votes / "parts", "--engine", "dask", "--method", "agreement",
               "--top-fraction", "0.25", "--out", tmp_path / "kept", "--out-format", "parquet",
               "--audit", tmp_path / "audit.json")
    assert res.exit_code == 0, res.output
    files = len(list((tmp_path / "kept").glob("*.parquet")))
    rows = len(pd.read_parquet(tmp_path / "kept"))
    assert f"wrote {tmp_path / 'kept'}/ (Parquet dataset, {files} files, {rows} rows) and " \
           f"{tmp_path / 'audit.json'}" in res.output.splitlines()


def _csv_of(parquet) -> str:
    """The CSV text the in-memory engine writes for the same table."""
    return pd.read_parquet(parquet).to_csv(index=False)


def test_plan_parquet(votes, tmp_path):
    out = tmp_path / "next"
    res = _run("plan", votes / "votes.csv", "--budget", "20", "--out", out, "--out-format",
               "parquet", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    table = pd.read_parquet(out)
    assert list(table.columns) == ["item", "extra_votes"]
    assert doc["output"] == {"path": str(out), "format": "parquet", "layout": "file",
                             "n_files": 1, "n_rows": len(table)} and doc["out"] == str(out)
    res = _run("plan", votes / "votes.csv", "--budget", "0", "--out-format", "csv")
    assert res.exit_code == 2 and "Error: --out-format applies to --out" in res.output


def test_dask_dataset_never_over_the_input(votes):
    pytest.importorskip("distributed", reason="the Dask engine needs annokit[dask]")
    res = _run("aggregate", votes / "parts", "--engine", "dask", "--out", votes / "parts",
               "--out-format", "parquet")
    assert res.exit_code == 1
    assert res.output == (f"Error: --out {votes / 'parts'} is the input --votes; refusing to "
                          "overwrite an input (choose another path)\n")
    assert len(list((votes / "parts").iterdir())) == 3
