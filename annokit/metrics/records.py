"""Aligned records: model predictions joined to human soft labels.

:func:`align` joins a model's :class:`~annokit.io.predictions.Predictions` to
:class:`~annokit.core.votes.Votes` by **item id** and by **label name**. The class
order of the prediction file is always explicit (``pred_labels``, by name or
alias, e.g. ``["e", "c", "n"]`` for the Baan et al. 2022 files), and the
aligned probabilities are permuted into the votes' label order, so every
column of ``probs``, ``logits``, ``counts`` and ``human`` means the same label.

Nothing is dropped silently: prediction rows for items that are not in the
votes are counted (``n_unmatched_predictions``); vote items without a
prediction are an error unless ``on_missing="drop"``, which warns and records
``n_dropped_items`` and ``dropped_item_ids``.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.checks import check_counts, check_option
from annokit.core.soft_labels import (
    DEFAULT_TIES,
    ENTROPY_BASE,
    ENTROPY_UNIT,
    Majority,
    TiePolicy,
    distributions,
    entropy,
    majority,
    softmax,
)
from annokit.core.soft_votes import human_majority, human_rows
from annokit.core.votes import LabelSet, Votes
from annokit.errors import (
    AlignmentError,
    DegenerateInputWarning,
    InvalidValueError,
    SchemaError,
)
from annokit.io.predictions import Predictions, read_predictions
from annokit.metrics.alignment import (
    best_order_from_confusion,
    chance_accuracy,
    label_confusion,
    label_permutation,
    no_match_error,
    report_missing,
    unknown_order_message,
    warn_below_chance,
)

__all__ = [
    "AlignedRecords",
    "ItemRows",
    "Join",
    "Predictions",
    "agreement_bins",
    "align",
    "best_label_order",
    "chance_accuracy",
    "join_predictions",
    "read_predictions",
    "softmax",
]


class ItemRows:
    """What every kind of aligned records shares: ``probs`` with a row per item
    (``item_ids``) and a column per label (``labels``), and matrices of that shape."""

    item_ids: np.ndarray
    labels: LabelSet
    probs: np.ndarray

    def _check_rows(self, **matrices: np.ndarray | None) -> None:
        n, k = self.probs.shape
        for name, m in matrices.items():
            if m is not None and m.shape != (n, k):
                raise SchemaError(f"{name} shape {m.shape} differs from probs {(n, k)}")
        if len(self.item_ids) != n or len(self.labels) != k:
            raise SchemaError(f"{len(self.item_ids)} item ids and {len(self.labels)} labels "
                              f"for probs of shape {(n, k)}")

    @property
    def n_items(self) -> int:
        return int(self.probs.shape[0])

    @property
    def n_labels(self) -> int:
        return int(self.probs.shape[1])

    def __len__(self) -> int:
        return self.n_items


@dataclass(frozen=True, eq=False)
class AlignedRecords(ItemRows):
    """Per-item model probabilities next to human vote counts, in one label order.

    Attributes
    ----------
    item_ids : ndarray of str, shape (n_items,)
        In the votes' item order.
    labels : LabelSet
        The votes' labels; the column order of every matrix below.
    probs : ndarray of shape (n_items, n_labels)
        Model probabilities.
    counts : ndarray of int64, shape (n_items, n_labels)
        Human votes.
    human : ndarray of shape (n_items, n_labels)
        Human label distributions ``counts / counts.sum(axis=1)``.
    majority : Majority
        Human majority labels with ties flagged (policy as given to :func:`align`).
    logits : ndarray of shape (n_items, n_labels) or None
        Model logits when the predictions had them.
    n_unmatched_predictions : int
        Prediction rows whose item is not in the votes (ignored).
    n_dropped_items : int
        Vote items left out because they had no prediction (``on_missing="drop"``).
    dropped_item_ids : ndarray of str
        Their ids.
    temperature : float or None
        The temperature applied to ``probs`` (see
        :func:`annokit.metrics.temperature.apply_temperature`), None if none was.
    """

    item_ids: np.ndarray
    labels: LabelSet
    probs: np.ndarray
    counts: np.ndarray
    human: np.ndarray
    majority: Majority
    logits: np.ndarray | None = None
    n_unmatched_predictions: int = 0
    n_dropped_items: int = 0
    dropped_item_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))
    temperature: float | None = None

    def __post_init__(self) -> None:
        self._check_rows(counts=self.counts, human=self.human, logits=self.logits)

    def __repr__(self) -> str:
        t = "" if self.temperature is None else f", temperature={self.temperature:g}"
        return (f"AlignedRecords(n_items={self.n_items}, labels={list(self.labels.names)}, "
                f"n_unmatched_predictions={self.n_unmatched_predictions}, "
                f"n_dropped_items={self.n_dropped_items}{t})")

    @classmethod
    def from_arrays(cls, probs: Any, counts: Any, *, labels: LabelSet | Sequence[str] | None = None,
                    item_ids: Any = None, logits: Any = None, ties: TiePolicy = DEFAULT_TIES,
                    rng: np.random.Generator | int | None = None) -> AlignedRecords:
        """Records from a probability matrix and a count matrix already in one label order.

        Examples
        --------
        >>> r = AlignedRecords.from_arrays([[0.7, 0.3], [0.2, 0.8]], [[3, 1], [2, 2]],
        ...                                labels=["yes", "no"])
        >>> r.human.tolist(), r.majority.labels.tolist(), r.majority.n_ties
        ([[0.75, 0.25], [0.5, 0.5]], [0, 0], 1)
        """
        c = check_counts(counts)
        p = np.asarray(probs, dtype=np.float64)
        if p.shape != c.shape:
            raise SchemaError(f"probs shape {p.shape} differs from counts shape {c.shape}")
        if not np.isfinite(p).all():
            raise InvalidValueError("probs contain NaN or infinite values")
        labelset = LabelSet.coerce(labels if labels is not None
                                   else [str(j) for j in range(c.shape[1])])
        ids = (np.arange(c.shape[0]).astype(str).astype(object) if item_ids is None
               else np.asarray([str(i) for i in item_ids], dtype=object))
        z = None if logits is None else np.asarray(logits, dtype=np.float64)
        return cls(item_ids=ids, labels=labelset, probs=p, counts=c, human=distributions(c),
                   majority=majority(c, ties=ties, rng=rng), logits=z)

    def select(self, items: Any) -> AlignedRecords:
        """The records of a boolean mask or integer positions (counts of drops kept).

        Examples
        --------
        >>> r = AlignedRecords.from_arrays([[0.7, 0.3], [0.2, 0.8]], [[3, 1], [0, 2]])
        >>> r.select([1]).item_ids.tolist()
        ['1']
        """
        idx = np.asarray(items)
        if idx.dtype == bool:
            if idx.shape != (self.n_items,):
                raise SchemaError(f"mask has shape {idx.shape}; expected ({self.n_items},)")
            idx = np.flatnonzero(idx)
        idx = idx.astype(np.int64)
        m = self.majority
        return dataclasses.replace(
            self, item_ids=self.item_ids[idx], probs=self.probs[idx], counts=self.counts[idx],
            human=self.human[idx],
            majority=Majority(labels=m.labels[idx], is_tied=m.is_tied[idx], tied=m.tied[idx],
                              policy=m.policy),
            logits=None if self.logits is None else self.logits[idx])

    def with_probs(self, probs: np.ndarray, *, logits: np.ndarray | None = None,
                   temperature: float | None = None) -> AlignedRecords:
        """A copy with other model probabilities (same items, labels and votes)."""
        probs = np.asarray(probs, dtype=np.float64)
        if probs.shape != self.probs.shape:
            raise SchemaError(f"new probs have shape {probs.shape}; expected {self.probs.shape}")
        return dataclasses.replace(self, probs=probs, logits=logits, temperature=temperature)

    def to_frame(self) -> pd.DataFrame:
        """One row per item: id, model probabilities, human distribution, votes, majority."""
        cols: dict[str, Any] = {"item": self.item_ids}
        for j, name in enumerate(self.labels.names):
            cols[f"prob_{name}"] = self.probs[:, j]
        for j, name in enumerate(self.labels.names):
            cols[f"human_{name}"] = self.human[:, j]
        cols["n_votes"] = self.counts.sum(axis=1)
        cols["majority"] = np.asarray(self.labels.names, dtype=object)[self.majority.labels]
        cols["is_tied"] = self.majority.is_tied
        return pd.DataFrame(cols)


def best_label_order(probs: Any, majority_labels: Any, labels: Sequence[str]
                     ) -> tuple[list[str], float, int]:
    """The class of each prediction column that agrees best with the human majority.

    Parameters
    ----------
    probs : array-like of shape (n_items, n_columns)
        Predictions in the file's column order, rows matched to the items of
        ``majority_labels``.
    majority_labels : array-like of int, shape (n_items,)
        Human majority label of each item (index into ``labels``); tied items
        should be left out by the caller.
    labels : sequence of str
        The votes' label names (``n_columns`` of them).

    Returns
    -------
    order : list of str
        ``order[c]`` is the label whose assignment to column ``c`` maximises
        the accuracy of ``argmax`` against the majority.
    accuracy : float
        That accuracy (nan without items).
    n_items : int

    Notes
    -----
    With ``C[c, j]`` the number of items whose arg-max column is ``c`` and whose
    majority is ``j``, the best order is the assignment maximising
    ``sum_c C[c, order(c)]`` (a linear assignment problem, solved exactly by
    :func:`scipy.optimize.linear_sum_assignment`).

    Examples
    --------
    >>> best_label_order([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]], [0, 1, 0], ["a", "b"])
    (['b', 'a'], 1.0, 3)
    """
    p = np.asarray(probs, dtype=np.float64)
    m = np.asarray(majority_labels, dtype=np.int64)
    return best_order_from_confusion(label_confusion(p, m, len(labels)), labels)


def _untied(votes: Votes, has: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows (among the matched items) with a strict human majority, and that majority."""
    maj = human_majority(votes, human_rows(votes, has)[0], ties=DEFAULT_TIES)
    keep = ~maj.is_tied
    return keep, maj.labels[keep]


