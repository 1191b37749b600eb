"""What the report adds by label scale: ordered label distributions and the order-aware metrics
(ordinal), the positive-class section (two labels), the per-annotator section (annotator
predictions); every number against the metrics layer that computes it."""

from __future__ import annotations

import functools
import json

import jsonschema
import numpy as np
import pandas as pd
import pytest

from annokit.core.labels import LabelSet
from annokit.core.soft_labels import distributions, majority
from annokit.core.votes import Votes
from annokit.errors import AlignmentError, InputError
from annokit.metrics.binary import binary_reliability
from annokit.metrics.perspectivist import evaluate_annotators
from annokit.metrics.registry import REGISTRY, available
from annokit.report import build_report as build_report_with_population
from annokit.report import dump_json
from annokit.report.captions import figure_texts
from annokit.report.figures import report_figures
from annokit.report.model import SCHEMA_PATH
from annokit.report.render_html import render_html
from annokit.report.render_md import render_markdown
from annokit.report.tables import metric_header, report_tables

#: The votes-target report alone: the population-target figures, which few votes per item
#: add by default and which cost a prior fit per model, are tested in test_population_figures.py.
build_report = functools.partial(build_report_with_population, population="never")

#: Declared order, neither alphabetical nor by frequency.
ORDINAL = ["never", "rarely", "sometimes", "often", "always"]


