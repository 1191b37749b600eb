"""Foundation benchmarks (issue 2): long Parquet -> counts, and `annokit stats` end to end.

    python benchmarks/bench_counts.py [--votes 10000000] [--repeat 3] [--data DIR]

1. A seeded long Parquet file of N votes (string item / annotator / label ids)
   is made once under benchmarks/_out/ for each votes-per-item value (5: two
   million distinct item ids, the hashing-heavy extreme; 100: ChaosNLI-like). Each measurement runs
   in a fresh subprocess, so peak RSS (ru_maxrss) is that step's alone:
   - peer: ``pyarrow.parquet.read_table(path)`` (the floor: just reading the file);
   - annokit: ``read_votes(path).counts()`` (full validation: missing and empty
     ids, label coding, duplicate (item, annotator) check, zero-vote items);
   - the same, then ``votes.item_ids`` (the Parquet path hands item ids over as Arrow
     strings; Python str objects are made on first access, and this step shows their cost);
   - annokit streaming: ``count_batches(ParquetFile.iter_batches())`` (map-reduce).
   Target: annokit within 2x of read_table.
2. ``annokit stats chaosNLI_snli.jsonl --json`` as a subprocess, process start to
   exit. Target: under 1.5 s.
Medians are printed; the machine is shared and noisy.
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

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "_out"

STEPS = {
    "read_table": "import pyarrow.parquet as pq; t = pq.read_table(PATH); n = t.num_rows",
    "annokit read_votes().counts()": "from annokit.io import read_votes; c = read_votes(PATH).counts()",
    "annokit counts(), then .item_ids": (
        "from annokit.io import read_votes; v = read_votes(PATH); c = v.counts(); i = v.item_ids"
    ),
    "annokit count_batches (streaming)": (
        "import pyarrow.parquet as pq; from annokit.io import count_batches; "
        "c = count_batches(pq.ParquetFile(PATH).iter_batches(batch_size=1 << 20, "
        "columns=['item', 'label']), labels=['entailment', 'neutral', 'contradiction']).counts"
    ),
}

RUNNER = """
import sys, time, json
PATH = sys.argv[1]
import pyarrow, numpy, pandas  # imports are not part of the measured step
{prep}
t0 = time.perf_counter()
{code}
dt = time.perf_counter() - t0
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent across fork + exec
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(json.dumps({{"seconds": dt, "peak_rss_mb": hwm / 1024}}))
"""


def make_parquet(n_votes: int, k: int) -> Path:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = OUT / f"votes_{n_votes}_k{k}.parquet"
    if path.exists():
        return path
    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    n_items = n_votes // k
    item = np.repeat(np.arange(n_items), k)
    slot = np.tile(np.arange(k), n_items)
    annotator = (item * 7 + slot * 499) % 50_000  # distinct within an item (k <= 100)
    label = rng.integers(0, 3, n_items * k)
    names = np.array(["entailment", "neutral", "contradiction"])
    table = pa.table({
        "item": pa.array(np.char.add("item", item.astype(str))),
        "annotator": pa.array(np.char.add("w", annotator.astype(str))),
        "label": pa.array(names[label]),
    })
    tmp = path.with_suffix(".tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)
    return path


def measure(code: str, path: Path, repeat: int, prep: str = "") -> tuple[float, float]:
    seconds, rss = [], []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", RUNNER.format(code=code, prep=prep), str(path)],
                             capture_output=True, text=True, check=True)
        row = json.loads(out.stdout.strip().splitlines()[-1])
        seconds.append(row["seconds"])
        rss.append(row["peak_rss_mb"])
    return statistics.median(seconds), statistics.median(rss)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--votes", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--votes-per-item", type=lambda v: [int(x) for x in v.split(",")],
                        default=[5, 100], help="comma-separated; one file per value")
    parser.add_argument("--data", type=Path, default=Path(
        os.environ.get("ANNOKIT_TEST_DATA", ROOT.parent / "shared" / "data")))
    args = parser.parse_args()

    for k in args.votes_per_item:
        print(f"making {args.votes:,}-vote Parquet file, {k} votes per item ...", file=sys.stderr)
        path = make_parquet(args.votes, k)
        print(f"\nfile: {path.name}, {args.votes // k:,} items x {k} votes, "
              f"{path.stat().st_size / 2**20:.1f} MiB; median of {args.repeat} runs")
        results = {}
        for name, code in STEPS.items():
            print(f"  measuring {name} ...", file=sys.stderr)
            prep = "import annokit.io, annokit" if "annokit" in name else ""
            results[name] = measure(code, path, args.repeat, prep)
        floor = results["read_table"][0]
        print(f"{'step':<36}{'seconds':>9}{'x read_table':>14}{'peak RSS MB':>13}")
        for name, (sec, rss) in results.items():
            print(f"{name:<36}{sec:>9.2f}{sec / floor:>14.2f}{rss:>13.0f}")
    print()

    chaos = args.data / "chaosnli" / "chaosNLI_snli.jsonl"
    if chaos.exists():
        exe = Path(sys.executable).with_name("annokit")
        times = []
        for _ in range(max(args.repeat, 5)):
            t0 = time.perf_counter()
            subprocess.run([str(exe), "stats", str(chaos), "--json"], check=True, capture_output=True)
            times.append(time.perf_counter() - t0)
        print(f"annokit stats chaosNLI_snli.jsonl --json, process start to exit: median "
              f"{statistics.median(times):.2f} s")
    else:
        print(f"skipped annokit stats timing: {chaos} not found")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
