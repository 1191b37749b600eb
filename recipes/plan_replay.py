"""Where to spend the next annotations: `annokit.plan` replayed on ChaosNLI (issue 26).

ChaosNLI (Nie et al. 2020) has 100 votes per item, so the 100-vote result is known. For each
seed every item's votes are put in a random order; 3 votes per item are "collected", then
`annokit.plan` places an average of 10 more per item in 5 rounds, each planned vote being the
item's next unused vote. Uniform allocation takes the first k votes of the same order, for k =
13 (the plan's total), 10, 15, 18 (3 + 1.5 x 10) and 20.

* `goal="majority"`: share of items whose unique 100-vote majority the final majority recovers
  (items with a tied 100-vote majority are left out; a final tie earns 1/number tied).
* `goal="distribution"`: mean TVD of the final soft label to the 100-vote one.

The issue quotes a naive rule (next votes to the items whose two leading labels are closest):
SNLI 94.6% against uniform-10 90.1% and uniform-20 93.3%; MNLI 87.8% against 84.2% / 88.7%;
and, for the soft-label goal on MNLI from 5 votes plus 10, a naive spread rule at mean TVD
0.1074 against uniform's 0.1051. Those figures are printed beside ours; they come from other
draws, so only the order of magnitude is comparable.

The plan runs under each prior of ``--priors`` (default fitted,uniform): ``fitted``, the
Dirichlet of the Dirichlet-multinomial fitted to the votes collected so far (refitted each round;
the plan's default), ``uniform``, Dirichlet(1, ..., 1) (the plan's prior before issue 34), and
``model``, which centres each item's prior on a model's probabilities (``annokit plan
--predictions``): RoBERTa-base, seed 0, of Baan et al. (2022) (``chaosnli_predictions_baan2022``,
its dev and test halves, class order e, c, n), joined as ``evaluate`` joins them; MNLI's files
cover 1,569 of the 1,599 items, and with ``model`` among the priors every prior runs on the
items with a prediction. Issue 34's protocol is ``--budget 7 --seeds 0,1`` (3 votes per item up
to 10): its acceptance asks the majority of at least uniform-15 on every seed and a mean TVD at
most uniform-10's.

Run: ``python recipes/plan_replay.py [--data DIR] [--seeds 0,1,2] [--goals majority,distribution]
[--sets snli,mnli] [--budget 10] [--priors fitted,uniform,model]`` (default data folder
``../shared/data`` relative to the repository, or ``$ANNOKIT_TEST_DATA``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import annokit
from annokit.io import read_votes
from annokit.subsample.plan import ReplayResult

SUBSETS = {"snli": ("ChaosNLI-SNLI", "chaosNLI_snli.jsonl"),
           "mnli": ("ChaosNLI-MNLI", "chaosNLI_mnli_m.jsonl")}
#: The model of ``--priors ...,model``: Baan et al. (2022)'s RoBERTa-base, seed 0.
MODEL_FILES = {"snli": "SNLI_{half}_roberta-base_0.json", "mnli": "MNLI_{half}_roberta-base_0.json"}
START, BUDGET, ROUNDS = 3, 10, 5
COMPARE = (10, 15, 18, 20)
#: The naive rule's figures quoted in issue 26 (their own draws).
ISSUE_NAIVE = {"snli": "naive closest-two rule 0.946, uniform-10 0.901, uniform-20 0.933",
               "mnli": "naive closest-two rule 0.878, uniform-10 0.842, uniform-20 0.887"}


def default_data_dir() -> Path:
    env = os.environ.get("ANNOKIT_TEST_DATA")
    if env:
        return Path(env)
    return (Path(__file__).resolve().parents[1] / ".." / "shared" / "data").resolve()


def acceptance(result: ReplayResult, budget: int = BUDGET) -> str:
    """The issues' acceptance line for one replay (26: TVD within +0.002 of uniform at the same
    total; 34: at most uniform's)."""
    table = result.to_frame().set_index("method")
    seeds = [c for c in table.columns if c.startswith("seed_")]
    same = f"uniform-{START + budget}"
    if result.info["goal"] == "majority":
        wins = {k: all(table.loc["plan", s] >= table.loc[f"uniform-{k}", s] for s in seeds)
                for k in (15, 18) if f"uniform-{k}" in table.index}
        return "; ".join(f"plan >= uniform-{k} on every seed: {'yes' if ok else 'NO'}"
                         for k, ok in wins.items())
    gap = table.loc["plan", "mean"] - table.loc[same, "mean"]
    return (f"plan mean TVD - {same} mean TVD = {gap:+.4f} (issue 26: <= +0.002: "
            f"{'yes' if gap <= 0.002 else 'NO'}; issue 34: <= 0: {'yes' if gap <= 0 else 'NO'})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=None,
                        help="folder holding chaosnli/ (default: $ANNOKIT_TEST_DATA or "
                             "../shared/data)")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds")
    parser.add_argument("--goals", default="majority,distribution")
    parser.add_argument("--sets", default="snli,mnli")
    parser.add_argument("--budget", type=int, default=BUDGET,
                        help="extra votes per item on average (issue 34's protocol: 7)")
    parser.add_argument("--priors", default="fitted,uniform",
                        help="the plan's priors to compare (fitted, uniform)")
    parser.add_argument("--items", type=int, default=None,
                        help="only the first N items of each set (a quick run)")
    args = parser.parse_args(argv)
    seeds = tuple(int(s) for s in args.seeds.split(","))
    goals = args.goals.split(",")
    sets = args.sets.split(",")
    priors = args.priors.split(",")
    unknown = ([s for s in sets if s not in SUBSETS]
               + [g for g in goals if g not in ("majority", "distribution")]
               + [p for p in priors if p not in ("fitted", "uniform", "model")])
    if unknown:
        parser.error(f"unknown set or goal {unknown[0]!r}")
    data = (args.data or default_data_dir()) / "chaosnli"
    for key in sets:
        name, file = SUBSETS[key]
        path = data / file
        if not path.exists():
            print(f"{name}: {path} not found (set --data or ANNOKIT_TEST_DATA)", file=sys.stderr)
            return 1
        votes = read_votes(path)
        if args.items is not None:
            votes = votes.select_items(list(range(min(args.items, votes.n_items))))
        probs = None
        if "model" in priors:
            votes, probs = model_probs(votes, data.parent / "chaosnli_predictions_baan2022", key)
        for goal in goals:
            for prior in priors:
                replay_one(votes, name, key, goal, prior, seeds, args.budget,
                           probs if prior == "model" else None)
    return 0


