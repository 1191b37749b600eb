"""Replay :func:`annokit.subsample.plan.plan` on a dense dataset (many votes per item).

For each seed every item's votes are put in a random order (without replacement); the
first ``start`` votes of each item are "collected", then in each of ``rounds`` rounds the
plan places its share of the budget (``n_items * budget_per_item / rounds``, plus whatever an
earlier round left unspent) and each planned vote is the item's next vote in that order, so
the planned votes are drawn from the item's remaining votes. Uniform allocation at ``k`` votes
per item in total takes the first ``k`` votes of the same order (common random numbers: the
methods differ only in where the votes go). An item never gets more votes than it has.

Measures, against the full data: ``goal="majority"``: the share of items whose majority of
all votes is unique (items with a tied full-data majority are left out, and counted) that the
final majority recovers (a tie in the final majority earns 1/number tied, the chance of a
random tie-break); ``goal="distribution"``: the mean TVD of the final soft label to the
full-data one. Per method: the mean over seeds, the lowest and highest seed, each seed's value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from annokit.core.checks import check_int, check_open_unit, check_option
from annokit.errors import InvalidValueError
from annokit.subsample.plan_alloc import (
    GOALS,
    HORIZON,
    RANKS,
    Goal,
    activelab_extra,
    plan_counts,
    round_prior,
)
from annokit.subsample.plan_posterior import ESTIMATES, PRIORS, estimate_of, soft_labels

if TYPE_CHECKING:
    import pandas as pd

    from annokit.core.votes import Votes

__all__ = ["ReplayResult", "replay"]

#: How the measure names each estimate of the distribution.
_MEASURES = {"proportions": "mean TVD of the final soft label to the full-data one",
             "posterior_mean": "mean TVD of the final posterior mean (the planner's prior "
                               "refitted to the final votes) to the full-data soft label"}


@dataclass
class ReplayResult:
    """What :func:`replay` returns.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per method (``plan``, then ``uniform-k`` for each total ``k``):
        ``method``, ``votes_per_item`` (mean votes per item collected, over seeds), ``mean``,
        ``low``, ``high`` (over seeds) and one column per seed (``seed_0``, ...).
    info : dict
        ``goal``, ``measure``, ``n_items``, ``n_items_scored`` (items with a unique full-data
        majority for goal majority; all items for goal distribution), ``n_tied_full``,
        ``start``, ``budget_per_item``, ``rounds``, ``seeds``, ``planned_votes`` (votes the
        plan placed per seed; at most the budget), ``prior``, ``estimate``, ``rank``, and for
        goal distribution with ``estimate="posterior_mean"``, ``proportions``: each method's
        mean TVD per seed scored by the raw soft label instead.
    """

    table: pd.DataFrame
    info: dict[str, Any] = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def summary(self) -> dict[str, Any]:
        """JSON-able: the info and the table's rows."""
        return {**self.info, "methods": self.table.to_dict(orient="records")}

    def to_text(self) -> str:
        """A plain-text table: method, votes per item, mean [low, high] over seeds."""
        lines = [f"{self.info['measure']} ({self.info['n_items_scored']} items), "
                 f"{len(self.info['seeds'])} seeds",
                 f"{'method':<14}{'votes/item':>11}  {'mean':>7}  [low, high]"]
        for row in self.table.itertuples():
            lines.append(f"{row.method:<14}{row.votes_per_item:>11.2f}  {row.mean:>7.4f}  "
                         f"[{row.low:.4f}, {row.high:.4f}]")
        return "\n".join(lines)


class _Order:
    """Every item's votes in one random order: counts of each item's first ``t_i`` votes."""

    def __init__(self, items: np.ndarray, labels: np.ndarray, n_items: int, n_labels: int,
                 rng: np.random.Generator) -> None:
        order = np.lexsort((rng.random(len(items)), items))
        self.items = items[order]
        self.codes = self.items * n_labels + labels[order]
        first = np.searchsorted(self.items, np.arange(n_items))
        self.rank = np.arange(len(items)) - first[self.items]
        self.shape = (n_items, n_labels)

    def counts(self, taken: np.ndarray) -> np.ndarray:
        keep = self.rank < taken[self.items]
        flat = np.bincount(self.codes[keep], minlength=self.shape[0] * self.shape[1])
        return flat.reshape(self.shape).astype(np.int64)


