"""recipes/estimator_bias.py: its table, and a small seeded version of its bias check of
``ece_debiased`` (Kumar et al. 2019: unbiased for the squared L2 binned calibration error)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import warnings
from pathlib import Path

import numpy as np

from annokit.metrics.registry import compute

ROOT = Path(__file__).resolve().parents[2]


def _recipe():
    spec = importlib.util.spec_from_file_location("estimator_bias",
                                                  ROOT / "recipes" / "estimator_bias.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_recipe_prints_a_table_per_population_and_model():
    recipe = _recipe()
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        recipe.main(["--samples", "1", "--boot", "5", "--sizes", "120",
                     "--population", "5000", "--populations", "flat"])
    text = out.getvalue()
    assert text.count("## flat population") == 2
    for name in recipe.METRICS:
        assert f"| {name} |" in text
    assert "| ece | probability | bounds | 0.0000 |" in text  # calibrated: analytic 0
    assert "ece_debiased (squared L2 scale)" in text


def test_ece_debiased_is_unbiased_where_the_plug_in_ece_is_not():
    """A calibrated model (population value 0 on both scales): over 40 samples of 300 items
    the mean of ece_debiased is within 0.003 of 0, the plug-in ECE's is not."""
    recipe = _recipe()
    rng = np.random.default_rng(5)
    debiased, plug_in = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(40):
            q, y = recipe.draw("flat", "calibrated", 300, rng)
            debiased.append(compute("ece_debiased", q, hard=y))
            plug_in.append(compute("ece", q, hard=y))
    assert abs(np.mean(debiased)) <= 0.003
    assert np.mean(plug_in) > 0.02
