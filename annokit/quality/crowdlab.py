"""CROWDLAB: consensus labels, label quality and annotator quality from votes and a model.

CROWDLAB (Goh, Tkachenko and Mueller 2022) treats a classifier's predicted probabilities as
one more, weighted, opinion on each item. Every annotator and the model get a weight from
how much better than "always the most common class" they agree with a provisional consensus;
each item's posterior is the weighted average of the model's probabilities and of one
likelihood vector per vote; the consensus label is that posterior's top label, and its
probability is the consensus quality score. The probability matrix must be aligned to the
votes' items (row ``i`` = ``votes.item_ids[i]``, columns in the votes' label order): the
command line joins a prediction file as ``annokit evaluate`` does
(:func:`annokit.metrics.model_join.item_probabilities`).

Every step works on the coded vote arrays with ``np.bincount`` and index arithmetic: no
Python loop over votes, items or annotators.

References
----------
Goh, H. W., Tkachenko, U. and Mueller, J. (2022). CROWDLAB: Supervised learning to infer
consensus labels and quality scores for data with multiple annotators. NeurIPS 2022 Human
in the Loop Learning Workshop. arXiv:2210.06812

cleanlab 2.x, ``cleanlab.multiannotator.get_label_quality_multiannotator`` (the reference
implementation the tests compare with).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from annokit.core.checks import check_option, check_probs
from annokit.core.votes import Votes
from annokit.errors import SchemaError
from annokit.quality.common import label_names, require_annotators

__all__ = ["CLIP", "CrowdLab"]

#: Lower bound of every weight (the paper's weights are clipped to stay positive).
CLIP = 1e-6

#: How the likelihood of a vote is modelled: one agreement rate shared by every annotator
#: (the paper), or each annotator's own confusion matrix against the consensus.
LIKELIHOODS = ("shared", "confusion")


@dataclass(frozen=True)
class _VoteArrays:
    """The coded votes CROWDLAB reads, once."""

    item: np.ndarray        # (n_votes,) item index
    label: np.ndarray       # (n_votes,) label index
    annotator: np.ndarray   # (n_votes,) annotator index
    counts: np.ndarray      # (n_items, n_labels) votes per label
    n_votes: np.ndarray     # (n_items,) votes per item
    n_annotators: int

    @property
    def multi(self) -> np.ndarray:
        """Items with more than one vote (the paper estimates every rate on these)."""
        return self.n_votes > 1

    def per_annotator(self, values: np.ndarray, where: np.ndarray | None = None) -> np.ndarray:
        """Sum of a per-vote quantity over each annotator's votes (``where``: votes kept)."""
        w = values if where is None else values * where
        return np.bincount(self.annotator, weights=w, minlength=self.n_annotators)


@dataclass(frozen=True)
class _Stats:
    """Everything estimated at one consensus (cleanlab's ``_get_consensus_stats``)."""

    post: np.ndarray
    model_weight: float
    annotator_weights: np.ndarray
    likelihood: float


def _nan_mean_impute(values: np.ndarray) -> np.ndarray:
    """Annotators without an estimate get the mean of the others (the paper's imputation)."""
    bad = ~np.isfinite(values)
    if bad.any() and (~bad).any():
        values = values.copy()
        values[bad] = values[~bad].mean()
    return values


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _peer_agreement(v: _VoteArrays) -> np.ndarray:
    """Each annotator's agreement with the other annotators of the same items.

    For annotator ``j``: ``sum_i (n_{i,l_ij} - 1) / sum_i (n_i - 1)`` over the items ``j``
    labelled, i.e. the share of the other annotators of an item who gave the same label,
    averaged over items with weights ``n_i - 1`` (paper section 3, the annotator error
    ``1 - agreement``). Annotators who share no item with anyone get the mean.
    """
    same = v.counts[v.item, v.label] - 1.0
    others = v.n_votes[v.item] - 1.0
    return _nan_mean_impute(_ratio(v.per_annotator(same), v.per_annotator(others)))


def _adjusted(error: np.ndarray | float, baseline: float) -> np.ndarray:
    """``max(1 - error / baseline, CLIP)``: how much better than the majority-class baseline."""
    return np.maximum(1.0 - np.asarray(error, dtype=np.float64) / baseline, CLIP)


