"""Every operation returning ``Votes`` gives an object consistent with its own rows:
``n_items``/``item_ids`` and ``n_annotators``/``annotator_ids`` count exactly the items
and annotators its votes name, and its rows are the rows it was made from."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit.core.votes import Votes
from annokit.errors import AnnokitWarning, InvalidValueError
from annokit.io import read_votes, write_votes
from annokit.quality import filter_annotators
from annokit.subsample import subsample_votes

from _shared import data_path
from _vote_sets import vote_sets


def assert_consistent(votes: Votes) -> None:
    """The object's counts and id tables against its rows."""
    assert votes.n_items == len(votes.item_ids) == len(np.unique(votes.item_index))
    assert votes.counts().sum() == votes.n_votes
    if votes.annotator_index is not None:
        used = np.unique(votes.annotator_index)
        assert votes.n_annotators == len(votes.annotator_ids) == len(used)
        assert len(set(votes.annotator_ids.tolist())) == votes.n_annotators


def rows(votes: Votes) -> list[tuple]:
    return sorted(map(tuple, votes.to_long()[["item", "annotator", "label"]].astype(str).to_numpy()))


def operations(votes: Votes, rng: np.random.Generator) -> dict[str, tuple[Votes, list[tuple]]]:
    """Each operation's result and the rows it should hold."""
    long = votes.to_long()
    mask = rng.random(votes.n_votes) < 0.5
    mask[rng.integers(votes.n_votes)] = True
    items = rng.permutation(votes.n_items)[: max(1, votes.n_items // 2)]
    out = {
        "select_votes": (votes.select_votes(mask), rows_of(long[mask])),
        "select_items": (votes.select_items(items),
                         rows_of(long[long["item"].isin(votes.item_ids[items])])),
    }
    drawn = subsample_votes(votes, 1, rng=rng)
    out["subsample_votes"] = (drawn, rows(drawn))  # rows: checked below as a subset
    for method in ("agreement", "entropy"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", AnnokitWarning)
                kept, _ = filter_annotators(votes, method=method, min_votes=1)
        except InvalidValueError:  # the filter would remove every annotator: refused
            continue
        out[f"filter_{method}"] = (kept, rows(kept))
    return out


def rows_of(long: pd.DataFrame) -> list[tuple]:
    return sorted(map(tuple, long[["item", "annotator", "label"]].astype(str).to_numpy()))


@settings(max_examples=40, deadline=None)
@given(vote_sets(), st.integers(0, 2**32 - 1))
def test_every_votes_operation_is_consistent_with_its_rows(votes, seed):
    """Property over select_votes, select_items, subsample_votes and filter_annotators."""
    every = set(rows(votes))
    for name, (result, expected) in operations(votes, np.random.default_rng(seed)).items():
        assert_consistent(result), name
        assert rows(result) == expected, name
        assert set(expected) <= every, name


def test_filtered_dog_counts_the_annotators_of_its_rows():
    """The reported case (dog, a crowd set): the filtered votes' n_annotators counted the
    removed annotators too (109 against the annotators of its rows)."""
    votes = read_votes(data_path("dog", "answer.csv"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AnnokitWarning)
        kept, audit = filter_annotators(votes, method="entropy")
    assert_consistent(kept)
    assert kept.n_annotators == votes.n_annotators - len(audit.annotators)


def test_filtered_product_jn_counts_the_annotators_of_its_rows():
    votes = read_votes(data_path("product_jn", "answer.csv"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AnnokitWarning)
        kept, audit = filter_annotators(votes, method="agreement")
    assert_consistent(kept)
    assert kept.n_annotators == votes.n_annotators - len(audit.annotators)


def test_partitions_read_as_one_table_are_consistent(tmp_path):
    """A merge: two partitions (annotator b only in the first) read as one table."""
    (tmp_path / "p").mkdir()
    pd.DataFrame({"item": ["1", "1", "2"], "annotator": ["a", "b", "a"],
                  "label": ["x", "y", "x"]}).to_csv(tmp_path / "p" / "part-0.csv", index=False)
    pd.DataFrame({"item": ["3"], "annotator": ["c"],
                  "label": ["y"]}).to_csv(tmp_path / "p" / "part-1.csv", index=False)
    merged = read_votes(tmp_path / "p")
    assert_consistent(merged)
    assert merged.annotator_ids.tolist() == ["a", "b", "c"]
    written = write_votes(merged.select_items([2]), tmp_path / "one.csv")
    again = read_votes(written)
    assert_consistent(again)
    assert again.annotator_ids.tolist() == ["c"]


@pytest.mark.parametrize("keep", [True, False])
def test_select_votes_keep_annotators(keep):
    votes = Votes.from_long(pd.DataFrame({"item": ["q", "q", "r"], "annotator": ["a", "b", "c"],
                                          "label": ["x", "y", "x"]}))
    out = votes.select_votes(np.array([True, False, True]), keep_annotators=keep)
    assert out.annotator_ids.tolist() == (["a", "b", "c"] if keep else ["a", "c"])
