"""From vote counts to soft labels: distributions, entropy, majority and ties.

Every function takes an (n_items, n_labels) count matrix (``Votes.counts()``)
or a probability matrix and is vectorised over items.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from annokit.core.checks import check_counts, check_option, check_rng
from annokit.errors import VoteSchemaError

__all__ = [
    "Majority",
    "MajorityChange",
    "agreement",
    "distributions",
    "entropy",
    "majority",
    "majority_change",
    "normalized_entropy",
    "softmax",
]

TiePolicy = Literal["report", "first", "random"]


def distributions(counts: Any, *, smoothing: float = 0.0) -> np.ndarray:
    """Maximum-likelihood label distributions, with optional additive smoothing.

    Parameters
    ----------
    counts : array-like of shape (n_items, n_labels)
        Non-negative integer vote counts; every item needs at least one vote.
    smoothing : float, default=0.0
        Pseudo-count added to every cell (Laplace smoothing for 1.0).

    Returns
    -------
    probs : ndarray of shape (n_items, n_labels)
        ``(counts + smoothing) / (n_votes + n_labels * smoothing)`` row-wise.

    Examples
    --------
    >>> distributions([[30, 70, 0]]).tolist()
    [[0.3, 0.7, 0.0]]
    >>> distributions([[1, 0]], smoothing=1.0).tolist()
    [[0.6666666666666666, 0.3333333333333333]]
    """
    arr = check_counts(counts)
    if not np.isfinite(smoothing) or smoothing < 0:
        raise VoteSchemaError(f"smoothing must be a finite number >= 0; got {smoothing!r}")
    num = arr + smoothing
    return num / num.sum(axis=1, keepdims=True)


def _log(x: np.ndarray, base: float | None) -> np.ndarray:
    with np.errstate(divide="ignore"):
        out = np.log(x)
    return out if base is None else out / np.log(base)


def entropy(probs: Any, *, base: float | None = 2) -> np.ndarray:
    """Shannon entropy of each row, with ``0 log 0 = 0``.

    Parameters
    ----------
    probs : array-like of shape (n_items, n_labels)
        Rows are probability distributions.
    base : float or None, default=2
        Logarithm base; 2 gives bits (as ChaosNLI reports), None or ``e`` nats.

    Returns
    -------
    ndarray of shape (n_items,)

    Examples
    --------
    >>> round(float(entropy([[0.3, 0.7, 0.0]])[0]), 6)  # ChaosNLI's stored value: 0.881291
    0.881291
    """
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != 2:
        raise VoteSchemaError(f"probs must be 2-D (n_items, n_labels); got shape {p.shape}")
    if base is not None and (base <= 0 or base == 1):
        raise VoteSchemaError(f"base must be positive and not 1; got {base!r}")
    terms = np.where(p > 0, p * _log(np.where(p > 0, p, 1.0), base), 0.0)
    return np.maximum(-terms.sum(axis=1), 0.0)


def normalized_entropy(probs: Any) -> np.ndarray:
    """Entropy divided by its maximum ``log(n_labels)``: 0 for unanimity, 1 for uniform."""
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] < 2:
        raise VoteSchemaError("normalized entropy needs a 2-D matrix with at least two labels")
    return entropy(p, base=None) / np.log(p.shape[1])


def agreement(counts: Any) -> np.ndarray:
    """Share of votes on the most voted label, per item (1.0 for unanimity)."""
    arr = check_counts(counts)
    return arr.max(axis=1) / arr.sum(axis=1)


@dataclass(frozen=True)
class Majority:
    """Majority labels and their ties.

    Attributes
    ----------
    labels : ndarray of shape (n_items,)
        The majority label index. Under ``ties="report"`` a tied item gets the
        first tied label in label order (see ``tied``); under ``"first"`` the
        same; under ``"random"`` one tied label drawn with the given rng.
    is_tied : ndarray of bool, shape (n_items,)
        True where two or more labels share the top count.
    tied : ndarray of bool, shape (n_items, n_labels)
        The set of top labels of each item.
    policy : str
    """

    labels: np.ndarray
    is_tied: np.ndarray
    tied: np.ndarray
    policy: str

    @property
    def n_ties(self) -> int:
        return int(self.is_tied.sum())


def majority(counts: Any, *, ties: TiePolicy = "report",
             rng: np.random.Generator | int | None = None) -> Majority:
    """Majority label per item with an explicit tie policy.

    Parameters
    ----------
    counts : array-like of shape (n_items, n_labels)
    ties : {"report", "first", "random"}, default="report"
        ``"report"`` and ``"first"`` both return the first tied label in label
        order and flag the tie; ``"random"`` draws uniformly among tied labels
        using ``rng`` (required, for reproducibility).
    rng : numpy Generator or int seed, optional

    Examples
    --------
    >>> m = majority([[2, 2, 1], [0, 1, 4]])
    >>> m.labels.tolist(), m.is_tied.tolist(), m.n_ties
    ([0, 2], [True, False], 1)
    """
    check_option("ties", ties, ("report", "first", "random"))
    arr = check_counts(counts)
    top = arr == arr.max(axis=1, keepdims=True)
    is_tied = top.sum(axis=1) > 1
    if ties == "random":
        if rng is None:
            raise VoteSchemaError("ties='random' needs an rng (a seed or numpy Generator)")
        gen = check_rng(rng)
        keys = np.where(top, gen.random(arr.shape), -1.0)
        labels = keys.argmax(axis=1)
    else:
        labels = top.argmax(axis=1)
    return Majority(labels=labels, is_tied=is_tied, tied=top, policy=ties)


@dataclass(frozen=True)
class MajorityChange:
    """How often the majority label differs from a reference (e.g. the original gold).

    ``rate = n_changed / n_compared``; ``n_tied`` counts the compared items
    whose new majority is a tie (the published majority then picks one of the
    tied labels, and whether it "changed" depends on that pick).
    """

    rate: float
    n_changed: int
    n_compared: int
    n_tied: int
    n_changed_excluding_ties: int

    def to_dict(self) -> dict[str, Any]:
        return {"rate": self.rate, "n_changed": self.n_changed, "n_compared": self.n_compared,
                "n_tied": self.n_tied}


def majority_change(new: Any, old: Any, *, tied: Any = None) -> MajorityChange:
    """Compare new majority labels with old labels (codes; -1 in ``old`` = not compared).

    Parameters
    ----------
    new : array-like of int, shape (n_items,)
        New majority label per item.
    old : array-like of int, shape (n_items,)
        Reference label; items with -1 are left out of the comparison.
    tied : array-like of bool, shape (n_items, n_labels) or (n_items,), optional
        Tie information for the new majority: a tie set (then an item also
        counts as changed-excluding-ties only when ``old`` is not among the tied
        labels) or a per-item flag.

    Examples
    --------
    >>> mc = majority_change([0, 1, 2, 2], [0, 2, 2, -1])
    >>> mc.rate, mc.n_changed, mc.n_compared
    (0.3333333333333333, 1, 3)
    """
    new = np.asarray(new, dtype=np.int64)
    old = np.asarray(old, dtype=np.int64)
    if new.shape != old.shape or new.ndim != 1:
        raise VoteSchemaError(f"new and old must be 1-D of equal length; got {new.shape}, {old.shape}")
    compared = old >= 0
    changed = compared & (new != old)
    if tied is None:
        is_tied = np.zeros_like(compared)
        changed_strict = changed
    else:
        tied = np.asarray(tied, dtype=bool)
        if tied.ndim == 2:
            is_tied = tied.sum(axis=1) > 1
            old_in_top = np.zeros_like(compared)
            rows = np.flatnonzero(compared)
            old_in_top[rows] = tied[rows, old[rows]]
            changed_strict = compared & ~old_in_top
        else:
            is_tied = tied
            changed_strict = changed & ~is_tied
    n_compared = int(compared.sum())
    return MajorityChange(
        rate=float(changed.sum() / n_compared) if n_compared else float("nan"),
        n_changed=int(changed.sum()),
        n_compared=n_compared,
        n_tied=int((compared & is_tied).sum()),
        n_changed_excluding_ties=int(changed_strict.sum()),
    )


def softmax(logits: Any) -> np.ndarray:
    """Row-wise softmax, stable for large logits (the row maximum is subtracted).

    ``-inf`` logits give probability 0; a row must have at least one finite logit.

    Examples
    --------
    >>> softmax([[0.0, 0.0], [1000.0, 0.0]]).round(6).tolist()
    [[0.5, 0.5], [1.0, 0.0]]
    """
    z = np.asarray(logits, dtype=np.float64)
    top = z.max(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        e = np.exp(z - top)
    return e / e.sum(axis=1, keepdims=True)
