"""Krippendorff's alpha and Fleiss' kappa (annokit/core/agreement.py) against independent references."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit.core.agreement import fleiss_kappa, krippendorff_alpha
from annokit.core.resample import item_keys, poisson_weights
from annokit.errors import DegenerateInputWarning, InvalidValueError, SchemaError, VoteSchemaError
from annokit.io import read_votes

# Fleiss (1971), 10 subjects x 14 raters x 5 categories, as tabulated on the
# "Fleiss' kappa" Wikipedia page and in most textbooks; kappa = 0.210 (0.20993).
FLEISS_1971 = np.array([
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
])


@pytest.mark.parametrize("counts, expected", [pytest.param(FLEISS_1971, 0.2099, id="fleiss1971_wikipedia")])
def test_fleiss_kappa_reference(counts, expected):
    assert fleiss_kappa(counts).value == pytest.approx(expected, abs=5e-5)


CROWD = [
    ("snow2008_rte", "rte.standardized.tsv"),
    ("bluebirds", "answer.csv"),
    ("dog", "answer.csv"),
    ("face", "answer.csv"),
    ("chaosnli", "chaosNLI_snli.jsonl"),
    ("chaosnli", "chaosNLI_mnli_m.jsonl"),
    ("chaosnli", "chaosNLI_alphanli.jsonl"),
]


@pytest.mark.parametrize("folder, name", CROWD, ids=[f"krippendorff_pkg_{f}_{n.split('.')[0]}" for f, n in CROWD])
def test_alpha_equals_krippendorff_package(shared_data, folder, name):
    krippendorff = pytest.importorskip("krippendorff")
    counts = read_votes(shared_data(folder, name)).counts()
    expected = krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
    assert krippendorff_alpha(counts).value == pytest.approx(expected, abs=1e-9)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 30), st.integers(2, 5))
def test_alpha_matches_package_on_random_unequal_counts(seed, n_items, n_labels):
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 5, (n_items, n_labels))
    counts[:, 0] += 2  # every item pairable
    if (counts.sum(axis=0) > 0).sum() < 2:
        counts[0, 1] += 1
    expected = krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
    assert krippendorff_alpha(counts).value == pytest.approx(expected, abs=1e-9)


def test_perfect_agreement_is_one_and_bootstrap_is_seeded():
    counts = np.array([[5, 0, 0], [0, 4, 0], [0, 0, 3], [6, 0, 0]])
    assert krippendorff_alpha(counts).value == pytest.approx(1.0)
    assert fleiss_kappa(counts).value == pytest.approx(1.0)
    a = krippendorff_alpha(FLEISS_1971, n_boot=200, rng=3)
    b = krippendorff_alpha(FLEISS_1971, n_boot=200, rng=3)
    assert a == b
    assert a.ci_low <= a.value <= a.ci_high
    gen_a, gen_b = np.random.default_rng(8), np.random.default_rng(8)
    assert krippendorff_alpha(FLEISS_1971, n_boot=50, rng=gen_a) == \
        krippendorff_alpha(FLEISS_1971, n_boot=50, rng=gen_b)


def _repeated_rows_alpha_and_kappa(counts, w):
    """Both coefficients on the count matrix with item i repeated w_i times (the resample)."""
    krippendorff = pytest.importorskip("krippendorff")
    rows = np.repeat(counts, w.astype(int), axis=0)
    if (rows.sum(axis=0) > 0).sum() < 2:
        return np.nan, np.nan
    alpha = krippendorff.alpha(value_counts=rows, level_of_measurement="nominal")
    m = rows.sum(axis=1)
    p_bar = ((rows * (rows - 1)).sum(axis=1) / (m * (m - 1))).mean()
    p_e = ((rows.sum(axis=0) / m.sum()) ** 2).sum()
    return alpha, (p_bar - p_e) / (1 - p_e)


def test_bootstrap_replicates_are_the_coefficients_of_repeated_items(shared_data):
    votes = read_votes(shared_data("dog", "answer.csv"))
    counts = votes.counts()
    keep = counts.sum(axis=1) >= 2
    a = krippendorff_alpha(counts, n_boot=40, rng=5, keys=votes.item_ids)
    k = fleiss_kappa(counts, n_boot=40, rng=5, keys=votes.item_ids)
    w = poisson_weights(item_keys(votes.item_ids[keep]), 5, 0, 40)
    reps = np.array([_repeated_rows_alpha_and_kappa(counts[keep], row) for row in w])
    for result, col in ((a, 0), (k, 1)):
        low, high = np.quantile(reps[:, col], [0.025, 0.975])
        assert result.ci_low == pytest.approx(low, abs=1e-9)
        assert result.ci_high == pytest.approx(high, abs=1e-9)
        assert result.n_invalid == 0 and result.n_boot == 40


def test_intervals_follow_item_ids_not_rows():
    counts = np.random.default_rng(0).multinomial(6, [0.5, 0.3, 0.2], size=400)
    ids = np.array([f"q{i}" for i in range(400)])
    perm = np.random.default_rng(1).permutation(400)
    for coefficient in (krippendorff_alpha, fleiss_kappa):
        a = coefficient(counts, n_boot=300, rng=2, keys=ids)
        b = coefficient(counts[perm], n_boot=300, rng=2, keys=ids[perm])
        assert b.value == pytest.approx(a.value, rel=1e-12)
        assert b.ci_low == pytest.approx(a.ci_low, rel=1e-12)
        assert b.ci_high == pytest.approx(a.ci_high, rel=1e-12)
        # row positions as keys: the draw moves with the rows
        c = coefficient(counts[perm], n_boot=300, rng=2)
        assert (c.ci_low, c.ci_high) != (b.ci_low, b.ci_high)


def test_undefined_replicates_are_counted():
    # two items, one all label 0 and one all label 1: alpha is 1 when both are drawn and
    # undefined when only one (or none) is
    a = krippendorff_alpha([[3, 0], [0, 3]], n_boot=500, rng=0)
    w = poisson_weights(np.arange(2, dtype=np.uint64), 0, 0, 500)
    assert a.n_invalid == int(((w[:, 0] == 0) | (w[:, 1] == 0)).sum()) > 0
    assert a.ci_low == a.ci_high == 1.0 and a.to_dict()["n_invalid"] == a.n_invalid


def test_quality_alpha_uses_the_same_formula(shared_data):
    from annokit.quality.stats import krippendorff_alpha_nominal

    votes = read_votes(shared_data("snow2008_rte", "rte.standardized.tsv"))
    assert krippendorff_alpha_nominal(votes) == pytest.approx(
        krippendorff_alpha(votes.counts()).value, rel=1e-14)


def test_items_with_one_vote_are_left_out_with_a_warning():
    with pytest.warns(DegenerateInputWarning, match="fewer than two votes"):
        res = krippendorff_alpha([[3, 1], [0, 2], [1, 0]])
    assert res.n_items == 2


def test_errors():
    with (pytest.raises(VoteSchemaError, match="at least one item with two or more votes"),
          pytest.warns(DegenerateInputWarning)):
        fleiss_kappa([[1, 0], [0, 1]])
    with pytest.raises(InvalidValueError, match="n_boot must be >= 0; got -1"):
        krippendorff_alpha(FLEISS_1971, n_boot=-1)
    with pytest.raises(InvalidValueError, match="n_boot must be >= 0; got 1.5"):
        krippendorff_alpha(FLEISS_1971, n_boot=1.5)
    with pytest.raises(InvalidValueError, match=r"confidence must be in \(0, 1\); got 1.5"):
        fleiss_kappa(FLEISS_1971, n_boot=10, confidence=1.5)
    with pytest.raises(SchemaError, match=re.escape(
            "keys must hold one key per item (10 for counts); got shape (3,)")):
        fleiss_kappa(FLEISS_1971, n_boot=10, keys=["a", "b", "c"])
    with pytest.warns(DegenerateInputWarning, match="alpha is undefined"):
        assert np.isnan(krippendorff_alpha([[3, 0], [2, 0]]).value)
    with pytest.warns(DegenerateInputWarning, match="kappa is undefined"):
        assert np.isnan(fleiss_kappa([[3, 0], [2, 0]]).value)
