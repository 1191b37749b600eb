"""``annokit report --plan-budget``: the section "Where the next votes would go"."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from click.testing import CliRunner

from annokit.cli import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _files(tmp_path):
    """Long votes (3 per item) and one model's JSONL predictions."""
    rng = np.random.default_rng(1)
    truth = rng.dirichlet([1, 1], 30)
    rows = [{"item": f"q{i}", "annotator": f"w{a}",
             "label": "a" if rng.random() < truth[i, 0] else "b"}
            for i in range(30) for a in range(3)]
    votes = tmp_path / "votes.csv"
    pd.DataFrame(rows).to_csv(votes, index=False)
    model = tmp_path / "m.jsonl"
    model.write_text("".join(json.dumps({"uid": f"q{i}", "probs": [t[0], t[1]]}) + "\n"
                             for i, t in enumerate(truth)))
    return votes, model


def test_report_plan_section(tmp_path):
    votes, model = _files(tmp_path)
    out = tmp_path / "rep"
    result = run("report", "--votes", votes, "--model", f"m={model}", "--pred-labels", "a,b",
                 "--n-boot", 0, "--no-ceiling", "--bins", 1, "--plan-budget", 20, "--out", out,
                 "--quiet")
    assert result.exit_code == 0, result.output
    data = json.loads((out / "report.json").read_text())
    plan = data["plan"]
    assert plan["summary"]["budget"] == 20 and plan["summary"]["votes_planned"] <= 20
    extra = [p["extra_votes"] for p in plan["items"]]
    assert extra == sorted(extra, reverse=True) and all(e > 0 for e in extra)
    markdown = (out / "report.md").read_text()
    assert "## Where the next votes would go" in markdown
    assert "| votes planned |" in markdown
    assert "Where the next votes would go" in (out / "report.html").read_text()


def test_report_without_plan_has_no_section_and_plan_goal_needs_the_budget(tmp_path):
    votes, model = _files(tmp_path)
    result = run("report", "--votes", votes, "--model", f"m={model}", "--pred-labels", "a,b",
                 "--n-boot", 0, "--no-ceiling", "--bins", 1, "--out", tmp_path / "r", "--quiet")
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "r" / "report.json").read_text())["plan"] is None
    result = run("report", "--votes", votes, "--model", f"m={model}", "--plan-goal",
                 "distribution", "--out", tmp_path / "r2")
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == ("Error: --plan-goal applies to the plan section: "
                                              "add --plan-budget N")
