"""The report's options: one frozen object, read by :func:`annokit.report.build.build` and by the
report workflow (:func:`annokit.report.workflow.run_report`), described once here."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Union

from annokit.subsample.defaults import EPSILON, REPS, TARGET

__all__ = ["BIN_ON", "POPULATION_FIGURES", "POPULATION_VOTES", "ReportOptions"]

PathLike = Union[str, "os.PathLike[str]"]

#: What the agreement bins are cut on (``ReportOptions.bin_on``).
BIN_ON = ("votes", "population")
#: When the population-target figures stand beside the votes-target ones
#: (``ReportOptions.population``).
POPULATION_FIGURES = ("auto", "always", "never")
#: ``population="auto"`` adds the population-target figures when the median number of votes
#: per item is below this.
POPULATION_VOTES = 20


@dataclass(frozen=True)
class ReportOptions:
    """Everything a report is asked besides its votes and models' predictions.

    Parameters
    ----------
    bins : int or sequence of float, default 5
        Agreement bins: the number of equal-count quantile bins of each item's human entropy,
        or explicit edges in nats (:func:`annokit.metrics.records.agreement_bins`).
    bin_on : {"votes", "population"}, default "votes"
        The entropy the bins are cut on: that of each item's collected votes (the published
        report), or the posterior mean of the entropy of its population distribution under a
        prior fitted to all items' votes (:func:`annokit.report.binning.population_entropy`),
        which corrects the regression to the mean of a cut on noisy vote entropies.
    n_boot : int, default 1000
        Poisson-bootstrap replicates over items (0: no intervals).
    confidence : float, default 0.95
        Coverage of the intervals.
    n_bins : int, default 10
        Equal-width confidence bins of the binned metrics (ECE, SMECE, ...) and of the
        reliability diagrams.
    metrics : None, "all" or sequence of str
        Registry names to report; None: the scale's default set; "all" (the workflow): every
        metric that applies to the labels' scale.
    ceiling : bool, default True
        Compute the split-half human ceiling (needs items with >= 2 votes).
    votes_per_half : int, optional
        Votes per half in the ceiling (default: half the median number of votes per item);
        items with fewer than twice that many votes are left out and counted.
    positive : str or int, optional
        Two labels only: the positive class of ``ece_binary``, ``mce_binary`` and the
        positive-class reliability diagrams, a label name or index (default: the second label).
    population : {"auto", "always", "never"}, default "auto"
        The population-target figures (:func:`annokit.metrics.engine.evaluate` with
        ``target="population"``) beside the votes-target ones, overall and per bin: "auto"
        when the median number of votes per item is below :data:`POPULATION_VOTES`.
    seed : int, default 0
        Seeds the bootstrap (with the item ids), the ceiling split, the population target's
        draws, the subsampling curve and the plan; the same seed gives the same report.
    title : str, optional
        Page title.
    quality_methods : sequence of str, default ("ds", "agreement")
        Annotator-quality scores (:func:`annokit.quality.annotator_scores`) reported when the
        votes carry annotator ids; empty to skip.
    pred_labels, id_field, on_missing, temperatures, fit_temperature_on
        How the models' prediction files are read and which temperature-scaled copies are
        added (:func:`annokit.report.inputs.load_models`).
    annotator_predictions : path, optional
        Predictions per (item, annotator): the per-annotator section
        (:func:`annokit.report.inputs.load_annotator_predictions`).
    subsample : None, "default" or sequence of int
        The "how many annotations are enough" curve at these k ("default": the default k);
        None: no curve.
    subsample_reps, epsilon, subsample_target
        Its repetitions, tolerance and target (:func:`annokit.report.inputs.subsampling_rows`).
    plan_budget : int, optional
        Add "Where the next votes would go" for this many more votes
        (:func:`annokit.report.inputs.plan_section`).
    plan_goal : {"majority", "distribution"}, default "majority"
    """

    bins: int | Sequence[float] = 5
    bin_on: str = "votes"
    n_boot: int = 1000
    confidence: float = 0.95
    n_bins: int = 10
    metrics: Sequence[str] | str | None = None
    ceiling: bool = True
    votes_per_half: int | None = None
    positive: int | str | None = None
    population: str = "auto"
    seed: int = 0
    title: str | None = None
    quality_methods: Sequence[str] = ("ds", "agreement")
    pred_labels: Sequence[str] | str | None = None
    id_field: str | None = None
    on_missing: str = "error"
    temperatures: Sequence[tuple[str, float]] = ()
    fit_temperature_on: Sequence[tuple[str, PathLike | Sequence[PathLike]]] = ()
    annotator_predictions: PathLike | None = None
    subsample: Sequence[int] | str | None = None
    subsample_reps: int = REPS
    epsilon: float | None = EPSILON
    subsample_target: str = TARGET
    plan_budget: int | None = None
    plan_goal: str = "majority"
