"""Spammer study: inject known spammers, measure who each method catches.

For each dataset we pick a fraction of the annotators (seeded) and replace all
their answers with spam, of two kinds:

- ``uniform``: every answer drawn uniformly at random from the labels;
- ``constant``: every answer is one label (chosen at random per spammer), the
  "always the same label" spammer.

Then every filtering method of :func:`annokit.quality.filter_annotators` runs
with its default threshold, and we report, over ``--repeats`` seeds, the
recall (share of injected spammers removed) and the false-positive rate (share
of the other annotators removed), plus how far the soft labels (vote
distributions) are from the clean ones, measured as mean total variation
distance, without and with filtering.

Datasets (read in place from ``--data``): the gold datasets snow2008_rte, dog,
bluebirds, face, and a "ChaosNLI-style" set: the ChaosNLI SNLI items with
synthetic annotators who answer by sampling the item's 100-vote human label
distribution (so honest annotators disagree as much as ChaosNLI's crowd did),
10 annotators per item out of 150.

Note on false positives: the real crowds contain genuinely poor annotators
(25 of Snow et al.'s 164 RTE workers, most with 20 answers, are not
significantly better than chance on gold; four of them gave 540-800 answers at
50-58% accuracy on a two-label task), which are indistinguishable from an
injected uniform spammer. ``fpr`` (the issue's measure) counts them as false
positives anyway; ``fpr_competent`` is the false-positive rate among the
annotators whose clean gold answers are significantly better than chance
(one-sided binomial test, p < 0.05), the annotators a filter must not remove.
The gold rule is ChaosNLI's (accuracy < 0.75 on gold items or 4 consecutive
wrong gold answers); on these datasets every item has gold, so it sees every
answer.

``fpr_at_r90`` is each score's false-positive rate at the threshold that
catches 90% of the injected spammers, chosen knowing them: what no default
threshold can beat. To show what is attainable at all, the ``oracle-lrt`` rows are a likelihood-ratio
test on each annotator's gold answers (uniform spammer against an honest
annotator of accuracy p1; by Neyman-Pearson the most powerful test of one
annotator given its gold answers), with p1 and the threshold both chosen
*knowing which annotators were injected*: the lowest ``fpr`` at which it
reaches 90% recall. It is a reference point, not a bound: it sees only gold
answers, and where gold itself is hard (dog) agreement with co-annotators
separates spammers better. The recipe also prints, for the clean crowd, how
many annotators score on gold no better than the 90th percentile of a uniform
spammer with the same number of answers: a detector that ranks by gold
accuracy has to remove them to reach 90% recall (RTE: 14 of 164, 8.5%).

The summary after the table gives, for 20% uniform spammers on RTE and dog,
the method with the lowest ``fpr`` among those reaching 90% recall (else the
highest recall), the best threshold chosen knowing the spammers, and the oracle.

Run: ``python recipes/spammer_study.py [--data DIR] [--repeats N] [--fractions 0.1,0.2]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from annokit.core.divergence import tvd
from annokit.core.votes import Votes
from annokit.errors import AnnokitWarning
from annokit.io import read_chaosnli, read_votes
from annokit.quality import METHODS, annotator_scores, annotator_stats, filter_annotators

GOLD_DATASETS = {
    "rte": ("snow2008_rte/rte.standardized.tsv", None),
    "dog": ("dog/answer.csv", "dog/truth.csv"),
    "bluebirds": ("bluebirds/answer.csv", "bluebirds/truth.csv"),
    "face": ("face/answer.csv", "face/truth.csv"),
}


def default_data_dir() -> Path:
    env = os.environ.get("ANNOKIT_TEST_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def chaosnli_style(data: Path, rng: np.random.Generator, *, n_annotators: int = 150,
                   per_item: int = 10) -> Votes:
    """Synthetic annotators answering from ChaosNLI SNLI's human label distributions."""
    base = read_chaosnli(data / "chaosnli" / "chaosNLI_snli.jsonl")
    counts = base.counts().astype(float)
    probs = counts / counts.sum(axis=1, keepdims=True)
    n_items = base.n_items
    # each item gets `per_item` distinct annotators: argsort of random keys per row
    ann = np.argsort(rng.random((n_items, n_annotators)), axis=1)[:, :per_item]
    cum = probs.cumsum(axis=1)
    u = rng.random((n_items, per_item))
    labels = (u[:, :, None] > cum[:, None, :]).sum(axis=2).clip(max=base.n_labels - 1)
    item = np.repeat(np.arange(n_items), per_item)
    return Votes(item, labels.reshape(-1), item_ids=base.item_ids, labels=base.labels,
                 annotator_index=ann.reshape(-1),
                 annotator_ids=np.array([f"synth{j}" for j in range(n_annotators)], dtype=object),
                 source="chaosnli-style")


