"""Majority vote and weighted majority vote, with explicit ties.

Ties are never broken silently: every estimator reports ``is_tied_`` and
``n_ties_``. Besides the policies of :func:`annokit.core.soft_labels.majority`
(``"report"``/``"first"``: first tied label in label order; ``"random"``), the
``"first_seen"`` policy picks, among the tied labels of an item, the one whose
first vote comes earliest in vote (file) order. This is the rule behind the
majority-vote accuracies published for the Snow et al. (2008) RTE data (0.9025)
and the dog data (0.8166).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from annokit.core.checks import check_option, check_rng
from annokit.core.soft_labels import majority
from annokit.core.votes import Votes
from annokit.errors import VoteSchemaError
from annokit.quality._common import require_annotators, require_votes

__all__ = ["TIE_POLICIES", "MajorityVote", "WeightedMajorityVote", "first_seen_order"]

TiePolicy = Literal["first_seen", "report", "first", "random"]
TIE_POLICIES = ("first_seen", "report", "first", "random")


def first_seen_order(votes: Votes) -> np.ndarray:
    """Row of the first vote for each (item, label), shape (n_items, n_labels).

    Cells with no vote hold ``n_votes`` (later than any vote).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": ["a", "a", "a", "b"], "label": ["y", "n", "y", "n"],
    ...                    "annotator": ["1", "2", "3", "1"]})
    >>> first_seen_order(Votes.from_long(df)).tolist()
    [[1, 0], [3, 4]]
    """
    n = votes.n_votes
    flat = votes.item_index.astype(np.int64) * votes.n_labels + votes.label_index
    first = np.full(votes.n_items * votes.n_labels, n, dtype=np.int64)
    np.minimum.at(first, flat, np.arange(n, dtype=np.int64))
    return first.reshape(votes.n_items, votes.n_labels)


def _pick(scores: np.ndarray, votes: Votes, ties: str, rng: Any) -> tuple[np.ndarray, np.ndarray]:
    """Top label per row of ``scores`` under a tie policy; returns (labels, tied mask)."""
    top = np.isclose(scores, scores.max(axis=1, keepdims=True), rtol=1e-12, atol=0.0)
    if ties == "first_seen":
        order = np.where(top, first_seen_order(votes), np.iinfo(np.int64).max)
        labels = order.argmin(axis=1)
    elif ties == "random":
        if rng is None:
            raise VoteSchemaError("ties='random' needs an rng (a seed or numpy Generator)")
        keys = np.where(top, check_rng(rng).random(scores.shape), -1.0)
        labels = keys.argmax(axis=1)
    else:
        labels = top.argmax(axis=1)
    return labels, top


class MajorityVote:
    """Majority vote per item with an explicit tie policy.

    Parameters
    ----------
    ties : {"first_seen", "report", "first", "random"}, default="first_seen"
        How a tied item gets its label: the tied label voted first in vote order
        (``"first_seen"``), the first tied label in label order (``"report"`` /
        ``"first"``), or one drawn at random with ``rng``. Ties are reported under
        every policy.
    rng : numpy Generator, int or None
        Only used by ``ties="random"``.

    Attributes
    ----------
    labels_ : ndarray of shape (n_items,)
        Majority label code per item.
    posteriors_ : ndarray of shape (n_items, n_labels)
        The vote distribution of each item (the maximum-likelihood soft label).
    tied_ : ndarray of bool, shape (n_items, n_labels)
        The labels sharing the top count.
    is_tied_ : ndarray of bool, shape (n_items,)
    n_ties_ : int
    n_iter_ : int
        Always 1 (no iterations); present so every aggregator reports it.
    converged_ : bool
        Always True.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": ["a", "a", "b", "b"], "annotator": ["1", "2", "1", "2"],
    ...                    "label": ["no", "yes", "yes", "yes"]})
    >>> mv = MajorityVote().fit(Votes.from_long(df))
    >>> mv.labels_.tolist(), mv.is_tied_.tolist()
    ([0, 1], [True, False])
    """

    def __init__(self, *, ties: TiePolicy = "first_seen",
                 rng: np.random.Generator | int | None = None):
        self.ties = ties
        self.rng = rng

    def fit(self, votes: Votes) -> MajorityVote:
        votes = require_votes(votes, "MajorityVote.fit")
        check_option("ties", self.ties, TIE_POLICIES)
        counts = votes.counts()
        if self.ties in ("report", "first", "random"):
            m = majority(counts, ties=self.ties, rng=self.rng)
            self.labels_, self.tied_ = m.labels, m.tied
        else:
            self.labels_, self.tied_ = _pick(counts.astype(np.float64), votes, self.ties, self.rng)
        self.is_tied_ = self.tied_.sum(axis=1) > 1
        self.n_ties_ = int(self.is_tied_.sum())
        self.posteriors_ = counts / counts.sum(axis=1, keepdims=True)
        self.n_iter_, self.converged_ = 1, True
        return self


class WeightedMajorityVote:
    """Weighted majority vote: each annotator's vote counts with a weight.

    Parameters
    ----------
    weights : array-like of shape (n_annotators,), optional
        Non-negative weight per annotator (aligned with ``votes.annotator_ids``).
        When omitted, each annotator is weighted by their agreement with the
        plain majority vote (the share of their votes equal to it), the
        "worker agreement with aggregate" scheme.
    ties : {"first_seen", "report", "first", "random"}, default="first_seen"
    rng : numpy Generator, int or None
        Only used by ``ties="random"``.

    Attributes
    ----------
    labels_ : ndarray of shape (n_items,)
    posteriors_ : ndarray of shape (n_items, n_labels)
        Weighted vote shares per item (uniform where every voter has weight 0).
    weights_ : ndarray of shape (n_annotators,)
    is_tied_, tied_, n_ties_, n_iter_, converged_
        As in :class:`MajorityVote`.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": ["a", "a", "a"], "annotator": ["1", "2", "3"],
    ...                    "label": ["no", "yes", "yes"]})
    >>> WeightedMajorityVote(weights=[5.0, 1.0, 1.0]).fit(Votes.from_long(df)).labels_.tolist()
    [0]
    """

    def __init__(self, weights: Any = None, *, ties: TiePolicy = "first_seen",
                 rng: np.random.Generator | int | None = None):
        self.weights = weights
        self.ties = ties
        self.rng = rng

    def fit(self, votes: Votes) -> WeightedMajorityVote:
        votes = require_annotators(votes, "WeightedMajorityVote.fit")
        check_option("ties", self.ties, TIE_POLICIES)
        n_ann = votes.n_annotators
        if self.weights is None:
            mv = MajorityVote(ties=self.ties, rng=self.rng).fit(votes)
            hit = (mv.labels_[votes.item_index] == votes.label_index).astype(np.float64)
            n = np.bincount(votes.annotator_index, minlength=n_ann)
            with np.errstate(invalid="ignore", divide="ignore"):
                weights = np.bincount(votes.annotator_index, weights=hit, minlength=n_ann) / n
            weights = np.where(n > 0, weights, 0.0)
        else:
            weights = np.asarray(self.weights, dtype=np.float64)
            if weights.shape != (n_ann,):
                raise VoteSchemaError(
                    f"weights must have one value per annotator, shape ({n_ann},); got {weights.shape}"
                )
            if not np.all(np.isfinite(weights)) or weights.min() < 0:
                raise VoteSchemaError("weights must be finite and >= 0")
        flat = votes.item_index.astype(np.int64) * votes.n_labels + votes.label_index
        scores = np.bincount(flat, weights=weights[votes.annotator_index],
                             minlength=votes.n_items * votes.n_labels).reshape(
                                 votes.n_items, votes.n_labels)
        self.labels_, self.tied_ = _pick(scores, votes, self.ties, self.rng)
        total = scores.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            post = scores / total
        self.posteriors_ = np.where(total > 0, post, 1.0 / votes.n_labels)
        self.is_tied_ = self.tied_.sum(axis=1) > 1
        self.n_ties_ = int(self.is_tied_.sum())
        self.weights_ = weights
        self.n_iter_, self.converged_ = 1, True
        return self
