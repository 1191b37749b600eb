"""The population-target figures that stand beside the votes-target ones in the report.

With few votes per item the votes-target figures also measure the vote noise (at 5 votes the
JSD is about 1.5x its population value; :mod:`annokit.metrics.population`). When the median
number of votes per item is below :data:`~annokit.report.options.POPULATION_VOTES` (or when
asked), the report adds each model's mean-type metrics estimated against the distribution
infinitely many annotators would give, overall and per agreement bin, from one call of the
engine with ``target="population"`` (:func:`annokit.metrics.engine.evaluate`); the metrics it
does not estimate are listed with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from annokit.core.soft_votes import is_soft_only
from annokit.core.votes import Votes
from annokit.errors import InvalidValueError
from annokit.metrics.engine import EvaluationResult, evaluate
from annokit.metrics.records import AlignedRecords
from annokit.report.intervals import as_interval, bin_interval, noted
from annokit.report.model import BinMetrics, PopulationModel, PopulationSection
from annokit.report.options import POPULATION_FIGURES, POPULATION_VOTES, ReportOptions

__all__ = ["population_reason", "population_section"]

_METHOD = ("evaluate(target='population'): each metric's mean over items of its value against "
           "the item's population distribution, estimated from the votes under an empirical-Bayes "
           "prior given the model's probabilities, with a posterior-predictive bias correction "
           "(brier_soft: the exact unbiased estimator); intervals resample items, which carries "
           "the vote sampling too, and refit the prior to each replicate; accuracy and "
           "rank_cs, step functions of the population distribution, have none "
           "(annokit.metrics.population)")


def population_reason(votes: Votes, option: str) -> tuple[str | None, float]:
    """Why the population figures are shown (None: they are not), and the median votes."""
    if option not in POPULATION_FIGURES:
        raise InvalidValueError(f"population must be one of {list(POPULATION_FIGURES)}; got "
                                f"{option!r}")
    if is_soft_only(votes):
        return None, float("nan")
    median = float(np.median(votes.votes_per_item()))
    if option == "always":
        return "asked for (population='always')", median
    if option == "auto" and median < POPULATION_VOTES:
        return (f"the median number of votes per item, {median:g}, is below {POPULATION_VOTES}: "
                "the votes-target figures also measure the vote noise"), median
    return None, median


def population_section(votes: Votes, records: Mapping[str, AlignedRecords],
                       names: Sequence[str], groups: pd.Categorical, options: ReportOptions,
                       notes: list[str]) -> PopulationSection | None:
    """Every model's population-target figures, overall and per bin (None: not shown)."""
    from annokit.metrics.population import UNCHANGED, refusals

    reason, median = population_reason(votes, options.population)
    if reason is None:
        if options.population == "always" and is_soft_only(votes):
            notes.append("no population-target figures: soft labels only (no votes)")
        return None
    refused = refusals(names)
    wanted = [k for k in names if k not in refused and k not in UNCHANGED]
    if not wanted:
        notes.append("no population-target figures: none of the reported metrics is a mean "
                     "over items the population target estimates")
        return None
    first = next(iter(records))
    with noted(notes, "population target: "):
        result = evaluate(records if len(records) > 1 else records[first], wanted, by=groups,
                          n_boot=int(options.n_boot), seed=int(options.seed),
                          confidence=options.confidence, n_bins=options.n_bins,
                          baselines=False, target="population")
    per_model = result.models or {first: result}
    return PopulationSection(
        reason=reason, median_votes=median, method=_METHOD, metrics=wanted,
        not_computed={k: v for k, v in refused.items()},
        models=[_model(name, res, wanted, options.n_bins) for name, res in per_model.items()])


def _model(name: str, res: EvaluationResult, names: Sequence[str], n_bins: int) -> PopulationModel:
    per_bin = [BinMetrics(bin=b, n=g.n_items,
                          metrics={k: bin_interval(k, g.n_items, n_bins, g.metrics[k],
                                                   g.intervals.get(k)) for k in names})
               for b, g in enumerate(res.groups or [])]
    return PopulationModel(name=name, per_bin=per_bin,
                           metrics={k: as_interval(res.metrics[k], res.intervals.get(k))
                                    for k in names})
