"""Baan et al. (2022) human-calibration measures per item, and published values on ChaosNLI."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import entropy as scipy_entropy

from annokit.core.divergence import tvd
from annokit.errors import InvalidValueError, SchemaError
from annokit.metrics import compute
from annokit.metrics.human_calibration import (
    distribution_calibration_error,
    entropy_calibration_error,
    rank_calibration_score,
)


def vote_targets(rng, n, k, n_votes=5):
    """Human distributions from few votes: many exact ties and zeros."""
    counts = rng.multinomial(n_votes, np.full(k, 1.0 / k), size=n)
    return counts / n_votes


def model_probs(rng, n, k):
    return rng.dirichlet(np.ones(k), size=n)


# --------------------------------------------------------------------------- EntCE, DistCE

def test_entce_matches_scipy_in_nats():
    rng = np.random.default_rng(0)
    p, t = model_probs(rng, 30, 3), vote_targets(rng, 30, 3)
    expected = scipy_entropy(p, axis=1) - scipy_entropy(t, axis=1)  # natural log
    np.testing.assert_allclose(entropy_calibration_error(p, t), expected, atol=1e-12)


def test_entce_sign_means_model_less_certain():
    ent = entropy_calibration_error([[0.5, 0.5], [1.0, 0.0]], [[0.9, 0.1], [0.5, 0.5]])
    assert ent[0] > 0 > ent[1]
    assert ent[1] == pytest.approx(-np.log(2), abs=1e-15)


def test_distce_is_tvd():
    rng = np.random.default_rng(1)
    p, t = model_probs(rng, 20, 4), vote_targets(rng, 20, 4)
    np.testing.assert_array_equal(distribution_calibration_error(p, t), tvd(p, t))


def test_oracle_is_exactly_zero():
    rng = np.random.default_rng(2)
    t = vote_targets(rng, 50, 3)
    assert (entropy_calibration_error(t, t) == 0).all()
    assert (distribution_calibration_error(t, t) == 0).all()
    assert rank_calibration_score(t, t).all()


# --------------------------------------------------------------------------- RankCS

@pytest.mark.parametrize("probs, targets, strict, tie_aware", [
    pytest.param([0.1, 0.3, 0.6], [0.2, 0.3, 0.5], True, True, id="same_order"),
    pytest.param([0.3, 0.1, 0.6], [0.2, 0.3, 0.5], False, False, id="swapped_bottom"),
    # human tie between classes 0 and 1: the paper's code wants label order 0 < 1
    pytest.param([0.1, 0.3, 0.6], [0.2, 0.2, 0.6], True, True, id="tie_in_label_order"),
    pytest.param([0.3, 0.1, 0.6], [0.2, 0.2, 0.6], False, True, id="tie_reversed"),
    pytest.param([0.3, 0.6, 0.1], [0.2, 0.2, 0.6], False, False, id="tie_but_wrong_top"),
    # model tie: ordered by label index in both variants
    pytest.param([0.2, 0.2, 0.6], [0.3, 0.1, 0.6], False, False, id="model_tie"),
])
def test_rank_cs_cases(probs, targets, strict, tie_aware):
    assert rank_calibration_score([probs], [targets]).tolist() == [strict]
    assert rank_calibration_score([probs], [targets], tie_aware=True).tolist() == [tie_aware]


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 6))
def test_rank_cs_definitions(seed, k):
    rng = np.random.default_rng(seed)
    p, t = model_probs(rng, 40, k), vote_targets(rng, 40, k, n_votes=4)
    strict = rank_calibration_score(p, t)
    aware = rank_calibration_score(p, t, tie_aware=True)
    # Baan et al.'s code ran np.argsort's default kind, which in 2022 numpy was an insertion
    # sort (stable) below 17 items; Python's sorted() is the same stable order. (numpy >= 1.25
    # may dispatch the default kind to an unstable SIMD sort on AVX-512: hence kind="stable".)
    def ranks(rows):
        return np.array([sorted(range(k), key=lambda j: row[j]) for row in rows])

    baan = (ranks(p) == ranks(t)).all(axis=1)
    np.testing.assert_array_equal(strict, baan)
    assert (aware | ~strict).all()  # strict => tie-aware
    no_ties = np.array([len(set(row)) == k for row in t])
    np.testing.assert_array_equal(strict[no_ties], aware[no_ties])
    # tie-aware brute force: some ordering of tied human classes equals the model's ranking
    order = np.argsort(p, axis=1, kind="stable")
    brute = [all(t[i, order[i, j]] <= t[i, order[i, j + 1]] for j in range(k - 1))
             for i in range(40)]
    np.testing.assert_array_equal(aware, brute)


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("fn", [entropy_calibration_error, rank_calibration_score,
                                distribution_calibration_error])
@pytest.mark.parametrize("probs, targets, error, match", [
    ([[0.5, 0.5]], [[0.2, 0.3, 0.5]], SchemaError,
     r"targets must have the shape of probs \(1, 2\); got \(1, 3\)"),
    ([[0.5, 0.5]], [[0.5, 0.4]], InvalidValueError, "targets rows must sum to 1"),
    ([[-0.5, 1.5]], [[0.5, 0.5]], InvalidValueError, "probs has a negative value in row 0"),
    ([[0.5, 0.5], [0.7, np.nan]], [[0.5, 0.5]] * 2, InvalidValueError,
     "probs has NaN or infinite values in row 1"),
    (np.zeros((0, 2)), np.zeros((0, 2)), SchemaError, "probs has no rows"),
])
def test_errors(fn, probs, targets, error, match):
    with pytest.raises(error, match=match):
        fn(probs, targets)


# --------------------------------------------------------------------------- real data

@pytest.fixture
def snli(shared_data):
    from annokit.core.soft_labels import distributions, majority
    from annokit.io import read_chaosnli

    votes = read_chaosnli(shared_data("chaosnli", "chaosNLI_snli.jsonl"))
    counts = votes.counts()
    return distributions(counts), majority(counts, ties="first").labels


@pytest.mark.parametrize("metric, expected, tol", [
    pytest.param("ece", 0.25, 0.01, id="baan2022_table1_oracle_ece"),
    pytest.param("dist_ce", 0.0, 0.0, id="baan2022_table1_oracle_distce"),
    pytest.param("ent_ce", 0.0, 0.0, id="baan2022_table1_oracle_entce"),
    pytest.param("rank_cs", 1.0, 0.0, id="baan2022_table1_oracle_rankcs"),
])
def test_chaosnli_snli_oracle(snli, metric, expected, tol):
    targets, majority_labels = snli
    got = compute(metric, targets, targets, majority_labels)
    print(f"{metric}: ours {got:.4f}, Baan et al. (2022) Table 1 oracle {expected}")
    assert abs(got - expected) <= tol


@pytest.mark.parametrize("metric, expected", [
    pytest.param("jsd", 0.383, id="nie2020_table5_snli_chance_jsd"),
    pytest.param("kl", 0.5457, id="nie2020_table5_snli_chance_kl"),
])
def test_chaosnli_snli_chance(snli, metric, expected):
    targets, majority_labels = snli
    uniform = np.full_like(targets, 1 / 3)
    got = compute(metric, uniform, targets, majority_labels)
    print(f"{metric}: ours {got:.4f}, Nie et al. (2020) Table 5 chance {expected}")
    assert abs(got - expected) <= 0.0005
