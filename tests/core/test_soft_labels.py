"""Soft labels: distributions, entropy, majority with ties, majority change."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.stats import entropy as scipy_entropy

from annokit.core.soft_labels import (
    DEFAULT_TIES,
    TIE_POLICIES,
    agreement,
    break_ties,
    describe_ties,
    distributions,
    entropy,
    entropy_unit,
    majority,
    majority_change,
    normalized_entropy,
    vote_majority,
)
from annokit.errors import InvalidValueError, SchemaError, VoteSchemaError

count_matrices = st.integers(1, 6).flatmap(
    lambda n_labels: arrays(np.int64, st.tuples(st.integers(1, 20), st.just(n_labels)),
                            elements=st.integers(0, 50))
).filter(lambda a: (a.sum(axis=1) > 0).all())


@settings(max_examples=80, deadline=None)
@given(count_matrices, st.floats(0, 5))
def test_distributions_are_nonnegative_and_sum_to_one(counts, smoothing):
    p = distributions(counts, smoothing=smoothing)
    assert (p >= 0).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)


@settings(max_examples=80, deadline=None)
@given(count_matrices)
def test_entropy_matches_scipy_in_bits_and_nats(counts):
    p = distributions(counts)
    np.testing.assert_allclose(entropy(p, base=2), scipy_entropy(p, base=2, axis=1), atol=1e-12)
    np.testing.assert_allclose(entropy(p, base=None), scipy_entropy(p, axis=1), atol=1e-12)
    if counts.shape[1] > 1:
        ne = normalized_entropy(p)
        assert ((ne >= -1e-12) & (ne <= 1 + 1e-12)).all()


@settings(max_examples=80, deadline=None)
@given(count_matrices, st.integers(0, 2**32 - 1))
def test_majority_is_always_a_top_label(counts, seed):
    for ties in ("report", "first", "random"):
        m = majority(counts, ties=ties, rng=seed)
        top = counts.max(axis=1)
        assert (counts[np.arange(len(counts)), m.labels] == top).all()
        assert (m.is_tied == ((counts == top[:, None]).sum(axis=1) > 1)).all()


def test_random_ties_are_seeded_and_cover_tied_labels():
    counts = np.tile([3, 3, 1], (2000, 1))
    a = majority(counts, ties="random", rng=1).labels
    assert (a == majority(counts, ties="random", rng=1).labels).all()
    assert set(a.tolist()) == {0, 1}
    assert abs((a == 0).mean() - 0.5) < 0.05


def test_agreement_and_chaosnli_entropy_value():
    assert agreement([[30, 70, 0]]).tolist() == [0.7]
    # ChaosNLI's stored entropy for label_dist [0.3, 0.7, 0] (SOURCE.md example row)
    assert entropy([[0.3, 0.7, 0.0]], base=2)[0] == pytest.approx(0.8812908992306927, abs=1e-15)
    # nats by default (ENTROPY_BASE), the same figure in another unit
    assert entropy([[0.3, 0.7, 0.0]])[0] == pytest.approx(0.8812908992306927 * np.log(2))
    assert entropy_unit() == "nats" and entropy_unit(2) == "bits"


def test_majority_change_with_tie_sets():
    counts = np.array([[5, 5, 0], [1, 8, 1], [0, 2, 8]])
    m = majority(counts)
    mc = majority_change(m.labels, [1, 1, 1], tied=m.tied)
    # item 0: tie between 0 and 1, first tied label 0 != old 1 -> changed, but old is among the top
    assert (mc.n_changed, mc.n_compared, mc.n_tied, mc.n_changed_excluding_ties) == (2, 3, 1, 1)
    flag = majority_change(m.labels, [1, 1, 1], tied=m.is_tied)
    assert flag.n_changed_excluding_ties == 1
    assert np.isnan(majority_change([0], [-1]).rate)
    assert mc.to_dict() == {"rate": 2 / 3, "n_changed": 2, "n_compared": 3, "n_tied": 1}


def test_errors():
    with pytest.raises(VoteSchemaError, match="smoothing must be a finite number >= 0"):
        distributions([[1, 0]], smoothing=-1)
    with pytest.raises(VoteSchemaError, match="probs must be 2-D"):
        entropy([0.5, 0.5])
    with pytest.raises(VoteSchemaError, match="base must be positive and not 1"):
        entropy([[0.5, 0.5]], base=1)
    with pytest.raises(VoteSchemaError, match="at least two labels"):
        normalized_entropy([[1.0]])
    with pytest.raises(VoteSchemaError, match="ties must be one of"):
        majority([[1, 0]], ties="last")
    with pytest.raises(VoteSchemaError, match="ties='random' needs an rng"):
        majority([[1, 1]], ties="random")
    with pytest.raises(VoteSchemaError, match="must be 1-D of equal length"):
        majority_change([0, 1], [0])
    with pytest.raises(VoteSchemaError, match="rng must be a numpy Generator"):
        majority([[1, 1]], ties="random", rng="seed")


def test_errors_have_their_specific_type():
    with pytest.raises(InvalidValueError, match="smoothing must be a finite number >= 0"):
        distributions([[1, 0]], smoothing=-1)
    with pytest.raises(SchemaError, match="probs must be 2-D"):
        entropy([0.5, 0.5])
    with pytest.raises(InvalidValueError, match="ties='first_seen' needs the vote order"):
        majority([[1, 1]], ties="first_seen")
    with pytest.raises(SchemaError, match=r"first_seen must have the shape of the counts \(1, 2\)"):
        majority([[1, 1]], ties="first_seen", first_seen=[[0, 1, 2]])
    with pytest.raises(InvalidValueError, match="ties='random' needs an rng"):
        break_ties([[True, True]], ties="random")


def test_one_tie_policy_declared_and_shared():
    import pandas as pd

    from annokit.core.votes import Votes
    from annokit.quality import MajorityVote, WeightedMajorityVote

    assert DEFAULT_TIES == "first" and set(TIE_POLICIES) == {"first", "first_seen", "random",
                                                             "report"}
    # item a: tie between n and y, y voted first
    df = pd.DataFrame({"item": ["a", "a", "b"], "annotator": ["1", "2", "1"],
                       "label": ["y", "n", "y"]})
    votes = Votes.from_long(df)
    assert majority(votes.counts()).labels.tolist() == [0, 1]
    assert vote_majority(votes).labels.tolist() == [0, 1]
    assert vote_majority(votes, ties="first_seen").labels.tolist() == [1, 1]
    for ties, labels in (("first", [0, 1]), ("first_seen", [1, 1])):
        assert MajorityVote(ties=ties).fit(votes).labels_codes_.tolist() == labels
        assert WeightedMajorityVote(weights=[1.0, 1.0], ties=ties).fit(votes).labels_codes_.tolist() == labels
    assert describe_ties("report") == describe_ties("first") == "first tied label in label order"
