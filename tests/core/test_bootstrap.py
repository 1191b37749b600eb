"""Percentile intervals over the Poisson bootstrap (annokit/core/resample.py): bootstrap_ci,
paired_bootstrap_diff, percentile_interval."""

from __future__ import annotations

import numpy as np
import pytest

from annokit.core.resample import (
    BootstrapResult,
    bootstrap_ci,
    item_keys,
    paired_bootstrap_diff,
    percentile_interval,
    poisson_weights,
)
from annokit.errors import InvalidValueError, SchemaError


@pytest.fixture
def values():
    return np.random.default_rng(0).gamma(2.0, size=300)


@pytest.fixture
def ids():
    return np.array([f"item{i}" for i in range(300)], dtype=object)


def _oracle_replicates(values, keys, n_boot, seed):
    """Each replicate: the plain mean of the values repeated by their Poisson counts."""
    w = poisson_weights(keys, seed, 0, n_boot).astype(int)
    return np.array([np.repeat(values, row).mean() if row.sum() else np.nan for row in w])


def test_replicates_are_means_of_repeated_items(values, ids):
    r = bootstrap_ci(values, keys=ids, n_boot=300, seed=4)
    expected = _oracle_replicates(values, item_keys(ids), 300, 4)
    np.testing.assert_allclose(r.replicates, expected, rtol=1e-12)
    low, high = np.quantile(expected, [0.025, 0.975])
    assert r.low == pytest.approx(low, rel=1e-12) and r.high == pytest.approx(high, rel=1e-12)
    # without keys the items are keyed by row position
    np.testing.assert_allclose(bootstrap_ci(values, n_boot=50, seed=4).replicates,
                               _oracle_replicates(values, np.arange(300), 50, 4), rtol=1e-12)


def test_same_seed_same_interval_whatever_the_item_order(values, ids):
    a = bootstrap_ci(values, keys=ids, n_boot=500, seed=42)
    b = bootstrap_ci(values, keys=ids, n_boot=500, seed=42)
    assert a.replicates.tobytes() == b.replicates.tobytes() and (a.low, a.high) == (b.low, b.high)
    perm = np.random.default_rng(1).permutation(300)
    c = bootstrap_ci(values[perm], keys=ids[perm], n_boot=500, seed=42)
    np.testing.assert_allclose(c.replicates, a.replicates, rtol=1e-12)
    assert c.low == pytest.approx(a.low, rel=1e-12) and c.high == pytest.approx(a.high, rel=1e-12)
    np.testing.assert_array_equal(
        bootstrap_ci(values, keys=item_keys(ids), n_boot=500, seed=42).replicates, a.replicates)
    assert not np.array_equal(bootstrap_ci(values, keys=ids, n_boot=500, seed=43).replicates,
                              a.replicates)


def test_interval_contains_estimate_and_shrinks_with_confidence(values):
    r95 = bootstrap_ci(values, n_boot=1000, seed=0)
    r50 = bootstrap_ci(values, n_boot=1000, confidence=0.5, seed=0)
    assert r95.estimate == values.mean()
    assert r95.low < r95.estimate < r95.high
    assert r95.low < r50.low < r50.high < r95.high
    # the standard error of the mean is about (high - low) / (2 * 1.96)
    se = values.std(ddof=1) / np.sqrt(len(values))
    assert (r95.high - r95.low) / 3.92 == pytest.approx(se, rel=0.15)
    assert r95.to_dict() == {"estimate": r95.estimate, "low": r95.low, "high": r95.high,
                             "confidence": 0.95, "n_boot": 1000, "n_invalid": 0}


def test_weighted_statistic_function_agrees_with_per_item_array(values, ids):
    arr = bootstrap_ci(values, keys=ids, n_boot=100, seed=3)
    fun = bootstrap_ci(lambda w: w @ values / w.sum(axis=1), keys=ids, n_boot=100, seed=3)
    np.testing.assert_array_equal(arr.replicates, fun.replicates)
    assert fun.estimate == pytest.approx(arr.estimate, rel=1e-14)


def test_a_binned_metric_as_a_function_of_weights():
    rng = np.random.default_rng(1)
    conf = rng.uniform(0.3, 1, 200)
    hit = rng.uniform(size=200) < conf

    def ece(w):  # two equal-width bins, weighted
        b = (conf >= 0.65).astype(int)
        out = np.zeros(w.shape[0])
        for k in (0, 1):
            wk = w[:, b == k]
            out += np.abs(wk @ (hit[b == k] - conf[b == k])) / w.sum(axis=1)
        return out

    r = bootstrap_ci(ece, keys=np.arange(200), n_boot=50, seed=0)
    assert r.estimate == pytest.approx(ece(np.ones((1, 200)))[0])
    assert r.low <= r.high and r.replicates.shape == (50,)


