"""Temperature scaling."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import log_softmax

from annokit.errors import DegenerateInputWarning, VoteSchemaError
from annokit.metrics.calibration import expected_calibration_error
from annokit.metrics.records import AlignedRecords
from annokit.metrics.temperature import (
    DEFAULT_GRID,
    apply_temperature,
    fit_temperature,
    temperature_scale,
)


def _synthetic(n=4000, k=3, true_t=2.0, votes=1, seed=0):
    """A model whose logits are ``true_t`` times too sharp: humans vote from softmax(z / true_t)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(0, 3, size=(n, k))
    p_true = np.exp(log_softmax(z / true_t, axis=1))
    counts = np.stack([rng.multinomial(votes, row) for row in p_true])
    probs = np.exp(log_softmax(z, axis=1))
    return AlignedRecords.from_arrays(probs, counts, logits=z, ties="random", rng=seed)


def test_default_grid_is_documented():
    assert DEFAULT_GRID[0] == 0.1 and DEFAULT_GRID[-1] == 5.0 and len(DEFAULT_GRID) == 50
    assert 2.0 in DEFAULT_GRID  # Baan et al.'s temperature is on the grid


def test_nll_majority_recovers_the_generating_temperature():
    rec = _synthetic(n=20000, votes=1)
    t = fit_temperature(rec)
    assert abs(t - 2.0) < 0.1


def test_nll_soft_recovers_the_generating_temperature():
    rec = _synthetic(n=3000, votes=100, seed=1)
    t = fit_temperature(rec, objective="nll_soft")
    assert abs(t - 2.0) < 0.1


def test_nll_fit_is_the_minimum_of_a_brute_force_scan():
    rec = _synthetic(n=500, votes=5, seed=2)
    t = fit_temperature(rec, objective="nll_soft")
    grid = np.exp(np.linspace(np.log(0.2), np.log(10), 4001))
    # independent cross-entropy via scipy's log_softmax
    losses = [-(rec.human * log_softmax(rec.logits / g, axis=1)).sum(axis=1).mean() for g in grid]
    assert abs(t - grid[int(np.argmin(losses))]) < 0.01


def test_nll_majority_fit_is_the_minimum_of_a_brute_force_scan():
    rec = _synthetic(n=500, votes=5, seed=4)
    t = fit_temperature(rec, objective="nll_majority")
    grid = np.exp(np.linspace(np.log(0.2), np.log(10), 4001))
    rows = np.arange(rec.n_items)
    losses = [-log_softmax(rec.logits / g, axis=1)[rows, rec.majority.labels].mean() for g in grid]
    assert abs(t - grid[int(np.argmin(losses))]) < 0.01


def test_ece_grid_picks_the_lowest_ece_on_the_grid():
    rec = _synthetic(n=800, votes=7, seed=3)
    grid = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0]
    t = fit_temperature(rec, objective="ece_grid", grid=grid)
    eces = [expected_calibration_error(np.exp(log_softmax(rec.logits / g, axis=1)),
                                       rec.majority.labels) for g in grid]
    assert t == grid[int(np.argmin(eces))]


def test_apply_temperature_with_logits_and_from_probs():
    rec = AlignedRecords.from_arrays([[0.8, 0.2, 0.0], [0.1, 0.6, 0.3]], [[1, 0, 0], [0, 1, 0]])
    same = apply_temperature(rec, 1.0)
    np.testing.assert_allclose(same.probs, rec.probs, atol=1e-15)
    hot = apply_temperature(rec, 2.0)
    # log(probs) as logits: softmax(log p / T) is proportional to p ** (1 / T)
    expected = np.sqrt(rec.probs) / np.sqrt(rec.probs).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(hot.probs, expected)
    assert hot.probs[0, 2] == 0.0  # zeros stay zero
    assert hot.temperature == 2.0 and rec.temperature is None
    twice = apply_temperature(apply_temperature(rec, 2.0), 1.5)
    np.testing.assert_allclose(twice.probs, apply_temperature(rec, 3.0).probs)
    assert twice.temperature == 3.0


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 6), st.integers(2, 5), st.floats(0.05, 20), st.integers(0, 2**31))
def test_temperature_keeps_argmax_and_normalisation(n, k, t, seed):
    rng = np.random.default_rng(seed)
    z = rng.normal(0, 4, size=(n, k))
    counts = rng.integers(1, 4, size=(n, k))
    rec = AlignedRecords.from_arrays(np.exp(log_softmax(z, axis=1)), counts, logits=z)
    out = apply_temperature(rec, t)
    np.testing.assert_allclose(out.probs.sum(axis=1), 1.0)
    np.testing.assert_allclose(out.probs, np.exp(log_softmax(z / t, axis=1)), rtol=1e-12, atol=1e-300)
    top = z.max(axis=1, keepdims=True)
    unique_top = (z == top).sum(axis=1) == 1
    assert (out.probs.argmax(axis=1) == z.argmax(axis=1))[unique_top].all()


