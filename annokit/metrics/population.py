"""The population target: each metric against the distribution infinitely many annotators would give.

``evaluate(..., target="population")`` (:func:`annokit.metrics.engine.evaluate`) estimates
``mean_i f(q_i, p_i)``, where ``q_i`` is the model's distribution on item ``i`` and ``p_i`` the
item's population distribution of votes, from the ``n_i`` votes collected on each item. The
plug-in ``f(q_i, x_i / n_i)`` (``target="votes"``) also measures the vote noise: at 5 votes per
item its JSD is about 1.5x, its KL about 2x the population value.

Estimator (empirical Bayes with a posterior-predictive bias correction). A prior for
``p_i`` *given the model's* ``q_i`` (:class:`PopulationPrior`): a Dirichlet whose mean is
itself spread logistic-normally around the model's tempered and shifted prediction,
``p_i | q_i ~ sum_c pi_c E_z Dirichlet(kappa_c softmax(a log q_i + b + s z))``,
``z ~ N(0, I)`` on :data:`NODES` fixed quasi-random nodes, fitted by maximum marginal
(Dirichlet-multinomial) likelihood of the counts (Minka 2000, eq. 52; compiled in
:mod:`annokit.metrics._dm_kernel`). ``s = 0`` is a scale mixture of Dirichlets around
``softmax(a log q + b)`` (right when the humans scatter around the model's prediction the way
a Dirichlet does, e.g. ``p | q ~ Dirichlet(kappa q)``), a large ``kappa`` a logistic-normal
``p`` (right when the model's errors are noise on the log scale); with the Dirichlet mixture
alone the estimates were 10% high for such a model. The prior is conditional on ``q_i``
because a useful model is informative about ``p_i``: a prior that ignores ``q_i`` pulls
``p_i`` away from ``q_i`` and over-estimates every distance (measured in
``recipes/population_target.py``). For each item, ``S`` draws ``p_is`` from the posterior
(a mixture of ``Dirichlet(kappa_c m_iz + x_i)`` over components and nodes) and, for each,
``n_i`` replicate votes ``y_is ~ Multinomial(n_i, p_is)`` give

    e_i = f(q_i, x_i / n_i) - mean_s f(q_i, y_is / n_i) + mean_s f(q_i, p_is),

the plug-in minus the posterior expectation of its bias. Under a correct prior ``E[e_i] =
E[f(q_i, p_i)]`` (the tower property); under a wrong one the first two terms still cancel
the part of the plug-in's bias the prior gets wrong to first order. The metric is the mean of
``e_i``; hard-label metrics use the population majority ``argmax p`` (``accuracy`` is then
the posterior probability that the model's argmax is the population majority), the votes'
and the replicates' majorities taking the first label on ties. Every per-item value is the
registry's own row function (:func:`annokit.metrics.kernels.item_values` and the order-aware
states' ``item_values``). The identity holds for any function ``g`` of the votes in place of
the plug-in ``f(q_i, x_i / n_i)``; the closer ``E[g | p]`` is to ``f(q, p)``, the less the
prior has to correct (and the less a wrong prior can spoil). So the entropy ``H(x / n)``
inside ``kl``, ``ent_ce`` and ``ent_ce_signed`` is replaced, in the votes and in the
replicates alike, by :func:`~annokit.metrics.count_estimators.grassberger_entropy`, whose
bias is only the tail of a series; ``brier_soft``, a polynomial of degree 2 in ``p``, has
an exact unbiased estimator (:func:`~annokit.metrics.count_estimators.unbiased_brier_soft`)
and uses no prior at all.

Intervals: the Poisson bootstrap of the items (:func:`annokit.core.resample.poisson_weights`)
resamples the ``e_i``, which carry their own votes' noise: resampling the primary units of a
two-stage sample carries the second stage's variance too (Cochran 1977, Sampling Techniques,
section 10.4), so the intervals include the vote sampling. The prior is fitted to the same
items, and its own estimation error moves every ``e_i`` together, which resampling the
``e_i`` alone leaves out (in simulation the estimates spread 1.1-3x the items-only bootstrap
error at 5 votes): :func:`prior_shifts` refits the prior to every bootstrap replicate (one
Newton step on the replicate's own weights, so that the items' and the prior's errors move
together) and adds each refit's shift of the estimate (the delta method) to the replicate.

Not corrected: metrics that are not a mean over items of a per-item value (the binned
calibration errors: ECE, MCE, classwise and adaptive ECE, the binary ones): refused under
the population target with that reason. SMECE and its classwise form are linear in the soft
label within each bin, so their bin targets are already unbiased for the population's: they
are computed as under the votes target.

The draws come from one Philox stream seeded by ``seed``, items in the records' order: the
same records and seed give the same bytes.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize
from scipy.special import logsumexp

from annokit.core.soft_labels import entropy
from annokit.errors import DegenerateInputWarning, InvalidValueError
from annokit.metrics import kernels
from annokit.metrics._dm_kernel import drawn_alphas, responsibilities, row_terms
from annokit.metrics.count_estimators import count_entropies, unbiased_brier_soft
from annokit.metrics.registry import REGISTRY
from annokit.metrics.states_ext import RowMeanState

__all__ = ["BLOCK", "DRAWS", "DRAWS_LARGE", "FEW_ITEMS", "LARGE", "MAJORITY_LOSSES", "NODES", "NO_INTERVAL",
           "SAME_AS", "TARGETS", "UNCHANGED", "PopulationPrior", "chance_values", "check_target", "draws_for",
           "fit_prior", "fit_rows", "item_estimates", "population_values",
           "prior_nodes", "prior_shifts", "refusals", "target_names",
           "uncorrected_metrics", "warn_few_items", "warn_out_of_range"]

#: The targets of :func:`annokit.metrics.engine.evaluate`.
TARGETS = ("votes", "population")
#: Posterior draws per item (measured in ``recipes/population_target.py``: the Monte
#: Carlo noise averages over items; 16 keeps the bias within the recipe's tolerances).
DRAWS = 16
#: Dirichlet components of the prior's scale mixture.
COMPONENTS = 2
#: Quasi-random normal nodes over which the prior's Dirichlet mean is spread.
NODES = 32
#: Above this many items each gets :data:`DRAWS_LARGE` posterior draws (:func:`draws_for`).
LARGE = 20_000
#: Posterior draws per item above :data:`LARGE` items. The draws are unbiased, so fewer only
#: add Monte Carlo noise to each item's estimate, which the items' bootstrap carries: at 5
#: votes it is 3-5% of the estimates' variance with 16 draws and 6-10% with 8, intervals
#: about 2% wider, for half the time on large inputs.
DRAWS_LARGE = 8
#: Items per block of posterior draws (memory: ``BLOCK x DRAWS x n_labels`` per array).
BLOCK = 8192
_CHANCE_DRAWS = 4096  # posterior draws per distinct count row at most (chance_values)
#: Fewer items than this get a warning under the population target (:func:`population_values`).
FEW_ITEMS = 100
#: Items the prior is fitted on at most (a seeded uniform sample above this).
MAX_FIT_ITEMS = 4_000
_FLOOR = 1e-6  # the model probabilities' floor in log q
#: Levenberg-Marquardt damping of the refits' Newton step, relative to the Hessian's largest
#: eigenvalue: the mixture's likelihood is flat in some directions (components with the same
#: slope), where an undamped step overshoots (with it the refits' spread matched full L-BFGS
#: refits in simulation).
_DAMP = 1e-3
_TINY = 1e-8  # added to every Dirichlet parameter (a component may put ~0 mass on a label)

#: Metrics computed under the population target as under the votes target (linear in the
#: soft label inside each bin), and why.
UNCHANGED = ("smece", "smece_classwise")

#: Losses against the population majority, refused under the population target.
MAJORITY_LOSSES = ("brier", "nll_majority", "rps")
_MAJORITY_LOSS_REASON = (
    "a loss against the population majority: its estimate turns on how often that majority "
    "differs from the model's top label, which a few votes per item cannot pin down (in "
    "simulation it came out 30-100% high for an overconfident model); use brier_soft, nll, "
    "accuracy or --target votes")

#: Metrics refused under the population target because they estimate the same population
#: quantity as another metric, named with the reason.
SAME_AS = {"rank_cs_tie_aware": (
    "under the population target it estimates the same quantity as rank_cs: the tie-aware "
    "variant forgives ties in the human distribution, and a distribution over infinitely "
    "many annotators (a continuous prior) has none; use rank_cs")}

#: Metrics whose population estimate is reported without an interval, and why: step
#: functions of ``p`` (its majority, its ranking), whose correction leans on the prior near
#: the ties, where a few votes per item say little (docs/guides/population-target.md).
NO_INTERVAL = dict.fromkeys(
    ("accuracy", "rank_cs"),
    "under the population target this is a step function of the population distribution "
    "(its majority or ranking), estimated through the fitted prior near the ties: in "
    "simulation its bias (1-13%) was as large as its standard error and a 95% interval "
    "covered 0.07-0.88, so none is given")


def uncorrected_metrics() -> dict[str, str]:
    """Registered metrics the population target cannot estimate, with the reason."""
    out = {}
    for name, spec in REGISTRY.items():
        if name in UNCHANGED or spec.task != "single":
            continue
        if name in MAJORITY_LOSSES:
            out[name] = _MAJORITY_LOSS_REASON
        elif name in SAME_AS:
            out[name] = SAME_AS[name]
        elif spec.per_item is None and not issubclass(spec.state_class, RowMeanState):
            out[name] = ("not a mean of per-item values (a binned or rank-based reduction): "
                         "its bias from the few votes is not corrected; use --target votes")
    return out


def refusals(names: Sequence[str]) -> dict[str, str]:
    """The metrics of ``names`` that ``target="population"`` refuses, with the reason."""
    bad = uncorrected_metrics()
    return {name: bad[name] for name in names if name in bad}


def check_target(target: Any) -> str:
    if target not in TARGETS:
        raise InvalidValueError(f"target must be one of {list(TARGETS)}; got {target!r} "
                                "(--target votes|population)")
    return str(target)


def target_names(target: str, names: tuple[str, ...], metrics: Any, multilabel: bool
                  ) -> tuple[tuple[str, ...], dict[str, str]]:
    """The metrics the target evaluates, and those left out of the default list with why."""
    if target == "votes":
        return names, {}
    if multilabel:
        raise InvalidValueError("target='population' evaluates single-label votes; multi-label "
                                "votes have no population correction (use --target votes)")
    refused = refusals(names)
    if refused and metrics is not None:
        raise InvalidValueError("target='population' cannot estimate "
                                + "; ".join(f"{k} ({v})" for k, v in refused.items()))
    return tuple(n for n in names if n not in refused), refused


@dataclass(frozen=True)
class PopulationPrior:
    """``p | q ~ sum_c weights[c] E_z Dirichlet(kappa[c] softmax(slope log q + offset +
    spread z))``, ``z ~ N(0, I)`` over the fixed quasi-random :attr:`nodes`.

    A Dirichlet whose mean is itself logistic-normal around the model's (tempered, shifted)
    prediction: ``spread = 0`` is a scale mixture of Dirichlets around ``softmax(slope log q
    + offset)``, a large ``kappa`` a logistic-normal ``p`` (in the log-ratio coordinates of
    Aitchison and Shen 1980); the fit picks between and among them.
    """

    slope: float
    offset: np.ndarray
    spread: float
    kappa: np.ndarray
    weights: np.ndarray
    nodes: np.ndarray  # (n_nodes, n_labels) standard normal quasi-random points
    theta: np.ndarray | None = None  # the optimiser's parameters (a warm start for refits)

    def means(self, probs: np.ndarray) -> np.ndarray:
        """The Dirichlet mean at each node for each item, shape (n, n_nodes, n_labels)."""
        logq = _logq(probs)
        z = self.slope * logq[:, None, :] + self.offset + self.spread * self.nodes
        m = np.exp(z - z.max(axis=-1, keepdims=True))
        return m / m.sum(axis=-1, keepdims=True)

    def alphas(self, probs: np.ndarray) -> np.ndarray:
        """Dirichlet parameters of every (component, node), shape (n, n_comp * n_nodes, k)."""
        m = self.means(probs)
        a = self.kappa[None, :, None, None] * m[:, None] + _TINY
        return a.reshape(m.shape[0], -1, m.shape[-1])

    def responsibilities(self, counts: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """Posterior probability of every (component, node), shape (n, n_comp * n_nodes)."""
        logq = _logq(probs)
        resp = responsibilities(counts, logq, self.slope, self.offset, self.spread, self.nodes,
                                self.kappa, self.weights, _TINY)
        return resp.reshape(resp.shape[0], -1)

    def posterior_alphas(self, counts: np.ndarray, probs: np.ndarray, u: np.ndarray
                         ) -> np.ndarray:
        """Posterior Dirichlet parameters, shape ``(n, draws, n_labels)``: for each row and
        uniform of ``u`` (``(n, draws)``), one (component, node) drawn from the row's
        :meth:`responsibilities` by inverse CDF, its parameters plus the row's counts."""
        logq = _logq(probs)
        return drawn_alphas(self.responsibilities(counts, probs), u, counts, logq, self.slope,
                            self.offset, self.spread, self.nodes, self.kappa, _TINY)


