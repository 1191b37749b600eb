"""Bias and interval coverage of the calibration estimators, on populations whose calibration is known.

    python recipes/estimator_bias.py [--samples 200] [--boot 200] [--sizes 300,1000]
                                     [--population 2000000] [--seed 0]

Three labels. Each item has a true label distribution ``r`` (``flat``: Dirichlet(1, 1, 1);
``peaked``: Dirichlet(0.3, 0.3, 0.3), mostly clear-cut items) and one label ``y ~ r``, the
hard label the estimators compare with. Two models:

- ``calibrated``: ``q = r``. Then ``P(y = j | q) = q_j`` for every class, so every
  calibration error below is 0 in the population (top-label and classwise, binned or
  smoothed), except MacroCE, which is not a distance to the calibration curve.
- ``overconfident``: ``q = r^2 / sum(r^2)`` (sharper than the truth, ``y ~ r`` still).

Population value of each estimator: 0 for the calibrated model (analytic, MacroCE aside);
otherwise the estimator computed on ``--population`` items of the same population (the
value it converges to; for ``ece_debiased`` its unbiased estimate, on the squared scale).
Each cell then gives, over ``--samples`` samples of ``n`` items: the mean estimate, the
relative bias ``(mean - population) / population`` (absolute bias where the population
value is 0), and the share of 95% intervals (``evaluate(..., n_boot=--boot)``, the method
the registry names for the metric) that contain the population value.

The tables are in docs/guides/trust.md. Seeded.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from annokit.metrics.engine import evaluate
from annokit.metrics.records import AlignedRecords
from annokit.metrics.registry import REGISTRY, compute

K = 3
METRICS = ("ece", "ece_adaptive", "ece_debiased", "ece_sweep", "smooth_ece", "kde_ece", "tace",
           "macro_ce")
#: Estimators whose population value is 0 for a calibrated model.
ZERO_WHEN_CALIBRATED = frozenset(METRICS) - {"macro_ce"}
CONCENTRATION = {"flat": 1.0, "peaked": 0.3}


def draw(population: str, model: str, n: int, rng: np.random.Generator
         ) -> tuple[np.ndarray, np.ndarray]:
    """The model's probabilities and the items' labels (``y ~ r``)."""
    r = rng.dirichlet(np.full(K, CONCENTRATION[population]), n)
    q = r if model == "calibrated" else r**2 / np.sum(r**2, axis=1, keepdims=True)
    y = (r.cumsum(axis=1) < rng.random((n, 1))).sum(axis=1).clip(0, K - 1)
    return q, y


def population_values(population: str, model: str, size: int, rng: np.random.Generator
                      ) -> dict[str, float]:
    q, y = draw(population, model, size, rng)
    out = {}
    for m in METRICS:
        if model == "calibrated" and m in ZERO_WHEN_CALIBRATED:
            out[m] = 0.0
        else:
            out[m] = float(compute(m, q, hard=y))
    return out


def cell(population: str, model: str, n: int, truth: dict[str, float], samples: int,
         boot: int, rng: np.random.Generator) -> dict[str, tuple[float, float, str]]:
    """Per metric: mean estimate, coverage of the interval, the interval's method."""
    est: dict[str, list[float]] = {m: [] for m in METRICS}
    hits = dict.fromkeys(METRICS, 0)
    counted = dict.fromkeys(METRICS, 0)
    method = {}
    for s in range(samples):
        q, y = draw(population, model, n, rng)
        rec = AlignedRecords.from_arrays(q, np.eye(K, dtype=np.int64)[y])
        res = evaluate(rec, metrics=METRICS, n_boot=boot, seed=s, baselines=False)
        for m in METRICS:
            ci = res.intervals[m]
            est[m].append(res.metrics[m])
            method[m] = ci.method
            if ci.low is not None and np.isfinite(ci.low):
                counted[m] += 1
                hits[m] += ci.low <= truth[m] <= ci.high
    return {m: (float(np.nanmean(est[m])),
                hits[m] / counted[m] if counted[m] else float("nan"), method[m])
            for m in METRICS}


def bias(mean: float, value: float) -> str:
    if value == 0:
        return f"{mean - value:+.4f} (abs.)"
    return f"{(mean - value) / abs(value):+.0%}"


def table(population: str, model: str, truth: dict[str, float],
          cells: dict[int, dict[str, tuple[float, float, str]]], samples: int, boot: int) -> None:
    sizes = list(cells)
    print(f"\n## {population} population, {model} model; {samples} samples, {boot} replicates")
    print("| metric | unit | interval | population |" + "".join(
        f" mean {n} | bias {n} | coverage {n} |" for n in sizes))
    print("|" + "---|" * (4 + 3 * len(sizes)))
    for m in METRICS:
        row = f"| {m} | {REGISTRY[m].unit} | {cells[sizes[0]][m][2]} | {truth[m]:.4f} |"
        for n in sizes:
            mean, cover, _ = cells[n][m]
            row += f" {mean:.4f} | {bias(mean, truth[m])} | " + (
                "-" if np.isnan(cover) else f"{cover:.2f}") + " |"
        print(row)
    worst = max(abs(cells[n]["ece_debiased"][0] - truth["ece_debiased"]) for n in sizes)
    print(f"\nece_debiased (squared L2 scale): largest |mean - population| {worst:.4f} "
          f"({'within' if worst <= 0.003 else 'NOT within'} 0.003)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=200, help="samples per cell (default 200)")
    ap.add_argument("--boot", type=int, default=200, help="bootstrap replicates (default 200)")
    ap.add_argument("--sizes", default="300,1000", help="items per sample (default 300,1000)")
    ap.add_argument("--population", type=int, default=2_000_000,
                    help="items of the sample that gives the population values")
    ap.add_argument("--populations", default="flat,peaked", help="default flat,peaked")
    ap.add_argument("--models", default="calibrated,overconfident",
                    help="default calibrated,overconfident")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    warnings.simplefilter("ignore")  # one label per item: the engine notes it
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    for population in args.populations.split(","):
        for model in args.models.split(","):
            truth = population_values(population, model, args.population, rng)
            cells = {n: cell(population, model, n, truth, args.samples, args.boot, rng)
                     for n in sizes}
            table(population, model, truth, cells, args.samples, args.boot)
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
