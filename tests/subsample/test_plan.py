"""annokit.plan: the Dirichlet posterior values, the allocation, the result and the replay."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import annokit
from annokit.core.votes import LabelSet, Votes
from annokit.errors import InvalidValueError, SchemaError
from annokit.subsample.plan_alloc import GOALS, allocate
from annokit.subsample.plan_posterior import p_leading_beta, posterior_values


def _votes(counts, names=("a", "b", "c")) -> Votes:
    """Votes with the given count matrix (one vote per row of a long table)."""
    counts = np.asarray(counts)
    item, label = np.nonzero(counts)
    reps = counts[item, label]
    return Votes(np.repeat(item, reps), np.repeat(label, reps),
                 item_ids=[f"i{k}" for k in range(len(counts))], labels=LabelSet(list(names)))


def _dense(n_items=80, per_item=60, seed=0) -> Votes:
    """Synthetic dense votes: each item's population distribution from Dirichlet(1, 1, 1)."""
    rng = np.random.default_rng(seed)
    theta = rng.dirichlet(np.ones(3), size=n_items)
    counts = np.stack([rng.multinomial(per_item, t) for t in theta])
    return _votes(counts)


# -- the posterior ------------------------------------------------------------------------


def test_p_leading_two_labels_matches_the_incomplete_beta():
    a = np.array([2, 5, 3, 10, 0, 7])
    b = np.array([1, 0, 3, 7, 0, 2])
    exact = p_leading_beta(a, b)
    mc = posterior_values(np.c_[a, b], goal="majority", horizon=0, n_draws=40_000).now
    # ties (3-3, 0-0) lead with the first label: P = 1/2
    np.testing.assert_allclose(mc, exact, atol=0.01)


def test_majority_values_two_labels_match_beta_binomial_enumeration():
    """V(n) = sum_d BetaBinom(d; n, a+1, b+1) * P(leader of (a+d, b+n-d) is the argmax)."""
    from scipy.stats import betabinom

    a, b, horizon = 3, 1, 6
    mc = posterior_values(np.array([[a, b]]), goal="majority", horizon=horizon,
                          n_draws=60_000).values[0]
    for n in range(horizon + 1):
        d = np.arange(n + 1)
        pa = p_leading_beta(a + d, b + n - d)
        credit = np.where(a + d == b + n - d, 0.5, np.maximum(pa, 1 - pa))
        exact = float((betabinom.pmf(d, n, a + 1, b + 1) * credit).sum())
        assert mc[n] == pytest.approx(exact, abs=0.01), n


def test_expected_tvd_two_labels_matches_numerical_integration():
    from scipy.integrate import quad
    from scipy.stats import beta

    for a, b in [(2, 1), (5, 5), (9, 1)]:
        p = a / (a + b)
        exact = quad(lambda x, a=a, b=b, p=p: abs(p - x) * beta.pdf(x, a + 1, b + 1), 0, 1)[0]
        mc = posterior_values(np.array([[a, b]]), goal="distribution", horizon=0,
                              n_draws=40_000).now[0]
        assert mc == pytest.approx(exact, abs=0.004), (a, b)


def test_p_leading_three_labels_matches_simulation_from_the_prior():
    """Bayes by simulation: theta ~ Dirichlet(1,1,1), 4 votes; among draws whose counts are
    (2, 1, 1), how often label 0 is the population argmax."""
    rng = np.random.default_rng(5)
    theta = rng.dirichlet(np.ones(3), size=400_000)
    u = rng.random((len(theta), 4))
    drawn = (u[..., None] >= np.cumsum(theta, 1)[:, None, :-1]).sum(-1)
    counts = np.stack([(drawn == k).sum(1) for k in range(3)], 1)
    hit = (counts == [2, 1, 1]).all(1)
    simulated = (theta[hit].argmax(1) == 0).mean()
    mc = posterior_values(np.array([[2, 1, 1]]), goal="majority", horizon=0,
                          n_draws=40_000).now[0]
    assert mc == pytest.approx(simulated, abs=0.012)


def test_identical_and_permuted_counts_get_identical_values():
    pv = posterior_values(np.array([[3, 1, 0], [0, 1, 3], [3, 1, 0]]), goal="majority",
                          horizon=4, n_draws=500)
    np.testing.assert_array_equal(pv.values[0], pv.values[1])
    np.testing.assert_array_equal(pv.values[0], pv.values[2])


