"""Dirichlet-multinomial extrapolation of subsampling curves beyond the observed votes.

Re-exported by :mod:`annokit.subsample`; import from there.

Model (empirical Bayes): each item's label distribution ``pi_i`` is drawn from
one global ``Dirichlet(alpha)``, and its ``n_i`` votes are multinomial given
``pi_i``. ``alpha`` is fitted by maximum likelihood of the Dirichlet-multinomial
(Minka 2000, "Estimating a Dirichlet distribution", eq. 52 and its gradient);
an item's posterior is then ``Dirichlet(alpha + x_i)``. Predicted curves draw
``pi_i`` from the posterior, k new votes from ``Multinomial(k, pi_i)`` and
compare the k-vote estimate with either ``pi_i`` itself (the population,
infinitely many annotators) or with a simulated full data set of ``n_full``
votes that contains the k (as a subsample of observed data does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize
from scipy.special import digamma, gammaln

from annokit.core.checks import check_rng
from annokit.core.divergence import tvd
from annokit.errors import AnnokitError, InvalidValueError, SchemaError
from annokit.subsample import engine as _eng
from annokit.subsample._checks import as_counts, check_ks

__all__ = ["DirichletMultinomial", "ExtrapolatedCurve", "dm_log_likelihood"]

#: Items :meth:`DirichletMultinomial.smallest_k` simulates at most (a seeded uniform sample
#: above this), so that its cost does not grow with the number of items beyond it.
MAX_ITEMS = 10_000


@dataclass
class ExtrapolatedCurve:
    """Predicted mean TVD between a k-vote estimate and its target, per repetition.

    Attributes
    ----------
    ks : ndarray of shape (n_k,)
    tvd : ndarray of shape (reps, n_k)
        Mean over items per repetition.
    n_full : int, ndarray or None
        Votes of the simulated full data (None: the population distribution).
    interval : float
    """

    ks: np.ndarray
    tvd: np.ndarray
    n_full: Any
    interval: float

    def band(self) -> tuple[np.ndarray, np.ndarray]:
        lo = 100 * (1 - self.interval) / 2
        return np.percentile(self.tvd, lo, axis=0), np.percentile(self.tvd, 100 - lo, axis=0)

    def to_frame(self) -> pd.DataFrame:
        lo, hi = self.band()
        return pd.DataFrame({"k": self.ks, "tvd_mean": self.tvd.mean(axis=0),
                             "tvd_low": lo, "tvd_high": hi})


def _multinomial(gen: np.random.Generator, m: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """Multinomial(m, pi) for arrays: chain of binomials over labels (last axis of ``pi``)."""
    n_labels = pi.shape[-1]
    out = np.empty(pi.shape, dtype=np.int64)
    left = np.array(np.broadcast_to(m, pi.shape[:-1]), dtype=np.int64)
    mass = np.ones(pi.shape[:-1])
    for j in range(n_labels - 1):
        with np.errstate(divide="ignore", invalid="ignore"):
            pj = np.where(mass > 0, pi[..., j] / mass, 0.0)
        x = gen.binomial(left, np.clip(pj, 0.0, 1.0))
        out[..., j] = x
        left -= x
        mass = mass - pi[..., j]
    out[..., -1] = left
    return out


def dm_log_likelihood(counts: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Log Dirichlet-multinomial likelihood of each count row, without the multinomial coefficient.

    ``log B(alpha + x) - log B(alpha)`` (Minka 2000, eq. 52): ``counts`` of shape
    ``(..., n_labels)``, ``alpha`` broadcast against it (one prior, or one per row).
    """
    big_a = alpha.sum(axis=-1)
    return (gammaln(big_a) - gammaln(counts.sum(axis=-1) + big_a)
            + (gammaln(counts + alpha) - gammaln(alpha)).sum(axis=-1))