def align(votes: Votes, predictions: Predictions | str | Path | Sequence[str | Path] | pd.DataFrame, *,
          pred_labels: Sequence[Any] | None = None, on_missing: str = "error",
          ties: TiePolicy = DEFAULT_TIES, rng: np.random.Generator | int | None = None,
          id_field: str | None = None) -> AlignedRecords:
    """Join predictions to votes by item id and label name.

    Parameters
    ----------
    votes : Votes
        Human votes; their item order and label order are kept.
    predictions : Predictions, path(s) or DataFrame
        Paths and DataFrames (an item column and one column per label, detected as in a
        file) are read with :func:`~annokit.io.predictions.read_predictions`.
    pred_labels : sequence of str, optional
        The class of each prediction column, in the file's order, by label
        name or alias (``["e", "c", "n"]``). Required unless the predictions
        name their classes (per-class CSV columns). Must name each of the
        votes' labels exactly once.
    on_missing : {"error", "drop"}, default="error"
        What to do with vote items that have no prediction: raise (listing how
        many and the first ids), or keep the intersection, warn and record the
        dropped items.
    ties : {"report", "first", "first_seen", "random"}, default=DEFAULT_TIES ("first")
        Tie policy of the human majority (see :func:`annokit.core.soft_labels.majority`).
    rng : numpy Generator or int, optional
        Needed for ``ties="random"``.
    id_field : str, optional
        Passed to the reader when ``predictions`` are paths.

    Returns
    -------
    AlignedRecords

    Raises
    ------
    VoteSchemaError
        Label sets do not match, no vote item has a prediction, or (with
        ``on_missing="error"``) some vote items have none.

    Examples
    --------
    >>> from annokit.core.votes import CHAOSNLI_NLI_LABELS
    >>> votes = Votes.from_counts([[80, 20, 0], [10, 10, 80]], labels=CHAOSNLI_NLI_LABELS,
    ...                           item_ids=["p1", "p2"])
    >>> preds = Predictions.from_arrays(["p2", "p1", "p9"],
    ...                                 probs=[[0.1, 0.8, 0.1], [0.7, 0.1, 0.2], [1, 0, 0]])
    >>> rec = align(votes, preds, pred_labels=["e", "c", "n"])
    >>> rec.item_ids.tolist(), rec.probs.tolist(), rec.n_unmatched_predictions
    (['p1', 'p2'], [[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]], 1)
    """
    predictions, join = join_predictions(votes, predictions, pred_labels=pred_labels,
                                         on_missing=on_missing, id_field=id_field)
    has, rows, perm, pred_labels = join.has, join.rows, join.perm, join.pred_labels
    n_missing, dropped = join.n_missing, join.dropped
    counts, human = human_rows(votes, has)
    _warn_below_chance(votes, predictions.probs[rows], has, pred_labels, perm)
    probs = predictions.probs[rows][:, perm]
    logits = None if predictions.logits is None else predictions.logits[rows][:, perm]
    return AlignedRecords(
        item_ids=np.asarray(votes.item_ids[has], dtype=object), labels=votes.labels,
        probs=probs, counts=counts, human=human,
        majority=human_majority(votes, counts, ties=ties, rng=rng), logits=logits,
        n_unmatched_predictions=int(predictions.n_rows - rows.size),
        n_dropped_items=n_missing, dropped_item_ids=dropped)


