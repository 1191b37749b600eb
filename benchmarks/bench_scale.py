"""Scale benchmark (issues 13, 25): the Dask engine beside the in-memory engine, 1e6 to 1e8 votes.

    python benchmarks/bench_scale.py [--votes 1e6 1e7 1e8] [--workers 2] [--memory-limit 2GB]
                                     [--data DIR] [--out DIR] [--repeat N]
                                     [--commands stats aggregate evaluate] [--no-memory-engine]

1. Seeded synthetic data, made once per size under ``--data`` (default
   ``benchmarks/_out/scale``) as Parquet partitions of 1M votes each, never held whole:
   3 classes, 10 votes per item (1e8 votes: 10M items), ``n_votes / 1000`` annotators
   (1e8: 100k), each with an accuracy drawn in [0.5, 0.95] and uniform errors; an item's
   10 annotators are distinct. Predictions (one Parquet partition per vote partition,
   ``prob_<label>`` columns) are a noisy softmax around the true class. The same data as
   ONE Parquet file each (``votes_one.parquet``, ``predictions_one.parquet`` beside the
   folders), written when missing by streaming the parts through one ``ParquetWriter``.
2. Each command (``annokit stats``, ``aggregate --method ds``, ``evaluate``) runs as a
   subprocess with ``--engine dask --scheduler ADDRESS`` on the folders of parts, against
   one LocalCluster of ``--workers`` worker processes with ``--memory-limit`` each (started
   here, reused for all runs); a sampler thread reads every worker's RSS every 0.2 s, so the
   table gives the peak memory per worker. The same command with the in-memory engine on
   the one-file copy runs next (unless ``--no-memory-engine``), measured by the peak RSS of
   its process; when it cannot fit it must fail with a message naming ``--engine dask``,
   and the table shows that message. Outputs (``aggregate --out``) go under ``--out``.
3. The table (Markdown): votes, command, Dask seconds, memory seconds, their ratio, peak MB
   per Dask worker and of the in-memory process; with ``--repeat N`` the median seconds of
   N runs and the largest peak.

The machine is shared and noisy: quote the load (printed) and compare ratios from one run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
LABELS = ("positive", "neutral", "negative")
PRIOR = np.array([0.5, 0.3, 0.2])
VOTES_PER_ITEM = 10
PART_VOTES = 1_000_000


def make_data(out: Path, n_votes: int, *, seed: int = 0) -> Path:
    """Write ``n_votes`` votes and their predictions as Parquet partitions; return the folder."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    folder = out / f"votes_{n_votes:.0e}".replace("+", "")
    done = folder / "_DONE"
    if done.exists():
        return folder
    (folder / "votes").mkdir(parents=True, exist_ok=True)
    (folder / "predictions").mkdir(parents=True, exist_ok=True)
    n_items = n_votes // VOTES_PER_ITEM
    n_annotators = max(n_votes // 1000, 20)
    acc = np.random.default_rng([seed, 0]).uniform(0.5, 0.95, n_annotators)
    items_per_part = PART_VOTES // VOTES_PER_ITEM
    n_parts = -(-n_items // items_per_part)
    for part in range(n_parts):
        rng = np.random.default_rng([seed, 1, part])
        first = part * items_per_part
        item = np.arange(first, min(first + items_per_part, n_items), dtype=np.int64)
        m = item.size
        true = rng.choice(3, size=m, p=PRIOR)
        # distinct annotators per item: start + j * step (mod A), step * j < A for j < 10
        start = rng.integers(0, n_annotators, m)
        step = rng.integers(1, max(n_annotators // VOTES_PER_ITEM, 2), m)
        j = np.arange(VOTES_PER_ITEM)
        annot = (start[:, None] + step[:, None] * j) % n_annotators
        truth = np.repeat(true, VOTES_PER_ITEM)
        right = rng.random(m * VOTES_PER_ITEM) < acc[annot.ravel()]
        label = np.where(right, truth, (truth + rng.integers(1, 3, truth.size)) % 3)
        item_ids = pc.binary_join_element_wise(
            "item", pc.utf8_lpad(pa.array(item).cast(pa.string()), 9, "0"), "")
        annot_ids = pc.binary_join_element_wise(
            "a", pc.utf8_lpad(pa.array(annot.ravel()).cast(pa.string()), 6, "0"), "")
        votes = pa.table({
            "item": pc.take(item_ids, pa.array(np.repeat(np.arange(m), VOTES_PER_ITEM))),
            "annotator": annot_ids,
            "label": pa.DictionaryArray.from_arrays(pa.array(label.astype(np.int8)),
                                                    pa.array(LABELS)),
        })
        pq.write_table(votes, folder / "votes" / f"part-{part:05d}.parquet")
        logits = rng.normal(0.0, 1.0, (m, 3))
        logits[np.arange(m), true] += 2.0
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        pred = {"item": item_ids}
        pred.update({f"prob_{name}": probs[:, k] for k, name in enumerate(LABELS)})
        pq.write_table(pa.table(pred), folder / "predictions" / f"part-{part:05d}.parquet")
    done.write_text(f"{n_votes} votes, {n_items} items, {n_annotators} annotators, seed {seed}\n")
    return folder


def one_file(folder: Path, kind: str) -> Path:
    """``folder/<kind>_one.parquet``: the parts of ``folder/<kind>`` as ONE Parquet file (the
    in-memory engine's input), written when missing by streaming the parts through one
    ``ParquetWriter`` (one part held at a time)."""
    import pyarrow.parquet as pq

    target = folder / f"{kind}_one.parquet"
    if target.exists():
        return target
    parts = sorted((folder / kind).glob("part-*.parquet"))
    tmp = target.with_name(f".{target.name}.tmp")
    writer = None
    try:
        for part in parts:
            table = pq.read_table(part)
            if writer is None:
                writer = pq.ParquetWriter(tmp, table.schema)
            writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()
    tmp.replace(target)
    return target


def _commands(folder: Path, engine: str, out: Path) -> dict[str, list[str]]:
    """The command lines: Dask reads the folders of parts, memory the same data as one file."""
    if engine == "dask":
        votes, preds = str(folder / "votes"), str(folder / "predictions")
    else:
        votes, preds = str(one_file(folder, "votes")), str(one_file(folder, "predictions"))
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{folder.name}_{engine}.parquet"
    return {
        "stats": ["stats", votes, "--json"],
        "aggregate": ["aggregate", votes, "--method", "ds", "--json", "--out", str(target)],
        "evaluate": ["evaluate", "--votes", votes, "--predictions", preds, "--json"],
    }


class WorkerMemory:
    """Peak RSS of each process in ``pids``, sampled every ``interval`` seconds."""

    def __init__(self, pids: list[int], interval: float = 0.2):
        import psutil

        self.procs = [psutil.Process(p) for p in pids]
        self.peak = [0] * len(pids)
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for i, p in enumerate(self.procs):
                try:
                    self.peak[i] = max(self.peak[i], p.memory_info().rss)
                except Exception:  # a worker restarting
                    pass
            self._stop.wait(self.interval)

    def __enter__(self) -> WorkerMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _run(args: list[str], extra: list[str], pids: list[int] | None) -> dict:
    cmd = [sys.executable, "-c",
           "import resource, subprocess, sys, json;"
           "r = subprocess.run(sys.argv[1:], capture_output=True, text=True);"
           "u = resource.getrusage(resource.RUSAGE_CHILDREN);"
           "print(json.dumps({'rc': r.returncode, 'err': r.stderr.strip().splitlines()[-1:] ,"
           "'maxrss_mb': u.ru_maxrss / 1024}))",
           sys.executable, "-m", "annokit.cli", "--quiet", *args[:1], *extra, *args[1:]]
    t0 = time.perf_counter()
    if pids:
        with WorkerMemory(pids) as mem:
            out = subprocess.run(cmd, capture_output=True, text=True)
        peak = max(mem.peak) / 2**20
    else:
        out = subprocess.run(cmd, capture_output=True, text=True)
        peak = None
    seconds = time.perf_counter() - t0
    import json

    res = json.loads(out.stdout.strip().splitlines()[-1])
    return {"seconds": seconds, "rc": res["rc"], "error": " ".join(res["err"]),
            "peak_mb": peak if peak is not None else res["maxrss_mb"]}


def _median_run(args: list[str], extra: list[str], pids: list[int] | None,
                repeat: int) -> dict:
    """``repeat`` runs; the median seconds, the largest peak memory, the first failure."""
    runs = [_run(args, extra, pids) for _ in range(repeat)]
    bad = [r for r in runs if r["rc"]]
    if bad:
        return bad[0]
    return {"seconds": float(np.median([r["seconds"] for r in runs])), "rc": 0, "error": "",
            "peak_mb": max(r["peak_mb"] for r in runs), "runs": [r["seconds"] for r in runs]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--votes", nargs="+", type=float, default=[1e6, 1e7, 1e8])
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--memory-limit", default="2GB")
    p.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "_out" / "scale")
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "_out" / "scale-results")
    p.add_argument("--commands", nargs="+", default=["stats", "aggregate", "evaluate"])
    p.add_argument("--repeat", type=int, default=1, help="runs per command and engine (median)")
    p.add_argument("--no-memory-engine", action="store_true")
    a = p.parse_args()

    import logging

    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True,
                           memory_limit=a.memory_limit, dashboard_address=None,
                           silence_logs=logging.ERROR)
    client = Client(cluster)
    pids = list(client.run(os.getpid).values())
    print(f"LocalCluster: {a.workers} workers x {a.memory_limit}, scheduler "
          f"{cluster.scheduler_address}; load {os.getloadavg()[0]:.2f}", flush=True)
    dask_extra = ["--engine", "dask", "--scheduler", cluster.scheduler_address]
    rows = []
    for n in a.votes:
        n_votes = int(n)
        t0 = time.perf_counter()
        folder = make_data(a.data, n_votes)
        if not a.no_memory_engine:
            one_file(folder, "votes")
            one_file(folder, "predictions")
        print(f"data {n_votes:.0e} votes: {folder} ({time.perf_counter() - t0:.1f} s)", flush=True)
        for name in a.commands:
            dask_res = _median_run(_commands(folder, "dask", a.out)[name], dask_extra, pids,
                                   a.repeat)
            print(f"  {name:9s} dask   {dask_res['seconds']:8.1f} s  peak/worker "
                  f"{dask_res['peak_mb']:7.0f} MB  rc {dask_res['rc']} "
                  f"{dask_res['error'] if dask_res['rc'] else ''}", flush=True)
            mem_res = None
            if not a.no_memory_engine:
                mem_res = _median_run(_commands(folder, "memory", a.out)[name], [], None,
                                      a.repeat)
                print(f"  {name:9s} memory {mem_res['seconds']:8.1f} s  peak       "
                      f"{mem_res['peak_mb']:7.0f} MB  rc {mem_res['rc']} "
                      f"{mem_res['error'] if mem_res['rc'] else ''}", flush=True)
            rows.append((n_votes, name, dask_res, mem_res))
    print(f"\nmedian of {a.repeat} run(s); Dask: {a.workers} workers x {a.memory_limit} on the "
          "folders of parts; memory: the same data as one Parquet file; "
          f"load {os.getloadavg()[0]:.2f}")
    print("| votes | command | Dask s | memory s | ratio | peak MB per worker (Dask) "
          "| peak MB (memory) |")
    print("|---|---|---|---|---|---|---|")
    for n_votes, name, d, m in rows:
        def cell(r: dict | None, key: str, fmt: str) -> str:
            if r is None:
                return "-"
            return format(r[key], fmt) if r["rc"] == 0 else f"failed: {r['error']}"
        ratio = (f"{d['seconds'] / m['seconds']:.2f}" if m is not None and d["rc"] == 0
                 and m["rc"] == 0 else "-")
        print(f"| {n_votes:.0e} | {name} | {cell(d, 'seconds', '.1f')} | "
              f"{cell(m, 'seconds', '.1f')} | {ratio} | {cell(d, 'peak_mb', '.0f')} | "
              f"{cell(m, 'peak_mb', '.0f')} |")
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