# -- the allocation ----------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(1, 6), st.integers(0, 40), st.integers(0, 2**31 - 1))
def test_allocation_never_exceeds_the_budget_or_the_caps(n_items, horizon, budget, seed):
    rng = np.random.default_rng(seed)
    values = np.cumsum(rng.normal(size=(n_items, horizon + 1)), 1)
    caps = rng.integers(0, horizon + 2, n_items)
    eligible = rng.random(n_items) < 0.7
    extra = allocate(values, caps, budget, eligible=eligible)
    assert extra.sum() <= budget
    assert (extra <= np.minimum(caps, horizon)).all()
    assert (extra[~eligible] == 0).all()


def test_allocation_is_optimal_for_concave_values():
    """Greedy on concave gains is the brute-force optimum (3 items, budget 5)."""
    import itertools

    values = np.array([[0, 0.3, 0.5, 0.6, 0.65], [0, 0.2, 0.38, 0.5, 0.6], [0, 0.1, 0.15, 0.2, 0.2]])
    extra = allocate(values, np.full(3, 4), 5)
    best = max(sum(values[i, n] for i, n in enumerate(ns))
               for ns in itertools.product(range(5), repeat=3) if sum(ns) <= 5)
    assert extra.sum() == 5
    assert sum(values[i, n] for i, n in enumerate(extra)) == pytest.approx(best)


def test_allocation_looks_past_a_zero_one_vote_gain():
    """At 2-1 one vote cannot change the leader (one-vote gain 0); the envelope sees that
    two votes help, so the item gets votes."""
    values = np.array([[0.5, 0.5, 0.7], [0.0, 0.05, 0.1]])
    assert allocate(values, np.full(2, 2), 2).tolist() == [2, 0]


# -- plan ----------------------------------------------------------------------------------


def test_plan_spends_on_unsettled_items_and_reports_the_state():
    votes = _votes([[8, 0, 0], [2, 2, 0], [1, 1, 1], [3, 1, 0]])
    result = annokit.plan(votes, budget=10, prior="uniform")
    table = result.to_frame()
    assert list(table.columns) == ["item", "n_votes", "leading_label", "p_leading", "settled",
                                   "at_max_per_item", "extra_votes", "expected_after",
                                   "votes_to_settle"]
    assert table["settled"].tolist() == [True, False, False, False]
    assert table["extra_votes"].iloc[0] == 0
    assert 0 < result.extra_votes.sum() <= 10
    summary = result.summary()
    assert summary["n_settled"] == 1 and summary["votes_planned"] == result.extra_votes.sum()
    assert summary["expected_after"] >= summary["expected_now"]
    assert result.next_votes()["extra_votes"].gt(0).all()
    import json

    json.dumps(summary, allow_nan=False)


def test_plan_distribution_goal():
    votes = _votes([[30, 30, 30], [1, 1, 0], [2, 0, 0]])
    result = annokit.plan(votes, budget=6, goal="distribution", epsilon=0.1, prior="uniform")
    table = result.to_frame()
    assert "expected_tvd" in table and table["settled"].tolist() == [True, False, False]
    assert (table["expected_after"] <= table["expected_tvd"] + 1e-12).all()


def test_plan_budget_zero_only_reports_and_same_seed_same_plan():
    votes = _dense(n_items=30, per_item=4)
    report = annokit.plan(votes, budget=0)
    assert report.extra_votes.sum() == 0 and report.summary()["votes_planned"] == 0
    one = annokit.plan(votes, budget=25, seed=3).to_frame()
    two = annokit.plan(votes, budget=25, seed=3).to_frame()
    assert one.equals(two)


def test_plan_max_per_item_is_stated():
    votes = _votes([[2, 1, 0], [1, 1, 0], [5, 4, 0]])
    result = annokit.plan(votes, budget=20, max_per_item=9)
    table = result.to_frame()
    assert table["at_max_per_item"].tolist() == [False, False, True]
    assert table["extra_votes"].iloc[2] == 0
    assert ((table["n_votes"] + table["extra_votes"]) <= 9).all()
    assert result.summary()["n_at_max_per_item"] == 1


@pytest.mark.parametrize("kwargs, message", [
    ({"budget": -1}, r"budget must be an integer >= 0; got -1"),
    ({"budget": 5, "goal": "mode"}, r"goal must be one of \['majority', 'distribution'\]"),
    ({"budget": 5, "confidence": 1.0}, r"confidence must be in \(0, 1\); got 1.0"),
    ({"budget": 5, "epsilon": 0}, r"epsilon must be in \(0, 1\); got 0"),
    ({"budget": 5, "max_per_item": 0}, r"max_per_item must be a positive integer; got 0"),
])
def test_plan_refuses_bad_parameters(kwargs, message):
    with pytest.raises(InvalidValueError, match=message):
        annokit.plan(_votes([[1, 0, 0]]), **kwargs)


