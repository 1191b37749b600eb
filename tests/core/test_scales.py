"""Label scales (annokit/core/scales.py) and the scale of a LabelSet (annokit/core/labels.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit.core.labels import LabelSet
from annokit.core.scales import (
    SCALES,
    check_scale,
    difference,
    numeric_names,
    ordered_names,
    ordinal_positions,
    scale_values,
)
from annokit.core.votes import Votes
from annokit.errors import InvalidValueError


def test_scales_are_stevens_four_levels():
    assert SCALES == ("nominal", "ordinal", "interval", "ratio")
    for s in SCALES:
        assert check_scale(s) == s
    with pytest.raises(InvalidValueError, match=r"scale must be one of \['nominal', 'ordinal', "
                                                r"'interval', 'ratio'\]; got 'likert'"):
        check_scale("likert")
    with pytest.raises(InvalidValueError, match="level must be one of"):
        check_scale(3, name="level")


def test_numeric_names_and_order():
    assert numeric_names(["-5", " 2 ", "1e1"]).tolist() == [-5.0, 2.0, 10.0]
    assert numeric_names(["1", "nan"]) is None
    assert numeric_names(["1", "inf"]) is None
    assert numeric_names(["a"]) is None
    assert ordered_names(["5", "-5", "0", "-1", "10", "2.5"], "ordinal") == \
        ["-5", "-1", "0", "2.5", "5", "10"]
    assert ordered_names(["b", "a"], "nominal") == ["b", "a"]
    assert ordered_names(["3", "1"], "interval") == ["1", "3"]
    with pytest.raises(InvalidValueError, match=r"order of ordinal labels \['low', 'high'\] cannot "
                                                r"be inferred from non-numeric names; declare it"):
        ordered_names(["low", "high"], "ordinal")
    with pytest.raises(InvalidValueError, match="'x' is not a finite number"):
        ordered_names(["1", "x"], "ratio")


def test_scale_values_checks_numbers():
    assert scale_values(["a", "b"], "nominal") is None
    assert scale_values(["1", "2"], "ordinal").tolist() == [1.0, 2.0]
    with pytest.raises(InvalidValueError, match="on the interval scale needs numeric label names; "
                                                "'high' is not a finite number"):
        scale_values(["1", "high"], "interval")
    with pytest.raises(InvalidValueError, match=r"values must be >= 0; got '-1' \(use the interval"):
        scale_values(["-1", "2"], "ratio")


@pytest.mark.parametrize("level, a, b, expected", [
    pytest.param("nominal", "x", "y", 1.0, id="krippendorff2011_nominal_differ"),
    pytest.param("nominal", 2, 2, 0.0, id="krippendorff2011_nominal_same"),
    pytest.param("interval", 1.0, 4.0, 9.0, id="krippendorff2011_interval"),
    pytest.param("ratio", 1.0, 3.0, 0.25, id="krippendorff2011_ratio"),
    pytest.param("ratio", 0.0, 0.0, 0.0, id="ratio_both_zero"),
    pytest.param("ratio", 0.0, 5.0, 1.0, id="ratio_against_zero"),
])
def test_difference_by_hand(level, a, b, expected):
    assert difference(level, a, b).item() == pytest.approx(expected)


def _ordinal_by_definition(totals, c, k):
    """Krippendorff (2011), ordinal metric: (sum_{g=c}^{k} n_g - (n_c + n_k)/2)^2."""
    lo, hi = min(c, k), max(c, k)
    return (sum(totals[lo:hi + 1]) - (totals[lo] + totals[hi]) / 2) ** 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=1, max_size=12), st.data())
def test_ordinal_difference_is_the_marginal_frequency_metric(totals, data):
    c = data.draw(st.integers(0, len(totals) - 1))
    k = data.draw(st.integers(0, len(totals) - 1))
    assert difference("ordinal", c, k, totals=totals).item() == \
        pytest.approx(_ordinal_by_definition(totals, c, k), abs=1e-9)
    r = ordinal_positions(np.asarray(totals, float))
    assert np.all(np.diff(r) >= 0)


def test_ordinal_difference_needs_totals():
    with pytest.raises(InvalidValueError, match="needs the category totals"):
        difference("ordinal", 0, 1)


def test_label_set_scale_default_roundtrip_and_equality():
    nominal = LabelSet(["1", "2", "3"])
    ordinal = LabelSet(["1", "2", "3"], scale="ordinal")
    assert nominal.scale == "nominal" and ordinal.scale == "ordinal"
    assert nominal != ordinal and hash(nominal) != hash(ordinal)
    assert ordinal.values.tolist() == [1.0, 2.0, 3.0]
    assert LabelSet(["a", "b"]).values is None
    assert repr(ordinal) == "LabelSet(['1', '2', '3'], scale='ordinal')"
    assert repr(nominal) == "LabelSet(['1', '2', '3'])"
    assert ordinal.to_dict() == {"names": ["1", "2", "3"], "aliases": {}, "scale": "ordinal"}
    assert LabelSet.from_dict(ordinal.to_dict()) == ordinal
    assert LabelSet.from_dict({"names": ["a"], "aliases": {}}).scale == "nominal"  # older dicts
    # declared order is the order, even for numbers
    assert LabelSet(["3", "1", "2"], scale="ordinal").names == ("3", "1", "2")
    with pytest.raises(InvalidValueError, match="scale must be one of"):
        LabelSet(["a"], scale="binary")
    with pytest.raises(InvalidValueError, match="'low' is not a finite number"):
        LabelSet(["low", "high"], scale="interval")


def test_votes_keep_the_scale_through_long_frames():
    labels = LabelSet(["-1", "0", "1"], scale="ordinal")
    df = pd.DataFrame({"item": ["a", "a", "b"], "annotator": ["x", "y", "x"],
                       "label": ["1", "-1", "0"]})
    votes = Votes.from_long(df, labels=labels)
    back = Votes.from_long(votes.to_long())
    assert back.labels == labels and back.labels.scale == "ordinal"
    assert back == votes
