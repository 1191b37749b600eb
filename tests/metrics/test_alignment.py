"""Which class each prediction column holds (annokit.metrics.alignment.label_permutation):
the given pred_labels, the file's own names, and when they disagree."""

from __future__ import annotations

import numpy as np
import pytest

from annokit.core.labels import LabelSet
from annokit.errors import AlignmentError
from annokit.metrics.alignment import label_permutation

LABELS = LabelSet(["Negative", "Neutral", "Positive"])


def test_file_names_that_are_not_labels_yield_to_pred_labels():
    """Columns prob_neg, prob_neu, prob_pos (names the votes do not know): the given
    pred_labels say which class each holds."""
    perm = label_permutation(LABELS, "Positive,Negative,Neutral", 3, ["neg", "neu", "pos"])
    assert perm.tolist() == [1, 2, 0]  # file[:, perm] in the votes' order


def test_file_names_alone_that_are_not_labels_are_refused_naming_the_option():
    with pytest.raises(AlignmentError, match=r"unknown \['neg', 'neu', 'pos'\].*--pred-labels"):
        label_permutation(LABELS, None, 3, ["neg", "neu", "pos"])


def test_pred_labels_contradicting_the_file_names_are_refused():
    with pytest.raises(AlignmentError, match="contradict the class names"):
        label_permutation(LABELS, ["Positive", "Negative", "Neutral"], 3,
                          ["Negative", "Neutral", "Positive"])
    same = label_permutation(LABELS, ["negative", "neutral", "positive"], 3,
                             ["Negative", "Neutral", "Positive"])
    assert np.array_equal(same, [0, 1, 2])