def model_probs(votes, folder: Path, key: str):
    """The votes of the items with a prediction and the model's probabilities, joined as
    ``annokit evaluate`` joins them."""
    import warnings

    from annokit.metrics.model_join import item_probabilities

    files = [folder / MODEL_FILES[key].format(half=half) for half in ("dev", "test")]
    with warnings.catch_warnings():  # the items without a prediction are counted below
        warnings.simplefilter("ignore")
        join = item_probabilities(votes, files, pred_labels=["e", "c", "n"], on_missing="drop")
    print(f"model: {files[0].name} and {files[1].name}; {join.votes.n_items} items with a "
          f"prediction ({join.n_dropped_items} without, left out)")
    return join.votes, join.probs


def replay_one(votes, name: str, key: str, goal: str, prior: str, seeds: tuple[int, ...],
               budget: int, probs=None) -> None:
    """Replay one set, goal and prior, and print its table and acceptance lines."""
    began = time.perf_counter()
    result = annokit.plan.replay(votes, start=START, budget_per_item=budget,
                                 rounds=ROUNDS, goal=goal, seeds=seeds, compare=COMPARE,
                                 prior=prior, probs=probs)
    print(f"\n## {name}, goal {goal}, prior {prior}: {START} votes per item, then "
          f"{budget} more on average in {ROUNDS} rounds "
          f"({time.perf_counter() - began:.0f} s)")
    print(result.to_text())
    table = result.to_frame()
    print("per seed: " + "; ".join(
        f"{row.method} " + " ".join(f"{row[c]:.4f}" for c in table.columns
                                    if c.startswith("seed_"))
        for _, row in table.iterrows()))
    if goal == "majority":
        print(f"items with a tied 100-vote majority left out: "
              f"{result.info['n_tied_full']}; issue 26 quotes: {ISSUE_NAIVE[key]}")
    print(f"acceptance: {acceptance(result, budget)}")


if __name__ == "__main__":
    sys.exit(main())
