"""The split-half human ceiling through the engine (annokit/metrics/ceiling.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from annokit.core.divergence import jensen_shannon_distance, tvd
from annokit.core.soft_labels import distributions, majority
from annokit.core.votes import Votes
from annokit.errors import DegenerateInputWarning, InputError, InvalidValueError, SchemaError
from annokit.metrics.ceiling import default_votes_per_half, split_half_ceiling
from annokit.metrics.registry import available
from annokit.subsample import split_half


def _votes(n_items=80, n_votes=10, seed=0):
    rng = np.random.default_rng(seed)
    counts = np.stack([rng.multinomial(n_votes, p) for p in rng.dirichlet([1, 1, 1], n_items)])
    return Votes.from_counts(counts, labels=["a", "b", "c"],
                             item_ids=[f"q{i}" for i in range(n_items)])


def quiet(**kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        return split_half_ceiling(**kwargs)


@pytest.mark.parametrize("reference", ["full", "rest"])
def test_h1_is_scored_like_a_model_of_the_reference_and_of_h2(reference):
    votes = _votes()
    c = quiet(votes=votes, votes_per_half=4, reference=reference, rng=3)
    sh = split_half(votes, 4, rng=3, reference=reference, short="skip")  # the same draw
    np.testing.assert_array_equal(c.split.counts_h1, sh.counts_h1)
    ref = c.split.reference_probs
    m = c.vs_reference.metrics
    assert list(m) == list(available(True, True))
    assert m["dist_ce"] == pytest.approx(tvd(sh.h1, ref).mean(), abs=1e-15)
    assert m["jsd"] == pytest.approx(jensen_shannon_distance(ref, sh.h1).mean(), abs=1e-15)
    ref_majority = majority(c.split.reference_counts, ties="first").labels
    h1_majority = majority(sh.counts_h1, ties="first").labels
    assert m["accuracy"] == pytest.approx((h1_majority == ref_majority).mean(), abs=1e-15)
    assert c.vs_half.metrics["dist_ce"] == pytest.approx(tvd(sh.h1, sh.h2).mean(), abs=1e-15)
    np.testing.assert_array_equal(c.vs_reference.per_item["item"], votes.item_ids)
    assert (c.votes_per_half, c.n_items, c.n_short) == (4, 80, 0)


def test_default_half_skipped_items_groups_and_bootstrap():
    votes = Votes.from_counts([[6, 2, 2], [1, 0, 0], [3, 3, 2], [5, 0, 5], [2, 2, 2]],
                              labels=["a", "b", "c"])
    with pytest.warns(DegenerateInputWarning, match="left out"):
        c = split_half_ceiling(votes, rng=0, by=["x", "y", "x", "y", "z"], n_boot=50, seed=1)
    assert c.votes_per_half == 4 and c.n_short == 2 and c.n_items == 3  # median 8 votes
    assert [g.group for g in c.vs_reference.groups] == ["x", "y"]  # items 0, 2 and 3 are kept
    assert [g.n_items for g in c.vs_reference.groups] == [2, 1]
    assert c.vs_reference.intervals["accuracy"].n_boot == 50
    cat = pd.Categorical(["x", "y", "x", "y", "z"], categories=["x", "y", "z"])
    c = quiet(votes=votes, rng=0, by=cat)
    assert [g.n_items for g in c.vs_half.groups] == [2, 1, 0]  # an empty category stays
    c = quiet(votes=_votes(n_items=50), votes_per_half=5, rng=0, by="agreement")
    assert [g.group for g in c.vs_reference.groups] == [0, 1, 2, 3, 4]
    assert [g.n_items for g in c.vs_reference.groups] == [g.n_items for g in c.vs_half.groups]
    counts = distributions(np.array([[30, 60, 10], [90, 5, 5]]))  # shares are not counts
    with pytest.raises(InputError):
        split_half_ceiling(counts, 2)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"votes_per_half": 0}, InvalidValueError, "votes_per_half must be >= 1; got 0"),
    ({"votes_per_half": True}, InvalidValueError, "votes_per_half must be >= 1; got True"),
    ({"votes": [[1, 0], [0, 1], [1, 1]], "votes_per_half": None}, InvalidValueError,
     "too few votes per item for two disjoint halves"),
    ({"votes_per_half": 50}, InputError, "no item has the 100 votes a split"),
    ({"by": "votes"}, InvalidValueError, "by must be None, 'agreement' or one group label"),
    ({"by": ["x"]}, SchemaError, r"by must be one group label per item: 80 labels; got shape"),
    ({"by": pd.Categorical(["x"])}, SchemaError, "by has 1 group labels for 80 items"),
    ({"metrics": ["nope"]}, InvalidValueError, "unknown metric 'nope'"),
])
def test_rejects_bad_input(kwargs, error, match):
    args = {"votes": _votes(), "votes_per_half": 3, "rng": 0, **kwargs}
    with pytest.raises(error, match=match):
        quiet(**args)


def test_default_votes_per_half():
    assert default_votes_per_half([100, 100, 98]) == 50
    assert default_votes_per_half(np.array([3, 4, 5])) == 2
    with pytest.raises(SchemaError, match="votes_per_item must be a non-empty 1-D array"):
        default_votes_per_half([])
