"""`annokit aggregate --method ds` end to end against crowd-kit's DawidSkene, same data, same run.

    python benchmarks/bench_aggregate_cli.py [--case parquet|csv-int] [--repeat 3]
        [--peer-repeat 1] [--warmup 1] [--crowdkit-python /work/.venv-ck/bin/python]

Data (made once under benchmarks/_out/aggregate/): 5M votes, 1M items x 5 votes, 10k
annotators, 3 classes, 15% uniform spammers (``bench_quality.synthetic``), written as

- ``--case parquet``: one Parquet file with string ids and a gold column (every item's true
  label);
- ``--case csv-int``: a CSV of votes with integer item and annotator ids (item, annotator,
  label) and a separate gold CSV (item, gold), the layout of most exports.

- annokit: ``annokit aggregate VOTES [--gold GOLD] --method ds --json`` as a subprocess,
  process start to exit (reading, coding, gold, EM, accuracy against gold);
- crowd-kit: in its own interpreter (it needs torch; see bench_quality.py for the venv), a
  subprocess that reads the same file(s) with pandas, runs ``DawidSkene(n_iter=100)
  .fit_predict`` on the task/worker/label frame and scores the labels against gold, also
  process start to exit.

Each side first runs ``--warmup`` times untimed (as hyperfine's ``--warmup``: the files in the
page cache, the interpreter's own files read once), then ``--repeat`` / ``--peer-repeat`` timed
runs. Prints the medians, the ratio and both accuracies. The machine is shared: quote medians and
the load (``os.getloadavg`` is printed before and after).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "_out" / "aggregate"

CROWDKIT = """
import sys, json, time
import pandas as pd
from crowdkit.aggregation import DawidSkene
if sys.argv[1].endswith(".parquet"):
    df = pd.read_parquet(sys.argv[1])
    gold = df.groupby("item", sort=False)["gold"].first()
else:
    df = pd.read_csv(sys.argv[1])
    gold = pd.read_csv(sys.argv[2]).set_index("item")["gold"]
frame = df.rename(columns={"item": "task", "annotator": "worker"})[["task", "worker", "label"]]
labels = DawidSkene(n_iter=100).fit_predict(frame)
acc = float((labels.reindex(gold.index) == gold).mean())
print(json.dumps({"accuracy": acc}))
"""


def make_data(case: str) -> list[Path]:
    """The input file(s) of ``case``, made once."""
    paths = ([OUT / "votes_5m.parquet"] if case == "parquet"
             else [OUT / "votes_5m_int.csv", OUT / "gold_1m_int.csv"])
    if all(p.exists() for p in paths):
        return paths
    import pandas as pd

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_quality import synthetic

    OUT.mkdir(parents=True, exist_ok=True)
    df, truth = synthetic(1_000_000, 5, 10_000, seed=0)
    names = np.array(["pos", "neu", "neg"], dtype=object)
    if case == "parquet":
        pd.DataFrame({"item": "i" + df["item"].astype(str),
                      "annotator": "w" + df["annotator"].astype(str),
                      "label": names[df["label"].to_numpy()],
                      "gold": names[truth[df["item"].to_numpy()]]}).to_parquet(paths[0], index=False)
    else:
        pd.DataFrame({"item": df["item"], "annotator": df["annotator"],
                      "label": names[df["label"].to_numpy()]}).to_csv(paths[0], index=False)
        pd.DataFrame({"item": np.arange(len(truth)), "gold": names[truth]}).to_csv(
            paths[1], index=False)
    return paths


def timed(cmd: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, out.stdout


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--case", choices=["parquet", "csv-int"], default="parquet")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--peer-repeat", type=int, default=1)
    p.add_argument("--warmup", type=int, default=1, help="untimed runs of each side first")
    p.add_argument("--crowdkit-python", default="/work/.venv-ck/bin/python")
    a = p.parse_args()
    paths = make_data(a.case)
    print(f"case {a.case}: {', '.join(p.name for p in paths)}; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    annokit = [sys.executable, "-m", "annokit.cli", "--quiet", "aggregate", str(paths[0]),
               *(["--gold", str(paths[1])] if len(paths) > 1 else []), "--method", "ds", "--json"]
    runs, acc = [], None
    for _ in range(a.warmup):
        timed(annokit)
    for _ in range(a.repeat):
        seconds, out = timed(annokit)
        runs.append(seconds)
        acc = json.loads(out)["accuracy"]
    ours = statistics.median(runs)
    print(f"annokit aggregate --method ds: median {ours:.2f} s of {a.repeat} "
          f"({', '.join(f'{r:.2f}' for r in runs)}), accuracy {acc:.4f}")
    if not Path(a.crowdkit_python).exists():
        print(f"crowd-kit: no interpreter at {a.crowdkit_python} (see bench_quality.py); skipped")
        return
    peer_runs = []
    peer = [a.crowdkit_python, "-c", CROWDKIT, *map(str, paths)]
    for _ in range(a.warmup):
        timed(peer)
    for _ in range(a.peer_repeat):
        seconds, out = timed(peer)
        peer_runs.append(seconds)
    peer_median = statistics.median(peer_runs)
    peer_acc = json.loads(out.strip().splitlines()[-1])["accuracy"]
    print(f"crowd-kit DawidSkene(n_iter=100): median {peer_median:.2f} s of {a.peer_repeat} "
          f"({', '.join(f'{r:.2f}' for r in peer_runs)}), accuracy {peer_acc:.4f}")
    print(f"ratio: annokit is {peer_median / ours:.1f}x faster end to end; accuracy difference "
          f"{acc - peer_acc:+.4f}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
