"""`annokit aggregate --method crowdlab` end to end against cleanlab's CROWDLAB call, same data,
same run.

    python benchmarks/bench_crowdlab.py [--repeat 3] [--peer-repeat 1]

Data (made once under benchmarks/_out/crowdlab/), the shape of CIFAR-10N's "random" label
sets (Wei et al. 2022; CIFAR-10N itself is not in the shared data): 50,000 items x 3 votes =
150,000 votes by 747 annotators, 10 classes. Each annotator's accuracy is drawn from
Beta(8, 2) (mean 0.8), a wrong vote is uniform over the other classes, and each item's three
annotators are distinct, drawn uniformly. The model is
:func:`annokit.io.synthetic.make_model_probs` at 67% accuracy (a CIFAR-10N-like model).
Files: ``votes.csv`` (item, annotator, label), ``gold.csv`` (item, gold), ``preds.csv``
(item, prob_0 ... prob_9).

- annokit: ``annokit aggregate votes.csv --gold gold.csv --predictions preds.csv --method
  crowdlab --json`` as a subprocess, process start to exit (reading the three files, the join,
  CROWDLAB, accuracy against gold);
- cleanlab: ``get_label_quality_multiannotator(wide, pred_probs)`` in this process, the call
  only (the wide items x annotators frame it needs is built before the clock starts).

Prints medians, the ratio, and the accuracies of both (they are the same labels; the test
``tests/quality/test_crowdlab.py`` checks that on real votes). The machine is shared: quote
medians and the load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "_out" / "crowdlab"
N_ITEMS, N_VOTES, N_ANNOTATORS, N_LABELS = 50_000, 3, 747, 10


def distinct_annotators(gen: np.random.Generator) -> np.ndarray:
    """(N_ITEMS, N_VOTES) annotator indices, distinct within a row (rows redrawn until so)."""
    chosen = gen.integers(0, N_ANNOTATORS, (N_ITEMS, N_VOTES))
    while True:
        s = np.sort(chosen, axis=1)
        bad = (s[:, 1:] == s[:, :-1]).any(axis=1)
        if not bad.any():
            return chosen
        chosen[bad] = gen.integers(0, N_ANNOTATORS, (int(bad.sum()), N_VOTES))


def make_data() -> tuple[Path, Path, Path]:
    paths = OUT / "votes.csv", OUT / "gold.csv", OUT / "preds.csv"
    if all(p.exists() for p in paths):
        return paths
    sys.path.insert(0, str(ROOT))
    from annokit.io.synthetic import make_model_probs

    OUT.mkdir(parents=True, exist_ok=True)
    gen = np.random.default_rng(0)
    truth = gen.integers(0, N_LABELS, N_ITEMS)
    skill = gen.beta(8, 2, N_ANNOTATORS)
    annotators = distinct_annotators(gen).ravel()
    items = np.repeat(np.arange(N_ITEMS), N_VOTES)
    right = gen.random(items.size) < skill[annotators]
    wrong = (truth[items] + gen.integers(1, N_LABELS, items.size)) % N_LABELS
    labels = np.where(right, truth[items], wrong)
    pd.DataFrame({"item": items, "annotator": annotators, "label": labels}).to_csv(
        paths[0], index=False)
    pd.DataFrame({"item": np.arange(N_ITEMS), "gold": truth}).to_csv(paths[1], index=False)
    probs = make_model_probs(truth, N_LABELS, accuracy=0.67, rng=1)
    pd.DataFrame({"item": np.arange(N_ITEMS),
                  **{f"prob_{k}": probs[:, k] for k in range(N_LABELS)}}).to_csv(
        paths[2], index=False, float_format="%.17g")
    return paths


def run_annokit(paths: tuple[Path, Path, Path], method: str = "crowdlab",
                extra: tuple[str, ...] = ()) -> tuple[float, dict]:
    cmd = [sys.executable, "-m", "annokit.cli", "aggregate", str(paths[0]), "--gold",
           str(paths[1]), "--method", method, "--json", *extra]
    if method == "crowdlab":
        cmd += ["--predictions", str(paths[2])]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return time.perf_counter() - start, json.loads(out)


def run_cleanlab(paths: tuple[Path, Path, Path]) -> tuple[float, float]:
    from cleanlab.multiannotator import get_label_quality_multiannotator

    votes = pd.read_csv(paths[0])
    wide = np.full((N_ITEMS, N_ANNOTATORS), np.nan)
    wide[votes["item"].to_numpy(), votes["annotator"].to_numpy()] = votes["label"].to_numpy()
    frame = pd.DataFrame(wide)
    probs = pd.read_csv(paths[2]).iloc[:, 1:].to_numpy()
    truth = pd.read_csv(paths[1])["gold"].to_numpy()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = get_label_quality_multiannotator(frame, probs, verbose=False)
    elapsed = time.perf_counter() - start
    labels = result["label_quality"]["consensus_label"].to_numpy()
    return elapsed, float(np.mean(labels == truth))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--peer-repeat", type=int, default=1)
    args = parser.parse_args(argv)
    paths = make_data()
    print(f"load {os.getloadavg()[0]:.2f}; {N_ITEMS * N_VOTES} votes, {N_ITEMS} items, "
          f"{N_ANNOTATORS} annotators, {N_LABELS} classes")
    run_annokit(paths)  # warm-up: page cache, numba and bytecode caches
    ours = [run_annokit(paths) for _ in range(args.repeat)]
    theirs = [run_cleanlab(paths) for _ in range(args.peer_repeat)]
    t_ours = statistics.median(t for t, _ in ours)
    t_theirs = statistics.median(t for t, _ in theirs)
    print(f"annokit aggregate --method crowdlab (whole command): {t_ours:.2f} s "
          f"(accuracy {ours[0][1]['accuracy']:.4f})")
    print(f"cleanlab get_label_quality_multiannotator (call only): {t_theirs:.2f} s "
          f"(accuracy {theirs[0][1]:.4f})")
    print(f"ratio: annokit {t_theirs / t_ours:.1f}x faster")
    _, conf = run_annokit(paths, extra=("--likelihood", "confusion"))
    rows = [("crowdlab --likelihood confusion", conf["accuracy"])]
    for method in ("mv", "ds"):
        rows.append((method, run_annokit(paths, method)[1]["accuracy"]))
    for name, acc in rows:
        print(f"{name}: accuracy {acc:.4f}")
    print(f"load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
