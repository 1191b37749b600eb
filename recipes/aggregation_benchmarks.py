"""Accuracy of every aggregator on the crowd sets in ../shared/data, beside the published figures.

    python recipes/aggregation_benchmarks.py [--data DIR] [--sets product_jn,dog]

For each crowd set with gold (Snow et al.'s RTE, bluebirds, dog, face, D_Product) prints
the accuracy against gold of majority vote (ties by first-seen label, the rule of the
published majority figures, and by label order, annokit's default), weighted majority
vote, Wawa, Zero-Based Skill, Dawid-Skene, one-coin Dawid-Skene, MACE (annokit's
defaults, and the paper's uniform class prior) and GLAD, each at its defaults, with the
published figure in parentheses where one exists:

- D_Product: the aggregation table of crowd-kit's paper (Ustalov et al., JOSS 2023),
  which takes its data sets from Zheng et al. (PVLDB 2017): MV .897, Wawa .897, DS .940,
  GLAD .928, MACE .929 (KOS .895: not in annokit);
- RTE, bluebirds, dog, face: the majority-vote accuracy stated in each SOURCE.md
  (RTE 0.9025, bluebirds 0.759, dog 0.8166, face 0.6387; ties by first-seen label).

crowd-kit 1.4.2's accuracies on the same files are printed by
``benchmarks/bench_aggregators.py --sets``.
"""

from __future__ import annotations

import argparse
import os
import warnings
from pathlib import Path

from annokit.io import read_votes
from annokit.quality import MACE, aggregate

ROOT = Path(__file__).resolve().parents[1]

#: set -> (votes file, gold file or None (gold column in the votes))
DATASETS = {
    "snow2008_rte": ("snow2008_rte/rte.standardized.tsv", None),
    "bluebirds": ("bluebirds/answer.csv", "bluebirds/truth.csv"),
    "dog": ("dog/answer.csv", "dog/truth.csv"),
    "face": ("face/answer.csv", "face/truth.csv"),
    "product_jn": ("product_jn/answer.csv", "product_jn/truth.csv"),
}

#: the columns: (heading, aggregate() method, options)
METHODS = [
    ("MV first-seen", "mv", {"ties": "first_seen"}),
    ("MV", "mv", {}),
    ("WMV", "wmv", {}),
    ("Wawa", "wawa", {}),
    ("ZBS", "zbs", {}),
    ("DS", "ds", {}),
    ("one-coin", "onecoin", {}),
    ("MACE", "mace", {}),
    ("MACE uniform", None, {}),
    ("GLAD", "glad", {}),
]

#: published accuracies: set -> {heading: figure}
PUBLISHED = {
    # Ustalov et al. (2023), JOSS 9(96) 6227, table of aggregation results, "D_Product"
    "product_jn": {"MV": 0.897, "Wawa": 0.897, "DS": 0.940, "GLAD": 0.928, "MACE": 0.929},
    # SOURCE.md of each set (majority vote, ties by the first-seen label)
    "snow2008_rte": {"MV first-seen": 0.9025},
    "bluebirds": {"MV first-seen": 0.759},
    "dog": {"MV first-seen": 0.8166},
    "face": {"MV first-seen": 0.6387},
}


def accuracies(data: Path, sets: list[str] | None = None) -> dict[str, dict[str, float]]:
    """{set: {heading: accuracy}} for the sets present under ``data``."""
    out = {}
    for name in sets or DATASETS:
        votes_file, gold_file = DATASETS[name]
        if not (data / votes_file).exists():
            continue
        votes = read_votes(data / votes_file, gold=data / gold_file if gold_file else None)
        row = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # convergence notes are not the point here
            for heading, method, options in METHODS:
                if method is None:                   # MACE as in the paper: uniform class prior
                    est = MACE(priors="uniform", majority_start=False, rng=0).fit(votes)
                    row[heading] = float((est.labels_codes_ == votes.gold).mean())
                else:
                    row[heading] = aggregate(votes, method, rng=0, **options).accuracy
        out[name] = row
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(
        os.environ.get("ANNOKIT_TEST_DATA", ROOT.parent / "shared" / "data")))
    parser.add_argument("--sets", default=None,
                        help=f"comma-separated subset of {', '.join(DATASETS)}")
    args = parser.parse_args(argv)
    sets = args.sets.split(",") if args.sets else None
    unknown = sorted(set(sets or []) - set(DATASETS))
    if unknown:
        parser.error(f"unknown set(s) {unknown}; choose from {list(DATASETS)}")
    results = accuracies(args.data, sets)
    if not results:
        print(f"no crowd set found under {args.data} (set --data or ANNOKIT_TEST_DATA)")
        return 1
    print("accuracy against gold (published figure in parentheses)")
    width = 16
    print(f"{'method':<14}" + "".join(f"{name:>{width}}" for name in results))
    for heading, _, _ in METHODS:
        cells = []
        for name, row in results.items():
            pub = PUBLISHED.get(name, {}).get(heading)
            cell = f"{row[heading]:.4f}" + (f" ({pub:.4g})" if pub is not None else "")
            cells.append(f"{cell:>{width}}")
        print(f"{heading:<14}" + "".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
