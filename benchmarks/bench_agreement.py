"""Agreement benchmarks: ``stats`` with every coefficient, influence, pairs, peers.

    python benchmarks/bench_agreement.py [--votes 1e7] [--repeat 3] [--baseline /path/to/checkout]

1. ``dataset_stats(votes)`` (1000 bootstrap replicates; alpha, Fleiss' kappa, percent agreement,
   AC1, Brennan-Prediger, Conger's kappa on one pass of replicate weights) on a seeded long table
   of N votes (10 per item, 3 labels, 1,000 annotators), votes read beforehand. With
   ``--baseline`` the same call is timed on another checkout of annokit (e.g. ``git archive`` of
   the commit before ``annokit/core/agreement_gwet.py`` was added, which computed alpha and
   kappa only) in the same run, alternating, each in a fresh subprocess. Target: at most 1.5x
   the baseline.
2. ``alpha_influence`` and ``annotator_pairs`` (1,000 annotators) on the same votes, against
   what the peers take for the same figures: ``krippendorff.alpha`` recomputed without each
   annotator, and irrCAC's Conger coefficient (Cohen's kappa for two annotators) per pair,
   each timed on a few annotators or pairs and multiplied out (the difference to annokit's
   figures printed).
3. Peers on a subset (the first 20,000 items): ``krippendorff.alpha`` (value only) and irrCAC
   0.4.4's AC1, Brennan-Prediger and Conger (values and analytic standard errors, categories
   given) against annokit's values without bootstrap.
Medians are printed; the machine is shared and noisy.
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
OUT = ROOT / "benchmarks" / "_out"

RUNNER = """
import sys, time, json, warnings
warnings.simplefilter("ignore")
from annokit.io import read_votes
from annokit.quality.dataset_stats import dataset_stats
v = read_votes(sys.argv[1]); c = v.counts(); _ = v.item_ids
t0, c0 = time.perf_counter(), time.process_time()
s = dataset_stats(v, n_boot=1000)
dt, cpu = time.perf_counter() - t0, time.process_time() - c0
import annokit
print(json.dumps({"seconds": dt, "cpu": cpu, "annokit": annokit.__file__,
                  "keys": [k for k in s if isinstance(s[k], dict) and "ci_low" in s[k]]}))