class DirichletMultinomial:
    """Global Dirichlet prior over item label distributions, fitted to vote counts.

    Parameters
    ----------
    max_iter : int, default=1000
        Iterations of L-BFGS-B on ``log(alpha)``.

    Attributes
    ----------
    alpha_ : ndarray of shape (n_labels,)
    concentration_ : float
        ``sum(alpha_)``: small values mean items are far apart (and close to
        unanimous), large values mean every item looks like the average item.
    mean_ : ndarray of shape (n_labels,)
    log_likelihood_ : float
    converged_ : bool

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> pi = rng.dirichlet([2.0, 1.0, 1.0], size=3000)
    >>> counts = np.array([rng.multinomial(10, p) for p in pi])
    >>> fit = DirichletMultinomial().fit(counts)
    >>> np.round(fit.alpha_, 1).tolist()  # close to [2, 1, 1]
    [2.0, 1.0, 1.0]
    """

    def __init__(self, *, max_iter: int = 1000):
        self.max_iter = max_iter

    def fit(self, counts: Any) -> DirichletMultinomial:
        cnt, *_ = as_counts(counts)
        if cnt.shape[1] < 2:
            raise SchemaError("a Dirichlet-multinomial needs at least two labels")
        # identical count rows share a likelihood term: fit on unique rows with weights
        rows, weight = np.unique(cnt, axis=0, return_counts=True)
        n = rows.sum(axis=1)

        def nll(theta: np.ndarray) -> tuple[float, np.ndarray]:
            a = np.exp(theta)
            big_a = a.sum()
            ll = dm_log_likelihood(rows, a)
            grad_a = (digamma(big_a) - digamma(n + big_a))[:, None] \
                + digamma(rows + a) - digamma(a)
            return -float(weight @ ll), -(weight @ grad_a) * a

        mean = (cnt.sum(axis=0) + 0.5) / (cnt.sum() + 0.5 * cnt.shape[1])
        theta0 = np.log(mean * 1.0)
        res = optimize.minimize(nll, theta0, jac=True, method="L-BFGS-B",
                                bounds=[(-12.0, 12.0)] * cnt.shape[1],
                                options={"maxiter": self.max_iter})
        self.alpha_ = np.exp(res.x)
        self.concentration_ = float(self.alpha_.sum())
        self.mean_ = self.alpha_ / self.concentration_
        self.log_likelihood_ = -float(res.fun)
        self.converged_ = bool(res.success)
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "alpha_"):
            raise AnnokitError("this DirichletMultinomial is not fitted; call fit(counts) first")

    def predict_curve(self, counts: Any, ks: Any, *, n_full: Any = None, reps: int = 50,
                      rng: np.random.Generator | int | None = None,
                      interval: float = 0.95) -> ExtrapolatedCurve:
        """Predicted TVD curve for the items of ``counts`` (their posteriors).

        Parameters
        ----------
        counts : array-like of shape (n_items, n_labels) or Votes
            The observed votes that condition each item's posterior.
        ks : sequence of int
        n_full : int, array of shape (n_items,) or None
            None: compare with the item's distribution ``pi_i`` (population).
            Otherwise compare with a simulated full data set of ``n_full``
            votes containing the k (needs ``k <= n_full``).
        reps : int, default=50
        rng : numpy Generator, int seed or None
        interval : float, default=0.95

        Returns
        -------
        ExtrapolatedCurve
        """
        self._check_fitted()
        cnt, *_ = as_counts(counts)
        if cnt.shape[1] != len(self.alpha_):
            raise SchemaError(f"counts has {cnt.shape[1]} labels; the fit has "
                              f"{len(self.alpha_)}")
        ks_arr = check_ks(ks)
        gen = check_rng(rng)
        n_items = cnt.shape[0]
        if n_full is not None:
            n_full = np.broadcast_to(np.asarray(n_full, dtype=np.int64), (n_items,))
            if ks_arr.max() > n_full.min():
                raise InvalidValueError(f"k={int(ks_arr.max())} exceeds n_full="
                                        f"{int(n_full.min())}; a subsample cannot be larger "
                                        "than the full data")
        post = self.alpha_[None, :] + cnt
        out = np.empty((reps, len(ks_arr)))
        for a, b in _eng.rep_chunks(reps, n_items * cnt.shape[1] * 4):
            g = gen.standard_gamma(np.broadcast_to(post, (b - a,) + post.shape))
            pi = g / g.sum(axis=-1, keepdims=True)
            x = np.zeros(pi.shape, dtype=np.int64)
            prev = 0
            for i, k in enumerate(ks_arr):
                x += _multinomial(gen, np.int64(k - prev), pi)
                prev = int(k)
                if n_full is None:
                    ref = pi
                else:
                    rest = _multinomial(gen, np.broadcast_to(n_full - k, pi.shape[:-1]), pi)
                    ref = (x + rest) / n_full[None, :, None]
                n_lab = x.shape[-1]
                out[a:b, i] = tvd((x / k).reshape(-1, n_lab), ref.reshape(-1, n_lab)
                                  ).reshape(x.shape[:-1]).mean(axis=1)
        return ExtrapolatedCurve(ks=ks_arr, tvd=out, n_full=n_full, interval=float(interval))

    def smallest_k(self, counts: Any, epsilon: float, *, reps: int = 20,
                   rng: np.random.Generator | int | None = None, k_max: int = 5000,
                   interval: float = 0.95, max_items: int = MAX_ITEMS) -> dict[str, Any]:
        """Smallest k whose predicted mean TVD to the population is below ``epsilon``.

        A geometric grid of 60 ks up to ``k_max``, then about 40 evenly spaced
        ks inside the bracket where the curve and its interval cross ``epsilon``
        (so k is exact below ~40 and within ~0.4% above). Returns a dict with
        ``k``, ``k_low``, ``k_high`` (None when ``k_max`` is not enough) and ``curve``.

        With more than ``max_items`` items, the curve is predicted for a uniform
        sample of ``max_items`` of them (drawn from ``rng``, so the same seed gives
        the same sample): the mean over items is then an unbiased estimate whose
        standard error is about ``sd(TVD_i) / sqrt(max_items)`` (below 0.001 at
        the default), and the cost stops growing with the number of items.
        """
        gen = check_rng(rng)
        cnt, *_ = as_counts(counts)
        if max_items < 1:
            raise InvalidValueError(f"max_items must be >= 1; got {max_items!r}")
        if cnt.shape[0] > max_items:
            counts = cnt[np.sort(gen.choice(cnt.shape[0], max_items, replace=False))]
        grid = np.unique(np.round(np.geomspace(1, k_max, 60)).astype(np.int64))
        first = self.predict_curve(counts, grid, reps=reps, rng=gen, interval=interval)
        lo, hi = first.band()
        mean = first.tvd.mean(axis=0)
        hits = [np.flatnonzero(c < epsilon) for c in (lo, mean, hi)]
        if hits[0].size == 0:
            return {"k": None, "k_low": None, "k_high": None, "curve": first}
        start = int(grid[max(hits[0][0] - 1, 0)])
        stop = int(grid[hits[2][0]]) if hits[2].size else int(k_max)
        step = max(1, int(np.ceil((stop - start) / 40)))
        fine = np.unique(np.r_[np.arange(start, stop + 1, step), stop])
        second = self.predict_curve(counts, fine, reps=reps, rng=gen, interval=interval)
        lo2, hi2 = second.band()

        def first_below(curve: np.ndarray) -> int | None:
            idx = np.flatnonzero(curve < epsilon)
            return int(fine[idx[0]]) if idx.size else None

        return {"k": first_below(second.tvd.mean(axis=0)), "k_low": first_below(lo2),
                "k_high": first_below(hi2), "curve": second}
