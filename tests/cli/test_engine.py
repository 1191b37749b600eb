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
                "--out", tmp_path / "labels")
    assert got == mem
    assert len(pd.read_parquet(tmp_path / "labels")) == 60
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
                "--engine", "dask", "--out", tmp_path / "kept", "--audit", tmp_path / "b.json",
                "--json")
    for key, value in mem.items():
        assert got[key] == (pytest.approx(value, rel=1e-12) if isinstance(value, float)
                            else value), key
    assert len(pd.read_parquet(tmp_path / "kept")) == len(pd.read_csv(tmp_path / "kept.csv"))


@pytest.mark.parametrize("args, code, text", [
    (["stats", "{parts}", "--scheduler", "tcp://127.0.0.1:1"], 2, "--scheduler applies to "
                                                                  "--engine dask"),
    (["stats", "{parts}"], 1, "--engine dask"),
    (["aggregate", "{parts}", "--engine", "dask"], 2, "give --out DIR"),
    (["stats", "{parts}", "--engine", "dask", "--ties", "random"], 2, "do(es) not apply"),
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
              "--out", tmp_path / "labels")
    assert len(pd.read_parquet(tmp_path / "labels")) == 60
