"""Subsampling curves benchmark (issue 4): k = 1..100, 200 repetitions, all 4,645 ChaosNLI items.

    python benchmarks/bench_subsample.py [--repeat 3] [--reps 200] [--data DIR]

Each measurement runs in a fresh subprocess (so peak RSS, ``ru_maxrss``, is that
step's alone) and reports wall time, CPU time, the peak of numpy/Python
allocations during the step (``tracemalloc``, measured in a second, untimed
run) and peak RSS:

* annokit: ``subsampling_curve(votes, range(1, 101), reps=200)`` on each of
  ChaosNLI-SNLI, -MNLI and -alphaNLI (1,514 + 1,599 + 1,532 = 4,645 items;
  alphaNLI has two labels, so the subsets are three calls), every metric
  (TVD, JSD, KL, majority agreement and ties, entropy bias), per-bin means,
  and the TVD grid for the recommendation; ``n_jobs`` 1 and 2. Target: < 5 s.
* annokit, hypergeometric path: ``subsample_counts`` (independent exact draws)
  at every k, TVD only, on SNLI (scaled to 4,645 items): the per-k alternative
  to the nested draws.
* peer: a per-item loop over numpy's ``Generator.multivariate_hypergeometric``
  (vectorised over repetitions only), TVD only, on 100 SNLI items, scaled to
  4,645 items (linear in items); the ratio says what vectorising across
  items buys.

Medians over ``--repeat`` runs are printed with the load average: the machine
has 2 cores shared with other jobs, so wall time can exceed CPU time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ("chaosNLI_snli.jsonl", "chaosNLI_mnli_m.jsonl", "chaosNLI_alphanli.jsonl")

RUNNER = """
import json, resource, sys, time, tracemalloc
import numpy as np
from annokit.io import read_chaosnli
data, reps, n_jobs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
files = {files!r}
votes = [read_chaosnli(f"{{data}}/chaosnli/{{f}}") for f in files]
{prep}
t0, c0 = time.perf_counter(), time.process_time()
{code}
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
tracemalloc.start()  # a second, untimed run measures the allocation peak
{code}
peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({{"seconds": wall, "cpu_seconds": cpu, "peak_alloc_mb": peak / 2**20,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "check": check}}))
"""

STEPS = {
    "annokit subsampling_curve, n_jobs=1": (
        "from annokit.subsample import subsampling_curve",
        ("curves = [subsampling_curve(v, range(1, 101), reps=reps, rng=0, n_jobs=1) "
        "for v in votes]\ncheck = [round(float(c.values['tvd'][:, 19].mean()), 4) for c in curves]"),
        1),
    "annokit subsampling_curve, n_jobs=2": (
        "from annokit.subsample import subsampling_curve",
        ("curves = [subsampling_curve(v, range(1, 101), reps=reps, rng=0, n_jobs=2) "
        "for v in votes]\ncheck = [round(float(c.values['tvd'][:, 19].mean()), 4) for c in curves]"),
        2),
    "annokit subsample_counts per k, SNLI only (TVD only)": (
        ("from annokit.subsample import subsample_counts\n"
        "from annokit.core.divergence import tvd"),
        ("check = []\n"
        "for v in votes[:1]:\n"
        "    c = v.counts(); p = c / c.sum(1, keepdims=True); rng = np.random.default_rng(0)\n"
        "    means = [tvd((subsample_counts(c, k, reps=reps, rng=rng).counts / k)"
        ".reshape(-1, c.shape[1]), np.tile(p, (reps, 1))).mean() for k in range(1, 101)]\n"
        "    check.append(round(float(means[19]), 4))"),
        1),
    "peer: per-item multivariate_hypergeometric, 100 items (TVD only)": (
        "from annokit.core.divergence import tvd",
        ("check = []\n"
        "c = votes[0].counts()[:100]; p = c / c.sum(1, keepdims=True); rng = np.random.default_rng(0)\n"
        "for k in range(1, 101):\n"
        "    x = np.stack([rng.multivariate_hypergeometric(row, k, size=reps) for row in c], 1)\n"
        "    check.append(float(tvd((x / k).reshape(-1, 3), np.tile(p, (reps, 1))).mean()))\n"
        "check = [round(check[19], 4)]"),
        1),
}
PEER = "peer: per-item multivariate_hypergeometric, 100 items (TVD only)"
#: Steps run on part of the items, scaled linearly to all 4,645.
SCALE = {PEER: 4645 / 100, "annokit subsample_counts per k, SNLI only (TVD only)": 4645 / 1514}


def default_data_dir() -> Path:
    env = os.environ.get("ANNOKIT_TEST_DATA")
    return Path(env) if env else (ROOT / ".." / "shared" / "data").resolve()


def run_step(name: str, data: Path, reps: int) -> dict:
    prep, code, n_jobs = STEPS[name]
    script = RUNNER.format(files=FILES, prep=prep, code=code)
    out = subprocess.run([sys.executable, "-c", script, str(data), str(reps), str(n_jobs)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--data", type=Path, default=None)
    args = parser.parse_args(argv)
    data = args.data or default_data_dir()
    print(f"k = 1..100, {args.reps} repetitions, ChaosNLI SNLI + MNLI + alphaNLI (4,645 items); "
          f"median of {args.repeat}; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")
    results = {}
    for name in STEPS:
        runs = [run_step(name, data, args.reps) for _ in range(args.repeat)]
        med = {key: statistics.median(r[key] for r in runs)
               for key in ("seconds", "cpu_seconds", "peak_alloc_mb", "peak_rss_mb")}
        results[name] = med
        scale = SCALE.get(name, 1.0)
        extra = f" (x{scale:.2f} for 4,645 items: {med['seconds'] * scale:.1f} s)" \
            if scale != 1.0 else ""
        print(f"{name:65s} wall {med['seconds']:6.2f} s  cpu {med['cpu_seconds']:6.2f} s  "
              f"peak alloc {med['peak_alloc_mb']:6.1f} MB  peak RSS {med['peak_rss_mb']:6.1f} MB"
              f"{extra}  mean TVD at k=20 {runs[0]['check']}")
    ours = results["annokit subsampling_curve, n_jobs=1"]["seconds"]
    peer = results[PEER]["seconds"] * 4645 / 100
    print(f"ratio peer (scaled, TVD only) / annokit (all metrics, n_jobs=1): {peer / ours:.1f}x")
    best = min(results["annokit subsampling_curve, n_jobs=1"]["seconds"],
               results["annokit subsampling_curve, n_jobs=2"]["seconds"])
    print(f"best wall time {best:.2f} s (load average now {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
