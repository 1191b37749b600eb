"""How often do ``evaluate``'s 95% intervals contain the population value? A seeded simulation.

    python recipes/interval_coverage.py [--samples 200] [--boot 200] [--sizes 300,1000]
                                        [--population 400000] [--seed 0]

Three labels, 10 votes per item, the hard label the majority of the item's votes (ties:
the first label, annokit's default). Two populations of human distributions:

- ``flat``: every item's distribution drawn from Dirichlet(1, 1, 1) (much disagreement);
- ``peaked``: 70% of the items Dirichlet(6, 1, 1) on a random label (high agreement),
  30% Dirichlet(2, 2, 2).

Two models per population: ``calibrated`` (softmax of ``T log p + noise``, with ``T``
fitted on the population so that the model's log-likelihood of the majority is best,
which leaves its ECE near 0) and ``overconfident`` (``2.5 T``). Every metric's population
value is the metric computed on ``--population`` items drawn from the same population
(the same binning: 10 equal-width bins, equal-mass for ``ece_adaptive``). Each cell gives,
over ``--samples`` samples, the share of samples whose interval contains that value:
``before`` with the percentile bootstrap of the point estimate (annokit's interval for
every metric before issue 32), ``after`` with the interval ``evaluate`` reports now (its
method: ``percentile``, ``bounds`` or ``none``, :attr:`annokit.metrics.registry.MetricSpec.interval`).
``ece_debiased`` (not in the default list) is added to the metrics evaluated.

The tables are in docs/guides/trust.md. About 1.5 s per sample of 1,000 items with 200
replicates on one core.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from annokit.core.resample import percentile_interval
from annokit.metrics.engine import evaluate
from annokit.metrics.records import AlignedRecords
from annokit.metrics.registry import REGISTRY, available

K, VOTES = 3, 10
METRICS = (*available(True, True, n_labels=K), "ece_debiased")


def human(population: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """Each item's population distribution over the K labels."""
    if population == "flat":
        return rng.dirichlet(np.ones(K), n)
    peaked = rng.dirichlet([6.0, 1.0, 1.0], n)
    peaked = np.take_along_axis(peaked, np.argsort(rng.random((n, K)), axis=1), axis=1)
    mixed = rng.dirichlet([2.0, 2.0, 2.0], n)
    return np.where((rng.random(n) < 0.7)[:, None], peaked, mixed)


def draw(population: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray,
                                                                       np.ndarray]:
    """Population distributions, vote counts and the model's noise of ``n`` items."""
    p = human(population, n, rng)
    counts = rng.multinomial(VOTES, p)
    return p, counts, rng.normal(0.0, 0.5, (n, K))


def model(p: np.ndarray, noise: np.ndarray, temperature: float) -> np.ndarray:
    """softmax(T log p + noise)."""
    z = temperature * np.log(np.clip(p, 1e-6, None)) + noise
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def records(probs: np.ndarray, counts: np.ndarray) -> AlignedRecords:
    return AlignedRecords.from_arrays(probs, counts)


def fit_temperature(p: np.ndarray, counts: np.ndarray, noise: np.ndarray) -> float:
    """The T whose model has the lowest ECE against the majority on the population sample."""
    grid = np.linspace(1.0, 4.0, 31)
    ece = [evaluate(records(model(p, noise, t), counts), metrics="ece",
                    baselines=False).metrics["ece"] for t in grid]
    return float(grid[int(np.argmin(ece))])


def population_values(population: str, size: int, rng: np.random.Generator
                      ) -> dict[str, tuple[float, dict[str, float]]]:
    """``{model: (T, {metric: population value})}``."""
    p, counts, noise = draw(population, size, rng)
    t = fit_temperature(p, counts, noise)
    out = {}
    for name, temp in (("calibrated", t), ("overconfident", 2.5 * t)):
        res = evaluate(records(model(p, noise, temp), counts), metrics=METRICS,
                       baselines=False)
        out[name] = (temp, dict(res.metrics))
    return out


def coverage(population: str, temp: float, truth: dict[str, float], n: int, samples: int,
             boot: int, rng: np.random.Generator) -> dict[str, tuple[float, float, float, str]]:
    """Per metric: coverage before and after, mean estimate, the interval method."""
    hits_before = {m: 0 for m in METRICS}
    hits_after = {m: 0 for m in METRICS}
    counted = {m: 0 for m in METRICS}
    estimates: dict[str, list[float]] = {m: [] for m in METRICS}
    method: dict[str, str] = {}
    for s in range(samples):
        p, counts, noise = draw(population, n, rng)
        res = evaluate(records(model(p, noise, temp), counts), metrics=METRICS, n_boot=boot,
                       seed=s, baselines=False)
        for m in METRICS:
            ci, value = res.intervals[m], truth[m]
            estimates[m].append(res.metrics[m])
            old = percentile_interval(ci.estimate, ci.replicates, ci.confidence)
            hits_before[m] += old.low <= value <= old.high
            method[m] = ci.method
            if ci.method != "none":
                counted[m] += 1
                hits_after[m] += ci.low <= value <= ci.high
    return {m: (hits_before[m] / samples,
                hits_after[m] / counted[m] if counted[m] else float("nan"),
                float(np.mean(estimates[m])), method[m]) for m in METRICS}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=200, help="samples per cell (default 200)")
    ap.add_argument("--boot", type=int, default=200, help="bootstrap replicates (default 200)")
    ap.add_argument("--sizes", default="300,1000", help="items per sample (default 300,1000)")
    ap.add_argument("--population", type=int, default=400_000,
                    help="items of the sample that gives the population values")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--populations", default="flat,peaked", help="default flat,peaked")
    ap.add_argument("--models", default="calibrated,overconfident",
                    help="default calibrated,overconfident")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    warnings.simplefilter("ignore")  # tied majorities are expected with 10 votes
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    for population in args.populations.split(","):
        truth = population_values(population, args.population, rng)
        for name, (temp, values) in truth.items():
            if name not in args.models.split(","):
                continue
            cells = {n: coverage(population, temp, values, n, args.samples, args.boot, rng)
                     for n in sizes}
            print(f"\n## {population} population, {name} model (T = {temp:.2f}); coverage of "
                  f"the 95% interval over {args.samples} samples, {args.boot} replicates")
            head = "| metric | method | population |" + "".join(
                f" mean est. {n} | before {n} | after {n} |" for n in sizes)
            print(head)
            print("|" + "---|" * (3 + 3 * len(sizes)))
            for m in METRICS:
                row = f"| {m} | {cells[sizes[0]][m][3]} | {values[m]:.4f} |"
                for n in sizes:
                    before, after, mean, _ = cells[n][m]
                    row += f" {mean:.4f} | {before:.2f} | " + (
                        "-" if np.isnan(after) else f"{after:.2f}") + " |"
                print(row)
    print(f"\n{time.perf_counter() - start:.0f} s; units: "
          + ", ".join(f"{m} {REGISTRY[m].unit}" for m in ("ece", "ece_debiased")))


if __name__ == "__main__":
    main()
