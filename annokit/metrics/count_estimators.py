"""Estimators of functions of an item's population distribution from its vote counts alone.

Used by the population target (:mod:`annokit.metrics.population`): ``brier_soft``'s exact
unbiased estimator, and the Grassberger entropy that replaces the plug-in entropy of the votes
inside ``kl``, ``ent_ce`` and ``ent_ce_signed``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import digamma

from annokit.core.soft_labels import entropy

__all__ = ["count_entropies", "grassberger_entropy", "unbiased_brier_soft"]

_TABLE = 1_000_000  # whole vote counts up to this read digamma from a table


def grassberger_entropy(counts: np.ndarray) -> np.ndarray:
    """``sum_j (x_j / n) (psi(n) - psi(x_j))``: an estimate of ``H(p)`` from counts ``x``.

    With ``x_j ~ Binomial(n, p_j)``, ``E[x_j (n - x_j)_k / (n)_(k+1)] = p_j (1 - p_j)^k``
    (falling factorials: the multinomial's factorial moments), and summing over
    ``k = 1 .. n - 1`` with weights ``1 / k`` gives this estimator, unbiased for the first
    ``n - 1`` terms of ``-p_j log p_j = p_j sum_k (1 - p_j)^k / k`` (Grassberger 2003,
    eq. 28; Zahl 1977). Its bias is only the series' tail
    ``p_j sum_(k >= n) (1 - p_j)^k / k``, small unless ``p_j`` is small.
    """
    return count_entropies(counts)[1]


def count_entropies(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The plug-in ``H(x / n) = log n - sum_j x_j log x_j / n`` and :func:`grassberger_entropy`
    ``psi(n) - sum_j x_j psi(x_j) / n`` of each count row (0 for an empty row); whole counts
    read ``x log x`` and ``x psi(x)`` from tables."""
    x = np.asarray(counts, dtype=np.float64)
    n = x.sum(axis=1)
    top = n.max(initial=0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        if top <= _TABLE and np.array_equal(x, np.floor(x)):
            grid = np.arange(top + 1.0)
            safe = np.maximum(grid, 1.0)
            xlogx, xpsi = grid * np.log(safe), grid * digamma(safe)
            log_n, psi_n = np.log(safe), digamma(safe)
            whole, size = x.astype(np.intp), n.astype(np.intp)
            s_log, s_psi = xlogx[whole].sum(axis=1), xpsi[whole].sum(axis=1)
            plug, grass = log_n[size] - s_log / n, psi_n[size] - s_psi / n
        else:
            plug = entropy(x / n[:, None], base=None)
            grass = np.where(x > 0, x / n[:, None] * (digamma(n)[:, None] - digamma(
                np.maximum(x, 1.0))), 0.0).sum(axis=1)
    empty = n <= 0
    return np.where(empty, 0.0, plug), np.where(empty, 0.0, grass)


def unbiased_brier_soft(probs: np.ndarray, counts: np.ndarray, *, fallback: np.ndarray
                        ) -> np.ndarray:
    """The exact unbiased estimator of ``sum_j (q_j - p_j)^2`` from an item's votes.

    ``x_j`` votes of ``n`` on label ``j`` are multinomial, so ``E[x_j / n] = p_j`` and
    ``E[x_j (x_j - 1) / (n (n - 1))] = p_j^2`` (the multinomial's second factorial moment);
    the estimate ``sum_j q_j^2 - 2 q_j x_j / n + x_j (x_j - 1) / (n (n - 1))`` is unbiased
    whatever the prior. Items with one vote have no unbiased estimator: ``fallback`` there.

    Examples
    --------
    >>> q = np.array([[0.5, 0.5]]); x = np.array([[2, 0]])
    >>> float(unbiased_brier_soft(q, x, fallback=np.zeros(1))[0])  # p_0^2 estimated as 1
    0.5
    """
    x = np.asarray(counts, dtype=np.float64)
    n = x.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        second = (x * (x - 1.0)).sum(axis=1) / (n * (n - 1.0))
        value = (probs * probs).sum(axis=1) - 2.0 * (probs * x).sum(axis=1) / n + second
    return np.where(n >= 2, value, fallback)
