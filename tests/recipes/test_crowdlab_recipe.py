"""recipes/crowdlab_consensus.py: CROWDLAB (Goh et al. 2022) beside majority vote, Dawid-Skene
and cleanlab on the crowd sets with gold."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from _shared import DATA_ROOT

ROOT = Path(__file__).resolve().parents[2]


def test_recipe_prints_one_row_per_set(capsys):
    """One seed on bluebirds (Welinder et al. 2010), without cleanlab (tests/quality/
    test_crowdlab.py compares with it): the row has every column."""
    if not (DATA_ROOT / "bluebirds").exists():
        pytest.skip(f"shared data not found at {DATA_ROOT}")
    spec = importlib.util.spec_from_file_location("crowdlab_consensus",
                                                  ROOT / "recipes" / "crowdlab_consensus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--data", str(DATA_ROOT), "--sets", "bluebirds", "--seeds", "1",
                        "--no-cleanlab"]) == 0
    row = [line for line in capsys.readouterr().out.splitlines()
           if line.startswith("| bluebirds")][0]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert len(cells) == 1 + len(module.COLUMNS) + 1
    assert cells[5] == "n/a" and all(c[0] == "0" for c in cells[1:5] + cells[6:])
