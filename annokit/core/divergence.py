"""Divergences between label distributions, per item: TVD, Jensen-Shannon distance, KL.

Conventions follow ChaosNLI (Nie et al. 2020), which reports the
Jensen-Shannon *distance* as computed by ``scipy.spatial.distance.jensenshannon``
(natural log, square root of the divergence) and KL(human || model) with model
probabilities clipped at 1e-15.

Every public function checks that both inputs are probability rows (finite,
``>= 0``, summing to 1 within 1e-6; :func:`annokit.core.checks.check_simplex`)
and raises :class:`~annokit.errors.InvalidValueError` naming the row otherwise:
nothing is renormalised. The formulas are those of
:mod:`annokit.core.divergence_rows`, the one implementation that the metric
kernels and the subsampling curves compute too.

References
----------
Lin (1991). Divergence measures based on the Shannon entropy. IEEE Transactions
on Information Theory 37(1), 145-151. DOI:10.1109/18.61115.

Kullback, Leibler (1951). On Information and Sufficiency. Annals of
Mathematical Statistics 22(1), 79-86. DOI:10.1214/aoms/1177729694.

Nie, Zhou, Bansal (2020). What Can We Learn from Collective Human Opinions on
Natural Language Inference Data? EMNLP. arXiv:2010.03532.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from annokit.core.checks import check_simplex
from annokit.errors import SchemaError

__all__ = ["KL_EPS", "jensen_shannon_distance", "kl_divergence", "tvd"]

#: Model probabilities are clipped to at least this value inside KL (ChaosNLI's choice).
KL_EPS = 1e-15


def _pair(p: Any, q: Any) -> tuple[np.ndarray, np.ndarray]:
    """Both inputs as float64 2-D arrays of equal shape (a 1-D input is one row), checked."""
    out = []
    for x in (p, q):
        arr = np.asarray(x.to_numpy() if hasattr(x, "to_numpy") else x, dtype=np.float64)
        out.append(arr[None, :] if arr.ndim == 1 else arr)
    p, q = out
    if p.shape != q.shape or p.ndim != 2:
        raise SchemaError(f"distributions must have equal 2-D shapes; got {p.shape} and {q.shape}")
    check_simplex(p, name="p")
    check_simplex(q, name="q")
    return p, q


def _rows(p: Any, q: Any, which: int, log_eps: float = 0.0) -> np.ndarray:
    """One divergence per row of two checked inputs
    (:func:`annokit.core.divergence_rows.divergence_rows`)."""
    # imported on first use: numba's import costs every `import annokit.quality` 0.2 s
    from annokit.core.divergence_rows import divergence_rows

    p, q = _pair(p, q)
    out = np.empty(p.shape[0])
    divergence_rows(np.ascontiguousarray(p), np.ascontiguousarray(q), which, log_eps, out)
    return out


def tvd(p: Any, q: Any) -> np.ndarray:
    """Total variation distance ``0.5 * sum_j |p_j - q_j|`` per row, in [0, 1].

    This is Baan et al.'s (2022) DistCE when ``p`` is the model and ``q`` the
    human distribution.

    Parameters
    ----------
    p, q : array-like of shape (n_items, n_labels) or (n_labels,)
        Probability rows (a 1-D input is one row).

    Returns
    -------
    ndarray of shape (n_items,)

    Raises
    ------
    SchemaError
        If the shapes differ.
    InvalidValueError
        If a row is not a distribution (NaN, negative, or not summing to 1).

    Examples
    --------
    >>> tvd([[0.5, 0.5, 0.0]], [[0.0, 0.5, 0.5]]).tolist()
    [0.5]
    """
    return _rows(p, q, 0)


def jensen_shannon_distance(p: Any, q: Any) -> np.ndarray:
    """Jensen-Shannon distance per row: ``sqrt(JSD(p, q))`` with natural logs.

    Equals ``scipy.spatial.distance.jensenshannon(p, q)`` row by row on
    distributions; bounded by ``sqrt(ln 2)``. Unlike scipy, rows that do not
    sum to 1 are rejected, not renormalised.

    Parameters
    ----------
    p, q : array-like of shape (n_items, n_labels) or (n_labels,)

    Returns
    -------
    ndarray of shape (n_items,)

    Raises
    ------
    SchemaError
        If the shapes differ.
    InvalidValueError
        If a row is not a distribution.

    Notes
    -----
    ``JSD(p, q) = 1/2 sum_j p_j log(p_j / m_j) + 1/2 sum_j q_j log(q_j / m_j)``
    with ``m = (p + q) / 2`` (Lin 1991).

    Examples
    --------
    >>> round(float(jensen_shannon_distance([[1.0, 0.0]], [[0.0, 1.0]])[0] ** 2), 6)  # ln 2
    0.693147
    """
    return _rows(p, q, 1)


def kl_divergence(p: Any, q: Any, *, eps: float = KL_EPS) -> np.ndarray:
    """KL(p || q) per row in nats, with ``q`` clipped to at least ``eps``.

    ``p`` is the reference (human) distribution and ``q`` the model; terms with
    ``p_j = 0`` contribute 0. ChaosNLI clips model probabilities at 1e-15.

    Parameters
    ----------
    p, q : array-like of shape (n_items, n_labels) or (n_labels,)
    eps : float, default 1e-15

    Returns
    -------
    ndarray of shape (n_items,)

    Raises
    ------
    SchemaError
        If the shapes differ.
    InvalidValueError
        If a row is not a distribution.

    Notes
    -----
    ``KL(p || q) = sum_{j: p_j > 0} p_j log(p_j / max(q_j, eps))`` (Kullback and
    Leibler 1951).

    Examples
    --------
    >>> round(float(kl_divergence([[0.5, 0.5]], [[0.5, 0.5]])[0]), 12)
    0.0
    """
    with np.errstate(divide="ignore"):  # eps = 0: no floor
        log_eps = float(np.log(eps))
    return _rows(p, q, 2, log_eps)