def _score(counts: np.ndarray, target: _Target, estimate: str, prior: str,
           probs: np.ndarray | None) -> float:
    """The measure of one method's final counts (module docstring)."""
    if target.goal == "majority":
        top = counts == counts.max(1, keepdims=True)
        credit = top[np.arange(len(target.truth)), target.truth] / top.sum(1)
        return float(credit[target.scored].mean())
    from annokit.core.divergence import tvd

    alpha = round_prior(counts, prior, 1.0, probs)[0] if estimate == "posterior_mean" else 1.0
    return float(tvd(estimate_of(counts, estimate, alpha), target.soft).mean())


@dataclass(frozen=True)
class _Target:
    """What a replay is scored against: the full data's majority and soft labels."""

    goal: str
    truth: np.ndarray    # (n_items,) the full-data majority (first when tied)
    scored: np.ndarray   # (n_items,) the full-data majority is unique
    soft: np.ndarray     # (n_items, n_labels) the full-data soft labels

    @classmethod
    def of(cls, full: np.ndarray, goal: str) -> _Target:
        return cls(goal=goal, truth=full.argmax(1),
                   scored=(full == full.max(1, keepdims=True)).sum(1) == 1,
                   soft=soft_labels(full.astype(np.float64)))


def _check(start: int, rounds: int, goal: str, seeds: Sequence[int], prior: str,
           probs: np.ndarray | None, confidence: float, epsilon: float,
           estimate: str, rank: str) -> tuple[int, int, list[int], float, float]:
    """The replay's parameters, checked (:class:`InvalidValueError` naming the first wrong)."""
    start = check_int("start", start)
    rounds = check_int("rounds", rounds, low=1)
    check_option("goal", goal, GOALS)
    check_option("prior", prior, PRIORS)
    check_option("estimate", estimate, ESTIMATES)
    check_option("rank", rank, RANKS)
    if (prior == "model") != (probs is not None):
        raise InvalidValueError("prior='model' goes with a model's probs (and probs with it)")
    if rank == "activelab" and probs is None:
        raise InvalidValueError("rank='activelab' needs a model's probs (and prior='model')")
    confidence = check_open_unit("confidence", confidence)
    epsilon = check_open_unit("epsilon", epsilon)
    if len(seeds) == 0:
        raise InvalidValueError("seeds must hold at least one seed; got none")
    return start, rounds, [check_int("seed", s) for s in seeds], confidence, epsilon


def _plan_rounds(order: _Order, available: np.ndarray, *, start: int, budget: int,
                 rounds: int, seed: int, bar: object | None,
                 options: dict[str, Any]) -> np.ndarray:
    """Votes taken per item after ``rounds`` rounds of the plan from ``start`` votes each:
    each round places its share of the budget plus what earlier rounds left unspent."""
    taken = np.minimum(start, available)
    placed = 0
    for r in range(rounds):
        share = budget * (r + 1) // rounds - placed
        counts = order.counts(taken)
        if options["rank"] == "activelab":  # ActiveLab needs no posterior values
            extra = activelab_extra(counts, options["probs"],
                                    np.minimum(available - taken, HORIZON), share)
        else:
            extra = plan_counts(counts, budget=share, caps=available - taken, seed=seed,
                                **options)["extra"]
        taken = taken + extra
        placed += int(extra.sum())
        if bar is not None:
            bar.update(1)  # type: ignore[attr-defined]
    return taken


def _table(rows: dict[str, list[float]], spent: dict[str, list[float]],
           seeds: list[int]) -> pd.DataFrame:
    """One row per method: votes per item, mean, low, high and each seed's value."""
    import pandas as pd

    return pd.DataFrame({
        "method": list(rows), "votes_per_item": [float(np.mean(spent[m])) for m in rows],
        "mean": [float(np.mean(v)) for v in rows.values()],
        "low": [float(np.min(v)) for v in rows.values()],
        "high": [float(np.max(v)) for v in rows.values()],
        **{f"seed_{s}": [v[i] for v in rows.values()] for i, s in enumerate(seeds)}})