def _stats(v: _VoteArrays, probs: np.ndarray, consensus: np.ndarray, peer: np.ndarray,
           likelihood: str) -> _Stats:
    """Weights and posteriors at a consensus (paper eqs. 1-4)."""
    n_items, k = probs.shape
    multi = v.multi
    agree = v.counts[np.arange(n_items), consensus] / v.n_votes
    p_bar = float(agree[multi].mean())            # P: the rate of votes equal to the consensus
    sub = consensus[multi]
    baseline = max(float(np.mean(sub != np.bincount(sub, minlength=k).argmax())), CLIP)
    annotator_w = _adjusted(1.0 - peer, baseline)
    model_error = float(np.mean(probs[multi].argmax(axis=1) != sub))
    model_w = float(_adjusted(model_error, baseline)) * float(np.sqrt(v.n_votes.mean()))
    w_vote = annotator_w[v.annotator]
    if likelihood == "shared":
        # each vote for label l says: true label l with probability P, any other (1-P)/(K-1)
        voted = np.bincount(v.item * k + v.label, weights=w_vote,
                            minlength=n_items * k).reshape(n_items, k)
        total = voted.sum(axis=1)
        other = (1.0 - p_bar) / (k - 1)
        post = model_w * probs + p_bar * voted + other * (total[:, None] - voted)
    else:
        table = _confusion_rows(v, consensus, k, multi)   # (n_annotators * k, k)
        rows = table[v.annotator * k + v.label] * w_vote[:, None]
        post = model_w * probs + _sum_rows(v.item, rows, n_items)
        total = np.bincount(v.item, weights=w_vote, minlength=n_items)
    post /= (model_w + total)[:, None]
    return _Stats(post=post, model_weight=model_w, annotator_weights=annotator_w,
                  likelihood=p_bar)


