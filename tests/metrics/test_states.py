"""Metric states: merging rules, update_many (one checked pass), adaptive bins and their ties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit.errors import InvalidValueError, SchemaError
from annokit.metrics import REGISTRY, available, kernels
from annokit.metrics import states as states_module
from annokit.metrics._binning import (
    BinStats,
    compute_classwise,
    compute_top,
    quantile_edges,
)
from annokit.metrics.states import AdaptiveBinnedState, BinnedState, ItemMeanState, update_many


def inputs(seed=0, n=80, k=3):
    rng = np.random.default_rng(seed)
    return (rng.dirichlet(np.ones(k), size=n), rng.dirichlet(np.ones(k), size=n),
            rng.integers(0, k, n))


# --------------------------------------------------------------------------- merge rules

def test_merge_rejects_other_metrics_and_shapes():
    p, s, _h = inputs()
    with pytest.raises(InvalidValueError, match=r"cannot merge ItemMeanState\{'quantity': 'kl'\} "
                                                r"into ItemMeanState\{'quantity': 'jsd'\}"):
        ItemMeanState("jsd").merge(ItemMeanState("kl"))
    with pytest.raises(InvalidValueError, match="cannot merge BinnedState.*'n_bins': 5"):
        BinnedState(n_bins=10).merge(BinnedState(n_bins=5))
    with pytest.raises(InvalidValueError, match="cannot merge AdaptiveBinnedState"):
        BinnedState().merge(AdaptiveBinnedState())
    three = ItemMeanState("kl").update(p, s)
    four = ItemMeanState("kl").update(*inputs(k=4)[:2])
    with pytest.raises(SchemaError, match="the other state has 4 label columns; the state holds 3"):
        three.merge(four)
    with pytest.raises(SchemaError, match="the batch has 4 label columns; the state holds 3"):
        three.update(*inputs(k=4)[:2])
    with pytest.raises(SchemaError, match="the batch has 2 replicate weightings; the state holds None"):
        three.update(p, s, weights=np.ones((2, len(p))))
    replicated = ItemMeanState("kl").update(p, s, weights=np.ones((2, len(p))))
    with pytest.raises(SchemaError, match="the other state has None replicate weightings; "
                                          "the state holds 2"):
        replicated.merge(ItemMeanState("kl").update(p, s))


def test_empty_states_merge_freely():
    p, s, _h = inputs()
    full = ItemMeanState("dist_ce").update(p, s)
    value = full.compute()
    assert ItemMeanState("dist_ce").merge(full).compute() == value
    assert full.merge(ItemMeanState("dist_ce")).compute() == value


def test_merge_does_not_touch_the_other_state():
    p, s, h = inputs()
    for name in available(True, True):  # the kernel-filled metrics
        a = REGISTRY[name].state().update(p[:40], s[:40], h[:40])
        b = REGISTRY[name].state().update(p[40:], s[40:], h[40:])
        before = b.compute()
        a.merge(b)
        a.update(p[:10], s[:10], h[:10])
        assert b.compute() == before, name


@pytest.mark.parametrize("kwargs, match", [
    ({"target": "both"}, r"target must be one of \['hard', 'soft'\]; got 'both'"),
    ({"reduce": "mean"}, r"reduce must be one of \['ece', 'max', 'debiased'\]"),
    ({"reduce": "debiased", "target": "soft"}, r"reduce='debiased' takes 0/1 targets"),
    ({"reduce": "max", "classwise": True}, r"reduce must be one of .*got 'max'"),
    ({"n_bins": 0}, "n_bins must be a positive integer; got 0"),
])
def test_binned_state_options(kwargs, match):
    with pytest.raises(InvalidValueError, match=match):
        BinnedState(**kwargs)


def test_unknown_quantity():
    with pytest.raises(InvalidValueError, match="unknown per-item quantity 'tvd'"):
        ItemMeanState("tvd")


def test_repr_shows_options():
    assert repr(AdaptiveBinnedState(n_bins=4)) == "AdaptiveBinnedState(n_bins=4)"
    assert repr(ItemMeanState("kl")) == "ItemMeanState(quantity='kl')"


# --------------------------------------------------------------------------- update_many

def test_update_many_runs_one_pass_per_bin_count(monkeypatch):
    p, s, h = inputs()
    calls = []
    real = kernels.batch_sums

    def counting(*args, **kwargs):
        calls.append(kwargs.get("n_bins"))
        return real(*args, **kwargs)

    monkeypatch.setattr(states_module._kernels, "batch_sums", counting)
    all_states = [REGISTRY[name].state() for name in available(True, True)]
    update_many(all_states, p, s, h)
    assert calls == [10]
    calls.clear()
    update_many([REGISTRY["ece"].state(n_bins=5), REGISTRY["kl"].state(),
                 REGISTRY["smece"].state(n_bins=15)], p, s, h)
    assert calls == [5, 15]
    calls.clear()
    update_many([REGISTRY["ece_adaptive"].state()], p, s, h)
    assert calls == [None]  # values checked and weights summed once, no bins needed


def test_update_many_equals_separate_updates():
    p, s, h = inputs(3)
    w = np.random.default_rng(3).poisson(1.0, size=(3, len(p))).astype(float)
    specs = [REGISTRY[name] for name in available(True, True)]
    together = [spec.state() for spec in specs]
    update_many(together, p, s, h, w)
    for spec, state in zip(specs, together, strict=True):
        np.testing.assert_array_equal(state.compute(), spec.state().update(p, s, h, w).compute())


def test_update_many_is_all_or_nothing():
    p, s, h = inputs()
    fine, needs_soft = REGISTRY["ece"].state(), REGISTRY["kl"].state()
    with pytest.raises(SchemaError, match=r"ItemMeanState\{'quantity': 'kl'\} needs soft labels; "
                                          "got soft=None"):
        update_many([fine, needs_soft], p, hard=h)
    assert np.isnan(fine.compute())
    bad = p.copy()
    bad[7] = [0.5, 0.5, 0.5]
    with pytest.raises(InvalidValueError, match="probs rows must sum to 1.*row 7"):
        update_many([fine, needs_soft], bad, s, h)
    assert np.isnan(fine.compute()) and np.isnan(needs_soft.compute())


def test_names_in_messages():
    p, s, h = inputs()
    with pytest.raises(InvalidValueError, match=r"labels must lie in \[0, 3\) \(one per probs"):
        update_many([BinnedState()], p, s, h + 3, names=("probs", "targets", "labels"))
    with pytest.raises(SchemaError, match="needs soft labels; got targets=None"):
        update_many([ItemMeanState("nll")], p, names=("probs", "targets", "labels"))


# --------------------------------------------------------------------------- adaptive bins

def test_adaptive_ties_stay_in_one_bin():
    # Four items tied at 0.6: the median edge is 0.6 itself, so every tied item goes to the
    # bin that starts there (with the 0.9s: bins [0.6, 0.6) empty, [0.6, 0.9] all six).
    conf = np.array([0.6, 0.6, 0.6, 0.6, 0.9, 0.9])
    probs = np.column_stack([conf, 1 - conf])
    hard = np.array([0, 0, 0, 1, 1, 1])  # label 0 = the prediction: three right, three wrong
    assert quantile_edges(conf, 2).tolist() == [0.6, 0.6, 0.9]
    got = AdaptiveBinnedState(n_bins=2).update(probs, hard=hard).compute()
    assert got == pytest.approx(abs(conf.sum() - 3) / 6, abs=1e-15)  # 0.2: one bin
    # splitting the sorted items into equal-count groups (ties split by sort position, as
    # torch-uncertainty does) gives (|1.8 - 3| + |2.4 - 0|) / 6 = 0.6 on the same data
    groups = np.array_split(np.argsort(conf, kind="stable"), 2)
    by_position = sum(abs(conf[g].sum() - (hard[g] == 0).sum()) for g in groups) / 6
    assert by_position == pytest.approx(0.6) and got == pytest.approx(0.2)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), n_bins=st.integers(1, 12),
       lam=st.sampled_from([0.3, 1.0, 3.0]), tied=st.booleans())
def test_weighted_quantile_edges_are_numpys_on_repeated_rows(seed, n, n_bins, lam, tied):
    rng = np.random.default_rng(seed)
    values = rng.choice(rng.random(4), n) if tied else rng.random(n)
    w = rng.poisson(lam, n)
    if w.sum() == 0:
        assert np.isnan(quantile_edges(values, n_bins, w.astype(float))).all()
        return
    expected = np.quantile(np.repeat(values, w), np.linspace(0, 1, n_bins + 1))
    np.testing.assert_array_equal(quantile_edges(values, n_bins, w.astype(float)), expected)
    stacked = quantile_edges(values, n_bins, np.stack([w, np.ones(n)]).astype(float))
    np.testing.assert_array_equal(stacked[0], expected)
    np.testing.assert_array_equal(stacked[1], quantile_edges(values, n_bins))


def test_adaptive_memory_is_per_item():
    p, _s, h = inputs(n=30)
    state = AdaptiveBinnedState().update(p, hard=h).update(p[:5], hard=h[:5])
    assert sum(len(c) for c in state._conf) == 35  # documented: grows with the items


# --------------------------------------------------------------------------- bin statistics

def test_bin_stats_merge_and_compute_errors():
    a = BinStats(1.0, np.ones(2), np.ones(2))
    with pytest.raises(SchemaError, match="hit is present in one and missing in the other"):
        a.merge(BinStats(1.0, np.ones(2), np.ones(2), hit=np.ones(2)))
    with pytest.raises(SchemaError, match="labels were not given"):
        compute_top(a)
    with pytest.raises(SchemaError, match="soft targets were not given"):
        compute_top(a, soft=True)
    with pytest.raises(SchemaError, match="labels were not given"):
        compute_classwise(a)
    with pytest.raises(SchemaError, match="soft targets were not given"):
        compute_classwise(a, soft=True)
    empty = BinStats(0.0, np.zeros(2), np.zeros(2), hit=np.zeros(2))
    assert np.isnan(compute_top(empty)) and np.isnan(compute_top(empty, reduce="max"))


def test_item_mean_state_example_and_replicates():
    state = ItemMeanState("brier_soft")
    state.update([[0.8, 0.2]], soft=[[0.5, 0.5]], weights=[[1.0], [0.0], [2.0]])
    state.update([[0.5, 0.5]], soft=[[0.5, 0.5]], weights=[[1.0], [0.0], [0.0]])
    got = state.compute()
    assert got.shape == (3,)
    assert got[0] == pytest.approx(0.09) and np.isnan(got[1]) and got[2] == pytest.approx(0.18)
