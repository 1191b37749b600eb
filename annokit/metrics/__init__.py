"""Metrics: agreement between annotators, divergences between distributions, calibration.

Names are re-exported lazily (PEP 562), so importing one name, such as
``krippendorff_alpha`` (from ``annokit.core.agreement``), does not load the
numba kernels of the calibration metrics.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    # agreement between annotators
    "krippendorff_alpha": "annokit.core.agreement", "fleiss_kappa": "annokit.core.agreement",
    "AgreementResult": "annokit.core.agreement", "cohen_kappa": "annokit.core.agreement",
    # divergences between distributions
    "tvd": "annokit.core.divergence", "jensen_shannon_distance": "annokit.core.divergence",
    "kl_divergence": "annokit.core.divergence",
    # the metric registry and its mergeable states
    "REGISTRY": "registry", "MetricSpec": "registry", "compute": "registry",
    "available": "registry", "update_many": "states",
    # calibration against hard and soft labels
    "expected_calibration_error": "calibration", "max_calibration_error": "calibration",
    "classwise_calibration_error": "calibration", "soft_calibration_error": "calibration",
    "reliability_diagram": "calibration", "ReliabilityDiagram": "calibration",
    # calibration to the human distribution (Baan et al. 2022) and proper scores
    "entropy_calibration_error": "human_calibration", "rank_calibration_score": "human_calibration",
    "distribution_calibration_error": "human_calibration", "accuracy": "scores",
    "brier_score": "scores", "negative_log_likelihood": "scores",
    # intervals, the suite on aligned records, temperature scaling
    "bootstrap_ci": "annokit.core.resample", "paired_bootstrap_diff": "annokit.core.resample",
    "BootstrapResult": "annokit.core.resample",
    "evaluate": "engine", "EvaluationResult": "engine",
    "fit_temperature": "temperature", "apply_temperature": "temperature",
    # beyond nominal single-label data: ordered scales, two labels, multi-label, per annotator
    "ordinal_score": "ordinal", "binary_reliability": "binary", "BinaryReliability": "binary",
    "multilabel_scores": "multilabel", "update_states": "states_ext",
    "evaluate_annotators": "perspectivist", "read_annotator_predictions": "perspectivist",
    "AnnotatorEvaluation": "perspectivist",
}

#: Every lazy export (tests/test_public_api.py checks they agree).
__all__ = [
    "REGISTRY",
    "AgreementResult",
    "AnnotatorEvaluation",
    "BinaryReliability",
    "BootstrapResult",
    "EvaluationResult",
    "MetricSpec",
    "ReliabilityDiagram",
    "accuracy",
    "apply_temperature",
    "available",
    "binary_reliability",
    "bootstrap_ci",
    "brier_score",
    "classwise_calibration_error",
    "cohen_kappa",
    "compute",
    "distribution_calibration_error",
    "entropy_calibration_error",
    "evaluate",
    "evaluate_annotators",
    "expected_calibration_error",
    "fit_temperature",
    "fleiss_kappa",
    "jensen_shannon_distance",
    "kl_divergence",
    "krippendorff_alpha",
    "max_calibration_error",
    "multilabel_scores",
    "negative_log_likelihood",
    "ordinal_score",
    "paired_bootstrap_diff",
    "rank_calibration_score",
    "read_annotator_predictions",
    "reliability_diagram",
    "soft_calibration_error",
    "tvd",
    "update_many",
    "update_states",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'annokit.metrics' has no attribute {name!r}")
    path = module if module.startswith("annokit.") else f"annokit.metrics.{module}"
    return getattr(importlib.import_module(path), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