# -- replay -----------------------------------------------------------------------------------


def test_replay_on_synthetic_dense_votes():
    votes = _dense()
    result = annokit.plan.replay(votes, start=3, budget_per_item=4, rounds=2, seeds=(0, 1),
                                 compare=(5, 10), n_draws=500)
    table = result.to_frame()
    assert table["method"].tolist() == ["plan", "uniform-5", "uniform-7", "uniform-10"]
    assert table.loc[0, "votes_per_item"] <= 7 + 1e-12
    assert all(p <= 80 * 4 for p in result.info["planned_votes"])
    assert ((table["low"] <= table["mean"]) & (table["mean"] <= table["high"])).all()
    assert result.info["n_items_scored"] + result.info["n_tied_full"] == 80
    assert "plan" in result.to_text()


def test_replay_distribution_and_errors():
    votes = _dense(n_items=40)
    result = annokit.plan.replay(votes, goal="distribution", budget_per_item=3, rounds=1,
                                 seeds=(0,), compare=(), n_draws=300)
    assert result.to_frame()["method"].tolist() == ["plan", "uniform-6"]
    assert result.info["n_items_scored"] == 40
    with pytest.raises(InvalidValueError, match="seeds must hold at least one seed"):
        annokit.plan.replay(votes, seeds=())


def test_replay_chaosnli_snli_subset_beats_uniform_at_the_same_total(shared_data):
    """ChaosNLI SNLI (Nie et al. 2020), 400 items, one seed: the planned majority recovers the
    100-vote majority at least as often as uniform allocation of the same total."""
    from annokit.io import read_votes

    votes = read_votes(shared_data("chaosnli", "chaosNLI_snli.jsonl"))
    votes = votes.select_items(np.arange(400))
    table = annokit.plan.replay(votes, seeds=(0,), compare=(), n_draws=1000).to_frame()
    assert table.loc[0, "mean"] >= table.loc[1, "mean"]


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(1, 15), st.integers(0, 60), st.sampled_from(GOALS),
       st.one_of(st.none(), st.integers(1, 8)), st.integers(0, 2**31 - 1))