def test_paired_diff_of_model_with_itself_is_exactly_zero(values, ids):
    r = paired_bootstrap_diff(values, values, keys=ids, n_boot=300, seed=9)
    assert r.estimate == 0.0 and r.low == 0.0 and r.high == 0.0
    assert (r.replicates == 0).all()
    def f(w):
        return w @ values / w.sum(axis=1)

    assert (paired_bootstrap_diff(f, f, keys=ids, n_boot=50, seed=9).replicates == 0).all()


def test_paired_diff_uses_the_same_weights_and_is_narrower(values, ids):
    rng = np.random.default_rng(2)
    other = values + rng.normal(0.1, 0.05, size=values.size)  # same items, shifted
    paired = paired_bootstrap_diff(other, values, keys=ids, n_boot=1000, seed=0)
    assert paired.estimate == pytest.approx(other.mean() - values.mean(), abs=1e-12)
    np.testing.assert_allclose(
        paired.replicates,
        bootstrap_ci(other, keys=ids, n_boot=1000, seed=0).replicates
        - bootstrap_ci(values, keys=ids, n_boot=1000, seed=0).replicates, atol=1e-12)
    assert 0 < paired.low < paired.high
    a = bootstrap_ci(other, keys=ids, n_boot=1000, seed=0)
    assert paired.high - paired.low < (a.high - a.low) / 3
    assert isinstance(paired, BootstrapResult)


def test_empty_replicates_are_dropped_and_counted():
    r = bootstrap_ci([2.0], n_boot=400, seed=0)  # one item: about e^-1 of replicates are empty
    w = poisson_weights(np.arange(1), 0, 0, 400)[:, 0]
    assert r.n_invalid == int((w == 0).sum()) and 100 < r.n_invalid < 190
    assert r.low == r.high == 2.0 and r.n_boot == 400


def test_percentile_interval():
    r = percentile_interval(0.5, [0.1, 0.9, np.nan, 0.5, np.inf], 0.5)
    assert (r.low, r.high, r.n_invalid, r.n_boot) == (0.3, 0.7, 2, 5)
    none = percentile_interval(1.0, [np.nan, np.nan], 0.9)
    assert np.isnan(none.low) and np.isnan(none.high) and none.n_invalid == 2


@pytest.mark.parametrize("call, error, match", [
    (lambda v: bootstrap_ci(v, n_boot=0), InvalidValueError, "n_boot must be a positive integer; got 0"),
    (lambda v: bootstrap_ci(v, confidence=1.5), InvalidValueError,
     r"confidence must be in \(0, 1\); got 1.5"),
    (lambda v: bootstrap_ci(v, seed=None), InvalidValueError, "seed must be an integer; got None"),
    (lambda v: bootstrap_ci(lambda w: w[:, 0]), SchemaError,
     r"values is a function of item weights: pass keys \(one per item\)"),
    (lambda v: bootstrap_ci(lambda w: np.zeros(2), keys=np.arange(3), n_boot=5), SchemaError,
     r"values must return shape \(1,\) for weights of shape \(1, 3\); got \(2,\)"),
    (lambda v: bootstrap_ci(np.zeros((2, 2))), SchemaError,
     (r"values must be a non-empty 1-D array of per-item values or a function of weights; "
      r"got shape \(2, 2\)")),
    (lambda v: bootstrap_ci([1.0, np.nan]), InvalidValueError,
     "values has NaN or infinite values at item 1"),
    (lambda v: bootstrap_ci(v, keys=["a", "b"]), SchemaError,
     r"keys must hold one key per item \(300 for values\); got shape \(2,\)"),
    (lambda v: paired_bootstrap_diff(v, v[:10]), SchemaError,
     "values_a covers 300 items but values_b covers 10"),
    (lambda v: percentile_interval(0.0, np.zeros((2, 2)), 0.9), SchemaError,
     r"replicates must be 1-D; got shape \(2, 2\)"),
    (lambda v: percentile_interval(0.0, [0.0], True), InvalidValueError,
     r"confidence must be in \(0, 1\); got True"),
], ids=["zero_n_boot", "confidence_above_one", "seed_none", "function_without_keys",
        "function_wrong_shape", "values_2d", "values_nan", "keys_wrong_length", "paired_lengths",
        "replicates_2d", "confidence_bool"])
def test_errors(values, call, error, match):
    with pytest.raises(error, match=match):
        call(values)