def long_votes(labels, *, scale="nominal", n_items=40, n_annotators=6, seed=0):
    """Seeded long votes: each item's votes scatter by at most one step around a centre."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        centre = rng.integers(0, len(labels))
        for a in range(n_annotators):
            j = int(np.clip(centre + rng.integers(-1, 2), 0, len(labels) - 1))
            rows.append({"item": f"i{i}", "annotator": f"a{a}", "label": labels[j]})
    frame = pd.DataFrame(rows)
    return frame, Votes.from_long(frame, labels=LabelSet(labels, scale=scale))


def predictions(votes, seed=1):
    return np.random.default_rng(seed).dirichlet(np.ones(votes.n_labels), votes.n_items)


def pair_predictions(frame, labels, seed=2):
    rng = np.random.default_rng(seed)
    out = frame[["item", "annotator"]].copy()
    out["label"] = [labels[j] for j in rng.integers(0, len(labels), len(out))]
    return out


@pytest.fixture(scope="module")
def ordinal():
    frame, votes = long_votes(ORDINAL, scale="ordinal")
    probs = predictions(votes)
    pairs = pair_predictions(frame, ORDINAL)
    rep = build_report(votes, {"m": probs, "flat": np.full_like(probs, 0.2)}, bins=2, n_boot=0,
                       ceiling=False, annotator_predictions=pairs)
    return votes, probs, pairs, rep


# --- ordered scales ---------------------------------------------------------------------------

def test_ordinal_report_states_the_scale_and_has_the_order_aware_metrics(ordinal):
    votes, _, _, rep = ordinal
    assert rep.scale == "ordinal" and rep.positive_label is None
    names = [i.name for i in rep.metrics]
    assert names == list(available(True, True, scale="ordinal", n_labels=5))
    order_aware = [n for n in names if n not in available(True, True, n_labels=5)]
    assert order_aware  # the ordinal-only metrics of the registry
    table = next(t for t in report_tables(rep) if t.id == "table-global")
    rows = {r[0]: r for r in table.rows}
    for info in rep.metrics:
        if info.name in order_aware:
            assert (info.unit, info.lower_is_better) == (REGISTRY[info.name].unit,
                                                         REGISTRY[info.name].lower_is_better)
            assert rows[metric_header(info)][1] == info.unit  # the unit column
            assert metric_header(info).endswith(("↓", "↑", "→0"))
    assert "Label scale: ordinal." in table.caption
    assert "scale: ordinal" in render_html(rep, {}) and "scale: ordinal" in render_markdown(rep)


def test_label_distributions_are_the_mean_distributions_in_scale_order(ordinal):
    votes, probs, _, rep = ordinal
    human = distributions(votes.counts())
    np.testing.assert_allclose(rep.human_distribution.overall, human.mean(axis=0))
    np.testing.assert_allclose(rep.models[0].label_distribution.overall, probs.mean(axis=0))
    assert sum(rep.binning.counts) == votes.n_items
    # per bin: the bins' item-count-weighted means give back the overall mean
    weighted = sum(np.asarray(d) * n for d, n in zip(rep.human_distribution.per_bin,
                                                     rep.binning.counts, strict=True))
    np.testing.assert_allclose(weighted / votes.n_items, human.mean(axis=0))
    table = next(t for t in report_tables(rep) if t.id == "table-label-distributions")
    assert [r[0] for r in table.rows] == ORDINAL
    assert table.header == ["label", "human votes", "m", "flat"]


def test_label_distribution_figure_has_the_categories_on_x_in_scale_order(ordinal, monkeypatch):
    import matplotlib.pyplot as plt

    from annokit.report import plots

    _, _, _, rep = ordinal
    seen = []

    def capture(fig, fmt="svg", **_k):
        seen.append([([t.get_text() for t in ax.get_xticklabels()], list(ax.get_xticks()),
                      ax.get_xlabel(), ax.get_title()) for ax in fig.axes if ax.get_visible()])
        plt.close(fig)
        return ""

    figs = report_figures(rep)
    assert "label-distributions" in figs
    monkeypatch.setattr(plots, "render", capture)
    keys = list(report_figures(rep))
    panels = seen[keys.index("label-distributions")]
    assert len(panels) == 1 + len(rep.binning.counts)  # all items, then each agreement bin
    for ticks, positions, xlabel, _title in panels:
        assert ticks == ORDINAL and positions == sorted(positions)
        assert xlabel == "label, in scale order [category]"
    caption = figure_texts(rep, figs)[keys.index("label-distributions")].caption
    assert ", ".join(ORDINAL) in caption


def test_nominal_report_has_no_label_distributions():
    _, votes = long_votes(ORDINAL)
    rep = build_report(votes, {"m": predictions(votes)}, bins=1, n_boot=0, ceiling=False)
    assert rep.scale == "nominal" and rep.human_distribution is None
    assert rep.models[0].label_distribution is None
    assert "label-distributions" not in report_figures(rep)


# --- two labels ---------------------------------------------------------------------------------

@pytest.mark.parametrize("positive, index", [(None, 1), ("no", 0), (1, 1)])
def test_binary_section_is_binary_reliability_on_the_majority(positive, index):
    _, votes = long_votes(["no", "yes"], n_items=60)
    probs = predictions(votes)
    rep = build_report(votes, {"m": probs}, bins=2, n_boot=0, ceiling=False, n_bins=8,
                       positive=positive)
    assert rep.positive_label == ["no", "yes"][index]
    expected = binary_reliability(probs, majority(votes.counts()).labels, positive=index,
                                  n_bins=8, labels=["no", "yes"])
    got = rep.models[0].binary_reliability
    assert got.positive_label == expected.positive_label
    np.testing.assert_allclose(got.count, expected.bins["weight"])
    np.testing.assert_allclose(np.array(got.frequency, dtype=float), expected.bins["frequency"])
    np.testing.assert_allclose(np.array(got.mean_probability, dtype=float),
                               expected.bins["mean_probability"])
    ece_name, mce_name = [n for n in available(True, True, n_labels=2)
                          if "positive" in REGISTRY[n].options]
    assert got.ece == pytest.approx(expected.ece)
    assert got.ece == pytest.approx(rep.models[0].metrics[ece_name].estimate)
    assert got.mce == pytest.approx(rep.models[0].metrics[mce_name].estimate)
    figs = report_figures(rep)
    assert f"p({rep.positive_label}) [probability]" in figs["binary-reliability"]
    title = figure_texts(rep, figs)[list(figs).index("binary-reliability")].title
    assert title == f"Positive-class reliability (positive label: {rep.positive_label})"
    assert f"positive label: {rep.positive_label}" in render_markdown(rep)


def test_positive_flips_the_reliability_data():
    _, votes = long_votes(["no", "yes"], n_items=60)
    probs = predictions(votes)
    yes = build_report(votes, {"m": probs}, bins=1, n_boot=0, ceiling=False).models[0]
    no = build_report(votes, {"m": probs}, bins=1, n_boot=0, ceiling=False,
                      positive="no").models[0]
    assert yes.binary_reliability.positive_label == "yes"
    assert no.binary_reliability.positive_label == "no"
    assert yes.binary_reliability.mean_probability != no.binary_reliability.mean_probability


@pytest.mark.parametrize("labels, positive, match", [
    (["no", "yes"], "maybe", r"positive 'maybe' is not a label; the labels are \['no', 'yes'\]"),
    (["no", "yes"], 2, r"positive 2 is not a label"),
    (["a", "b", "c"], "a", r"positive 'a': a positive class needs two labels; the votes have 3"),
])
def test_bad_positive_is_refused(labels, positive, match):
    _, votes = long_votes(labels, n_items=10)
    with pytest.raises(InputError, match=match):
        build_report(votes, {"m": predictions(votes)}, bins=1, n_boot=0, positive=positive)


def test_three_labels_have_no_binary_section(ordinal):
    _, _, _, rep = ordinal
    assert rep.positive_label is None and rep.models[0].binary_reliability is None
    assert "binary-reliability" not in report_figures(rep)


# --- per-annotator (perspectivist) --------------------------------------------------------------

def test_perspectivist_section_is_evaluate_annotators(ordinal):
    votes, _, pairs, rep = ordinal
    res = evaluate_annotators(votes, pairs, scale="ordinal")
    p = rep.perspectivist
    assert (p.scale, p.normalizer, p.n_pairs, p.n_items, p.n_annotators) == (
        res.scale, res.normalizer, res.n_pairs, res.n_items, res.n_annotators)
    assert p.scores == pytest.approx(res.scores) and p.pooled == pytest.approx(res.pooled)
    assert p.gap == pytest.approx(res.gap)
    assert p.over_annotators == {k: pytest.approx(v) for k, v in res.over_annotators.items()}
    assert {k: [w.model_dump() for w in ws] for k, ws in p.worst.items()} == {
        k: [dict(w, value=pytest.approx(w["value"])) for w in ws] for k, ws in res.worst.items()}
    table = res.per_annotator
    assert [r.annotator for r in p.per_annotator] == list(table["annotator"])
    np.testing.assert_allclose([r.error_rate for r in p.per_annotator], table["error_rate"])
    np.testing.assert_allclose([r.mean_distance for r in p.per_annotator],
                               table["mean_distance"])
    assert set(p.histograms) == {"error_rate", "mean_distance"}
    assert sum(p.histograms["error_rate"].counts) == res.n_annotators
    tables = {t.id: t for t in report_tables(rep)}
    first = tables["table-perspectivist"].rows[0]
    assert first[1:] == [f"{res.scores['lewidi_error_rate']:.3f}", f"{res.pooled['tvd']:.3f}",
                         f"{res.gap['error_rate']:.3f}"]
    quantiles = tables["table-annotator-quantiles"]
    assert quantiles.header[1:] == ["mean", "min", "q0.1", "q0.25", "median", "q0.75", "q0.9",
                                    "max"]
    worst = tables["table-worst-annotators"].rows[0]
    assert worst[:3] == ["error_rate", res.worst["error_rate"][0]["annotator"],
                         f"{res.worst['error_rate'][0]['value']:.3f}"]
    assert "annotator-errors" in report_figures(rep)


def test_report_with_every_section_validates_against_the_schema(ordinal):
    _, _, _, rep = ordinal
    data = json.loads(dump_json(rep))
    jsonschema.validate(data, json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    assert data["schema_version"] == "3.3" and data["scale"] == "ordinal"
    assert data["perspectivist"]["scores"]["lewidi_error_rate"] is not None


@pytest.mark.parametrize("column, value, match", [
    ("item", "nope", r"annotator predictions: 1 item\(s\) not in the votes: \['nope'\]"),
    ("annotator", "ghost", r"annotator predictions: 1 annotator\(s\) not in the votes: "
                           r"\['ghost'\]"),
])
def test_annotator_predictions_with_unknown_ids_are_refused(column, value, match):
    frame, votes = long_votes(ORDINAL, scale="ordinal", n_items=8)
    pairs = pair_predictions(frame, ORDINAL)
    pairs.loc[0, column] = value
    with pytest.raises(AlignmentError, match=match):
        build_report(votes, {"m": predictions(votes)}, bins=1, n_boot=0,
                     annotator_predictions=pairs)


def test_unscored_pairs_and_votes_are_noted():
    frame, votes = long_votes(ORDINAL, scale="ordinal", n_items=8)
    pairs = pair_predictions(frame, ORDINAL).iloc[3:]  # three votes without a prediction
    rep = build_report(votes, {"m": predictions(votes)}, bins=1, n_boot=0, ceiling=False,
                       annotator_predictions=pairs)
    assert rep.perspectivist.n_votes_without_prediction == 3
    assert f"annotator predictions: 3 of {votes.n_votes} votes have no prediction and are not " \
           "scored" in rep.notes


def test_every_axis_of_the_scale_figures_has_a_unit(ordinal, monkeypatch):
    import re

    import matplotlib.pyplot as plt

    from annokit.report import plots

    _, votes2 = long_votes(["no", "yes"], n_items=30)
    binary = build_report(votes2, {"m": predictions(votes2)}, bins=1, n_boot=0, ceiling=False)
    seen = {}

    def check(fig, fmt="svg", **_k):
        seen.setdefault(len(seen), [(ax.get_xlabel(), ax.get_ylabel()) for ax in fig.axes
                                    if ax.get_visible()])
        plt.close(fig)
        return ""

    monkeypatch.setattr(plots, "render", check)
    keys = list(report_figures(ordinal[3])) + list(report_figures(binary))
    new = {"label-distributions", "annotator-errors", "binary-reliability"}
    labels = [xy for i, k in enumerate(keys) if k in new for xy in seen[i]]
    assert {k for k in keys if k in new} == new and labels
    for xlabel, ylabel in labels:
        assert re.search(r"\[[^\]]+\]$", xlabel) and re.search(r"\[[^\]]+\]$", ylabel), \
            (xlabel, ylabel)
