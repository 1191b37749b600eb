"""GLAD: Generative model of Labels, Abilities and Difficulties (Whitehill et al. 2009).

Model (Whitehill et al. 2009): annotator ``j`` has an ability
``alpha_j`` in (-inf, inf), item ``i`` an inverse difficulty ``beta_i > 0``
(parametrised as ``beta_i = exp(b_i)``), and annotator ``j`` gives item ``i`` its true
label with probability

    ``P(L_ij = Z_i) = sigma(alpha_j beta_i) = 1 / (1 + exp(-alpha_j beta_i))``,

and each of the ``K - 1`` other labels with probability ``(1 - sigma(alpha_j beta_i)) /
(K - 1)``: for two labels the paper's model; for more, the wrong answers spread evenly
over the other labels, as in crowd-kit.

EM, as in the paper: the E-step is ``P(Z_i = k | L) ∝ p_k prod_j P(L_ij | Z_i = k)``; the
M-step maximises the expected complete-data log likelihood ``Q`` plus Gaussian log
priors ``N(1, 1)`` on every ``alpha_j`` and ``b_i`` (crowd-kit's) over all parameters by
conjugate gradients (a partial M-step of ``m_step_max_iter`` iterations: generalised EM).
With ``q_v = P(Z_i = l_v | L)`` the posterior of the label given in vote ``v``, ``Q``
and its gradient need one value per vote:

    ``Q = sum_v q_v log sigma(z_v) + (1 - q_v) (log(1 - sigma(z_v)) - log(K - 1))``,
    ``dQ/d alpha_j = sum_{v of j} (q_v - sigma(z_v)) beta_i``,
    ``dQ/d b_i = sum_{v on i} (q_v - sigma(z_v)) alpha_j beta_i``,

with ``z_v = alpha_j beta_i``, so every evaluation is a few passes of ``np.bincount`` over
the votes. The defaults (start at ``alpha = b = 1``, uniform class prior, 100 EM
iterations, 25 conjugate-gradient iterations with ``gtol=1e-2``) are crowd-kit's.

Departures from crowd-kit 1.4.2's ``GLAD`` (same iterations otherwise; ``tests/quality/
test_glad.py`` compares them): EM stops when the log posterior per vote (log marginal
likelihood plus the log priors, which EM never decreases) changes by less than ``tol``;
crowd-kit divides its ``Q`` by ``n_votes * n_labels`` and stops at the first iteration where
it rises by less than ``tol`` (a drop included).

References
----------
Whitehill, J., Ruvolo, P., Wu, T., Bergsma, J. and Movellan, J. (2009). Whose Vote Should
Count More: Optimal Integration of Labels from Labelers of Unknown Expertise. *NIPS 22*,
2035-2043.
https://proceedings.neurips.cc/paper/2009/hash/f899139df5e1059396431415e770c6dd-Abstract.html
"""

from __future__ import annotations

from typing import Any

import numpy as np

from annokit.core.checks import check_option
from annokit.core.progress import progress
from annokit.core.votes import Votes
from annokit.errors import InvalidValueError
from annokit.quality.common import (
    check_nonneg_float,
    check_positive_int,
    label_names,
    normalize_log,
    require_annotators,
    warn_not_converged,
)

__all__ = ["GLAD"]

_PRIOR_MEAN = 1.0            # N(1, 1) priors on alpha_j and on b_i = log beta_i (crowd-kit)
_LOG_SQRT_2PI = 0.5 * np.log(2 * np.pi)


