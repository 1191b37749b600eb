"""The population target (:mod:`annokit.metrics.population`, ``evaluate(target="population")``).

The simulation tests draw a known population (Dirichlet human distributions, a model whose
logits are the population's plus noise) and compare each estimate with the metric computed
against the items' population distributions; the full bias and coverage tables are printed by
``recipes/population_target.py``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.optimize import check_grad

from annokit.core.resample import poisson_weights
from annokit.errors import DegenerateInputWarning, InvalidValueError
from annokit.metrics import kernels, population
from annokit.metrics.engine import evaluate
from annokit.metrics.records import AlignedRecords
from annokit.metrics.registry import REGISTRY

MEANS = ("jsd", "kl", "brier_soft", "dist_ce", "ent_ce")


def _sample(seed: int, n_items: int = 400, votes: int = 5):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet([1.2, 0.6, 0.4], n_items)
    logits = np.log(np.clip(p, 1e-3, 1.0)) + rng.normal(0.0, 1.0, p.shape)
    q = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return p, q, rng.multinomial(votes, p)


def _truth(q: np.ndarray, p: np.ndarray) -> dict[str, float]:
    values = kernels.item_values(q, p, p.argmax(axis=1), tuple(REGISTRY[k].per_item for k in MEANS))
    return dict(zip(MEANS, values.mean(axis=0), strict=True))


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        yield


def test_bias_far_below_the_plug_in():
    """At 5 votes the plug-in's relative bias is +40% (dist_ce) to +110% (kl) here; the
    population estimate's, averaged over 2 samples of 500 items, is below a third of it (its
    sampling error over 1,000 items is about 5% for kl and brier_soft;
    recipes/population_target.py measures the bias over many samples: 1-8%)."""
    votes_bias, pop_bias = {k: [] for k in MEANS}, {k: [] for k in MEANS}
    for seed in (10, 11):
        p, q, x = _sample(seed, 500)
        ref = _truth(q, p)
        rec = AlignedRecords.from_arrays(q, x)
        plug = evaluate(rec, metrics=list(MEANS), baselines=False).metrics
        pop = evaluate(rec, metrics=list(MEANS), baselines=False, target="population").metrics
        for k in MEANS:
            votes_bias[k].append(plug[k] / ref[k] - 1)
            pop_bias[k].append(pop[k] / ref[k] - 1)
    for k in MEANS:
        assert np.mean(votes_bias[k]) > 0.3, k
        assert abs(np.mean(pop_bias[k])) < np.mean(votes_bias[k]) / 3, k


def test_votes_target_is_the_default_unchanged():
    p, q, x = _sample(1, 200)
    rec = AlignedRecords.from_arrays(q, x)
    default = evaluate(rec, n_boot=20)
    votes = evaluate(rec, n_boot=20, target="votes")
    assert default.to_dict() == votes.to_dict()
    assert default.to_dict()["target"] == "votes" and "not_computed" not in default.to_dict()


def test_same_bytes_for_the_same_seed():
    p, q, x = _sample(2, 150)
    rec = AlignedRecords.from_arrays(q, x)
    a = evaluate(rec, metrics=list(MEANS), n_boot=30, seed=4, target="population").to_dict()
    b = evaluate(rec, metrics=list(MEANS), n_boot=30, seed=4, target="population").to_dict()
    assert a == b
    c = evaluate(rec, metrics=list(MEANS), n_boot=30, seed=5, target="population").to_dict()
    assert c["metrics"] != a["metrics"]


def test_refused_metrics_named_and_listed():
    p, q, x = _sample(3, 100)
    rec = AlignedRecords.from_arrays(q, x)
    with pytest.raises(InvalidValueError, match=r"cannot estimate ece \(not a mean"):
        evaluate(rec, metrics=["jsd", "ece"], target="population")
    res = evaluate(rec, target="population")
    doc = res.to_dict()
    assert doc["target"] == "population"
    assert set(doc["not_computed"]) == {"ece", "ece_adaptive", "mce", "classwise_ece",
                                        "brier", "nll_majority", "rank_cs_tie_aware"}
    assert "population majority" in doc["not_computed"]["brier"]
    assert "same quantity as rank_cs" in doc["not_computed"]["rank_cs_tie_aware"]
    with pytest.raises(InvalidValueError, match=r"cannot estimate rank_cs_tie_aware \(under"):
        evaluate(rec, metrics=["rank_cs_tie_aware"], target="population")
    with pytest.raises(InvalidValueError, match=r"cannot estimate nll_majority \(a loss"):
        evaluate(rec, metrics=["nll_majority"], target="population")
    assert not set(doc["not_computed"]) & set(doc["metrics"])
    assert "smece" in doc["metrics"] and "jsd" in doc["metrics"]
    assert list(doc["baselines"]) == ["chance"]
    with pytest.raises(InvalidValueError, match="target must be one of"):
        evaluate(rec, target="crowd")


def test_step_function_metrics_reported_without_an_interval_and_why():
    """Under the population target accuracy and the rank score (step functions of the
    population distribution) keep their estimate but report no interval, with the reason in
    the JSON, in the model comparisons too; the votes target keeps their intervals."""
    p, q, x = _sample(4, 200)
    rec = AlignedRecords.from_arrays(q, x)
    names = ["accuracy", "rank_cs", "jsd"]
    doc = evaluate({"a": rec, "b": AlignedRecords.from_arrays(np.roll(q, 1, axis=0), x)},
                   metrics=names, n_boot=30, target="population").to_dict()
    for k in names[:2]:
        assert doc["models"]["a"]["ci"][k]["low"] is None
        assert "step function" in doc["models"]["a"]["ci"][k]["reason"]
        assert set(doc["comparisons"]["b"][k]) == {"difference"}
        assert 0 <= doc["models"]["a"]["metrics"][k] <= 1
    assert doc["models"]["a"]["ci"]["jsd"]["low"] is not None
    assert "low" in doc["comparisons"]["b"]["jsd"]
    votes = evaluate(rec, metrics=names, n_boot=30).intervals
    assert all(votes[k].method == "normal" for k in names)


def test_interval_contains_the_estimate_and_is_wider_than_zero():
    p, q, x = _sample(4, 200)
    res = evaluate(AlignedRecords.from_arrays(q, x), metrics=list(MEANS), n_boot=50,
                   target="population")
    for k in MEANS:
        ci = res.intervals[k]
        assert ci.low < res.metrics[k] < ci.high, k


@pytest.mark.parametrize("k", [2, 3, 5])
def test_prior_nodes_are_normal_contrasts_in_k_minus_1_dimensions(k):
    """The nodes sum to 0 (the softmax sees only contrasts) and, with many of them, their
    covariance is that of ``z - mean(z)`` for ``z ~ N(0, I_k)``: ``I - 1 1^T / k``."""
    z = population.prior_nodes(k, 4096)
    np.testing.assert_allclose(z.sum(axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(np.cov(z.T), np.eye(k) - 1.0 / k, atol=0.02)
    assert population.prior_nodes(k).shape == (population.NODES, k)


def test_prior_gradient_is_the_derivative_minka2000_eq53():
    """The marginal likelihood's gradient (Dirichlet-multinomial derivative, Minka 2000,
    eq. 53, through the softmax mean map and the nodes' spread) against finite differences,
    with counts small (rising factorials) and large (lgamma and digamma)."""
    p, q, x = _sample(5, 200)
    logq = np.log(np.maximum(q, 1e-6))
    k, c = 3, population.COMPONENTS
    nodes = population.prior_nodes(k)
    theta = np.r_[0.8, 0.1, -0.2, np.log(0.4), np.log(np.geomspace(2, 30, c)),
                  np.linspace(0.2, -0.3, c - 1)]
    for counts in (x, x * 7):
        def f(t, counts=counts):
            return population._nll_grad(population._unpack(t, k, c, nodes), counts, logq)[0]

        def g(t, counts=counts):
            return population._nll_grad(population._unpack(t, k, c, nodes), counts, logq)[1]

        assert check_grad(f, g, theta) < 1e-4 * np.linalg.norm(g(theta))


def test_compiled_likelihood_equals_gammaln_minka2000_eq52():
    """The compiled marginal likelihood (rising factorials for small counts, lgamma above) and
    the posterior responsibilities equal ``log B(alpha + x) - log B(alpha)`` written with
    scipy's gammaln, mixed over the components and nodes with the prior's weights."""
    from scipy.special import logsumexp

    from annokit.metrics._dm_kernel import row_terms
    from annokit.subsample.extrapolate import dm_log_likelihood

    p, q, x = _sample(7, 100)
    prior = population.fit_prior(x, q, seed=0)
    logq = np.log(np.maximum(q, 1e-6))
    for counts in (x, x * 9, x + 0.5):
        alpha = prior.kappa[None, :, None, None] * prior.means(q)[:, None] + 1e-8
        ll = (dm_log_likelihood(counts[:, None, None, :], alpha)
              + np.log(prior.weights)[:, None] - np.log(prior.nodes.shape[0])).reshape(100, -1)
        want = logsumexp(ll, axis=1)
        got = row_terms(counts, logq, prior.slope, prior.offset, prior.spread, prior.nodes,
                        prior.kappa, prior.weights, 1e-8)[0]
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-9)
        np.testing.assert_allclose(prior.responsibilities(counts, q),
                                   np.exp(ll - want[:, None]), rtol=1e-9, atol=1e-12)


def test_drawn_components_follow_the_responsibilities_inverse_cdf():
    """Each posterior draw takes the (component, node) where the row's cumulative
    responsibility first reaches its uniform (inverse-CDF sampling; numpy.searchsorted as the
    reference), with the parameters of :meth:`PopulationPrior.alphas` plus the counts."""
    p, q, x = _sample(3, 200)
    prior = population.fit_prior(x, q, seed=0)
    u = np.random.default_rng(0).random((200, 64))
    got = prior.posterior_alphas(x, q, u)
    table = prior.alphas(q) + x[:, None, :]
    cum = np.cumsum(prior.responsibilities(x, q), axis=1)
    for i in range(200):
        pick = np.minimum(np.searchsorted(cum[i], u[i], side="left"), cum.shape[1] - 1)
        np.testing.assert_allclose(got[i], table[i, pick], rtol=1e-12)


def test_fewer_draws_on_large_inputs_change_only_the_monte_carlo_noise():
    """Above LARGE items each gets DRAWS_LARGE draws: the same estimate within Monte Carlo
    error (the draws are unbiased), each item's values a little noisier."""
    assert population.draws_for(population.LARGE) == population.DRAWS
    assert population.draws_for(population.LARGE + 1) == population.DRAWS_LARGE
    p, q, x = _sample(6, 3000)
    names = list(MEANS)
    opts = {k: {} for k in names}
    prior = population.fit_prior(x, q, seed=0)
    many = population.item_estimates(names, opts, q, x, prior=prior, seed=0)
    few = population.item_estimates(names, opts, q, x, prior=prior, seed=1,
                                    draws=population.DRAWS_LARGE)
    np.testing.assert_allclose(few.mean(axis=0), many.mean(axis=0), rtol=0.02)
    spread = few.std(axis=0) / many.std(axis=0)
    assert (spread > 0.99).all() and (spread < 1.1).all()


