"""``annokit evaluate --engine dask`` with the options beyond the plain evaluation:
temperatures (fixed, fitted on dev files), ``--model`` and ``--target population``, through the
command line, equal to ``--engine memory`` to 1e-12; what stays impossible is refused up front
in one line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

pytest.importorskip("distributed", reason="the Dask engine needs annokit[dask]")

from annokit.cli import main  # noqa: E402

pytestmark = pytest.mark.usefixtures("dask_cluster")  # one cluster (tests/cli/conftest.py)

from _shared import assert_close_documents  # noqa: E402

LABELS = ["pos", "neg", "neu"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Long votes in 3 Parquet partitions and as one CSV file; a ChaosNLI-style
    ``{model: {uid: {"uid", "logits"}}}`` file of two models for the test items and JSON Lines
    dev predictions (with probabilities) of other items, as model scripts write them."""
    root = tmp_path_factory.mktemp("evaluate_dask")
    rng = np.random.default_rng(7)
    n = 150
    rows = [(f"q{i}", f"w{a}", LABELS[int(rng.choice(3, p=[0.5, 0.3, 0.2]))])
            for i in rng.permutation(n) for a in rng.choice(10, size=5, replace=False)]
    votes = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    votes.to_csv(root / "votes.csv", index=False)
    (root / "parts").mkdir()
    for j, idx in enumerate(np.array_split(np.arange(len(votes)), 3)):
        votes.iloc[idx].to_parquet(root / "parts" / f"p{j}.parquet", index=False)
    doc = {m: {f"q{i}": {"uid": f"q{i}", "logits": (rng.normal(size=3) * s).tolist()}
               for i in range(50, n)} for m, s in (("roberta", 2.5), ("bert", 0.8))}
    (root / "test.json").write_text(json.dumps(doc), encoding="utf-8")
    with open(root / "dev.jsonl", "w", encoding="utf-8") as f:
        for i in range(50):
            p = rng.dirichlet(np.ones(3) * 0.5)
            f.write(json.dumps({"id": f"q{i}", "probs": p.tolist()}) + "\n")
    return root


def _json(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _same(mem, got):
    temperature = mem.get("temperature")
    assert got.get("temperature") == (None if temperature is None else {
        **temperature, "value": pytest.approx(temperature["value"], rel=1e-12)})
    assert got["target"] == mem["target"] and got.get("not_computed") == mem.get("not_computed")
    assert list(got["metrics"]) == list(mem["metrics"])
    for name, value in mem["metrics"].items():
        assert got["metrics"][name] == pytest.approx(value, rel=1e-12, abs=1e-15), name
    for name, ci in mem["ci"].items():
        assert_close_documents(got["ci"][name], ci, f"ci.{name}", rel=1e-12, abs_tol=1e-15)


@pytest.mark.parametrize("args", [
    pytest.param(["--model", "roberta", "--temperature", "1.7", "--n-boot", "20"], id="fixed"),
    pytest.param(["--model", "bert", "--fit-temperature-on", "{dev}", "--temperature-objective",
                  "nll_soft", "--n-boot", "20", "--by", "agreement"], id="fit-nll_soft-by"),
    # no temperature: the population prior's fit carries the last-bit differences of rows
    # tempered on the workers to about 1e-9 (rows read alike give the same fit)
    pytest.param(["--model", "roberta", "--target", "population", "--n-boot", "20"],
                 id="population-target"),
])
def test_same_numbers_as_memory(data, args):
    args = [a.format(dev=data / "dev.jsonl") for a in args]
    common = ["evaluate", "--predictions", data / "test.json", "--pred-labels", "pos,neg,neu",
              "--on-missing", "drop",
              "--json", *args]
    mem = _json(*common, "--votes", data / "votes.csv")
    got = _json(*common, "--votes", data / "parts", "--engine", "dask")
    _same(mem, got)
    assert mem["n_items"] == got["n_items"] == 100
    if "--fit-temperature-on" in args:
        assert mem["temperature"]["mode"] == "fit" and mem["temperature"]["n_fit_items"] == 50


def test_table_states_the_temperature(data):
    """The human table is the in-memory one: the temperature line and every metric row (the
    values agree to 1e-12, so to the four printed decimals)."""
    common = ["evaluate", "--predictions", data / "test.json", "--pred-labels", "pos,neg,neu",
              "--on-missing", "drop",
              "--model", "roberta", "--fit-temperature-on", data / "dev.jsonl"]
    out = {}
    for engine, votes in (("memory", data / "votes.csv"), ("dask", data / "parts")):
        result = CliRunner().invoke(main, [str(a) for a in [*common, "--votes", votes,
                                                            "--engine", engine]])
        assert result.exit_code == 0, result.output
        out[engine] = [x for x in result.stdout.splitlines() if "Port " not in x]
    assert out["dask"] == out["memory"]
    assert out["memory"][2].startswith("temperature: ")
    assert out["memory"][2].endswith("(fit, objective nll_majority, fitted on 50 items)")


@pytest.mark.parametrize("args, text", [
    (["--oracle-temperature"], "Error: --oracle-temperature runs in memory only: its fit reads "
     "every evaluated item at each step of the search; fit on dev files with "
     "--fit-temperature-on, or use --engine memory"),
    (["--ties", "random"], "Error: --ties random runs in memory only: the in-memory draw follows "
     "each item's rank in the whole item order (one random stream), which no partition knows; "
     "use --ties first, or --engine memory"),
])
def test_refused_up_front(data, args, text):
    result = CliRunner().invoke(main, [str(a) for a in [
        "evaluate", "--votes", data / "parts", "--predictions", data / "test.json", "--model",
        "bert", "--engine", "dask", *args]])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1] == text
    assert "Traceback" not in result.output