class GLAD:
    """GLAD (Whitehill et al. 2009): annotator abilities and item difficulties by EM.

    Parameters
    ----------
    max_iter : int, default=100
        Maximum number of EM iterations (E-step, then a partial M-step).
    tol : float, default=1e-5
        Stop once the log posterior per vote (nats) changes by less than ``tol``
        between iterations; ``tol=0`` runs exactly ``max_iter`` iterations.
    m_step_max_iter : int, default=25
        Conjugate-gradient iterations per M-step.
    m_step_tol : float, default=1e-2
        Gradient-norm tolerance of the conjugate gradients (``scipy.optimize.minimize``'s
        ``tol``).
    priors : {"uniform", "learn"} or array-like of shape (n_labels,), default="uniform"
        Class prior ``p``: uniform (the paper's experiments, crowd-kit), learnt in every
        M-step (with ``smoothing`` pseudo-counts), or fixed weights in label order.
    smoothing : float, default=0.01
        Pseudo-count of the learnt class prior.

    Attributes
    ----------
    posteriors_ : ndarray of shape (n_items, n_labels)
        ``P(Z_i = k | votes)`` from the last E-step.
    labels_, labels_codes_ : ndarray of shape (n_items,)
        Most probable label by name, and as indices into ``votes.labels``.
    abilities_ : ndarray of shape (n_annotators,)
        ``alpha_j`` from the M-step that followed the last E-step (crowd-kit's ``alphas_``).
    inverse_difficulties_ : ndarray of shape (n_items,)
        ``beta_i = exp(b_i)`` (crowd-kit's ``betas_`` are ``b_i``).
    priors_ : ndarray of shape (n_labels,)
    n_iter_ : int
    converged_ : bool
    log_likelihood_ : float
        Log marginal likelihood at the parameters of the last E-step.
    objective_ : float
        ``log_likelihood_`` plus the Gaussian log priors of those parameters.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": list("aaabbbcccddd"), "annotator": list("xyz" * 4),
    ...                    "label": list("110000111001")})
    >>> glad = GLAD().fit(Votes.from_long(df))
    >>> glad.labels_.tolist()
    ['1', '0', '1', '0']
    >>> bool(glad.abilities_[2] < glad.abilities_[0])
    True
    """

    def __init__(self, *, max_iter: int = 100, tol: float = 1e-5, m_step_max_iter: int = 25,
                 m_step_tol: float = 1e-2, priors: Any = "uniform", smoothing: float = 0.01):
        self.max_iter = max_iter
        self.tol = tol
        self.m_step_max_iter = m_step_max_iter
        self.m_step_tol = m_step_tol
        self.priors = priors
        self.smoothing = smoothing

    def _check(self, n_labels: int) -> np.ndarray | None:
        check_positive_int("max_iter", self.max_iter)
        check_nonneg_float("tol", self.tol)
        check_positive_int("m_step_max_iter", self.m_step_max_iter)
        check_nonneg_float("m_step_tol", self.m_step_tol)
        check_nonneg_float("smoothing", self.smoothing)
        if isinstance(self.priors, str):
            check_option("priors", self.priors, ("uniform", "learn"))
            return None if self.priors == "learn" else np.full(n_labels, 1.0 / n_labels)
        arr = np.asarray(self.priors, dtype=np.float64)
        if arr.shape != (n_labels,) or not np.isfinite(arr).all() or (arr <= 0).any():
            raise InvalidValueError(
                f"priors must be 'uniform', 'learn' or {n_labels} positive weights (one per "
                f"label, in label order); got {self.priors!r}")
        return arr / arr.sum()

    def fit(self, votes: Votes) -> GLAD:
        from scipy.optimize import minimize  # only GLAD needs it: ~0.2 s off every other start-up

        votes = require_annotators(votes, "GLAD.fit")
        fixed = self._check(votes.n_labels)
        data = _Data(votes)
        priors = fixed if fixed is not None else np.full(votes.n_labels, 1.0 / votes.n_labels)
        x = np.concatenate([np.full(data.n_ann, 1.0), np.full(votes.n_items, 1.0)])
        prev, change, converged, n_iter = -np.inf, np.inf, False, 0
        with progress(total=self.max_iter, desc="GLAD EM", unit="iter") as bar:
            for step in range(1, self.max_iter + 1):
                n_iter = step
                post, ll = data.e_step(x, priors)                        # E-step
                objective = (ll + _log_normal(x)) / data.n_votes
                change = abs(objective - prev) if np.isfinite(prev) else np.inf
                prev = objective
                if change < self.tol:
                    converged = True
                    break
                q = post[data.item, data.label]                        # P(Z_i = l_v | votes)
                x = minimize(data.neg_q, x, args=(q,), jac=True, method="CG",
                             tol=self.m_step_tol,
                             options={"maxiter": self.m_step_max_iter}).x   # M-step
                if fixed is None:
                    p = post.sum(axis=0) + self.smoothing
                    priors = p / p.sum()
                bar.update(1)
        self.posteriors_ = post
        self.labels_codes_ = post.argmax(axis=1)
        self.labels_ = label_names(votes, self.labels_codes_)
        self.abilities_ = x[:data.n_ann].copy()
        self.inverse_difficulties_ = np.exp(x[data.n_ann:])
        self.priors_ = priors
        self.n_iter_ = n_iter
        self.converged_ = converged
        self.log_likelihood_ = ll
        self.objective_ = objective * data.n_votes
        if not converged and self.tol > 0:
            warn_not_converged("GLAD", n_iter, change, self.tol, what="log posterior")
        return self