def inject(votes: Votes, fraction: float, kind: str, rng: np.random.Generator):
    """Replace the answers of a random ``fraction`` of annotators by spam; return (votes, mask)."""
    active = np.flatnonzero(votes.votes_per_annotator() > 0)
    n_spam = round(fraction * len(active))
    spam = np.zeros(votes.n_annotators, dtype=bool)
    spam[rng.choice(active, size=n_spam, replace=False)] = True
    is_spam_vote = spam[votes.annotator_index]
    labels = votes.label_index.copy()
    if kind == "uniform":
        labels[is_spam_vote] = rng.integers(0, votes.n_labels, size=int(is_spam_vote.sum()))
    else:
        favourite = rng.integers(0, votes.n_labels, size=votes.n_annotators)
        labels[is_spam_vote] = favourite[votes.annotator_index[is_spam_vote]]
    out = Votes(votes.item_index, labels, item_ids=votes.item_ids, labels=votes.labels,
                annotator_index=votes.annotator_index, annotator_ids=votes.annotator_ids,
                gold=votes.gold, duplicates="keep", source=f"{votes.source}+spam")
    return out, spam


def gold_tally(votes: Votes) -> tuple[np.ndarray, np.ndarray]:
    """(gold answers, correct gold answers) per annotator, as floats."""
    stats = annotator_stats(votes, alpha=False)
    n = stats["n_gold"].to_numpy(dtype=float)
    return n, np.round(stats["gold_accuracy"].fillna(0).to_numpy() * n)


def competent_annotators(votes: Votes) -> np.ndarray:
    """Annotators whose clean gold answers are significantly better than chance.

    One-sided binomial test of their correct gold answers against chance
    (1 / n_labels), p < 0.05. Without gold (the ChaosNLI-style set, whose
    annotators are honest by construction) every annotator counts as competent.
    """
    if votes.gold is None or not (votes.gold >= 0).any():
        return np.ones(votes.n_annotators, dtype=bool)
    from scipy.stats import binom

    n, k = gold_tally(votes)
    return (n > 0) & (binom.sf(k - 1, n, 1.0 / votes.n_labels) < 0.05)


def oracle_lrt(votes: Votes, spam: np.ndarray, *, min_recall: float = 0.9) -> dict | None:
    """Best likelihood-ratio test on gold answers, tuned knowing the injected spammers.

    For each annotator with ``k`` of ``n`` gold answers right, the log likelihood
    ratio of "uniform spammer" (accuracy 1/K) to "honest, accuracy p1" (errors
    spread over the other K-1 labels). For p1 on a grid, flag the annotators
    whose ratio is at least the largest threshold that still flags
    ``min_recall`` of the injected spammers; return the p1 with the lowest
    false-positive rate. None without gold.
    """
    if votes.gold is None or not (votes.gold >= 0).any():
        return None
    n, k = gold_tally(votes)
    K = votes.n_labels
    target = spam & (n > 0)
    best = None
    for p1 in np.arange(0.55, 0.96, 0.05):
        llr = n * np.log(1.0 / K) - (k * np.log(p1) + (n - k) * np.log((1 - p1) / (K - 1)))
        need = int(np.ceil(min_recall * target.sum()))
        cut = np.sort(llr[target])[::-1][need - 1]
        flagged = (llr >= cut) & (n > 0)
        row = {"recall": (flagged & spam).sum() / max(spam.sum(), 1),
               "fpr": (flagged & ~spam).sum() / max((~spam).sum(), 1), "p1": float(p1)}
        if best is None or row["fpr"] < best["fpr"]:
            best = row
    return best


def spammer_like(votes: Votes) -> tuple[int, int] | None:
    """(annotators whose gold score is within a uniform spammer's 90th percentile, annotators)."""
    if votes.gold is None or not (votes.gold >= 0).any():
        return None
    from scipy.stats import binom

    n, k = gold_tally(votes)
    like = (n > 0) & (k <= binom.ppf(0.9, n, 1.0 / votes.n_labels))
    return int(like.sum()), int((n > 0).sum())


def fpr_at_recall(scores: np.ndarray, spam: np.ndarray, *, min_recall: float = 0.9) -> float:
    """False-positive rate of the score's threshold chosen knowing the spammers: the highest
    threshold that flags (score <= threshold) ``min_recall`` of them. NaN scores are never
    flagged; NaN when no threshold reaches ``min_recall``."""
    valid = np.isfinite(scores)
    need = int(np.ceil(min_recall * spam.sum()))
    spam_scores = np.sort(scores[spam & valid])
    if need == 0 or len(spam_scores) < need:
        return float("nan")
    flagged = valid & (scores <= spam_scores[need - 1])
    return float((flagged & ~spam).sum() / max((~spam).sum(), 1))


def soft(votes: Votes) -> np.ndarray:
    c = votes.counts().astype(float)
    return c / c.sum(axis=1, keepdims=True)


