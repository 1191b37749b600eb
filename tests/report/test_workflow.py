"""The report workflow (annokit/report/workflow.py): files to a report, as ``annokit report``."""

from __future__ import annotations

import json
import warnings
from dataclasses import FrozenInstanceError

import numpy as np
import pytest

from annokit.core.votes import Votes
from annokit.errors import DegenerateInputWarning, InvalidValueError
from annokit.report import build_report, dump_json, load_models
from annokit.report.options import ReportOptions
from annokit.report.workflow import run_report


@pytest.fixture
def setup(tmp_path):
    rng = np.random.default_rng(2)
    n = 24
    votes = Votes.from_counts(rng.multinomial(25, [0.5, 0.3, 0.2], size=n), labels=["a", "b", "c"],
                              item_ids=[f"i{j}" for j in range(n)])
    probs = rng.dirichlet([2, 2, 2], size=n)
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps({"uid": f"i{j}", "probs": probs[j].tolist()}) + "\n"
                            for j in range(n)))
    return votes, path


def test_run_report_is_load_models_then_build_report(setup):
    votes, path = setup
    options = ReportOptions(bins=2, n_boot=10, ceiling=False, temperatures=(("m", 2.0),),
                            metrics=("accuracy", "jsd"), title="t", seed=4, pred_labels="a,b,c")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        rep = run_report(votes, {"m": [path]}, options)
        loaded = load_models(votes, {"m": [path]}, temperatures=[("m", 2.0)], pred_labels="a,b,c")
        ref = build_report(loaded.votes, loaded.models, bins=2, n_boot=10, ceiling=False,
                           metrics=("accuracy", "jsd"), title="t", seed=4)
    ref.notes = loaded.notes + ref.notes
    assert dump_json(rep) == dump_json(ref)
    assert rep.population is None  # 25 votes per item: the votes target alone


def test_options_are_frozen_and_metrics_are_checked_against_the_votes(setup):
    votes, path = setup
    with pytest.raises(FrozenInstanceError):
        ReportOptions().n_boot = 5  # type: ignore[misc]
    with pytest.raises(InvalidValueError, match="--metrics: .*wasserstein"):
        run_report(votes, {"m": path}, ReportOptions(metrics=("wasserstein",), n_boot=0,
                                                     pred_labels="a,b,c"))
