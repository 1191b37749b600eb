"""Building the report model: agreement bins, per-bin metrics, bootstrap, ceiling, schema."""

from __future__ import annotations

import functools
import json
import warnings

import jsonschema
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit.core.soft_labels import distributions, majority
from annokit.core.votes import Votes
from annokit.errors import DegenerateInputWarning, InputError, InvalidValueError, SchemaError
from annokit.metrics.engine import evaluate
from annokit.metrics.records import AlignedRecords, agreement_bins, agreement_entropy
from annokit.metrics.registry import REGISTRY, available
from annokit.report import ModelPredictions, dump_json, report_schema
from annokit.report import build_report as build_report_with_population
from annokit.report.build import histogram_edges
from annokit.report.model import SCHEMA_PATH, Report

#: The votes-target report alone: the population-target figures, which few votes per item
#: add by default and which cost a prior fit per model, are tested in test_population_figures.py.
build_report = functools.partial(build_report_with_population, population="never")

#: Metrics that are means of a per-item quantity: their per-bin values sum back to the global one.
MEAN_METRICS = [name for name, spec in REGISTRY.items() if spec.per_item is not None]


def synthetic(n_items=200, n_votes=12, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.dirichlet([0.6, 0.6, 0.6], size=n_items)
    counts = np.stack([rng.multinomial(n_votes, p) for p in truth])
    votes = Votes.from_counts(counts, labels=["a", "b", "c"])
    logits = np.log(np.maximum(truth, 1e-6)) + rng.normal(0, 0.7, truth.shape)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return votes, e / e.sum(axis=1, keepdims=True)


# --- every number comes from the engine and the registry -------------------------------------

def test_report_holds_every_registered_metric_with_the_registry_description():
    votes, probs = synthetic(n_items=60)
    rep = build_report(votes, {"m": probs}, bins=3, n_boot=0, ceiling=False)
    assert [i.name for i in rep.metrics] == list(available(True, True))
    for info in rep.metrics:
        spec = REGISTRY[info.name]
        assert (info.unit, info.lower_is_better, info.summary, info.citation) == (
            spec.unit, spec.lower_is_better, spec.summary, spec.citation)
    m = rep.models[0]
    assert list(m.metrics) == list(available(True, True))
    assert all(list(b.metrics) == list(available(True, True)) for b in m.per_bin)
    assert set(m.histograms) == {n for n in MEAN_METRICS if REGISTRY[n].unit != "rate"}
    assert list(rep.baselines) == ["chance", "oracle"]
    some = ["accuracy", "dist_ce"]
    rep = build_report(votes, {"m": probs}, bins=3, n_boot=0, ceiling=False, metrics=some)
    assert [i.name for i in rep.metrics] == some and list(rep.models[0].metrics) == some


def test_overall_and_per_bin_numbers_are_the_engines():
    votes, probs = synthetic()
    flat = np.full_like(probs, 1 / 3)
    rep = build_report(votes, {"m": probs, "flat": flat}, bins=4, n_boot=30, seed=5,
                       ceiling=False, n_bins=7)
    edges, idx, _, _ = agreement_bins(agreement_entropy(distributions(votes.counts())), 4)
    assert rep.binning.edges == edges.tolist()
    recs = {name: AlignedRecords.from_arrays(p, votes.counts(), labels=votes.labels,
                                             item_ids=votes.item_ids, ties="first")
            for name, p in (("m", probs), ("flat", flat))}
    res = evaluate(recs, by=idx, n_boot=30, seed=5, n_bins=7)
    for m in rep.models:
        ref = res.models[m.name]
        for name in available(True, True):
            iv = m.metrics[name]
            assert (iv.estimate, iv.low, iv.high) == (ref.metrics[name], ref.intervals[name].low,
                                                      ref.intervals[name].high), (m.name, name)
            for b, g in zip(m.per_bin, ref.groups, strict=True):
                small = "n_bins" in REGISTRY[name].options and g.n_items < 20 * 7
                assert b.n == g.n_items
                if small:  # a note instead of a figure that would be mostly bias
                    assert b.metrics[name].estimate is None and "not shown" in b.metrics[name].note
                else:
                    assert b.metrics[name].estimate == g.metrics[name]
    maj = majority(votes.counts(), ties="first").labels
    assert rep.models[0].per_bin[0].metrics["accuracy"].estimate == pytest.approx(
        (probs[idx == 0].argmax(1) == maj[idx == 0]).mean(), abs=1e-15)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n_bins=st.integers(1, 6))
