"""recipes/interval_coverage.py runs and prints one coverage table per population and
model; the coverage itself is tested in tests/metrics/test_intervals.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_recipe_prints_a_coverage_table_per_population_and_model():
    out = subprocess.run([sys.executable, str(ROOT / "recipes" / "interval_coverage.py"),
                          "--samples", "2", "--boot", "10", "--sizes", "200",
                          "--population", "5000"], capture_output=True, text=True, check=True,
                         cwd=ROOT).stdout
    assert out.count("## ") == 4
    for name in ("| ece | bounds |", "| mce | none |", "| jsd | normal |",
                 "| ece_debiased | percentile |"):
        assert name in out
