"""Zero-Based Skill: against crowd-kit 1.4.2's fixtures, the update rule, the crowd sets."""

from __future__ import annotations

import numpy as np
import pytest
from _crowdkit_toy import toy_ysda
from _vote_sets import synthetic

from annokit.errors import VoteSchemaError
from annokit.io import read_votes
from annokit.quality import ZeroBasedSkill, aggregate


def test_toy_ysda_matches_crowdkit_fixture():
    """crowd-kit tests/aggregation/data_zbs.py: toy_labels/skills/probas_result_zbs (its
    skills fixture is compared at 1e-2 there, after 100 steps towards the agreement)."""
    z = ZeroBasedSkill().fit(toy_ysda())
    assert z.labels_.tolist() == ["no", "yes", "no", "yes", "no"]
    np.testing.assert_allclose(z.skills_, [0.6, 0.8, 1.0, 0.4, 0.8], atol=1e-2)
    np.testing.assert_allclose(z.posteriors_[:, 0],
                               [0.538462, 0.333333, 0.722222, 0.0, 0.833333], atol=1e-2)


def test_skills_follow_the_update_rule():
    # s_1 = 1/K + eps; s_{t+1} = s_t + lr_t (acc_t - s_t), lr halved at t = 20, 40, ...; with
    # labels that never change, acc_t is constant and s_t has a closed form
    votes, _ = synthetic(n_items=200, seed=3)
    z = ZeroBasedSkill(max_iter=45).fit(votes)
    hit = z.labels_codes_[votes.item_index] == votes.label_index
    acc = np.bincount(votes.annotator_index, weights=hit) / np.bincount(votes.annotator_index)
    lrs = [1.0 * 0.5 ** (t // 20) for t in range(1, 46)]
    gap = (1 / 3 + 1e-5) - acc
    for lr in lrs:
        gap = gap * (1 - lr)
    assert z.converged_
    np.testing.assert_allclose(z.skills_, acc + gap, atol=1e-12)


@pytest.mark.parametrize("make, match", [
    (lambda: ZeroBasedSkill(max_iter=0), "max_iter must be a positive integer; got 0"),
    (lambda: ZeroBasedSkill(lr_init=-1), "lr_init must be a finite number >= 0; got -1"),
    (lambda: ZeroBasedSkill(lr_steps_to_reduce=0),
     "lr_steps_to_reduce must be a positive integer; got 0"),
    (lambda: ZeroBasedSkill(lr_reduce_factor="x"), "lr_reduce_factor must be a number; got 'x'"),
    (lambda: ZeroBasedSkill(eps=float("inf")), "eps must be a finite number >= 0; got inf"),
])
def test_bad_parameters_raise(make, match):
    with pytest.raises(VoteSchemaError, match=match):
        make().fit(toy_ysda())


# crowd-kit 1.4.2's ZeroBasedSkill on the same files (rows in file order), measured by
# benchmarks/bench_aggregators.py --sets; the labels are the same item by item.
@pytest.mark.parametrize("folder, answers, truth, crowdkit", [
    pytest.param("product_jn", "answer.csv", "truth.csv", 0.8966, id="d_product_crowdkit_1.4.2"),
    pytest.param("bluebirds", "answer.csv", "truth.csv", 0.7593, id="bluebirds_crowdkit_1.4.2"),
    pytest.param("dog", "answer.csv", "truth.csv", 0.8302, id="dog_crowdkit_1.4.2"),
    pytest.param("face", "answer.csv", "truth.csv", 0.6301, id="face_crowdkit_1.4.2"),
])
def test_accuracy_equals_crowdkit(shared_data, folder, answers, truth, crowdkit):
    votes = read_votes(shared_data(folder, answers), gold=shared_data(folder, truth))
    assert aggregate(votes, "zbs").accuracy == pytest.approx(crowdkit, abs=5e-5)
