"""Building the report model: agreement bins, per-bin metrics, bootstrap, ceiling, schema."""

from __future__ import annotations

import json
import warnings

import jsonschema
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit.core.soft_labels import distributions, entropy, majority
from annokit.core.votes import Votes
from annokit.errors import DegenerateInputWarning, VoteSchemaError
from annokit.metrics import calibration
from annokit.metrics.records import AlignedRecords
from annokit.report import (
    ModelPredictions,
    agreement_bins,
    build_report,
    dump_json,
    report_schema,
)
from annokit.report.build import ADDITIVE_METRICS, _binned_replicates
from annokit.report.model import SCHEMA_PATH, Report


def synthetic(n_items=200, n_votes=12, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.dirichlet([0.6, 0.6, 0.6], size=n_items)
    counts = np.stack([rng.multinomial(n_votes, p) for p in truth])
    votes = Votes.from_counts(counts, labels=["a", "b", "c"])
    logits = np.log(np.maximum(truth, 1e-6)) + rng.normal(0, 0.7, truth.shape)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return votes, e / e.sum(axis=1, keepdims=True)


# --- agreement bins ----------------------------------------------------------------------------

def test_quantile_bins_have_roughly_equal_counts_and_report_their_edges():
    h = np.random.default_rng(0).uniform(0, 1.58, 1000)
    edges, idx, method, notes = agreement_bins(h, 5)
    assert method == "quantile" and notes == []
    assert edges[0] == h.min() and edges[-1] == h.max() and edges.size == 6
    counts = np.bincount(idx, minlength=5)
    assert counts.max() - counts.min() <= 1
    assert np.all((h >= edges[idx]) & ((h < edges[idx + 1]) | (idx == 4)))


def test_user_edges_and_the_last_bin_is_closed():
    edges, idx, method, _ = agreement_bins([0.0, 0.5, 1.0, 1.5], [0.0, 0.5, 1.5])
    assert method == "edges" and edges.tolist() == [0.0, 0.5, 1.5]
    assert idx.tolist() == [0, 1, 1, 1]


def test_repeated_quantiles_are_merged_with_a_warning():
    h = np.r_[np.zeros(80), np.linspace(0.5, 1.5, 20)]
    with pytest.warns(DegenerateInputWarning, match="repeated entropy quantile"):
        edges, idx, _, notes = agreement_bins(h, 5)
    assert edges.size - 1 < 5 and notes and np.bincount(idx).min() > 0


@pytest.mark.parametrize("bins, h, match", [
    (0, [0.1, 0.2], "bins must be a positive integer"),
    ([0.0, 0.0, 1.0], [0.1], "strictly increasing"),
    ([0.0], [0.1], "at least two finite numbers"),
    ([0.0, 0.5], [0.1, 0.9], r"leave out 1 item\(s\)"),
    (3, [], "non-empty 1-D"),
])
def test_agreement_bins_reject_bad_input(bins, h, match):
    with pytest.raises(VoteSchemaError, match=match):
        agreement_bins(h, bins)


# --- per-bin numbers ---------------------------------------------------------------------------

def test_per_bin_metrics_sum_back_to_global_and_binned_metrics_match_calibration():
    votes, probs = synthetic()
    rep = build_report(votes, {"m": probs}, bins=4, n_bootstrap=0, ceiling=False)
    m = rep.models[0]
    n = np.array([b.n for b in m.per_bin])
    assert n.sum() == votes.n_items
    for key in ADDITIVE_METRICS:
        if key == "ent_ce_signed":
            continue
        per_bin = np.array([getattr(b, key) for b in m.per_bin])
        assert np.isclose((per_bin * n).sum() / n.sum(), m.metrics[key].estimate, atol=1e-12), key
    human = distributions(votes.counts())
    maj = majority(votes.counts(), ties="first").labels
    assert m.metrics["ece"].estimate == calibration.expected_calibration_error(probs, maj)
    assert m.metrics["smece"].estimate == calibration.soft_calibration_error(probs, human)
    edges, idx, _, _ = agreement_bins(entropy(human, base=2), 4)
    assert edges.tolist() == rep.binning.edges
    first = idx == 0
    assert m.per_bin[0].ece == calibration.expected_calibration_error(probs[first], maj[first])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_bins=st.integers(1, 6))