def test_plan_never_exceeds_the_budget_or_max_per_item(n_labels, n_items, budget, goal, cap, seed):
    """Any counts, any goal: the plan stays within the budget and --max-per-item, and items at
    the cap get nothing."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 5, size=(n_items, n_labels))
    counts[counts.sum(1) == 0, 0] = 1  # Votes holds items with at least one vote
    votes = _votes(counts, names=tuple("abcd"[:n_labels]))
    table = annokit.plan(votes, budget=budget, goal=goal, max_per_item=cap, n_draws=200,
                         seed=seed).to_frame()
    assert table["extra_votes"].sum() <= budget
    assert (table["extra_votes"] >= 0).all()
    if cap is not None:
        assert ((table["n_votes"] + table["extra_votes"] <= cap)
                | (table["extra_votes"] == 0)).all()
        assert (table.loc[table["at_max_per_item"], "extra_votes"] == 0).all()


def test_posterior_values_take_items_without_votes():
    """A row without votes (possible from plan_counts) is valued under the prior alone, its soft
    label uniform. Closed forms: E TVD(uniform, Dirichlet(1,1,1)) = 3/2 E|Beta(1,2) - 1/3| =
    24/81; E TVD((1,0,0), Dirichlet(5,1,1)) = E[1 - theta_1] = 2/7."""
    pv = posterior_values(np.array([[0, 0, 0], [4, 0, 0]]), goal="distribution", horizon=2,
                          n_draws=40_000)
    assert pv.values.shape == (2, 3) and np.isfinite(pv.values).all()
    np.testing.assert_allclose(pv.now, [24 / 81, 2 / 7], atol=0.004)


def test_votes_to_settle_is_where_the_value_reaches_the_goal():
    """Votes to settle come from the same posterior values the allocation uses."""
    from annokit.subsample.plan_alloc import votes_to_settle

    counts = np.array([[9, 1], [3, 0], [4, 1], [4, 4]])
    need = votes_to_settle(counts, horizon=60, seed=1)
    values = posterior_values(counts, goal="majority", horizon=60, seed=1).values
    assert need[0] == 0 and need[3] == -1  # settled now; a tie beyond 60 votes
    assert (need[1:3] > 0).all()
    for i, n in enumerate(need):
        assert (n == -1 and values[i].max() < 0.95) or (
            values[i, n] >= 0.95 > values[i, :n].max(initial=0))
    tvd_need = votes_to_settle(counts, goal="distribution", epsilon=0.2, horizon=60, seed=1)
    tvd = -posterior_values(counts, goal="distribution", horizon=60, seed=1).values
    for i, n in enumerate(tvd_need):
        assert (n == -1 and tvd[i].min() > 0.2) or (tvd[i, n] <= 0.2 < tvd[i, :n].min(initial=1))


def test_plan_says_how_many_votes_would_settle_what_the_round_cannot(shared_data):
    """RTE, budget 500: hundreds of items unsettled before and after the round (394 under
    the uniform prior)."""
    from click.testing import CliRunner

    from annokit.cli import main
    from annokit.io import read_votes

    path = shared_data("snow2008_rte", "rte.standardized.tsv")
    result = annokit.plan(read_votes(path), budget=500)
    info, table = result.summary(), result.table
    need = info["votes_to_settle"]
    short = ~table["settled"]
    n = info["n_cannot_settle"]
    assert need["n_items"] == n > 300
    assert need["total"] == int(table.loc[short, "votes_to_settle"].sum())
    assert need["n_beyond_horizon"] == int(table.loc[short, "votes_to_settle"].isna().sum())
    assert (table.loc[~short, "votes_to_settle"] == 0).all()
    out = CliRunner().invoke(main, ["plan", str(path), "--budget", "0"]).stdout.splitlines()
    beyond = need["n_beyond_horizon"]
    reach = n - beyond
    assert out[-1] == (
        f"to settle those {n} items: about {need['total']:,} more votes in total for {reach} "
        f"items (per item {need['min']} to {need['max']}, median {need['median']:g}); {beyond} "
        "items need more than 200 each (votes near a tie: their population may have no clear "
        "majority); choose --budget accordingly")


def test_a_round_that_settles_every_item_says_nothing_more():
    votes = _votes([[9, 0], [5, 0]], names=("a", "b"))
    info = annokit.plan(votes, budget=20).summary()
    assert info["n_cannot_settle"] == 0 and info["votes_to_settle"] is None

# -- the prior fitted to the votes -----------------------------------------------------------


def test_fitted_prior_is_the_population_fit_and_stated():
    """The plan's default prior is the Dirichlet-multinomial fitted to the votes (Minka 2000;
    the fit of ``subsample --target population``), stated in the summary by label."""
    from annokit.subsample.extrapolate import DirichletMultinomial

    rng = np.random.default_rng(1)
    counts = np.array([rng.multinomial(4, p) for p in rng.dirichlet([3.0, 1.0, 0.5], 300)])
    votes = _votes(counts)
    summary = annokit.plan(votes, budget=0).summary()
    assert summary["prior"] == "fitted"
    want = DirichletMultinomial().fit(counts).alpha_
    np.testing.assert_allclose(list(summary["prior_alpha"].values()), want)
    assert list(summary["prior_alpha"]) == ["a", "b", "c"]
    uniform = annokit.plan(votes, budget=0, prior="uniform").summary()
    assert uniform["prior_alpha"] == {"a": 1.0, "b": 1.0, "c": 1.0}
    with pytest.raises(InvalidValueError, match="prior"):
        annokit.plan(votes, budget=0, prior="flat")


def test_asymmetric_prior_matches_the_beta_closed_form():
    """Two labels, prior Beta(alpha_a, alpha_b): P(theta_a > 1/2 | a, b) is
    I_1/2(b + alpha_b, a + alpha_a) (the regularized incomplete beta function); the Monte Carlo
    ``now`` agrees within 4 standard errors of 20,000 draws."""
    from scipy.special import betainc



    counts = np.array([[3, 1], [2, 2], [5, 0], [1, 2]])
    alpha = np.array([2.5, 0.7])
    got = posterior_values(counts, goal="majority", horizon=1, n_draws=20_000, alpha=alpha).now
    p_first = betainc(counts[:, 1] + alpha[1], counts[:, 0] + alpha[0], 0.5)
    leading_first = counts[:, 0] >= counts[:, 1]
    want = np.where(leading_first, p_first, 1 - p_first)
    assert np.all(np.abs(got - want) < 4 * np.sqrt(want * (1 - want) / 20_000) + 1e-9)


def test_symmetric_vector_prior_gives_the_scalar_values():


    counts = np.array([[3, 1, 0], [0, 2, 2], [1, 1, 1]])
    one = posterior_values(counts, goal="distribution", horizon=3, n_draws=300, alpha=1.0)
    vec = posterior_values(counts, goal="distribution", horizon=3, n_draws=300,
                           alpha=np.ones(3))
    np.testing.assert_array_equal(one.values, vec.values)


# -- a prior centred on a model's probabilities ----------------------------------------------


def test_model_prior_recovers_a_known_population():
    """model_prior: populations drawn from Dirichlet(A * softmax(log p / T)) with A = 15, T = 1.5
    (empirical Bayes on 4,000 items x 5 votes); the fit finds A and T within 20%."""
    from scipy.special import softmax

    from annokit.subsample.plan_posterior import model_prior

    rng = np.random.default_rng(2)
    p = rng.dirichlet([1.0, 1.0, 1.0], 4000)
    mean = softmax(np.log(p) / 1.5, axis=1)
    theta = np.array([rng.dirichlet(15 * m) for m in mean])
    counts = np.array([rng.multinomial(5, t) for t in theta])
    fit = model_prior(counts, p)
    assert abs(fit.concentration / 15 - 1) < 0.2 and abs(fit.temperature / 1.5 - 1) < 0.2


def test_plan_with_probs_uses_the_model_prior_and_states_it():
    rng = np.random.default_rng(0)
    counts = rng.multinomial(3, [0.6, 0.3, 0.1], size=40)
    probs = rng.dirichlet([2, 1, 1], 40)
    votes = _votes(counts)
    summary = annokit.plan(votes, budget=30, probs=probs).summary()
    assert summary["prior"] == "model" and set(summary["model_prior"]) == {"concentration",
                                                                            "temperature"}
    with pytest.raises(InvalidValueError, match="prior='model' needs a model's probs"):
        annokit.plan(votes, budget=0, prior="model")
    with pytest.raises(SchemaError, match=r"plan probs must have shape \(n_items, n_labels\)"):
        annokit.plan(votes, budget=0, probs=probs[:5])


# -- the estimate of the distribution goal, ActiveLab's allocation ----------------------------

def test_distribution_estimate_is_the_posterior_mean_and_beats_proportions_on_few_votes():
    """Under the prior that generated the data, the posterior mean (c + alpha) / (n + sum alpha)
    has a smaller expected TVD to theta than the raw proportions (Bayes estimate; Gelman et al.,
    BDA3 Sec. 3.4); the planner values and reports it, with the estimate's columns."""
    rng = np.random.default_rng(5)
    alpha = np.array([2.0, 1.0, 0.5])
    theta = rng.dirichlet(alpha, 400)
    counts = np.array([rng.multinomial(3, t) for t in theta])
    votes = _votes(counts.tolist())
    pm = annokit.plan(votes, budget=0, goal="distribution", prior="uniform", alpha=1.0)
    raw = annokit.plan(votes, budget=0, goal="distribution", prior="uniform", alpha=1.0,
                       estimate="proportions")
    assert pm.summary()["expected_now"] < raw.summary()["expected_now"]
    table = pm.to_frame()
    est = table[[c for c in table if c.startswith("estimate_")]].to_numpy()
    np.testing.assert_allclose(est, (counts + 1.0) / (counts.sum(1, keepdims=True) + 3))


