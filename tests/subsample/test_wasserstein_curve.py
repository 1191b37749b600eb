"""The Wasserstein curve of ordered scales: kernel against scipy, invariants, CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.stats import wasserstein_distance

from annokit.cli import main
from annokit.core.labels import LabelSet
from annokit.core.votes import Votes
from annokit.subsample import engine as eng
from annokit.subsample import subsampling_curve


@pytest.mark.parametrize("values", [[0, 1, 2, 3], [1, 2, 4, 8]])
def test_kernel_equals_scipy_wasserstein_distance(values):
    rng = np.random.default_rng(4)
    full = rng.integers(0, 9, size=(30, 4)) + 1
    kk = np.full(30, 5)
    x = np.stack([rng.multinomial(5, row / row.sum(), size=3) for row in full], axis=1)  # reps
    x = np.ascontiguousarray(np.moveaxis(x, -1, 0))  # (labels, reps, items)
    ref = eng.Reference(full, kl_smoothing=0.5, values=np.asarray(values, float))
    _, res = eng.count_metrics(x, kk, ref, which=("wasserstein",))
    p = full / full.sum(axis=1, keepdims=True)
    for r in range(3):
        expected = [wasserstein_distance(values, values, x[:, r, i] / 5, p[i])
                    for i in range(30)]
        np.testing.assert_allclose(res[0, r], expected, rtol=1e-12, atol=1e-15)


def _votes(scale, names=("1", "2", "3", "4", "5"), seed=2):
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(20, rng.dirichlet(np.ones(len(names)), size=1)[0], size=25)
    return Votes.from_counts(counts, labels=LabelSet(list(names), scale=scale))


def test_curve_reaches_zero_and_two_labels_equal_tvd():
    curve = subsampling_curve(_votes("ordinal"), [1, 5, 20], reps=30, rng=0)
    w = curve.values["wasserstein"].mean(axis=0)
    assert w[-1] == pytest.approx(0.0, abs=1e-6) and w[0] > w[1] > w[2]
    two = subsampling_curve(_votes("ordinal", names=("no", "yes")), [1, 3, 7], reps=20, rng=1)
    assert two.values["wasserstein"] == pytest.approx(two.values["tvd"], abs=1e-6)
    assert "wasserstein" not in subsampling_curve(_votes("nominal"), [1, 5], reps=5,
                                                  rng=0).values


def test_interval_curve_uses_the_label_numbers():
    ordinal = subsampling_curve(_votes("ordinal", names=("0", "2")), [1, 3], reps=20, rng=3)
    interval = subsampling_curve(_votes("interval", names=("0", "2")), [1, 3], reps=20, rng=3)
    assert interval.values["wasserstein"] == pytest.approx(2 * ordinal.values["wasserstein"],
                                                           abs=1e-6)


def test_cli_json_carries_the_scale_and_the_wasserstein_curve(tmp_path):
    path = tmp_path / "v.csv"
    _votes("nominal").to_frame().to_csv(path, index=False)
    run = CliRunner().invoke
    out = json.loads(run(main, ["subsample", str(path), "--scale", "ordinal", "--k", "1,5",
                                "--reps", "10", "--json", "--target", "pool"]).stdout)
    assert out["scale"] == "ordinal" and "wasserstein_mean" in out["curve"][0]
    plain = json.loads(run(main, ["subsample", str(path), "--k", "1,5", "--reps", "10",
                                  "--json", "--target", "pool"]).stdout)
    assert plain["scale"] == "nominal" and "wasserstein_mean" not in plain["curve"][0]
