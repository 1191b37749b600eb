"""Perspectivist evaluation against the LeWiDi 2025 scorer's formulas and pandas group-bys."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from annokit.core.votes import Votes
from annokit.errors import AlignmentError, InvalidValueError, SchemaError
from annokit.metrics.perspectivist import evaluate_annotators, read_annotator_predictions


def _long(seed, n_items=30, n_ann=5, labels=("0", "1"), p_keep=1.0):
    rng = np.random.default_rng(seed)
    rows = [(f"i{i}", f"a{a}") for i in range(n_items) for a in range(n_ann)
            if rng.random() < p_keep]
    df = pd.DataFrame(rows, columns=["item", "annotator"])
    df["label"] = rng.choice(labels, len(df))
    pred = df[["item", "annotator"]].copy()
    flip = rng.random(len(df)) < 0.4
    pred["label"] = np.where(flip, rng.choice(labels, len(df)), df["label"])
    return df, pred


def _lewidi_error_rate(targets, predictions):
    """LeWiDi 2025 notebook's error_rate, written out: per item 1 - (a - sum|t - p|) / a,
    rounded to 5 decimals, then the mean over items."""
    scores = [round(1 - (len(t) - sum(abs(x - y) for x, y in zip(t, p, strict=True))) / len(t), 5)
              for t, p in zip(targets, predictions, strict=True)]
    return float(np.mean(scores))


def _lewidi_absolute_distance(targets, predictions, scale_values):
    """LeWiDi 2025 notebook's mean_absolute_distance (ANAD without x 100), written out."""
    return float(np.mean([sum(abs(x - y) for x, y in zip(t, p, strict=True)) / len(t) / scale_values
                          for t, p in zip(targets, predictions, strict=True)]))


def _vectors(df, pred, cast):
    both = df.merge(pred, on=["item", "annotator"], suffixes=("_t", "_p"))
    groups = both.groupby("item", sort=True)
    return ([list(map(cast, g["label_t"])) for _, g in groups],
            [list(map(cast, g["label_p"])) for _, g in groups])


@pytest.mark.parametrize("seed", range(3))
def test_error_rate_equals_lewidi_2025_scorer(seed):
    df, pred = _long(seed)
    res = evaluate_annotators(Votes.from_long(df), pred)
    t, p = _vectors(df, pred, int)
    assert res.scores["lewidi_error_rate"] == pytest.approx(_lewidi_error_rate(t, p), abs=1e-5)


@pytest.mark.parametrize("labels, s", [
    pytest.param(tuple("123456"), 6, id="lewidi2025-CSC-1-6"),
    pytest.param(tuple(str(x) for x in range(-5, 6)), 11, id="lewidi2025-Paraphrase-minus5-5"),
])
def test_absolute_distance_equals_lewidi_2025_scorer(labels, s):
    df, pred = _long(4, labels=labels, p_keep=0.8)
    votes = Votes.from_long(df, labels=list(labels))
    res = evaluate_annotators(votes, pred, scale="ordinal")
    t, p = _vectors(df, pred, int)
    assert res.normalizer == s
    assert res.scores["lewidi_absolute_distance"] == pytest.approx(
        _lewidi_absolute_distance(t, p, s), rel=1e-12)
    # category values change nothing when they are evenly spaced by one
    res2 = evaluate_annotators(votes, pred, scale="ordinal", values=[int(x) for x in labels])
    assert res2.scores == res.scores


def test_per_annotator_table_equals_pandas_groupby():
    df, pred = _long(5, labels=tuple("abc"), p_keep=0.7)
    res = evaluate_annotators(Votes.from_long(df), pred)
    both = df.merge(pred, on=["item", "annotator"], suffixes=("_t", "_p"))
    both["err"] = (both["label_t"] != both["label_p"]).astype(float)
    expected = both.groupby("annotator")["err"].agg(["mean", "size"])
    table = res.per_annotator.set_index("annotator")
    np.testing.assert_allclose(table["error_rate"], expected.loc[table.index, "mean"], rtol=1e-12)
    np.testing.assert_array_equal(table["n_pairs"], expected.loc[table.index, "size"])
    np.testing.assert_allclose(table["accuracy"], 1 - table["error_rate"], rtol=1e-12)
    worst = res.worst["error_rate"][0]
    assert worst["value"] == expected["mean"].max()
    assert res.over_annotators["error_rate"]["median"] == pytest.approx(expected["mean"].median())
    d = res.to_dict()
    assert d["n_pairs"] == len(both) and len(d["per_annotator"]) == len(expected)


