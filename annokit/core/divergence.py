"""Divergences between label distributions, per item.

Conventions follow ChaosNLI (Nie et al. 2020), which reports the
Jensen-Shannon *distance* as computed by ``scipy.spatial.distance.jensenshannon``
(natural log, square root of the divergence) and KL(human || model) with model
probabilities clipped at 1e-15.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from annokit.errors import VoteSchemaError

__all__ = ["KL_EPS", "jensen_shannon_distance", "kl_divergence", "tvd"]

#: Model probabilities are clipped to at least this value inside KL (ChaosNLI's choice).
KL_EPS = 1e-15


def _pair(p: Any, q: Any) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    if p.ndim == 1:
        p = p[None, :]
    if q.ndim == 1:
        q = q[None, :]
    if p.shape != q.shape or p.ndim != 2:
        raise VoteSchemaError(f"distributions must have equal 2-D shapes; got {p.shape} and {q.shape}")
    if not (np.isfinite(p).all() and np.isfinite(q).all()):
        raise VoteSchemaError("distributions contain NaN or infinite values")
    return p, q


def tvd(p: Any, q: Any) -> np.ndarray:
    """Total variation distance ``0.5 * sum_j |p_j - q_j|`` per row, in [0, 1].

    This is Baan et al.'s (2022) DistCE when ``p`` is the model and ``q`` the
    human distribution.

    Examples
    --------
    >>> tvd([[0.5, 0.5, 0.0]], [[0.0, 0.5, 0.5]]).tolist()
    [0.5]
    """
    p, q = _pair(p, q)
    return 0.5 * np.abs(p - q).sum(axis=1)


def jensen_shannon_distance(p: Any, q: Any) -> np.ndarray:
    """Jensen-Shannon distance per row: ``sqrt(JSD(p, q))`` with natural logs.

    Equals ``scipy.spatial.distance.jensenshannon(p, q)`` row by row; bounded by
    ``sqrt(ln 2)``.

    Examples
    --------
    >>> round(float(jensen_shannon_distance([[1.0, 0.0]], [[0.0, 1.0]])[0] ** 2), 6)  # ln 2
    0.693147
    """
    p, q = _pair(p, q)
    p = p / p.sum(axis=1, keepdims=True)
    q = q / q.sum(axis=1, keepdims=True)
    m = 0.5 * (p + q)
    with np.errstate(divide="ignore", invalid="ignore"):
        left = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0) / np.where(m > 0, m, 1.0)), 0.0)
        right = np.where(q > 0, q * np.log(np.where(q > 0, q, 1.0) / np.where(m > 0, m, 1.0)), 0.0)
    js = 0.5 * (left.sum(axis=1) + right.sum(axis=1))
    return np.sqrt(np.maximum(js, 0.0))


def kl_divergence(p: Any, q: Any, *, eps: float = KL_EPS) -> np.ndarray:
    """KL(p || q) per row in nats, with ``q`` clipped to at least ``eps``.

    ``p`` is the reference (human) distribution and ``q`` the model; terms with
    ``p_j = 0`` contribute 0. ChaosNLI clips model probabilities at 1e-15.

    Examples
    --------
    >>> round(float(kl_divergence([[0.5, 0.5]], [[0.5, 0.5]])[0]), 12)
    0.0
    """
    p, q = _pair(p, q)
    q = np.maximum(q, eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * (np.log(np.where(p > 0, p, 1.0)) - np.log(q)), 0.0)
    return terms.sum(axis=1)
