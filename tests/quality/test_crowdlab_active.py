"""ActiveLab (Goh and Mueller 2023, arXiv:2301.11856): the score of ``quality.crowdlab_active``
against its formula and against cleanlab's ``get_active_learning_scores`` (test-only reference)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from annokit.core.soft_labels import softmax
from annokit.quality.crowdlab_active import activelab_scores, fit_temperature


def _rotated(n_groups: int = 60, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts, probs and the (items, 3 annotators) label matrix of items in threes whose votes
    rotate among the annotators: every annotator agrees with its peers equally, so CROWDLAB's
    per-annotator weights are one pooled weight. Three labels, three votes, no tied count."""
    rng = np.random.default_rng(seed)
    patterns = np.array([[0, 0, 0], [1, 1, 1], [2, 2, 2], [0, 0, 1], [1, 1, 2], [2, 2, 0],
                         [0, 1, 1], [1, 2, 2], [2, 0, 0]])
    rows = []
    for _ in range(n_groups):
        base = patterns[rng.integers(len(patterns))]
        rows += [np.roll(base, r) for r in range(3)]
    labels = np.array(rows)
    counts = np.stack([(labels == k).sum(1) for k in range(3)], axis=1)
    probs = rng.dirichlet([1, 1, 1], len(labels)) * 0.5 + 0.5 * np.eye(3)[labels[:, 0]]
    return counts, probs, labels


def test_score_is_the_papers_weighted_average_of_quality_and_chance():
    """ActiveLab eq.: (Q (n w + w_M) + w / K) / (n w + w_M + w); between Q and 1/K."""
    counts, probs, _ = _rotated()
    s = activelab_scores(counts, probs)
    backed = counts.sum(1) * s.annotator_weight + s.model_weight
    expected = (s.quality * backed + s.annotator_weight / 3) / (backed + s.annotator_weight)
    np.testing.assert_allclose(s.score, expected)
    assert np.all((s.score <= s.quality + 1e-12) & (s.score >= 1 / 3 - 1e-12))


def test_unanimous_items_agreeing_with_the_model_rank_last():
    counts = np.array([[5, 0], [3, 2], [0, 5], [2, 3]])
    probs = np.array([[0.95, 0.05], [0.5, 0.5], [0.05, 0.95], [0.6, 0.4]])
    order = np.argsort(activelab_scores(counts, probs).score)
    assert set(order[:2]) == {1, 3}


def test_temperature_recovers_a_sharpened_model():
    """The soft cross-entropy fit undoes a known temperature (cleanlab's criterion)."""
    rng = np.random.default_rng(1)
    truth = rng.dirichlet([2, 2, 2], 4000)
    counts = np.array([rng.multinomial(100, t) for t in truth])
    flat = softmax(np.log(truth) / 2.0)
    assert fit_temperature(counts, flat) == pytest.approx(0.5, rel=0.1)


def test_matches_cleanlab_get_active_learning_scores():
    """cleanlab 2.x ``get_active_learning_scores`` on votes whose annotators share one weight,
    at cleanlab's own temperature."""
    multi = pytest.importorskip("cleanlab.multiannotator")
    utils = pytest.importorskip("cleanlab.internal.multiannotator_utils")
    counts, probs, labels = _rotated()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference, _ = multi.get_active_learning_scores(labels, probs)
        temperature = utils.find_best_temp_scaler(labels, probs)
    ours = activelab_scores(counts, probs, temperature=temperature)
    np.testing.assert_allclose(ours.score, reference, rtol=1e-6, atol=1e-9)
