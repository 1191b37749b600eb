"""evaluate on Dask (annokit.scale.evaluate.evaluate_dask) against evaluate in memory.

    python benchmarks/bench_scale_evaluate.py --votes 1e7 [--n-boot 0] [--workers 2]
                                              [--memory-limit 2GB] [--no-memory-engine]

Data: the seeded Parquet partitions of ``benchmarks/bench_scale.py`` (10 votes per item,
3 classes; ``--votes 1e7`` is 1e6 items). The Dask side reads the votes with
``annokit.scale.votes.read_votes_dask`` when it exists, else with a minimal reader of
this layout (item code parsed from the id); the clock covers reading, joining and
evaluating. The in-memory side times ``read_votes`` + ``read_predictions`` + ``align`` +
``evaluate``. Prints the seconds and whether every metric agrees to 1e-12.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import LABELS, make_data  # noqa: E402


def _votes_dask(folder: Path):
    try:
        from annokit.scale.votes import read_votes_dask
        return read_votes_dask(str(folder / "votes"))
    except ImportError:
        pass
    import dask.dataframe as dd
    import pandas as pd

    from annokit.core.labels import LabelSet

    labels = LabelSet(sorted(LABELS))
    frame = dd.read_parquet(str(folder / "votes"))

    def votes_part(df: pd.DataFrame) -> pd.DataFrame:
        item = df["item"].astype(str).str.slice(4).astype(np.int64).to_numpy()
        label = labels.encode(df["label"].astype(str).to_numpy()).astype(np.int16)
        return pd.DataFrame({"item": item, "annotator": np.full(item.size, -1, np.int32),
                             "label": label})

    def items_part(df: pd.DataFrame) -> pd.DataFrame:
        ids = df["item"].astype(str).drop_duplicates().to_numpy(dtype=object)
        return pd.DataFrame({"item": np.array([int(i[4:]) for i in ids], dtype=np.int64),
                             "item_id": ids, "gold": np.full(ids.size, -1, np.int16)})

    v = frame.map_partitions(votes_part, meta=votes_part(frame._meta), enforce_metadata=False)
    it = frame.map_partitions(items_part, meta=items_part(frame._meta), enforce_metadata=False)
    n_votes = len(frame)

    class Hand:
        pass

    dv = Hand()
    dv.frame, dv.items, dv.labels = v, it, labels
    dv.n_votes, dv.n_items = n_votes, n_votes // 10
    return dv


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--votes", type=float, default=1e7)
    p.add_argument("--n-boot", type=int, default=0)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--memory-limit", default="2GB")
    p.add_argument("--data", default=str(Path(__file__).resolve().parent / "_out" / "scale"))
    p.add_argument("--no-memory-engine", action="store_true")
    a = p.parse_args()
    from distributed import Client, LocalCluster

    from annokit.metrics.workflow import EvaluateOptions
    from annokit.scale.evaluate import evaluate_dask

    warnings.simplefilter("ignore")
    t = time.perf_counter()
    folder = make_data(Path(a.data), int(a.votes))
    print(f"data {folder} ready in {time.perf_counter() - t:.1f} s", flush=True)
    with LocalCluster(n_workers=a.workers, threads_per_worker=1, memory_limit=a.memory_limit,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        t = time.perf_counter()
        res = evaluate_dask(_votes_dask(folder), str(folder / "predictions"),
                            EvaluateOptions(n_boot=a.n_boot), client=client)
        t_dask = time.perf_counter() - t
        print(f"dask   {a.votes:.0e} votes {res.n_items} items n_boot={a.n_boot}: "
              f"{t_dask:.1f} s", flush=True)
    if a.no_memory_engine:
        return
    from annokit.io import read_votes
    from annokit.io.predictions import read_predictions
    from annokit.metrics.engine import evaluate
    from annokit.metrics.records import align

    whole = folder / "votes_whole.parquet"  # read_votes takes one file
    if not whole.exists():
        import pyarrow.dataset as ds
        import pyarrow.parquet as pq

        pq.write_table(ds.dataset(str(folder / "votes")).to_table(), whole)
    t = time.perf_counter()
    votes = read_votes(whole)
    t_read = time.perf_counter() - t
    preds = read_predictions(sorted((folder / "predictions").iterdir()))
    rec = align(votes, preds)
    t_align = time.perf_counter() - t
    ref = evaluate(rec, n_boot=a.n_boot)
    t_mem = time.perf_counter() - t
    print(f"memory {a.votes:.0e} votes {ref.n_items} items n_boot={a.n_boot}: {t_mem:.1f} s "
          f"(read votes {t_read:.1f} s, + predictions and align {t_align - t_read:.1f} s, "
          f"evaluate {t_mem - t_align:.1f} s)", flush=True)
    worst = max(abs(ref.metrics[k] - res.metrics[k]) / max(1.0, abs(ref.metrics[k]))
                for k in ref.metrics)
    print(f"largest metric difference {worst:.2e}; labels {list(ref.labels)} / "
          f"{list(res.labels)}")


if __name__ == "__main__":
    main()