def test_chance_row_equals_the_per_item_estimate_of_a_uniform_model():
    """The chance baseline's estimates, computed once per distinct count row with pooled
    draws, equal :func:`population_values` run item by item on a uniform prediction, within
    the Monte Carlo error of the draws."""
    p, q, x = _sample(5, 3000)
    uniform = np.full(q.shape, 1 / 3)
    names = list(MEANS) + ["accuracy"]
    opts = {k: {} for k in names}
    pooled = population.chance_values(x, names, opts, seed=1)
    per_item, _ = population.population_values([uniform], x, names, opts, [None],
                                               keys=np.arange(3000), seed=1, n_boot=0)
    np.testing.assert_allclose(pooled, per_item[0, 0], rtol=0.01)


def test_prior_refits_shift_the_bootstrap_replicates():
    """Replicate ``r`` is the items' Poisson-bootstrap mean of the estimates plus the shift of
    the prior refitted to the same replicate's weights (the two-stage bootstrap); brier_soft's
    exact estimator does not use the prior, so its shifts are zero."""
    p, q, x = _sample(6, 300)
    names = list(MEANS)
    opts = {k: {} for k in names}
    keys = np.arange(len(x), dtype=np.uint64)
    prior = population.fit_prior(x, q, seed=0)
    e = population.item_estimates(names, opts, q, x, prior=prior, seed=0)
    n_boot = 25
    shifts = population.prior_shifts(names, opts, q, x, prior=prior, groups=[None],
                                     keys=keys, seed=0, n_boot=n_boot)
    prior_based = [j for j, k in enumerate(names) if k != "brier_soft"]
    assert np.all(shifts[..., prior_based].std(axis=0) > 0)
    assert np.all(shifts[..., names.index("brier_soft")] == 0)
    _, reps = population.population_values([q], x, names, opts, [None], keys=keys, seed=0,
                                           n_boot=n_boot)
    w = poisson_weights(keys, 0, 0, n_boot)
    items_only = (w @ e / w.sum(axis=1)[:, None]).T
    np.testing.assert_allclose(reps[0, 0], items_only + shifts[:, 0].T, rtol=0, atol=1e-12)