def run(data: Path, fractions: list[float], repeats: int, kinds: list[str],
        datasets: list[str]) -> list[dict]:
    rows = []
    for name in datasets:
        for kind in kinds:
            for frac in fractions:
                for rep in range(repeats):
                    rng = np.random.default_rng([rep, int(frac * 1000), kinds.index(kind)])
                    if name == "chaosnli":
                        clean = chaosnli_style(data, rng)
                    else:
                        path, gold = GOLD_DATASETS[name]
                        clean = read_votes(data / path, gold=None if gold is None else data / gold)
                    spammed, spam = inject(clean, frac, kind, rng)
                    competent = competent_annotators(clean)
                    p_clean = soft(clean)
                    tvd_spam = float(tvd(p_clean, soft(spammed)).mean())
                    for method in METHODS:
                        if method == "gold" and spammed.gold is None:
                            continue
                        t0 = time.perf_counter()
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore", AnnokitWarning)
                            filtered, audit = filter_annotators(spammed, method=method)
                            scores = annotator_scores(spammed, method)
                        flagged = np.zeros(clean.n_annotators, dtype=bool)
                        pos = {a: j for j, a in enumerate(clean.annotator_ids)}
                        flagged[[pos[a] for a in audit.removed_annotators]] = True
                        kept_items = clean.item_positions(filtered.item_ids)
                        tvd_filt = float(tvd(p_clean[kept_items], soft(filtered)).mean())
                        rows.append({
                            "dataset": name, "kind": kind, "fraction": frac, "repeat": rep,
                            "method": method,
                            "recall": (flagged & spam).sum() / max(spam.sum(), 1),
                            "fpr": (flagged & ~spam).sum() / max((~spam).sum(), 1),
                            "fpr_competent": (flagged & ~spam & competent).sum()
                            / max((~spam & competent).sum(), 1),
                            "fpr_at_r90": fpr_at_recall(scores, spam),
                            "tvd_unfiltered": tvd_spam, "tvd_filtered": tvd_filt,
                            "items_removed": len(audit.items_removed),
                            "seconds": time.perf_counter() - t0,
                        })
                    oracle = oracle_lrt(spammed, spam)
                    if oracle is not None:
                        flagged_comp = np.nan   # not computed for the oracle
                        rows.append({
                            "dataset": name, "kind": kind, "fraction": frac, "repeat": rep,
                            "method": "oracle-lrt", "recall": oracle["recall"],
                            "fpr": oracle["fpr"], "fpr_competent": flagged_comp,
                            "fpr_at_r90": oracle["fpr"],
                            "tvd_unfiltered": tvd_spam, "tvd_filtered": np.nan,
                            "items_removed": np.nan, "seconds": np.nan,
                        })
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=default_data_dir())
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--fractions", default="0.1,0.2,0.3")
    ap.add_argument("--kinds", default="uniform,constant")
    ap.add_argument("--datasets", default="rte,dog,bluebirds,face,chaosnli")
    args = ap.parse_args(argv)
    if not args.data.is_dir():
        print(f"data folder not found: {args.data} (pass --data or set ANNOKIT_TEST_DATA)",
              file=sys.stderr)
        return 2
    import pandas as pd

    rows = run(args.data, [float(f) for f in args.fractions.split(",")], args.repeats,
               args.kinds.split(","), args.datasets.split(","))
    df = pd.DataFrame(rows)
    table = (df.groupby(["dataset", "kind", "fraction", "method"], sort=False)
             [["recall", "fpr", "fpr_competent", "fpr_at_r90", "tvd_unfiltered", "tvd_filtered",
               "items_removed", "seconds"]]
             .mean().reset_index())
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 500)
    print(f"Injected spammers, mean over {args.repeats} seeds; default thresholds; "
          "recall/fpr over annotators, tvd = mean TVD of soft labels to the clean ones;\n"
          "fpr_at_r90 = fpr of the method's score at the threshold that catches 90% of the "
          "spammers, chosen knowing them (what the best possible threshold could do)")
    print(table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print()
    print("20% uniform spammers: the best method (lowest fpr among those with recall >= 0.90, "
          "else the highest recall)")
    for name in ("rte", "dog"):
        sub = table[(table.dataset == name) & (table.kind == "uniform") & (table.fraction == 0.2)]
        if sub.empty:
            continue
        methods = sub[sub.method != "oracle-lrt"]
        hits = methods[methods.recall >= 0.90].sort_values("fpr")
        best = hits.iloc[0] if len(hits) else methods.sort_values("recall").iloc[-1]
        print(f"  {name}: best method {best.method}: recall {best.recall:.3f}, fpr {best.fpr:.3f} "
              f"(fpr among competent annotators {best.fpr_competent:.3f})")
        tuned = methods.sort_values("fpr_at_r90").iloc[0]
        print(f"      best threshold chosen knowing the spammers: {tuned.method} at 90% recall, "
              f"fpr {tuned.fpr_at_r90:.3f}")
        path, gold = GOLD_DATASETS[name]
        like = spammer_like(read_votes(args.data / path,
                                       gold=None if gold is None else args.data / gold))
        if like is not None:
            print(f"      clean crowd: {like[0]} of {like[1]} annotators score on gold no better "
                  "than the 90th percentile of a uniform spammer with as many answers")
        oracle = sub[sub.method == "oracle-lrt"]
        if len(oracle):
            print(f"      oracle likelihood-ratio test on gold answers, tuned knowing the "
                  f"spammers: recall {oracle.recall.iloc[0]:.3f} at fpr {oracle.fpr.iloc[0]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