@dataclass(frozen=True)
class Join:
    """How prediction rows meet vote items (:func:`join_predictions`)."""

    has: np.ndarray          # (n_vote_items,) bool: the item has a prediction
    rows: np.ndarray         # prediction row of each kept item, in the votes' order
    perm: np.ndarray         # file columns -> the votes' label order
    pred_labels: list[Any]   # the class of each file column
    n_missing: int
    dropped: np.ndarray      # ids of the vote items without a prediction


def join_predictions(votes: Votes,
                     predictions: Predictions | str | Path | Sequence[str | Path] | pd.DataFrame, *,
                     pred_labels: Sequence[Any] | None = None, on_missing: str = "error",
                     id_field: str | None = None) -> tuple[Predictions, Join]:
    """Match prediction rows to vote items by id and columns to labels by name (:func:`align`).

    Raises as :func:`align` does; warns about dropped items with ``on_missing="drop"``.
    """
    check_option("on_missing", on_missing, ("error", "drop"))
    if not isinstance(predictions, Predictions):
        predictions = read_predictions(predictions, id_field=id_field)
    pos = pd.Index(predictions.item_ids).get_indexer(pd.Index(votes.item_ids))
    has = pos >= 0
    perm = label_permutation(votes.labels, pred_labels, predictions.n_labels,
                             predictions.label_names)
    if perm is None:
        raise AlignmentError(_unknown_order_message(votes, predictions, pos, has))
    if isinstance(pred_labels, str):
        pred_labels = [s.strip() for s in pred_labels.split(",")]
    given = list(predictions.label_names or ()) if pred_labels is None else list(pred_labels)
    n_missing = int((~has).sum())
    if not has.any():
        raise no_match_error(votes.n_items, votes.item_ids, predictions.n_rows,
                             predictions.item_ids)
    dropped = np.asarray(votes.item_ids[~has], dtype=object)
    report_missing(n_missing, votes.n_items, dropped, int(has.sum()), on_missing, stacklevel=3)
    rows = pos[has]
    return predictions, Join(has=has, rows=rows, perm=perm, pred_labels=given,
                             n_missing=n_missing, dropped=dropped)


