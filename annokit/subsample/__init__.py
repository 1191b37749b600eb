"""How many annotations are enough: subsampling curves, the split-half ceiling, extrapolation.

Modules, from the ground up: :mod:`~annokit.subsample.engine` (vectorised
draws and the per-draw distances), :mod:`~annokit.subsample.draw` (k votes per
item without replacement), :mod:`~annokit.subsample.extrapolate` (a
Dirichlet-multinomial fitted to the votes, for k beyond those collected),
:mod:`~annokit.subsample.split_half` (the human ceiling),
:mod:`~annokit.subsample.curves` (curves), :mod:`~annokit.subsample.recommend` (the
recommended k, with the defaults of :mod:`~annokit.subsample.defaults`) and
:mod:`~annokit.subsample.extrapolation_check`. Everything public is re-exported here.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from annokit.subsample.defaults import (
    EPSILON,
    INTERVAL,
    REPS,
    SHORT,
    TARGET,
    TARGETS,
    default_ks,
)

#: Public name -> module, imported on first use (PEP 562), so the command line can read
#: :mod:`annokit.subsample.defaults` without importing pandas.
_LAZY = {
    "CURVE_KEYS": "curves", "SubsampleCurve": "curves", "subsampling_curve": "curves",
    "CountSubsample": "draw", "subsample_counts": "draw", "subsample_votes": "draw",
    "DirichletMultinomial": "extrapolate", "ExtrapolatedCurve": "extrapolate",
    "ExtrapolationCheck": "extrapolation_check", "extrapolation_check": "extrapolation_check",
    "Recommendation": "recommend", "curve_summary": "recommend", "how_many": "recommend",
    "recommend_k": "recommend",
    "HistogramDivergence": "split_half", "SplitHalf": "split_half",
    "distce_histogram_divergence": "split_half", "split_half": "split_half",
}


class _Package(types.ModuleType):
    """The package's module type: ``split_half`` names the function, never its module.

    Importing a submodule sets the package's attribute of its name to the module; for
    ``annokit.subsample.split_half`` that would shadow the public function whenever the
    module is imported (``from annokit.subsample.split_half import SplitHalf``) before the
    function is looked up here. The module stays reachable through ``sys.modules``.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "split_half" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'annokit.subsample' has no attribute {name!r}")
    import importlib

    module = importlib.import_module(f"annokit.subsample.{_LAZY[name]}")
    # bind every public name of the module at once
    for public, where in _LAZY.items():
        if where == _LAZY[name]:
            globals()[public] = getattr(module, public)
    return globals()[name]


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "CURVE_KEYS",
    "EPSILON",
    "INTERVAL",
    "REPS",
    "SHORT",
    "TARGET",
    "TARGETS",
    "CountSubsample",
    "DirichletMultinomial",
    "ExtrapolatedCurve",
    "ExtrapolationCheck",
    "HistogramDivergence",
    "Recommendation",
    "SplitHalf",
    "SubsampleCurve",
    "curve_summary",
    "default_ks",
    "distce_histogram_divergence",
    "extrapolation_check",
    "how_many",
    "recommend_k",
    "split_half",
    "subsample_counts",
    "subsample_votes",
    "subsampling_curve",
]
