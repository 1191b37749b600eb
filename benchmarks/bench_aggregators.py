"""Benchmark: GLAD, Wawa and Zero-Based Skill (and MACE) against crowd-kit, in the same run.

Speed (default): a synthetic 3-class set of 1M votes (200k items x 5 votes, 2k annotators,
15% uniform spammers; ``bench_quality.synthetic``), the same long DataFrame for both
libraries. For each method: crowd-kit's fit, annokit's fit alone and with building
``Votes.from_long`` from the frame, accuracy against the known truth, and the share of
items where the two agree. GLAD runs a fixed number of EM iterations in both
(``--glad-iters``, default 1: crowd-kit needs minutes per iteration at this size), and
annokit's GLAD is also timed at its defaults. MACE runs ``--mace-iters`` iterations of
one restart in both (crowd-kit's restarts all start from the same draws).

Crowd sets (``--sets``): each method of both libraries on the five crowd sets with gold
in ../shared/data (RTE, bluebirds, dog, face, D_Product), accuracy and label agreement.

crowd-kit runs in its own environment (``--crowdkit-python``, default
/work/.venv-ck/bin/python; ``python3.11 -m venv /work/.venv-ck && /work/.venv-ck/bin/pip
install crowd-kit``): this script re-runs itself there as a worker that imports only
numpy, pandas and crowd-kit. crowd-kit 1.4.2's ``Wawa`` and ``ZeroBasedSkill`` call
scikit-learn's ``check_is_fitted``, which scikit-learn >= 1.6 refuses for classes that are
not scikit-learn estimators; the worker replaces that check by a no-op (nothing else
changes).

    python benchmarks/bench_aggregators.py [--methods glad,wawa,zbs,mace] [--votes 1000000]
    python benchmarks/bench_aggregators.py --sets [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_quality import synthetic

ROOT = Path(__file__).resolve().parents[1]
SETS = {
    "snow2008_rte": ("snow2008_rte/rte.standardized.tsv", None),
    "bluebirds": ("bluebirds/answer.csv", "bluebirds/truth.csv"),
    "dog": ("dog/answer.csv", "dog/truth.csv"),
    "face": ("face/answer.csv", "face/truth.csv"),
    "product_jn": ("product_jn/answer.csv", "product_jn/truth.csv"),
}


def _frame(source: dict) -> tuple[pd.DataFrame, pd.Series]:
    """(item, annotator, label) frame and truth by item, from a crowd set or the synthetic set."""
    if "n_votes" in source:
        per_item = 5
        df, truth = synthetic(source["n_votes"] // per_item, per_item, source["n_annotators"])
        return df, pd.Series(truth, index=np.arange(len(truth)))
    data = Path(source["data"])
    votes_file, gold_file = SETS[source["set"]]
    if gold_file is None:                                   # Snow et al.'s RTE: gold column
        t = pd.read_csv(data / votes_file, sep="\t")
        df = pd.DataFrame({"item": t["orig_id"].astype(str),
                           "annotator": t["!amt_worker_ids"].astype(str),
                           "label": t["response"].astype(str)})
        truth = t.groupby(t["orig_id"].astype(str))["gold"].first().astype(str)
        return df, truth
    a = pd.read_csv(data / votes_file, dtype=str)
    a.columns = ["item", "annotator", "label"]
    g = pd.read_csv(data / gold_file, dtype=str)
    return a, g.set_index(g.columns[0])[g.columns[1]]


def _crowdkit(method: str, options: dict, df: pd.DataFrame) -> tuple[pd.Series, float]:
    import crowdkit.aggregation.classification.wawa as ck_wawa
    import crowdkit.aggregation.classification.zero_based_skill as ck_zbs
    from crowdkit.aggregation import GLAD, MACE, Wawa, ZeroBasedSkill

    ck_wawa.check_is_fitted = ck_zbs.check_is_fitted = lambda *a, **k: None  # see docstring
    data = df.rename(columns={"item": "task", "annotator": "worker"})
    est = {"glad": lambda: GLAD(**options), "wawa": Wawa, "zbs": ZeroBasedSkill,
           "mace": lambda: MACE(**options)}[method]()
    t = time.perf_counter()
    labels = est.fit_predict(data)
    return labels, time.perf_counter() - t


def _annokit(method: str, options: dict, df: pd.DataFrame) -> tuple[pd.Series, float, float]:
    from annokit.core.votes import Votes
    from annokit.quality import GLAD, MACE, Wawa, ZeroBasedSkill

    t0 = time.perf_counter()
    votes = Votes.from_long(df)
    t1 = time.perf_counter()
    est = {"glad": GLAD, "wawa": Wawa, "zbs": ZeroBasedSkill, "mace": MACE}[method](**options)
    est.fit(votes)
    t2 = time.perf_counter()
    return pd.Series(est.labels_, index=votes.item_ids), t2 - t1, t2 - t0


def worker(spec: dict) -> dict:
    """One measurement; labels go to spec['out'] (item, label) for the agreement."""
    df, truth = _frame(spec["source"])
    if spec["library"] == "crowdkit":
        labels, fit = _crowdkit(spec["method"], spec["options"], df)
        total = fit
    else:
        labels, fit, total = _annokit(spec["method"], spec["options"], df)
    labels = labels.astype(str)
    labels.index = labels.index.astype(str)
    truth.index = truth.index.astype(str)
    acc = float((labels.reindex(truth.index) == truth.astype(str)).mean())
    labels.rename("label").to_frame().to_csv(spec["out"])
    return {"fit": fit, "total": total, "accuracy": acc}


def run(python: str, spec: dict) -> dict:
    cmd = [python, __file__, "--worker", json.dumps(spec)]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    if out.returncode != 0:
        raise SystemExit(f"worker failed: {' '.join(cmd[:2])} {spec['library']} "
                         f"{spec['method']}\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def agreement(a: str, b: str) -> float:
    x = pd.read_csv(a, index_col=0, dtype=str)["label"]
    y = pd.read_csv(b, index_col=0, dtype=str)["label"]
    return float((x == y.reindex(x.index)).mean())


def compare(source: dict, method: str, ck_options: dict, ak_options: dict, ck_python: str,
            tmp: str) -> dict:
    outs = {lib: os.path.join(tmp, f"{lib}.csv") for lib in ("crowdkit", "annokit")}
    ck = run(ck_python, {"library": "crowdkit", "method": method, "options": ck_options,
                         "source": source, "out": outs["crowdkit"]})
    ak = run(sys.executable, {"library": "annokit", "method": method, "options": ak_options,
                              "source": source, "out": outs["annokit"]})
    return {"crowdkit": ck, "annokit": ak, "agree": agreement(outs["annokit"], outs["crowdkit"])}


def speed(args: argparse.Namespace) -> None:
    source = {"n_votes": args.votes, "n_annotators": args.votes // 500}
    plans = {
        "glad": ({"n_iter": args.glad_iters, "tol": 0.0}, {"max_iter": args.glad_iters, "tol": 0.0}),
        "wawa": ({}, {}),
        "zbs": ({}, {}),
        "mace": ({"n_restarts": 1, "n_iter": args.mace_iters},
                 {"n_restarts": 1, "max_iter": args.mace_iters, "tol": 0.0,
                  "majority_start": False, "priors": "uniform"}),
    }
    print(f"{args.votes:,} synthetic votes, 3 labels; times in seconds (fit alone; annokit "
          "also with Votes.from_long)")
    print(f"{'method':<24}{'crowd-kit':>11}{'annokit':>9}{'+input':>9}{'speed-up':>10}"
          f"{'acc ck':>9}{'acc ak':>9}{'agree':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for method in args.methods.split(","):
            ck_opt, ak_opt = plans[method]
            r = compare(source, method, ck_opt, ak_opt, args.crowdkit_python, tmp)
            ck, ak = r["crowdkit"], r["annokit"]
            name = method + (f" ({args.glad_iters} iter)" if method == "glad" else
                             f" ({args.mace_iters} iter, 1 run)" if method == "mace" else "")
            print(f"{name:<24}{ck['fit']:>11.2f}{ak['fit']:>9.3f}{ak['total']:>9.3f}"
                  f"{ck['fit'] / ak['fit']:>9.1f}x{ck['accuracy']:>9.4f}{ak['accuracy']:>9.4f}"
                  f"{r['agree']:>8.4f}", flush=True)
            if method == "glad":
                full = run(sys.executable, {"library": "annokit", "method": "glad", "options": {},
                                            "source": source, "out": os.path.join(tmp, "g.csv")})
                print(f"{'glad (annokit defaults)':<24}{'':>11}{full['fit']:>9.3f}"
                      f"{full['total']:>9.3f}{'':>10}{'':>9}{full['accuracy']:>9.4f}", flush=True)


def sets(args: argparse.Namespace) -> None:
    print(f"{'set':<14}{'method':<8}{'crowd-kit':>10}{'annokit':>9}{'agree':>8}"
          f"{'ck s':>9}{'ak s':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in SETS:
            for method in args.methods.split(","):
                source = {"set": name, "data": str(args.data)}
                r = compare(source, method, {}, {"rng": 0} if method == "mace" else {},
                            args.crowdkit_python, tmp)
                ck, ak = r["crowdkit"], r["annokit"]
                print(f"{name:<14}{method:<8}{ck['accuracy']:>10.4f}{ak['accuracy']:>9.4f}"
                      f"{r['agree']:>8.4f}{ck['fit']:>9.1f}{ak['fit']:>8.2f}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--methods", default="glad,wawa,zbs")
    parser.add_argument("--votes", type=int, default=1_000_000)
    parser.add_argument("--glad-iters", type=int, default=1)
    parser.add_argument("--mace-iters", type=int, default=5)
    parser.add_argument("--sets", action="store_true", help="the five crowd sets instead")
    parser.add_argument("--data", type=Path, default=Path(
        os.environ.get("ANNOKIT_TEST_DATA", ROOT.parent / "shared" / "data")))
    parser.add_argument("--crowdkit-python", default="/work/.venv-ck/bin/python")
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    (sets if args.sets else speed)(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
