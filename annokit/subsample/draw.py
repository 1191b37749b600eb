"""Single k-vote subsamples from counts or vote rows (re-exported by :mod:`annokit.subsample`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from annokit.core.checks import check_rng, seed_or_rng
from annokit.core.votes import Votes
from annokit.errors import SchemaError
from annokit.subsample import engine as _eng
from annokit.subsample._checks import ShortPolicy, as_counts, check_k, check_reps, short_items

__all__ = ["CountSubsample", "subsample_counts", "subsample_votes"]


@dataclass(frozen=True)
class CountSubsample:
    """k-vote subsamples drawn from counts.

    Attributes
    ----------
    counts : ndarray of shape (reps, n_kept, n_labels)
        Vote counts of each repetition's subsample, for the kept items.
    item_positions : ndarray of shape (n_kept,)
        Row of each kept item in the input.
    k : int
    n_short : int
        Items with fewer than k votes (skipped under ``short="skip"``, kept
        whole under ``"keep"``).
    short : str
    """

    counts: np.ndarray
    item_positions: np.ndarray
    k: int
    n_short: int
    short: str


def subsample_counts(counts: Any, k: int, *, reps: int = 1,
                     rng: np.random.Generator | int | None = None,
                     short: ShortPolicy = "error") -> CountSubsample:
    """Draw k votes per item without replacement from vote counts alone.

    Parameters
    ----------
    counts : array-like of shape (n_items, n_labels) or Votes
        Whole-number vote counts (``Votes.counts()``).
    k : int
        Votes per item in each subsample.
    reps : int, default=1
        Independent repetitions.
    rng : numpy Generator, int seed or None
    short : {"error", "skip", "keep"}, default="error"
        Items with fewer than ``k`` votes: raise, leave them out, or keep all
        their votes. Always reported (a :class:`DegenerateInputWarning`).

    Returns
    -------
    CountSubsample

    Notes
    -----
    Exact multivariate hypergeometric draws, vectorised across items and
    repetitions as a chain of univariate hypergeometric draws over labels:
    ``x_j | x_<j ~ Hypergeometric(good=c_j, bad=sum_{l>j} c_l, draws=k - sum_{l<j} x_l)``.

    Examples
    --------
    >>> sub = subsample_counts([[30, 70, 0], [5, 5, 90]], 10, reps=3, rng=0)
    >>> sub.counts.shape, sub.counts.sum(axis=2).tolist()
    ((3, 2, 3), [[10, 10], [10, 10], [10, 10]])
    """
    cnt, *_ = as_counts(counts)
    k = check_k(k)
    reps = check_reps(reps)
    gen = check_rng(rng)
    n = cnt.sum(axis=1)
    short_mask = short_items(n, k, short, ids=None)
    keep = ~short_mask if short == "skip" else np.ones(len(n), dtype=bool)
    positions = np.flatnonzero(keep)
    sizes = np.minimum(n[positions], k)
    draws = _eng.hypergeometric_counts(cnt[positions], sizes, reps, gen)
    return CountSubsample(counts=draws, item_positions=positions, k=k,
                          n_short=int(short_mask.sum()), short=short)


def subsample_votes(votes: Votes, k: int, *, rng: np.random.Generator | int | None = None,
                    seed: int | None = None,
                    short: ShortPolicy = "error") -> Votes:
    """Keep k randomly chosen vote rows per item (by annotator), without replacement.

    Parameters
    ----------
    votes : Votes
    k : int
    rng : numpy Generator, int seed or None
    short : {"error", "skip", "keep"}, default="error"
        Items with fewer than ``k`` votes: raise, drop them, or keep all their
        votes; always reported with a :class:`DegenerateInputWarning`.
    seed : int, optional
        The same as ``rng=`` an int (the name ``evaluate`` uses); give one of the two.

    Returns
    -------
    Votes
        The chosen vote rows in their original order, with annotators, item
        metadata and gold labels carried along.

    Notes
    -----
    Each repetition sorts the vote rows on (item, uniform random key), which
    permutes every item's votes uniformly at random; a vote is kept when its
    rank within the item is below ``k``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": list("aaaabb"), "annotator": list("wxyzwx"),
    ...                    "label": list("ppnnpn")})
    >>> v = Votes.from_long(df, item="item", annotator="annotator", label="label")
    >>> subsample_votes(v, 2, rng=0).votes_per_item().tolist()
    [2, 2]
    """
    rng = seed_or_rng(seed, rng, "subsample_votes", default=None)
    if not isinstance(votes, Votes):
        raise SchemaError(f"subsample_votes needs a Votes object; got {type(votes).__name__}")
    k = check_k(k)
    gen = check_rng(rng)
    n = votes.votes_per_item()
    short_mask = short_items(n, k, short, ids=votes.item_ids)
    ranks = _eng.vote_rank_draws(votes.item_index, votes.n_items, 1, gen)[0]
    mask = ranks < k
    if short == "skip":
        mask &= ~short_mask[votes.item_index]
    return votes.select_votes(mask)
