"""Multi-label votes: hand-computed soft labels and majorities, and invariants (hypothesis)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit.core.multilabel import (
    check_multilabel,
    is_multilabel,
    multilabel_majority,
    multilabel_soft_labels,
    n_responses,
)
from annokit.core.soft_labels import distributions
from annokit.core.votes import Votes
from annokit.errors import InvalidValueError, SchemaError

LABELS = ["ent", "neu", "con"]


def _votes(rows, labels=LABELS):
    df = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    return Votes.from_long(df, labels=labels, duplicates="keep")


# Hand-computed: item q has 4 annotators, a ticks {ent, neu}, b {neu}, c {neu}, d {ent};
# item r has 3 annotators, a {con}, b {con, ent}, c {neu}.
HAND = [("q", "a", "ent"), ("q", "a", "neu"), ("q", "b", "neu"), ("q", "c", "neu"),
        ("q", "d", "ent"), ("r", "a", "con"), ("r", "b", "con"), ("r", "b", "ent"),
        ("r", "c", "neu")]


def test_soft_labels_by_hand():
    v = _votes(HAND)
    assert n_responses(v).tolist() == [4, 3]
    np.testing.assert_allclose(multilabel_soft_labels(v), [[2 / 4, 3 / 4, 0 / 4],
                                                           [1 / 3, 1 / 3, 2 / 3]])
    assert is_multilabel(v)


def test_majority_by_hand_with_every_tie_policy():
    v = _votes(HAND)
    exclude = multilabel_majority(v)  # the declared default
    assert exclude.policy == "exclude" and exclude.n_ties == 1
    assert exclude.is_tied.tolist() == [[True, False, False], [False, False, False]]
    assert exclude.labels.tolist() == [[False, True, False], [False, False, True]]
    include = multilabel_majority(v, ties="include")
    assert include.labels.tolist() == [[True, True, False], [False, False, True]]
    with pytest.raises(SchemaError, match=r"1 \(item, label\) cell\(s\) ticked by exactly half.*'q', 'ent'"):
        multilabel_majority(v, ties="error")
    with pytest.raises(InvalidValueError, match="ties"):
        multilabel_majority(v, ties="first")


def test_validation():
    with pytest.raises(SchemaError, match=r"repeated, e.g. \[\('q', 'a', 'ent'\)\]"):
        check_multilabel(_votes([("q", "a", "ent"), ("q", "a", "ent")]))
    no_annotators = Votes.from_counts([[1, 2, 0]], labels=LABELS)
    with pytest.raises(SchemaError, match="need annotator ids"):
        multilabel_soft_labels(no_annotators)
    assert not is_multilabel(no_annotators)
    assert not is_multilabel(_votes([("q", "a", "ent"), ("q", "b", "neu")]))


# -- invariants -------------------------------------------------------------------------

@st.composite
def ticks(draw):
    """A random tick matrix: (n_items, n_annotators, n_labels) booleans, every annotator of an
    item ticking at least one label; some annotators skip some items."""
    n_items = draw(st.integers(1, 5))
    n_ann = draw(st.integers(1, 6))
    cube = np.array(draw(st.lists(st.lists(st.lists(st.booleans(), min_size=3, max_size=3),
                                           min_size=n_ann, max_size=n_ann),
                                  min_size=n_items, max_size=n_items)))
    answered = np.array(draw(st.lists(st.lists(st.booleans(), min_size=n_ann, max_size=n_ann),
                                      min_size=n_items, max_size=n_items)))
    answered[:, 0] = True
    cube[:, :, 0] |= ~cube.any(axis=2)  # an empty response ticks the first label
    return cube & answered[:, :, None], answered


def _from_cube(cube):
    rows = [(f"i{i}", f"a{a}", LABELS[lab]) for i, a, lab in zip(*np.nonzero(cube), strict=True)]
    return _votes(rows)


@settings(max_examples=60, deadline=None)
@given(ticks())
def test_soft_labels_equal_tick_fractions(data):
    cube, answered = data
    v = _from_cube(cube)
    expected = cube.sum(axis=1) / answered.sum(axis=1)[:, None]
    np.testing.assert_allclose(multilabel_soft_labels(v), expected)
    soft = multilabel_soft_labels(v)
    assert ((soft >= 0) & (soft <= 1)).all()


@settings(max_examples=60, deadline=None)
@given(ticks())
def test_majority_is_more_than_half_and_ties_only_move_tied_cells(data):
    cube, answered = data
    v = _from_cube(cube)
    soft = multilabel_soft_labels(v)
    ex, inc = multilabel_majority(v), multilabel_majority(v, ties="include")
    np.testing.assert_array_equal(ex.labels, soft > 0.5)
    np.testing.assert_array_equal(ex.is_tied, np.isclose(soft, 0.5))
    np.testing.assert_array_equal(inc.labels ^ ex.labels, ex.is_tied)


@settings(max_examples=40, deadline=None)
@given(ticks(), st.permutations([0, 1, 2]))
def test_relabelling_permutes_the_columns(data, perm):
    cube, _ = data
    v = _from_cube(cube)
    w = _from_cube(cube[:, :, perm])  # label j of w is label perm[j] of v
    np.testing.assert_allclose(multilabel_soft_labels(w), multilabel_soft_labels(v)[:, perm])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=6), min_size=1, max_size=5))
def test_single_label_votes_give_the_usual_distribution(items):
    rows = [(f"i{i}", f"a{a}", LABELS[lab]) for i, labs in enumerate(items) for a, lab in enumerate(labs)]
    v = _votes(rows)
    assert not is_multilabel(v)
    np.testing.assert_allclose(multilabel_soft_labels(v), distributions(v.counts()))


def test_is_multilabel_needs_no_pass_over_votes_whose_pairs_are_known_unique(monkeypatch):
    df = pd.DataFrame({"item": ["q", "q", "r", "r"], "annotator": ["a", "b", "a", "a"],
                       "label": ["x", "y", "x", "y"]})
    kept = Votes.from_long(df, duplicates="keep")
    first = Votes.from_long(df, duplicates="first")

    def no_scan(self, block=1 << 20):
        raise AssertionError("scanned votes whose pairs are known unique")

    assert is_multilabel(kept) and not is_multilabel(kept.select_items([0]))  # scans
    monkeypatch.setattr(Votes, "_scan_duplicate_pairs", no_scan)
    assert not is_multilabel(first)
    assert not is_multilabel(first.select_items([1, 0]))
    assert not is_multilabel(first.select_votes(np.array([True, False, True])))
