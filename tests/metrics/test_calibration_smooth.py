"""Smooth ECE (``smooth_ece``, :mod:`annokit.metrics.calibration_smooth`), declared with its state.

Its reference is relplot's ``smECE`` (Błasiok & Nakkiran 2023, arXiv:2309.12236), the
package itself. The common checks of every registered metric (batching, weights,
invariances, invalid inputs, declaration) are in ``test_registry.py``, which reads the
registry.
"""

from __future__ import annotations

import numpy as np
import pytest
from metrics.test_calibration_estimators import model  # (pythonpath = tests)

from annokit.metrics import REGISTRY, available, calibration_smooth, compute
from annokit.metrics.registry import METRIC_MODULES


def test_declared_in_its_module_placed_after_ece_sweep_and_asked_by_name_only():
    assert "annokit.metrics.calibration_smooth" in METRIC_MODULES
    spec = REGISTRY["smooth_ece"]
    assert spec in calibration_smooth.METRICS and spec.state_class is calibration_smooth.SmoothECEState
    names = list(REGISTRY)
    assert names.index("smooth_ece") == names.index("ece_sweep") + 1
    assert spec.needs == {"hard"} and spec.lower_is_better and dict(spec.options) == {}
    assert "smooth_ece" not in available(True, True)
    assert "smooth_ece" in available(True, True, listing=False)


@pytest.mark.parametrize("seed, n, over", [(0, 300, 1.0), (1, 2000, 1.6), (2, 5000, 0.7),
                                           (3, 40000, 1.0)])
def test_smooth_ece_equals_relplot_smECE(seed, n, over):
    relplot = pytest.importorskip("relplot")
    probs, hard = model(seed, n, over=over)
    expected = relplot.smECE(probs.max(axis=1), (probs.argmax(axis=1) == hard).astype(float))
    # relplot adds 1e-4 to its unnormalised density (relative ~1e-4 / n); below a bandwidth
    # of 0.01 (the last case) its grid is binned from the state's finer one
    assert compute("smooth_ece", probs, hard=hard) == pytest.approx(expected, rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_uniform_model_every_item_correct_is_one_minus_one_over_k(k):
    """Every item correct at confidence 1/k: the residual is 1/k - 1 at one confidence."""
    probs = np.full((6, k), 1.0 / k)
    assert compute("smooth_ece", probs, probs, np.zeros(6, dtype=int)) == pytest.approx(
        1 - 1 / k, abs=1e-12)


def test_a_calibrated_model_scores_lower_than_an_overconfident_one():
    probs, hard = model(7, 4000, over=1.0)
    good = compute("smooth_ece", probs, hard=hard)
    probs, hard = model(7, 4000, over=2.5)
    assert good < compute("smooth_ece", probs, hard=hard)