def _logq(probs: np.ndarray) -> np.ndarray:
    """The model's log probabilities, floored at :data:`_FLOOR` (the prior's input)."""
    return np.log(np.maximum(probs, _FLOOR))


def prior_nodes(k: int, n_nodes: int = NODES) -> np.ndarray:
    """``n_nodes`` points of ``z ~ N(0, I_k)`` as the softmax sees them, shape (n_nodes, k).

    The softmax ignores a constant added to every label, so only ``z``'s contrasts matter:
    ``z - mean(z)`` is ``H w`` with ``w ~ N(0, I_(k-1))`` and ``H`` an orthonormal basis of the
    vectors summing to 0 (Helmert's). ``w`` is a scrambled Sobol' sequence in ``k - 1``
    dimensions (fixed seed) through the normal quantile function, centred to mean zero: a
    low-discrepancy set where the integrand lives (a ``k``-dimensional one projected down is not;
    with it, 32 nodes left the prior's fit off by as much as 256 do not, ~1% on ``jsd``).
    """
    from scipy.stats import norm, qmc

    w = norm.ppf(qmc.Sobol(k - 1, scramble=True, seed=0).random(n_nodes))
    w -= w.mean(axis=0)
    helmert = np.zeros((k, k - 1))
    for j in range(1, k):
        helmert[:j, j - 1] = 1.0
        helmert[j, j - 1] = -float(j)
        helmert[:, j - 1] /= np.sqrt(j * (j + 1.0))
    return w @ helmert.T


