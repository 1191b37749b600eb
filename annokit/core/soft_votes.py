"""Soft labels without votes: a probability per label for each item, and nothing else.

Some datasets publish only their human label distributions (a normalised count matrix such
as CIFAR-10H's ``cifar10h-probs.npy``, or a table of probabilities), without the votes or the
number of annotators behind them. :class:`SoftLabels` holds such distributions where a
:class:`~annokit.core.votes.Votes` is expected: what needs only distributions works
(:meth:`SoftLabels.distributions`: entropy, agreement, calibration and divergence metrics
through :func:`annokit.metrics.records.align`); what needs votes (counts, the votes' codes,
annotators) raises one :class:`~annokit.errors.InputError` saying why
(:func:`soft_only_message`). When the number of annotators is known and every ``n * p`` is a
whole number, the reader builds ordinary votes instead (:mod:`annokit.io.counts`).
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np
import pandas as pd

from annokit.core.labels import LabelSet
from annokit.core.soft_labels import (
    Majority,
    TiePolicy,
    distribution_majority,
    distributions,
    majority,
)
from annokit.core.votes import Votes
from annokit.errors import InputError

__all__ = ["SoftLabels", "human_majority", "human_rows", "is_soft_only", "soft_only_message"]


def soft_only_message(source: str, what: str) -> str:
    """The one line that refuses ``what`` on soft labels without votes."""
    return (f"{source} has soft labels only (no votes): {what} needs votes; give the "
            "per-annotator votes or counts")


def is_soft_only(votes: Any) -> bool:
    """Whether ``votes`` are soft labels without votes (:class:`SoftLabels`)."""
    return isinstance(votes, SoftLabels)


def human_rows(votes: Votes, rows: Any) -> tuple[np.ndarray, np.ndarray]:
    """The counts and human distributions of ``votes``' items at ``rows`` (a mask or positions).
    Soft labels without votes have no counts: their distributions stand in for them (so the
    counts of :class:`~annokit.metrics.records.AlignedRecords` then hold probabilities)."""
    if is_soft_only(votes):
        human = votes.distributions()[rows]
        return human, human
    counts = votes.counts()[rows]
    return counts, distributions(counts)


def human_majority(votes: Votes, counts: np.ndarray, *, ties: TiePolicy,
                   rng: np.random.Generator | int | None = None) -> Majority:
    """The human majority of ``counts`` (from :func:`human_rows`): of votes, or of soft labels."""
    if is_soft_only(votes):
        return distribution_majority(counts, ties=ties, rng=rng)
    return majority(counts, ties=ties, rng=rng)


class SoftLabels(Votes):
    """Label distributions of items without the votes behind them.

    Parameters
    ----------
    probs : array-like of shape (n_items, n_labels)
        Rows of probabilities (checked by the reader: finite, >= 0, summing to 1).
    labels : LabelSet
    item_ids : array-like of str, shape (n_items,)
    source : str
    n_annotators_per_item : array-like of int, optional
        The number of annotators of each item, when published (kept, not used for counts).

    Examples
    --------
    >>> soft = SoftLabels([[0.25, 0.75], [1.0, 0.0]], labels=LabelSet(["a", "b"]),
    ...                   item_ids=["q1", "q2"])
    >>> soft.n_items, soft.distributions().tolist()
    (2, [[0.25, 0.75], [1.0, 0.0]])
    >>> soft.counts()
    Traceback (most recent call last):
    annokit.errors.InputError: soft labels has soft labels only (no votes): vote counts needs ...
    """

    def __init__(self, probs: Any, *, labels: LabelSet, item_ids: Any,
                 source: str = "soft labels", n_annotators_per_item: Any = None) -> None:
        self.labels = labels
        self.source = source
        self.item_ids = item_ids
        self.probs = np.asarray(probs, dtype=np.float64)
        self.n_annotators_per_item = (None if n_annotators_per_item is None
                                      else np.asarray(n_annotators_per_item, dtype=np.int64))
        self.item_metadata = pd.DataFrame(index=pd.RangeIndex(len(self.probs)))
        self.gold = None
        self.annotator_ids = None
        self._unique_pairs = True

    def _refuse(self, what: str) -> NoReturn:
        raise InputError(soft_only_message(self.source, what))

    # what needs votes
    @property
    def item_index(self) -> np.ndarray:  # type: ignore[override]
        self._refuse("this step")

    @property
    def label_index(self) -> np.ndarray:  # type: ignore[override]
        self._refuse("this step")

    @property
    def annotator_index(self) -> None:  # type: ignore[override]
        return None

    @property
    def n_votes(self) -> int:
        self._refuse("a number of votes")

    def counts(self, *, as_frame: bool = False) -> Any:
        self._refuse("vote counts")

    def annotator_codes(self, what: str) -> tuple[np.ndarray, np.ndarray]:
        self._refuse(what)

    # what needs only distributions
    def distributions(self, *, smoothing: float = 0.0, as_frame: bool = False) -> Any:
        """The published distributions (``smoothing`` must be 0: there are no counts)."""
        if smoothing:
            self._refuse("smoothing")
        return self._frame(self.probs) if as_frame else self.probs

    def select_items(self, items: Any) -> SoftLabels:
        """The items at boolean mask or positions ``items``, in this order."""
        keep = np.asarray(items)
        out = SoftLabels(self.probs[keep], labels=self.labels, item_ids=self.item_ids[keep],
                         source=self.source,
                         n_annotators_per_item=None if self.n_annotators_per_item is None
                         else self.n_annotators_per_item[keep])
        out.read_info, out.input_kind, out.row_ids = self.read_info, self.input_kind, self.row_ids
        return out

    def __repr__(self) -> str:
        return (f"SoftLabels(n_items={self.n_items}, labels={list(self.labels.names)!r}, "
                f"scale={self.labels.scale!r})")
