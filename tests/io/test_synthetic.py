"""The embedded synthetic dataset of ``annokit demo``."""

import numpy as np
import pytest

from annokit.errors import VoteSchemaError
from annokit.io.synthetic import make_votes


def test_same_seed_same_data_and_known_spammers():
    a, b = make_votes(rng=7), make_votes(rng=7)
    assert a.votes.equals(b.votes) and np.array_equal(a.true_probs, b.true_probs)
    assert not make_votes(rng=8).votes.equals(a.votes)
    assert a.spammer.sum() == 9 and set(a.spammer_kind) == {"honest", "uniform", "constant"}
    np.testing.assert_allclose(a.true_probs.sum(axis=1), 1.0)
    assert (a.votes.votes_per_item() == 20).all()


def test_constant_spammers_always_give_one_label():
    data = make_votes(rng=0)
    v = data.votes
    usage = v.annotator_label_counts()
    constant = data.spammer_kind == "constant"
    assert ((usage[constant] > 0).sum(axis=1) == 1).all()


def test_errors():
    with pytest.raises(VoteSchemaError, match=r"votes_per_item must be in \[1, n_annotators=5\]"):
        make_votes(n_annotators=5, votes_per_item=6)
    with pytest.raises(VoteSchemaError, match="need n_items >= 1"):
        make_votes(n_items=0)


def test_make_model_probs_accuracy_is_binomial():
    """make_model_probs: the argmax equals the truth with the stated probability (a known
    population: 20,000 items, tolerance 4 binomial standard errors) and rows are distributions."""
    from annokit.io.synthetic import make_model_probs

    truth = np.random.default_rng(0).integers(0, 4, 20_000)
    probs = make_model_probs(truth, 4, accuracy=0.92, rng=5)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    acc = float(np.mean(probs.argmax(axis=1) == truth))
    assert abs(acc - 0.92) < 4 * np.sqrt(0.92 * 0.08 / truth.size)
    wrong = probs.argmax(axis=1) != truth
    assert np.unique(probs.argmax(axis=1)[wrong] - truth[wrong]).size > 1  # errors spread


def test_make_model_probs_rejects_bad_truth():
    from annokit.io.synthetic import make_model_probs

    with pytest.raises(VoteSchemaError, match=r"truth codes in \[0, 2\)"):
        make_model_probs(np.array([0, 2]), 2)
