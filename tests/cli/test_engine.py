"""``--engine dask`` on stats, aggregate, annotators and evaluate: the in-memory results."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

pytest.importorskip("distributed", reason="the Dask engine needs annokit[dask]")

from annokit.cli import main  # noqa: E402


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A small long vote set as one Parquet file and as a folder of 3 partitions, with
    predictions the same way."""
    root = tmp_path_factory.mktemp("engine")
    rng = np.random.default_rng(0)
    rows = [(f"q{i}", f"w{a}", ["pos", "neg", "neu"][int(rng.integers(0, 3))])
            for i in range(60) for a in rng.choice(8, size=4, replace=False)]
    votes = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    votes.to_parquet(root / "votes.parquet", index=False)
    (root / "parts").mkdir()
    for j, idx in enumerate(np.array_split(np.arange(len(votes)), 3)):
        votes.iloc[idx].to_parquet(root / "parts" / f"p{j}.parquet", index=False)
    probs = rng.dirichlet(np.ones(3), size=60)
    preds = pd.DataFrame({"item": [f"q{i}" for i in range(60)]})
    for k, name in enumerate(["neg", "neu", "pos"]):
        preds[f"prob_{name}"] = probs[:, k]
    preds.to_parquet(root / "preds.parquet", index=False)
    return root


def _run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result