def _log_normal(x: np.ndarray) -> float:
    """Sum of the N(1, 1) log densities of the parameters (alpha_j and b_i)."""
    d = x - _PRIOR_MEAN
    return float(-0.5 * np.square(d).sum() - x.size * _LOG_SQRT_2PI)


class _Data:
    """The votes of one fit as flat arrays; E-step and M-step objective over them."""

    def __init__(self, votes: Votes):
        ann, ann_ids = votes.annotator_codes("GLAD")
        self.n_items, self.n_labels, self.n_ann = votes.n_items, votes.n_labels, len(ann_ids)
        self.n_votes = votes.n_votes
        self.item = votes.item_index.astype(np.intp)
        self.ann = ann.astype(np.intp)
        self.label = votes.label_index.astype(np.intp)
        self.flat = self.item * self.n_labels + self.label
        self.log_others = np.log(max(self.n_labels - 1, 1))

    def _terms(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per vote: ``z = alpha_j beta_i``, ``beta_i``, ``log sigma(z)`` and
        ``log((1 - sigma(z)) / (K - 1))``, from one ``exp`` and one ``log1p``."""
        beta = np.exp(x[self.n_ann:])[self.item]
        z = x[:self.n_ann][self.ann] * beta
        soft = np.log1p(np.exp(-np.abs(z)))               # log(1 + e^-|z|)
        log_right = -(soft + np.maximum(-z, 0.0))         # log sigma(z)
        log_wrong = -(soft + np.maximum(z, 0.0)) - self.log_others
        return z, beta, log_right, log_wrong

    def e_step(self, x: np.ndarray, priors: np.ndarray) -> tuple[np.ndarray, float]:
        """Posteriors and the log marginal likelihood at parameters ``x``."""
        _z, _beta, log_right, log_wrong = self._terms(x)
        # every label gets the "wrong" term of each vote; the given label swaps it for "right"
        base = np.bincount(self.item, weights=log_wrong, minlength=self.n_items)
        swap = np.bincount(self.flat, weights=log_right - log_wrong,
                           minlength=self.n_items * self.n_labels)
        with np.errstate(divide="ignore"):
            log_post = swap.reshape(self.n_items, self.n_labels) + base[:, None] + np.log(priors)
        post, log_norm = normalize_log(log_post)
        return post, float(log_norm.sum())

    def neg_q(self, x: np.ndarray, q: np.ndarray) -> tuple[float, np.ndarray]:
        """Minus (Q + log priors) and its gradient, for scipy.optimize.minimize."""
        z, beta, log_right, log_wrong = self._terms(x)
        # elementwise sums, not BLAS dot products (threaded BLAS stalls on busy machines)
        value = (q * (log_right - log_wrong)).sum() + log_wrong.sum() + _log_normal(x)
        g = q - np.exp(log_right)                          # (q_v - sigma(z_v))
        grad = np.concatenate([
            np.bincount(self.ann, weights=g * beta, minlength=self.n_ann),
            np.bincount(self.item, weights=g * z, minlength=self.n_items),
        ]) - (x - _PRIOR_MEAN)
        return -value, -grad