def test_prior_shift_is_the_refit_estimate_to_first_order_delta_method():
    """The linearised shift ``J d`` (score-identity derivative ``J``) against re-estimating
    with the prior moved by a small step ``d``, the same posterior draws reweighted by the
    ratio of the two priors' densities (importance sampling: no re-drawing noise), both
    averaged over two seeds of the draws. ``kl`` is not compared: its shift in this direction
    is below the Monte Carlo noise of both sides (measured over four seeds: ``J d`` from -4e-6
    to 4.5e-5, the reweighted shift from -3e-5 to 0, against 3-4e-5 for ``jsd``)."""
    from scipy.special import logsumexp

    p, q, x = _sample(8, 400)
    names = ["jsd", "ent_ce"]
    opts = {k: {} for k in names}
    prior = population.fit_prior(x, q, seed=0)
    masks = np.ones((1, len(x)), dtype=bool)
    step = 1e-3 * np.linspace(-1, 1, prior.theta.size)
    moved = population._unpack(prior.theta + step, 3, len(prior.kappa), prior.nodes)
    linear, reweighted = [], []
    for seed in (0, 1):
        linear.append(population._sensitivity(names, opts, q, x, prior, seed, masks)[0] @ step)
        gen = np.random.Generator(np.random.Philox(seed))
        plug, gap, pop = population._posterior_block(names, opts, q, x, prior, gen, 400)
        logq = np.repeat(np.log(np.maximum(q, 1e-6)), 400, axis=0)
        ratio = (population._row_terms(moved, pop.reshape(-1, 3), logq, density=True)[0]
                 - population._row_terms(prior, pop.reshape(-1, 3), logq, density=True)[0])
        ratio = ratio.reshape(len(x), 400)
        w = np.exp(ratio - logsumexp(ratio, axis=1, keepdims=True))
        reweighted.append(((w[..., None] * gap).sum(axis=1) - gap.mean(axis=1)).mean(axis=0))
    np.testing.assert_allclose(np.mean(linear, axis=0), np.mean(reweighted, axis=0), rtol=0.25)


