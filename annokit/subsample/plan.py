"""Where to spend the next annotations: :func:`plan` allocates a budget of extra votes per item.

A dataset is annotated in rounds: collect a few votes per item, plan where the next votes go,
collect them, append them, plan again. :func:`plan` values every item under a Dirichlet
posterior (:mod:`annokit.subsample.plan_posterior`) and gives the budget to the items where
more votes raise the expected value of the goal most:

* ``goal="majority"``: the expected number of items whose leading label is the population
  majority (an item is *settled* when P(its leading label is the population majority) >=
  ``confidence``);
* ``goal="distribution"``: minus the expected total variation distance (TVD) of the estimates
  of the items' distributions to the population distributions (settled when the expected TVD <=
  ``epsilon``); the estimate is the posterior mean under the prior (``estimate``; the raw
  proportions of the votes with ``estimate="proportions"``), the one the table reports.

Allocation. ``V_i(n)``, the expected value of item ``i`` after ``n`` more votes, is estimated
for ``n = 0..horizon``. The gain of one more vote is taken from the upper concave envelope of
``V_i``: from ``n`` votes planned, the best average gain per vote over the next ``m`` votes,
``max_m (V_i(n + m) - V_i(n)) / m``. This is the KG(*) rule of the knowledge-gradient
literature (Frazier and Powell 2010; Ryzhov, Powell and Frazier 2012, Operations Research 60),
needed because the one-vote gain of a majority is often zero (at 2-1 one vote cannot make the
other label lead) although two or three votes help. The budget goes, vote by vote, to the
largest such gains (a greedy pass that is exact for concave values), never above ``budget``
in total nor above ``max_per_item`` votes per item, and only to unsettled items with a
positive gain: the stopping rule. Ties go to the earlier item. With a model, ``rank="activelab"``
places the votes by ActiveLab's score instead (Goh and Mueller 2023;
:mod:`annokit.quality.crowdlab_active`). Annotator quality is not used
(no Dawid-Skene): votes are exchangeable draws from the item's population, which is the
quantity the goals name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from annokit.core.checks import (
    check_finite,
    check_int,
    check_open_unit,
    check_option,
    check_probs,
)
from annokit.errors import InvalidValueError, SchemaError
from annokit.subsample.plan_alloc import (
    GOALS,
    RANKS,
    SETTLE_HORIZON,
    Goal,
    plan_counts,
    votes_to_settle,
)
from annokit.subsample.plan_posterior import ESTIMATES, PRIORS, estimate_of
from annokit.subsample.plan_replay import ReplayResult, replay

if TYPE_CHECKING:
    import pandas as pd

    from annokit.core.votes import Votes

__all__ = ["PlanResult", "ReplayResult", "plan", "replay"]

@dataclass
class PlanResult:
    """What :func:`plan` returns: per-item state and extra votes, and a summary.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per item: ``item``, ``n_votes``, ``leading_label`` (first in label order when
        tied), ``p_leading`` (goal majority: P(leading label is the population majority)) or
        ``expected_tvd`` (goal distribution: expected TVD of the estimate to the population
        distribution), ``settled``, ``at_max_per_item``, ``extra_votes``, ``expected_after``
        (the same quantity's expected value after the extra votes: P(correct majority) or the
        expected TVD), ``votes_to_settle`` (more votes from now until the expected value
        reaches the goal, :func:`~annokit.subsample.plan_alloc.votes_to_settle`; 0 when
        settled, <NA> beyond :data:`~annokit.subsample.plan_alloc.SETTLE_HORIZON`; computed when
        this round leaves unsettled items short of the goal, else 0), and for goal
        distribution ``estimate_<label>``: each item's estimate (the posterior mean, or the
        soft label with ``estimate="proportions"``).
    info : dict
        The summary (:meth:`summary`).
    """

    table: pd.DataFrame
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def extra_votes(self) -> np.ndarray:
        return self.table["extra_votes"].to_numpy()

    def to_frame(self) -> pd.DataFrame:
        """The per-item table (a copy)."""
        return self.table.copy()

    def next_votes(self) -> pd.DataFrame:
        """``item, extra_votes``: one row per item that gets votes (the file ``plan --out`` writes)."""
        rows = self.table[self.table["extra_votes"] > 0]
        return rows[["item", "extra_votes"]].reset_index(drop=True)

    def summary(self) -> dict[str, Any]:
        """A JSON-able summary. Keys: ``goal``, ``budget``, ``votes_planned``, ``budget_unspent``,
        ``n_items``, ``n_votes``, ``n_settled`` (items settled now), ``n_unsettled``,
        ``n_items_planned`` (items that get votes), ``n_cannot_settle`` (unsettled items
        whose expected value after the planned votes is still short of the goal: below
        ``confidence``, or an expected TVD above ``epsilon``), ``n_at_max_per_item`` (items that
        already have ``max_per_item`` votes or more and get none), ``expected_now`` and
        ``expected_after`` (goal majority: expected share of items whose leading label is the
        population majority; goal distribution: expected mean TVD), ``confidence``,
        ``epsilon``, ``max_per_item``, ``alpha``, ``n_draws``, ``horizon``, ``seed``,
        ``method``, ``votes_to_settle`` (None when this round settles every item; else over
        the ``n_items`` it leaves short of the goal: ``total``, ``min``, ``median``, ``max``
        votes from now of those reachable within ``horizon`` votes, and
        ``n_beyond_horizon``), ``prior`` (``"fitted"``, ``"uniform"`` or ``"model"``) and
        ``prior_alpha`` (the Dirichlet prior's parameter per label, by label name; with a
        model, its mean over items), with a model ``model_prior`` (``concentration`` A and
        ``temperature`` T), for goal distribution ``estimate`` (``"posterior_mean"`` or
        ``"proportions"``), and with ``rank="activelab"`` ``rank``."""
        return dict(self.info)


_METHOD = {
    "majority": "Dirichlet(counts + alpha) posterior; P(leading label = population majority) by "
                "Monte Carlo; votes to the largest expected gains in P(correct majority) "
                "(KG(*): best average gain over the next m votes)",
    "distribution": "Dirichlet(counts + alpha) posterior; expected TVD of the {estimate} to "
                    "the population distribution by Monte Carlo; votes to the largest expected "
                    "reductions (KG(*): best average reduction over the next m votes)",
}
_ESTIMATE_NAMES = {"proportions": "soft label", "posterior_mean": "posterior mean"}


def _method(goal: str, estimate: str, rank: str) -> str:
    """The summary's ``method``: the posterior, the value and the rule, in one line."""
    text = _METHOD[goal].format(estimate=_ESTIMATE_NAMES[estimate])
    if rank == "activelab":
        text = text.split("; votes to")[0] + ("; votes to the lowest ActiveLab scores (Goh and "
                                               "Mueller 2023), one per item per pass")
    return text