def replay(votes: Votes, *, start: int = 3, budget_per_item: float = 10, rounds: int = 5,
           goal: Goal = "majority", seeds: Sequence[int] = (0, 1, 2),
           compare: Sequence[int] = (10, 15, 20), confidence: float = 0.95,
           epsilon: float = 0.05, n_draws: int = 2000, bar: object | None = None,
           prior: str = "fitted", probs: np.ndarray | None = None,
           estimate: str = "proportions", rank: str = "value") -> ReplayResult:
    """Simulate rounds of :func:`~annokit.subsample.plan.plan` on dense votes and compare them
    with uniform allocation (module docstring).

    Parameters
    ----------
    votes : Votes
        Dense single-label votes (e.g. ChaosNLI: 100 per item).
    start : int, default=3
        Votes per item collected before the first round.
    budget_per_item : float, default=10
        Average extra votes per item over all rounds (the total budget is
        ``round(n_items * budget_per_item)``).
    rounds : int, default=5
    goal : {"majority", "distribution"}
    seeds : sequence of int, default=(0, 1, 2)
        One replay per seed (the vote order and the plan's Monte Carlo draws).
    compare : sequence of int, default=(10, 15, 20)
        Totals per item of the uniform allocations compared with, besides the plan's own
        total ``start + budget_per_item`` (rounded).
    confidence, epsilon, n_draws, prior
        Passed to the plan (``prior="fitted"``: refitted to the votes collected so far at
        each round, as a user planning round after round would).
    probs : ndarray of shape (n_items, n_labels), optional
        A model's probabilities, rows aligned to the votes' items (``prior="model"``).
    estimate : {"proportions", "posterior_mean"}, default="proportions"
        Goal distribution: the estimate the plan values and every method is scored by (the
        posterior mean: under ``prior`` refitted to each method's final counts).
    rank : {"value", "activelab"}, default="value"
        How the plan places the votes (:data:`~annokit.subsample.plan_alloc.RANKS`).
    bar : progress bar, optional
        Advanced by one per round.

    Returns
    -------
    ReplayResult (:class:`InvalidValueError` for a parameter out of range)
    """
    start, rounds, seeds, confidence, epsilon = _check(
        start, rounds, goal, seeds, prior, probs, confidence, epsilon, estimate, rank)
    totals = sorted({int(round(start + float(budget_per_item))),
                     *(check_int("compare", k, low=1) for k in compare)})
    full = votes.counts()
    n_items, n_labels = full.shape
    available = full.sum(1)
    budget = int(round(n_items * float(budget_per_item)))
    check_int("budget_per_item * n_items", budget)
    target = _Target.of(full, goal)
    items, labels = np.asarray(votes.item_index), np.asarray(votes.label_index)
    options = {"goal": goal, "confidence": confidence, "epsilon": epsilon, "n_draws": n_draws,
               "prior": prior, "probs": probs, "estimate": estimate, "rank": rank}
    rows: dict[str, list[float]] = {"plan": [], **{f"uniform-{k}": [] for k in totals}}
    spent: dict[str, list[float]] = {name: [] for name in rows}
    raw: dict[str, list[float]] = {name: [] for name in rows}
    planned = []
    for seed in seeds:
        order = _Order(items, labels, n_items, n_labels, np.random.default_rng(seed))
        taken = _plan_rounds(order, available, start=start, budget=budget, rounds=rounds,
                             seed=seed, bar=bar, options=options)
        planned.append(int(taken.sum() - np.minimum(start, available).sum()))
        for name, per_item in [("plan", taken),
                               *((f"uniform-{k}", np.minimum(k, available)) for k in totals)]:
            rows[name].append(_score(order.counts(per_item), target, estimate, prior, probs))
            spent[name].append(float(per_item.mean()))
            raw[name].append(_score(order.counts(per_item), target, "proportions", prior, None))
    measure = ("share of items whose full-data majority the final majority recovers"
               if goal == "majority" else _MEASURES[estimate])
    info = {"goal": goal, "measure": measure, "n_items": n_items,
            "n_items_scored": int(target.scored.sum()) if goal == "majority" else n_items,
            "n_tied_full": int((~target.scored).sum()), "start": start,
            "budget_per_item": float(budget_per_item), "rounds": rounds, "seeds": seeds,
            "planned_votes": planned, "prior": prior, "estimate": estimate,
            "rank": rank}
    if goal == "distribution" and estimate != "proportions":
        info["proportions"] = raw  # every method's final soft label, per seed
    return ReplayResult(table=_table(rows, spent, seeds), info=info)