"""


def make_parquet(n_votes: int) -> Path:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = OUT / f"agreement_votes_{n_votes}.parquet"
    if path.exists():
        return path
    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    k = 10
    n_items = n_votes // k
    item = np.repeat(np.arange(n_items), k)
    slot = np.tile(np.arange(k), n_items)
    annotator = (item * 7 + slot * 499) % 1000  # distinct within an item
    truth = rng.integers(0, 3, n_items)
    label = np.where(rng.random(n_items * k) < 0.7, np.repeat(truth, k),
                     rng.integers(0, 3, n_items * k))
    names = np.array(["entailment", "neutral", "contradiction"])
    table = pa.table({"item": pa.array(np.char.add("item", item.astype(str))),
                      "annotator": pa.array(np.char.add("w", annotator.astype(str))),
                      "label": pa.array(names[label])})
    tmp = path.with_suffix(".tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)
    return path


def time_stats(checkout: Path, path: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    # cwd: ``python -c`` puts the working directory before PYTHONPATH on sys.path
    out = subprocess.run([sys.executable, "-c", RUNNER, str(path)], capture_output=True,
                         text=True, check=True, env=env, cwd=checkout)
    return json.loads(out.stdout.strip().splitlines()[-1])


def annotator_figures(path: Path, n_peer: int = 3) -> None:
    import time
    import warnings

    import numpy as np
    import pandas as pd

    from annokit.core.annotator_agreement import alpha_influence, annotator_pairs
    from annokit.io import read_votes

    votes = read_votes(path)
    out = {}
    for name, fn in (("alpha_influence", alpha_influence),
                     ("annotator_pairs", lambda v: annotator_pairs(v, min_shared=10))):
        t0 = time.perf_counter()
        out[name] = fn(votes)
        print(f"{name}: {len(out[name]):,} rows, {time.perf_counter() - t0:.2f} s "
              f"({votes.n_annotators:,} annotators, {votes.n_votes:,} votes)", flush=True)
    try:
        import krippendorff
    except ImportError:
        print("  krippendorff not installed")
    else:
        t0 = time.perf_counter()
        diff = 0.0
        for g in range(n_peer):
            keep = votes.annotator_index != g
            k = len(votes.labels)
            counts = np.bincount(votes.item_index[keep] * k + votes.label_index[keep],
                                 minlength=votes.n_items * k).reshape(-1, k)
            ref = krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
            diff = max(diff, abs(ref - out["alpha_influence"]["alpha_without"].iloc[g]))
        each = (time.perf_counter() - t0) / n_peer
        print(f"  krippendorff.alpha without each annotator: {each:.2f} s each, "
              f"{each * votes.n_annotators:.0f} s for {votes.n_annotators:,} (|diff| {diff:.1e})")
    try:
        from irrCAC.raw import CAC
    except ImportError:
        print("  irrCAC not installed (pip install --no-deps irrCAC==0.4.4)")
        return
    pairs = out["annotator_pairs"]
    ids = np.asarray(votes.annotator_ids).astype(str)
    names = np.asarray(votes.labels.names, dtype=object)
    t0 = time.perf_counter()
    diff = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _, row in pairs.head(n_peer).iterrows():
            g, h = (int(np.flatnonzero(ids == row[c])[0]) for c in ("annotator_1", "annotator_2"))
            mine = np.isin(votes.annotator_index, [g, h])
            wide = pd.DataFrame({"i": votes.item_index[mine], "a": votes.annotator_index[mine],
                                 "v": names[votes.label_index[mine]]}).pivot(
                index="i", columns="a", values="v").dropna()
            est = CAC(wide, categories=list(names), digits=16).conger()["est"]
            diff = max(diff, abs(est["coefficient_value"] - row["kappa"]))
    each = (time.perf_counter() - t0) / n_peer
    print(f"  irrCAC Cohen's kappa (conger, two annotators) per pair: {each:.2f} s each, "
          f"{each * len(pairs):.0f} s for {len(pairs):,} pairs (|diff| {diff:.1e})", flush=True)


def peers(path: Path, n_items: int = 20_000) -> None:
    import time
    import warnings

    import numpy as np
    import pandas as pd

    from annokit.core.agreement import krippendorff_alpha
    from annokit.core.agreement_gwet import brennan_prediger, conger_kappa, gwet_ac1
    from annokit.core.votes import Votes

    frame = pd.read_parquet(path)
    frame = frame[frame["item"].isin(frame["item"].drop_duplicates().iloc[:n_items])]
    votes = Votes.from_long(frame)
    print(f"peers on {votes.n_items:,} items, {votes.n_votes:,} votes:")
    t0 = time.perf_counter()
    ours = {"alpha": krippendorff_alpha(votes).value, "gwet": gwet_ac1(votes).value,
            "bp": brennan_prediger(votes).value, "conger": conger_kappa(votes).value}
    print(f"  annokit (alpha, AC1, BP, Conger; values): {time.perf_counter() - t0:.2f} s")
    try:
        import krippendorff

        t0 = time.perf_counter()
        ref = krippendorff.alpha(value_counts=votes.counts(), level_of_measurement="nominal")
        print(f"  krippendorff.alpha (value): {time.perf_counter() - t0:.2f} s, "
              f"|diff| {abs(ref - ours['alpha']):.1e}")
    except ImportError:
        print("  krippendorff not installed")
    try:
        from irrCAC.raw import CAC
    except ImportError:
        print("  irrCAC not installed (pip install --no-deps irrCAC==0.4.4)")
        return
    names = np.asarray(votes.labels.names, dtype=object)
    wide = pd.DataFrame({"i": votes.item_index, "a": votes.annotator_index,
                         "v": names[votes.label_index]}).pivot(index="i", columns="a", values="v")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cac = CAC(wide, categories=list(names), digits=16)
        for key, method in (("gwet", cac.gwet), ("bp", cac.bp), ("conger", cac.conger)):
            t0 = time.perf_counter()
            est = method()["est"]
            print(f"  irrCAC {key} (value and analytic se): {time.perf_counter() - t0:.2f} s, "
                  f"|diff| {abs(est['coefficient_value'] - ours[key]):.1e}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--votes", type=float, default=1e7)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--baseline", type=Path, default=None,
                   help="another annokit checkout to time in the same run")
    args = p.parse_args()
    path = make_parquet(int(args.votes))
    runs: dict[str, list[tuple[float, float]]] = {"this": [], "baseline": []}
    for _ in range(args.repeat):
        for name, checkout in (("this", ROOT), ("baseline", args.baseline)):
            if checkout is None:
                continue
            row = time_stats(checkout, path)
            runs[name].append((row["seconds"], row["cpu"]))
            print(f"{name} ({row['annokit']}): dataset_stats {row['seconds']:.1f} s wall, "
                  f"{row['cpu']:.1f} s CPU; intervals for {row['keys']}", flush=True)
    for j, what in enumerate(("wall", "CPU")):
        this = statistics.median(r[j] for r in runs["this"])
        line = (f"dataset_stats on {int(args.votes):,} votes, 1000 replicates, {what}: "
                f"median {this:.1f} s")
        if runs["baseline"]:
            base = statistics.median(r[j] for r in runs["baseline"])
            line += f", baseline {base:.1f} s, ratio {this / base:.2f} (target <= 1.5)"
        print(line, flush=True)
    annotator_figures(path)
    peers(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