def plan(votes: Votes, *, budget: int, goal: Goal = "majority", confidence: float = 0.95,
         epsilon: float = 0.05, max_per_item: int | None = None, alpha: float = 1.0,
         n_draws: int = 2000, seed: int = 0, bar: object | None = None,
         prior: str = "fitted", probs: Any = None, estimate: str = "posterior_mean",
         rank: str = "value") -> PlanResult:
    """Where to spend the next ``budget`` votes (module docstring: the model and the rule).

    Parameters
    ----------
    votes : Votes
        The votes so far (single-label).
    budget : int
        Extra votes to place in this round (>= 0; 0 only reports where the dataset stands).
    goal : {"majority", "distribution"}, default="majority"
    confidence : float in (0, 1), default=0.95
        Goal majority: an item is settled when P(its leading label is the population
        majority) >= confidence.
    epsilon : float in (0, 1), default=0.05
        Goal distribution: an item is settled when the expected TVD of its estimate
        (``estimate``) to the population distribution is <= epsilon.
    max_per_item : int, optional
        Most votes an item may have in total after this round (>= 1); items already there
        get none (``n_at_max_per_item`` in the summary, ``at_max_per_item`` in the table).
    alpha : float, default=1.0
        With ``prior="uniform"``: the concentration per label of the symmetric Dirichlet prior
        (1: the uniform prior).
    n_draws : int, default=2000
        Monte Carlo posterior draws per distinct count vector.
    seed : int, default=0
        The same seed and votes give the same plan.
    prior : {"fitted", "uniform", "model"}, default="fitted"
        ``"fitted"``: the Dirichlet of the Dirichlet-multinomial fitted to the votes (empirical
        Bayes, as ``subsample --target population``; :func:`.plan_posterior.fitted_prior`);
        ``"uniform"``: ``Dirichlet(alpha, ..., alpha)``; ``"model"`` (implied by ``probs``):
        ``Dirichlet(A * softmax(log p_i / T))`` per item, ``A`` and ``T`` fitted to the votes
        (:func:`.plan_posterior.model_prior`).
    probs : array of shape (n_items, n_labels), optional
        A model's probabilities, rows in the votes' item order and columns in their label
        order (``annokit plan --predictions`` joins a file as ``evaluate`` does).
    estimate : {"posterior_mean", "proportions"}, default="posterior_mean"
        Goal distribution: the estimate of each item's distribution whose expected TVD is
        valued and reported, and which the table gives (``estimate_<label>`` columns): the
        posterior mean ``(c + alpha) / (n + sum(alpha))`` under the prior, or the raw
        proportions of the votes (the soft label; the planner's estimate before).
    rank : {"value", "activelab"}, default="value"
        ``"value"``: votes to the largest expected gains (module docstring); ``"activelab"``
        (needs ``probs``): to the lowest ActiveLab scores, one vote per item per pass, no
        stopping rule (:func:`.plan_alloc.allocate_by_score`; Goh and Mueller 2023).

    Returns
    -------
    PlanResult

    Raises
    ------
    InvalidValueError
        A parameter out of range.

    Examples
    --------
    >>> import annokit
    >>> from annokit.io.synthetic import make_votes
    >>> votes = make_votes(n_items=50, n_annotators=10, votes_per_item=3, rng=0).votes
    >>> result = annokit.plan(votes, budget=40)
    >>> int(result.extra_votes.sum()) <= 40
    True
    """
    args = _checked(votes, budget=budget, goal=goal, confidence=confidence, epsilon=epsilon,
                    max_per_item=max_per_item, alpha=alpha, n_draws=n_draws, seed=seed,
                    prior=prior, probs=probs, estimate=estimate, rank=rank)
    counts = votes.counts()
    n_votes = counts.sum(1)
    max_per_item = args["max_per_item"]
    caps = None if max_per_item is None else np.maximum(max_per_item - n_votes, 0)
    out = plan_counts(counts, caps=caps, bar=bar, **args.options)
    need = _votes_to_settle(counts, out, args)
    table = _table(votes, counts, out, args, need)
    info = _info(votes, out, args, need, n_votes=int(n_votes.sum()),
                 n_at_max=int(table["at_max_per_item"].sum()))
    return PlanResult(table=table, info=info)


