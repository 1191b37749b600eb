"""The report's plain-language opening and its Dataset section."""

from __future__ import annotations

import functools

import numpy as np

from annokit.core.votes import Votes
from annokit.report import build_report as build_report_with_population
from annokit.report.render_md import md_escape, render_markdown
from annokit.report.summary import CEILING_NAME, summary_lines
from annokit.report.tables import report_tables, significance

#: The votes-target report alone: the population-target figures, which few votes per item
#: add by default and which cost a prior fit per model, are tested in test_population_figures.py.
build_report = functools.partial(build_report_with_population, population="never")


def _report():
    rng = np.random.default_rng(0)
    theta = rng.dirichlet([1, 1, 1], 120)
    counts = np.stack([rng.multinomial(20, t) for t in theta])
    votes = Votes.from_counts(counts, labels=["zebra", "apple", "mango"])  # not alphabetical
    sharp = np.eye(3)[counts.argmax(1)] * 0.9 + 0.1 / 3
    return build_report(votes, {"sharp": sharp, "soft": theta}, bins=2, n_boot=20,
                        ceiling=True, votes_per_half=10)


def test_the_summary_opens_the_report_with_each_model_and_the_caveats():
    rep = _report()
    lines = summary_lines(rep)
    assert [line.split(":")[0] for line in lines[:2]] == ["sharp", "soft"]
    headline = [i.name for i in rep.metrics if i.headline]
    for line, model in zip(lines[:2], rep.models, strict=True):
        shown = ", ".join(f"{k} {model.metrics[k].estimate:.3f}" for k in headline)
        assert line.startswith(f"{model.name}: {shown}.")
    ceiling = rep.human_ceiling.overall.vs_reference
    assert lines[2] == (f"The {CEILING_NAME} is the reference a model should be compared with: "
                        + ", ".join(f"{k} {ceiling[k]:.3f}" for k in headline if k in ceiling)
                        + ".")
    chance, oracle = rep.baselines["chance"]["ece"], rep.baselines["oracle"]["ece"]
    assert oracle > 0
    assert lines[3].startswith(
        "Caveats: on data where people disagree, chance (the uniform distribution) can beat a "
        f"good model on ECE (here chance {chance:.3f}")
    assert f"does not have ECE 0 (here {oracle:.3f})" in lines[3]
    md = render_markdown(rep).splitlines()
    assert md[4] == "## At a glance" and md[6] == f"- {md_escape(lines[0])}"


def test_the_dataset_section_reads_like_stats_in_label_order():
    rep = _report()
    tables = {t.id: t for t in report_tables(rep)}
    names = [row[0] for row in tables["table-dataset"].rows]
    assert names[:3] == ["items", "votes", "annotators"]
    assert "n items" not in names and "label counts" not in names  # no dump of the JSON keys
    labels = tables["table-dataset-labels"]
    assert labels.header == ["label", "votes", "items with this majority"]
    assert [row[0] for row in labels.rows] == ["zebra", "apple", "mango"]
    assert [int(row[1].replace(",", "")) for row in labels.rows] == [
        rep.dataset["label_counts"][name] for name in ("zebra", "apple", "mango")]


def test_a_metric_whose_ideal_is_zero_says_better_or_worse():
    from annokit.report.model import Interval, MetricInfo, PairwiseDifference

    info = MetricInfo(name="ent_ce_signed", summary="", unit="nats", lower_is_better=None,
                      citation="")
    d = PairwiseDifference(model_a="b", model_b="a", metric="ent_ce_signed",
                           difference=Interval(estimate=0.35, low=0.3, high=0.4))
    assert significance(d, info, (0.09, -0.26)) == "+0.350* (better: closer to 0)"
    assert significance(d, info, (0.5, 0.15)) == "+0.350* (worse: further from 0)"
    assert significance(d, info) == "+0.350*"
