"""The intervals of the binned metrics (the bounds method) and ``ece_debiased`` (Kumar et al. 2019).

Sources: Kumar, Liang, Ma (2019), Verified Uncertainty Calibration, NeurIPS, arXiv:1909.10155
(the debiased estimator; the reference implementation is uncertainty-calibration's
``calibration.utils.unbiased_square_ce``); the bounds ``|sum_b P(b) mu_b| <= sum_b P(b) |mu_b|
<= sqrt(sum_b P(b) mu_b^2)`` (triangle and Cauchy-Schwarz inequalities).
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from annokit.metrics._binning import bin_index, uniform_edges
from annokit.metrics.engine import evaluate
from annokit.metrics.records import AlignedRecords
from annokit.metrics.registry import REGISTRY, available, compute


def _inputs(seed: int, n: int = 400, k: int = 3):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.full(k, 0.7), n)
    hard = np.array([rng.choice(k, p=p) for p in probs ** 1.3 / (probs ** 1.3).sum(1, keepdims=True)])
    soft = rng.dirichlet(np.ones(k), n)
    return probs, soft, hard


# ------------------------------------------------------------------ numpy oracles

def _oracle_bins(conf, target, n_bins=10):
    idx = bin_index(conf, uniform_edges(n_bins))
    return [(conf[idx == b], target[idx == b]) for b in range(n_bins)]


def _oracle_debiased(conf, hit, n_bins=10):
    """Kumar et al. (2019), section 5, bin by bin: P(b) (gap_b^2 - y_b (1 - y_b) / (n_b - 1))."""
    total = 0.0
    for c, y in _oracle_bins(conf, hit, n_bins):
        if c.size >= 2:
            total += c.size / conf.size * ((c.mean() - y.mean()) ** 2
                                           - y.mean() * (1 - y.mean()) / (c.size - 1))
    return total


def _oracle_bounds(conf, target, *, hard, n_bins=10):
    lower = conf.mean() - target.mean()
    if hard:
        upper = np.sqrt(max(0.0, _oracle_debiased(conf, target, n_bins)))
    else:
        upper = sum(c.size / conf.size * abs(c.mean() - y.mean())
                    for c, y in _oracle_bins(conf, target, n_bins) if c.size)
    return lower, upper


def _top(probs, soft, hard):
    pred = probs.argmax(1)
    rows = np.arange(len(pred))
    return probs[rows, pred], (pred == hard).astype(float), soft[rows, pred]


def _state_bounds(name, probs, soft, hard, **options):
    state = REGISTRY[name].state(**options)
    state.update(probs, soft=soft, hard=hard)
    return state.bounds()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_top_label_bounds_equal_a_numpy_oracle(seed):
    probs, soft, hard = _inputs(seed)
    conf, hit, target = _top(probs, soft, hard)
    assert _state_bounds("ece", probs, soft, hard) == pytest.approx(
        _oracle_bounds(conf, hit, hard=True), rel=1e-12, abs=1e-15)
    assert _state_bounds("smece", probs, soft, hard) == pytest.approx(
        _oracle_bounds(conf, target, hard=False), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("seed", [0, 1])
def test_classwise_bounds_average_the_per_class_oracle(seed):
    """The upper statistic is the mean of the per-class ones; no lower statistic (NaN)."""
    probs, soft, hard = _inputs(seed)
    onehot = np.eye(probs.shape[1])[hard]
    for name, target, is_hard in (("classwise_ece", onehot, True),
                                  ("smece_classwise", soft, False)):
        upper = np.mean([_oracle_bounds(probs[:, j], target[:, j], hard=is_hard)[1]
                         for j in range(probs.shape[1])])
        lower, got = _state_bounds(name, probs, soft, hard)
        assert np.isnan(lower) and got == pytest.approx(upper, rel=1e-12)


def test_adaptive_and_binary_bounds_use_their_own_bins():
    probs, soft, hard = _inputs(3)
    conf, hit, _ = _top(probs, soft, hard)
    edges = np.quantile(conf, np.linspace(0, 1, 11))
    idx = bin_index(conf, edges)
    lower, upper = _state_bounds("ece_adaptive", probs, soft, hard)
    assert lower == pytest.approx(conf.mean() - hit.mean(), rel=1e-12)
    debiased = sum((idx == b).sum() / conf.size * ((conf[idx == b].mean() - hit[idx == b].mean())
                                                   ** 2 - hit[idx == b].mean()
                                                   * (1 - hit[idx == b].mean())
                                                   / ((idx == b).sum() - 1))
                   for b in range(10) if (idx == b).sum() >= 2)
    assert upper == pytest.approx(np.sqrt(max(debiased, 0.0)), rel=1e-12)
    p2 = np.column_stack([1 - probs[:, 0], probs[:, 0]])
    y2 = (hard == 0).astype(int)
    lower, upper = _state_bounds("ece_binary", p2, None, y2)
    assert (lower, upper) == pytest.approx(_oracle_bounds(p2[:, 1], y2.astype(float), hard=True),
                                           rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_bounds_bracket_the_plug_in_from_below(seed):
    """|sum gaps| <= sum |gaps|: the lower statistic never exceeds the plug-in ECE."""
    probs, soft, hard = _inputs(seed)
    for name in ("ece", "ece_adaptive", "smece"):
        lower, _ = _state_bounds(name, probs, soft, hard)
        assert abs(lower) <= compute(name, probs, soft, hard) + 1e-15


def test_mce_has_no_bounds():
    probs, soft, hard = _inputs(0)
    assert _state_bounds("mce", probs, soft, hard) is None


# ------------------------------------------------------------------ ece_debiased

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ece_debiased_equals_the_numpy_oracle(seed):
    probs, soft, hard = _inputs(seed)
    conf, hit, _ = _top(probs, soft, hard)
    assert compute("ece_debiased", probs, hard=hard) == pytest.approx(
        _oracle_debiased(conf, hit), rel=1e-12)


@pytest.mark.parametrize("seed, n_bins", [(0, 10), (1, 15), (2, 5)])
def test_ece_debiased_equals_uncertainty_calibration_kumar2019(seed, n_bins):
    """uncertainty-calibration's ``unbiased_square_ce`` on the same (our) equal-width bins, and
    its ``get_calibration_error(debias=True)`` is the square root of max(0, .)."""
    utils = pytest.importorskip("calibration.utils", reason="uncertainty-calibration not installed")
    probs, soft, hard = _inputs(seed, n=300)
    conf, hit, _ = _top(probs, soft, hard)
    idx = bin_index(conf, uniform_edges(n_bins))
    binned = [np.column_stack([conf[idx == b], hit[idx == b]]) for b in range(n_bins)]
    theirs = utils.unbiased_square_ce(binned)
    ours = compute("ece_debiased", probs, hard=hard, n_bins=n_bins)
    assert ours == pytest.approx(theirs, rel=1e-10, abs=1e-15)
    assert np.sqrt(max(ours, 0.0)) == pytest.approx(utils.unbiased_l2_ce(binned), rel=1e-10)


def test_ece_debiased_can_be_negative_and_is_not_listed():
    """A calibrated coin: the squared gaps are smaller than their noise on average."""
    rng = np.random.default_rng(4)
    p = rng.uniform(0.5, 1.0, 4000)
    hard = (rng.random(4000) >= p).astype(int)  # label 0 with probability p
    probs = np.column_stack([p, 1 - p])
    values = [compute("ece_debiased", probs[i::8], hard=hard[i::8]) for i in range(8)]
    assert min(values) < 0 < max(values)
    assert "ece_debiased" not in available(True, True)
    assert REGISTRY["ece_debiased"].unit == "squared probability"


# ------------------------------------------------------------------ the engine's intervals

def _population(n, rng, temperature):
    """10 votes per item from Dirichlet(1,1,1) people; the model softmax(T log p + noise)."""
    p = rng.dirichlet(np.ones(3), n)
    counts = rng.multinomial(10, p)
    z = temperature * np.log(np.clip(p, 1e-6, None)) + rng.normal(0, 0.5, (n, 3))
    probs = np.exp(z - z.max(1, keepdims=True))
    return AlignedRecords.from_arrays(probs / probs.sum(1, keepdims=True), counts)


def test_binned_intervals_cover_where_the_percentile_interval_does_not():
    """A small seeded version of recipes/interval_coverage.py: 40 samples of 300 items,
    100 replicates, a nearly calibrated model (population ECE ~0.03)."""
    rng = np.random.default_rng(11)
    names = ("ece", "ece_adaptive", "classwise_ece")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        truth = evaluate(_population(200_000, rng, 2.8), metrics=names, baselines=False).metrics
        hits = dict.fromkeys(names, 0)
        old = dict.fromkeys(names, 0)
        for s in range(40):
            res = evaluate(_population(300, rng, 2.8), metrics=names, n_boot=100, seed=s,
                           baselines=False)
            for m in names:
                ci = res.intervals[m]
                hits[m] += ci.low <= truth[m] <= ci.high
                q = np.quantile(ci.replicates, [0.025, 0.975])
                old[m] += q[0] <= truth[m] <= q[1]
    assert all(hits[m] / 40 >= 0.8 for m in names), hits
    assert old["classwise_ece"] / 40 < 0.5  # the old percentile interval, for contrast


def test_interval_methods_in_the_json_and_the_text():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = evaluate(_population(300, np.random.default_rng(0), 2.8), n_boot=50)
    doc = json.loads(json.dumps(res.to_dict()))
    ci = doc["ci"]
    assert set(ci) == set(res.metrics)
    assert ci["accuracy"]["method"] == "normal" and ci["ece"]["method"] == "bounds"
    assert ci["mce"] == {"low": None, "high": None, "method": "none",
                         "reason": REGISTRY["mce"].no_interval}
    assert all(isinstance(v["low"], float) for k, v in ci.items() if k != "mce")
    assert "no interval" in repr(res)
    assert sum(v["method"] == "none" for v in ci.values()) <= 2
