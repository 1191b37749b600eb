"""A deterministic synthetic multi-annotator dataset: the embedded default of ``annokit demo``.

Items have known "true" human label distributions spread across agreement
levels (from near-unanimous to near-uniform); annotators sample their votes
from them, except a known set of spammers who answer uniformly at random or
always give the same label. Everything is drawn from one ``rng``, so the same
seed gives the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from annokit.core.checks import check_rng
from annokit.core.votes import LabelSet, Votes
from annokit.errors import InvalidValueError

__all__ = ["DEMO_LABELS", "SyntheticDataset", "make_model_probs", "make_votes"]

DEMO_LABELS = LabelSet(["positive", "neutral", "negative"],
                       aliases={"pos": "positive", "neu": "neutral", "neg": "negative"})


@dataclass(frozen=True)
class SyntheticDataset:
    """Synthetic votes with the truth they were drawn from.

    Attributes
    ----------
    votes : Votes
        Long votes with annotator ids; ``gold`` is each item's most likely label.
    true_probs : ndarray of shape (n_items, n_labels)
        The human label distribution each honest vote was drawn from.
    spammer : ndarray of bool, shape (n_annotators,)
        Which annotators are spammers (in ``votes.annotator_ids`` order).
    spammer_kind : ndarray of str, shape (n_annotators,)
        "honest", "uniform" or "constant".
    """

    votes: Votes
    true_probs: np.ndarray
    spammer: np.ndarray
    spammer_kind: np.ndarray


def make_votes(*, n_items: int = 600, n_annotators: int = 60, votes_per_item: int = 20,
               spammer_fraction: float = 0.15, labels: LabelSet = DEMO_LABELS,
               rng: np.random.Generator | int | None = 0) -> SyntheticDataset:
    """Generate a synthetic multi-annotator dataset.

    Parameters
    ----------
    n_items, n_annotators, votes_per_item : int
        Each item is labelled by ``votes_per_item`` distinct annotators chosen at
        random.
    spammer_fraction : float, default=0.15
        Share of annotators who ignore the item: half answer uniformly at
        random, half always give one label.
    labels : LabelSet
    rng : numpy Generator or int seed, default=0

    Notes
    -----
    Item ``i`` has a dominant label ``c_i`` (uniform) with probability
    ``a_i ~ Uniform(1/L, 1)``, the rest spread by a flat Dirichlet, so the items
    cover every agreement level from unanimity to indifference.

    Examples
    --------
    >>> data = make_votes(n_items=5, n_annotators=8, votes_per_item=4, rng=0)
    >>> data.votes.n_votes, data.true_probs.shape
    (20, (5, 3))
    """
    gen = check_rng(rng)
    n_labels = len(labels)
    if not 1 <= votes_per_item <= n_annotators:
        raise InvalidValueError(f"votes_per_item must be in [1, n_annotators={n_annotators}]; "
                                f"got {votes_per_item}")
    if n_items < 1 or not 0 <= spammer_fraction < 1:
        raise InvalidValueError("need n_items >= 1 and 0 <= spammer_fraction < 1")

    dominant = gen.integers(0, n_labels, n_items)
    share = gen.uniform(1.0 / n_labels, 1.0, n_items)
    rest = gen.dirichlet(np.ones(n_labels - 1), n_items) if n_labels > 1 else np.zeros((n_items, 0))
    true_probs = np.empty((n_items, n_labels))
    others = np.argsort(np.arange(n_labels)[None, :] == dominant[:, None], axis=1, kind="stable")
    rows = np.arange(n_items)[:, None]
    true_probs[rows, others[:, : n_labels - 1]] = rest * (1 - share)[:, None]
    true_probs[np.arange(n_items), dominant] = share

    n_spam = round(spammer_fraction * n_annotators)
    kind = np.array(["honest"] * n_annotators, dtype=object)
    spam_ids = gen.choice(n_annotators, n_spam, replace=False)
    kind[spam_ids[: n_spam // 2]] = "uniform"
    kind[spam_ids[n_spam // 2:]] = "constant"
    constant_label = gen.integers(0, n_labels, n_annotators)

    # each item: votes_per_item distinct annotators (first k of a random permutation)
    chosen = np.argsort(gen.random((n_items, n_annotators)), axis=1)[:, :votes_per_item]
    item_index = np.repeat(np.arange(n_items), votes_per_item)
    annotator_index = chosen.ravel()
    u = gen.random(item_index.size)
    honest_label = (u[:, None] > np.cumsum(true_probs[item_index], axis=1)[:, :-1]).sum(axis=1)
    uniform_label = gen.integers(0, n_labels, item_index.size)
    k = kind[annotator_index]
    label_index = np.where(k == "honest", honest_label,
                           np.where(k == "uniform", uniform_label, constant_label[annotator_index]))

    item_ids = np.array([f"item{i:05d}" for i in range(n_items)], dtype=object)
    annotator_ids = np.array([f"ann{a:03d}" for a in range(n_annotators)], dtype=object)
    meta = pd.DataFrame({"true_agreement": share})
    votes = Votes(item_index, label_index, item_ids=item_ids, labels=labels,
                  annotator_index=annotator_index, annotator_ids=annotator_ids, item_metadata=meta,
                  gold=true_probs.argmax(axis=1), source="synthetic")
    return SyntheticDataset(votes=votes, true_probs=true_probs, spammer=kind != "honest",
                            spammer_kind=kind.astype(str))


def make_model_probs(truth: np.ndarray, n_labels: int, *, accuracy: float = 0.92,
                     rng: np.random.Generator | int | None = 0) -> np.ndarray:
    """A simulated classifier's probabilities with a known accuracy against ``truth``.

    Each item's predicted class is its true label with probability ``accuracy``, else one
    of the other labels drawn uniformly. The probabilities are the softmax of logits drawn
    from N(0, 1), with the predicted class's logit replaced by the largest logit plus an
    Exponential(1) margin, so the argmax is the predicted class and the confidence varies
    from item to item. Used to compare model-aware aggregation (CROWDLAB) on real votes
    whose gold labels are known.

    Parameters
    ----------
    truth : array of int, shape (n_items,)
        True label codes in ``[0, n_labels)``.
    n_labels : int
    accuracy : float, default=0.92
    rng : numpy Generator, int or None, default=0

    Returns
    -------
    ndarray of shape (n_items, n_labels)

    Examples
    --------
    >>> p = make_model_probs(np.array([0, 1, 1, 0]), 2, accuracy=1.0, rng=0)
    >>> p.argmax(axis=1).tolist(), np.allclose(p.sum(axis=1), 1)
    ([0, 1, 1, 0], True)
    """
    gen = check_rng(rng)
    truth = np.asarray(truth, dtype=np.int64)
    if truth.size and (truth.min() < 0 or truth.max() >= n_labels) or not 0 <= accuracy <= 1:
        raise InvalidValueError(f"make_model_probs needs truth codes in [0, {n_labels}) and an "
                                f"accuracy in [0, 1]; got accuracy {accuracy!r}")
    n = truth.size
    wrong = gen.random(n) >= accuracy
    shift = gen.integers(1, max(n_labels, 2), n)  # another label, uniformly
    predicted = np.where(wrong, (truth + shift) % n_labels, truth)
    logits = gen.standard_normal((n, n_labels))
    logits[np.arange(n), predicted] = logits.max(axis=1) + gen.exponential(1.0, n)
    logits -= logits.max(axis=1, keepdims=True)
    probs = np.exp(logits)
    return probs / probs.sum(axis=1, keepdims=True)
