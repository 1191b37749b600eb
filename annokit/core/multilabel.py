"""Multi-label votes: an annotator may tick several labels of one item.

A *response* is the set of labels one annotator gave one item; in a :class:`Votes` it is
the votes sharing an (item, annotator) pair, one vote per ticked label (read with
``duplicates="keep"``; :func:`annokit.io.lewidi.read_lewidi` does so for VariErrNLI). Each
label is then a yes/no question per response: its soft label is the fraction of the item's
annotators who ticked it (a Bernoulli probability; the labels of one item need not sum to
1), and its majority is "ticked by more than half of the item's annotators".

Exactly half is a tie. It is never settled silently: :func:`multilabel_majority` reports
every tied (item, label) and resolves it by the declared policy (``ties``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from annokit.core.checks import check_option, first_offenders
from annokit.core.votes import Votes
from annokit.errors import SchemaError

__all__ = [
    "DEFAULT_MULTILABEL_TIES",
    "MULTILABEL_TIE_POLICIES",
    "MultilabelMajority",
    "check_multilabel",
    "is_multilabel",
    "majority_of_counts",
    "multilabel_counts",
    "multilabel_majority",
    "multilabel_soft_labels",
    "n_responses",
    "repeated_ticks_error",
    "response_pairs",
    "response_sizes",
]

MultilabelTies = Literal["exclude", "include", "error"]
MULTILABEL_TIE_POLICIES = ("exclude", "include", "error")
#: A label ticked by exactly half of the annotators is not in the majority set unless asked.
DEFAULT_MULTILABEL_TIES: MultilabelTies = "exclude"


def _annotator_ids(votes: Votes) -> np.ndarray:
    """The annotator ids, which multi-label votes need (a response is one annotator's labels)."""
    if votes.annotator_index is None or votes.annotator_ids is None:  # set together
        raise SchemaError(f"{votes.source}: multi-label votes need annotator ids (a response is "
                          "the set of labels one annotator gave one item)")
    return votes.annotator_ids


def _responses(votes: Votes) -> tuple[np.ndarray, np.ndarray]:
    """The answering (item, annotator) pairs' keys (ascending) and the labels ticked in each,
    from one sort of the votes, after the checks of :func:`check_multilabel`."""
    ann_ids = _annotator_ids(votes)
    k = votes.n_labels
    pairs, sizes, rep = response_pairs(votes.pair_keys(), votes.label_index, k)
    if rep.size:
        pair, label = rep // k, rep % k
        n_ann = max(len(ann_ids), 1)
        shown = [(votes.item_ids[p // n_ann], ann_ids[p % n_ann], votes.labels.names[lab])
                 for p, lab in zip(pair[:5], label[:5], strict=True)]
        raise repeated_ticks_error(votes.source, rep.size, shown)
    return pairs, sizes


def response_pairs(pair_keys: np.ndarray, label_index: np.ndarray, k: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The answering pairs' keys (ascending), the labels ticked in each, and the repeated
    ``pair * k + label`` keys (distinct, ascending), from one sort of the votes.

    ``pair_keys`` codes each vote's (item, annotator) pair (``item * n_annotators +
    annotator``), ``label_index`` its label among ``k``.
    """
    key = np.sort(np.asarray(pair_keys, dtype=np.int64) * k + label_index)
    repeated = key[1:] == key[:-1]
    rep = np.unique(key[1:][repeated]) if repeated.any() else np.zeros(0, np.int64)
    pairs = key // k
    starts = np.flatnonzero(np.r_[True, pairs[1:] != pairs[:-1]]) if pairs.size else pairs
    return pairs[starts], np.diff(np.r_[starts, pairs.size]), rep


def repeated_ticks_error(source: str, n_repeated: int, shown: list[tuple]) -> SchemaError:
    """The error for (item, annotator, label) votes given more than once (``shown``: the first
    ones, as (item id, annotator id, label name))."""
    return SchemaError(f"{source}: {n_repeated} (item, annotator, label) vote(s) repeated, "
                       f"e.g. {first_offenders(shown)}; a response ticks each label at most once")


def majority_of_counts(counts: np.ndarray, n_responses: np.ndarray, ties: str
                       ) -> tuple[np.ndarray, np.ndarray]:
    """The majority sets and the tied cells of per-item tick counts, shape (n_items, n_labels)
    each: a label is in the set when ``2 * ticks > responses``; a tie (``2 * ticks ==
    responses``) is in it only with ``ties="include"`` (:func:`multilabel_majority`)."""
    n = np.asarray(n_responses)[:, None]
    twice = 2 * np.asarray(counts)
    tied = twice == n
    return (twice > n) | (tied & (ties == "include")), tied


def check_multilabel(votes: Votes) -> None:
    """Check that ``votes`` can be read as multi-label responses.

    Needs annotator ids (a response is an (item, annotator) pair) and at most one vote per
    (item, annotator, label): a label ticked twice in one response is an error, not a
    weight.

    Raises
    ------
    SchemaError
        Votes without annotator ids, or a repeated (item, annotator, label) vote (the
        message names the first ones).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": ["q", "q", "q"], "annotator": ["a", "a", "b"],
    ...                    "label": ["x", "y", "x"]})
    >>> check_multilabel(Votes.from_long(df, duplicates="keep"))
    """
    _responses(votes)


def n_responses(votes: Votes) -> np.ndarray:
    """Number of annotators who answered each item (responses), shape (n_items,).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": ["q", "q", "q"], "annotator": ["a", "a", "b"],
    ...                    "label": ["x", "y", "x"]})
    >>> n_responses(Votes.from_long(df, duplicates="keep")).tolist()
    [2]
    """
    pairs, _ = _responses(votes)
    return np.bincount(pairs // max(len(_annotator_ids(votes)), 1), minlength=votes.n_items)


def response_sizes(votes: Votes) -> np.ndarray:
    """Labels ticked in each response (one value per answering (item, annotator) pair).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": ["q", "q", "q"], "annotator": ["a", "a", "b"],
    ...                    "label": ["x", "y", "x"]})
    >>> response_sizes(Votes.from_long(df, duplicates="keep")).tolist()
    [2, 1]
    """
    return _responses(votes)[1]


def is_multilabel(votes: Votes) -> bool:
    """True when some annotator gave more than one label to some item.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": ["q", "q"], "annotator": ["a", "b"], "label": ["x", "y"]})
    >>> is_multilabel(Votes.from_long(df))
    False
    """
    return votes.has_duplicate_pairs()


def multilabel_counts(votes: Votes) -> np.ndarray:
    """Annotators who ticked each label of each item, shape (n_items, n_labels).

    Raises
    ------
    SchemaError
        See :func:`check_multilabel`.
    """
    check_multilabel(votes)
    return votes.counts()


def multilabel_soft_labels(votes: Votes) -> np.ndarray:
    """Per-label soft labels: the fraction of an item's annotators who ticked each label.

    Parameters
    ----------
    votes : Votes
        Multi-label votes (one vote per ticked label; annotator ids required).

    Returns
    -------
    ndarray of float, shape (n_items, n_labels)
        ``ticks[i, l] / responses[i]``: each entry in [0, 1]; a row sums to the mean
        number of labels per response (1 for single-label data), not necessarily to 1.

    Raises
    ------
    SchemaError
        See :func:`check_multilabel`.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": ["q"] * 5, "annotator": ["a", "a", "b", "c", "d"],
    ...                    "label": ["ent", "neu", "neu", "neu", "ent"]})
    >>> multilabel_soft_labels(Votes.from_long(df, labels=["ent", "neu", "con"],
    ...                                        duplicates="keep")).tolist()
    [[0.5, 0.75, 0.0]]
    """
    answered = n_responses(votes)  # checks the votes
    return votes.counts() / answered[:, None]


@dataclass(frozen=True)
class MultilabelMajority:
    """Per-label majority of multi-label votes.

    Attributes
    ----------
    labels : ndarray of bool, shape (n_items, n_labels)
        True where the label is in the item's majority set (ticked by more than half of
        its annotators; a tie as the policy says).
    is_tied : ndarray of bool, shape (n_items, n_labels)
        True where exactly half of the item's annotators ticked the label.
    policy : str
        The tie policy used.
    """

    labels: np.ndarray
    is_tied: np.ndarray
    policy: str

    @property
    def n_ties(self) -> int:
        """Number of tied (item, label) cells."""
        return int(self.is_tied.sum())


def multilabel_majority(votes: Votes, *, ties: MultilabelTies = DEFAULT_MULTILABEL_TIES
                        ) -> MultilabelMajority:
    """Majority per label: a label is in an item's set when more than half its annotators ticked it.

    Parameters
    ----------
    votes : Votes
        Multi-label votes (see :func:`multilabel_soft_labels`).
    ties : {"exclude", "include", "error"}, default="exclude"
        A label ticked by exactly half of the item's annotators: left out of the set,
        put in it, or an error naming the tied cells. Ties are reported either way
        (``is_tied``, ``n_ties``).

    Returns
    -------
    MultilabelMajority

    Raises
    ------
    InvalidValueError
        An unknown policy.
    SchemaError
        See :func:`check_multilabel`; or a tie with ``ties="error"``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": ["q"] * 5, "annotator": ["a", "a", "b", "c", "d"],
    ...                    "label": ["ent", "neu", "neu", "neu", "ent"]})
    >>> v = Votes.from_long(df, labels=["ent", "neu", "con"], duplicates="keep")
    >>> m = multilabel_majority(v)
    >>> m.labels.tolist(), m.is_tied.tolist(), m.n_ties
    ([[False, True, False]], [[True, False, False]], 1)
    >>> multilabel_majority(v, ties="include").labels.tolist()
    [[True, True, False]]
    """
    check_option("ties", ties, MULTILABEL_TIE_POLICIES)
    n = n_responses(votes)  # checks the votes
    labels, tied = majority_of_counts(votes.counts(), n, ties)
    if ties == "error" and tied.any():
        rows, cols = np.nonzero(tied)
        shown = [(votes.item_ids[r], votes.labels.names[c])
                 for r, c in zip(rows[:5], cols[:5], strict=True)]
        raise SchemaError(f"{votes.source}: {int(tied.sum())} (item, label) cell(s) ticked by "
                          f"exactly half of the annotators, e.g. {first_offenders(shown)}; pass "
                          "ties='exclude' or 'include'")
    return MultilabelMajority(labels=labels, is_tied=tied, policy=ties)
