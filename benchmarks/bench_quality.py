"""Benchmark: annokit's aggregation models against crowd-kit, in the same run.

Prints, for a synthetic 3-class set of 5M votes (1M items x 5 votes, 10k
annotators, 15% uniform spammers) and a 100k-vote set (20k items x 5 votes, 1k
annotators), the median wall time, the peak resident memory added during the
call, and the accuracy against the known truth, for annokit and crowd-kit
(when ``crowdkit`` imports), with speed ratios. Then the accuracy of each
method on the four gold datasets in ../shared/data.

Each measurement runs in a fresh subprocess so that peak memory is not
inherited from an earlier one; timings include building the model input from
the same long DataFrame (annokit: ``Votes.from_long``; crowd-kit takes the
frame directly), and are also shown for the fit alone. annokit's input is
built with ``Votes.from_long``, which also checks for duplicate votes.

crowd-kit pulls in torch, so it lives in a separate environment::

    python3 -m venv /work/.venv-bench
    /work/.venv-bench/bin/pip install torch==2.13.0 crowd-kit -e .
    /work/.venv-bench/bin/python benchmarks/bench_quality.py

crowd-kit's MACE depends on the row order of its input; it is timed here, but
its accuracy is not the reference for a faithful MACE (see the final report).

Options: ``--sizes 100k,5m``, ``--methods mv,ds,onecoin,mace``, ``--repeats N`` (annokit;
crowd-kit runs once on 5M), ``--skip-crowdkit-mace-5m`` is implied (crowd-kit's MACE on 5M
votes would take tens of minutes; pass ``--crowdkit-mace-5m`` to run it anyway), ``--data DIR``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

SIZES = {
    "100k": {"n_items": 20_000, "per_item": 5, "n_annotators": 1_000},
    "5m": {"n_items": 1_000_000, "per_item": 5, "n_annotators": 10_000},
}


def synthetic(n_items: int, per_item: int, n_annotators: int, *, n_labels: int = 3,
              spam_fraction: float = 0.15, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Seeded synthetic votes: good annotators with accuracy U(0.55, 0.95) and
    uniform errors, and a fraction of uniform-random spammers. Returns the long
    frame (item, annotator, label as ints, rows shuffled) and the truth."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, n_labels, n_items)
    ann = rng.integers(0, n_annotators, (n_items, per_item))
    for _ in range(100):  # redraw repeated annotators within an item (rare), vectorised
        s = np.sort(ann, axis=1)
        dup_rows = np.flatnonzero((s[:, 1:] == s[:, :-1]).any(axis=1))
        if dup_rows.size == 0:
            break
        ann[dup_rows] = rng.integers(0, n_annotators, (dup_rows.size, per_item))
    ann = ann.reshape(-1)
    item = np.repeat(np.arange(n_items), per_item)
    acc = rng.uniform(0.55, 0.95, n_annotators)
    spam = rng.random(n_annotators) < spam_fraction
    right = rng.random(item.size) < acc[ann]
    wrong = (truth[item] + rng.integers(1, n_labels, item.size)) % n_labels
    label = np.where(right, truth[item], wrong)
    is_spam = spam[ann]
    label[is_spam] = rng.integers(0, n_labels, int(is_spam.sum()))
    order = rng.permutation(item.size)
    df = pd.DataFrame({"item": item[order], "annotator": ann[order], "label": label[order]})
    return df, truth


class PeakRSS:
    """Sample this process's resident set size every 5 ms; report the peak above the start."""

    def __init__(self):
        self._stop = threading.Event()
        self.peak = 0

    @staticmethod
    def rss() -> int:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def __enter__(self):
        self.start = self.rss()
        self.peak = self.start
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self.rss())
            time.sleep(0.005)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.rss())

    @property
    def added_mb(self) -> float:
        return (self.peak - self.start) / 2**20


