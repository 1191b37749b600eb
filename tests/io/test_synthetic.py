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
