"""The report's agreement bins (annokit/report/binning.py): the cut on the votes' entropy, the
regression to the mean it carries, and the cut on the population estimate."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from annokit.core.labels import LabelSet
from annokit.core.soft_labels import entropy
from annokit.core.soft_votes import SoftLabels
from annokit.core.votes import Votes
from annokit.errors import DegenerateInputWarning, InputError, InvalidValueError
from annokit.metrics.records import agreement_bins, agreement_entropy
from annokit.report import build_report
from annokit.report.binning import dirichlet_entropy, population_entropy


@pytest.mark.parametrize("alpha", [[1.0, 1.0], [0.5, 2.0, 3.0], [8.0, 0.3, 0.3, 1.0]])
def test_dirichlet_entropy_is_the_mean_entropy_of_dirichlet_draws(alpha):
    """Wolpert & Wolf (1995) / Nemenman et al. (2002, eq. 9) against a seeded Monte Carlo
    mean, within five of its standard errors."""
    draws = np.random.default_rng(0).dirichlet(alpha, 200_000)
    h = entropy(draws)
    assert abs(float(dirichlet_entropy(np.array(alpha))) - h.mean()) < 5 * h.std() / np.sqrt(h.size)


def _sample(seed=0, n_items=600, n_votes=5):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet([1.2, 0.6, 0.4], n_items)  # recipes/population_target.py's 'dirichlet'
    return p, rng.multinomial(n_votes, p)


def test_a_cut_on_vote_entropies_regresses_to_the_mean_and_the_population_cut_corrects_it():
    """Seeded simulation with known population distributions (5 votes, 5 bins): the items of
    the lowest vote-entropy bin are less agreed in the population than their votes show, and
    the bins differ less in population entropy than in vote entropy; the bins cut on
    population_entropy state their items' mean population entropy closer
    (recipes/agreement_bins_cut.py prints the larger table)."""
    p, x = _sample()
    h_pop = entropy(p)
    stated_error = {}
    for cut, h in (("votes", agreement_entropy(x / 5)), ("population", population_entropy(x))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateInputWarning)  # tied vote entropies merge
            edges, idx, _, _ = agreement_bins(h, 5)
        stated = np.array([h[idx == b].mean() for b in range(edges.size - 1)])
        actual = np.array([h_pop[idx == b].mean() for b in range(edges.size - 1)])
        if cut == "votes":  # the bins' population entropies are closer together than stated
            assert actual[0] > stated[0]
            assert actual[-1] - actual[0] < stated[-1] - stated[0]
        size = np.bincount(idx) / idx.size
        stated_error[cut] = float((size * np.abs(stated - actual)).sum())
    assert stated_error["population"] < stated_error["votes"] / 2


def test_report_cut_on_the_population_estimate_is_labelled_and_votes_stay_the_default():
    p, x = _sample(n_items=40)
    votes = Votes.from_counts(x, labels=["a", "b", "c"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        default = build_report(votes, {"m": p}, bins=3, n_boot=0, ceiling=False,
                               quality_methods=(), population="never")
        rep = build_report(votes, {"m": p}, bins=3, n_boot=0, ceiling=False,
                           quality_methods=(), population="never", bin_on="population")
    assert default.binning.cut_on == "votes" and rep.binning.cut_on == "population"
    h = population_entropy(x)
    edges, idx, _, _ = agreement_bins(h, 3)
    assert rep.binning.edges == edges.tolist()
    assert rep.binning.mean_entropy == [float(h[idx == b].mean()) for b in range(3)]
    with pytest.raises(InvalidValueError, match=r"bin_on must be one of \['votes', "
                                                r"'population'\]; got 'model'"):
        build_report(votes, {"m": p}, n_boot=0, bin_on="model")


def test_soft_labels_cannot_be_cut_on_the_population_estimate():
    soft = SoftLabels([[0.9, 0.1], [0.5, 0.5], [0.2, 0.8]], labels=LabelSet(["a", "b"]),
                      item_ids=np.array(["x", "y", "z"], dtype=object))
    with pytest.raises(InputError, match="bin_on='population' .* soft labels only"):
        build_report(soft, {"m": [[0.8, 0.2], [0.5, 0.5], [0.3, 0.7]]}, bins=1, n_boot=0,
                     bin_on="population")