def _unpack(theta: np.ndarray, k: int, c: int, nodes: np.ndarray) -> PopulationPrior:
    """``theta = (slope, offset[1:], log spread, log kappa, weight logits[1:])``."""
    logw = np.r_[0.0, theta[k + 1 + c:]]
    return PopulationPrior(float(theta[0]), np.r_[0.0, theta[1:k]], float(np.exp(theta[k])),
                           np.exp(theta[k + 1:k + 1 + c]), np.exp(logw - logsumexp(logw)),
                           nodes, theta)


def _nll_grad(prior: PopulationPrior, counts: np.ndarray, logq: np.ndarray,
              mult: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """Negative log marginal likelihood and its gradient in ``theta`` (:func:`_unpack`), each
    row counted ``mult`` times (default once); d/d alpha of the Dirichlet-multinomial is
    Minka (2000), eq. 53 (one compiled pass: :func:`annokit.metrics._dm_kernel.row_terms`)."""
    values, grads = _row_terms(prior, counts, logq)
    if mult is None:
        return -float(values.sum()), -grads.sum(axis=0)
    return -float(values @ mult), -(mult @ grads)


def _row_terms(prior: PopulationPrior, rows: np.ndarray, logq: np.ndarray, *,
               density: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """:func:`annokit.metrics._dm_kernel.row_terms` for ``prior``."""
    return row_terms(rows, logq, prior.slope, prior.offset, prior.spread, prior.nodes,
                     prior.kappa, prior.weights, _TINY, density=density)


def fit_prior(counts: np.ndarray, probs: np.ndarray, *, seed: int = 0,
              components: int = COMPONENTS) -> PopulationPrior:
    """Maximum marginal likelihood of the counts under :class:`PopulationPrior` (L-BFGS-B)."""
    n, k = counts.shape
    if n > MAX_FIT_ITEMS:
        rows = fit_rows(n, seed)
        counts, probs = counts[rows], probs[rows]
    # equal rows once, weighted by their multiplicity (the chance baseline's uniform q leaves
    # a few dozen distinct rows); sorted, so the sums do not depend on the rows' order
    rows, mult = np.unique(np.c_[counts, _logq(probs)], axis=0,
                           return_counts=True)
    counts, logq, mult = rows[:, :k], np.ascontiguousarray(rows[:, k:]), mult.astype(float)
    nodes = prior_nodes(k)

    def nll(theta: np.ndarray) -> tuple[float, np.ndarray]:
        return _nll_grad(_unpack(theta, k, components, nodes), counts, logq, mult)

    theta0 = np.r_[1.0, np.zeros(k - 1), np.log(0.3),
                   np.log(np.geomspace(2.0, 30.0, components)), np.zeros(components - 1)]
    res = optimize.minimize(nll, theta0, jac=True, method="L-BFGS-B",
                            bounds=_bounds(k, components))
    return _unpack(res.x, k, components, nodes)


def _bounds(k: int, c: int) -> list[tuple[float, float]]:
    return ([(-20.0, 20.0)] * k + [(np.log(1e-3), np.log(5.0))] + [(-9.0, 9.0)] * c
            + [(-20.0, 20.0)] * (c - 1))


def fit_rows(n: int, seed: int) -> np.ndarray:
    """The rows :func:`fit_prior` fits on: all, or a seeded sample of :data:`MAX_FIT_ITEMS`."""
    if n <= MAX_FIT_ITEMS:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, MAX_FIT_ITEMS, replace=False))


