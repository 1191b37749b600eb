"""annokit plan: the command's file, summary and messages."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from click.testing import CliRunner

from annokit.cli import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _votes_file(tmp_path, n_items=30, per_item=3, seed=0):
    """A long CSV as a labelling tool exports it: item, annotator, label."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        theta = rng.dirichlet(np.ones(3))
        for a in range(per_item):
            rows.append((f"q{i}", f"w{a}", rng.choice(["pos", "neg", "neu"], p=theta)))
    path = tmp_path / "votes.csv"
    pd.DataFrame(rows, columns=["item", "annotator", "label"]).to_csv(path, index=False)
    return path


def test_plan_writes_item_extra_votes_within_the_budget(tmp_path):
    votes = _votes_file(tmp_path)
    out = tmp_path / "next.csv"
    result = run("plan", "--votes", votes, "--budget", 40, "--out", out)
    assert result.exit_code == 0, result.output
    plan = pd.read_csv(out)
    assert list(plan.columns) == ["item", "extra_votes"]
    assert (plan["extra_votes"] > 0).all() and plan["extra_votes"].sum() <= 40
    assert plan["item"].str.startswith("q").all()
    lines = result.output.splitlines()
    assert lines[0] == ("read as: votes.csv: long table (csv); columns item='item', "
                        "annotator='annotator', label='label'")
    assert lines[1].startswith("30 items, 90 votes; goal majority (settled: P(leading label is "
                               "the population majority) >= 0.95)")
    assert lines[-1] == f"wrote {out} (CSV, {len(plan)} rows)"


def test_same_seed_same_bytes(tmp_path):
    votes = _votes_file(tmp_path)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    for out in (a, b):
        assert run("plan", votes, "--budget", 25, "--goal", "distribution", "--seed", 4,
                   "--out", out).exit_code == 0
    assert a.read_bytes() == b.read_bytes()


def test_json_summary_keys(tmp_path):
    votes = _votes_file(tmp_path)
    result = run("plan", votes, "--budget", 10, "--out", tmp_path / "n.csv", "--json")
    doc = json.loads(result.output)
    assert doc["votes_planned"] <= 10 and doc["budget"] == 10
    for key in ("n_settled", "n_cannot_settle", "n_at_max_per_item", "expected_now",
                "expected_after", "read_as", "out", "method"):
        assert key in doc
    help_text = run("plan", "--help").output
    assert "n_cannot_settle" in help_text


def test_budget_zero_only_reports(tmp_path):
    votes = _votes_file(tmp_path)
    result = run("plan", votes, "--budget", 0)
    assert result.exit_code == 0
    assert "planned 0 of 0 votes for 0 items" in result.output
    assert [p.name for p in tmp_path.iterdir()] == ["votes.csv"]


def test_items_at_max_per_item_are_stated(tmp_path):
    votes = _votes_file(tmp_path, per_item=3)
    result = run("plan", votes, "--budget", 20, "--max-per-item", 3, "--out", tmp_path / "n.csv")
    assert result.exit_code == 0
    assert ("30 items already have --max-per-item 3 votes or more: no votes planned for them"
            in result.output)
    assert "planned 0 of 20 votes for 0 items (20 left unplanned: no item that is unsettled " \
           "and below --max-per-item gains from more)" in result.output


def test_messages(tmp_path):
    votes = _votes_file(tmp_path)
    cases = [
        (("--budget", -1, "--out", "n.csv"),
         "Error: Invalid value for '--budget': -1 is not in the range x>=0."),
        (("--budget", 5, "--goal", "mode", "--out", "n.csv"),
         "Error: Invalid value for '--goal': 'mode' is not one of 'majority', 'distribution'."),
        (("--budget", 5, "--confidence", 1, "--out", "n.csv"),
         "Error: Invalid value for '--confidence': 1.0 is not in the range 0<x<1."),
        (("--budget", 5, "--epsilon", 0, "--out", "n.csv"),
         "Error: Invalid value for '--epsilon': 0.0 is not in the range 0<x<1."),
        (("--budget", 5, "--max-per-item", 0, "--out", "n.csv"),
         "Error: Invalid value for '--max-per-item': 0 is not in the range x>=1."),
        (("--budget", 5),
         "Error: give --out FILE for the planned votes (or --budget 0 to only report where the "
         "dataset stands)"),
    ]
    for args, message in cases:
        result = run("plan", votes, *args)
        assert result.exit_code == 2, (args, result.output)
        assert result.output.splitlines()[-1] == message


def test_never_writes_over_the_votes(tmp_path):
    votes = _votes_file(tmp_path)
    before = votes.read_bytes()
    result = run("plan", votes, "--budget", 5, "--out", votes)
    assert result.exit_code == 1
    assert result.output == (f"Error: --out {votes} is the input --votes; refusing to overwrite "
                             "an input (choose another path)\n")
    assert votes.read_bytes() == before


def _predictions_file(tmp_path, votes_path, seed=1):
    """A model's probabilities for every item of the votes file (columns prob_<label>)."""
    items = pd.read_csv(votes_path)["item"].unique()
    probs = np.random.default_rng(seed).dirichlet(np.ones(3), len(items))
    path = tmp_path / "preds.csv"
    pd.DataFrame({"item": items, **{f"prob_{name}": probs[:, k]
                                    for k, name in enumerate(["neg", "neu", "pos"])}}
                 ).to_csv(path, index=False)
    return path


def test_rank_activelab_with_predictions(tmp_path):
    """--rank activelab (Goh and Mueller 2023) spends the whole budget, one vote per item per
    pass, and is stated in --json; without --predictions it is a usage error."""
    votes = _votes_file(tmp_path)
    preds = _predictions_file(tmp_path, votes)
    out = tmp_path / "next.csv"
    res = run("plan", votes, "--budget", 40, "--predictions", preds, "--rank", "activelab",
              "--out", out, "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["rank"] == "activelab" and doc["votes_planned"] == 40
    assert "ActiveLab" in doc["method"]
    planned = pd.read_csv(out)["extra_votes"]
    assert planned.sum() == 40 and planned.max() - planned.min() <= 1
    res = run("plan", votes, "--budget", 0, "--rank", "activelab")
    assert res.exit_code == 2 and "--rank activelab needs --predictions" in res.output


def test_estimate_of_the_distribution_goal_is_stated(tmp_path):
    """--goal distribution values the posterior mean by default (--estimate proportions: the
    soft label), and says which in --json and in the text summary."""
    votes = _votes_file(tmp_path)
    docs = {}
    for estimate in ("posterior-mean", "proportions"):
        res = run("plan", votes, "--budget", 0, "--goal", "distribution", "--estimate",
                  estimate, "--json")
        assert res.exit_code == 0, res.output
        docs[estimate] = json.loads(res.output)
    assert docs["posterior-mean"]["estimate"] == "posterior_mean"
    assert docs["proportions"]["estimate"] == "proportions"
    text = run("plan", votes, "--budget", 0, "--goal", "distribution").output
    assert "expected mean TVD of the posterior means to the population" in text