@pytest.mark.parametrize("seed", range(5))
def test_gap_is_non_negative_and_zero_for_pooled_perfect_predictions(seed):
    labels = tuple("12345")
    df, pred = _long(seed, labels=labels)
    res = evaluate_annotators(Votes.from_long(df, labels=list(labels)), pred, scale="ordinal")
    assert res.gap["error_rate"] >= -1e-12 and res.gap["absolute_distance"] >= -1e-12
    # the right labels given to the wrong annotators: pooled view perfect, per-annotator not
    shuffled = df.copy()
    shuffled["label"] = shuffled.groupby("item")["label"].transform(
        lambda x: np.roll(x.to_numpy(), 1))
    res = evaluate_annotators(Votes.from_long(df, labels=list(labels)), shuffled, scale="ordinal")
    assert res.pooled["tvd"] == 0.0 and res.pooled["wasserstein"] == 0.0
    assert res.gap["error_rate"] == res.scores["lewidi_error_rate"]


def test_distributions_per_pair():
    df = pd.DataFrame({"item": ["i1", "i1", "i2"], "annotator": ["a", "b", "a"],
                       "label": ["x", "y", "y"]})
    pred = pd.DataFrame({"item": ["i1", "i1", "i2", "i9"], "annotator": ["a", "b", "a", "a"],
                         "prob_x": [0.8, 0.4, 0.5, 1.0], "prob_y": [0.2, 0.6, 0.5, 0.0]})
    res = evaluate_annotators(Votes.from_long(df), pred)
    # argmax (first on ties): x, y, x -> one error in three pairs; NLL by hand
    assert res.scores["error_rate"] == pytest.approx(1 / 3)
    assert res.scores["nll"] == pytest.approx(-(np.log(0.8) + np.log(0.6) + np.log(0.5)) / 3)
    # pooled mean distributions: i1 (0.6, 0.4) vs (0.5, 0.5): 0.2; i2 (0.5, 0.5) vs (0, 1): 1.0
    assert res.pooled["manhattan"] == pytest.approx(0.6)
    assert res.n_unmatched_predictions == 1 and res.n_votes_without_prediction == 0


def test_reader_and_errors(tmp_path):
    df, pred = _long(6)
    path = tmp_path / "preds.csv"
    pred.rename(columns={"label": "guess"}).to_csv(path, index=False)
    got = read_annotator_predictions(path, label="guess")
    assert list(got.columns) == ["item", "annotator", "label"] and len(got) == len(pred)
    votes = Votes.from_long(df)
    assert evaluate_annotators(votes, got).scores == evaluate_annotators(votes, pred).scores
    with pytest.raises(AlignmentError, match=r"predictions repeats \(item, annotator\) pair"):
        evaluate_annotators(votes, pd.concat([pred, pred.iloc[:1]]))
    with pytest.raises(InvalidValueError, match=r"unknown label\(s\) .*'maybe'"):
        evaluate_annotators(votes, pred.assign(label="maybe"))
    with pytest.raises(SchemaError, match="needs a 'label' column or prob_<label> columns"):
        read_annotator_predictions(pred.drop(columns="label"))
    with pytest.raises(SchemaError, match=r"prob_ columns must match .*missing \['prob_1'\]"):
        evaluate_annotators(votes, pred.drop(columns="label").assign(prob_0=1.0))
    with pytest.raises(AlignmentError, match="no prediction matches a vote"):
        evaluate_annotators(votes, pred.assign(item="nope"))
    with pytest.raises(InvalidValueError, match="scale must be one of"):
        evaluate_annotators(votes, pred, scale="likert")
    no_ann = Votes.from_long(df.drop(columns="annotator"))
    with pytest.raises(SchemaError, match="needs annotator ids"):
        evaluate_annotators(no_ann, pred)


def test_repeated_votes_score_the_pairs_first_vote():
    """With duplicates="keep", the pair's first vote is scored (positions into the votes, not
    into the de-duplicated pair keys: r's vote is x, not q's second vote y)."""
    df = pd.DataFrame({"item": ["q", "q", "r"], "annotator": ["a", "a", "a"],
                       "label": ["x", "y", "x"]})
    votes = Votes.from_long(df, duplicates="keep")
    pred = pd.DataFrame({"item": ["q", "r"], "annotator": ["a", "a"], "label": ["y", "x"]})
    res = evaluate_annotators(votes, pred)
    assert res.scores["error_rate"] == 0.5
    assert res.n_votes_without_prediction == 1
