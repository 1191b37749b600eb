"""The Dirichlet posterior behind :func:`annokit.subsample.plan.plan`: settledness now and the
expected value of the goal after ``n`` more votes, for every item at once.

Model. An item's votes are draws from its population label distribution ``theta``; with the
prior ``Dirichlet(alpha)`` the posterior after the counts ``c`` is ``Dirichlet(c + alpha)`` and
the next votes follow the Dirichlet-multinomial predictive distribution (Gelman et al.,
*Bayesian Data Analysis*, 3rd ed., Sec. 3.4). ``alpha`` is either the uniform
``(1, ..., 1)`` or, :func:`fitted_prior`, the one global ``Dirichlet(alpha)`` whose
Dirichlet-multinomial likelihood of all items' counts is largest: the fit behind
``subsample --target population`` (:class:`annokit.subsample.extrapolate.DirichletMultinomial`;
empirical Bayes, Minka 2000).

Values. For ``n = 0, 1, ..., horizon`` extra votes:

* ``majority``: ``V(n) = P(the leading label of c + d_n is the argmax of theta)``, ``d_n`` the
  next ``n`` votes (a tie among leading labels earns 1/number tied: the chance a random
  tie-break picks the argmax). With a symmetric prior the leading label is also the label of
  highest posterior probability of being the argmax, so ``V(n)`` is the expected probability of
  a correct majority after ``n`` more votes, the value the knowledge-gradient policy maximises
  (Frazier, Powell and Dayanik 2008; for crowd labels Chen, Lin and Zhou 2015, JMLR 16).
* ``distribution``: ``V(n) = -E[TVD(estimate of c + d_n, theta)]``, the estimate the posterior
  mean ``(c + d_n + alpha) / (n_c + n + sum(alpha))`` or the raw proportions (``estimate``).

Estimation. One Monte Carlo pass per item with common random numbers: ``n_draws`` draws of
``theta`` from the posterior, and for each a sequence of ``horizon`` votes drawn from ``theta``
(so ``(theta, d_n)`` follows the joint posterior-predictive law exactly); the same draws give
every ``n``, which keeps the differences ``V(n+1) - V(n)`` the allocation uses far less noisy
than independent estimates. Items are processed in blocks, vectorised (no loop over items);
each block has its own generator seeded by ``(seed, block number)``, so results depend only on
the seed and the data. Items whose counts agree have the same values: each distinct count
vector is valued once (a few hundred rows where a dataset has thousands of items); under a
symmetric prior the counts are sorted first, so that permutations of one vector share a row.
For two labels :func:`p_leading_beta` gives the closed form the tests compare with.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ESTIMATES", "PRIORS", "ModelPrior", "PosteriorValues", "estimate_of",
           "fitted_prior", "model_prior", "p_leading_beta", "posterior_mean", "posterior_values",
           "soft_labels"]

#: The planner's priors: the uniform ``Dirichlet(1, ..., 1)``, one fitted to the votes, or one
#: per item centred on a model's probabilities (:func:`model_prior`).
PRIORS = ("fitted", "uniform", "model")

#: The estimate of an item's distribution the goal ``distribution`` scores: the posterior mean
#: under the planner's prior, or the raw proportions of the votes (the soft label).
ESTIMATES = ("posterior_mean", "proportions")

#: Smallest model probability a prior mean keeps (a zero would make a Dirichlet improper).
PROB_FLOOR = 1e-4

#: Largest number of array elements (draws x votes x labels x items) held per block.
BLOCK_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class PosteriorValues:
    """What :func:`posterior_values` returns.

    Attributes
    ----------
    now : ndarray of shape (n_items,)
        ``majority``: P(the leading label, first in label order when tied, is the population
        majority); ``distribution``: the expected TVD of the current soft label to the
        population distribution.
    values : ndarray of shape (n_items, horizon + 1)
        ``V(n)`` for ``n = 0..horizon`` extra votes (larger is better: for ``distribution``
        it is minus the expected TVD).
    """

    now: np.ndarray
    values: np.ndarray


def p_leading_beta(a: np.ndarray, b: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """Closed form for two labels: P(theta_a > 1/2) with theta_a ~ Beta(a + alpha, b + alpha),
    the regularized incomplete beta function ``I_{1/2}(b + alpha, a + alpha)``.

    >>> round(float(p_leading_beta(np.array([2]), np.array([1]))[0]), 4)
    0.6875
    """
    from scipy.special import betainc

    return betainc(np.asarray(b, float) + alpha, np.asarray(a, float) + alpha, 0.5)


def fitted_prior(counts: np.ndarray) -> np.ndarray:
    """``alpha`` of the Dirichlet-multinomial fitted to the count rows (maximum likelihood,
    :class:`~annokit.subsample.extrapolate.DirichletMultinomial`), shape (n_labels,).

    Items without votes carry no information about ``alpha`` and are left out of the fit;
    with one label, or no votes at all, the prior is uniform.

    >>> rng = np.random.default_rng(0)
    >>> counts = np.array([rng.multinomial(5, p) for p in rng.dirichlet([4, 1], 2000)])
    >>> np.round(fitted_prior(counts), 0).tolist()
    [4.0, 1.0]
    """
    from annokit.subsample.extrapolate import DirichletMultinomial

    counts = np.asarray(counts, dtype=np.int64)
    voted = counts[counts.sum(1) > 0]
    if counts.shape[1] < 2 or len(voted) == 0:  # nothing to fit: one label, or no votes
        return np.ones(counts.shape[1])
    return DirichletMultinomial().fit(voted).alpha_


@dataclass(frozen=True)
class ModelPrior:
    """What :func:`model_prior` fitted: ``alpha`` per item and the two numbers behind it."""

    alpha: np.ndarray          # (n_items, n_labels)
    concentration: float       # A
    temperature: float         # T


def model_prior(counts: np.ndarray, probs: np.ndarray) -> ModelPrior:
    """One Dirichlet prior per item centred on a model's probabilities, fitted to the votes.

    ``alpha_i = A * softmax(log p_i / T)``: the prior mean of item ``i``'s population
    distribution is the model's probabilities (floored at ``PROB_FLOOR`` and renormalised)
    sharpened or flattened by a temperature ``T``, and ``A`` says how far the items' populations
    spread around it. ``A`` and ``T`` maximise the Dirichlet-multinomial likelihood of all
    items' counts (empirical Bayes, as :func:`fitted_prior` with a global mean; Minka 2000),
    so a model that predicts the annotators' distributions well gets a large ``A`` and its
    items need fewer votes to settle.

    >>> rng = np.random.default_rng(0)
    >>> p = rng.dirichlet([1, 1], 3000)
    >>> theta = np.array([rng.dirichlet(20 * q) for q in p])
    >>> counts = np.array([rng.multinomial(6, t) for t in theta])
    >>> fit = model_prior(counts, p)
    >>> 12 < fit.concentration < 30, 0.8 < fit.temperature < 1.25
    (True, True)
    """
    from scipy import optimize
    from scipy.special import gammaln, log_softmax

    counts = np.asarray(counts, dtype=np.float64)
    logp = np.log(np.maximum(np.asarray(probs, dtype=np.float64), PROB_FLOOR))
    n = counts.sum(1)

    def mean(log_t: float) -> np.ndarray:
        return np.exp(log_softmax(logp / np.exp(log_t), axis=1))

    def nll(x: np.ndarray) -> float:
        a = np.exp(x[0]) * mean(x[1])
        big = a.sum(1)
        ll = gammaln(big) - gammaln(n + big) + (gammaln(counts + a) - gammaln(a)).sum(1)
        return -float(ll.sum())

    res = optimize.minimize(nll, np.array([np.log(10.0), 0.0]), method="L-BFGS-B",
                            bounds=[(-7.0, 12.0), (-4.0, 4.0)])
    conc, log_t = float(np.exp(res.x[0])), float(res.x[1])
    return ModelPrior(alpha=conc * mean(log_t), concentration=conc,
                      temperature=float(np.exp(log_t)))


def soft_labels(counts: np.ndarray) -> np.ndarray:
    """Soft labels of count rows along the last axis; a row without votes is uniform."""
    total = counts.sum(-1, keepdims=True)
    n_labels = counts.shape[-1]
    return np.where(total > 0, counts / np.maximum(total, 1), 1.0 / n_labels)


def posterior_mean(counts: np.ndarray, alpha: float | np.ndarray) -> np.ndarray:
    """The posterior mean ``(c + alpha) / (n + sum(alpha))`` of the population distribution
    given the count rows ``c`` (last axis: labels) under the prior ``Dirichlet(alpha)``
    (``alpha``: a number, one value per label, or rows broadcast against ``counts``).

    >>> posterior_mean(np.array([[3, 0, 0]]), np.array([1.0, 0.5, 0.5])).round(3).tolist()
    [[0.8, 0.1, 0.1]]
    """
    shifted = np.asarray(counts, dtype=np.float64) + alpha
    return shifted / shifted.sum(-1, keepdims=True)


def estimate_of(counts: np.ndarray, estimate: str, alpha: float | np.ndarray) -> np.ndarray:
    """The distribution estimate named by ``estimate`` (:data:`ESTIMATES`) of count rows."""
    if estimate == "posterior_mean":
        return posterior_mean(counts, alpha)
    return soft_labels(np.asarray(counts, dtype=np.float64))


def _block(counts: np.ndarray, goal: str, horizon: int, n_draws: int,
           alpha: float | np.ndarray, rng: np.random.Generator,
           estimate: str = "proportions") -> tuple[np.ndarray, np.ndarray]:
    """``now`` and ``values`` for one block of items (see :func:`posterior_values`)."""
    from annokit.core.divergence import tvd

    n, n_labels = counts.shape
    shape = np.broadcast_to((counts + alpha)[:, None, :], (n, n_draws, n_labels))
    gamma = rng.standard_gamma(shape)
    theta = gamma / gamma.sum(-1, keepdims=True)                      # (n, S, L)
    cdf = np.cumsum(theta, -1)[:, :, None, :-1]                        # (n, S, 1, L-1)
    u = rng.random((n, n_draws, horizon))
    drawn = (u[..., None] >= cdf).sum(-1)                              # (n, S, H) labels
    onehot = drawn[..., None] == np.arange(n_labels)
    cum = np.zeros((n, n_draws, horizon + 1, n_labels), dtype=np.int32)
    np.cumsum(onehot, axis=2, out=cum[:, :, 1:, :])
    cum += counts[:, None, None, :].astype(np.int32)                   # (n, S, H+1, L)
    if goal == "majority":
        truth = theta.argmax(-1)                                       # (n, S)
        now = (truth == counts.argmax(-1)[:, None]).mean(1)
        top = cum == cum.max(-1, keepdims=True)
        hit = np.take_along_axis(top, truth[:, :, None, None], axis=-1)[..., 0]
        values = (hit / top.sum(-1)).mean(1)                           # (n, H+1)
        return now, values
    row_alpha = alpha[:, None, None, :] if np.ndim(alpha) == 2 else alpha  # type: ignore[index]
    soft = estimate_of(cum, estimate, row_alpha).reshape(-1, n_labels)
    target = np.broadcast_to(theta[:, :, None, :], cum.shape).reshape(-1, n_labels)
    # theta rows sum to 1 only to rounding: renormalise so the simplex check passes
    dist = tvd(soft, target / target.sum(-1, keepdims=True)).reshape(n, n_draws, horizon + 1)
    expected = dist.mean(1)
    return expected[:, 0], -expected


def posterior_values(counts: np.ndarray, *, goal: str, horizon: int, n_draws: int = 2000,
                     alpha: float | np.ndarray = 1.0, seed: int = 0,
                     bar: object | None = None,
                     estimate: str = "proportions") -> PosteriorValues:
    """Settledness now and ``V(n)``, ``n = 0..horizon``, of every item (module docstring).

    Parameters
    ----------
    counts : ndarray of shape (n_items, n_labels)
        Votes so far per item and label.
    goal : {"majority", "distribution"}
    horizon : int
        Largest number of extra votes valued.
    n_draws : int, default=2000
        Posterior draws per item (Monte Carlo standard error of a probability <= 0.5 /
        sqrt(n_draws), about 0.011).
    alpha : float or ndarray of shape (n_labels,) or (n_items, n_labels), default=1.0
        Dirichlet prior concentration, one value for every label (1: uniform), one per
        label (e.g. :func:`fitted_prior`) or one row per item (:func:`model_prior`).
    seed : int, default=0
    bar : progress bar, optional
        Advanced by the number of distinct count vectors of each block.
    estimate : {"proportions", "posterior_mean"}, default="proportions"
        Goal distribution: the estimate whose TVD to ``theta`` is valued (:func:`estimate_of`).
    """
    counts = np.asarray(counts, dtype=np.int64)
    alpha = np.asarray(alpha, dtype=np.float64)
    if alpha.ndim == 2:  # one prior per item: every item is its own row
        return _values(counts, alpha, goal, horizon, n_draws, seed, bar, estimate)
    if alpha.ndim == 0 or np.all(alpha == alpha.flat[0]):
        # a symmetric prior: the values depend on the counts sorted (the leading label
        # first), so items with the same sorted counts have the same posterior, valued once
        alpha = float(alpha.flat[0])
        counts = -np.sort(-counts, axis=1)
    counts, inverse = np.unique(counts, axis=0, return_inverse=True)
    out = _values(counts, alpha, goal, horizon, n_draws, seed, bar, estimate)
    inverse = inverse.reshape(-1)
    return PosteriorValues(now=out.now[inverse], values=out.values[inverse])


def _values(counts: np.ndarray, alpha: float | np.ndarray, goal: str, horizon: int,
            n_draws: int, seed: int, bar: object | None,
            estimate: str = "proportions") -> PosteriorValues:
    """:func:`posterior_values` of every row of ``counts``, in blocks of rows (``alpha``: one
    prior for all rows, or one row per count row)."""
    per_row = np.ndim(alpha) == 2
    n_items, n_labels = counts.shape
    now = np.empty(n_items)
    values = np.empty((n_items, horizon + 1))
    per_item = n_draws * (horizon + 1) * max(n_labels, 2)
    size = max(1, BLOCK_ELEMENTS // per_item)
    for number, start in enumerate(range(0, n_items, size)):  # blocks of items, not items
        stop = min(start + size, n_items)
        rng = np.random.default_rng([seed, number])
        block_alpha = alpha[start:stop] if per_row else alpha  # type: ignore[index]
        now[start:stop], values[start:stop] = _block(counts[start:stop], goal, horizon,
                                                     n_draws, block_alpha, rng, estimate)
        if bar is not None:
            bar.update(stop - start)  # type: ignore[attr-defined]
    return PosteriorValues(now=now, values=values)
