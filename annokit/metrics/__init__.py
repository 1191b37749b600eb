"""Metrics: agreement between annotators, divergences between distributions, calibration.

Names are re-exported lazily (PEP 562), so importing one submodule, such as
``annokit.metrics.agreement`` for ``annokit stats``, does not load the numba
kernels of the calibration metrics.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    # agreement between annotators
    "krippendorff_alpha": "agreement", "fleiss_kappa": "agreement", "AgreementResult": "agreement",
    # divergences between distributions
    "tvd": "annokit.core.divergence", "jensen_shannon_distance": "annokit.core.divergence",
    "kl_divergence": "annokit.core.divergence",
    # calibration against hard and soft labels
    "expected_calibration_error": "calibration", "max_calibration_error": "calibration",
    "classwise_calibration_error": "calibration", "soft_calibration_error": "calibration",
    "reliability_diagram": "calibration", "ReliabilityDiagram": "calibration",
    "CalibrationErrorAccumulator": "calibration",
    # calibration to the human distribution (Baan et al. 2022) and proper scores
    "entropy_calibration_error": "human", "rank_calibration_score": "human",
    "distribution_calibration_error": "human", "accuracy": "human", "brier_score": "human",
    "negative_log_likelihood": "human", "calibration_summary": "human", "SUMMARY_KEYS": "human",
    # intervals, the suite on aligned records, temperature scaling
    "bootstrap_ci": "bootstrap", "paired_bootstrap_diff": "bootstrap", "BootstrapResult": "bootstrap",
    "evaluate": "engine", "EvaluationResult": "engine",
    "fit_temperature": "temperature", "apply_temperature": "temperature",
}

#: Every lazy export (tests/test_public_api.py checks they agree).
__all__ = [
    "SUMMARY_KEYS",
    "AgreementResult",
    "BootstrapResult",
    "CalibrationErrorAccumulator",
    "EvaluationResult",
    "ReliabilityDiagram",
    "accuracy",
    "apply_temperature",
    "bootstrap_ci",
    "brier_score",
    "calibration_summary",
    "classwise_calibration_error",
    "distribution_calibration_error",
    "entropy_calibration_error",
    "evaluate",
    "expected_calibration_error",
    "fit_temperature",
    "fleiss_kappa",
    "jensen_shannon_distance",
    "kl_divergence",
    "krippendorff_alpha",
    "max_calibration_error",
    "negative_log_likelihood",
    "paired_bootstrap_diff",
    "rank_calibration_score",
    "reliability_diagram",
    "soft_calibration_error",
    "tvd",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'annokit.metrics' has no attribute {name!r}")
    path = module if module.startswith("annokit.") else f"annokit.metrics.{module}"
    return getattr(importlib.import_module(path), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
