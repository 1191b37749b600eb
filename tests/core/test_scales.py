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
    not_a_number,
    number_name,
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
    with pytest.raises(InvalidValueError, match="'x' is not a number and labels on the ratio "):
        ordered_names(["1", "x"], "ratio")


def test_scale_values_checks_numbers():
    assert scale_values(["a", "b"], "nominal") is None
    assert scale_values(["1", "2"], "ordinal").tolist() == [1.0, 2.0]
    with pytest.raises(InvalidValueError, match="^label 'high' is not a number and labels on the "
                                                "interval scale are numbers; read the labels as "
                                                "categories with --scale nominal$"):
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
    with pytest.raises(InvalidValueError, match="'low' is not a number and labels on the"):
        LabelSet(["low", "high"], scale="interval")


def test_votes_keep_the_scale_through_long_frames():
    labels = LabelSet(["-1", "0", "1"], scale="ordinal")
    df = pd.DataFrame({"item": ["a", "a", "b"], "annotator": ["x", "y", "x"],
                       "label": ["1", "-1", "0"]})
    votes = Votes.from_long(df, labels=labels)
    back = Votes.from_long(votes.to_long())
    assert back.labels == labels and back.labels.scale == "ordinal"
    assert back == votes


# -- numbers as labels ------------------------------------------------

@pytest.mark.parametrize("raw, expected", [
    (1, "1"), (1.0, "1"), (" 1", "1"), ("+1", "1"), ("1.0", "1"), ("01", "1"), ("1e0", "1"),
    ("-0", "0"), ("2.50", "2.5"), (0.1, "0.1"), ("-50", "-50"), (np.int64(7), "7"),
    ("12345678901234567891", "12345678901234567891"), ("1e-9", "1e-9"),
])
def test_number_name_spells_each_number_once(raw, expected):
    assert number_name(raw) == expected


@pytest.mark.parametrize("raw", ["1,5", "1,000", "1_000", "high", "", "nan", "inf", float("nan"),
                                 True, None, "0x10"])
def test_number_name_refuses_what_is_not_plainly_a_number(raw):
    assert number_name(raw) is None


def test_not_a_number_names_the_value_the_scale_and_the_option():
    assert not_a_number("1,5", "ratio") == (
        "'1,5' is not a number (a decimal comma? write 1.5) and labels on the ratio scale are "
        "numbers; read the labels as categories with --scale nominal")
    assert not_a_number("NA", "interval") == (
        "'NA' is not a number (a missing value? mark it with --missing NA) and labels on the "
        "interval scale are numbers; read the labels as categories with --scale nominal")


def test_numeric_label_sets_write_each_number_once():
    labels = LabelSet(["1.0", "+2", "10"], scale="interval")
    assert labels.names == ("1", "2", "10") and labels.numeric
    assert labels.encode(["1", 1.0, " 2 ", "1e1"]).tolist() == [0, 0, 1, 2]
    assert LabelSet(["1", "2"], scale="ordinal").numeric
    assert not LabelSet(["low", "high"], scale="ordinal").numeric
    nominal = LabelSet(["1", "1.0"])  # nominal labels are text as written: two categories
    assert nominal.names == ("1", "1.0") and not nominal.numeric
    with pytest.raises(InvalidValueError, match=r"^labels '1' and '1.0' are the same number on the "
                                                r"ordinal scale; give each number once$"):
        LabelSet(["1", "1.0"], scale="ordinal")
    with pytest.raises(InvalidValueError, match=r"unknown label '3'; expected one of"):
        labels.index_of("3")


def test_to_scale_merges_spellings_and_orders_numbers():
    new, codes = LabelSet(["2", "1.0", "1", "10", " 2"]).to_scale("interval")
    assert new.names == ("1", "2", "10") and codes.tolist() == [1, 0, 0, 2, 1]
    declared, codes = LabelSet(["3", "1.0", "1"]).to_scale("ordinal", declared=True)
    assert declared.names == ("3", "1") and codes.tolist() == [0, 1, 1]
    words, codes = LabelSet(["low", "high"]).to_scale("ordinal", declared=True)
    assert words.names == ("low", "high") and codes.tolist() == [0, 1]
    with pytest.raises(InvalidValueError, match="^label 'x' is not a number and labels on the "
                                                "interval scale are numbers"):
        LabelSet(["1", "x"]).to_scale("interval")


def _frame(labels):
    return pd.DataFrame({"item": ["a", "a", "a", "b", "b"], "annotator": list("xyzxy"),
                         "label": labels})


def test_with_scale_merges_votes_and_gold():
    df = _frame(["1", "1.0", "+2", " 2", "2.0"]).assign(gold=["1.0"] * 3 + ["2.0"] * 2)
    votes = Votes.from_long(df, gold="gold").with_scale("interval")
    assert votes.labels.names == ("1", "2")
    assert votes.counts().tolist() == [[2, 1], [0, 2]]
    assert votes.gold.tolist() == [0, 1]


def test_with_scale_names_the_first_vote_that_is_not_a_number():
    votes = Votes.from_long(_frame(["1", "2", "3", "n/a", "4"]), source="slider.csv")
    with pytest.raises(InvalidValueError, match=(
            r"^slider.csv: the vote on item 'b' by annotator 'x': 'n/a' is not a number \(a "
            r"missing value\? mark it with --missing n/a\) and labels on the interval scale are "
            r"numbers; read the labels as categories with --scale nominal$")):
        votes.with_scale("interval")
    counts_only = Votes.from_counts([[1, 2]], labels=["1", "high"], source="c.json")
    with pytest.raises(InvalidValueError, match=r"^c.json: the vote on item '0': 'high' is not"):
        counts_only.with_scale("ratio")
    gold_only = Votes.from_counts([[1, 0]], labels=["1", "x"], gold=[1], source="g")
    with pytest.raises(InvalidValueError, match=r"^g: the gold label of item '0': 'x' is not"):
        gold_only.with_scale("interval")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(-3, 3), st.sampled_from(
    ["{}", "{}.0", " {} ", "+{}", "{}e0"])), min_size=1, max_size=40),
       st.sampled_from(["ordinal", "interval"]))
def test_respelling_numbers_leaves_counts_equal(rows, scale):
    """Writing 1 as 1.0, " 1", +1 or 1e0 changes no count on a numeric scale."""
    items = [f"i{i}" for i, _, _ in rows]
    plain = pd.DataFrame({"item": items, "label": [str(v) for _, v, _ in rows]})
    spelled = pd.DataFrame({"item": items, "label": [
        (f.format(v) if not (f == "+{}" and v < 0) else str(v)) for _, v, f in rows]})
    a = Votes.from_long(plain, annotator=None).with_scale(scale)
    b = Votes.from_long(spelled, annotator=None).with_scale(scale)
    assert a.labels == b.labels
    assert np.array_equal(a.counts(), b.counts())