def prior_shifts(names: Sequence[str], options: Mapping[str, Mapping[str, Any]],
                 probs: np.ndarray, counts: np.ndarray, *, prior: PopulationPrior,
                 groups: Sequence[np.ndarray | None], keys: np.ndarray, seed: int,
                 n_boot: int) -> np.ndarray:
    """How far each group's estimate moves when the prior is refitted to each bootstrap
    replicate, shape ``(n_boot, n_groups, n_names)``.

    The refit to replicate ``r`` is one Newton step from the fitted parameters (the one-step
    bootstrap: Davison and Hinkley 1997, Bootstrap Methods and their Application, section
    9.4.3), ``d_r = (H + d I)^-1 sum_i (w_ri - 1) g_i``: ``w_ri`` the replicate's Poisson
    weights of the fit rows (:func:`fit_rows`; the same weights as the items' bootstrap, so
    the two move together), ``g_i`` each row's gradient of its log marginal likelihood, ``H``
    the Hessian of the negative log likelihood (central differences of the analytic
    gradient), ``d`` the damping :data:`_DAMP` times its largest eigenvalue; the step is kept
    inside the parameters' bounds. The estimate moves by ``J d_r`` (the delta method), ``J``
    the derivative of each group's mean estimate in the parameters (:func:`_sensitivity`).
    """
    from annokit.core.resample import poisson_weights, replicate_chunks

    rows = fit_rows(counts.shape[0], seed)
    x, q = counts[rows], probs[rows]
    inverse, grads = _newton_terms(prior, x, q)
    jac = _sensitivity(names, options, q, x, prior, seed, _group_masks(groups, rows, counts))
    low, high = np.array(_bounds(x.shape[1], len(prior.kappa))).T
    theta = prior.theta
    assert theta is not None
    out = np.empty((n_boot, len(groups), len(names)))
    for start, stop in replicate_chunks(n_boot, rows.size):
        w = poisson_weights(keys[rows], seed, start, stop) - 1.0
        step = np.clip(theta + (w @ grads) @ inverse, low, high) - theta
        out[start:stop] = np.einsum("rp,gnp->rgn", step, jac)
    return out