def test_per_bin_means_sum_back_to_the_global_value_for_any_data(seed, n_bins):
    votes, probs = synthetic(n_items=60, n_votes=7, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        rep = build_report(votes, {"m": probs}, bins=n_bins, n_boot=0, ceiling=False)
    m = rep.models[0]
    n = np.array([b.n for b in m.per_bin], dtype=float)
    assert n.sum() == votes.n_items
    ok = n > 0
    for key in MEAN_METRICS:
        vals = np.array([b.metrics[key].estimate for b in m.per_bin], dtype=float)
        assert np.isclose((vals[ok] * n[ok]).sum() / n.sum(), m.metrics[key].estimate,
                          atol=1e-12), key


def test_a_model_predicting_the_human_distribution_has_zero_human_calibration_error():
    votes, _ = synthetic()
    human = distributions(votes.counts())
    rep = build_report(votes, {"oracle": human}, n_boot=50, ceiling=False)
    m = rep.models[0]
    for key in ("dist_ce", "ent_ce", "kl", "smece"):
        assert m.metrics[key].estimate == pytest.approx(0.0, abs=1e-12)
        assert all(b.metrics[key].estimate == pytest.approx(0.0, abs=1e-12)
                   or (key == "smece" and b.metrics[key].note)  # a bin too small for a figure
                   for b in m.per_bin)
    assert m.metrics["rank_cs"].estimate == 1.0


def test_intervals_and_differences_from_the_first_model_are_paired():
    votes, probs = synthetic()
    flat = np.full_like(probs, 1 / 3)
    rep = build_report(votes, {"model": probs, "uniform": flat, "same": probs}, n_boot=200,
                       ceiling=False)
    for m in rep.models:
        for key in MEAN_METRICS:  # a percentile interval of a mean holds its estimate
            iv = m.metrics[key]
            if key.startswith("rank_cs") and m.name == "uniform":
                continue  # argsort of a flat row is a fixed order: a degenerate 0/1 statistic
            assert iv.low <= iv.estimate + 1e-12 and iv.estimate <= iv.high + 1e-12, (m.name, key)
    diffs = {(c.model_a, c.model_b, c.metric): c for c in rep.comparisons}
    d = diffs[("uniform", "model", "dist_ce")]
    est = {m.name: m.metrics for m in rep.models}
    assert d.difference.estimate == pytest.approx(est["uniform"]["dist_ce"].estimate
                                                  - est["model"]["dist_ce"].estimate)
    assert d.difference.low > 0 and d.p_value == 0.0
    same = diffs[("same", "model", "ece")]  # identical models: a paired bootstrap gives exactly 0
    assert (same.difference.estimate, same.difference.low, same.difference.high) == (0, 0, 0)
    assert len(rep.comparisons) == 2 * len(available(True, True))


def test_models_given_as_aligned_records():
    votes, probs = synthetic(n_items=30)
    rec = AlignedRecords.from_arrays(probs, votes.counts(), labels=votes.labels,
                                     item_ids=votes.item_ids)
    rep = build_report(votes, {"rec": rec}, n_boot=0, bins=2)
    assert rep.models[0].metrics["accuracy"].estimate == build_report(
        votes, {"arr": probs}, n_boot=0, bins=2).models[0].metrics["accuracy"].estimate
    shuffled = AlignedRecords.from_arrays(probs[::-1], votes.counts()[::-1], labels=votes.labels,
                                          item_ids=votes.item_ids[::-1])
    with pytest.raises(SchemaError, match="in another order than the 30 vote items"):
        build_report(votes, {"rec": shuffled}, n_boot=0)


@pytest.mark.parametrize("models, kwargs, error, match", [
    ({}, {}, InputError, "at least one model"),
    ([ModelPredictions("a", None), ModelPredictions("a", None)], {}, InputError, "must be unique"),
    ({"m": np.full((5, 3), 1 / 3)}, {}, SchemaError,
     r"have shape \(5, 3\); the votes need \(30, 3\)"),
    ({"m": "probs"}, {"n_boot": -1}, InvalidValueError, "n_boot must be an integer >= 0"),
    ({"m": "probs"}, {"seed": 1.5}, InvalidValueError, "seed must be an integer >= 0"),
    ({"m": "probs"}, {"confidence": 1.5}, InvalidValueError, r"confidence must be in \(0, 1\)"),
    ({"m": "probs"}, {"metrics": ["nope"]}, InvalidValueError, "unknown metric 'nope'"),
    ({"m": "probs"}, {"bins": 0}, InvalidValueError, "bins must be a positive integer"),
])
def test_build_report_rejects_bad_input(models, kwargs, error, match):
    votes, probs = synthetic(n_items=30)
    if isinstance(models, dict) and isinstance(models.get("m"), str):
        models = {"m": probs}
    with pytest.raises(error, match=match):
        build_report(votes, models, **kwargs)


def test_histogram_edges_start_at_the_units_natural_scale():
    probability = histogram_edges("probability", [np.array([0.1, 0.3])], n_labels=3, n_bins=2)
    assert probability.tolist() == [0.0, 0.5, 1.0]
    nats = histogram_edges("nats", [np.array([0.1]), np.array([2.5])], n_labels=3, n_bins=2)
    assert nats.tolist() == [0.0, 1.25, 2.5]  # the data widen [0, ln 3]
    signed = histogram_edges("nats", [np.array([-0.2, 0.1])], n_labels=2, signed=True, n_bins=2)
    assert np.allclose(signed, [-np.log(2), 0, np.log(2)])
    other = histogram_edges("squared probability", [np.array([0.0, 0.4])], n_labels=2, n_bins=2)
    assert other.tolist() == [0.0, 0.2, 0.4]
    assert histogram_edges("squared probability", [np.zeros(3)], n_labels=2, n_bins=1).tolist() == [0, 1]


# --- ceiling, temperature ----------------------------------------------------------------------

def test_ceiling_reports_skipped_single_vote_items():
    votes = Votes.from_counts([[5, 3, 2], [1, 0, 0], [2, 2, 1], [4, 0, 4]], labels=["a", "b", "c"])
    rep = build_report(votes, {"m": np.full((4, 3), 1 / 3)}, bins=1, n_boot=0)
    hc = rep.human_ceiling  # median 7.5 votes -> halves of 3; items with < 6 votes left out
    assert (hc.votes_per_half, hc.n_skipped, hc.n_items) == (3, 2, 2)
    assert "human ceiling leaves out 2 item(s) with fewer than 6 votes (two halves of 3)" in rep.notes
    rep = build_report(votes, {"m": np.full((4, 3), 1 / 3)}, bins=1, n_boot=0,
                       votes_per_half=1)
    assert (rep.human_ceiling.n_skipped, rep.human_ceiling.overall.n) == (1, 3)
    with pytest.raises(InvalidValueError, match="votes_per_half must be >= 1; got 0"):
        build_report(votes, {"m": np.full((4, 3), 1 / 3)}, n_boot=0, votes_per_half=0)
    single = Votes.from_counts([[1, 0], [0, 1]], labels=["x", "y"])
    with pytest.warns(DegenerateInputWarning, match="every item has the same human entropy"):
        rep = build_report(single, {"m": [[0.5, 0.5], [0.5, 0.5]]}, bins=3, n_boot=0)
    assert rep.human_ceiling is None
    assert "no human ceiling: too few votes per item for two disjoint halves" in rep.notes
    # no item has two votes: the agreement coefficients are null, the rest of the summary is there
    assert rep.dataset["krippendorff_alpha"] is None and rep.dataset["fleiss_kappa"] is None
    assert rep.dataset["n_items"] == 2


def test_ceiling_is_h1_evaluated_by_the_engine_on_the_reports_bins():
    from annokit.core.divergence import tvd
    from annokit.metrics.ceiling import split_half_ceiling

    votes, probs = synthetic(n_items=120, n_votes=12)
    rep = build_report(votes, {"m": probs}, bins=3, n_boot=0, seed=4)
    hc = rep.human_ceiling
    assert hc.votes_per_half == 6 and hc.n_items == 120 and hc.n_skipped == 0
    _, idx, _, _ = agreement_bins(agreement_entropy(distributions(votes.counts())), 3)
    rng = np.random.default_rng(np.random.SeedSequence(4).spawn(2)[1])  # the report's split stream
    c = split_half_ceiling(votes, 6, by=idx, rng=rng)
    sh = c.split
    full = distributions(votes.counts())
    maj = majority(votes.counts(), ties="first").labels
    h1_maj = majority(sh.counts_h1, ties="first").labels
    assert hc.overall.vs_reference["accuracy"] == pytest.approx((h1_maj == maj).mean(), abs=1e-15)
    assert hc.overall.vs_reference["dist_ce"] == pytest.approx(tvd(sh.h1, full).mean(), abs=1e-15)
    assert hc.overall.vs_half["dist_ce"] == pytest.approx(tvd(sh.h1, sh.h2).mean(), abs=1e-15)
    for b, g, h in zip(hc.per_bin, c.vs_reference.groups, c.vs_half.groups, strict=True):
        assert b.n == g.n_items
        assert b.vs_reference == pytest.approx(g.metrics) and b.vs_half == pytest.approx(h.metrics)
    assert list(hc.overall.vs_reference) == list(available(True, True))


# --- JSON: schema and determinism -------------------------------------------------------------

def test_exported_schema_is_in_sync_with_the_model():
    on_disk = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert on_disk == report_schema(), ("annokit/report/schema.json is stale: run "
                                        "python -c 'from annokit.report import export_schema; "
                                        "export_schema()'")


def test_report_json_validates_against_the_schema_and_round_trips():
    votes, probs = synthetic(n_items=80)
    rep = build_report(votes, {"m": probs, "flat": np.full_like(probs, 1 / 3)}, n_boot=30)
    data = json.loads(dump_json(rep))
    jsonschema.validate(data, json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    again = Report.model_validate(data)
    assert dump_json(again) == dump_json(rep)
    with pytest.raises(jsonschema.ValidationError, match="'schema_version'"):
        bad = dict(data, schema_version="0.1")
        jsonschema.validate(bad, report_schema())


def test_same_seed_gives_byte_identical_json_and_another_seed_differs():
    votes, probs = synthetic(n_items=80)
    a = dump_json(build_report(votes, {"m": probs}, n_boot=50, seed=7))
    b = dump_json(build_report(votes, {"m": probs}, n_boot=50, seed=7))
    c = dump_json(build_report(votes, {"m": probs}, n_boot=50, seed=8))
    assert a == b and a != c
    assert "NaN" not in a and '"seed": 7' in a


def test_annotator_quality_is_reported_when_annotator_ids_are_known():
    from annokit.io.synthetic import make_votes

    data = make_votes(n_items=200, n_annotators=20, votes_per_item=8, spammer_fraction=0.2, rng=1)
    probs = distributions(data.votes.counts(), smoothing=1.0)
    rep = build_report(data.votes, {"m": probs}, n_boot=0, ceiling=False)
    aq = rep.annotator_quality
    assert aq.methods == ["ds", "agreement"] and aq.n_annotators == 20
    assert [r.annotator for r in aq.annotators if r.flagged["ds"]] != []
    spammers = set(data.votes.annotator_ids[data.spammer])
    flagged = {r.annotator for r in aq.annotators if r.flagged["agreement"]}
    assert flagged <= spammers and len(flagged) >= len(spammers) // 2
    first = [r.scores["ds"] for r in aq.annotators]
    assert first == sorted(first)
    # each annotator's influence on alpha, and the clustered pair matrix
    from annokit.core.annotator_agreement import alpha_influence

    influence = alpha_influence(data.votes)
    for r in aq.annotators:
        assert r.alpha_without == pytest.approx(influence.loc[r.annotator, "alpha_without"])
    assert aq.pairs is not None and len(aq.pairs.annotators) == 20
    assert len(aq.pairs.kappa) == 20 and all(row[i] == 1.0 for i, row in
                                             enumerate(aq.pairs.kappa))
    assert build_report(data.votes, {"m": probs}, n_boot=0, ceiling=False,
                        quality_methods=()).annotator_quality is None
    counts_only = Votes.from_counts(data.votes.counts(), labels=data.votes.labels)
    assert build_report(counts_only, {"m": probs}, n_boot=0,
                        ceiling=False).annotator_quality is None
