"""Accuracy, Brier score and negative log-likelihood against hard labels and soft targets."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import entropy as scipy_entropy

from annokit.core.divergence import kl_divergence
from annokit.errors import InvalidValueError, SchemaError
from annokit.metrics import compute
from annokit.metrics.scores import accuracy, brier_score, negative_log_likelihood


def vote_targets(rng, n, k, n_votes=5):
    """Human distributions from few votes: many exact ties and zeros."""
    counts = rng.multinomial(n_votes, np.full(k, 1.0 / k), size=n)
    return counts / n_votes


def model_probs(rng, n, k):
    return rng.dirichlet(np.ones(k), size=n)


# --------------------------------------------------------------------------- proper scores

def test_accuracy_and_per_item():
    p = [[0.9, 0.1], [0.4, 0.6], [0.5, 0.5]]
    assert accuracy(p, [0, 0, 0]) == pytest.approx(2 / 3)
    assert accuracy(p, [0, 0, 0], reduction="none").tolist() == [1.0, 0.0, 1.0]  # tie -> col 0


def test_brier_normalisation():
    # sum over classes, mean over items; two classes: twice scikit-learn's brier_score_loss
    p = np.array([[0.8, 0.2], [0.3, 0.7]])
    assert brier_score(p, [0, 0]) == pytest.approx(((0.2**2 * 2) + (0.7**2 * 2)) / 2)
    assert brier_score(p, np.array([[0.5, 0.5], [0.5, 0.5]])) == pytest.approx(
        (0.3**2 * 2 + 0.2**2 * 2) / 2)
    assert brier_score(p, [0, 1], reduction="none") == pytest.approx([0.08, 0.18])


def test_nll_and_cross_entropy():
    p = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    assert negative_log_likelihood(p, [2, 2], reduction="none") == pytest.approx(
        [-np.log(1e-15), -np.log(0.5)])
    t = np.array([[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    assert negative_log_likelihood(p, t, reduction="none") == pytest.approx([np.log(2), np.log(2)])
    # cross-entropy = KL(human || model) + H(human)
    rng = np.random.default_rng(4)
    q, h = model_probs(rng, 25, 3), vote_targets(rng, 25, 3)
    np.testing.assert_allclose(negative_log_likelihood(q, h, reduction="none"),
                               kl_divergence(h, q) + scipy_entropy(h, axis=1), atol=1e-12)


def test_means_are_the_registry_metrics():
    rng = np.random.default_rng(6)
    p, t = model_probs(rng, 40, 3), vote_targets(rng, 40, 3)
    y = t.argmax(axis=1)
    assert accuracy(p, y) == pytest.approx(compute("accuracy", p, hard=y), rel=1e-12)
    assert brier_score(p, y) == pytest.approx(compute("brier", p, hard=y), rel=1e-12)
    assert brier_score(p, t) == pytest.approx(compute("brier_soft", p, t), rel=1e-12)
    assert negative_log_likelihood(p, y) == pytest.approx(compute("nll_majority", p, hard=y), rel=1e-12)
    assert negative_log_likelihood(p, t) == pytest.approx(compute("nll", p, t), rel=1e-12)


@pytest.mark.parametrize("call, match", [
    (lambda: negative_log_likelihood([[0.5, 0.5]], [0], eps=0), r"eps must be in \(0, 1\); got 0"),
    (lambda: brier_score([[0.5, 0.5]], [0], reduction="sum"),
     r"reduction must be one of \['mean', 'none'\]; got 'sum'"),
    (lambda: brier_score([[0.5, 0.5]], [[0.5, 0.4]]), r"targets rows must sum to 1"),
    (lambda: accuracy([[0.5, 0.5]], [2]), r"labels must lie in \[0, 2\)"),
    (lambda: accuracy([[0.6, 0.6]], [0]), "probs rows must sum to 1"),
])
def test_errors(call, match):
    with pytest.raises(InvalidValueError, match=match):
        call()


def test_shape_errors():
    with pytest.raises(SchemaError, match=r"targets must have the shape of probs \(1, 2\); "
                                          r"got \(1, 3\)"):
        negative_log_likelihood([[0.5, 0.5]], [[0.5, 0.5, 0.0]])
    with pytest.raises(SchemaError, match="labels has 2 entries but probs has 1 rows"):
        brier_score([[0.5, 0.5]], [0, 1])