def test_few_items_warn_once_naming_the_count_and_the_option():
    p, q, x = _sample(9, 30)
    with pytest.warns(DegenerateInputWarning) as caught:
        evaluate(AlignedRecords.from_arrays(q, x), metrics=["jsd"], n_boot=0, target="population")
    few = [w for w in caught if "population target on 30 items" in str(w.message)]
    assert len(few) == 1 and "--target votes" in str(few[0].message)


def test_estimates_outside_the_range_warn_naming_the_metrics_and_the_cause():
    """A model built from the very votes it is scored on (``q`` near ``x / n``) breaks the
    estimator's premise (votes independent of the model given ``p``): the correction exceeds
    the plug-in and the estimates fall below 0, which one warning says, naming them; a model
    independent of the votes (the module's simulation) gets no such warning."""
    rng = np.random.default_rng(4)
    p = rng.dirichlet([1.0] * 6, 700)
    x = rng.multinomial(4, p)
    z = np.log(x / 4 + 0.05) + rng.normal(0.0, 0.5, x.shape)
    q = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    with pytest.warns(DegenerateInputWarning, match=r"outside the metric's range") as caught:
        res = evaluate(AlignedRecords.from_arrays(q, x), metrics=["jsd", "kl"],
                       baselines=False, target="population")
    text = next(str(w.message) for w in caught if "outside" in str(w.message))
    assert "kl -" in text and "these same votes" in text and "--target votes" in text
    assert res.metrics["kl"] < 0
    p, q, x = _sample(2, 500)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*outside the metric's range")
        evaluate(AlignedRecords.from_arrays(q, x), metrics=list(MEANS), baselines=False,
                 target="population")
