"""How many annotations are enough: subsampling curves, the split-half ceiling, extrapolation.

Modules, from the ground up: :mod:`~annokit.subsample.engine` (vectorised
draws and the per-draw distances), :mod:`~annokit.subsample.draw` (k votes per
item without replacement), :mod:`~annokit.subsample.extrapolate` (a
Dirichlet-multinomial fitted to the votes, for k beyond those collected),
:mod:`~annokit.subsample.split_half` (the human ceiling),
:mod:`~annokit.subsample.curves` (curves and the recommendation) and
:mod:`~annokit.subsample.extrapolation_check`. Everything public is re-exported here.
"""

from __future__ import annotations

from annokit.subsample.curves import (
    CURVE_KEYS,
    Recommendation,
    SubsampleCurve,
    curve_summary,
    recommend_k,
    subsampling_curve,
)
from annokit.subsample.draw import CountSubsample, subsample_counts, subsample_votes
from annokit.subsample.extrapolate import DirichletMultinomial, ExtrapolatedCurve
from annokit.subsample.extrapolation_check import ExtrapolationCheck, extrapolation_check
from annokit.subsample.split_half import (
    HistogramDivergence,
    SplitHalf,
    distce_histogram_divergence,
    split_half,
)

__all__ = [
    "CURVE_KEYS",
    "CountSubsample",
    "DirichletMultinomial",
    "ExtrapolatedCurve",
    "ExtrapolationCheck",
    "HistogramDivergence",
    "Recommendation",
    "SplitHalf",
    "SubsampleCurve",
    "curve_summary",
    "distce_histogram_divergence",
    "extrapolation_check",
    "recommend_k",
    "split_half",
    "subsample_counts",
    "subsample_votes",
    "subsampling_curve",
]
