"""recipes/plan_replay.py: the replay table on ChaosNLI (plan against uniform allocation)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from _shared import DATA_ROOT

ROOT = Path(__file__).resolve().parents[2]


def _recipe():
    spec = importlib.util.spec_from_file_location("plan_replay", ROOT / "recipes" / "plan_replay.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_recipe_prints_the_comparison_table(capsys):
    """A quick run: 300 SNLI items, one seed, goal majority."""
    if not (DATA_ROOT / "chaosnli" / "chaosNLI_snli.jsonl").exists():
        pytest.skip(f"shared data not found at {DATA_ROOT}")
    module = _recipe()
    assert module.main(["--data", str(DATA_ROOT), "--sets", "snli", "--goals", "majority",
                        "--seeds", "0", "--items", "300", "--priors", "fitted"]) == 0
    out = capsys.readouterr().out
    assert "## ChaosNLI-SNLI, goal majority, prior fitted" in out
    methods = [line.split()[0] for line in out.splitlines()
               if line.startswith(("plan ", "uniform-"))]
    assert methods == ["plan", "uniform-10", "uniform-13", "uniform-15", "uniform-18",
                       "uniform-20"]
    assert "plan >= uniform-15 on every seed:" in out


def test_recipe_with_activelab_keeps_the_human_target(capsys):
    """ActiveLab (Goh and Mueller 2023) on 200 SNLI items with Baan et al.'s predictions: the
    uniform rows, scored against the 100-vote human majority, do not move with the model."""
    if not (DATA_ROOT / "chaosnli_predictions_baan2022").exists():
        pytest.skip(f"Baan et al.'s predictions not found under {DATA_ROOT}")
    module = _recipe()
    assert module.main(["--data", str(DATA_ROOT), "--sets", "snli", "--goals", "majority",
                        "--seeds", "0", "--items", "200", "--budget", "3",
                        "--priors", "uniform,activelab"]) == 0
    out = capsys.readouterr().out
    assert "## ChaosNLI-SNLI, goal majority, prior activelab" in out
    assert "target check: uniform rows the same with and without the model: yes" in out


def test_unknown_set_is_a_usage_error():
    with pytest.raises(SystemExit) as exc:
        _recipe().main(["--sets", "nope"])
    assert exc.value.code == 2
