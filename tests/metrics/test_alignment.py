"""Which class each prediction column holds (annokit.metrics.alignment.label_permutation):
the given pred_labels, the file's own names, and when they disagree."""

from __future__ import annotations

import numpy as np
import pytest

from annokit.core.labels import LabelSet
from annokit.errors import AlignmentError
from annokit.metrics.alignment import label_permutation, no_match_error

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


def test_labels_no_vote_used_point_to_the_label_set():
    """Predictions with a class no vote carries (every vote said 'yes'): the fix is the label
    set (--labels), not the column names."""
    with pytest.raises(AlignmentError, match=r"unknown \['no'\]; if no vote used 'no', declare "
                                             r"the whole label set with --labels no,yes"):
        label_permutation(LabelSet(["yes"]), ["no", "yes"], 2, None)


@pytest.mark.parametrize(("votes", "preds", "hint"), [
    (["0001", "0002"], ["1", "2"], True),
    (["1", "2"], ["1.0", "2.0"], True),
    (["1", "2"], ["3", "4"], False),     # numbers written alike: nothing to say
    (["a1", "a2"], ["1", "2"], False),
])
def test_no_match_names_numbers_written_two_ways(votes, preds, hint):
    message = str(no_match_error(2, np.array(votes), 2, np.array(preds)))
    assert message.startswith("none of the 2 vote items has a prediction")
    assert ("the ids are numbers written two ways (0001 or 1.0 against 1)" in message) == hint
