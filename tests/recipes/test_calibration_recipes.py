"""Published numbers reproduced by the issue-3 recipes (Baan et al. 2022; Nie et al. 2020)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from _shared import DATA_ROOT

RECIPES = Path(__file__).resolve().parents[2] / "recipes"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, RECIPES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _need_data(*parts):
    path = DATA_ROOT.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not found at {path} (set ANNOKIT_TEST_DATA)")


@pytest.fixture(scope="module")
def baan():
    _need_data("chaosnli_predictions_baan2022")
    _need_data("chaosnli", "chaosNLI_snli.jsonl")
    module = _load("baan2022_table1")
    result = module.compute(DATA_ROOT)
    return module, result, module.summary(result)


# (model, metric, paper value, tolerance): Table 1, mean over seeds 0-2, within 0.01.
TABLE1 = [
    pytest.param("roberta", "accuracy", 0.74, 0.01, id="baan2022_table1_accuracy"),
    pytest.param("roberta", "ece", 0.14, 0.01, id="baan2022_table1_ece"),
    pytest.param("roberta", "rank_cs", 0.62, 0.01, id="baan2022_table1_rankcs"),
    pytest.param("roberta", "ent_ce", 0.30, 0.01, id="baan2022_table1_entce"),
    pytest.param("roberta", "dist_ce", 0.26, 0.01, id="baan2022_table1_distce"),
    pytest.param("roberta_ts", "ece", 0.03, 0.01, id="baan2022_table1_ts_ece"),
    pytest.param("roberta_ts", "ent_ce", 0.21, 0.01, id="baan2022_table1_ts_entce"),
    pytest.param("roberta_ts", "dist_ce", 0.22, 0.01, id="baan2022_table1_ts_distce"),
    pytest.param("oracle", "ece", 0.25, 0.01, id="baan2022_table1_oracle_ece"),
    pytest.param("oracle", "accuracy", 1.0, 0.0, id="baan2022_table1_oracle_accuracy"),
    pytest.param("oracle", "rank_cs", 1.0, 0.0, id="baan2022_table1_oracle_rankcs"),
    pytest.param("oracle", "ent_ce", 0.0, 0.0, id="baan2022_table1_oracle_entce"),
    pytest.param("oracle", "dist_ce", 0.0, 0.0, id="baan2022_table1_oracle_distce"),
    # Table 5 (Appendix D), classwise-ECE: RoBERTa 10%, oracle 16%. The issue asks for
    # "about 10%" and "about 15%"; we get 10.0% and 15.0% (see the recipe notes).
    pytest.param("roberta", "classwise_ece", 0.10, 0.01, id="baan2022_table5_classwise_roberta"),
    pytest.param("oracle", "classwise_ece", 0.16, 0.01, id="baan2022_table5_classwise_oracle"),
]


@pytest.mark.parametrize("model, metric, paper, tol", TABLE1)
def test_baan2022_table1(baan, model, metric, paper, tol):
    _, _, table = baan
    ours = table[model][metric][0]
    print(f"{model} {metric}: ours {ours:.4f}, paper {paper}")
    assert abs(ours - paper) <= tol + 1e-12


def test_baan2022_oracle_is_exactly_calibrated_to_humans(baan):
    _, result, _ = baan
    for key in ("ent_ce", "ent_ce_signed", "dist_ce", "jsd", "kl"):
        assert result["oracle"][key] == 0.0


def test_baan2022_table5_classwise_ts_not_reproduced(baan):
    """The paper's 5% for RoBERTa-TS is not what the released predictions give at T = 2;
    the recipe says so. Pin that we report the files' value, not the paper's."""
    _, result, table = baan
    ours = table["roberta_ts"]["classwise_ece"][0]
    print(f"classwise-ECE RoBERTa-TS: ours {ours:.4f}, paper 0.05")
    assert 0.06 < ours < 0.10
    assert all(m["temperature"] == 2.0 for m in result["roberta_ts"])


def test_baan2022_setup(baan):
    _, result, _ = baan
    assert result["n_items"] == [1514] * 3
    assert result["n_unmatched_predictions"] == [2 * 4921 - 1514] * 3
    assert result["n_ties"] == 14
    assert all(1.8 <= t <= 2.2 for t in result["oracle_temperature"])


CHANCE = [
    pytest.param("alphanli", 0.3205, 0.406, id="chaosnli2020_table5_chance_alphanli"),
    pytest.param("snli", 0.383, 0.5457, id="chaosnli2020_table5_chance_snli"),
    pytest.param("mnli_m", 0.3023, 0.3559, id="chaosnli2020_table5_chance_mnli_m"),
]


@pytest.fixture(scope="module")
def chance():
    _need_data("chaosnli")
    return _load("chaosnli_table5_chance").compute(DATA_ROOT)


@pytest.mark.parametrize("subset, jsd, kl", CHANCE)
def test_chaosnli2020_table5_chance(chance, subset, jsd, kl):
    r = chance[subset]
    print(f"{subset}: JSD ours {r['jsd']:.5f} paper {jsd}; KL ours {r['kl']:.5f} paper {kl}")
    assert abs(r["jsd"] - jsd) <= 0.0005
    assert abs(r["kl"] - kl) <= 0.0005
    # the suite's built-in chance row is the same computation
    assert r["jsd_baseline_row"] == pytest.approx(r["jsd"], abs=1e-15)
    assert r["kl_baseline_row"] == pytest.approx(r["kl"], abs=1e-15)


@pytest.mark.parametrize("name", ["baan2022_table1", "chaosnli_table5_chance"])
def test_recipe_scripts_run(name):
    _need_data("chaosnli")
    _need_data("chaosnli_predictions_baan2022")
    proc = subprocess.run([sys.executable, str(RECIPES / f"{name}.py"), "--data", str(DATA_ROOT)],
                          check=False, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "paper" in proc.stdout and "ours" in proc.stdout.lower()
