"""Percentile bootstrap over items and the paired model comparison."""

from __future__ import annotations

import numpy as np
import pytest

from annokit.errors import VoteSchemaError
from annokit.metrics import bootstrap as bs
from annokit.metrics.bootstrap import BootstrapResult, bootstrap_ci, paired_bootstrap_diff
from annokit.metrics.calibration import expected_calibration_error


@pytest.fixture
def values():
    return np.random.default_rng(0).gamma(2.0, size=300)


def test_same_seed_is_bit_identical(values):
    a = bootstrap_ci(values, n_boot=500, rng=42)
    b = bootstrap_ci(values, n_boot=500, rng=np.random.default_rng(42))
    assert a.replicates.tobytes() == b.replicates.tobytes()
    assert (a.low, a.high) == (b.low, b.high)
    c = bootstrap_ci(values, n_boot=500, rng=43)
    assert not np.array_equal(a.replicates, c.replicates)


def test_interval_contains_estimate_and_shrinks_with_confidence(values):
    r95 = bootstrap_ci(values, n_boot=1000, rng=0)
    r50 = bootstrap_ci(values, n_boot=1000, confidence=0.5, rng=0)
    assert r95.estimate == pytest.approx(values.mean(), rel=1e-15)
    assert r95.low < r95.estimate < r95.high
    assert r95.low < r50.low < r50.high < r95.high
    # the standard error of the mean is about (high - low) / (2 * 1.96)
    se = values.std(ddof=1) / np.sqrt(len(values))
    assert (r95.high - r95.low) / 3.92 == pytest.approx(se, rel=0.15)
    assert r95.to_dict() == {"estimate": r95.estimate, "low": r95.low, "high": r95.high,
                             "confidence": 0.95, "n_boot": 1000}


def test_blocks_do_not_change_the_result(values, monkeypatch):
    whole = bootstrap_ci(values, n_boot=200, rng=5).replicates
    monkeypatch.setattr(bs, "_BLOCK_ENTRIES", 300 * 7)  # 7 replicates per block
    blocked = bootstrap_ci(values, n_boot=200, rng=5).replicates
    # blocks draw from one generator in sequence: the same index stream
    np.testing.assert_allclose(whole, blocked, rtol=1e-15)


def test_callable_statistics_agree_with_per_item_array(values):
    arr = bootstrap_ci(values, n_boot=100, rng=3)
    vec = bootstrap_ci(lambda idx: values[idx].mean(axis=1), n_items=300, n_boot=100, rng=3,
                       vectorized=True)
    loop = bootstrap_ci(lambda idx: values[idx].mean(), n_items=300, n_boot=100, rng=3)
    np.testing.assert_array_equal(arr.replicates, vec.replicates)
    np.testing.assert_allclose(arr.replicates, loop.replicates, rtol=1e-12)


def test_binned_metric_as_function_of_items():
    rng = np.random.default_rng(1)
    probs = rng.dirichlet(np.ones(3), size=200)
    labels = rng.integers(0, 3, 200)
    r = bootstrap_ci(lambda i: expected_calibration_error(probs[i], labels[i]), n_items=200,
                     n_boot=50, rng=0)
    assert r.estimate == expected_calibration_error(probs, labels)
    assert r.low <= r.high and r.replicates.shape == (50,)


def test_paired_diff_of_model_with_itself_is_exactly_zero(values):
    r = paired_bootstrap_diff(values, values, n_boot=300, rng=9)
    assert r.estimate == 0.0 and r.low == 0.0 and r.high == 0.0
    assert (r.replicates == 0).all()
    f = lambda idx: values[idx].mean(axis=1)
    r2 = paired_bootstrap_diff(f, f, n_items=300, n_boot=50, rng=9, vectorized=True)
    assert (r2.replicates == 0).all()


def test_paired_diff_is_narrower_than_unpaired(values):
    rng = np.random.default_rng(2)
    other = values + rng.normal(0.1, 0.05, size=values.size)  # same items, shifted
    paired = paired_bootstrap_diff(other, values, n_boot=1000, rng=0)
    assert paired.estimate == pytest.approx(other.mean() - values.mean(), abs=1e-12)
    assert 0 < paired.low < paired.high
    a = bootstrap_ci(other, n_boot=1000, rng=0)
    assert paired.high - paired.low < (a.high - a.low) / 3
    assert isinstance(paired, BootstrapResult)


@pytest.mark.parametrize("call, match", [
    (lambda v: bootstrap_ci(v, n_boot=0), "n_boot must be a positive integer; got 0"),
    (lambda v: bootstrap_ci(v, confidence=1.5), r"confidence must be in \(0, 1\); got 1.5"),
    (lambda v: bootstrap_ci(lambda i: 0.0), "statistic is a function of item indices: pass n_items"),
    (lambda v: bootstrap_ci(lambda i: 0.0, n_items=0), "n_items must be a positive integer; got 0"),
    (lambda v: bootstrap_ci(lambda i: np.zeros(2), n_items=3, vectorized=True, n_boot=5),
     r"vectorized statistic must return shape \(1,\) for an index matrix of shape \(1, 3\); got \(2,\)"),
    (lambda v: bootstrap_ci(np.zeros((2, 2))), r"statistic must be a 1-D array of per-item values or a function; got shape \(2, 2\)"),
    (lambda v: bootstrap_ci([1.0, np.nan]), "statistic has NaN or infinite values at item 1"),
    (lambda v: bootstrap_ci(v, n_items=5), "n_items=5 but statistic has 300 values"),
    (lambda v: paired_bootstrap_diff(v, v[:10]), "stat_a covers 300 items but stat_b covers 10"),
    (lambda v: bootstrap_ci(v, rng="seed"), "rng must be a numpy Generator, an int seed or None"),
])
def test_errors(values, call, match):
    with pytest.raises(VoteSchemaError, match=match):
        call(values)
