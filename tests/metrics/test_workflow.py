"""The evaluate workflow in memory and its options (annokit/metrics/workflow.py)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from annokit.core.labels import LabelSet
from annokit.core.votes import Votes
from annokit.errors import InputError, InvalidValueError, OptionConflictError
from annokit.io.predictions import Predictions
from annokit.metrics import workflow
from annokit.metrics.engine import evaluate
from annokit.metrics.records import align
from annokit.metrics.temperature import OBJECTIVES, temperature_scale
from annokit.metrics.workflow import (
    EvaluateOptions,
    evaluate_memory,
    resolve_metrics,
    resolve_positive,
)


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    votes = Votes.from_counts(rng.integers(0, 4, size=(n, 3)) + [1, 0, 0],
                              labels=["a", "b", "c"], item_ids=[f"i{j}" for j in range(n)])
    preds = Predictions.from_arrays(votes.item_ids, probs=rng.dirichlet(np.ones(3), size=n),
                                    label_names=["a", "b", "c"])
    return votes, preds


def test_objectives_agree_with_the_temperature_module():
    assert workflow._OBJECTIVES == OBJECTIVES


def test_the_workflow_is_the_pipeline_it_replaces(tmp_path):
    """align -> temperature_scale (fitted on dev files) -> evaluate, the overlap warned and the
    per-item table written."""
    votes, preds = _data()
    dev = pd.DataFrame({"item": preds.item_ids[:20]})
    for j, name in enumerate(["a", "b", "c"]):
        dev[f"prob_{name}"] = preds.probs[:20, j]
    dev.to_csv(tmp_path / "dev.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        records = align(votes, preds)
        scaled, info = temperature_scale(
            records, fit_on=align(votes, tmp_path / "dev.csv", on_missing="drop"))
        ref = evaluate(scaled, n_boot=20, seed=3, by="agreement")
    options = EvaluateOptions(n_boot=20, seed=3, by="agreement", per_item=tmp_path / "p.csv",
                              fit_temperature_on=[tmp_path / "dev.csv"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = evaluate_memory(votes, preds, options)
    ref.temperature = info
    assert run.result.to_dict() == ref.to_dict()
    assert run.result.temperature == info and info["n_overlap_items"] == 20
    assert "20 items used to fit the temperature are also evaluated" in [str(w.message)
                                                                         for w in caught]
    assert len(pd.read_csv(tmp_path / "p.csv")) == 60


@pytest.mark.parametrize("kwargs, error, match", [
    ({"temperature": 2.0, "oracle_temperature": True}, OptionConflictError,
     "^use only one of --temperature, --fit-temperature-on and --oracle-temperature$"),
    ({"temperature": 2.0, "temperature_objective": "nll_soft"}, OptionConflictError,
     r"^--temperature-objective needs --fit-temperature-on or --oracle-temperature \(a fixed "
     r"--temperature is not fitted\)$"),
    ({"temperature": 0.0}, InvalidValueError, "temperature must be a positive finite number; "
                                              "got 0.0"),
    ({"temperature": math.inf}, InvalidValueError, "temperature must be a positive finite"),
    ({"oracle_temperature": True, "temperature_objective": "nll"}, InvalidValueError,
     r"temperature_objective must be one of \['nll_majority', 'nll_soft', 'ece_grid'\]"),
    ({"by": "gold"}, InvalidValueError, "by must be None or 'agreement'; got 'gold'"),
    ({"ties": "coin"}, InvalidValueError, "ties must be one of"),
    ({"n_bins": 0}, InvalidValueError, "n_bins"),
])
def test_options_are_checked_when_built(kwargs, error, match):
    with pytest.raises(error, match=match):
        EvaluateOptions(**kwargs)


def test_options_normalise_sequences():
    o = EvaluateOptions(metrics=["ece"], pred_labels=["a", "b"], fit_temperature_on="dev.json",
                        per_item=None)
    assert o.metrics == ("ece",) and o.pred_labels == ("a", "b")
    assert o.fit_temperature_on == ("dev.json",) and o.temperature_mode == "fit"
    assert EvaluateOptions(metrics="all").metrics == "all"
    assert EvaluateOptions().temperature_mode is None
    assert EvaluateOptions(oracle_temperature=True).temperature_mode == "oracle"


def test_positive_and_metrics_against_the_labels():
    two = LabelSet(["no", "yes"])
    assert resolve_positive("no", two) == "no" and resolve_positive(None, two) is None
    with pytest.raises(OptionConflictError, match=r"^Invalid value for '--positive': applies to "
                                                  r"two labels; the votes have 3 \(a, b, c\)$"):
        resolve_positive("a", LabelSet(["a", "b", "c"]))
    with pytest.raises(OptionConflictError, match=r"^Invalid value for '--positive': 'maybe' is "
                                                  r"not one of the labels \['no', 'yes'\]$"):
        resolve_positive("maybe", two)
    assert resolve_metrics(None, scale="nominal", n_labels=3) is None
    assert "wasserstein" in resolve_metrics("all", scale="ordinal", n_labels=3)
    with pytest.raises(InputError, match=r"^--metrics: .*wasserstein.* \(leave it out of "
                                         r"--metrics, or declare the labels' scale with "
                                         r"--scale\)$"):
        resolve_metrics(["wasserstein"], scale="nominal", n_labels=3)


def test_what_the_votes_do_not_allow():
    votes, preds = _data(10)
    with pytest.raises(OptionConflictError, match=r"^Missing option '--predictions' \(or "
                                                  r"--annotator-predictions\)\.$"):
        evaluate_memory(votes, [])
    with pytest.raises(OptionConflictError, match="^multi-label votes take --predictions, "):
        evaluate_memory(votes, preds, EvaluateOptions(by="agreement"), multilabel=True)


def test_target_option_checked_and_refused_where_no_correction_exists():
    """``EvaluateOptions.target`` (annokit.metrics.population): checked, and refused in one line
    for multi-label votes and annotator predictions."""
    with pytest.raises(InvalidValueError, match="target"):
        workflow.EvaluateOptions(target="crowd")
    options = workflow.EvaluateOptions(target="population")
    assert "--target population evaluates single-label votes" in \
        workflow.multilabel_conflict(options)
    votes = Votes.from_counts([[3, 1], [0, 4]], labels=["a", "b"], item_ids=["x", "y"])
    with pytest.raises(OptionConflictError, match="--annotator-predictions has no population"):
        workflow.evaluate_memory(votes, [], options, annotator_predictions="any.csv")
