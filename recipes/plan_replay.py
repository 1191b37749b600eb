"""Where to spend the next annotations: `annokit.plan` replayed on ChaosNLI.

ChaosNLI (Nie et al. 2020) has 100 votes per item, so the 100-vote result is known. For each
seed every item's votes are put in a random order; 3 votes per item are "collected", then
`annokit.plan` places an average of `--budget` more per item (default 10) in `--rounds` rounds
(default 5), each planned vote being the item's next unused vote. Uniform allocation takes the
first k votes of the same order, for k = the plan's total, 10, 15, 18 and 20.

* `goal="majority"`: share of items whose unique 100-vote human majority the final human
  majority recovers (items with a tied 100-vote majority are left out; a final tie earns
  1/number tied). With a model the target and the final majority are still the votes' own:
  the recipe checks that the uniform rows are the same with and without the model.
* `goal="distribution"`: mean TVD of the final estimate of each item's distribution to the
  100-vote soft label. The estimate is the planner's (`--estimate`, default the posterior mean
  under the plan's prior refitted to the final votes; `proportions`: the raw soft label), and
  every method is scored by the same estimate, so they differ only in where the votes went;
  the uniform rows scored by the raw soft label are printed too.

An earlier naive experiment (next votes to the items whose two leading labels are closest, its
own draws) found SNLI 94.6% against uniform-10 90.1% and uniform-20 93.3%, and MNLI 87.8%
against 84.2% / 88.7%: printed beside ours, only the order of magnitude is comparable.

`--priors` (default fitted,uniform) names the plans compared: `fitted`, the Dirichlet of the
Dirichlet-multinomial fitted to the votes collected so far (refitted each round; the plan's
default); `uniform`, Dirichlet(1, ..., 1); `model`, each item's prior centred on a model's
probabilities (`annokit plan --predictions`); `activelab`, the votes placed by ActiveLab's score
(Goh and Mueller 2023; `annokit plan --predictions --rank activelab`). The model is
RoBERTa-base, seed 0, of Baan et al. (2022) (`chaosnli_predictions_baan2022`, its dev and test
halves, class order e, c, n), joined as `evaluate` joins them; MNLI's files cover 1,569 of the
1,599 items, and with `model` or `activelab` among the priors every plan runs on the items with
a prediction. The protocol of the acceptance lines is `--budget 7 --seeds 0,1` (3 votes per item
up to 10): the majority at least uniform-15's on every seed, the mean TVD at most uniform-10's.

Run: ``python recipes/plan_replay.py [--data DIR] [--seeds 0,1,2] [--goals majority,distribution]
[--sets snli,mnli] [--budget 10] [--rounds 5] [--priors fitted,uniform,model,activelab]
[--estimate posterior_mean]`` (default data folder ``../shared/data`` relative to the
repository, or ``$ANNOKIT_TEST_DATA``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

import annokit
from annokit.io import read_votes
from annokit.subsample.plan import ReplayResult

SUBSETS = {"snli": ("ChaosNLI-SNLI", "chaosNLI_snli.jsonl"),
           "mnli": ("ChaosNLI-MNLI", "chaosNLI_mnli_m.jsonl")}
#: The model of ``--priors ...,model``: Baan et al. (2022)'s RoBERTa-base, seed 0.
MODEL_FILES = {"snli": "SNLI_{half}_roberta-base_0.json", "mnli": "MNLI_{half}_roberta-base_0.json"}
START, BUDGET, ROUNDS = 3, 10, 5
COMPARE = (10, 15, 18, 20)
#: The naive rule's figures of an earlier experiment (their own draws).
NAIVE = {"snli": "naive closest-two rule 0.946, uniform-10 0.901, uniform-20 0.933",
               "mnli": "naive closest-two rule 0.878, uniform-10 0.842, uniform-20 0.887"}


def default_data_dir() -> Path:
    env = os.environ.get("ANNOKIT_TEST_DATA")
    if env:
        return Path(env)
    return (Path(__file__).resolve().parents[1] / ".." / "shared" / "data").resolve()


#: The plans ``--priors`` names: (the plan's prior, how it ranks items).
PLANS = {"fitted": ("fitted", "value"), "uniform": ("uniform", "value"),
         "model": ("model", "value"), "activelab": ("model", "activelab")}


def acceptance(result: ReplayResult, budget: int = BUDGET) -> str:
    """The acceptance line of one replay: the majority of at least uniform-15 (and -18) on
    every seed; a mean TVD at most uniform-10's (within +0.002 of uniform at the same total,
    the looser check of the default protocol)."""
    table = result.to_frame().set_index("method")
    seeds = [c for c in table.columns if c.startswith("seed_")]
    same = f"uniform-{START + budget}"
    if result.info["goal"] == "majority":
        wins = {k: all(table.loc["plan", s] >= table.loc[f"uniform-{k}", s] for s in seeds)
                for k in (15, 18) if f"uniform-{k}" in table.index}
        return "; ".join(f"plan >= uniform-{k} on every seed: {'yes' if ok else 'NO'}"
                         for k, ok in wins.items())
    gap = table.loc["plan", "mean"] - table.loc[same, "mean"]
    every = all(table.loc["plan", s] <= table.loc[same, s] for s in seeds)
    line = (f"plan mean TVD - {same} mean TVD = {gap:+.4f} (<= +0.002: "
            f"{'yes' if gap <= 0.002 else 'NO'}; <= 0: {'yes' if gap <= 0 else 'NO'}; "
            f"on every seed: {'yes' if every else 'NO'})")
    raw = result.info.get("proportions")
    if raw:
        line += (f"; {same} scored by the raw soft label: {np.mean(raw[same]):.4f} (plan "
                 f"{'<=' if table.loc['plan', 'mean'] <= np.mean(raw[same]) else '>'} it)")
    return line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=None,
                        help="folder holding chaosnli/ (default: $ANNOKIT_TEST_DATA or "
                             "../shared/data)")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds")
    parser.add_argument("--goals", default="majority,distribution")
    parser.add_argument("--sets", default="snli,mnli")
    parser.add_argument("--budget", type=int, default=BUDGET,
                        help="extra votes per item on average (the acceptance protocol: 7)")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="rounds of the plan")
    parser.add_argument("--priors", default="fitted,uniform",
                        help="the plans to compare (fitted, uniform, model, activelab)")
    parser.add_argument("--estimate", default="posterior_mean",
                        choices=["posterior_mean", "proportions"],
                        help="goal distribution: the estimate valued and scored")
    parser.add_argument("--items", type=int, default=None,
                        help="only the first N items of each set (a quick run)")
    args = parser.parse_args(argv)
    seeds = tuple(int(s) for s in args.seeds.split(","))
    goals = args.goals.split(",")
    sets = args.sets.split(",")
    priors = args.priors.split(",")
    unknown = ([s for s in sets if s not in SUBSETS]
               + [g for g in goals if g not in ("majority", "distribution")]
               + [p for p in priors if p not in PLANS])
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
        if {"model", "activelab"} & set(priors):
            votes, probs = model_probs(votes, data.parent / "chaosnli_predictions_baan2022", key)
        for goal in goals:
            results = {plan: replay_one(votes, name, key, goal, plan, seeds, args, probs)
                       for plan in priors}
            same_target(results)
    return 0


def same_target(results: dict[str, ReplayResult]) -> None:
    """With and without a model, the uniform rows scored against the 100-vote human result by
    the votes alone (their majority; their raw soft label) must not move: the model is no part
    of the target."""
    plain = [r for p, r in results.items() if PLANS[p][0] != "model"]
    model = [r for p, r in results.items() if PLANS[p][0] == "model"]
    if not plain or not model:
        return
    rows = []
    for result in (plain[0], model[0]):
        raw = result.info.get("proportions")
        table = result.to_frame().set_index("method")
        rows.append({m: (raw[m] if raw else table.loc[m].filter(like="seed_").tolist())
                     for m in table.index if m.startswith("uniform-")})
    print(f"target check: uniform rows the same with and without the model: "
          f"{'yes' if rows[0] == rows[1] else 'NO'} (the target is the 100-vote human result)")


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


def replay_one(votes, name: str, key: str, goal: str, plan: str, seeds: tuple[int, ...],
               args: argparse.Namespace, probs=None) -> ReplayResult:
    """Replay one set, goal and plan, and print its table and acceptance lines."""
    began = time.perf_counter()
    prior, rank = PLANS[plan]
    result = annokit.plan.replay(votes, start=START, budget_per_item=args.budget,
                                 rounds=args.rounds, goal=goal, seeds=seeds, compare=COMPARE,
                                 prior=prior, probs=probs if prior == "model" else None,
                                 rank=rank, estimate=args.estimate)
    print(f"\n## {name}, goal {goal}, prior {plan}: {START} votes per item, then "
          f"{args.budget} more on average in {args.rounds} rounds "
          f"({time.perf_counter() - began:.0f} s)")
    print(result.to_text())
    table = result.to_frame()
    print("per seed: " + "; ".join(
        f"{row.method} " + " ".join(f"{row[c]:.4f}" for c in table.columns
                                    if c.startswith("seed_"))
        for _, row in table.iterrows()))
    if goal == "majority":
        print(f"items with a tied 100-vote majority left out: "
              f"{result.info['n_tied_full']}; an earlier naive experiment: {NAIVE[key]}")
    print(f"acceptance: {acceptance(result, args.budget)}")
    return result


if __name__ == "__main__":
    sys.exit(main())
