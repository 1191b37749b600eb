"""The evaluation engine, annokit/metrics/engine.py."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit.core.resample import item_keys, poisson_weights
from annokit.core.soft_labels import entropy
from annokit.core.votes import CHAOSNLI_NLI_LABELS
from annokit.errors import (
    AlignmentError,
    DegenerateInputWarning,
    InvalidValueError,
    SchemaError,
    VoteSchemaError,
)
from annokit.metrics.engine import AGREEMENT_BINS, baseline_records, evaluate
from annokit.metrics.records import AlignedRecords, agreement_bins, agreement_entropy
from annokit.metrics.registry import REGISTRY, available, compute
from annokit.metrics.temperature import apply_temperature

NLI = CHAOSNLI_NLI_LABELS
ALL = tuple(available(True, True))


def _records(n=40, seed=11, k=3, ids=None):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 6, size=(n, k))
    counts[:, 1] += 1
    probs = rng.dirichlet([1.0, 2.0, 1.0][:k] + [1.0] * max(0, k - 3), size=n)
    return AlignedRecords.from_arrays(probs, counts, labels=NLI if k == 3 else None,
                                      item_ids=ids)


def _quiet(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        return evaluate(*args, **kwargs)


def _bounds(res):
    return np.array([[r.low, r.high] for r in res.intervals.values()])


# --------------------------------------------------------------------------- values


def test_evaluate_matches_independent_computations():
    from scipy.spatial.distance import jensenshannon
    from scipy.stats import entropy as sp_entropy

    rec = _records()
    res = _quiet(rec)
    m, p, h, y = res.metrics, rec.probs, rec.human, rec.majority.labels
    assert list(m) == list(ALL) and "temperature" not in m
    assert m["accuracy"] == np.mean([np.argmax(p[i]) == y[i] for i in range(40)])
    ent = [sp_entropy(p[i]) - sp_entropy(h[i]) for i in range(40)]
    assert m["ent_ce"] == pytest.approx(np.mean(np.abs(ent)), abs=1e-12)
    assert m["ent_ce_signed"] == pytest.approx(np.mean(ent), abs=1e-12)
    assert m["dist_ce"] == pytest.approx(np.mean([0.5 * np.abs(p[i] - h[i]).sum()
                                                  for i in range(40)]), abs=1e-12)
    assert m["jsd"] == pytest.approx(np.mean([jensenshannon(h[i], p[i]) for i in range(40)]),
                                     abs=1e-12)
    assert m["kl"] == pytest.approx(np.mean([sp_entropy(h[i], np.maximum(p[i], 1e-15))
                                             for i in range(40)]), abs=1e-12)
    onehot = np.eye(3)[y]
    assert m["brier"] == pytest.approx(((p - onehot) ** 2).sum(axis=1).mean(), abs=1e-12)
    assert m["brier_soft"] == pytest.approx(((p - h) ** 2).sum(axis=1).mean(), abs=1e-12)
    assert m["nll"] == pytest.approx(-(h * np.log(p)).sum(axis=1).mean(), abs=1e-12)
    assert m["nll_majority"] == pytest.approx(-np.log(p[np.arange(40), y]).mean(), abs=1e-12)
    rank = [list(np.argsort(p[i], kind="stable")) == list(np.argsort(h[i], kind="stable"))
            for i in range(40)]
    assert m["rank_cs"] == np.mean(rank) and m["rank_cs_tie_aware"] >= m["rank_cs"]
    # from-scratch top-label ECE, 10 equal-width bins [lo, hi), last closed
    conf, pred = p.max(axis=1), p.argmax(axis=1)
    bins = np.minimum((conf * 10).astype(int), 9)
    ece = sum(abs((pred[bins == b] == y[bins == b]).mean() - conf[bins == b].mean()) *
              (bins == b).mean() for b in range(10) if (bins == b).any())
    assert m["ece"] == pytest.approx(ece, abs=1e-12)
    for name in ALL:  # every value is the registry's compute on the same inputs
        assert m[name] == pytest.approx(compute(name, p, h, y, **(
            {"n_bins": 10} if "n_bins" in REGISTRY[name].options else {})), rel=1e-12), name


def test_per_item_columns_come_from_the_registry():
    rec = _records()
    res = _quiet(rec)
    frame = res.per_item
    per_item = [name for name in ALL if REGISTRY[name].per_item is not None]
    assert list(frame.columns) == ["item", "majority", "is_tied", *per_item]
    assert frame["item"].tolist() == rec.item_ids.tolist() and len(frame) == 40
    for name in per_item:  # the column mean is the metric
        assert frame[name].mean() == pytest.approx(res.metrics[name], rel=1e-12, abs=1e-15), name
    ent = entropy(rec.probs, base=None) - entropy(rec.human, base=None)
    np.testing.assert_allclose(frame["ent_ce_signed"], ent, atol=1e-12)
    assert res.per_item is frame  # built once, on first access
    only = _quiet(rec, ["ece", "kl"]).per_item
    assert list(only.columns) == ["item", "majority", "is_tied", "kl"]


def test_metric_subset_in_registry_order_and_unknown_names():
    rec = _records()
    res = _quiet(rec, ["kl", "accuracy"], baselines=False)
    assert list(res.metrics) == ["accuracy", "kl"] and res.baselines == {}
    assert list(_quiet(rec, "ece").metrics) == ["ece"]
    with pytest.raises(InvalidValueError, match=re.escape("unknown metric 'ecee'; did you mean")):
        evaluate(rec, ["ecee"])
    with pytest.raises(InvalidValueError, match="no metric named"):
        evaluate(rec, [])


def test_json_lists_exactly_the_registered_metrics_with_units_and_direction():
    res = _quiet(apply_temperature(_records(), 2.0))
    doc = res.to_dict()
    assert list(doc["metrics"]) == [*ALL, "temperature"] and doc["metrics"]["temperature"] == 2.0
    assert doc["units"] == {name: REGISTRY[name].unit for name in ALL}
    assert doc["lower_is_better"] == {name: REGISTRY[name].lower_is_better for name in ALL}
    assert list(doc) == ["n_items", "n_unmatched_predictions", "n_dropped_items",
                         "dropped_item_ids", "labels", "task", "scale", "target",
                         "positive_label", "n_bins", "tie_policy", "n_ties", "units",
                         "lower_is_better", "metrics", "baselines"]
    for kind in ("chance", "oracle"):
        assert list(doc["baselines"][kind]) == list(ALL)
    json.dumps(doc, allow_nan=False)


def test_evaluate_baselines():
    rec = _records()
    res = _quiet(rec)
    chance = _quiet(baseline_records(rec, "chance"), baselines=False)
    oracle = res.baselines["oracle"]
    for key in ("ent_ce", "ent_ce_signed", "dist_ce", "jsd", "kl", "smece", "smece_classwise",
                "brier_soft"):
        assert oracle[key] == 0.0, key
    assert oracle["accuracy"] == 1.0 and oracle["rank_cs"] == 1.0 and oracle["ece"] > 0
    # the uniform distribution scored by every metric, except accuracy: its argmax is a tie of
    # every label, broken at random, so 1 / n_labels (the below-chance warning's value)
    assert res.baselines["chance"] == {**chance.metrics, "accuracy": 1 / 3}
    assert chance.baselines == {}
    assert res.baselines["chance"]["nll"] == pytest.approx(np.log(3))
    with pytest.raises(InvalidValueError, match="baseline must be 'chance' or 'oracle'; got 'best'"):
        baseline_records(rec, "best")


def test_ties_temperature_and_errors():
    rec = AlignedRecords.from_arrays([[0.2, 0.8], [0.6, 0.4]], [[2, 2], [3, 1]],
                                     labels=["yes", "no"])
    with pytest.warns(DegenerateInputWarning, match=re.escape(
            "1 of 2 items have a tied human majority; tie policy 'first' takes the first tied "
            "label in label order")):
        res = evaluate(rec)
    assert res.metrics["accuracy"] == 0.5 and res.n_ties == 1 and res.tie_policy == "first"
    draws = set()
    for seed in range(12):
        with pytest.warns(DegenerateInputWarning, match="draws one tied label at random"):
            draws.add(evaluate(rec, ties="random", seed=seed).metrics["accuracy"])
    assert draws == {0.5, 1.0}
    hot = _quiet(apply_temperature(rec, 2.0))
    assert hot.metrics["temperature"] == 2.0


@pytest.mark.parametrize("kwargs, error, message", [
    ({"n_boot": -1}, InvalidValueError, "n_boot must be an integer >= 0; got -1"),
    ({"n_boot": True}, InvalidValueError, "n_boot must be an integer >= 0; got True"),
    ({"seed": 1.5}, InvalidValueError, "seed must be an integer >= 0; got 1.5"),
    ({"n_bins": 0}, InvalidValueError, "n_bins must be a positive integer; got 0"),
    ({"batch_size": 0}, InvalidValueError, "batch_size must be a positive integer; got 0"),
    ({"confidence": 1.0}, InvalidValueError, "confidence must be in (0, 1); got 1.0"),
    ({"by": "entropy"}, InvalidValueError,
     "by must be None, 'agreement' or one group label per item; got 'entropy'"),
    ({"by": [0, 1]}, SchemaError, "by has 2 group labels for 40 items"),
    ({"by": np.zeros((40, 2))}, SchemaError,
     "by must be one group label per item (1-D); got shape (40, 2)"),
    ({"by": [None] + [1] * 39}, InvalidValueError, "by has 1 missing group label(s)"),
])
def test_option_errors(kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        _quiet(_records(), **kwargs)


def test_records_errors():
    with pytest.raises(SchemaError, match="expected AlignedRecords .*; got list"):
        evaluate([[0.5, 0.5]])
    with pytest.raises(SchemaError, match="the mapping of model name to records is empty"):
        evaluate({})
    with pytest.raises(SchemaError, match="model 'b': expected AlignedRecords; got str"):
        evaluate({"a": _records(), "b": "x"})
    with pytest.raises(VoteSchemaError):  # off the simplex: rejected by the states
        evaluate(AlignedRecords.from_arrays([[0.7, 0.7]], [[1, 0]]))


# --------------------------------------------------------------------------- bootstrap


def test_bootstrap_is_seeded_and_shared_by_every_metric():
    rec = _records()
    a, b = _quiet(rec, n_boot=60, seed=5), _quiet(rec, n_boot=60, seed=5)
    c = _quiet(rec, n_boot=60, seed=6)
    assert list(a.intervals) == list(ALL) and a.seed == 5
    np.testing.assert_array_equal(_bounds(a), _bounds(b))
    assert not np.array_equal(_bounds(a), _bounds(c))
    for name in ALL:
        r = a.intervals[name]
        assert r.method == REGISTRY[name].interval
        assert r.estimate == pytest.approx(a.metrics[name])
        assert r.low <= r.high if r.method != "none" else np.isnan([r.low, r.high]).all()
    doc = a.to_dict()
    assert doc["ci"]["ece"] == {"low": a.intervals["ece"].low, "high": a.intervals["ece"].high,
                                "method": "bounds"}
    assert doc["ci"]["mce"]["low"] is None and doc["ci"]["mce"]["reason"]
    assert doc["bootstrap"] == {"n_boot": 60, "confidence": 0.95, "seed": 5}
    json.dumps(doc, allow_nan=False)


def test_a_replicate_is_the_metric_on_poisson_repeated_rows():
    """With one replicate, low = high = the metric on rows repeated by their Poisson counts."""
    rec = _records(n=30, seed=3)
    res = _quiet(rec, n_boot=1, seed=9)
    w = poisson_weights(item_keys(rec.item_ids), 9, 0, 1)[0]
    rows = np.repeat(np.arange(30), w.astype(int))
    assert np.array_equal(w, np.round(w))
    p, h, y = rec.probs[rows], rec.human[rows], rec.majority.labels[rows]
    for name in ALL:
        opts = {"n_bins": 10} if "n_bins" in REGISTRY[name].options else {}
        want = compute(name, p, h, y, **opts)
        r = res.intervals[name]
        assert r.replicates[0] == pytest.approx(want, rel=1e-12, abs=1e-15), name
        if r.method == "percentile":
            assert r.low == pytest.approx(want, rel=1e-12, abs=1e-15), name
            assert r.high == r.low
        elif r.method == "bounds":  # the bound statistics of the repeated rows
            state = REGISTRY[name].state(**opts).update(p, h, y)
            lower, upper = state.bounds()
            assert r.low == pytest.approx(abs(lower) if np.isfinite(lower) else 0.0,
                                          rel=1e-12, abs=1e-15), name
            assert r.high == pytest.approx(max(upper, r.low), rel=1e-12, abs=1e-15), name


@settings(max_examples=15, deadline=None)
@given(st.integers(2, 60), st.integers(1, 25), st.integers(0, 2**31 - 1))
def test_intervals_are_the_same_whole_and_in_batches(n, batch_size, seed):
    """The same seed gives the same interval whole or in batches (1e-12)."""
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(3) * 0.7, size=n)
    probs[: n // 3] = np.round(probs[: n // 3], 1)  # confidences on bin edges
    probs[: n // 3] /= probs[: n // 3].sum(axis=1, keepdims=True)
    counts = rng.integers(0, 4, size=(n, 3))
    counts[:, 0] += 1
    ids = [f"item{i}" for i in rng.permutation(n)]
    rec = AlignedRecords.from_arrays(probs, counts, item_ids=ids)
    groups = rng.integers(0, 3, size=n)
    whole = _quiet(rec, by=groups, n_boot=30, seed=seed % 1000)
    batched = _quiet(rec, by=groups, n_boot=30, seed=seed % 1000, batch_size=batch_size)
    np.testing.assert_allclose(_bounds(batched), _bounds(whole), rtol=1e-12, atol=1e-15)
    for gw, gb in zip(whole.groups, batched.groups, strict=True):
        np.testing.assert_allclose([[r.low, r.high] for r in gb.intervals.values()],
                                   [[r.low, r.high] for r in gw.intervals.values()],
                                   rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(list(batched.metrics.values()), list(whole.metrics.values()),
                               rtol=1e-12, atol=1e-15)
    # the draw is keyed by item id: a shuffled copy of the records gives the same intervals
    perm = rng.permutation(n)
    shuffled = _quiet(rec.select(perm), by=groups[perm], n_boot=30, seed=seed % 1000)
    np.testing.assert_allclose(_bounds(shuffled), _bounds(whole), rtol=1e-12, atol=1e-15)


# --------------------------------------------------------------------------- groups


def test_by_labels_equals_evaluating_each_group_alone():
    rec = _records(n=60, seed=4)
    labels = np.where(np.arange(60) % 3 == 0, "b", "a")
    res = _quiet(rec, by=labels, n_boot=20, seed=1)
    assert res.by == "labels" and [g.group for g in res.groups] == ["a", "b"]
    for g in res.groups:
        alone = _quiet(rec.select(labels == g.group), baselines=False)
        assert g.n_items == alone.n_items
        np.testing.assert_allclose(list(g.metrics.values()), list(alone.metrics.values()),
                                   rtol=1e-12)
        assert list(g.intervals) == list(ALL)
    doc = res.to_dict()["groups"]
    assert [d["group"] for d in doc] == ["a", "b"] and doc[1]["n_items"] == 20
    assert set(doc[0]) == {"group", "n_items", "metrics", "ci"}


def test_by_agreement_uses_the_entropy_quantile_bins():
    rec = _records(n=200, seed=5)
    res = _quiet(rec, by="agreement")
    edges, idx, _, _ = agreement_bins(agreement_entropy(rec.human), AGREEMENT_BINS)  # nats
    assert res.by == "agreement" and len(res.groups) == edges.size - 1
    for b, g in enumerate(res.groups):
        assert (g.entropy_low, g.entropy_high) == (edges[b], edges[b + 1])
        assert g.group == f"{edges[b]:.2f}-{edges[b + 1]:.2f}"
        assert g.n_items == int((idx == b).sum())
        mean = _quiet(rec.select(idx == b), ["dist_ce"], baselines=False).metrics["dist_ce"]
        assert g.metrics["dist_ce"] == pytest.approx(mean, rel=1e-12)
    doc = res.to_dict()["groups"][0]
    assert list(doc) == ["group", "n_items", "entropy_low", "entropy_high", "metrics"]


def test_categorical_groups_keep_empty_categories():
    rec = _records(n=10)
    by = pd.Categorical(["x"] * 10, categories=["w", "x"])
    res = _quiet(rec, ["accuracy"], by=by, n_boot=5)
    empty, full = res.groups
    assert (empty.group, empty.n_items, full.n_items) == ("w", 0, 10)
    assert np.isnan(empty.metrics["accuracy"]) and np.isnan(empty.intervals["accuracy"].low)
    assert full.metrics == res.metrics


# --------------------------------------------------------------------------- several models


def test_several_models_paired_differences():
    a = _records(n=80, seed=7, ids=[f"i{j}" for j in range(80)])
    b = a.with_probs(np.random.default_rng(8).dirichlet([1, 1, 1], size=80))
    res = _quiet({"A": a, "B": b}, n_boot=50, seed=2)
    alone_a, alone_b = _quiet(a, n_boot=50, seed=2), _quiet(b, n_boot=50, seed=2)
    assert res.metrics == alone_a.metrics and list(res.models) == ["A", "B"]
    assert res.models["B"].metrics == alone_b.metrics
    np.testing.assert_array_equal(_bounds(res.models["B"]), _bounds(alone_b))
    for name in ALL:
        d = res.comparisons["B"][name]
        assert d.estimate == pytest.approx(alone_b.metrics[name] - alone_a.metrics[name])
        assert d.low <= d.high and 0.0 <= d.p_value <= 1.0
    doc = res.to_dict()
    assert list(doc["models"]) == ["A", "B"] and list(doc["comparisons"]) == ["B"]
    assert set(doc["comparisons"]["B"]["ece"]) == {"difference", "low", "high", "p_value"}
    json.dumps(doc, allow_nan=False)
    # a model against itself: difference 0 in every replicate; items in another order
    same = _quiet({"A": a, "A2": a.select(np.arange(80)[::-1])}, n_boot=20)
    for d in same.comparisons["A2"].values():
        assert d.estimate == d.low == d.high == 0.0 and d.p_value == 1.0
    plain = _quiet({"A": a, "B": b}).to_dict()["comparisons"]["B"]["kl"]
    assert list(plain) == ["difference"]


def test_several_models_must_share_items_labels_and_votes():
    a = _records(n=10, seed=1)
    with pytest.raises(AlignmentError, match=re.escape(
            "model 'b' has 9 items, 1 of the first model's 10 items missing")):
        evaluate({"a": a, "b": a.select(np.arange(9))})
    other = AlignedRecords.from_arrays(a.probs, a.counts + 1, labels=NLI)
    with pytest.raises(AlignmentError, match="model 'b' was aligned to other votes"):
        evaluate({"a": a, "b": other})
    relabelled = AlignedRecords.from_arrays(a.probs, a.counts)
    with pytest.raises(AlignmentError, match=re.escape("model 'b' has labels ['0', '1', '2']")):
        evaluate({"a": a, "b": relabelled})


# -- pandas out ---------------------------------------------------------------------

def test_to_frame_holds_the_metrics_intervals_and_baselines():
    res = evaluate(_records(), metrics=["kl", "dist_ce", "brier"], n_boot=30, seed=2)
    frame = res.to_frame()
    assert frame.index.name == "metric" and list(frame.index) == list(res.metrics)
    assert frame["value"].to_dict() == res.metrics
    assert frame["ci_low"].to_dict() == {k: r.low for k, r in res.intervals.items()}
    assert frame["ci_high"].to_dict() == {k: r.high for k, r in res.intervals.items()}
    assert frame["unit"].to_dict() == res.units
    assert frame["chance"].to_dict() == res.baselines["chance"]
    assert "ci_low" not in evaluate(_records(), metrics=["kl"]).to_frame()


def test_to_frame_of_models_and_groups():
    a, b = _records(seed=1), _records(seed=1)
    both = evaluate({"a": a, "b": b}, metrics=["kl", "brier"], n_boot=20)
    frame = both.to_frame()
    assert frame.index.names == ["model", "metric"] and len(frame) == 4
    assert frame.loc[("b", "kl"), "difference"] == both.comparisons["b"]["kl"].estimate
    assert np.isnan(frame.loc[("a", "kl"), "difference"])
    grouped = evaluate(a, metrics=["kl"], by="agreement")
    rows = grouped.to_frame(groups=True)
    assert rows.index.names == ["group", "metric"]
    assert rows["n_items"].sum() == grouped.n_items
    assert rows["value"].tolist() == [g.metrics["kl"] for g in grouped.groups]
    with pytest.raises(InvalidValueError, match=r"^this result has no groups; evaluate with "
                                                r"by=\.\.\. \(CLI --by agreement\)"):
        both.to_frame(groups=True)


def test_repr_is_one_line_per_metric():
    res = evaluate(_records(), metrics=["kl", "brier"], n_boot=10)
    lines = repr(res).splitlines()
    assert lines[0] == (f"EvaluationResult(n_items={res.n_items}, scale='nominal', n_boot=10, "
                        "confidence=0.95)")
    assert len(lines) == 3 and lines[1].split()[:2] == ["kl", f"{res.metrics['kl']:.4f}"]
    assert lines[2].endswith("lower is better")


def test_agreement_groups_refuse_multilabel_records():
    from annokit.core.labels import LabelSet
    from annokit.metrics.engine import _groups
    from annokit.metrics.multilabel_records import MultilabelRecords

    m = np.array([[0.2, 0.9], [0.6, 0.1]])
    rec = MultilabelRecords(item_ids=np.array(["a", "b"], dtype=object), labels=LabelSet(["x", "y"]),
                            probs=m, soft=m, hard=(m > 0.5).astype(float),
                            is_tied=np.zeros((2, 2), dtype=bool), tie_policy="exclude",
                            n_responses=np.array([3, 3]))
    with pytest.raises(InvalidValueError, match="by='agreement' groups single-label records only"):
        _groups("agreement", rec)
    with pytest.raises(InvalidValueError, match="multi-label records take their tie policy"):
        evaluate(rec, by="agreement")
