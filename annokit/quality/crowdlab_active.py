"""ActiveLab: which items to relabel next, from votes and a model (Goh and Mueller 2023).

ActiveLab scores every item by how sure the CROWDLAB consensus (:mod:`annokit.quality.crowdlab`)
is of its label, discounted towards chance where few weighted opinions back it:

``score_i = (Q_i * (W_i + w_M) + w_bar / K) / (W_i + w_M + w_bar)``

with ``Q_i`` the consensus quality score (the CROWDLAB posterior's probability of the consensus
label), ``W_i`` the summed weights of the item's annotators, ``w_M`` the model's weight,
``w_bar`` the mean annotator weight and ``K`` the number of labels: one more annotator is
imagined to have voted at random (``1 / K``). The lowest scores are relabelled first. Before
CROWDLAB, the model's probabilities are temperature-scaled to the votes: the temperature that
minimises the mean soft cross-entropy between the items' vote proportions and the scaled
probabilities (the reference searches a grid of temperatures; here a bounded scalar search).

Annotators are pooled: every vote has the one weight of an exchangeable annotator (the
planner's model, and the only one for counts-only data such as ChaosNLI), so ``W_i = n_i w``.

References
----------
Goh, H. W. and Mueller, J. (2023). ActiveLab: Active learning with re-labeling by multiple
annotators. ICLR 2023 Workshop on Trustworthy ML. arXiv:2301.11856

cleanlab 2.x, ``cleanlab.multiannotator.get_active_learning_scores`` (the reference).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from annokit.core.soft_labels import softmax
from annokit.quality.crowdlab import CLIP, fit_arrays, pooled_vote_arrays

__all__ = ["ActiveLabScores", "activelab_scores", "fit_temperature"]

#: Bounds of the temperature search, as log T.
LOG_T_BOUNDS = (-4.0, 4.0)


@dataclass(frozen=True)
class ActiveLabScores:
    """What :func:`activelab_scores` returns: ``score`` per item (lowest: relabel first),
    the consensus quality ``quality``, and the fitted ``temperature``, ``model_weight`` and
    pooled ``annotator_weight``."""

    score: np.ndarray
    quality: np.ndarray
    temperature: float
    model_weight: float
    annotator_weight: float


def fit_temperature(counts: np.ndarray, probs: np.ndarray) -> float:
    """The temperature ``T`` minimising the mean soft cross-entropy
    ``-sum_l s_il log softmax(log p_i / T)_l`` over items with votes (``s_i`` their vote
    proportions).

    >>> rng = np.random.default_rng(0)
    >>> truth = rng.dirichlet([1, 1, 1], 3000)
    >>> counts = np.array([rng.multinomial(50, t) for t in truth])
    >>> sharp = softmax(np.log(truth) / 0.5)
    >>> 0.4 < 1 / fit_temperature(counts, sharp) < 0.6
    True
    """
    from scipy import optimize

    counts = np.asarray(counts, dtype=np.float64)
    voted = counts.sum(1) > 0
    soft = counts[voted] / counts[voted].sum(1, keepdims=True)
    logp = np.log(np.maximum(np.asarray(probs, dtype=np.float64)[voted], CLIP))

    def loss(log_t: float) -> float:
        scaled = logp / np.exp(log_t)
        log_q = scaled - np.logaddexp.reduce(scaled, axis=1, keepdims=True)
        return -float((soft * log_q).sum(1).mean())

    res = optimize.minimize_scalar(loss, bounds=LOG_T_BOUNDS, method="bounded")
    return float(np.exp(res.x))


def activelab_scores(counts: np.ndarray, probs: np.ndarray, *,
                     temperature: float | None = None) -> ActiveLabScores:
    """ActiveLab's score of every item (module docstring) from vote counts and a model.

    Parameters
    ----------
    counts : ndarray of shape (n_items, n_labels)
        Votes so far per item and label (annotators pooled).
    probs : ndarray of shape (n_items, n_labels)
        The model's probabilities, rows aligned to ``counts``.
    temperature : float, optional
        A fixed temperature instead of the fitted one (:func:`fit_temperature`).

    Returns
    -------
    ActiveLabScores

    Examples
    --------
    >>> counts = np.array([[3, 0], [2, 1], [1, 1], [3, 0]])
    >>> probs = np.array([[0.9, 0.1], [0.6, 0.4], [0.5, 0.5], [0.2, 0.8]])
    >>> s = activelab_scores(counts, probs)
    >>> int(s.score.argmin()) in (2, 3), bool(s.score[0] > s.score[2])
    (True, True)
    """
    counts = np.asarray(counts, dtype=np.int64)
    probs = np.asarray(probs, dtype=np.float64)
    n_items, k = counts.shape
    if temperature is None:
        temperature = fit_temperature(counts, probs)
    scaled = softmax(np.log(np.maximum(probs, CLIP)) / temperature)
    v = pooled_vote_arrays(counts)
    with np.errstate(invalid="ignore", divide="ignore"):  # items without votes: model only
        consensus, _, stats = fit_arrays(v, scaled)
    quality = stats.post[np.arange(n_items), consensus]
    w = float(stats.annotator_weights[0])
    backed = v.n_votes * w + stats.model_weight
    score = (quality * backed + w / k) / (backed + w)
    return ActiveLabScores(score=score, quality=quality, temperature=temperature,
                           model_weight=stats.model_weight, annotator_weight=w)