def _unknown_order_message(votes: Votes, predictions: Predictions, pos: np.ndarray,
                           has: np.ndarray) -> str:
    """The error when the predictions do not say their class order, with the best-fitting order."""
    confusion = None
    if predictions.n_labels == len(votes.labels) and has.any():
        keep, maj = _untied(votes, has)
        confusion = label_confusion(predictions.probs[pos[has]][keep], maj, len(votes.labels))
    return unknown_order_message(votes.labels, predictions.n_labels, confusion)


def _warn_below_chance(votes: Votes, file_probs: np.ndarray, has: np.ndarray,
                       pred_labels: Sequence[Any], perm: np.ndarray) -> None:
    """Warn when the given class order makes the model worse than chance against the majority.

    Only when another order does clearly better (its accuracy at least three binomial
    standard errors above chance, ``1 / n_labels``): a model that is merely weak under
    every order is not a swapped order.
    """
    keep, maj = _untied(votes, has)
    warn_below_chance(label_confusion(file_probs[keep], maj, len(votes.labels)), perm,
                      votes.labels, stacklevel=3)


def agreement_groups(edges: np.ndarray) -> list[dict[str, Any]]:
    """The description of each agreement bin (:func:`agreement_bins` edges), both engines."""
    return [{"group": f"{edges[b]:.2f}-{edges[b + 1]:.2f}", "entropy_low": float(edges[b]),
             "entropy_high": float(edges[b + 1])} for b in range(edges.size - 1)]


