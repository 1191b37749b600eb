"""What cutting the agreement bins on noisy vote entropies does, and the population cut.

    python recipes/agreement_bins_cut.py [--samples 10] [--items 1000] [--votes 3,5,10]

The report cuts its agreement bins at quantiles of each item's human entropy. With few votes
per item that entropy is a noisy estimate of the item's population entropy ``H(p_i)``, and a
cut on a noisy value selects on the noise: the lowest-entropy bin collects items whose votes
happen to agree, which are on average less agreed in the population than their votes show, and
the highest bin the reverse (regression to the mean). ``report --bin-on population`` cuts on
the posterior mean of ``H(p_i)`` under the population target's prior fitted to all items' votes
(:func:`annokit.report.binning.population_entropy`).

Simulation (seeded): three labels; the populations and the model of
``recipes/population_target.py`` (``dirichlet``: Dirichlet(1.2, 0.6, 0.4); ``mixture``: 55%
near-unanimous, 45% split items; a model close to ``p_i`` plus noise); ``n`` votes per item;
5 equal-count bins. The truth: 5 bins cut on the true ``H(p_i)``, each metric against ``p_i``.
Per cut, averaged over samples:

- ``bins``: the number of bins (repeated quantiles of tied vote entropies merge);
- ``entropy error``: the bins' stated mean entropy (the report's "mean entropy" column) against
  the mean population entropy of the same items, weighted by bin size;
- ``<metric> votes`` / ``<metric> pop.``: the mean over items of |the per-bin value of the
  item's bin (votes target / population target) - the true per-bin value of its true bin|.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from population_target import draw_model, draw_population  # noqa: E402

from annokit.core.soft_labels import entropy  # noqa: E402
from annokit.errors import DegenerateInputWarning  # noqa: E402
from annokit.metrics import kernels  # noqa: E402
from annokit.metrics.engine import evaluate  # noqa: E402
from annokit.metrics.records import AlignedRecords, agreement_bins, agreement_entropy  # noqa: E402
from annokit.metrics.registry import REGISTRY  # noqa: E402
from annokit.report.binning import population_entropy  # noqa: E402

METRICS = ("accuracy", "jsd", "kl")
BINS = 5


def cut_errors(counts: np.ndarray, q: np.ndarray, p: np.ndarray, h_cut: np.ndarray, *,
               seed: int) -> dict[str, float]:
    """The figures of one cut (module docstring) on one sample."""
    h_pop = entropy(p)
    truth_items = kernels.item_values(q, p, p.argmax(axis=1),
                                      tuple(REGISTRY[k].per_item for k in METRICS))
    _, true_idx, _, _ = agreement_bins(np.round(h_pop, 12), BINS)
    true_bins = np.array([truth_items[true_idx == b].mean(axis=0)
                          for b in range(true_idx.max() + 1)])
    edges, idx, _, _ = agreement_bins(h_cut, BINS)
    n_bins = edges.size - 1
    size = np.bincount(idx, minlength=n_bins) / idx.size
    stated = np.array([h_cut[idx == b].mean() for b in range(n_bins)])
    actual = np.array([h_pop[idx == b].mean() for b in range(n_bins)])
    out = {"bins": float(n_bins), "entropy error": float((size * np.abs(stated - actual)).sum())}
    rec = AlignedRecords.from_arrays(q, counts)
    groups = pd.Categorical(idx, categories=range(n_bins))
    for target, short in (("votes", "votes"), ("population", "pop.")):
        res = evaluate(rec, metrics=list(METRICS), by=groups, n_boot=0, seed=seed,
                       baselines=False, target=target)
        est = np.array([[g.metrics[k] for k in METRICS] for g in res.groups])
        err = np.abs(est[idx] - true_bins[true_idx]).mean(axis=0)
        out.update({f"{k} {short}": float(e) for k, e in zip(METRICS, err, strict=True)})
    return out


def one_sample(pop: str, votes: int, items: int, seed: int) -> dict[str, dict[str, float]]:
    rng = np.random.default_rng([seed, votes, 7])
    p = draw_population(pop, items, rng, None)
    q = draw_model(p, "calibrated", rng)
    x = rng.multinomial(votes, p)
    cuts = {"votes": agreement_entropy(x / votes),
            "population": population_entropy(x, seed=seed)}
    return {name: cut_errors(x, q, p, h, seed=seed) for name, h in cuts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--votes", default="3,5,10")
    parser.add_argument("--populations", default="dirichlet,mixture")
    args = parser.parse_args()
    warnings.simplefilter("ignore", DegenerateInputWarning)
    start = time.perf_counter()
    rows = []
    for pop in args.populations.split(","):
        for votes in map(int, args.votes.split(",")):
            runs = [one_sample(pop, votes, args.items, s) for s in range(args.samples)]
            for cut in ("votes", "population"):
                mean = pd.DataFrame([r[cut] for r in runs]).mean()
                rows.append({"population": pop, "votes": votes, "cut on": cut, **mean.round(4)})
    table = pd.DataFrame(rows)
    print(f"{args.samples} samples of {args.items} items per row, {BINS} bins")
    cols = list(table.columns)
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for row in table.itertuples(index=False):
        print("| " + " | ".join(f"{v:.4f}" if isinstance(v, float) else str(v) for v in row)
              + " |")
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
