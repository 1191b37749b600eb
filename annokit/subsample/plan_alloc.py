"""The allocation behind :func:`annokit.subsample.plan.plan`: the budget to the largest
expected gains (the rule is described in :mod:`annokit.subsample.plan`)."""

from __future__ import annotations

from typing import Literal

import numpy as np

__all__ = ["GOALS", "HORIZON", "SETTLE_HORIZON", "Goal", "allocate", "plan_counts",
           "RANKS", "activelab_extra", "allocate_by_score", "round_prior", "votes_to_settle"]

Goal = Literal["majority", "distribution"]
GOALS = ("majority", "distribution")

#: Largest number of extra votes one item may get in one round (the values are estimated up to it).
HORIZON = 16
#: Most extra votes :func:`votes_to_settle` looks ahead; items needing more are counted apart.
SETTLE_HORIZON = 200


def _envelope_gains(values: np.ndarray, caps: np.ndarray) -> np.ndarray:
    """Marginal gains ``(n_items, horizon)`` of the upper concave envelope of each row of
    ``values`` over ``0..caps[i]`` (``-inf`` past the cap); non-increasing along each row.

    Vectorised over items; the loop runs over at most ``horizon`` envelope segments."""
    n_items, width = values.shape
    horizon = width - 1
    gains = np.full((n_items, horizon), -np.inf)
    pos = np.zeros(n_items, dtype=np.int64)
    steps = np.arange(1, horizon + 1)
    rows = np.arange(n_items)
    while True:
        active = pos < caps
        if not active.any():
            return gains
        ahead = pos[:, None] + steps                                      # (n, H)
        ok = ahead <= caps[:, None]
        later = values[rows[:, None], np.minimum(ahead, horizon)]
        rate = np.where(ok, (later - values[rows, pos][:, None]) / steps, -np.inf)
        best = rate.argmax(1)                                             # first of the best
        size = np.where(active, best + 1, 0)
        cols = np.arange(horizon)
        fill = (cols >= pos[:, None]) & (cols < (pos + size)[:, None])
        gains = np.where(fill, rate[rows, best][:, None], gains)
        pos = pos + size


def allocate(values: np.ndarray, caps: np.ndarray, budget: int, *,
             eligible: np.ndarray | None = None) -> np.ndarray:
    """Extra votes per item: the ``budget`` largest positive envelope gains (module docstring).

    Parameters
    ----------
    values : ndarray of shape (n_items, horizon + 1)
        ``V_i(n)``, larger is better.
    caps : ndarray of int, shape (n_items,)
        Most extra votes each item may get (clipped to ``horizon``).
    budget : int
    eligible : ndarray of bool, optional
        Items that may get votes (default all).

    Returns
    -------
    ndarray of int64, shape (n_items,); its sum is at most ``budget``.
    """
    n_items, width = values.shape
    caps = np.clip(np.asarray(caps, dtype=np.int64), 0, width - 1)
    if eligible is not None:
        caps = np.where(eligible, caps, 0)
    if budget == 0 or width == 1 or n_items == 0:
        return np.zeros(n_items, dtype=np.int64)
    gains = _envelope_gains(values, caps)
    item, step = np.nonzero(gains > 0)
    flat = gains[item, step]
    order = np.lexsort((step, item, -flat))[:budget]
    return np.bincount(item[order], minlength=n_items).astype(np.int64)


def allocate_by_score(score: np.ndarray, caps: np.ndarray, budget: int) -> np.ndarray:
    """Extra votes per item by a relabelling score, lowest first, one vote per item per pass
    (ActiveLab's batches: the ``budget`` lowest-scored items get one vote each; a budget above
    the number of items goes round again), never above ``caps``; ties go to the earlier item.

    >>> allocate_by_score(np.array([0.9, 0.2, 0.5]), np.array([3, 1, 3]), 5).tolist()
    [2, 1, 2]
    """
    caps = np.maximum(np.asarray(caps, dtype=np.int64), 0)
    n_items = len(caps)
    rank = np.empty(n_items, dtype=np.int64)
    rank[np.argsort(score, kind="stable")] = np.arange(n_items)
    item = np.repeat(np.arange(n_items), caps)
    sweep = np.arange(len(item)) - np.repeat(np.cumsum(caps) - caps, caps)  # pass number
    chosen = item[np.lexsort((rank[item], sweep))[:budget]]
    return np.bincount(chosen, minlength=n_items).astype(np.int64)


def activelab_extra(counts: np.ndarray, probs: np.ndarray, caps: np.ndarray,
                    budget: int) -> np.ndarray:
    """Extra votes per item by ActiveLab's score
    (:func:`~annokit.quality.crowdlab_active.activelab_scores`) and :func:`allocate_by_score`."""
    from annokit.quality.crowdlab_active import activelab_scores

    return allocate_by_score(activelab_scores(counts, probs).score, caps, budget)


#: How a round ranks items: the expected gain in the goal's value under the posterior
#: (``"value"``), or ActiveLab's relabelling score from the votes and a model (``"activelab"``).
RANKS = ("value", "activelab")


