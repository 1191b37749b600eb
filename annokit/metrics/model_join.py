"""A model's probabilities joined to the votes' items, for the methods that use votes and a
model together (CROWDLAB in ``annokit aggregate`` and ``annokit annotators``).

The prediction files are read and joined exactly as ``annokit evaluate`` reads and joins them
(:func:`annokit.metrics.workflow.read_model_predictions`, then
:func:`annokit.metrics.records.align`): by item id and label name, ``--pred-labels`` for files
that do not name their classes, ``--on-missing`` for voted items without a prediction. It
lives in ``metrics`` because the join does; the estimators in ``quality`` take the aligned
matrix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from annokit.core.votes import Votes

__all__ = ["ModelJoin", "item_probabilities"]


@dataclass(frozen=True)
class ModelJoin:
    """Votes and the model's probabilities, row for row.

    Attributes
    ----------
    votes : Votes
        The votes of the items with a prediction (all of them unless ``on_missing="drop"``).
    probs : ndarray of shape (votes.n_items, votes.n_labels)
        Row ``i`` is ``votes.item_ids[i]``; columns in the votes' label order.
    n_dropped_items : int
        Voted items without a prediction, left out (``on_missing="drop"``, with a warning).
    n_unmatched_predictions : int
        Prediction rows of items nobody voted on (not used).
    """

    votes: Votes
    probs: np.ndarray
    n_dropped_items: int
    n_unmatched_predictions: int

    def summary(self) -> dict[str, int]:
        """The ``predictions`` object of the ``--json`` outputs."""
        return {"n_items": int(self.votes.n_items), "n_dropped_items": self.n_dropped_items,
                "n_unmatched_predictions": self.n_unmatched_predictions}


def item_probabilities(votes: Votes, predictions: Any, *, pred_labels: Any = None,
                       id_field: str | None = None, model: str | None = None,
                       renormalize: bool = False, on_missing: str = "error") -> ModelJoin:
    """Read one model's prediction files and join them to ``votes`` as ``evaluate`` does.

    Parameters
    ----------
    votes : Votes
    predictions : path, sequence of paths, or Predictions
    pred_labels, id_field, model, renormalize, on_missing
        As ``annokit evaluate``'s options of the same names
        (:class:`~annokit.metrics.workflow.EvaluateOptions`).

    Returns
    -------
    ModelJoin

    Raises
    ------
    AlignmentError
        As :func:`~annokit.metrics.records.align`: no common item, labels that do not match,
        voted items without a prediction under ``on_missing="error"``.

    Examples
    --------
    >>> from annokit.io.predictions import Predictions
    >>> votes = Votes.from_counts([[2, 1], [0, 3]], labels=["a", "b"], item_ids=["x", "y"])
    >>> preds = Predictions.from_arrays(["y", "x"], probs=[[0.3, 0.7], [0.9, 0.1]],
    ...                                 label_names=["a", "b"])
    >>> item_probabilities(votes, preds).probs.tolist()
    [[0.9, 0.1], [0.3, 0.7]]
    """
    from annokit.metrics.records import align
    from annokit.metrics.workflow import EvaluateOptions, read_model_predictions

    options = EvaluateOptions(pred_labels=pred_labels, id_field=id_field, model=model,
                              renormalize=renormalize, on_missing=on_missing)
    preds = read_model_predictions(predictions, options,
                                   row_ids=bool(getattr(votes, "row_ids", False)))
    records = align(votes, preds, pred_labels=options.pred_labels, on_missing=on_missing)
    kept = votes
    if records.n_dropped_items:
        kept = votes.select_items(votes.item_positions(list(records.item_ids)))
    return ModelJoin(votes=kept, probs=np.asarray(records.probs, dtype=np.float64),
                     n_dropped_items=int(records.n_dropped_items),
                     n_unmatched_predictions=int(records.n_unmatched_predictions))
