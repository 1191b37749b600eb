"""metrics.model_join: a model's probabilities joined to the votes as ``evaluate`` joins them
(:func:`annokit.metrics.records.align`)."""

from __future__ import annotations

import numpy as np
import pytest

from annokit.core.votes import Votes
from annokit.errors import AlignmentError
from annokit.io.predictions import Predictions
from annokit.metrics.model_join import item_probabilities


def _votes() -> Votes:
    return Votes.from_counts([[2, 1], [0, 3], [1, 1]], labels=["a", "b"], item_ids=["x", "y", "z"])


def test_rows_follow_the_votes_and_columns_their_labels():
    preds = Predictions.from_arrays(["z", "x", "y", "w"],
                                    probs=[[0.5, 0.5], [0.1, 0.9], [0.8, 0.2], [1, 0]])
    join = item_probabilities(_votes(), preds, pred_labels=["b", "a"])
    np.testing.assert_allclose(join.probs, [[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]])
    assert join.summary() == {"n_items": 3, "n_dropped_items": 0, "n_unmatched_predictions": 1}


def test_missing_items_fail_or_are_dropped_and_counted():
    preds = Predictions.from_arrays(["y", "x"], probs=[[0.3, 0.7], [0.6, 0.4]],
                                    label_names=["a", "b"])
    with pytest.raises(AlignmentError, match="1 of 3 vote items have no prediction"):
        item_probabilities(_votes(), preds)
    with pytest.warns(UserWarning, match="they are dropped and 2 items are kept"):
        join = item_probabilities(_votes(), preds, on_missing="drop")
    assert join.votes.item_ids.tolist() == ["x", "y"] and join.n_dropped_items == 1
    np.testing.assert_allclose(join.probs, [[0.6, 0.4], [0.3, 0.7]])
    np.testing.assert_array_equal(join.votes.counts(), [[2, 1], [0, 3]])
