"""annokit.quality.rating_stats: the figures of numeric labels."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from annokit.quality.rating_stats import TARGET_BINS, by_scale, nice_edges, vote_values


@example([(11.0, 1), (-5e-324, 1)])      # a subnormal span: found by hypothesis
@example([(0.0, 1), (5e-324, 1)])
@example([(9999.999999, 1), (9999.9999991, 2)])  # a width below 12 significant digits
@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.integers(-1000, 1000).map(float),
                                    st.floats(-1e4, 1e4, allow_nan=False)),
                          st.integers(1, 20)), min_size=1, max_size=30))
def test_vote_values_equal_numpy_on_every_vote(pairs):
    """Mean, sd, quantiles and histogram from the label totals equal numpy on the repeated votes."""
    values = np.array([v for v, _ in pairs])
    values, first = np.unique(values, return_index=True)
    totals = np.array([pairs[j][1] for j in first])
    every = np.repeat(values, totals)
    s = vote_values(values, totals)
    assert s["mean"] == pytest.approx(every.mean(), rel=1e-9, abs=1e-9)
    if every.size > 1:
        assert s["sd"] == pytest.approx(every.std(ddof=1), rel=1e-6, abs=1e-6)
    for key, got in s["quantiles"].items():
        assert got == pytest.approx(np.quantile(every, float(key[:-1]) / 100), rel=1e-9, abs=1e-9)
    edges = np.asarray(s["histogram"]["edges"])
    counts = s["histogram"]["counts"]
    assert sum(counts) == every.size and len(counts) == len(s["histogram"]["bins"])
    assert len(counts) <= TARGET_BINS + 2 and (np.diff(edges) > 0).all()
    assert edges[0] <= every.min() and every.max() < edges[-1]
    inside = [int(((every >= a) & (every < b)).sum()) for a, b in pairwise(edges)]
    assert inside == counts


@pytest.mark.parametrize("low, high, integers, names", [
    pytest.param(0, 100, True, ["0..9", "10..19"], id="slider_0_100"),
    pytest.param(-50, 50, True, ["-50..-41", "-40..-31"], id="pavlick2019_slider"),
    pytest.param(1, 6, True, ["1", "2"], id="likert_1_6"),
])
def test_bins_are_round_and_named_by_their_values(low, high, integers, names):
    s = vote_values(np.array([float(low), float(high)]), np.array([1, 1]))
    assert s["histogram"]["bins"][:2] == names
    assert s["histogram"]["bins"][-1] == f"{high:g}"
    assert nice_edges(low, high, integers=integers)[0] == low


def test_by_scale_keeps_the_keys_and_nulls_what_the_scale_has_no_use_for():
    full = {"entropy": {}, "agreement": {}, "ties": 1, "majority_counts": {}, "fleiss_kappa": {}}
    assert by_scale({"scale": "nominal", **full}) == {"scale": "nominal", **full}
    ordinal = by_scale({"scale": "ordinal", **full})
    assert ordinal["fleiss_kappa"] is None and ordinal["majority_counts"] is None
    assert ordinal["ties"] == 1
    interval = by_scale({"scale": "interval", **full})
    assert all(interval[k] is None for k in full)
