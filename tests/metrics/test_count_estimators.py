"""Estimators from an item's vote counts (:mod:`annokit.metrics.count_estimators`)."""

from __future__ import annotations

import numpy as np
import pytest

from annokit.metrics import count_estimators


def _every_count_vector(n: int, k: int = 3) -> np.ndarray:
    """Every vector of ``k`` whole counts summing to ``n`` (the multinomial's support)."""
    from itertools import product

    return np.array([x for x in product(range(n + 1), repeat=k) if sum(x) == n])


def test_brier_soft_exact_unbiased_estimator_by_enumeration():
    """Multinomial factorial moments: the expectation of ``unbiased_brier_soft`` over every
    count vector of 4 votes (probabilities from scipy.stats.multinomial) equals
    ``sum_j (q_j - p_j)^2`` exactly; with one vote the fallback is returned."""
    from scipy.stats import multinomial

    p, q, n = np.array([0.6, 0.3, 0.1]), np.array([0.2, 0.5, 0.3]), 4
    xs = _every_count_vector(n)
    est = count_estimators.unbiased_brier_soft(np.tile(q, (len(xs), 1)), xs,
                                         fallback=np.full(len(xs), np.nan))
    expected = float((multinomial.pmf(xs, n, p) * est).sum())
    assert expected == pytest.approx(float(((q - p) ** 2).sum()), abs=1e-12)
    one = count_estimators.unbiased_brier_soft(q[None], np.array([[1, 0, 0]]), fallback=np.array([7.0]))
    assert one.tolist() == [7.0]


def test_grassberger_entropy_bias_is_the_series_tail_grassberger2003_eq28():
    """``E[sum_j (x_j/n)(psi(n) - psi(x_j))] = H(p) - sum_j p_j sum_(k>=n) (1-p_j)^k / k``
    (Grassberger 2003, eq. 28; the multinomial's factorial moments), by enumerating every count
    vector of 6 votes with scipy.stats.multinomial's probabilities."""
    from scipy.stats import multinomial

    p, n = np.array([0.55, 0.3, 0.15]), 6
    xs = _every_count_vector(n)
    expected = float((multinomial.pmf(xs, n, p) * count_estimators.grassberger_entropy(xs)).sum())
    k = np.arange(n, 5000)[:, None]
    tail = float((p * (1 - p) ** k / k).sum())
    assert expected == pytest.approx(float(-(p * np.log(p)).sum()) - tail, abs=1e-12)


def test_grassberger_table_equals_scipy_digamma_on_whole_and_fractional_counts():
    """Whole counts read psi from a table, fractional ones call scipy.special.digamma: the
    same values as the formula written with scipy on both (and an empty row gives 0)."""
    from scipy.special import digamma

    x = np.array([[0, 3, 2], [5, 0, 0], [1, 1, 1], [0, 0, 0], [40, 7, 0]], dtype=float)
    for counts in (x, x + 0.5):
        n = counts.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            want = np.where(counts > 0, counts / n * (digamma(n) - digamma(
                np.maximum(counts, 1.0))), 0.0).sum(axis=1)
        np.testing.assert_allclose(count_estimators.grassberger_entropy(counts), want, rtol=1e-13)
