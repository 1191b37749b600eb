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


def test_dask_parquet_is_a_dataset_and_csv_one_file(dask_cluster, votes, tmp_path):
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


def test_dask_dataset_never_over_the_input(dask_cluster, votes):
    pytest.importorskip("distributed", reason="the Dask engine needs annokit[dask]")
    res = _run("aggregate", votes / "parts", "--engine", "dask", "--out", votes / "parts",
               "--out-format", "parquet")
    assert res.exit_code == 1
    assert res.output == (f"Error: --out {votes / 'parts'} is the input --votes; refusing to "
                          "overwrite an input (choose another path)\n")
    assert len(list((votes / "parts").iterdir())) == 3


# --------------------------------------------------------------- evaluate --per-item

def _preds(votes) -> str:
    """Per-item probabilities of the fixture's 50 items (written once)."""
    path = votes / "preds.csv"
    if not path.exists():
        rng = np.random.default_rng(4)
        frame = pd.DataFrame(rng.dirichlet(np.ones(3), size=50),
                             columns=["prob_pos", "prob_neg", "prob_neu"])
        frame.insert(0, "item", [f"q{i}" for i in range(50)])
        frame.to_csv(path, index=False)
    return str(path)


_READERS = {
    "csv": lambda p: pd.read_csv(p, dtype={"item": str, "majority": str}),
    "tsv": lambda p: pd.read_csv(p, sep="\t", dtype={"item": str, "majority": str}),
    "jsonl": lambda p: pd.read_json(p, lines=True, dtype={"item": str, "majority": str}),
    "parquet": pd.read_parquet,
}


@pytest.mark.parametrize(("name", "out_format", "written"), [
    ("items.tsv", None, "tsv"), ("items", "jsonl", "jsonl"), ("items.txt", None, "csv"),
    ("items", "parquet", "parquet")],
    ids=["tsv-by-extension", "jsonl-by-option", "other-extension-csv", "parquet-by-option"])
def test_evaluate_per_item_formats_on_both_engines(dask_cluster, votes, tmp_path, name, out_format, written):
    """One rule on both engines: --out-format, else the extension, else CSV; Parquet is one
    file in memory and a dataset (a directory of part files) on Dask; the same rows, the
    same JSON besides output, which states what was written."""
    pytest.importorskip("distributed", reason="the Dask engine needs annokit[dask]")
    fmt_args = [] if out_format is None else ["--out-format", out_format]
    docs, tables = {}, {}
    for engine, source in (("memory", votes / "votes.csv"), ("dask", votes / "parts")):
        out = tmp_path / engine / name
        out.parent.mkdir()
        res = _run("evaluate", "--votes", source, "--predictions", _preds(votes), "--per-item",
                   out, *fmt_args, "--engine", engine, "--json")
        assert res.exit_code == 0, res.output
        docs[engine] = json.loads(res.stdout)
        dataset = engine == "dask" and written == "parquet"
        assert out.is_dir() == dataset
        n_files = len(list(out.glob("*.parquet"))) if dataset else 1
        assert docs[engine].pop("output") == {
            "path": str(out), "format": written, "layout": "dataset" if dataset else "file",
            "n_files": n_files, "n_rows": 50}
        tables[engine] = _READERS[written](out)
    assert list(docs["dask"]) == list(docs["memory"])
    assert docs["dask"]["metrics"] == pytest.approx(docs["memory"]["metrics"], rel=1e-12)
    got, want = tables["dask"], tables["memory"]
    assert want["item"].tolist() == [f"q{i}" for i in range(50)]  # the votes' first-seen order
    if written == "parquet":  # a dataset: partition order
        got = got.set_index("item").loc[want["item"]].reset_index()
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-12)


def test_evaluate_wrote_line(dask_cluster, votes, tmp_path):
    """The table, then one wrote line naming what was written (as aggregate and filter)."""
    pytest.importorskip("distributed", reason="the Dask engine needs annokit[dask]")
    args = ["evaluate", "--predictions", _preds(votes), "--metrics", "accuracy"]
    res = _run(*args, "--votes", votes / "votes.csv", "--per-item", tmp_path / "m.parquet")
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[-1] == f"wrote {tmp_path / 'm.parquet'} (Parquet, 50 rows)"
    res = _run(*args, "--votes", votes / "parts", "--per-item", tmp_path / "d.parquet",
               "--engine", "dask")
    assert res.exit_code == 0, res.output
    files = len(list((tmp_path / "d.parquet").glob("*.parquet")))
    assert res.stdout.splitlines()[-1] == \
        f"wrote {tmp_path / 'd.parquet'}/ (Parquet dataset, {files} file{'s' * (files > 1)}, " \
        "50 rows)"
    res = _run(*args, "--votes", votes / "votes.csv")
    assert res.exit_code == 0 and "wrote" not in res.stdout


@pytest.mark.parametrize("engine", ["memory", "dask"])
@pytest.mark.parametrize(("args", "code", "message"), [
    (["--out-format", "csv"], 2, "Error: --out-format applies to --per-item"),
    (["--per-item", "{tmp}/items.csv", "--out-format", "parquet"], 1,
     "Error: items.csv: its extension .csv names csv, --out-format parquet; give a path ending "
     "in .parquet (or with no table extension)"),
    (["--per-item", "{tmp}/items.csv", "--out-format", "xlsx"], 2,
     "Invalid value for '--out-format': 'xlsx' is not one of 'csv', 'tsv', 'jsonl', 'parquet'."),
], ids=["without-per-item", "contradicting-extension", "unknown-format"])
def test_evaluate_out_format_refused_before_any_work(votes, tmp_path, engine, args, code,
                                                     message):
    """Refused before the votes are read (no cluster started), the same on both engines."""
    res = _run("evaluate", "--votes", votes / "votes.csv", "--predictions", _preds(votes),
               "--engine", engine, *[a.format(tmp=tmp_path) for a in args])
    assert res.exit_code == code, res.output
    assert message in " ".join(res.output.split())
    assert "Traceback" not in res.output and not list(tmp_path.iterdir())
