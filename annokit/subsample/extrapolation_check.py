"""Validate the Dirichlet-multinomial extrapolation against the observed subsampling curve."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.checks import check_rng
from annokit.errors import InvalidValueError
from annokit.subsample._checks import as_counts, check_ks
from annokit.subsample.curves import subsampling_curve
from annokit.subsample.draw import subsample_counts
from annokit.subsample.extrapolate import DirichletMultinomial

__all__ = ["ExtrapolationCheck", "extrapolation_check"]


@dataclass
class ExtrapolationCheck:
    """Observed curve against the curve predicted from a few votes per item.

    Attributes
    ----------
    table : DataFrame
        Columns ``k``, ``observed_tvd``, ``predicted_tvd``, ``abs_error``,
        ``rel_error`` and ``predicted_population_tvd`` (TVD to ``pi_i``).
    max_abs_error, max_rel_error : float
    n_fit : int
    alpha : ndarray of shape (n_labels,)
        The Dirichlet fitted to the ``n_fit``-vote subsample.
    """

    table: pd.DataFrame
    max_abs_error: float
    max_rel_error: float
    n_fit: int
    alpha: np.ndarray


def extrapolation_check(data: Any, *, n_fit: int = 5, ks: Any = (1, 2, 5, 10, 20, 50),
                        reps: int = 50,
                        rng: np.random.Generator | int | None = None) -> ExtrapolationCheck:
    """Validate the extrapolation: fit on ``n_fit`` votes per item, predict the full curve.

    Draws one ``n_fit``-vote subsample per item, fits the Dirichlet-multinomial
    on it alone, predicts the TVD curve between k-vote subsamples and each
    item's full data (as many votes as the item really has), and compares with
    the curve observed on all the votes.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> counts = np.array([rng.multinomial(50, p) for p in rng.dirichlet([1, 1], 300)])
    >>> chk = extrapolation_check(counts, n_fit=5, ks=[1, 5, 20], reps=10, rng=1)
    >>> list(chk.table.columns)[:4]
    ['k', 'observed_tvd', 'predicted_tvd', 'abs_error']
    """
    cnt, *_ = as_counts(data)
    ks_arr = check_ks(ks)
    gen = check_rng(rng)
    n = cnt.sum(axis=1)
    if ks_arr.max() > n.min() or n_fit > n.min():
        raise InvalidValueError(f"every item needs at least max(ks, n_fit)="
                                f"{max(int(ks_arr.max()), n_fit)} votes; the fewest is {int(n.min())}")
    few = subsample_counts(cnt, n_fit, rng=gen).counts[0]
    fit = DirichletMultinomial().fit(few)
    observed = subsampling_curve(cnt, ks_arr.tolist(), reps=reps, rng=gen, grid=False)
    predicted = fit.predict_curve(few, ks_arr, n_full=n, reps=reps, rng=gen)
    population = fit.predict_curve(few, ks_arr, reps=reps, rng=gen)
    obs = observed.values["tvd"].mean(axis=0)
    pred = predicted.tvd.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(obs > 0, np.abs(pred - obs) / obs, 0.0)
    table = pd.DataFrame({"k": ks_arr, "observed_tvd": obs, "predicted_tvd": pred,
                          "abs_error": np.abs(pred - obs), "rel_error": rel,
                          "predicted_population_tvd": population.tvd.mean(axis=0)})
    return ExtrapolationCheck(table=table, max_abs_error=float(table.abs_error.max()),
                              max_rel_error=float(rel.max()), n_fit=int(n_fit),
                              alpha=fit.alpha_)