def _annokit_model(method: str):
    from annokit.quality import MACE, DawidSkene, MajorityVote, OneCoinDawidSkene

    return {"mv": lambda: MajorityVote(ties="first"),
            "ds": lambda: DawidSkene(max_iter=100),       # tol 1e-5 per vote, as crowd-kit
            "onecoin": lambda: OneCoinDawidSkene(max_iter=100),
            "mace": lambda: MACE(n_restarts=10, max_iter=50, rng=0)}[method]()


def _crowdkit_model(method: str):
    from crowdkit.aggregation import MACE, DawidSkene, MajorityVote, OneCoinDawidSkene

    return {"mv": lambda: MajorityVote(),
            "ds": lambda: DawidSkene(n_iter=100),
            "onecoin": lambda: OneCoinDawidSkene(n_iter=100),
            "mace": lambda: MACE(n_restarts=10, n_iter=50, random_state=0)}[method]()


def worker(lib: str, method: str, size: str, seed: int) -> dict:
    """One measurement (run in a subprocess)."""
    df, truth = synthetic(**SIZES[size], seed=seed)
    if lib == "annokit":
        from annokit.core.votes import LabelSet, Votes

        model = _annokit_model(method)     # imports happen here, outside the timed region
        with PeakRSS() as mem:
            t0 = time.perf_counter()
            # the same long DataFrame through the public loader, with its full checks
            # (ids as str, labels coded, duplicate (item, annotator) votes rejected)
            votes = Votes.from_long(df, labels=LabelSet(["0", "1", "2"]))
            t1 = time.perf_counter()
            est = model.fit(votes)
            t2 = time.perf_counter()
        pred = est.labels_codes_
        ids = votes.item_ids.astype(np.int64)
        acc = float((pred == truth[ids]).mean())
        extra = {"n_iter": int(est.n_iter_), "converged": bool(est.converged_)}
        return {"total_s": t2 - t0, "fit_s": t2 - t1, "mem_mb": mem.added_mb, "accuracy": acc,
                **extra}
    ck = df.rename(columns={"item": "task", "annotator": "worker"})
    import warnings

    warnings.simplefilter("ignore")
    model = _crowdkit_model(method)        # imports (torch) happen here, outside the timing
    with PeakRSS() as mem:
        t0 = time.perf_counter()
        res = model.fit_predict(ck)
        t1 = time.perf_counter()
    acc = float((res.reindex(np.arange(len(truth))).to_numpy() == truth).mean())
    return {"total_s": t1 - t0, "fit_s": t1 - t0, "mem_mb": mem.added_mb, "accuracy": acc}


