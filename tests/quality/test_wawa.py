"""Wawa: against crowd-kit 1.4.2's fixtures and its labels on the crowd sets."""

from __future__ import annotations

import numpy as np
import pytest
from _crowdkit_toy import toy_ysda

from annokit.io import read_votes
from annokit.quality import Wawa, WeightedMajorityVote, aggregate


def test_toy_ysda_matches_crowdkit_fixture():
    """crowd-kit tests/aggregation/data_wawa.py: toy_labels/skills/probas_result_wawa."""
    votes = toy_ysda()
    w = Wawa().fit(votes)
    assert w.labels_.tolist() == ["no", "yes", "no", "yes", "no"]
    np.testing.assert_allclose(w.skills_, [0.6, 0.8, 1.0, 0.4, 0.8])
    # columns (no, yes); crowd-kit's fixture lists (yes, no)
    np.testing.assert_allclose(w.posteriors_[:, 1],
                               [0.461538, 0.666667, 0.277778, 1.0, 0.166667], atol=1e-6)
    assert w.n_ties_ == 0


def test_wawa_is_the_agreement_weighted_majority_vote():
    votes = toy_ysda()
    w, wmv = Wawa(ties="first_seen").fit(votes), WeightedMajorityVote(ties="first_seen").fit(votes)
    np.testing.assert_array_equal(w.labels_codes_, wmv.labels_codes_)
    np.testing.assert_array_equal(w.skills_, wmv.weights_)


# Accuracy of crowd-kit 1.4.2's Wawa on the same files (rows in file order), measured in this
# repository's benchmark environment by benchmarks/bench_aggregators.py --sets; the labels
# are the same item by item. D_Product: crowd-kit's paper (JOSS 2023) reports .897.
@pytest.mark.parametrize("folder, answers, truth, crowdkit", [
    pytest.param("product_jn", "answer.csv", "truth.csv", 0.8966, id="d_product_crowdkit_1.4.2_joss2023_0.897"),
    pytest.param("bluebirds", "answer.csv", "truth.csv", 0.7593, id="bluebirds_crowdkit_1.4.2"),
    pytest.param("dog", "answer.csv", "truth.csv", 0.8290, id="dog_crowdkit_1.4.2"),
    pytest.param("face", "answer.csv", "truth.csv", 0.6301, id="face_crowdkit_1.4.2"),
])
def test_accuracy_equals_crowdkit(shared_data, folder, answers, truth, crowdkit):
    votes = read_votes(shared_data(folder, answers), gold=shared_data(folder, truth))
    assert aggregate(votes, "wawa").accuracy == pytest.approx(crowdkit, abs=5e-5)


def test_rte_ties_follow_the_policy_not_pandas_column_order(shared_data):
    # crowd-kit 1.4.2 (pandas 3.1) breaks majority ties by the column order of an unstacked
    # value_counts, which puts label 1 first on RTE (all 65 tied items go to 1): its Wawa scores
    # 0.9187 there. annokit breaks them by the declared policy; label order gives 0.9213.
    votes = read_votes(shared_data("snow2008_rte", "rte.standardized.tsv"))
    first = aggregate(votes, "wawa")
    assert first.tie_policy == "first" and first.accuracy >= 0.9187