def agreement_entropy(probs: Any) -> np.ndarray:
    """The human entropy agreement bins are cut on: in nats (``ENTROPY_BASE``), 12 decimals.

    Items with the same counts in another label order have the same entropy, but the
    floating-point sums may differ in the last bit, and a quantile edge could then split
    them, differently in each base; rounded, they tie exactly and the equal-count bins do
    not depend on the base (ChaosNLI-SNLI: 295, 311, 300, 300, 308 items in bits and in nats).

    Examples
    --------
    >>> agreement_entropy([[0.2, 0.3, 0.5], [0.5, 0.2, 0.3]]).tolist()
    [1.029653014065, 1.029653014065]
    """
    return np.round(entropy(probs, base=ENTROPY_BASE), 12) + 0.0


def agreement_bins(human_entropy: Any, bins: int | Sequence[float] = 5, *,
                   counts: Any = None) -> tuple[np.ndarray, np.ndarray, str, list[str]]:
    """Group items by human-label entropy (the agreement bins of ``evaluate(by="agreement")``).

    Parameters
    ----------
    human_entropy : ndarray of shape (n_items,)
        Entropy of each item's human distribution (nats in the report and the engine,
        :data:`annokit.core.soft_labels.ENTROPY_BASE`).
    bins : int or sequence of float, default 5
        An int: cut points at the ``b / bins`` quantiles of the entropies (Nie et
        al. 2020: "entropy quantiles as the cut points ... bins with roughly
        equal numbers"). Repeated cut points (many tied entropies, e.g. unanimous
        items) are merged, with a :class:`~annokit.errors.DegenerateInputWarning`.
        A sequence: increasing edges that must cover every entropy.
    counts : array-like of int, shape (n_values,), optional
        ``human_entropy`` holds distinct values, sorted, and ``counts`` how many
        items have each (the Dask engine merges these per partition): the
        edges are those of the repeated values, bit for bit (numpy's linear
        quantile on the order statistics), and ``index`` is the bin of each value.

    Returns
    -------
    edges : ndarray of shape (n_bins + 1,)
    index : ndarray of int, shape (n_items,)
        Bin of each item: ``edges[b] <= H < edges[b + 1]``, the last bin closed.
    method : {"quantile", "edges"}
    notes : list of str
        What was merged, for the report.

    Raises
    ------
    SchemaError
        ``human_entropy`` is not a non-empty 1-D array.
    InvalidValueError
        ``bins`` < 1, or edges that are not finite, not increasing or leave items out.

    References
    ----------
    Nie, Zhou, Bansal (2020). What Can We Learn from Collective Human Opinions on
    Natural Language Inference Data? EMNLP, section 5.4. arXiv:2010.03532.

    Examples
    --------
    >>> edges, idx, method, _ = agreement_bins([0.0, 0.2, 0.5, 0.9], 2)
    >>> edges.tolist(), idx.tolist()
    ([0.0, 0.35, 0.9], [0, 0, 1, 1])
    """
    h = np.asarray(human_entropy, dtype=np.float64)
    if h.ndim != 1 or h.size == 0:
        raise SchemaError(f"human entropy must be a non-empty 1-D array; got shape {h.shape}")
    notes: list[str] = []
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        edges, method = _quantile_edges(h, bins, counts, notes), "quantile"
    else:
        edges, method = _given_edges(h, bins), "edges"
    index = np.clip(np.searchsorted(edges, h, side="right") - 1, 0, edges.size - 2)
    return edges, index, method, notes