def test_activelab_allocation_is_round_robin_by_score():
    """ActiveLab's batches: the lowest scores first, one vote per item per pass."""
    from annokit.subsample.plan_alloc import allocate_by_score

    extra = allocate_by_score(np.array([0.3, 0.1, 0.9, 0.2]), np.array([5, 5, 5, 0]), 7)
    assert extra.tolist() == [2, 3, 2, 0]


def test_replay_majority_target_is_the_human_majority_with_a_model():
    """With a model the replay's majority target and final estimate stay the human votes' own
    majority: uniform rows do not depend on the model (even one that always names the wrong
    label), and uniform allocation of every vote recovers every unique majority."""
    votes = _dense(n_items=40, per_item=12)
    full = votes.counts()
    wrong = np.full(full.shape, 0.05)
    wrong[np.arange(len(full)), (full.argmax(1) + 1) % full.shape[1]] = 0.9
    wrong /= wrong.sum(1, keepdims=True)
    kw = {"start": 3, "budget_per_item": 2, "rounds": 1, "seeds": (0,), "compare": (4, 12),
          "n_draws": 200}
    with_model = annokit.plan.replay(votes, prior="model", probs=wrong, **kw).to_frame()
    without = annokit.plan.replay(votes, **kw).to_frame()
    uniform = with_model["method"].str.startswith("uniform")
    pd.testing.assert_frame_equal(with_model[uniform], without[uniform])
    assert with_model.set_index("method").loc["uniform-12", "mean"] == 1.0
    act = annokit.plan.replay(votes, prior="model", probs=wrong, rank="activelab", **kw)
    assert act.info["rank"] == "activelab" and act.info["planned_votes"] == [80]