@dataclass(frozen=True)
class _Args:
    """The checked parameters of :func:`plan`: ``options`` as :func:`plan_counts` takes them."""

    options: dict[str, Any]
    max_per_item: int | None

    def __getitem__(self, name: str) -> Any:
        return self.max_per_item if name == "max_per_item" else self.options[name]


def _checked(votes: Votes, *, budget: int, goal: str, confidence: float, epsilon: float,
             max_per_item: int | None, alpha: float, n_draws: int, seed: int, prior: str,
             probs: Any, estimate: str, rank: str) -> _Args:
    """:func:`plan`'s parameters checked (:class:`InvalidValueError` or :class:`SchemaError`
    naming the first wrong); ``probs`` imply ``prior="model"``."""
    check_option("goal", goal, GOALS)
    check_option("estimate", estimate, ESTIMATES)
    check_option("rank", rank, RANKS)
    if rank == "activelab" and probs is None:
        raise InvalidValueError("rank='activelab' needs a model's probs (annokit plan "
                                "--predictions FILE --rank activelab)")
    if max_per_item is not None:
        max_per_item = check_int("max_per_item", max_per_item, low=1)
    if probs is not None:
        prior = "model"
        probs = check_probs(probs, name="plan probs")
        if probs.shape != (votes.n_items, votes.n_labels):
            raise SchemaError(f"plan probs must have shape (n_items, n_labels) = "
                              f"{(votes.n_items, votes.n_labels)}; got {probs.shape}")
    elif prior == "model":
        raise InvalidValueError("prior='model' needs a model's probs (annokit plan "
                                "--predictions FILE)")
    check_option("prior", prior, PRIORS)
    options = {"budget": check_int("budget", budget), "goal": goal,
               "confidence": check_open_unit("confidence", confidence),
               "epsilon": check_open_unit("epsilon", epsilon),
               "alpha": check_finite("alpha", alpha, low=0, strict=True),
               "n_draws": check_int("n_draws", n_draws, low=1), "seed": check_int("seed", seed),
               "prior": prior, "probs": probs, "estimate": estimate, "rank": rank}
    return _Args(options=options, max_per_item=max_per_item)


def _short(out: dict[str, np.ndarray], args: _Args) -> np.ndarray:
    """Unsettled items whose expected value after the round is still short of the goal."""
    after = out["after"]
    short = after < args["confidence"] if args["goal"] == "majority" else after > args["epsilon"]
    return ~out["settled"] & short


