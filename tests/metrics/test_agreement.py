"""Krippendorff's alpha and Fleiss' kappa against independent references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit.errors import DegenerateInputWarning, VoteSchemaError
from annokit.io import read_votes
from annokit.metrics.agreement import fleiss_kappa, krippendorff_alpha

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


def test_items_with_one_vote_are_left_out_with_a_warning():
    with pytest.warns(DegenerateInputWarning, match="fewer than two votes"):
        res = krippendorff_alpha([[3, 1], [0, 2], [1, 0]])
    assert res.n_items == 2


def test_errors():
    with (pytest.raises(VoteSchemaError, match="at least one item with two or more votes"),
          pytest.warns(DegenerateInputWarning)):
        fleiss_kappa([[1, 0], [0, 1]])
    with pytest.raises(VoteSchemaError, match="n_boot must be >= 0"):
        krippendorff_alpha(FLEISS_1971, n_boot=-1)
    with pytest.raises(VoteSchemaError, match=r"confidence must be in \(0, 1\)"):
        fleiss_kappa(FLEISS_1971, n_boot=10, confidence=1.5)
    with pytest.warns(DegenerateInputWarning, match="alpha is undefined"):
        assert np.isnan(krippendorff_alpha([[3, 0], [2, 0]]).value)
    with pytest.warns(DegenerateInputWarning, match="kappa is undefined"):
        assert np.isnan(fleiss_kappa([[3, 0], [2, 0]]).value)
