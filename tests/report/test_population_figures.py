"""The population-target figures beside the votes-target ones (annokit/report/population_figures.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from annokit.core.votes import Votes
from annokit.errors import DegenerateInputWarning, InvalidValueError
from annokit.metrics.engine import evaluate
from annokit.metrics.population import refusals
from annokit.metrics.records import AlignedRecords, agreement_bins, agreement_entropy
from annokit.report import build_report
from annokit.report.render_md import render_markdown


def _data(n_items=120, n_votes=6, seed=3):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet([0.8, 0.8, 0.8], n_items)
    counts = rng.multinomial(n_votes, p)
    q = 0.6 * p + 0.4 * rng.dirichlet([2, 2, 2], n_items)
    return Votes.from_counts(counts, labels=["a", "b", "c"]), q


def _build(votes, probs, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        return build_report(votes, {"m": probs}, bins=2, n_boot=20, ceiling=False,
                            quality_methods=(), **kw)


@pytest.fixture(scope="module")
def report():
    votes, probs = _data()
    return votes, probs, _build(votes, probs)


def test_population_figures_are_the_engines_population_target_overall_and_per_bin(report):
    votes, probs, rep = report
    pop = rep.population
    assert pop is not None and pop.median_votes == 6 and "below 20" in pop.reason
    reported = [i.name for i in rep.metrics]
    assert set(pop.not_computed) == set(refusals(reported))
    assert "jsd" in pop.metrics and "ece" not in pop.metrics and "smece" not in pop.metrics
    rec = AlignedRecords.from_arrays(probs, votes.counts(), labels=votes.labels,
                                     item_ids=votes.item_ids, ties="first")
    _, idx, _, _ = agreement_bins(agreement_entropy(votes.counts() / 6), 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        res = evaluate(rec, pop.metrics, by=pd.Categorical(idx, categories=range(2)), n_boot=20,
                       seed=0, baselines=False, target="population")
    (model,) = pop.models
    for k in pop.metrics:
        assert model.metrics[k].estimate == res.metrics[k]
        assert (model.metrics[k].low, model.metrics[k].high) == (res.intervals[k].low,
                                                                 res.intervals[k].high)
        for b, g in zip(model.per_bin, res.groups, strict=True):
            assert b.n == g.n_items and b.metrics[k].estimate == g.metrics[k]
    # the votes-target figures are those of a report without them
    plain = _build(votes, probs, population="never")
    assert plain.population is None
    assert rep.models[0].metrics == plain.models[0].metrics


def test_population_figures_follow_the_median_number_of_votes():
    votes, probs = _data(n_items=30, n_votes=20)
    assert _build(votes, probs).population is None  # median 20: not below 20
    assert _build(votes, probs, population="always").population.reason.startswith("asked")
    with pytest.raises(InvalidValueError, match=r"population must be one of \['auto', 'always', "
                                                r"'never'\]; got 'yes'"):
        _build(votes, probs, population="yes")


def test_population_figures_are_labelled_beside_the_votes_ones_on_the_page(report):
    md = render_markdown(report[2])
    assert "Against the votes and against the population" in md
    assert "| m: votes | m: population |" in md
    assert "Per agreement bin, against the population: m" in md
