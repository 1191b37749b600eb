"""Majority vote and weighted majority vote, with explicit ties.

Ties are never broken silently: every estimator reports ``is_tied_`` and
``n_ties_``. The tie policies, and the default :data:`~annokit.core.soft_labels.DEFAULT_TIES`
(``"first"``: the first tied label in label order), are those of
:func:`annokit.core.soft_labels.break_ties`, the one implementation shared with
``annokit stats``, the evaluation engine and the report. ``ties="first_seen"``
(the tied label whose first vote comes earliest in vote, i.e. file, order)
reproduces the majority-vote accuracies published for the Snow et al. (2008)
RTE data (0.9025; 0.91875 under the default) and the dog data (0.8166).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from annokit.core.checks import check_option
from annokit.core.soft_labels import (
    DEFAULT_TIES,
    TIE_POLICIES,
    TiePolicy,
    break_ties,
    first_seen_order,
    vote_majority,
)
from annokit.core.votes import Votes
from annokit.errors import InvalidValueError, SchemaError
from annokit.quality.common import label_names, require_annotators, require_votes

__all__ = ["TIE_POLICIES", "MajorityVote", "WeightedMajorityVote", "first_seen_order"]


class MajorityVote:
    """Majority vote per item with an explicit tie policy.

    Parameters
    ----------
    ties : {"first", "first_seen", "random", "report"}, default=DEFAULT_TIES
        How a tied item gets its label: the first tied label in label order
        (``"first"``, the default, also spelled ``"report"``), the tied label voted
        first in vote order (``"first_seen"``), or one drawn at random with ``rng``.
        Ties are reported under every policy.
    rng : numpy Generator, int or None
        Only used by ``ties="random"``.

    Attributes
    ----------
    labels_ : ndarray of str, shape (n_items,)
        Majority label (name) per item.
    labels_codes_ : ndarray of int, shape (n_items,)
        The same as codes, indices into ``votes.labels``.
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
    >>> mv.labels_.tolist(), mv.labels_codes_.tolist(), mv.is_tied_.tolist()
    (['no', 'yes'], [0, 1], [True, False])
    """

    def __init__(self, *, ties: TiePolicy = DEFAULT_TIES,
                 rng: np.random.Generator | int | None = None):
        self.ties = ties
        self.rng = rng

    def fit(self, votes: Votes) -> MajorityVote:
        votes = require_votes(votes, "MajorityVote.fit")
        check_option("ties", self.ties, TIE_POLICIES)
        m = vote_majority(votes, ties=self.ties, rng=self.rng)
        self.labels_codes_, self.tied_ = m.labels, m.tied
        self.labels_ = label_names(votes, m.labels)
        self.is_tied_ = m.is_tied
        self.n_ties_ = m.n_ties
        counts = votes.counts()
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
    ties : {"first", "first_seen", "random", "report"}, default=DEFAULT_TIES
        As in :class:`MajorityVote`.
    rng : numpy Generator, int or None
        Only used by ``ties="random"``.

    Attributes
    ----------
    labels_ : ndarray of str, shape (n_items,)
        Label (name) per item; ``labels_codes_`` the same as indices into ``votes.labels``.
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
    ['no']
    """

    def __init__(self, weights: Any = None, *, ties: TiePolicy = DEFAULT_TIES,
                 rng: np.random.Generator | int | None = None):
        self.weights = weights
        self.ties = ties
        self.rng = rng

    def fit(self, votes: Votes) -> WeightedMajorityVote:
        votes = require_annotators(votes, "WeightedMajorityVote.fit")
        annotators, annotator_ids = votes.annotator_codes("WeightedMajorityVote.fit")
        check_option("ties", self.ties, TIE_POLICIES)
        n_ann = len(annotator_ids)
        if self.weights is None:
            mv = MajorityVote(ties=self.ties, rng=self.rng).fit(votes)
            hit = (mv.labels_codes_[votes.item_index] == votes.label_index).astype(np.float64)
            n = np.bincount(annotators, minlength=n_ann)
            with np.errstate(invalid="ignore", divide="ignore"):
                weights = np.bincount(annotators, weights=hit, minlength=n_ann) / n
            weights = np.where(n > 0, weights, 0.0)
        else:
            weights = np.asarray(self.weights, dtype=np.float64)
            if weights.shape != (n_ann,):
                raise SchemaError(
                    f"weights must have one value per annotator, shape ({n_ann},); got {weights.shape}"
                )
            if not np.all(np.isfinite(weights)) or weights.min() < 0:
                raise InvalidValueError("weights must be finite and >= 0")
        flat = votes.item_index.astype(np.int64) * votes.n_labels + votes.label_index
        scores = np.bincount(flat, weights=weights[annotators],
                             minlength=votes.n_items * votes.n_labels).reshape(
                                 votes.n_items, votes.n_labels)
        # weighted scores are floats: labels within 1e-12 (relative) of the top tie
        top = np.isclose(scores, scores.max(axis=1, keepdims=True), rtol=1e-12, atol=0.0)
        first = first_seen_order(votes) if self.ties == "first_seen" else None
        self.labels_codes_ = break_ties(top, ties=self.ties, rng=self.rng, first_seen=first)
        self.labels_ = label_names(votes, self.labels_codes_)
        self.tied_ = top
        total = scores.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            post = scores / total
        self.posteriors_ = np.where(total > 0, post, 1.0 / votes.n_labels)
        self.is_tied_ = self.tied_.sum(axis=1) > 1
        self.n_ties_ = int(self.is_tied_.sum())
        self.weights_ = weights
        self.n_iter_, self.converged_ = 1, True
        return self
