"""CLI: ``aggregate --method crowdlab --predictions`` and ``annotators --predictions`` (CROWDLAB,
Goh et al. 2022), with the predictions joined as ``evaluate`` joins them."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from annokit.cli import main
from annokit.io import read_votes
from annokit.io.synthetic import make_model_probs
from annokit.quality.crowdlab import CrowdLab


@pytest.fixture
def files(tmp_path):
    """Five annotators on 40 items (three labels), a gold file, and a model's predictions
    whose rows are in another order than the votes' items, with one extra item."""
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 3, 40)
    rows = []
    for i, t in enumerate(truth):
        for a in range(5):
            good = rng.random() < (0.9 if a < 4 else 0.4)
            rows.append((f"q{i}", f"w{a}", int(t if good else rng.integers(0, 3))))
    votes = tmp_path / "votes.csv"
    pd.DataFrame(rows, columns=["item", "annotator", "label"]).to_csv(votes, index=False)
    gold = tmp_path / "gold.csv"
    pd.DataFrame({"item": [f"q{i}" for i in range(40)], "gold": truth}).to_csv(gold, index=False)
    probs = make_model_probs(truth, 3, accuracy=0.9, rng=1)
    order = rng.permutation(40)
    preds = pd.DataFrame({"item": [f"q{i}" for i in order] + ["extra"],
                          **{f"prob_{k}": list(probs[order, k]) + [1 / 3] for k in range(3)}})
    path = tmp_path / "preds.csv"
    preds.to_csv(path, index=False)
    return votes, gold, path, probs


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_aggregate_crowdlab_json_and_table(files):
    votes, gold, preds, probs = files
    res = _run("aggregate", "--votes", votes, "--gold", gold, "--predictions", preds,
               "--method", "crowdlab", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    fit = CrowdLab().fit(read_votes(votes), probs)
    truth = pd.read_csv(gold)["gold"].to_numpy()
    assert doc["accuracy"] == pytest.approx(float(np.mean(fit.labels_codes_ == truth)))
    assert doc["model_weight"] == pytest.approx(fit.model_weight_)
    assert doc["predictions"] == {"n_items": 40, "n_dropped_items": 0,
                                  "n_unmatched_predictions": 1}
    res = _run("aggregate", "--votes", votes, "--predictions", preds, "--method", "crowdlab")
    table = pd.read_csv(io.StringIO(res.output))
    assert list(table.columns) == ["item", "label", "consensus_quality_score", "agreement"]
    np.testing.assert_allclose(table["consensus_quality_score"], fit.consensus_quality_score_)


def test_aggregate_crowdlab_drops_items_as_evaluate_does(files, tmp_path):
    votes, _, preds, _ = files
    short = tmp_path / "short.csv"
    pd.read_csv(preds).iloc[5:].to_csv(short, index=False)
    res = _run("aggregate", "--votes", votes, "--predictions", short, "--method", "crowdlab")
    assert res.exit_code == 1
    assert "vote items have no prediction" in res.output and "--on-missing drop" in res.output
    res = _run("aggregate", "--votes", votes, "--predictions", short, "--method", "crowdlab",
               "--on-missing", "drop", "--json")
    assert res.exit_code == 0, res.output
    assert "5 of 40 vote items have no prediction" in res.stderr
    assert json.loads(res.stdout)["predictions"]["n_dropped_items"] == 5


@pytest.mark.parametrize("args, message", [
    (["--method", "crowdlab"], "--method crowdlab needs a model's probabilities: give "
                               "--predictions FILE"),
    (["--method", "ds", "--predictions", "P"], "--predictions applies to --method crowdlab, "
                                               "not --method ds"),
    (["--method", "mv", "--likelihood", "confusion"], "--likelihood applies to --predictions"),
])
def test_aggregate_usage_errors(files, args, message):
    votes, _, preds, _ = files
    res = _run("aggregate", "--votes", votes, *[preds if a == "P" else a for a in args])
    assert res.exit_code == 2
    assert f"Error: {message}" in res.output


def test_annotators_predictions_adds_crowdlab_scores(files):
    votes, _, preds, probs = files
    res = _run("annotators", "--votes", votes, "--predictions", preds, "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    fit = CrowdLab().fit(read_votes(votes), probs)
    got = [row["crowdlab_quality_score"] for row in doc["annotators"]]
    np.testing.assert_allclose(got, fit.annotator_quality_score_)
    assert doc["predictions"]["likelihood"] == "shared"
    worst = int(np.argmin(got))
    assert doc["annotators"][worst]["annotator"] == "w4"  # the 40%-accurate annotator
    res = _run("annotators", "--votes", votes, "--predictions", preds)
    assert "crowdlab" in res.output.splitlines()[0]


def test_plan_predictions_centres_the_prior_on_the_model(files, tmp_path):
    votes, _, preds, _ = files
    out = tmp_path / "next.csv"
    res = _run("plan", votes, "--budget", 20, "--predictions", preds, "--out", out, "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["prior"] == "model" and doc["votes_planned"] <= 20
    assert doc["model_prior"]["concentration"] > 0
    res = _run("plan", votes, "--budget", 0, "--predictions", preds, "--prior", "uniform")
    assert res.exit_code == 2 and "Error: --prior applies without --predictions" in res.output
    res = _run("plan", votes, "--budget", 0, "--on-missing", "drop")
    assert res.exit_code == 2 and "Error: --on-missing applies to --predictions" in res.output
