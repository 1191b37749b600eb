"""Majority-vote accuracy against gold on the four crowd sets in ../shared/data.

    python recipes/crowd_majority_accuracy.py [--data DIR]

Prints, per dataset, the size, the accuracy with ties broken by the first-seen
label (the rule the SOURCE.md figures use), the accuracy with ties broken by
label order, the number of tied items, and the SOURCE.md figure.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from annokit.io import read_votes
from annokit.quality.majority import MajorityVote

ROOT = Path(__file__).resolve().parents[1]

#: dataset -> (votes file, gold file or None, majority-vote accuracy stated in SOURCE.md)
DATASETS = {
    "snow2008_rte": ("snow2008_rte/rte.standardized.tsv", None, 0.9025),
    "bluebirds": ("bluebirds/answer.csv", "bluebirds/truth.csv", 0.759),
    "dog": ("dog/answer.csv", "dog/truth.csv", 0.8166),
    "face": ("face/answer.csv", "face/truth.csv", 0.6387),
}


def majority_accuracies(data: Path) -> list[dict]:
    rows = []
    for name, (votes_file, gold_file, stated) in DATASETS.items():
        votes = read_votes(data / votes_file, gold=data / gold_file if gold_file else None)
        gold = votes.gold
        has = gold >= 0
        seen = MajorityVote(ties="first_seen").fit(votes)
        order = MajorityVote(ties="first").fit(votes)
        rows.append({
            "dataset": name, "n_items": votes.n_items, "n_votes": votes.n_votes,
            "n_annotators": votes.n_annotators, "n_gold": int(has.sum()),
            "n_tied": int(seen.is_tied_[has].sum()),
            "accuracy_first_seen": float((seen.labels_codes_[has] == gold[has]).mean()),
            "accuracy_label_order": float((order.labels_codes_[has] == gold[has]).mean()),
            "source_md": stated,
        })
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(
        os.environ.get("ANNOKIT_TEST_DATA", ROOT.parent / "shared" / "data")))
    args = parser.parse_args(argv)
    header = f"{'dataset':<14}{'items':>6}{'votes':>7}{'annot.':>7}{'tied':>6}" \
             f"{'MV first-seen':>15}{'MV label order':>16}{'SOURCE.md':>11}"
    print(header)
    for r in majority_accuracies(args.data):
        print(f"{r['dataset']:<14}{r['n_items']:>6}{r['n_votes']:>7}{r['n_annotators']:>7}"
              f"{r['n_tied']:>6}{r['accuracy_first_seen']:>15.4f}{r['accuracy_label_order']:>16.4f}"
              f"{r['source_md']:>11.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
