"""Consensus accuracy with votes and a model together (CROWDLAB) on the crowd sets with gold.

    python recipes/crowdlab_consensus.py [--data DIR] [--seeds 5] [--accuracy 0.92] [--no-cleanlab]

For each crowd set with gold in ../shared/data (Snow et al.'s RTE, D_Product, bluebirds,
dog, face) and each seed, a simulated model of the stated accuracy
(:func:`annokit.io.synthetic.make_model_probs`: the gold label with probability
``--accuracy``, else a uniformly drawn other label; softmax of N(0, 1) logits with an
Exponential(1) margin on the predicted class; items without gold use their majority label as
the truth) is combined with the votes. Prints the mean accuracy against gold over the seeds,
with the range, of:

- the model alone, majority vote and Dawid-Skene (votes only);
- CROWDLAB as in the paper (``CrowdLab()``, Goh et al. 2022) and, when cleanlab is
  installed, cleanlab 2.x's ``get_label_quality_multiannotator`` on the same inputs (the
  share of items whose consensus differs from ours is printed; 0 expected);
- our variant, ``CrowdLab(likelihood="confusion")``: each annotator's confusion with the
  consensus in place of the one shared agreement rate.
"""

from __future__ import annotations

import argparse
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from annokit.io import read_votes
from annokit.io.synthetic import make_model_probs
from annokit.quality import CrowdLab, aggregate

ROOT = Path(__file__).resolve().parents[1]

#: set -> (votes file, gold file or None (gold column in the votes))
DATASETS = {
    "snow2008_rte": ("snow2008_rte/rte.standardized.tsv", None),
    "product_jn": ("product_jn/answer.csv", "product_jn/truth.csv"),
    "bluebirds": ("bluebirds/answer.csv", "bluebirds/truth.csv"),
    "dog": ("dog/answer.csv", "dog/truth.csv"),
    "face": ("face/answer.csv", "face/truth.csv"),
}

COLUMNS = ["model", "MV", "DS", "CROWDLAB", "cleanlab", "CROWDLAB confusion"]


def cleanlab_labels(votes, probs, use: bool = True) -> np.ndarray | None:
    if not use:
        return None
    try:
        from cleanlab.multiannotator import get_label_quality_multiannotator
    except ImportError:
        return None
    annotators = votes.annotator_codes("cleanlab")[0]
    wide = np.full((votes.n_items, votes.n_annotators), np.nan)
    wide[votes.item_index, annotators] = votes.label_index
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = get_label_quality_multiannotator(pd.DataFrame(wide), probs, verbose=False)
    return out["label_quality"]["consensus_label"].to_numpy()


def one_set(votes, seeds: int, accuracy: float, use_cleanlab: bool = True
            ) -> tuple[dict[str, list[float]], float]:
    gold = np.asarray(votes.gold)
    known = gold >= 0
    mv = aggregate(votes, "mv")
    truth = np.where(known, gold, mv.estimator.labels_codes_)
    acc = {name: [] for name in COLUMNS}
    differ = 0.0

    def score(codes) -> float:
        return float(np.mean(np.asarray(codes)[known] == gold[known]))

    ds = score(aggregate(votes, "ds").estimator.labels_codes_)
    for seed in range(seeds):
        probs = make_model_probs(truth, votes.n_labels, accuracy=accuracy, rng=seed)
        ours = CrowdLab().fit(votes, probs).labels_codes_
        acc["model"].append(score(probs.argmax(axis=1)))
        acc["MV"].append(score(mv.estimator.labels_codes_))
        acc["DS"].append(ds)
        acc["CROWDLAB"].append(score(ours))
        acc["CROWDLAB confusion"].append(
            score(CrowdLab(likelihood="confusion").fit(votes, probs).labels_codes_))
        ref = cleanlab_labels(votes, probs, use_cleanlab)
        if ref is not None:
            acc["cleanlab"].append(score(ref))
            differ = max(differ, float(np.mean(ref != ours)))
    return acc, differ


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get(
        "ANNOKIT_TEST_DATA", ROOT.parent / "shared" / "data")))
    parser.add_argument("--sets", default=",".join(DATASETS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--accuracy", type=float, default=0.92)
    parser.add_argument("--no-cleanlab", action="store_true",
                        help="leave cleanlab out (its import alone takes seconds)")
    args = parser.parse_args(argv)
    print(f"mean accuracy against gold over {args.seeds} simulated models of accuracy "
          f"{args.accuracy} (min-max)")
    print(f"| set | {' | '.join(COLUMNS)} | cleanlab differs |")
    print("|---" * (len(COLUMNS) + 2) + "|")
    for name in args.sets.split(","):
        votes_file, gold_file = DATASETS[name]
        if not (args.data / votes_file).exists():
            print(f"| {name} | (not found under {args.data}) |")
            continue
        votes = read_votes(args.data / votes_file,
                           gold=None if gold_file is None else args.data / gold_file)
        acc, differ = one_set(votes, args.seeds, args.accuracy, not args.no_cleanlab)
        cells = [f"{np.mean(v):.4f} ({min(v):.4f}-{max(v):.4f})" if v else "n/a"
                 for v in acc.values()]
        print(f"| {name} | {' | '.join(cells)} | {differ:.4f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