def _sum_rows(index: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    out = np.empty((n, rows.shape[1]))
    for c in range(rows.shape[1]):  # a loop over the (few) labels
        out[:, c] = np.bincount(index, weights=rows[:, c], minlength=n)
    return out


def _confusion_rows(v: _VoteArrays, consensus: np.ndarray, k: int,
                    multi: np.ndarray) -> np.ndarray:
    """``P(true = c | annotator j said l)`` from each annotator's confusion with the consensus.

    Our departure from the paper (``likelihood="confusion"``): the counts of (consensus,
    vote) pairs of each annotator on items with several votes, shrunk towards the pooled
    counts of all annotators with one item's worth of pseudo-counts per label
    (``k`` pseudo-votes per cell row), then normalised over the true label ``c``.
    """
    keep = multi[v.item].astype(np.float64)
    cell = (v.annotator * k + v.label) * k + consensus[v.item]
    counts = np.bincount(cell, weights=keep, minlength=v.n_annotators * k * k)
    counts = counts.reshape(v.n_annotators, k, k)           # [j, said l, true c]
    pooled = counts.sum(axis=0)
    pooled = pooled / np.maximum(pooled.sum(axis=1, keepdims=True), CLIP)
    shrunk = counts + k * pooled[None]
    shrunk /= np.maximum(shrunk.sum(axis=2, keepdims=True), CLIP)
    return shrunk.reshape(v.n_annotators * k, k)


def _majority(v: _VoteArrays, probs: np.ndarray) -> np.ndarray:
    """Majority vote with the paper's tie-breaks, in order: the model's most probable tied
    label, the tied label least often voted overall, the tied label whose voters agree most
    with the untied majority; then the first in label order (cleanlab draws at random)."""
    n_items, k = v.counts.shape
    cand = v.counts == v.counts.max(axis=1, keepdims=True)
    untied = cand.sum(axis=1) == 1
    cand = _keep_best(cand, probs)
    cand = _keep_best(cand, -v.counts.sum(axis=0)[None, :].astype(np.float64))
    if (cand.sum(axis=1) > 1).any():
        mv = v.counts.argmax(axis=1)
        on_untied = untied[v.item].astype(np.float64)
        agree = _nan_mean_impute(_ratio(v.per_annotator((v.label == mv[v.item]) * 1.0, on_untied),
                                        v.per_annotator(on_untied)))
        flat = v.item * k + v.label
        sums = np.bincount(flat, weights=agree[v.annotator], minlength=n_items * k)
        n = np.bincount(flat, minlength=n_items * k)
        score = _ratio(sums, n.astype(np.float64)).reshape(n_items, k)
        cand = _keep_best(cand, np.nan_to_num(score, nan=-np.inf))
    return cand.argmax(axis=1)


def fit_arrays(v: _VoteArrays, probs: np.ndarray,
               likelihood: str = "shared") -> tuple[np.ndarray, np.ndarray, _Stats]:
    """CROWDLAB's two passes on coded votes: ``(consensus, majority, stats)`` (paper section
    3: weights at the majority vote, then again at the first posterior's top label)."""
    peer = _peer_agreement(v)
    mv = _majority(v, probs)
    first = _stats(v, probs, mv, peer, likelihood)
    top = first.post == first.post.max(axis=1, keepdims=True)
    consensus = np.where(top.sum(axis=1) == 1, top.argmax(axis=1), mv)
    return consensus, mv, _stats(v, probs, consensus, peer, likelihood)


def pooled_vote_arrays(counts: np.ndarray) -> _VoteArrays:
    """Coded votes of a count matrix with every vote from one pooled annotator: CROWDLAB's
    inputs when annotators are unknown or treated as exchangeable (one shared weight)."""
    counts = np.asarray(counts, dtype=np.int64)
    n_items, k = counts.shape
    cells = np.arange(n_items * k)
    flat = counts.ravel()
    return _VoteArrays(item=np.repeat(cells // k, flat), label=np.repeat(cells % k, flat),
                       annotator=np.zeros(int(flat.sum()), dtype=np.int64),
                       counts=counts.astype(np.float64),
                       n_votes=counts.sum(axis=1).astype(np.float64), n_annotators=1)


def _keep_best(cand: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Among the candidate labels of each row, keep those with the highest score."""
    masked = np.where(cand, score, -np.inf)
    return cand & (masked == masked.max(axis=1, keepdims=True))


class CrowdLab:
    """CROWDLAB consensus from votes and a classifier's predicted probabilities.

    Parameters
    ----------
    likelihood : {"shared", "confusion"}, default="shared"
        ``"shared"``: the paper's likelihood of a vote, one agreement rate ``P`` shared by
        every annotator (a vote for ``l`` gives ``P`` to ``l`` and ``(1 - P)/(K - 1)`` to
        each other label). ``"confusion"`` (our variant, not in the paper): each annotator's
        confusion with the consensus, shrunk towards all annotators' (see Notes).

    Attributes
    ----------
    labels_ : ndarray of str, shape (n_items,)
        Consensus label per item, by name.
    labels_codes_ : ndarray of int, shape (n_items,)
        The same as indices into ``votes.labels``.
    posteriors_ : ndarray of shape (n_items, n_labels)
        The weighted average of the model's probabilities and the votes' likelihoods.
    consensus_quality_score_ : ndarray of shape (n_items,)
        ``posteriors_[i, labels_codes_[i]]``: the confidence that the consensus is right.
    agreement_ : ndarray of shape (n_items,)
        Share of an item's votes equal to its consensus label.
    majority_codes_ : ndarray of int, shape (n_items,)
        The majority vote (ties broken as in Notes) the weights were first estimated at.
    model_weight_ : float
    annotator_weights_ : ndarray of shape (n_annotators,)
    annotator_quality_score_ : ndarray of shape (n_annotators,)
        Per annotator: ``w * mean label quality + (1 - w) * agreement with the consensus on
        items with several votes`` (NaN for an annotator who labelled no such item).
    annotator_agreement_ : ndarray of shape (n_annotators,)
        Share of the annotator's votes equal to the consensus (all items).
    annotator_ids_ : ndarray of shape (n_annotators,)
    likelihood_ : float
        ``P``, the mean share of votes equal to the consensus on items with several votes.
    n_iter_ : int
        2: the weights are estimated at the majority vote, then once more at the consensus.
    converged_ : bool
        Always True.

    Notes
    -----
    With consensus ``y`` (first the majority vote, ties broken by the model's probability,
    then the rarer label, then the voters' agreement with the untied majority), on the items
    with more than one vote (Goh et al. 2022, section 3):

    - baseline error ``e_0 = mean(y_i != most common y)``, floored at ``1e-6``;
    - annotator weight ``w_j = max(1 - (1 - A_j) / e_0, 1e-6)`` with ``A_j`` the share of the
      other annotators of ``j``'s items who gave ``j``'s label;
    - model weight ``w_M = max(1 - e_M / e_0, 1e-6) * sqrt(mean_i n_i)`` with ``e_M`` the
      model's error against ``y``;
    - posterior ``p_ik = (w_M p^M_ik + sum_j w_j L(k | l_ij)) / (w_M + sum_j w_j)``.

    The consensus label is ``argmax_k p_ik`` (the majority vote on an exact tie); the weights
    and posteriors are then estimated once more at it, as cleanlab's ``best_quality``
    consensus does. The annotator quality mixes the mean ``p_{i, l_ij}`` of the annotator's
    labels with the agreement, with ``w = w_M / (w_M + sum_j w_j * mean_i n_i / M)``.

    With ``likelihood="confusion"``, ``L(k | l)`` is row ``l`` of annotator ``j``'s
    (consensus, vote) counts on items with several votes, plus ``K`` pseudo-counts spread as
    all annotators' pooled counts, normalised over the true label ``k``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": list("aabbcc"), "annotator": list("xyxyxy"),
    ...                    "label": list("110011")})
    >>> probs = [[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]]
    >>> cl = CrowdLab().fit(Votes.from_long(df), probs)
    >>> cl.labels_.tolist()
    ['1', '0', '1']
    """

    def __init__(self, *, likelihood: str = "shared"):
        self.likelihood = likelihood

    def fit(self, votes: Votes, probs: object) -> CrowdLab:
        """Fit on ``votes`` and the model's ``probs`` (n_items, n_labels), rows in the votes'
        item order and columns in their label order.

        Raises
        ------
        SchemaError
            Votes without annotator ids; ``probs`` of another shape; no item with two votes.
        InvalidValueError
            Rows of ``probs`` that are not distributions.
        """
        check_option("likelihood", self.likelihood, LIKELIHOODS)
        votes = require_annotators(votes, "CrowdLab")
        probs = check_probs(probs, name="CrowdLab probs")
        if probs.shape != (votes.n_items, votes.n_labels):
            raise SchemaError(f"CrowdLab probs must have shape (n_items, n_labels) = "
                              f"{(votes.n_items, votes.n_labels)}, one row per voted item in the "
                              f"votes' order; got {probs.shape}")
        v = _vote_arrays(votes)
        if not v.multi.any() or votes.n_labels < 2:
            raise SchemaError("CrowdLab needs two labels or more and items with two votes or "
                              "more (its weights are estimated on them); every item has one vote")
        consensus, mv, stats = fit_arrays(v, probs, self.likelihood)
        self._set(votes, v, consensus, mv, stats)
        return self

    def _set(self, votes: Votes, v: _VoteArrays, consensus: np.ndarray, mv: np.ndarray,
             stats: _Stats) -> None:
        rows = np.arange(votes.n_items)
        self.labels_codes_ = consensus
        self.labels_ = label_names(votes, consensus)
        self.majority_codes_ = mv
        self.posteriors_ = stats.post
        self.consensus_quality_score_ = stats.post[rows, consensus]
        self.agreement_ = v.counts[rows, consensus] / v.n_votes
        self.model_weight_ = stats.model_weight
        self.annotator_weights_ = stats.annotator_weights
        self.likelihood_ = stats.likelihood
        self.annotator_ids_ = votes.annotator_codes("CrowdLab")[1]
        hit = (v.label == consensus[v.item]).astype(np.float64)
        self.annotator_agreement_ = _ratio(v.per_annotator(hit),
                                           np.bincount(v.annotator, minlength=v.n_annotators)
                                           .astype(np.float64))
        self.annotator_quality_score_ = self._annotator_quality(v, stats, hit)
        self.n_iter_ = 2
        self.converged_ = True

    @staticmethod
    def _annotator_quality(v: _VoteArrays, stats: _Stats, hit: np.ndarray) -> np.ndarray:
        """``w * label quality + (1 - w) * agreement`` (paper section 3.2)."""
        n_each = np.bincount(v.annotator, minlength=v.n_annotators).astype(np.float64)
        label_quality = _ratio(v.per_annotator(stats.post[v.item, v.label]), n_each)
        on_multi = v.multi[v.item].astype(np.float64)
        agreement = _ratio(v.per_annotator(hit, on_multi), v.per_annotator(on_multi))
        spread = stats.annotator_weights.sum() * v.n_votes.mean() / v.n_annotators
        w = stats.model_weight / (stats.model_weight + spread)
        return w * label_quality + (1.0 - w) * agreement


def _vote_arrays(votes: Votes) -> _VoteArrays:
    annotator, ids = votes.annotator_codes("CrowdLab")
    counts = votes.counts().astype(np.float64)
    return _VoteArrays(item=np.asarray(votes.item_index, dtype=np.int64),
                       label=np.asarray(votes.label_index, dtype=np.int64),
                       annotator=np.asarray(annotator, dtype=np.int64), counts=counts,
                       n_votes=counts.sum(axis=1), n_annotators=len(ids))