def _quantile_edges(h: np.ndarray, bins: int, counts: Any, notes: list[str]) -> np.ndarray:
    """Cut points at the ``b / bins`` quantiles of ``h``, repeated ones merged (warned, and
    noted in ``notes``)."""
    if bins < 1:
        raise InvalidValueError(f"bins must be a positive integer or a list of edges; got {bins}")
    q = np.linspace(0.0, 1.0, int(bins) + 1)
    edges = np.quantile(h, q) if counts is None else _counted_quantile(h, counts, q)
    unique = np.unique(edges)
    msg = None
    if unique.size == 1:  # every item has the same entropy: one bin [H, H]
        unique = np.array([unique[0], unique[0]])
        if bins > 1:
            msg = (f"every item has the same human entropy ({h[0]:.4g} {ENTROPY_UNIT}): "
                   f"{int(bins)} bins requested, 1 formed")
    elif unique.size < edges.size:
        msg = (f"{edges.size - unique.size} repeated entropy quantile(s) merged: "
               f"{int(bins)} bins requested, {unique.size - 1} formed (many items share "
               "one entropy value)")
    if msg:
        warnings.warn(msg, DegenerateInputWarning, stacklevel=4)
        notes.append(msg)
    return unique


def _given_edges(h: np.ndarray, bins: Any) -> np.ndarray:
    """Edges given: at least two, finite, strictly increasing, covering every entropy."""
    given = list(bins) if np.iterable(bins) else [bins]
    edges = np.asarray(given, dtype=np.float64)
    if edges.ndim != 1 or edges.size < 2 or not np.all(np.isfinite(edges)):
        raise InvalidValueError(f"bin edges must be at least two finite numbers; got "
                                f"{given}")
    if np.any(np.diff(edges) <= 0):
        raise InvalidValueError(f"bin edges must be strictly increasing; got {edges.tolist()}")
    outside = (h < edges[0]) | (h > edges[-1])
    if outside.any():
        raise InvalidValueError(
            f"bin edges [{edges[0]}, {edges[-1]}] leave out {int(outside.sum())} item(s) "
            f"with human entropy {h[outside][:3].round(4).tolist()}...; widen the edges")
    return edges


def _counted_quantile(values: np.ndarray, counts: Any, q: np.ndarray) -> np.ndarray:
    """``np.quantile(np.repeat(values, counts), q)`` (method "linear") without repeating.

    ``values`` sorted and distinct; the order statistics at numpy's interpolation
    indices ``floor((n - 1) q)`` and the next one, combined by numpy's ``_lerp``
    formula (``b - (b - a)(1 - t)`` for ``t >= 0.5``), so the result is identical.
    """
    c = np.asarray(counts, dtype=np.int64)
    if c.shape != values.shape or (c < 1).any():
        raise SchemaError(f"counts must be one positive count per value; got shape {c.shape}")
    n = int(c.sum())
    virtual = (n - 1) * q
    prev = np.floor(virtual)
    nxt = prev + 1
    above = virtual >= n - 1
    prev[above] = -1
    nxt[above] = -1
    prev, nxt = prev.astype(np.intp), nxt.astype(np.intp)
    cum = np.cumsum(c)

    def at(rank: np.ndarray) -> np.ndarray:
        return values[np.searchsorted(cum, np.where(rank < 0, n - 1, rank), side="right")]

    a, b = at(prev), at(nxt)
    t = virtual - prev
    diff = b - a
    out = a + diff * t
    return np.where(t >= 0.5, b - diff * (1 - t), out)
