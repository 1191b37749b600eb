"""Numeric ratings and their per-item summaries (annokit/core/ratings.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from annokit.core.ratings import BIMODALITY_THRESHOLD, Ratings, bimodality_coefficient
from annokit.core.votes import Votes
from annokit.errors import DegenerateInputWarning, InvalidValueError, SchemaError


def _bc_scipy(x):
    """Sarle's coefficient from scipy's bias-corrected skewness and excess kurtosis (SAS 1990)."""
    n = len(x)
    g1 = stats.skew(x, bias=False)
    g2 = stats.kurtosis(x, fisher=True, bias=False)
    return (g1**2 + 1) / (g2 + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(-50, 50), min_size=4, max_size=40))
def test_bimodality_equals_scipy_moments(values):
    x = np.asarray(values, float)
    if np.ptp(x) == 0:
        assert np.isnan(bimodality_coefficient(x))
        return
    assert bimodality_coefficient(x) == pytest.approx(_bc_scipy(x), rel=1e-9)
    assert 0 < bimodality_coefficient(x) <= 1 + 1e-9 or len(x) < 10


@pytest.mark.parametrize("draw, expected", [
    pytest.param(lambda g: g.normal(size=400_000), 1 / 3, id="pfister2013_normal_one_third"),
    pytest.param(lambda g: g.uniform(size=400_000), 5 / 9, id="pfister2013_uniform_five_ninths"),
    pytest.param(lambda g: g.integers(0, 2, 400_000).astype(float), 1.0,
                 id="pfister2013_two_point_one"),
])
def test_bimodality_population_values(draw, expected):
    # Pfister et al. (2013): BC is 1/3 for a normal, 5/9 for a uniform distribution; a
    # symmetric two-point distribution (skewness 0, excess kurtosis -2) gives 1
    x = draw(np.random.default_rng(0))
    assert bimodality_coefficient(x) == pytest.approx(expected, abs=0.01)
    assert BIMODALITY_THRESHOLD == pytest.approx(5 / 9)


def _random_ratings(seed, n_items=30):
    rng = np.random.default_rng(seed)
    m = rng.integers(1, 12, n_items)
    item = np.repeat([f"i{j}" for j in range(n_items)], m)
    ann = np.concatenate([rng.permutation(20)[:k] for k in m]).astype(str)
    values = rng.integers(-50, 51, m.sum()).astype(float)
    return Ratings.from_long(item, ann, values), pd.DataFrame({"item": item, "v": values})


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_item_summaries_equal_pandas_groupby(seed):
    ratings, df = _random_ratings(seed)
    g = df.groupby("item", sort=False)["v"]
    with pytest.warns(DegenerateInputWarning, match="bimodality coefficient is undefined") if \
            (g.size() < 4).any() or (g.nunique() < 2).any() else _no_warning():
        summary = ratings.summary()
    assert summary["item"].tolist() == list(g.size().index)
    np.testing.assert_allclose(summary["mean"], g.mean().to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(summary["sd"], g.std(ddof=1).to_numpy(), rtol=1e-9, equal_nan=True)
    np.testing.assert_array_equal(summary["n_ratings"], g.size().to_numpy())
    expected = [(_bc_scipy(x.to_numpy()) if len(x) >= 4 and x.nunique() > 1 else np.nan)
                for _, x in g]
    np.testing.assert_allclose(summary["bimodality"], expected, rtol=1e-9, equal_nan=True)


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_histograms_equal_numpy_histogram_and_crosstab(seed):
    ratings, df = _random_ratings(seed)
    edges = [-50, -30, -10, 0, 10, 30, 50]
    h = ratings.soft_labels(bins=edges)
    for i, (_, x) in enumerate(df.groupby("item", sort=False)["v"]):
        np.testing.assert_array_equal(h.counts[i], np.histogram(x, bins=edges)[0])
    np.testing.assert_allclose(h.probs.sum(axis=1), 1.0)
    assert h.names[0] == "[-50, -30)" and h.names[-1] == "[30, 50]"
    np.testing.assert_allclose(h.values, [-40, -20, -5, 5, 20, 40])
    d = ratings.soft_labels()
    table = pd.crosstab(pd.Categorical(df["item"], categories=ratings.item_ids), df["v"])
    np.testing.assert_array_equal(d.counts, table.to_numpy())
    assert d.edges is None and d.values.tolist() == sorted(df["v"].unique())


def test_histogram_refuses_values_outside_the_bins_and_bad_edges():
    r = Ratings.from_long(["a", "a", "b"], None, [0.0, 60.0, 70.0])
    with pytest.raises(InvalidValueError, match=r"2 rating\(s\) outside the bins \[-50, 50\], first "
                                                r"60 on item 'a'; widen the edges"):
        r.soft_labels(bins=[-50, 0, 50])
    with pytest.raises(InvalidValueError, match="bins must be at least two increasing finite edges"):
        r.soft_labels(bins=[0, 0, 1])
    with pytest.raises(InvalidValueError, match="bins must be at least two"):
        r.soft_labels(bins=[1])


def test_from_long_duplicates_and_errors():
    item, ann, val = ["a", "a", "a", "b"], ["x", "y", "x", "x"], [1.0, 2.0, 3.0, 4.0]
    with pytest.raises(SchemaError, match=r"1 repeated \(item, annotator\) rating\(s\), first at "
                                          r"row 2: item 'a', annotator 'x'"):
        Ratings.from_long(item, ann, val)
    first = Ratings.from_long(item, ann, val, duplicates="first")
    last = Ratings.from_long(item, ann, val, duplicates="last")
    assert first.n_duplicates_removed == last.n_duplicates_removed == 1
    assert first.mean().tolist() == [1.5, 4.0] and last.mean().tolist() == [2.5, 4.0]
    assert Ratings.from_long(item, ann, val, duplicates="keep").n_ratings == 4
    with pytest.raises(InvalidValueError, match="duplicates must be one of"):
        Ratings.from_long(item, ann, val, duplicates="mean")
    with pytest.raises(InvalidValueError, match=r"rating 1 \(item 'a'\) is not a finite number: nan"):
        Ratings.from_long(["a", "a"], None, [1.0, np.nan])
    with pytest.raises(InvalidValueError, match=r"rating 0 \(item 'a'\) is -1.0; ratio data are >= 0"):
        Ratings.from_long(["a"], None, [-1.0], scale="ratio")
    with pytest.raises(InvalidValueError, match="Ratings hold interval or ratio data; got scale "
                                                "'ordinal'"):
        Ratings.from_long(["a"], None, [1.0], scale="ordinal")
    # from_votes checks the scale before reading the labels as numbers (text labels on the
    # nominal scale raised a TypeError from indexing None)
    with pytest.raises(InvalidValueError, match="counts: Ratings hold interval or ratio data; got "
                                                "scale 'nominal'"):
        Ratings.from_votes(Votes.from_counts([[1, 1]], labels=["yes", "no"]), scale="nominal")
    with pytest.raises(SchemaError, match="item_index and values must be 1-D of equal length"):
        Ratings([0, 0], [1.0], item_ids=["a"])
    with pytest.raises(SchemaError, match="every item needs a rating"):
        Ratings([0], [1.0], item_ids=["a", "b"])
    with pytest.raises(SchemaError, match="annotator_ids given without annotator_index"):
        Ratings([0], [1.0], item_ids=["a"], annotator_ids=["x"])


def test_votes_and_ratings_convert_both_ways():
    votes = Votes.from_counts([[1, 0, 2], [0, 3, 0]], labels=["-5", "0", "5"])
    r = Ratings.from_votes(votes)
    assert r.mean().tolist() == pytest.approx([5 / 3, 0.0])
    back = r.to_votes()
    assert back.labels.names == ("-5", "0", "5") and back.labels.scale == "ordinal"
    assert back.counts()[:, [0, 1, 2]].tolist() == [[1, 0, 2], [0, 3, 0]]
    assert r.to_votes(scale="nominal").labels.scale == "nominal"
    assert r.to_long().columns.tolist() == ["item", "rating"]
    assert repr(r).startswith("Ratings(n_items=2, n_annotators=") and "n_ratings=6" in repr(r)
    with pytest.raises(InvalidValueError, match="label 'yes' is not a number and labels on the "
                       "interval scale are numbers"):
        Ratings.from_votes(Votes.from_counts([[1, 1]], labels=["yes", "no"]))


def test_std_of_single_rating_is_nan():
    r = Ratings.from_long(["a", "b", "b"], None, [1.0, 2.0, 4.0])
    sd = r.std()
    assert np.isnan(sd[0]) and sd[1] == pytest.approx(np.sqrt(2))
    assert r.std(ddof=0)[1] == pytest.approx(1.0)
