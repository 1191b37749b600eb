"""From vote counts to soft labels: distributions, entropy, majority and ties.

Every function takes an (n_items, n_labels) count matrix (``Votes.counts()``)
or a probability matrix and is vectorised over items; :func:`vote_majority` and
:func:`first_seen_order` take the :class:`~annokit.core.votes.Votes` themselves.

Majority vote and ties live here once: :func:`break_ties` implements every tie
policy and :data:`DEFAULT_TIES` is the policy used wherever none is given
(``annokit stats``, ``annokit aggregate``, ``annokit evaluate`` and the report).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from annokit.core.checks import check_counts, check_option, check_rng
from annokit.errors import InvalidValueError, SchemaError

if TYPE_CHECKING:  # Votes.distributions calls this module: no import of votes at run time
    from annokit.core.votes import Votes

__all__ = [
    "AGREEMENT_BINS",
    "DEFAULT_TIES",
    "ENTROPY_BASE",
    "ENTROPY_UNIT",
    "TIE_POLICIES",
    "Majority",
    "MajorityChange",
    "agreement",
    "break_ties",
    "describe_ties",
    "distributions",
    "entropy",
    "entropy_unit",
    "first_seen_order",
    "majority",
    "majority_change",
    "normalized_entropy",
    "softmax",
    "vote_majority",
]

TiePolicy = Literal["first", "first_seen", "random", "report"]


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
        raise InvalidValueError(f"smoothing must be a finite number >= 0; got {smoothing!r}")
    num = arr + smoothing
    return num / num.sum(axis=1, keepdims=True)


#: The logarithm base of every entropy annokit reports by default: e (nats). Cross-entropy,
#: NLL, KL, Jensen-Shannon and EntCE are in nats by the machine-learning convention (and in
#: the reference code of Baan et al. 2022, the LeWiDi scorers and ``scipy.stats.entropy``);
#: label entropy uses the same base, so that entropy, KL and cross-entropy figures add up
#: (H(human) + KL(human || model) = cross-entropy) and no table mixes two bases. ChaosNLI's
#: stored entropies are in bits: ``annokit stats --base 2`` or ``entropy(p, base=2)``.
ENTROPY_BASE = math.e
#: The name of the unit of :data:`ENTROPY_BASE`.
ENTROPY_UNIT = "nats"
#: Agreement bins: equal-count quantile bins of human entropy, the default count of
#: ``evaluate(by="agreement")``, the report and the subsampling curves' ``by_bin``.
AGREEMENT_BINS = 5


def entropy_unit(base: float | None = ENTROPY_BASE) -> str:
    """The unit of an entropy in logarithm base ``base``: ``"bits"``, ``"nats"``, ``"bans"``, or
    ``"log base b"``.

    Examples
    --------
    >>> entropy_unit(2), entropy_unit(), entropy_unit(None), entropy_unit(3)
    ('bits', 'nats', 'nats', 'log base 3')
    """
    if base is None or abs(float(base) - math.e) <= 1e-12:
        return "nats"
    return {2.0: "bits", 10.0: "bans"}.get(float(base), f"log base {float(base):g}")


def _log(x: np.ndarray, base: float | None) -> np.ndarray:
    with np.errstate(divide="ignore"):
        out = np.log(x)
    return out if base is None else out / np.log(base)


def entropy(probs: Any, *, base: float | None = ENTROPY_BASE) -> np.ndarray:
    """Shannon entropy of each row, with ``0 log 0 = 0``.

    Parameters
    ----------
    probs : array-like of shape (n_items, n_labels)
        Rows are probability distributions.
    base : float or None, default=e
        Logarithm base (:data:`ENTROPY_BASE`); e or None gives nats, 2 bits (as
        ChaosNLI reports).

    Returns
    -------
    ndarray of shape (n_items,)

    Examples
    --------
    >>> round(float(entropy([[0.3, 0.7, 0.0]], base=2)[0]), 6)  # ChaosNLI's stored value, bits
    0.881291
    >>> round(float(entropy([[0.5, 0.5]])[0]), 6)  # nats by default: log 2
    0.693147
    """
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != 2:
        raise SchemaError(f"probs must be 2-D (n_items, n_labels); got shape {p.shape}")
    if base is not None and (base <= 0 or base == 1):
        raise InvalidValueError(f"base must be positive and not 1; got {base!r}")
    terms = np.where(p > 0, p * _log(np.where(p > 0, p, 1.0), base), 0.0)
    return np.maximum(-terms.sum(axis=1), 0.0)


def normalized_entropy(probs: Any) -> np.ndarray:
    """Entropy divided by its maximum ``log(n_labels)``: 0 for unanimity, 1 for uniform."""
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] < 2:
        raise SchemaError("normalized entropy needs a 2-D matrix with at least two labels")
    return entropy(p, base=None) / np.log(p.shape[1])


def agreement(counts: Any) -> np.ndarray:
    """Share of votes on the most voted label, per item (1.0 for unanimity)."""
    arr = check_counts(counts)
    return arr.max(axis=1) / arr.sum(axis=1)


#: Tie policies of the majority vote (every policy flags the tied items).
TIE_POLICIES = ("first", "first_seen", "random", "report")

#: The declared default tie policy of every majority vote in annokit (``stats``,
#: ``aggregate``, the evaluation engine and the report): the first tied label in
#: label order. It depends on the counts alone, so it is defined for count-only
#: data (ChaosNLI) and does not change when the rows of a vote file are shuffled.
#: ``"first_seen"`` (the tied label voted first in vote order) is the rule behind
#: the majority-vote accuracies published with Snow et al.'s RTE data (0.9025)
#: and the dog data (0.8166); ask for it explicitly.
DEFAULT_TIES: TiePolicy = "first"

_TIE_RULES = {
    "first": "first tied label in label order",
    "report": "first tied label in label order",
    "first_seen": "tied label voted first in vote order",
    "random": "one tied label drawn at random (seeded)",
}


def describe_ties(policy: str) -> str:
    """How a tie policy picks the label of a tied item, in words (for printed output).

    Examples
    --------
    >>> describe_ties("first_seen")
    'tied label voted first in vote order'
    """
    check_option("ties", policy, TIE_POLICIES)
    return _TIE_RULES[policy]


@dataclass(frozen=True)
class Majority:
    """Majority labels and their ties.

    Attributes
    ----------
    labels : ndarray of shape (n_items,)
        The majority label index; a tied item gets the label its tie policy
        picks (see :func:`break_ties`).
    is_tied : ndarray of bool, shape (n_items,)
        True where two or more labels share the top count.
    tied : ndarray of bool, shape (n_items, n_labels)
        The set of top labels of each item.
    policy : str
        The tie policy used.
    """

    labels: np.ndarray
    is_tied: np.ndarray
    tied: np.ndarray
    policy: str

    @property
    def n_ties(self) -> int:
        return int(self.is_tied.sum())


def break_ties(top: Any, *, ties: TiePolicy = DEFAULT_TIES,
               rng: np.random.Generator | int | None = None,
               first_seen: Any = None) -> np.ndarray:
    """One label per item among its top labels, under a tie policy.

    The single implementation of annokit's tie rules: :func:`majority`,
    :func:`vote_majority` and the weighted majority vote call it.

    Parameters
    ----------
    top : array-like of bool, shape (n_items, n_labels)
        The labels sharing the top score of each item (at least one per row).
    ties : {"first", "first_seen", "random", "report"}, default=DEFAULT_TIES
        ``"first"`` (and its older name ``"report"``): the first tied label in
        label order; ``"first_seen"``: the tied label with the smallest
        ``first_seen`` entry (its first vote comes earliest); ``"random"``: one
        tied label drawn uniformly with ``rng``.
    rng : numpy Generator or int seed, optional
        Required by ``ties="random"`` (for reproducibility).
    first_seen : array-like of int, shape (n_items, n_labels), optional
        Required by ``ties="first_seen"``: the row of the first vote of each
        (item, label), as :func:`first_seen_order` returns.

    Returns
    -------
    labels : ndarray of int, shape (n_items,)

    Raises
    ------
    InvalidValueError
        An unknown policy, ``"random"`` without ``rng`` or ``"first_seen"``
        without ``first_seen``.
    SchemaError
        ``first_seen`` of another shape than ``top``.

    Examples
    --------
    >>> top = np.array([[True, True], [False, True]])
    >>> break_ties(top).tolist(), break_ties(top, ties="first_seen", first_seen=[[3, 1], [9, 2]]).tolist()
    ([0, 1], [1, 1])
    """
    check_option("ties", ties, TIE_POLICIES)
    top = np.asarray(top, dtype=bool)
    if ties == "random":
        if rng is None:
            raise InvalidValueError("ties='random' needs an rng (a seed or numpy Generator)")
        keys = np.where(top, check_rng(rng).random(top.shape), -1.0)
        return keys.argmax(axis=1)
    if ties == "first_seen":
        if first_seen is None:
            raise InvalidValueError(
                "ties='first_seen' needs the vote order (first_seen=first_seen_order(votes), or "
                "vote_majority(votes)); a count matrix has none")
        order = np.asarray(first_seen)
        if order.shape != top.shape:
            raise SchemaError(f"first_seen must have the shape of the counts {top.shape}; "
                              f"got {order.shape}")
        return np.where(top, order, np.iinfo(np.int64).max).argmin(axis=1)
    return top.argmax(axis=1)


def majority(counts: Any, *, ties: TiePolicy = DEFAULT_TIES,
             rng: np.random.Generator | int | None = None, first_seen: Any = None) -> Majority:
    """Majority label per item with an explicit tie policy.

    Parameters
    ----------
    counts : array-like of shape (n_items, n_labels)
    ties : {"first", "first_seen", "random", "report"}, default=DEFAULT_TIES
        See :func:`break_ties`; the default, ``"first"``, is annokit's declared
        policy (:data:`DEFAULT_TIES`).
    rng : numpy Generator or int seed, optional
        Only for ``ties="random"``.
    first_seen : array-like of int, shape (n_items, n_labels), optional
        Only for ``ties="first_seen"`` (see :func:`vote_majority`).

    Examples
    --------
    >>> m = majority([[2, 2, 1], [0, 1, 4]])
    >>> m.labels.tolist(), m.is_tied.tolist(), m.n_ties, m.policy
    ([0, 2], [True, False], 1, 'first')
    """
    check_option("ties", ties, TIE_POLICIES)
    return _top_labels(check_counts(counts), ties=ties, rng=rng, first_seen=first_seen)


def distribution_majority(probs: Any, *, ties: TiePolicy = DEFAULT_TIES,
                          rng: np.random.Generator | int | None = None) -> Majority:
    """:func:`majority` of soft labels published without their votes
    (:class:`annokit.core.soft_votes.SoftLabels`): the labels of highest probability, tied when
    several are exactly equal.

    Examples
    --------
    >>> m = distribution_majority([[0.2, 0.8], [0.5, 0.5]])
    >>> m.labels.tolist(), m.is_tied.tolist()
    ([1, 0], [False, True])
    """
    check_option("ties", ties, TIE_POLICIES)
    return _top_labels(np.asarray(probs, dtype=np.float64), ties=ties, rng=rng, first_seen=None)


def _top_labels(arr: np.ndarray, *, ties: TiePolicy, rng: Any, first_seen: Any) -> Majority:
    top = arr == arr.max(axis=1, keepdims=True)
    labels = break_ties(top, ties=ties, rng=rng, first_seen=first_seen)
    return Majority(labels=labels, is_tied=top.sum(axis=1) > 1, tied=top, policy=ties)


def first_seen_order(votes: Votes) -> np.ndarray:
    """Row of the first vote for each (item, label), shape (n_items, n_labels).

    Cells with no vote hold ``n_votes`` (later than any vote). Votes built from a
    count matrix list each item's votes in label order, so there ``"first_seen"``
    and ``"first"`` agree.

    Examples
    --------
    >>> import pandas as pd
    >>> from annokit.core.votes import Votes
    >>> df = pd.DataFrame({"item": ["a", "a", "a", "b"], "label": ["y", "n", "y", "n"],
    ...                    "annotator": ["1", "2", "3", "1"]})
    >>> first_seen_order(Votes.from_long(df)).tolist()
    [[1, 0], [3, 4]]
    """
    n = votes.n_votes
    flat = votes.item_index.astype(np.int64) * votes.n_labels + votes.label_index
    first = np.full(votes.n_items * votes.n_labels, n, dtype=np.int64)
    np.minimum.at(first, flat, np.arange(n, dtype=np.int64))
    return first.reshape(votes.n_items, votes.n_labels)


def vote_majority(votes: Votes, *, ties: TiePolicy = DEFAULT_TIES,
                  rng: np.random.Generator | int | None = None) -> Majority:
    """:func:`majority` of ``votes.counts()``, with the vote order at hand for ``"first_seen"``.

    Examples
    --------
    >>> import pandas as pd
    >>> from annokit.core.votes import Votes
    >>> df = pd.DataFrame({"item": ["a", "a"], "label": ["y", "n"], "annotator": ["1", "2"]})
    >>> v = Votes.from_long(df)
    >>> vote_majority(v).labels.tolist(), vote_majority(v, ties="first_seen").labels.tolist()
    ([0], [1])
    """
    check_option("ties", ties, TIE_POLICIES)
    first = first_seen_order(votes) if ties == "first_seen" else None
    return majority(votes.counts(), ties=ties, rng=rng, first_seen=first)


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
        raise SchemaError(f"new and old must be 1-D of equal length; got {new.shape}, {old.shape}")
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