def test_temperature_scale_modes():
    dev = _synthetic(n=600, votes=3, seed=4)
    test = _synthetic(n=300, votes=3, seed=5)
    scaled, info = temperature_scale(test, temperature=2)
    assert info == {"value": 2.0, "mode": "fixed"} and scaled.temperature == 2.0
    scaled, info = temperature_scale(test, fit_on=dev)
    assert info["mode"] == "fit" and info["n_fit_items"] == 600
    assert info["value"] == fit_temperature(dev) and scaled.temperature == info["value"]
    # synthetic ids are positions, so dev and test share 300 ids: reported
    assert info["n_overlap_items"] == 300
    _, info = temperature_scale(test, oracle=True, objective="ece_grid")
    assert info["mode"] == "oracle" and info["n_overlap_items"] == 300
    assert info["value"] == fit_temperature(test, objective="ece_grid")


@pytest.mark.parametrize("kwargs, message", [
    ({}, "give exactly one of temperature, fit_on and oracle=True"),
    ({"temperature": 2.0, "oracle": True}, "give exactly one of temperature, fit_on and oracle=True"),
], ids=["none", "two"])
def test_temperature_scale_needs_one_mode(kwargs, message):
    with pytest.raises(VoteSchemaError, match=re.escape(message)):
        temperature_scale(_synthetic(n=10), **kwargs)


@pytest.mark.parametrize("value, message", [
    (0.0, "temperature must be a positive finite number; got 0.0"),
    (-1, "temperature must be a positive finite number; got -1"),
    (float("nan"), "temperature must be a positive finite number; got nan"),
    ("hot", "temperature must be a positive number; got 'hot'"),
], ids=["zero", "negative", "nan", "text"])
def test_bad_temperature(value, message):
    with pytest.raises(VoteSchemaError, match=re.escape(message)):
        apply_temperature(_synthetic(n=5), value)


def test_fit_errors_and_edge_warnings():
    rec = _synthetic(n=50)
    with pytest.raises(VoteSchemaError, match=re.escape("objective must be one of ['nll_majority', "
                                                        "'nll_soft', 'ece_grid']; got 'mse'")):
        fit_temperature(rec, objective="mse")
    with pytest.raises(VoteSchemaError, match=re.escape("grid must hold positive finite "
                                                        "temperatures; got [0.0, 1.0]")):
        fit_temperature(rec, objective="ece_grid", grid=[0.0, 1.0])
    with pytest.raises(VoteSchemaError, match="grid must hold positive finite temperatures"):
        fit_temperature(rec, objective="ece_grid", grid=[])
    with pytest.raises(VoteSchemaError, match=re.escape("bounds must satisfy 0 < low < high < inf; "
                                                        "got (2.0, 1.0)")):
        fit_temperature(rec, bounds=(2.0, 1.0))
    with pytest.raises(VoteSchemaError, match="expected AlignedRecords .*; got ndarray"):
        fit_temperature(np.ones((2, 2)))
    with pytest.warns(DegenerateInputWarning, match="at the edge of the search interval"):
        fit_temperature(rec, bounds=(0.01, 1.01))  # the optimum (about 2) lies outside
    with pytest.warns(DegenerateInputWarning, match=re.escape("the lowest ECE is at the edge of the "
                                                              "temperature grid (T=0.5)")):
        fit_temperature(_synthetic(n=3000), objective="ece_grid", grid=[0.25, 0.5])


def test_baan_oracle_temperature_is_near_two(shared_data):
    from annokit.io import read_votes
    from annokit.metrics.records import align

    votes = read_votes(shared_data("chaosnli", "chaosNLI_snli.jsonl"))
    d = shared_data("chaosnli_predictions_baan2022")
    rec = align(votes, [d / "SNLI_dev_roberta-base_2.json", d / "SNLI_test_roberta-base_2.json"],
                pred_labels=["e", "c", "n"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        t = fit_temperature(rec, objective="ece_grid")
    print(f"oracle ECE-grid temperature, seed 2: {t} (Baan et al. 2022, Appendix C: 2.0)")
    assert 1.8 <= t <= 2.2