def _json(*args):
    result = _run(*args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_stats_same_numbers(data):
    mem = _json("stats", data / "votes.parquet", "--json", "--n-boot", "30")
    got = _json("stats", data / "parts", "--engine", "dask", "--json", "--n-boot", "30")
    for key in ("n_items", "n_votes", "n_annotators", "labels", "entropy", "agreement", "ties",
                "label_counts", "majority_counts"):
        assert got[key] == mem[key], key
    assert got["krippendorff_alpha"]["value"] == pytest.approx(mem["krippendorff_alpha"]["value"],
                                                               rel=1e-12)


def test_aggregate_annotators_evaluate(data, tmp_path):
    mem = _json("aggregate", data / "votes.parquet", "--method", "ds", "--json")
    got = _json("aggregate", data / "parts", "--method", "ds", "--engine", "dask", "--json",
                "--out", tmp_path / "labels.parquet")
    assert got.pop("output") == {"path": str(tmp_path / "labels.parquet"), "format": "parquet",
                                 "layout": "dataset", "n_files": 3, "n_rows": 60}
    assert got == mem
    assert len(pd.read_parquet(tmp_path / "labels.parquet")) == 60
    mem = _json("annotators", data / "votes.parquet", "--json")
    got = _json("annotators", data / "parts", "--engine", "dask", "--json")
    by_id = {r["annotator"]: r for r in mem["annotators"]}
    for row in got["annotators"]:
        assert row["score"] == pytest.approx(by_id[row["annotator"]]["score"], rel=1e-12)
        assert row["flagged"] == by_id[row["annotator"]]["flagged"]
    mem = _json("evaluate", "--votes", data / "votes.parquet", "--predictions",
                data / "preds.parquet", "--json", "--n-boot", "20")
    got = _json("evaluate", "--votes", data / "parts", "--predictions", data / "preds.parquet",
                "--engine", "dask", "--json", "--n-boot", "20")
    for name, value in mem["metrics"].items():
        assert got["metrics"][name] == pytest.approx(value, rel=1e-12, abs=1e-15), name


def test_evaluate_with_scale_on_dask(tmp_path):
    """--scale reaches the Dask reader: the order-aware metrics and the labels' numbers."""
    rng = np.random.default_rng(1)
    votes = pd.DataFrame([(f"q{i}", f"w{a}", str(int(rng.integers(1, 6))))
                          for i in range(40) for a in rng.choice(6, size=3, replace=False)],
                         columns=["item", "annotator", "label"])
    votes.to_parquet(tmp_path / "votes.parquet", index=False)
    (tmp_path / "parts").mkdir()
    for j, idx in enumerate(np.array_split(np.arange(len(votes)), 3)):
        votes.iloc[idx].to_parquet(tmp_path / "parts" / f"p{j}.parquet", index=False)
    preds = pd.DataFrame({"item": [f"q{i}" for i in range(40)]})
    for k, p in enumerate(rng.dirichlet(np.ones(5), size=40).T):
        preds[f"prob_{k + 1}"] = p
    preds.to_parquet(tmp_path / "preds.parquet", index=False)
    for scale in ("ordinal", "interval"):
        mem = _json("evaluate", "--votes", tmp_path / "votes.parquet", "--predictions",
                    tmp_path / "preds.parquet", "--scale", scale, "--json")
        got = _json("evaluate", "--votes", tmp_path / "parts", "--predictions",
                    tmp_path / "preds.parquet", "--scale", scale, "--engine", "dask", "--json")
        assert got["scale"] == mem["scale"] == scale
        assert list(got["metrics"]) == list(mem["metrics"])
        assert "wasserstein" in got["metrics"]
        for name, value in mem["metrics"].items():
            assert got["metrics"][name] == pytest.approx(value, rel=1e-12, abs=1e-15), name


def test_filter(data, tmp_path):
    mem = _json("filter", data / "votes.parquet", "--method", "agreement", "--top-fraction", "0.25",
                "--out", tmp_path / "kept.csv", "--audit", tmp_path / "a.json", "--json")
    got = _json("filter", data / "parts", "--method", "agreement", "--top-fraction", "0.25",
                "--engine", "dask", "--out", tmp_path / "kept.parquet", "--audit",
                tmp_path / "b.json", "--json")
    for key, value in mem.items():
        assert got[key] == (pytest.approx(value, rel=1e-12) if isinstance(value, float)
                            else value), key
    assert len(pd.read_parquet(tmp_path / "kept.parquet")) == len(pd.read_csv(tmp_path /
                                                                             "kept.csv"))


@pytest.mark.parametrize("args, code, text", [
    (["stats", "{parts}", "--scheduler", "tcp://127.0.0.1:1"], 2, "--scheduler applies to "
                                                                  "--engine dask"),
    (["aggregate", "{parts}", "--engine", "dask"], 2, "Error: --engine dask writes the per-item "
     "table to a file, not to stdout: give --out FILE.csv (or .tsv), or --out DIR.parquet for a "
     "Parquet dataset"),
    (["aggregate", "{parts}", "--engine", "dask", "--out", "labels"], 1, "Error: labels: cannot "
     "write '' with --engine dask; use .csv or .tsv (one file) or .parquet (a directory of "
     "Parquet parts, one per partition)"),
    (["stats", "{parts}", "--engine", "dask", "--ties", "random"], 2, "do(es) not apply"),
    (["annotators", "{parts}", "--engine", "dask", "--method", "gold"], 2, "Error: --method gold "
     "(ChaosNLI's rule, with runs of consecutive wrong answers in vote order) runs in memory "
     "only"),
    (["evaluate", "--votes", "{parts}", "--predictions", "{preds}", "--engine", "dask",
      "--temperature", "2"], 2, "in memory only"),
])
def test_engine_usage_errors(data, args, code, text):
    args = [a.format(parts=data / "parts", preds=data / "preds.parquet") for a in args]
    result = _run(*args)
    assert result.exit_code == code, result.output
    assert text in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_rerun_into_the_same_output_directory(data, tmp_path):
    """The partitioned outputs are replaced atomically: a second run into them is allowed."""
    for _ in range(2):
        _json("aggregate", data / "parts", "--method", "mv", "--engine", "dask", "--json",
              "--out", tmp_path / "labels.parquet")
    assert len(pd.read_parquet(tmp_path / "labels.parquet")) == 60


@pytest.fixture(scope="module")
def side_files(tmp_path_factory):
    """One long CSV of votes (items in a shuffled first-seen order), a separate gold file
    (with a gold value that is no label and a row for an item without votes) and JSON Lines
    predictions, as annotation tools and model scripts export them."""
    root = tmp_path_factory.mktemp("side")
    rng = np.random.default_rng(3)
    names = ["pos", "neg", "neu"]
    rows = [(f"q{i}", f"w{a}", names[int(rng.integers(0, 3))])
            for i in rng.permutation(90) for a in rng.choice(8, size=4, replace=False)]
    pd.DataFrame(rows, columns=["item", "annotator", "label"]).to_csv(root / "votes.csv",
                                                                       index=False)
    gold = [(f"q{i}", names[i % 3]) for i in range(0, 90, 2)] + [("q999", "pos")]
    gold[1] = (gold[1][0], "Positive")
    pd.DataFrame(gold, columns=["item", "gold"]).to_csv(root / "gold.csv", index=False)
    probs = rng.dirichlet(np.ones(3), size=90)
    with open(root / "preds.jsonl", "w", encoding="utf-8") as f:
        for i in range(90):
            f.write(json.dumps({"id": f"q{i}", "probs": probs[i].tolist()}) + "\n")
    return root


def test_gold_file_jsonl_predictions_and_one_csv_as_in_memory(side_files, tmp_path):
    """Issue 25, acceptance 1: the same command lines with a separate gold file, JSON Lines
    predictions and --out labels.csv give one CSV file; counts and statistics identical, EM
    posteriors within 1e-9, metrics within 1e-12."""
    votes, gold = side_files / "votes.csv", side_files / "gold.csv"
    dask = ["--engine", "dask"]
    out = {}
    for engine, extra in (("memory", []), ("dask", dask)):
        res = _run("aggregate", votes, "--gold", gold, "--method", "ds", "--soft", "--out",
                   tmp_path / f"{engine}.csv", *extra)
        assert res.exit_code == 0, res.output
        out[engine] = res.output
    # (a LocalCluster may warn about a busy dashboard port: other lines are compared)
    mem_lines, dask_lines = ([x for x in out[e].splitlines() if "Port " not in x]
                             for e in ("memory", "dask"))
    assert dask_lines[:2] == mem_lines[:2] == [
        f"Warning: {gold.name}: 1 item(s) have a gold label that is not among the votes' labels "
        "['neg', 'neu', 'pos']: 'Positive' (1 item); their gold is left out of accuracy",
        f"Warning: {gold.name}: 1 gold row(s) name items without votes and were not used (e.g. "
        "'q999')"]
    assert dask_lines[2] == mem_lines[2].replace("memory.csv", "dask.csv")  # (CSV, 90 rows)
    assert (tmp_path / "dask.csv").is_file()
    mem = pd.read_csv(tmp_path / "memory.csv", dtype={"item": str})
    got = pd.read_csv(tmp_path / "dask.csv", dtype={"item": str})
    assert list(got.columns) == list(mem.columns) == ["item", "label", "p_neg", "p_neu", "p_pos"]
    assert got["item"].tolist() == mem["item"].tolist()  # the items' first-seen order
    assert got["label"].tolist() == mem["label"].tolist()
    np.testing.assert_allclose(got.iloc[:, 2:].to_numpy(), mem.iloc[:, 2:].to_numpy(), rtol=0,
                               atol=1e-9)
    for args in (["aggregate", votes, "--gold", gold, "--method", "mv", "--json"],
                 ["annotators", votes, "--gold", gold, "--method", "ds", "--json"],
                 ["stats", votes, "--gold", gold, "--json"]):
        mem_doc = _json(*args, *(["--out", tmp_path / "m.csv"] if args[0] == "aggregate" else []))
        got_doc = _json(*args, *dask, *(["--out", tmp_path / "d.csv"] if args[0] == "aggregate"
                                         else []))
        if args[0] == "aggregate":  # what was written: the same but for the path
            assert ({**got_doc.pop("output"), "path": "-"} == {**mem_doc.pop("output"), "path": "-"}
                    == {"path": "-", "format": "csv", "layout": "file", "n_files": 1,
                        "n_rows": 90})
        if args[0] == "annotators":
            by_id = {r["annotator"]: r for r in mem_doc.pop("annotators")}
            for row in got_doc.pop("annotators"):  # Dawid-Skene scores: EM, within 1e-9
                assert row == {**by_id.pop(row["annotator"]),
                               "score": pytest.approx(row["score"], abs=1e-9)}
            assert not by_id
        if args[0] == "stats":
            for key in ("krippendorff_alpha", "fleiss_kappa"):
                assert got_doc[key]["value"] == pytest.approx(mem_doc[key]["value"], rel=1e-12)
            keys = ("n_items", "n_votes", "n_annotators", "labels", "entropy", "agreement",
                    "ties", "label_counts", "majority_counts", "gold")
            got_doc, mem_doc = ({k: d[k] for k in keys} for d in (got_doc, mem_doc))
            assert mem_doc["gold"]["n_items"] == 44  # 45 gold rows, one for an item without votes
        assert got_doc == mem_doc, args[0]
    preds = side_files / "preds.jsonl"
    mem_doc = _json("evaluate", "--votes", votes, "--predictions", preds, "--pred-labels",
                    "neg,neu,pos", "--json", "--n-boot", "20")
    got_doc = _json("evaluate", "--votes", votes, "--predictions", preds, "--pred-labels",
                    "neg,neu,pos", "--json", "--n-boot", "20", *dask)
    assert set(got_doc["metrics"]) == set(mem_doc["metrics"])
    for name, value in mem_doc["metrics"].items():
        assert got_doc["metrics"][name] == pytest.approx(value, rel=1e-12, abs=1e-15), name


def test_per_item_is_one_csv_file_in_the_memory_order(side_files, tmp_path):
    votes, preds = side_files / "votes.csv", side_files / "preds.jsonl"
    for engine in ("memory", "dask"):
        res = _run("evaluate", "--votes", votes, "--predictions", preds, "--pred-labels",
                   "neg,neu,pos", "--per-item", tmp_path / f"{engine}.csv", "--engine", engine)
        assert res.exit_code == 0, res.output
    mem = pd.read_csv(tmp_path / "memory.csv", dtype={"item": str})
    got = pd.read_csv(tmp_path / "dask.csv", dtype={"item": str})
    pd.testing.assert_frame_equal(got, mem, check_exact=False, rtol=1e-12, atol=1e-15)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dask.csv", "memory.csv"]


def test_filter_with_gold_writes_one_csv_file(side_files, tmp_path):
    votes, gold = side_files / "votes.csv", side_files / "gold.csv"
    for engine in ("memory", "dask"):
        res = _run("filter", votes, "--gold", gold, "--method", "agreement", "--top-fraction",
                   "0.25", "--out", tmp_path / f"{engine}.csv", "--audit",
                   tmp_path / f"{engine}.json", "--engine", engine)
        assert res.exit_code == 0, res.output
        rows = len(pd.read_csv(tmp_path / f"{engine}.csv"))
        assert (f"wrote {tmp_path / f'{engine}.csv'} (CSV, {rows} rows) and "
                f"{tmp_path / f'{engine}.json'}") in res.output.splitlines()
    mem = pd.read_csv(tmp_path / "memory.csv", dtype=str)
    got = pd.read_csv(tmp_path / "dask.csv", dtype=str)
    assert list(got.columns) == list(mem.columns)
    key = list(mem.columns)
    # the same votes; memory keeps the vote order, Dask groups them by item
    pd.testing.assert_frame_equal(got.sort_values(key).reset_index(drop=True),
                                  mem.sort_values(key).reset_index(drop=True))
