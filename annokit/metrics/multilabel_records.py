"""Aligned multi-label records: per-label model probabilities next to per-label human soft labels.

In multi-label data an annotator ticks any subset of the labels
(:mod:`annokit.core.multilabel`), so each label is a yes/no question per item:
the human soft label of label ``l`` is the fraction of the item's annotators who
ticked it, its majority is "ticked by more than half" (ties explicit), and the
model gives an independent probability per label (rows need not sum to 1;
logits go through the logistic function, not softmax).

:func:`align_multilabel` joins such predictions to the votes by item id and label
name exactly as :func:`annokit.metrics.records.align` does for single-label data
(:func:`~annokit.metrics.records.join_predictions`); :func:`annokit.metrics.engine.evaluate`
takes the result and evaluates the registry's multi-label metrics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from annokit.core.labels import LabelSet
from annokit.core.multilabel import (
    DEFAULT_MULTILABEL_TIES,
    MultilabelTies,
    multilabel_majority,
    multilabel_soft_labels,
    n_responses,
)
from annokit.core.soft_labels import softmax
from annokit.core.votes import Votes
from annokit.errors import DataFormatError
from annokit.io.predictions import Predictions, read_predictions
from annokit.metrics.records import ItemRows, join_predictions

__all__ = ["MultilabelRecords", "align_multilabel", "read_multilabel_predictions"]


@dataclass(frozen=True, eq=False)
class MultilabelRecords(ItemRows):
    """Per-item, per-label model probabilities next to the annotators' ticks.

    Attributes
    ----------
    item_ids : ndarray of str, shape (n_items,)
        In the votes' item order.
    labels : LabelSet
        The column order of every matrix below.
    probs : ndarray of shape (n_items, n_labels)
        Independent per-label model probabilities in [0, 1].
    soft : ndarray of shape (n_items, n_labels)
        Fraction of the item's annotators who ticked each label.
    hard : ndarray of float, shape (n_items, n_labels)
        1 where the label is in the item's majority set, else 0.
    is_tied : ndarray of bool, shape (n_items, n_labels)
        Labels ticked by exactly half of the item's annotators.
    tie_policy : str
        How ties entered ``hard`` (``exclude``, ``include``).
    n_responses : ndarray of int, shape (n_items,)
        Annotators who answered each item.
    n_unmatched_predictions, n_dropped_items, dropped_item_ids
        As in :class:`~annokit.metrics.records.AlignedRecords`.
    """

    item_ids: np.ndarray
    labels: LabelSet
    probs: np.ndarray
    soft: np.ndarray
    hard: np.ndarray
    is_tied: np.ndarray
    tie_policy: str
    n_responses: np.ndarray
    n_unmatched_predictions: int = 0
    n_dropped_items: int = 0
    dropped_item_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))
    temperature: None = None  # no temperature scaling of independent per-label probabilities

    def __post_init__(self) -> None:
        self._check_rows(soft=self.soft, hard=self.hard, is_tied=self.is_tied)

    @property
    def n_ties(self) -> int:
        """Tied (item, label) cells."""
        return int(self.is_tied.sum())

    def __repr__(self) -> str:
        return (f"MultilabelRecords(n_items={self.n_items}, labels={list(self.labels.names)}, "
                f"n_ties={self.n_ties}, n_unmatched_predictions={self.n_unmatched_predictions}, "
                f"n_dropped_items={self.n_dropped_items})")


def read_multilabel_predictions(paths: str | Path | Sequence[str | Path], *,
                                id_field: str | None = None) -> Predictions:
    """Per-label probabilities (or logits) from the files :func:`read_predictions` reads.

    Rows are not required to sum to 1; every probability must lie in [0, 1]. Logits
    (without probabilities) become ``1 / (1 + exp(-z))`` per label.

    Raises
    ------
    DataFormatError
        As :func:`~annokit.io.predictions.read_predictions` (unreadable file, missing id,
        a non-finite or negative value, a repeated id), or a probability above 1 (naming
        the file, line and item id).
    """
    preds = read_predictions(paths, id_field=id_field, atol=np.inf)
    if preds.logits is not None and np.array_equal(preds.probs, softmax(preds.logits)):
        probs = 1.0 / (1.0 + np.exp(-preds.logits))  # given as logits: per-label logistic
        preds = Predictions(item_ids=preds.item_ids, probs=probs, logits=preds.logits,
                            label_names=preds.label_names, sources=preds.sources,
                            source_index=preds.source_index, locations=preds.locations)
    above = (preds.probs > 1).any(axis=1)
    if above.any():
        i = int(np.argmax(above))
        raise DataFormatError(
            f"{preds.where(i)} (item {preds.item_ids[i]!r}): a per-label probability above 1: "
            f"{preds.probs[i].tolist()}")
    return preds


def align_multilabel(votes: Votes, predictions: Predictions | str | Path | Sequence[str | Path],
                     *, pred_labels: Sequence[Any] | None = None, on_missing: str = "error",
                     ties: MultilabelTies = DEFAULT_MULTILABEL_TIES,
                     id_field: str | None = None) -> MultilabelRecords:
    """Join per-label predictions to multi-label votes by item id and label name.

    Parameters
    ----------
    votes : Votes
        Multi-label votes: one vote per ticked label, annotator ids required
        (:func:`annokit.core.multilabel.check_multilabel`).
    predictions : Predictions or path(s)
        Paths are read with :func:`read_multilabel_predictions`.
    pred_labels, on_missing, id_field
        As in :func:`annokit.metrics.records.align`.
    ties : {"exclude", "include", "error"}, default "exclude"
        A label ticked by exactly half of the annotators (:func:`multilabel_majority`).

    Returns
    -------
    MultilabelRecords

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": ["q", "q", "q", "r"], "annotator": ["a", "a", "b", "a"],
    ...                    "label": ["x", "y", "y", "x"]})
    >>> votes = Votes.from_long(df, duplicates="keep")
    >>> preds = Predictions.from_arrays(["q", "r"], probs=[[0.4, 0.9], [0.8, 0.3]],
    ...                                 label_names=["x", "y"], atol=np.inf)
    >>> rec = align_multilabel(votes, preds)
    >>> rec.soft.tolist(), rec.hard.tolist(), rec.n_ties
    ([[0.5, 1.0], [1.0, 0.0]], [[0.0, 1.0], [1.0, 0.0]], 1)
    """
    if not isinstance(predictions, Predictions):
        predictions = read_multilabel_predictions(predictions, id_field=id_field)
    soft = multilabel_soft_labels(votes)  # checks the votes first
    maj = multilabel_majority(votes, ties=ties)
    predictions, join = join_predictions(votes, predictions, pred_labels=pred_labels,
                                         on_missing=on_missing, id_field=id_field)
    has = join.has
    return MultilabelRecords(
        item_ids=np.asarray(votes.item_ids[has], dtype=object), labels=votes.labels,
        probs=predictions.probs[join.rows][:, join.perm], soft=soft[has],
        hard=maj.labels[has].astype(np.float64), is_tied=maj.is_tied[has],
        tie_policy=maj.policy, n_responses=n_responses(votes)[has],
        n_unmatched_predictions=int(predictions.n_rows - join.rows.size),
        n_dropped_items=join.n_missing, dropped_item_ids=join.dropped)
