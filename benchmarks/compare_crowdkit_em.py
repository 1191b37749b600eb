"""Compare annokit's Dawid-Skene and one-coin EM with crowd-kit 1.4.2 on the shared datasets.

For each dataset and model, with both libraries at their default options
(annokit: ``tol=1e-5``, ``max_iter=100``, ``smoothing=0.01``; crowd-kit:
``n_iter=100``, ``tol=1e-5``), prints the number of EM iterations (E-steps)
each ran before stopping, the share of items whose ``labels_`` agree, and the
largest absolute difference between the posteriors. The same is printed for
annokit with ``smoothing=0`` (crowd-kit's M-step has no pseudo-counts), which
separates the effect of the stopping rule from that of the smoothing.

The two stopping rules differ: annokit stops when its objective (evidence
lower bound plus the log prior of the smoothing, per vote) improves by less
than ``tol``; crowd-kit's loss adds the log class prior once per vote instead
of once per item, so it is not a bound EM increases, and crowd-kit also stops
at the first iteration where that loss drops.

crowd-kit is not an annokit dependency; run this from a separate environment::

    python3.11 -m venv /work/.venv-ck
    /work/.venv-ck/bin/pip install crowd-kit==1.4.2 "pandas<3" pydantic click
    /work/.venv-ck/bin/python benchmarks/compare_crowdkit_em.py [--data ../shared/data]

(``--data`` defaults to ``$ANNOKIT_TEST_DATA``, else ``../shared/data``.)

Without crowd-kit the script prints a message and exits with status 0.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from annokit.core.votes import Votes  # noqa: E402
from annokit.io import read_votes  # noqa: E402
from annokit.quality import DawidSkene, OneCoinDawidSkene  # noqa: E402


def lewidi(path: Path) -> Votes:
    """LeWiDi 2023 json (``annotators`` and ``annotations``, comma-separated, per item)."""
    rows = []
    for item, rec in json.loads(path.read_text()).items():
        pairs = zip(rec["annotators"].split(","), rec["annotations"].split(","), strict=True)
        for ann, lab in pairs:
            rows.append((item, ann.strip(), lab.strip()))
    return Votes.from_long(pd.DataFrame(rows, columns=["item", "annotator", "label"]))


def datasets(data: Path) -> dict[str, Votes]:
    sets = {
        "snow2008_rte": read_votes(data / "snow2008_rte" / "rte.standardized.tsv"),
        "dog": read_votes(data / "dog" / "answer.csv", gold=data / "dog" / "truth.csv"),
        "bluebirds": read_votes(data / "bluebirds" / "answer.csv",
                                gold=data / "bluebirds" / "truth.csv"),
        "face": read_votes(data / "face" / "answer.csv", gold=data / "face" / "truth.csv"),
    }
    for name in ("ArMIS", "HS-Brexit"):
        for split in ("train", "dev", "test"):
            sets[f"{name}_{split}"] = lewidi(data / "lewidi2023" / name / f"{name}_{split}.json")
    return sets


def crowdkit_frame(votes: Votes) -> pd.DataFrame:
    """The votes as crowd-kit's (task, worker, label) frame, with integer label codes."""
    return pd.DataFrame({"task": votes.item_index, "worker": votes.annotator_index,
                         "label": votes.label_index})


def compare(ours, theirs, n_items: int, n_labels: int) -> tuple[float, float]:
    probas = theirs.probas_.reindex(index=range(n_items), columns=range(n_labels)).to_numpy()
    labels = theirs.labels_.reindex(range(n_items)).to_numpy()
    return float((ours.labels_codes_ == labels).mean()), float(np.abs(ours.posteriors_ - probas).max())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get(
        "ANNOKIT_TEST_DATA", ROOT.parent / "shared" / "data")))
    args = parser.parse_args(argv)
    try:
        import crowdkit
        from crowdkit.aggregation import DawidSkene as CkDS
        from crowdkit.aggregation import OneCoinDawidSkene as CkOC
    except ImportError:
        print("crowd-kit is not installed in this environment; nothing to compare "
              "(see this script's docstring)")
        return 0
    from importlib.metadata import version

    print(f"crowd-kit {version('crowd-kit')} ({Path(crowdkit.__file__).parent}), "
          f"pandas {pd.__version__}, numpy {np.__version__}")
    print("| dataset | model | iterations annokit / crowd-kit | crowd-kit stopped on | "
          "labels_ agree | max abs diff posteriors | smoothing=0: iterations, labels agree, "
          "max diff | smoothing=0 at crowd-kit's count: max diff |")
    print("|---|---|---|---|---|---|---|---|")
    n_diff = n_runs = n_drops = 0
    worst_same: dict[str, float] = {}
    for name, votes in datasets(args.data).items():
        df = crowdkit_frame(votes)
        for model, ours_cls, ck_cls in (("DawidSkene", DawidSkene, CkDS),
                                        ("one-coin", OneCoinDawidSkene, CkOC)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = ck_cls(n_iter=100, tol=1e-5).fit(df)
                ours = ours_cls().fit(votes)
                raw = ours_cls(smoothing=0.0).fit(votes)
                it_theirs = len(theirs.loss_history_)
                same = ours_cls(smoothing=0.0, tol=0, max_iter=it_theirs).fit(votes)
            agree, diff = compare(ours, theirs, votes.n_items, votes.n_labels)
            agree0, diff0 = compare(raw, theirs, votes.n_items, votes.n_labels)
            diff_same = compare(same, theirs, votes.n_items, votes.n_labels)[1]
            n_runs += 1
            n_diff += diff > 1e-3
            worst_same[model] = max(worst_same.get(model, 0.0), diff_same)
            steps = np.diff(theirs.loss_history_)
            reason = ("max_iter" if it_theirs == 100 and (steps[-1:] >= 1e-5).all()
                      else "a drop" if steps[-1] < 0 else "change < tol")
            n_drops += reason == "a drop"
            print(f"| {name} | {model} | {ours.n_iter_} / {it_theirs} | {reason} | {agree:.4f} | "
                  f"{diff:.2g} | {raw.n_iter_}, {agree0:.4f}, {diff0:.2g} | {diff_same:.1g} |")
    print(f"posteriors differ by more than 1e-3 in {n_diff} of {n_runs} runs (default options); "
          f"crowd-kit stopped on a drop of its loss in {n_drops}")
    print("largest posterior difference at crowd-kit's iteration count with smoothing=0: "
          + ", ".join(f"{model} {value:.1g}" for model, value in worst_same.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