def _group_masks(groups: Sequence[np.ndarray | None], rows: np.ndarray,
                 counts: np.ndarray) -> np.ndarray:
    """Which fit rows each group holds, shape ``(n_groups, n_fit_rows)``."""
    masks = np.ones((len(groups), rows.size), dtype=bool)
    for j, g in enumerate(groups):
        if g is not None:
            mask = np.zeros(counts.shape[0], dtype=bool)
            mask[g] = True
            masks[j] = mask[rows]
    return masks


def _newton_terms(prior: PopulationPrior, counts: np.ndarray, probs: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The damped inverse Hessian of the negative log marginal likelihood at the fit
    (symmetric, ``(n_params, n_params)``) and each row's gradient of its log likelihood."""
    assert prior.theta is not None
    k, c, nodes = counts.shape[1], len(prior.kappa), prior.nodes
    logq = _logq(probs)
    theta = prior.theta

    def grad(t: np.ndarray) -> np.ndarray:
        return _nll_grad(_unpack(t, k, c, nodes), counts, logq)[1]

    step = 1e-4
    hess = np.array([(grad(theta + e) - grad(theta - e)) / (2 * step)
                     for e in np.eye(theta.size) * step])
    hess = (hess + hess.T) / 2
    damp = _DAMP * np.abs(np.linalg.eigvalsh(hess)).max()
    inverse = np.linalg.pinv(hess + damp * np.eye(theta.size), rcond=1e-8, hermitian=True)
    return inverse, _row_terms(prior, counts, logq)[1]


def _sensitivity(names: Sequence[str], options: Mapping[str, Mapping[str, Any]],
                 q: np.ndarray, x: np.ndarray, prior: PopulationPrior, seed: int,
                 masks: np.ndarray) -> np.ndarray:
    """The derivative of each group's mean estimate in the prior's parameters, shape
    ``(n_groups, n_names, n_params)``, on the rows ``x``.

    Only the posterior expectation in ``e_i`` depends on the prior, and the likelihood does
    not, so ``d/d theta E_post[h] = Cov_post(h, d/d theta log pi_theta(p | q))`` (the score
    identity): the covariance, over each item's posterior draws, of the draws' terms with the
    gradient of the prior's log density at the draws (:func:`annokit.metrics._dm_kernel.
    row_terms`), averaged over each group's rows. Smooth in the parameters, unlike
    re-drawing under refitted priors. ``brier_soft``'s exact estimator does not use the prior.
    """
    gen = np.random.Generator(np.random.Philox(seed))
    n, k = x.shape
    per_item = np.zeros((n, len(names), prior.theta.size if prior.theta is not None else 0))
    for lo in range(0, n, BLOCK):
        xb, qb = x[lo:lo + BLOCK], q[lo:lo + BLOCK]
        _, gap, pop = _posterior_block(names, options, qb, xb, prior, gen, DRAWS)
        logq = np.repeat(_logq(qb), DRAWS, axis=0)
        score = _row_terms(prior, pop.reshape(-1, k), logq, density=True)[1]
        score = score.reshape(xb.shape[0], DRAWS, -1)
        gap = gap - gap.mean(axis=1, keepdims=True)
        score -= score.mean(axis=1, keepdims=True)
        per_item[lo:lo + BLOCK] = np.einsum("isn,isp->inp", gap, score) / (DRAWS - 1)
    exact = [j for j, name in enumerate(names) if REGISTRY[name].per_item == "brier_soft"]
    per_item[np.ix_(x.sum(axis=1) >= 2, exact)] = 0.0
    sizes = np.maximum(masks.sum(axis=1), 1)[:, None, None]
    return np.einsum("gi,inp->gnp", masks.astype(np.float64), per_item) / sizes


def _item_matrix(names: Sequence[str], options: Mapping[str, Mapping[str, Any]],
                 probs: np.ndarray, soft: np.ndarray, hard: np.ndarray) -> np.ndarray:
    """Per-row values of the mean-type metrics ``names``, shape (n_rows, len(names))."""
    fused = [j for j, name in enumerate(names) if REGISTRY[name].per_item is not None]
    if len(fused) == len(names):  # the usual case: no column copy
        return kernels.item_values(probs, soft, hard,
                                   tuple(REGISTRY[name].per_item for name in names))
    out = np.empty((probs.shape[0], len(names)))
    if fused:
        out[:, fused] = kernels.item_values(
            probs, soft, hard, tuple(REGISTRY[names[j]].per_item for j in fused))
    for j, name in enumerate(names):
        if j not in fused:
            state = REGISTRY[name].state(**options[name])
            assert isinstance(state, RowMeanState)  # uncorrected_metrics() left out the rest
            out[:, j] = state.item_values(probs, soft, hard)
    return out


def _dirichlet(gen: np.random.Generator, alpha: np.ndarray) -> np.ndarray:
    g = gen.standard_gamma(alpha)
    total = g.sum(axis=-1, keepdims=True)
    empty = total[..., 0] <= 0  # every gamma underflowed: the largest parameter's label
    if empty.any():
        g[empty] = np.eye(alpha.shape[-1])[alpha[empty].argmax(axis=-1)]
        total = g.sum(axis=-1, keepdims=True)
    return g / total


def item_estimates(names: Sequence[str], options: Mapping[str, Mapping[str, Any]],
                   probs: np.ndarray, counts: np.ndarray, *, prior: PopulationPrior,
                   seed: int, draws: int = DRAWS) -> np.ndarray:
    """``e_i`` of every mean-type metric of ``names`` (module docstring), shape (n, len(names)).

    Items in blocks of :data:`BLOCK` rows (for :data:`DRAWS` draws; fewer for more draws): the
    draws come from one stream, block after block in item order, so the same records and seed
    give the same values.
    """
    gen = np.random.Generator(np.random.Philox(seed))
    n = counts.shape[0]
    out = np.empty((n, len(names)))
    block = max(1, BLOCK * DRAWS // draws)
    for lo in range(0, n, block):
        plug, gap, _ = _posterior_block(names, options, probs[lo:lo + block],
                                        counts[lo:lo + block], prior, gen, draws)
        out[lo:lo + block] = plug + gap.mean(axis=1)
    _exact_brier_soft(names, out, probs, counts)
    return out


def draws_for(n_items: int) -> int:
    """Posterior draws per item for ``n_items`` items (:data:`DRAWS`, :data:`DRAWS_LARGE`)."""
    return DRAWS if n_items <= LARGE else DRAWS_LARGE


def _exact_brier_soft(names: Sequence[str], values: np.ndarray, probs: np.ndarray,
                      counts: np.ndarray) -> None:
    """``brier_soft``'s columns of ``values`` replaced, in place, by its exact estimator."""
    for j, name in enumerate(names):
        if REGISTRY[name].per_item == "brier_soft":
            values[:, j] = unbiased_brier_soft(probs, counts, fallback=values[:, j])


def _posterior_block(names: Sequence[str], options: Mapping[str, Mapping[str, Any]],
                     q: np.ndarray, x: np.ndarray, prior: PopulationPrior,
                     gen: np.random.Generator, draws: int
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For rows ``x`` (counts) and ``q``: the plug-in values ``(n, m)``, each posterior draw's
    ``f(q, p_s) - f(q, y_s / n)`` ``(n, draws, m)`` (module docstring) and the draws ``p_s``
    ``(n, draws, k)``."""
    k, m = x.shape[1], len(names)
    votes = x.sum(axis=1)
    pop = _dirichlet(gen, prior.posterior_alphas(x, q, gen.random((x.shape[0], draws))))
    rep = gen.multinomial(np.broadcast_to(votes[:, None], pop.shape[:-1]), pop)
    qs = np.repeat(q, draws, axis=0)
    plug = _item_matrix(names, options, q, x / votes[:, None], x.argmax(axis=1))
    flat = pop.reshape(-1, k)
    at_pop = _item_matrix(names, options, qs, flat, flat.argmax(axis=1))
    rflat = rep.reshape(-1, k)
    at_rep = _item_matrix(names, options, qs, rflat / np.repeat(votes, draws)[:, None],
                          rflat.argmax(axis=1))
    model_entropy = entropy(q, base=None)
    _entropy_terms(names, plug, model_entropy, x)
    _entropy_terms(names, at_rep, np.repeat(model_entropy, draws), rflat)
    return plug, (at_pop - at_rep).reshape(-1, draws, m), pop


def _entropy_terms(names: Sequence[str], values: np.ndarray, model_entropy: np.ndarray,
                   counts: np.ndarray) -> None:
    """Replace, in place, the plug-in ``H(x / n)`` inside ``kl``, ``ent_ce`` and
    ``ent_ce_signed`` by :func:`~annokit.metrics.count_estimators.grassberger_entropy`, whose
    bias is far smaller, so that the prior's correction has less to do (and less to get
    wrong); ``model_entropy`` is ``H(q)`` of each row, in nats."""
    cols = {name: j for j, name in enumerate(names)
            if REGISTRY[name].per_item in ("kl", "ent_ce", "ent_ce_signed")}
    if not cols:
        return
    plug, grass = count_entropies(counts)
    for name, j in cols.items():
        kind = REGISTRY[name].per_item
        if kind == "ent_ce":
            values[:, j] = np.abs(model_entropy - grass)
        else:
            values[:, j] += plug - grass  # kl = -H(x/n) - ..., ent_ce_signed = H(q) - H(x/n)


def warn_few_items(n_items: int) -> None:
    """A warning when the population target runs on fewer than :data:`FEW_ITEMS` items."""
    if n_items < FEW_ITEMS:
        warnings.warn(f"the population target on {n_items} items: its estimates are "
                      "bias-corrected means fitted to the items themselves, which on so few "
                      "can fall outside a metric's range (an accuracy above 1, a negative "
                      f"KL); use it on {FEW_ITEMS} items or more, or --target votes",
                      DegenerateInputWarning, stacklevel=3)


def chance_values(counts: np.ndarray, names: Sequence[str],
                  options: Mapping[str, Mapping[str, Any]], *, seed: int) -> np.ndarray:
    """The population estimates of the chance baseline (a uniform prediction), shape
    ``(len(names),)``.

    With the same ``q`` on every item, ``e_i`` (module docstring) depends on the item's counts
    alone: it is computed once per distinct count row, with the draws of all the items that
    share it (up to :data:`_CHANCE_DRAWS`), and weighted by how many items do.
    """
    n, k = counts.shape
    rows, mult = np.unique(counts, axis=0, return_counts=True)
    uniform = np.full(counts.shape, 1.0 / k)
    prior = fit_prior(counts, uniform, seed=seed)
    draws = min(_CHANCE_DRAWS, DRAWS * -(-n // rows.shape[0]))
    e = item_estimates(names, options, uniform[:rows.shape[0]], rows, prior=prior, seed=seed,
                       draws=draws)
    return mult @ e / n


def warn_out_of_range(names: Sequence[str], values: np.ndarray,
                      supports: Sequence[tuple[float, float]]) -> None:
    """One warning naming the metrics whose population estimate (``values``, one per name)
    falls outside the values the metric can take (``supports``), and why that happens."""
    bad = [f"{n} {v:.4g}" for n, v, (lo, hi) in zip(names, values, supports, strict=True)
           if v < lo or v > hi]
    if bad:
        warnings.warn(f"population target: {', '.join(bad)} outside the metric's range: the "
                      "correction for the vote noise exceeds the plug-in value, which happens "
                      "when the model's probabilities depend on these same votes (trained or "
                      "tuned on these items) or with few items; evaluate held-out items, or "
                      "use --target votes", DegenerateInputWarning, stacklevel=4)


def population_values(models: Sequence[np.ndarray], counts: np.ndarray,
                      names: Sequence[str], options: Mapping[str, Mapping[str, Any]],
                      groups: Sequence[np.ndarray | None], *, keys: np.ndarray, seed: int,
                      n_boot: int) -> tuple[np.ndarray, np.ndarray | None]:
    """Estimates ``(n_models, n_groups, n_names)`` and bootstrap replicates (``..., n_boot``)
    of the population target for the mean-type metrics ``names``; one prior per model."""
    from annokit.core.resample import poisson_weights, replicate_chunks

    est = np.empty((len(models), len(groups), len(names)))
    reps = None if not n_boot else np.empty(est.shape + (n_boot,))
    for m, probs in enumerate(models):
        prior = fit_prior(counts, probs, seed=seed)
        e = item_estimates(names, options, probs, counts, prior=prior, seed=seed,
                           draws=draws_for(counts.shape[0]))
        shifts = None if not n_boot else prior_shifts(
            names, options, probs, counts, prior=prior, groups=groups, keys=keys, seed=seed,
            n_boot=n_boot)
        for g, rows in enumerate(groups):
            eg = e if rows is None else e[rows]
            est[m, g] = eg.mean(axis=0) if eg.shape[0] else np.nan
        if reps is None:
            continue
        for start, stop in replicate_chunks(n_boot, counts.shape[0]):
            w = poisson_weights(keys, seed, start, stop)
            for g, rows in enumerate(groups):
                wg = w if rows is None else w[:, rows]
                eg = e if rows is None else e[rows]
                with np.errstate(invalid="ignore", divide="ignore"):
                    reps[m, g, :, start:stop] = (wg @ eg / wg.sum(axis=1)[:, None]).T
        assert shifts is not None
        reps[m] += np.moveaxis(shifts, 0, -1)
    return est, reps
