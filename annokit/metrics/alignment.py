"""The alignment checks of predictions against votes, shared by both engines.

:func:`annokit.metrics.records.align` (in memory) and :mod:`annokit.scale.evaluate`
(Dask, from statistics merged across partitions) raise and warn through these:
the class order of the prediction columns (:func:`label_permutation`, and the
best-fitting order when it is not known or looks swapped), items without a
prediction, and predictions matching no item.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from annokit.core.checks import first_offenders
from annokit.core.votes import LabelSet
from annokit.errors import AlignmentError, DegenerateInputWarning, VoteSchemaError

__all__ = ["best_order_from_confusion", "chance_accuracy", "label_confusion",
           "label_permutation", "no_match_error", "report_missing", "unknown_order_message",
           "warn_below_chance"]


def _resolve_pred_labels(labels: LabelSet, pred_labels: Sequence[Any], n_columns: int) -> np.ndarray:
    """Permutation ``p`` with ``file_matrix[:, p]`` in the votes' label order."""
    given = list(pred_labels)
    shown = labels._known()
    if len(given) != n_columns:
        raise AlignmentError(f"pred_labels names {len(given)} classes {given} but the predictions "
                              f"have {n_columns} columns")
    idx, unknown = [], []
    for name in given:
        try:
            idx.append(labels.index_of(name))
        except VoteSchemaError:
            unknown.append(name)
    missing = [labels.names[j] for j in range(len(labels)) if j not in idx]
    repeated = sorted({labels.names[j] for j in idx if idx.count(j) > 1})
    if unknown or missing or repeated or len(given) != len(labels):
        parts = []
        if unknown:
            parts.append(f"unknown {unknown}")
        if repeated:
            parts.append(f"named twice {repeated}")
        if missing:
            parts.append(f"missing {missing}")
        raise AlignmentError(f"prediction labels {given} do not match the votes' labels "
                              f"{list(labels.names)} (names or aliases {shown}): "
                              + "; ".join(parts) + _mismatch_hint(given, unknown, missing))
    return np.argsort(np.asarray(idx))


def _mismatch_hint(given: list[Any], unknown: list[Any], missing: list[Any]) -> str:
    """The option that settles a label mismatch: ``--labels`` when the predictions name every
    vote label and more (classes no vote used), else ``--pred-labels``."""
    if unknown and not missing:
        return (f"; if no vote used {unknown[0]!r}, declare the whole label set with --labels "
                f"{','.join(map(str, given))} (Python: read_votes(..., labels=))")
    return ("; name each prediction column's class, in file order, with --pred-labels "
            "(Python: pred_labels=)")


def label_confusion(probs: np.ndarray, majority_labels: np.ndarray, n_labels: int) -> np.ndarray:
    """``C[c, j]``: items whose arg-max prediction column is ``c`` and human majority ``j``."""
    confusion = np.zeros((probs.shape[1], n_labels), dtype=np.int64)
    if majority_labels.size:
        np.add.at(confusion, (probs.argmax(axis=1), majority_labels), 1)
    return confusion


def best_order_from_confusion(confusion: np.ndarray, labels: Sequence[str]
                              ) -> tuple[list[str], float, int]:
    """:func:`best_label_order` from the column-by-majority counts (:func:`label_confusion`).

    Both engines use it (the Dask engine merges the counts across partitions).
    """
    from scipy.optimize import linear_sum_assignment

    n = int(confusion.sum())
    rows, cols = linear_sum_assignment(-confusion)
    order = [str(labels[j]) for j in cols[np.argsort(rows)]]
    acc = float(confusion[rows, cols].sum() / n) if n else float("nan")
    return order, acc, n


def _order_text(order: Sequence[str], labels: LabelSet) -> str:
    """A label order as the user would type it: the shortest alias of each label."""
    known = labels._known()
    short = {}
    for name in labels.names:
        aliases = [a for a in known if a != name and labels.index_of(a) == labels.index_of(name)]
        short[name] = min([name, *aliases], key=len)
    return ",".join(short.get(n, n) for n in order)


def unknown_order_message(labels: LabelSet, n_columns: int, confusion: np.ndarray | None) -> str:
    """The error when predictions do not say their class order, with the best-fitting order.

    ``confusion``: :func:`label_confusion` of the matched items without a tied majority
    (None or empty: no order is suggested).
    """
    msg = (f"the class order of the {n_columns} prediction columns is not known: give pred_labels "
           f"(CLI: --pred-labels), the class of each column in the file's column order, by label "
           f"name or alias ({', '.join(labels._known())})")
    if n_columns == len(labels) and confusion is not None and confusion.sum():
        order, acc, n = best_order_from_confusion(confusion, labels.names)
        msg += (f"; the order that agrees best with the human majority is "
                f"{_order_text(order, labels)} (accuracy {acc:.3f} on {n} items "
                "without a tied majority)")
    return msg


