"""ChaosNLI (Nie, Zhou & Bansal 2020), Table 5, chance-baseline row: JSD and KL.

The chance baseline predicts the uniform distribution on every item. Table 5
reports, against the 100-vote human distributions, the mean Jensen-Shannon
distance (``scipy.spatial.distance.jensenshannon``: natural log, square root of
the divergence) and the mean KL(human || model) (natural log, model
probabilities clipped at 1e-15; irrelevant for the uniform model).

We build uniform predictions for every ChaosNLI item, align them with the votes
(:func:`annokit.metrics.records.align`) and run :func:`annokit.metrics.engine.evaluate`;
its ``chance`` baseline row is computed the same way and is printed as a check.

Where our numbers differ from the paper: they agree to the paper's rounding
(within 0.0005); the last digit of KL on SNLI (ours 0.54547, paper 0.5457) and
MNLI-m (0.35570 vs 0.3559) is 2e-4 off, which we attribute to rounding in the
paper's pipeline; we do not adjust anything to match it.

The accuracy column of Table 5 (old/new gold) is not reproduced here: the
uniform model's argmax is only defined by a tie-breaking rule the paper does not
state.

Run: ``python recipes/chaosnli_table5_chance.py [--data DIR]`` (default
``../shared/data`` relative to the repository, or ``$ANNOKIT_TEST_DATA``).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import numpy as np

from annokit.errors import AnnokitWarning
from annokit.io import read_votes
from annokit.io.predictions import Predictions
from annokit.metrics.engine import evaluate
from annokit.metrics.records import align

#: Table 5, "Chance" row: (JSD, KL) per subset.
PAPER = {"alphanli": (0.3205, 0.406), "snli": (0.383, 0.5457), "mnli_m": (0.3023, 0.3559)}
FILES = {"alphanli": "chaosNLI_alphanli.jsonl", "snli": "chaosNLI_snli.jsonl",
         "mnli_m": "chaosNLI_mnli_m.jsonl"}


def default_data_dir() -> Path:
    env = os.environ.get("ANNOKIT_TEST_DATA")
    if env:
        return Path(env)
    return (Path(__file__).resolve().parents[1] / ".." / "shared" / "data").resolve()


def compute(data_dir: Path | str | None = None) -> dict[str, dict[str, float]]:
    """``{subset: {"jsd", "kl", "jsd_baseline_row", "kl_baseline_row", "n_items"}}``."""
    data = Path(data_dir) if data_dir is not None else default_data_dir()
    out = {}
    for name, fname in FILES.items():
        votes = read_votes(data / "chaosnli" / fname, format="chaosnli")
        uniform = np.full((votes.n_items, votes.n_labels), 1.0 / votes.n_labels)
        preds = Predictions.from_arrays(votes.item_ids, probs=uniform, source=f"uniform:{name}")
        records = align(votes, preds, pred_labels=list(votes.labels.names))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AnnokitWarning)  # tied majorities: not used here
            res = evaluate(records)
        out[name] = {"jsd": res.metrics["jsd"], "kl": res.metrics["kl"],
                     "jsd_baseline_row": res.baselines["chance"]["jsd"],
                     "kl_baseline_row": res.baselines["chance"]["kl"], "n_items": res.n_items}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="folder holding chaosnli/")
    args = parser.parse_args(argv)
    result = compute(args.data)
    print("ChaosNLI (Nie et al. 2020) Table 5, chance baseline (uniform prediction)")
    head = f"{'subset':<10}{'items':>7}{'JSD paper':>11}{'JSD ours':>10}{'KL paper':>10}{'KL ours':>10}"
    print(head)
    print("-" * len(head))
    for name, r in result.items():
        jsd_p, kl_p = PAPER[name]
        print(f"{name:<10}{r['n_items']:>7}{jsd_p:>11.4f}{r['jsd']:>10.5f}{kl_p:>10.4f}"
              f"{r['kl']:>10.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