def round_prior(counts: np.ndarray, prior: str, alpha: float = 1.0,
                probs: np.ndarray | None = None) -> tuple[float | np.ndarray, np.ndarray,
                                                           np.ndarray | None]:
    """The prior a round values ``counts`` under: ``(alpha_used, per_label, model)``.

    ``alpha_used`` is what :func:`~annokit.subsample.plan_posterior.posterior_values` takes
    (the number ``alpha`` for ``"uniform"``, one value per label for ``"fitted"``, one row per
    item for ``"model"``), ``per_label`` one value per label (with a model, the mean over
    items) and ``model`` the model prior's ``[concentration, temperature]`` (else None).
    """
    from annokit.subsample.plan_posterior import fitted_prior, model_prior

    if prior == "model":
        fit = model_prior(counts, np.asarray(probs))
        return fit.alpha, fit.alpha.mean(axis=0), np.array([fit.concentration,
                                                             fit.temperature])
    if prior == "fitted":
        fitted = fitted_prior(counts)
        return fitted, fitted, None
    return alpha, np.full(counts.shape[1], float(alpha)), None


def plan_counts(counts: np.ndarray, *, budget: int, goal: Goal = "majority",
                confidence: float = 0.95, epsilon: float = 0.05,
                caps: np.ndarray | None = None, alpha: float = 1.0, n_draws: int = 2000,
                seed: int = 0, bar: object | None = None, prior: str = "uniform",
                probs: np.ndarray | None = None, estimate: str = "proportions",
                rank: str = "value") -> dict[str, np.ndarray]:
    """The arrays behind :func:`plan` for a count matrix (parameters checked by the caller).

    ``prior="fitted"`` replaces ``alpha`` by the Dirichlet-multinomial fitted to ``counts``
    (:func:`~annokit.subsample.plan_posterior.fitted_prior`); ``prior="model"`` by one prior
    per item centred on the model's ``probs`` (rows aligned to ``counts``;
    :func:`~annokit.subsample.plan_posterior.model_prior`); :func:`round_prior`. ``estimate``
    names the distribution estimate goal ``distribution`` values. ``rank="activelab"`` places
    the votes by ActiveLab's score instead (:func:`allocate_by_score`; every item with room is
    eligible, as ActiveLab has no stopping rule); the posterior still gives ``now`` and
    ``after``.

    Returns ``now``, ``settled``, ``extra`` (votes per item), ``after`` (the goal's expected
    value per item after them, in the ``now`` scale), ``horizon`` and ``alpha`` (the prior
    used, one value per label).
    """
    from annokit.subsample.plan_posterior import posterior_values

    counts = np.asarray(counts, dtype=np.int64)
    alpha_used, prior_alpha, model = round_prior(counts, prior, alpha, probs)
    n_items = counts.shape[0]
    caps = (np.full(n_items, HORIZON, dtype=np.int64) if caps is None
            else np.clip(np.asarray(caps, dtype=np.int64), 0, None))
    horizon = int(min(HORIZON, budget, caps.max(initial=0)))
    post = posterior_values(counts, goal=goal, horizon=horizon, n_draws=n_draws,
                            alpha=alpha_used, seed=seed, bar=bar, estimate=estimate)
    settled = post.now >= confidence if goal == "majority" else post.now <= epsilon
    if rank == "activelab":
        extra = activelab_extra(counts, np.asarray(probs), np.minimum(caps, horizon), budget)
    else:
        extra = allocate(post.values, caps, budget, eligible=~settled)
    after_value = post.values[np.arange(n_items), extra]
    after = after_value if goal == "majority" else -after_value
    return {"now": post.now, "settled": settled, "extra": extra, "after": after,
            "expected_now": post.values[:, 0] if goal == "majority" else post.now,
            "horizon": np.asarray(horizon), "alpha": prior_alpha,
            "alpha_used": np.asarray(alpha_used), "model_prior": model}


def votes_to_settle(counts: np.ndarray, *, goal: Goal = "majority", confidence: float = 0.95,
                    epsilon: float = 0.05, alpha: float | np.ndarray = 1.0,
                    n_draws: int = 2000, seed: int = 0,
                    horizon: int = SETTLE_HORIZON, estimate: str = "proportions") -> np.ndarray:
    """More votes each item needs, from now, until its expected value reaches the goal: the
    smallest ``n`` with ``V(n) >= confidence`` (goal majority: the expected probability that
    the leading label is the population majority) or an expected TVD ``<= epsilon`` (goal
    distribution), under the posterior of :mod:`annokit.subsample.plan_posterior`; 0 for an
    item already there, -1 beyond ``horizon`` votes.

    Examples
    --------
    >>> need = votes_to_settle(np.array([[9, 1], [3, 0], [5, 5]]), horizon=60)
    >>> int(need[0]), bool(0 < need[1] <= 60), int(need[2])
    (0, True, -1)

    A Monte Carlo estimate (``n_draws`` draws): ``V(n)`` rises slowly near the goal, so the
    ``n`` where it crosses is rough (tens of votes on a 4-1 item); read it as an order of
    magnitude.
    """
    from annokit.subsample.plan_posterior import posterior_values

    counts = np.asarray(counts, dtype=np.int64)
    if counts.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    values = posterior_values(counts, goal=goal, horizon=horizon, n_draws=n_draws, alpha=alpha,
                              seed=seed, estimate=estimate).values
    reached = values >= confidence if goal == "majority" else -values <= epsilon
    first = reached.argmax(1)
    return np.where(reached.any(1), first, -1).astype(np.int64)