def label_permutation(labels: LabelSet, pred_labels: Sequence[Any] | str | None, n_columns: int,
                      label_names: Sequence[str] | None) -> np.ndarray | None:
    """Permutation ``p`` with ``file_matrix[:, p]`` in the votes' label order (both engines).

    ``pred_labels``: the class of each column (a list, or a comma-separated string);
    None takes the predictions' own ``label_names``; None when neither says the order. Given
    ``pred_labels`` name the columns when the file's names are not the votes' labels (columns
    ``prob_neg``, ``prob_pos`` for labels ``Negative``, ``Positive``).
    Raises :class:`AlignmentError` when they name other labels or contradict each other.
    """
    if pred_labels is None:
        if label_names is None:
            return None
        pred_labels = label_names
    if isinstance(pred_labels, str):
        pred_labels = [s.strip() for s in pred_labels.split(",")]
    perm = _resolve_pred_labels(labels, pred_labels, n_columns)
    if label_names is not None and list(pred_labels) != list(label_names):
        try:
            named = _resolve_pred_labels(labels, label_names, n_columns)
        except AlignmentError:  # the file's names are not the votes' (prob_neg): pred_labels say
            return perm
        if not np.array_equal(perm, named):
            raise AlignmentError(
                f"pred_labels {list(pred_labels)} contradict the class names the predictions "
                f"carry {list(label_names)} (e.g. prob_<label> columns); give the "
                "file's own order or leave pred_labels (CLI: --pred-labels) out")
    return perm


def no_match_error(n_items: int, vote_ids: Any, n_predictions: int, prediction_ids: Any
                   ) -> AlignmentError:
    """The error when no vote item has a prediction (ids: the first ones, or all of them)."""
    return AlignmentError(
        f"none of the {n_items} vote items has a prediction (vote item ids e.g. "
        f"{first_offenders(list(vote_ids[:3]), 3, total=n_items)}; prediction ids e.g. "
        f"{first_offenders(list(prediction_ids[:3]), 3, total=n_predictions)}); check the id "
        f"field (CLI: --id-field){_numeric_ids_hint(list(vote_ids[:3]), list(prediction_ids[:3]))}")


def _numeric_ids_hint(vote_ids: list[Any], prediction_ids: list[Any]) -> str:
    """Why numeric ids may not match: one file writes them zero-padded (``0001``) or as
    decimals (``1.0``, a spreadsheet's or pandas' float column) and the other does not."""

    def style(ids: list[Any]) -> set[str] | None:
        shown = [str(i) for i in ids]
        if not shown or not all(re.fullmatch(r"-?\d+(\.\d+)?", i) for i in shown):
            return None
        return {"padded" if re.fullmatch(r"-?0\d+", i) else "decimal" if "." in i else "plain"
                for i in shown}

    votes, preds = style(vote_ids), style(prediction_ids)
    if votes is None or preds is None or votes == preds:
        return ""
    return ("; the ids are numbers written two ways (0001 or 1.0 against 1): they are matched "
            "as text, so write them alike in both files (spreadsheets drop leading zeros and may "
            "write 1 as 1.0)")


def report_missing(n_missing: int, n_items: int, examples: Any, n_kept: int, on_missing: str, *,
                   stacklevel: int = 2) -> None:
    """Raise (``on_missing="error"``) or warn about vote items without a prediction.

    ``examples``: the ids of those items (or the first of them).
    """
    if not n_missing:
        return
    msg = (f"{n_missing} of {n_items} vote items have no prediction, e.g. "
           f"{first_offenders(list(examples[:5]), total=n_missing)}")
    if on_missing == "error":
        raise AlignmentError(msg + "; pass --on-missing drop to evaluate only the items with "
                              "predictions (Python: on_missing='drop')")
    warnings.warn(msg + f"; they are dropped and {n_kept} items are kept",
                  DegenerateInputWarning, stacklevel=stacklevel + 1)


def warn_below_chance(confusion: np.ndarray, perm: np.ndarray, labels: LabelSet, *,
                      stacklevel: int = 2) -> None:
    """Warn when the given class order makes the model worse than chance against the majority.

    ``confusion``: :func:`label_confusion` of the matched items without a tied majority;
    ``perm``: the given order (:func:`label_permutation`). Only when another order does
    clearly better (its accuracy at least three binomial standard errors above chance,
    ``1 / n_labels``): a model that is merely weak under every order is not a swapped order.
    """
    k = len(labels)
    n = int(confusion.sum())
    if n < 2 * k:  # too few items to tell a swapped order from a weak model
        return
    # column c of the file is label given_idx[c] in the votes' order
    given_idx = np.argsort(perm)
    chance = chance_accuracy(k)
    acc = float(confusion[np.arange(confusion.shape[0]), given_idx].sum() / n)
    if acc >= chance:
        return
    order, best, n = best_order_from_confusion(confusion, labels.names)
    if best < chance + 3 * np.sqrt(chance * (1 - chance) / n):
        return
    given = _order_text([labels.names[j] for j in given_idx], labels)
    warnings.warn(f"under the label order {given} the model's accuracy against the human majority "
                  f"is {acc:.3f}, below chance ({chance:.3f}) on {n} items without a tied "
                  f"majority; the order {_order_text(order, labels)} would score "
                  f"{best:.3f}: check pred_labels (CLI: --pred-labels)",
                  DegenerateInputWarning, stacklevel=stacklevel + 1)


def chance_accuracy(n_labels: int) -> float:
    """Accuracy of the chance baseline against the human majority: ``1 / n_labels``.

    The chance predictor is the uniform distribution; its argmax is a tie of every
    label, which a random pick breaks uniformly, so it hits any majority label with
    probability ``1 / n_labels`` (the "first label on ties" rule of the accuracy
    metric would instead make it the share of items whose majority is the first
    label). The evaluation's chance row and the below-chance warning of
    :func:`align` both use this value.

    Examples
    --------
    >>> chance_accuracy(3)
    0.3333333333333333
    """
    return 1.0 / int(n_labels)
