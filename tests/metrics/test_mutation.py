"""Mutation check: each formula has one implementation, so a wrong one reaches
every consumer.

Design. ``mutation_probe.py`` (beside this file) computes, for one formula of each kind
(a divergence: the Jensen-Shannon term; a per-item calibration quantity: the entropy gap
of EntCE; an order-aware one: the Wasserstein-1 term; a binning reduction: ECE's
``reduce_bins``), the values of every consumer: the named function, the registry state
(``compute``), the subsampling curve (the curves have no binned metric, so not for ECE),
the human ceiling, the report's value, and for Wasserstein the perspectivist pooled score.
The test computes them here, with the right formulas, then runs the probe in a fresh
process that replaces the four formulas by wrong ones before importing any consumer
(module attributes of :mod:`annokit.core.divergence_rows` and
:mod:`annokit.metrics._binning`, read when a consumer module binds them or a kernel
compiles), with an empty ``NUMBA_CACHE_DIR`` so that every numba kernel is compiled
again with the wrong formula (numba's cache would otherwise load kernels compiled with
the right one: it does not track the functions a kernel calls). All four are replaced in
the one process (one compile, about 40 s, instead of four): each consumer value is a
metric that reads one formula only, so a value that changes shows that its metric reads
the mutated formula, and one that did not change would be a copy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from metrics import mutation_probe  # tests/metrics/mutation_probe.py (pythonpath = tests)

import annokit

ROOT = Path(annokit.__file__).resolve().parents[1]


def test_a_wrong_formula_changes_every_consumer(tmp_path):
    right = {name: mutation_probe.consumers(name) for name in mutation_probe.FORMULAS}
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, mutation_probe.__file__, "--mutate"], env=env,
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    wrong = json.loads(run.stdout.strip().splitlines()[-1])
    for name, values in right.items():
        expected = {"named", "state", "ceiling", "report"} | (
            set() if name == "ece" else {"curve"}) | (
            {"perspectivist"} if name == "wasserstein" else set())
        assert set(values) == expected == set(wrong[name])
        unchanged = [c for c in values if wrong[name][c] == pytest.approx(values[c], rel=1e-6)]
        assert not unchanged, f"{name}: {unchanged} did not change with a wrong formula"
