"""Loading several models for a report (annokit/report/inputs.py)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from annokit.core.votes import Votes
from annokit.errors import DegenerateInputWarning, InputError, InvalidValueError
from annokit.metrics.records import align
from annokit.metrics.temperature import temperature_scale
from annokit.report import ModelPredictions, load_models, subsampling_rows


@pytest.fixture
def setup(tmp_path):
    rng = np.random.default_rng(1)
    n = 30
    counts = rng.multinomial(6, [0.5, 0.3, 0.2], size=n)
    votes = Votes.from_counts(counts, labels=["a", "b", "c"], item_ids=[f"i{j}" for j in range(n)])
    probs = rng.dirichlet([2, 2, 2], size=n)

    def write(name, rows):
        path = tmp_path / name
        path.write_text("".join(json.dumps({"uid": f"i{j}", "probs": probs[j].tolist()}) + "\n"
                                for j in rows))
        return path

    return votes, probs, write("dev.jsonl", range(15)), write("test.jsonl", range(15, n)), \
        write("part.jsonl", range(10))


def test_models_are_read_aligned_and_temperature_scaled(setup):
    votes, probs, dev, test, _ = setup
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)  # the fit file covers 15 items
        out = load_models(votes, {"m": [dev, test], "copy": [str(dev), str(test)]},
                          pred_labels="a,b,c", temperatures=[("m", 2.0)],
                          fit_temperature_on=[("copy", dev)])
    assert [m.name for m in out.models] == ["m", "copy", "m T=2", "copy TS"]
    assert all(isinstance(m, ModelPredictions) for m in out.models)
    np.testing.assert_allclose(out.models[0].probs, probs)
    assert out.models[0].sources == ["dev.jsonl", "test.jsonl"]
    rec = align(votes, [dev, test], pred_labels="a,b,c")
    np.testing.assert_allclose(out.models[2].probs, temperature_scale(rec, temperature=2.0)[0].probs)
    assert out.models[2].temperature == 2.0 and out.models[3].sources == ["dev.jsonl"]
    assert out.notes == [out.models[3].temperature_note.join(["model copy TS: ", ""])]
    assert "T fitted on dev.jsonl (15 items with votes" in out.notes[0]


def test_missing_predictions_error_or_drop(setup):
    votes, _, dev, test, part = setup
    with pytest.raises(InputError, match="15 of 30 vote items have no prediction"):
        load_models(votes, {"m": dev}, pred_labels="a,b,c")
    with pytest.warns(DegenerateInputWarning, match="20 of 30 vote items have no prediction "
                                                    "from at least one model"):
        out = load_models(votes, {"m": [dev, test], "p": part}, pred_labels="a,b,c",
                          on_missing="drop")
    assert out.votes.n_items == 10 and out.models[1].probs.shape == (10, 3)
    assert out.notes[0].startswith("20 of 30 vote items have no prediction")


@pytest.mark.parametrize("kwargs, error, match", [
    ({"models": {}}, InputError, "a report needs at least one model"),
    ({"temperatures": [("x", 2.0)]}, InputError,
     r"temperatures names model\(s\) \['x'\] that are not among the models \['m'\]"),
    ({"fit_temperature_on": [("y", "f")]}, InputError,
     r"fit_temperature_on names model\(s\) \['y'\]"),
    ({"pred_labels": "a,b,x"}, InputError, "do not match the votes' labels"),
])
def test_load_models_rejects_bad_input(setup, kwargs, error, match):
    votes, _, dev, test, _ = setup
    args = {"models": {"m": [dev, test]}, "pred_labels": "a,b,c", **kwargs}
    with pytest.raises(error, match=match):
        load_models(votes, args.pop("models"), **args)


def test_subsampling_rows_note_skipped_items_and_reject_non_integers():
    votes = Votes.from_counts([[3, 1], [2, 2], [0, 2]], labels=["a", "b"])
    notes: list[str] = []
    rows = subsampling_rows(votes, [1, 4], reps=5, notes=notes)
    assert [r["k"] for r in rows] == [1, 4] and rows[1]["tvd_mean"] == 0.0
    assert len(notes) == 1 and notes[0].startswith("subsampling: ")
    with pytest.raises(InvalidValueError, match="ks must be a sequence of integers; got '1,2'"):
        subsampling_rows(votes, "1,2")


@pytest.mark.filterwarnings("ignore:the fitted temperature")
def test_fit_temperature_on_dev_files_with_on_missing_drop(setup):
    """The dev predictions are joined to all the votes, not to the votes already restricted to
    the evaluated (test) items (which would leave no dev item with votes)."""
    votes, _, dev, test, _ = setup
    with pytest.warns(DegenerateInputWarning, match="15 of 30 vote items have no prediction"):
        out = load_models(votes, {"m": test}, pred_labels="a,b,c", on_missing="drop",
                          fit_temperature_on=[("m", dev)])
    assert out.votes.n_items == 15 and [m.name for m in out.models] == ["m", "m TS"]
    full = align(votes, [dev, test], pred_labels="a,b,c")
    fit_on = full.select(np.arange(15))
    expected, info = temperature_scale(full.select(np.arange(15, 30)), fit_on=fit_on)
    np.testing.assert_allclose(out.models[1].probs, expected.probs)
    assert out.models[1].temperature == info["value"]
    assert "T fitted on dev.jsonl (15 items with votes" in out.models[1].temperature_note
    assert "0 of them are also evaluated" in out.models[1].temperature_note