def test_additive_metrics_sum_back_for_any_data(seed, n_bins):
    votes, probs = synthetic(n_items=60, n_votes=7, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        rep = build_report(votes, {"m": probs}, bins=n_bins, n_bootstrap=0, ceiling=False)
    m = rep.models[0]
    n = np.array([b.n for b in m.per_bin], dtype=float)
    for key in ("accuracy", "dist_ce", "ent_ce", "jsd", "kl", "rank_cs"):
        vals = np.array([np.nan if getattr(b, key) is None else getattr(b, key)
                         for b in m.per_bin])
        ok = n > 0
        assert np.isclose((vals[ok] * n[ok]).sum() / n.sum(), m.metrics[key].estimate)


def test_a_model_predicting_the_human_distribution_has_zero_human_calibration_error():
    votes, _ = synthetic()
    human = distributions(votes.counts())
    rep = build_report(votes, {"oracle": human}, n_bootstrap=50, ceiling=False)
    m = rep.models[0]
    for key in ("dist_ce", "ent_ce", "kl", "smece"):
        assert m.metrics[key].estimate == pytest.approx(0.0, abs=1e-12)
        assert all(getattr(b, key) == pytest.approx(0.0, abs=1e-12) for b in m.per_bin)
    assert m.metrics["rank_cs"].estimate == 1.0


def test_vectorised_bootstrap_of_ece_and_smece_equals_the_functions():
    votes, probs = synthetic(n_items=150)
    human = distributions(votes.counts())
    y = majority(votes.counts(), ties="first").labels
    rng = np.random.default_rng(3)
    idx = np.vstack([np.arange(150), rng.integers(0, 150, (20, 150))])
    ece, smece = _binned_replicates(probs, human, y, idx, 10)
    for r in range(idx.shape[0]):
        i = idx[r]
        assert ece[r] == calibration.expected_calibration_error(probs[i], y[i])
        assert np.isclose(smece[r], calibration.soft_calibration_error(probs[i], human[i]),
                          atol=1e-15)


def test_intervals_contain_estimates_and_pairwise_differences_are_paired():
    votes, probs = synthetic()
    flat = np.full_like(probs, 1 / 3)
    rep = build_report(votes, {"model": probs, "uniform": flat, "same": probs},
                       n_bootstrap=200, ceiling=False)
    for m in rep.models:
        for key, iv in m.metrics.items():
            if key == "rank_cs" and m.name == "uniform":
                continue  # argsort of a flat row is a fixed order: a degenerate 0/1 statistic
            assert iv.low <= iv.estimate + 1e-12 and iv.estimate <= iv.high + 1e-12, (m.name, key)
    diffs = {(c.model_a, c.model_b, c.metric): c for c in rep.comparisons}
    d = diffs[("model", "uniform", "dist_ce")]
    est = {m.name: m.metrics for m in rep.models}
    assert d.difference.estimate == pytest.approx(est["model"]["dist_ce"].estimate
                                                  - est["uniform"]["dist_ce"].estimate)
    same = diffs[("model", "same", "ece")]  # identical models: a paired bootstrap gives exactly 0
    assert (same.difference.estimate, same.difference.low, same.difference.high) == (0, 0, 0)
    assert len(rep.comparisons) == 3 * 8


def test_models_given_as_aligned_records():
    votes, probs = synthetic(n_items=30)
    rec = AlignedRecords.from_arrays(probs, votes.counts(), labels=votes.labels,
                                     item_ids=votes.item_ids)
    rep = build_report(votes, {"rec": rec}, n_bootstrap=0, bins=2)
    assert rep.models[0].metrics["accuracy"].estimate == build_report(
        votes, {"arr": probs}, n_bootstrap=0, bins=2).models[0].metrics["accuracy"].estimate
    shuffled = AlignedRecords.from_arrays(probs[::-1], votes.counts()[::-1], labels=votes.labels,
                                          item_ids=votes.item_ids[::-1])
    with pytest.raises(VoteSchemaError, match="in another order than the 30 vote items"):
        build_report(votes, {"rec": shuffled}, n_bootstrap=0)


@pytest.mark.parametrize("models, kwargs, match", [
    ({}, {}, "at least one model"),
    ([ModelPredictions("a", None), ModelPredictions("a", None)], {}, "must be unique"),
    ({"m": np.full((5, 3), 1 / 3)}, {}, r"have shape \(5, 3\); the votes need \(30, 3\)"),
    ({"m": "probs"}, {"n_bootstrap": -1}, "n_bootstrap must be an integer >= 0"),
    ({"m": "probs"}, {"confidence": 1.5}, r"confidence must be in \(0, 1\)"),
])
def test_build_report_rejects_bad_input(models, kwargs, match):
    votes, probs = synthetic(n_items=30)
    if isinstance(models, dict) and isinstance(models.get("m"), str):
        models = {"m": probs}
    with pytest.raises(VoteSchemaError, match=match):
        build_report(votes, models, **kwargs)


# --- ceiling, temperature ----------------------------------------------------------------------

def test_ceiling_reports_skipped_single_vote_items():
    votes = Votes.from_counts([[5, 3, 2], [1, 0, 0], [2, 2, 1], [4, 0, 4]], labels=["a", "b", "c"])
    rep = build_report(votes, {"m": np.full((4, 3), 1 / 3)}, bins=1, n_bootstrap=0)
    hc = rep.human_ceiling  # median 7.5 votes -> halves of 3; items with < 6 votes left out
    assert (hc.votes_per_half, hc.n_skipped, hc.n_items) == (3, 2, 2)
    assert "human ceiling leaves out 2 item(s) with fewer than 6 votes (two halves of 3)" in rep.notes
    rep = build_report(votes, {"m": np.full((4, 3), 1 / 3)}, bins=1, n_bootstrap=0,
                       votes_per_half=1)
    assert (rep.human_ceiling.n_skipped, rep.human_ceiling.overall.n) == (1, 3)
    with pytest.raises(VoteSchemaError, match="votes_per_half must be >= 1; got 0"):
        build_report(votes, {"m": np.full((4, 3), 1 / 3)}, n_bootstrap=0, votes_per_half=0)
    single = Votes.from_counts([[1, 0], [0, 1]], labels=["x", "y"])
    with pytest.warns(DegenerateInputWarning, match="every item has the same human entropy"):
        rep = build_report(single, {"m": [[0.5, 0.5], [0.5, 0.5]]}, bins=3, n_bootstrap=0)
    assert rep.human_ceiling is None
    assert "no human ceiling: too few votes per item for two disjoint halves" in rep.notes
    # no item has two votes: the agreement coefficients are null, the rest of the summary is there
    assert rep.dataset["krippendorff_alpha"] is None and rep.dataset["fleiss_kappa"] is None
    assert rep.dataset["n_items"] == 2


# --- JSON: schema and determinism -------------------------------------------------------------

def test_exported_schema_is_in_sync_with_the_model():
    on_disk = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert on_disk == report_schema(), ("annokit/report/schema.json is stale: run "
                                        "python -c 'from annokit.report import export_schema; "
                                        "export_schema()'")


def test_report_json_validates_against_the_schema_and_round_trips():
    votes, probs = synthetic(n_items=80)
    rep = build_report(votes, {"m": probs, "flat": np.full_like(probs, 1 / 3)}, n_bootstrap=30)
    data = json.loads(dump_json(rep))
    jsonschema.validate(data, json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    again = Report.model_validate(data)
    assert dump_json(again) == dump_json(rep)
    with pytest.raises(jsonschema.ValidationError, match="'schema_version'"):
        bad = dict(data, schema_version="0.1")
        jsonschema.validate(bad, report_schema())


def test_same_seed_gives_byte_identical_json_and_another_seed_differs():
    votes, probs = synthetic(n_items=80)
    a = dump_json(build_report(votes, {"m": probs}, n_bootstrap=50, rng=7))
    b = dump_json(build_report(votes, {"m": probs}, n_bootstrap=50, rng=7))
    c = dump_json(build_report(votes, {"m": probs}, n_bootstrap=50, rng=8))
    assert a == b and a != c
    assert "NaN" not in a and '"seed": 7' in a


def test_annotator_quality_is_reported_when_annotator_ids_are_known():
    from annokit.io.synthetic import make_votes

    data = make_votes(n_items=200, n_annotators=20, votes_per_item=8, spammer_fraction=0.2, rng=1)
    probs = distributions(data.votes.counts(), smoothing=1.0)
    rep = build_report(data.votes, {"m": probs}, n_bootstrap=0, ceiling=False)
    aq = rep.annotator_quality
    assert aq.methods == ["ds", "agreement"] and aq.n_annotators == 20
    assert [r.annotator for r in aq.annotators if r.flagged["ds"]] != []
    spammers = set(data.votes.annotator_ids[data.spammer])
    flagged = {r.annotator for r in aq.annotators if r.flagged["agreement"]}
    assert flagged <= spammers and len(flagged) >= len(spammers) // 2
    first = [r.scores["ds"] for r in aq.annotators]
    assert first == sorted(first)
    assert build_report(data.votes, {"m": probs}, n_bootstrap=0, ceiling=False,
                        quality_methods=()).annotator_quality is None
    counts_only = Votes.from_counts(data.votes.counts(), labels=data.votes.labels)
    assert build_report(counts_only, {"m": probs}, n_bootstrap=0,
                        ceiling=False).annotator_quality is None