def _votes_to_settle(counts: np.ndarray, out: dict[str, np.ndarray], args: _Args) -> np.ndarray:
    """Votes each item needs from now to reach the goal (0 when settled, or when the round
    settles every item; -1 beyond the horizon), under the round's prior."""
    settled = out["settled"]
    need = np.zeros(len(counts), dtype=np.int64)
    if _short(out, args).any():  # the round cannot settle them: how many votes would
        prior_used = out["alpha_used"]  # the round's prior: a number, per label or per item
        need[~settled] = votes_to_settle(
            counts[~settled], goal=args["goal"], confidence=args["confidence"],
            epsilon=args["epsilon"],
            alpha=prior_used[~settled] if prior_used.ndim == 2 else prior_used,
            n_draws=args["n_draws"], seed=args["seed"], estimate=args["estimate"])
    return need


def _table(votes: Votes, counts: np.ndarray, out: dict[str, np.ndarray], args: _Args,
           need: np.ndarray) -> pd.DataFrame:
    """The per-item table of :class:`PlanResult`."""
    import pandas as pd

    n_votes = counts.sum(1)
    max_per_item = args["max_per_item"]
    at_max = (np.zeros(len(n_votes), dtype=bool) if max_per_item is None
              else n_votes >= max_per_item)
    labels = np.asarray(list(votes.labels.names), dtype=object)
    state = "p_leading" if args["goal"] == "majority" else "expected_tvd"
    table = pd.DataFrame({
        "item": votes.item_ids, "n_votes": n_votes,
        "leading_label": np.where(n_votes > 0, labels[counts.argmax(1)], None),
        state: out["now"], "settled": out["settled"], "at_max_per_item": at_max,
        "extra_votes": out["extra"], "expected_after": out["after"]})
    table["votes_to_settle"] = pd.array(np.where(need >= 0, need, -1)).astype("Int64")
    table.loc[need < 0, "votes_to_settle"] = pd.NA
    if args["goal"] == "distribution":
        values = estimate_of(counts, args["estimate"], out["alpha_used"])
        for j, name in enumerate(votes.labels.names):
            table[f"estimate_{name}"] = values[:, j]
    return table


def _info(votes: Votes, out: dict[str, np.ndarray], args: _Args, need: np.ndarray, *,
          n_votes: int, n_at_max: int) -> dict[str, Any]:
    """The summary of :class:`PlanResult` (keys in :meth:`PlanResult.summary`)."""
    settled, extra, after = out["settled"], out["extra"], out["after"]
    n_items, budget, goal = len(settled), args["budget"], args["goal"]
    short = _short(out, args)
    info = {
        "goal": goal, "budget": budget, "votes_planned": int(extra.sum()),
        "budget_unspent": budget - int(extra.sum()), "n_items": int(n_items),
        "n_votes": n_votes, "n_settled": int(settled.sum()),
        "n_unsettled": int((~settled).sum()), "n_items_planned": int((extra > 0).sum()),
        "n_cannot_settle": int(short.sum()), "n_at_max_per_item": n_at_max,
        "expected_now": float(out["expected_now"].mean()) if n_items else None,
        "expected_after": float(after.mean()) if n_items else None,
        "confidence": args["confidence"], "epsilon": args["epsilon"],
        "max_per_item": args["max_per_item"], "alpha": args["alpha"],
        "n_draws": args["n_draws"], "horizon": int(out["horizon"]), "seed": args["seed"],
        "method": _method(goal, args["estimate"], args["rank"]), "prior": args["prior"],
        "prior_alpha": dict(zip(votes.labels.names, map(float, out["alpha"]), strict=True)),
        "votes_to_settle": _settle_summary(need, short),
    }
    if goal == "distribution":
        info["estimate"] = args["estimate"]
    if args["rank"] != "value":
        info["rank"] = args["rank"]
    if out["model_prior"] is not None:
        info["model_prior"] = {"concentration": float(out["model_prior"][0]),
                               "temperature": float(out["model_prior"][1])}
    return info


def _settle_summary(need: np.ndarray, short: np.ndarray) -> dict[str, Any] | None:
    """``votes_to_settle`` of the summary: over the items this round cannot settle, the votes
    each needs from now (total, min, median, max of those reachable within the horizon) and
    how many need more than the horizon; None when the round settles every item."""
    if not short.any():
        return None
    reach = need[short & (need >= 0)]
    return {"n_items": int(short.sum()), "total": int(reach.sum()),
            "min": int(reach.min()) if reach.size else None,
            "median": float(np.median(reach)) if reach.size else None,
            "max": int(reach.max()) if reach.size else None,
            "n_beyond_horizon": int((short & (need < 0)).sum()), "horizon": SETTLE_HORIZON}


#: ``annokit.plan.replay``: the replay is reachable from the public function too.
plan.replay = replay  # type: ignore[attr-defined]