def run_worker(lib, method, size, seed) -> dict:
    cmd = [sys.executable, __file__, "--worker", lib, method, size, str(seed)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr else "failed"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def have_crowdkit() -> str | None:
    try:
        import importlib.metadata as md

        import crowdkit  # noqa: F401
        return md.version("crowd-kit")
    except (ImportError, OSError, md.PackageNotFoundError):
        return None


def synthetic_table(sizes, repeats, ck_version, ck_mace_5m,
                    methods=("mv", "ds", "onecoin", "mace")) -> None:
    print("Synthetic 3-class votes, 15% uniform spammers; median wall time (s) of "
          f"{repeats} run(s) for annokit, 1 for crowd-kit on 5M; peak RSS added (MB)")
    header = (f"{'set':<5} {'method':<8} {'annokit s':>10} {'(fit)':>7} {'MB':>7} {'acc':>8} "
              f"{'crowd-kit s':>12} {'MB':>7} {'acc':>8} {'speed-up':>9} {'(fit)':>7}")
    print("speed-up = crowd-kit time / annokit time including input encoding; (fit) = / fit alone")
    print(header)
    for size in sizes:
        for method in methods:
            ours = [run_worker("annokit", method, size, 0) for _ in range(repeats)]
            if any("error" in r for r in ours):
                print(f"{size:<5} {method:<8} annokit failed: {ours[0].get('error')}")
                continue
            t = float(np.median([r["total_s"] for r in ours]))
            f = float(np.median([r["fit_s"] for r in ours]))
            mem = max(r["mem_mb"] for r in ours)
            acc = ours[0]["accuracy"]
            line = f"{size:<5} {method:<8} {t:>10.3f} {f:>7.3f} {mem:>7.0f} {acc:>8.5f}"
            skip = method == "mace" and size == "5m" and not ck_mace_5m
            if ck_version and not skip:
                n = repeats if size != "5m" else 1
                theirs = [run_worker("crowdkit", method, size, 0) for _ in range(n)]
                if any("error" in r for r in theirs):
                    line += f"  crowd-kit failed: {theirs[0]['error'][:60]}"
                else:
                    tc = float(np.median([r["total_s"] for r in theirs]))
                    line += (f" {tc:>12.3f} {max(r['mem_mb'] for r in theirs):>7.0f} "
                             f"{theirs[0]['accuracy']:>8.5f} {tc / t:>8.1f}x {tc / f:>6.1f}x")
            elif skip and ck_version:
                line += "   (crowd-kit MACE on 5M skipped: tens of minutes)"
            print(line, flush=True)


GOLD = {
    "snow2008_rte": ("rte.standardized.tsv", None),
    "dog": ("answer.csv", "truth.csv"),
    "bluebirds": ("answer.csv", "truth.csv"),
    "face": ("answer.csv", "truth.csv"),
}


def real_table(data: Path, ck_version) -> None:
    from annokit.io import read_votes

    print()
    print("Accuracy against gold on the real datasets (annokit / crowd-kit "
          f"{ck_version or 'not installed'})")
    methods = ("mv", "ds", "onecoin", "mace")
    print(f"{'dataset':<14}" + "".join(f"{m:>20}" for m in methods))
    for name, (answers, truth) in GOLD.items():
        votes = read_votes(data / name / answers, gold=None if truth is None else data / name / truth)
        gold = votes.gold
        cells = []
        for method in methods:
            est = _annokit_model(method)
            if method == "mv":
                from annokit.quality import MajorityVote

                est = MajorityVote(ties="first_seen")
            ours = float((est.fit(votes).labels_codes_ == gold).mean())
            theirs = ""
            if ck_version:
                df = votes.to_long()
                ck = pd.DataFrame({"task": df["item"].astype(str), "worker": df["annotator"].astype(str),
                                   "label": df["label"].astype(str)})
                import warnings

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = _crowdkit_model(method).fit_predict(ck)
                pred = res.reindex(votes.item_ids.astype(str)).to_numpy()
                names = np.asarray(votes.labels.names, dtype=object)
                theirs = f" / {float((pred == names[gold]).mean()):.4f}"
            cells.append(f"{ours:.4f}{theirs}")
        print(f"{name:<14}" + "".join(f"{c:>20}" for c in cells), flush=True)
    print("mv: annokit first-seen ties (SOURCE.md rule); crowd-kit breaks ties its own way. "
          "crowd-kit's MACE is row-order dependent; annokit's MACE is seeded (rng=0).")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="annokit vs crowd-kit aggregation benchmark")
    ap.add_argument("--worker", nargs=4, metavar=("LIB", "METHOD", "SIZE", "SEED"))
    ap.add_argument("--sizes", default="100k,5m")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--crowdkit-mace-5m", action="store_true")
    ap.add_argument("--data", type=Path, default=Path(os.environ.get(
        "ANNOKIT_TEST_DATA", Path(__file__).resolve().parents[1] / ".." / "shared" / "data")))
    ap.add_argument("--methods", default="mv,ds,onecoin,mace")
    ap.add_argument("--no-real", action="store_true")
    args = ap.parse_args(argv)
    if args.worker:
        lib, method, size, seed = args.worker
        print(json.dumps(worker(lib, method, size, int(seed))))
        return 0
    ck = have_crowdkit()
    print(f"crowd-kit: {ck or 'not importable (annokit figures only)'}; numpy {np.__version__}; "
          f"cores {os.cpu_count()}")
    synthetic_table([s for s in args.sizes.split(",") if s], args.repeats, ck,
                    args.crowdkit_mace_5m, tuple(args.methods.split(",")))
    if not args.no_real and args.data.is_dir():
        real_table(args.data, ck)
    return 0


if __name__ == "__main__":
    sys.exit(main())
