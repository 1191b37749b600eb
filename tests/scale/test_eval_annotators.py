"""Perspectivist evaluation on Dask equals memory (evaluate_annotators) on seeded data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask", reason="the Dask engine needs annokit[dask]")

from annokit.core.labels import LabelSet  # noqa: E402
from annokit.core.votes import Votes  # noqa: E402
from annokit.errors import AlignmentError, InvalidValueError, SchemaError  # noqa: E402
from annokit.metrics.perspectivist import evaluate_annotators  # noqa: E402
from annokit.scale.eval_annotators import evaluate_annotators_dask  # noqa: E402
from annokit.scale.votes import from_votes  # noqa: E402

LABELS = ["1", "2", "3", "4"]


def _data(seed: int, *, probs: bool, n_items: int = 60, n_ann: int = 9):
    """Votes (each item answered by 2..6 annotators) and predictions for most of the voted
    pairs, plus pairs with an unknown item, an unknown annotator and no vote."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        for a in rng.choice(n_ann, size=rng.integers(2, 7), replace=False):
            rows.append((f"it{i}", f"ann{a}", LABELS[rng.integers(len(LABELS))]))
    votes = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    pairs = votes.sample(frac=0.8, random_state=seed)[["item", "annotator"]]
    extra = pd.DataFrame({"item": ["nope", "it0", "it1"], "annotator": ["ann0", "ghost", "ann8"]})
    voted = set(map(tuple, votes[["item", "annotator"]].to_numpy()))
    extra = extra[[tuple(r) not in voted for r in extra.to_numpy()]]
    pred = pd.concat([pairs, extra], ignore_index=True)
    if probs:
        p = rng.dirichlet(np.ones(len(LABELS)), size=len(pred))
        for j, name in enumerate(LABELS):
            pred[f"prob_{name}"] = p[:, j]
    else:
        pred["label"] = np.asarray(LABELS, dtype=object)[rng.integers(len(LABELS),
                                                                      size=len(pred))]
    return Votes.from_long(votes, labels=LABELS), pred


def _same(mem, dsk) -> None:
    for key in ("scale", "labels", "normalizer", "n_pairs", "n_items", "n_annotators",
                "n_unmatched_predictions", "n_votes_without_prediction"):
        assert getattr(dsk, key) == getattr(mem, key), key
    for key in ("scores", "pooled", "gap"):
        a, b = getattr(mem, key), getattr(dsk, key)
        assert list(a) == list(b)
        np.testing.assert_allclose(list(b.values()), list(a.values()), rtol=0, atol=1e-12)
    for name, dist in mem.over_annotators.items():
        np.testing.assert_allclose(list(dsk.over_annotators[name].values()),
                                   list(dist.values()), rtol=0, atol=1e-12)
    for name, rows in mem.worst.items():
        assert [r["annotator"] for r in dsk.worst[name]] == [r["annotator"] for r in rows]
    a = mem.per_annotator.sort_values("annotator").reset_index(drop=True)
    b = dsk.per_annotator.sort_values("annotator").reset_index(drop=True)
    pd.testing.assert_frame_equal(b, a, check_exact=False, rtol=0, atol=1e-12)


@pytest.mark.parametrize("npartitions", [1, 3, 7, 80])  # 80 > items: empty partitions
@pytest.mark.parametrize("probs", [False, True], ids=["labels", "distributions"])
@pytest.mark.parametrize("scale", ["nominal", "ordinal", "interval"])
def test_equals_memory(npartitions, probs, scale):
    votes, pred = _data(npartitions + 10 * probs, probs=probs)
    mem = evaluate_annotators(votes, pred, scale=scale)
    with dask.config.set(scheduler="synchronous"):
        dv = from_votes(votes, npartitions=npartitions, client=False)
        dsk = evaluate_annotators_dask(dv, pred, scale=scale)
    assert dsk.n_unmatched_predictions > 0 and dsk.n_votes_without_prediction > 0
    _same(mem, dsk)


def test_equals_memory_on_a_cluster(dask_client, tmp_path):
    votes, pred = _data(3, probs=True)
    path = tmp_path / "annotator_preds.parquet"
    pred.to_parquet(path)
    mem = evaluate_annotators(votes, path, scale="ordinal", values=[1, 2, 3, 4], normalizer=4)
    dsk = evaluate_annotators_dask(from_votes(votes, npartitions=4, client=dask_client), path,
                                   scale="ordinal", values=[1, 2, 3, 4], normalizer=4)
    _same(mem, dsk)


def test_default_scale_is_the_votes():
    votes, pred = _data(1, probs=False)
    ordinal = Votes.from_long(votes.to_long(), labels=LabelSet(LABELS, scale="ordinal"))
    res = _dask(ordinal, pred)
    assert res.scale == "ordinal" and "lewidi_absolute_distance" in res.scores
    _same(evaluate_annotators(ordinal, pred, scale="ordinal"), res)


def _dask(votes, pred, **kw):
    with dask.config.set(scheduler="synchronous"):
        return evaluate_annotators_dask(from_votes(votes, npartitions=3, client=False), pred,
                                        **kw)


def test_errors_as_in_memory():
    votes, pred = _data(2, probs=False)
    twice = pd.concat([pred, pred.iloc[[0]]], ignore_index=True)
    for bad, exc, match in [
            (twice, AlignmentError, "repeats \\(item, annotator\\) pair"),
            (pred.assign(item="zz"), AlignmentError, "no prediction matches a vote"),
            (pred.assign(label="9"), InvalidValueError, "unknown label\\(s\\) \\['9'\\]")]:
        with pytest.raises(exc, match=match):
            evaluate_annotators(votes, bad)
        with pytest.raises(exc, match=match):
            _dask(votes, bad)
    # no match and a bad label: the no-match error first, as in memory
    with pytest.raises(AlignmentError, match="no prediction matches a vote"):
        _dask(votes, pred.assign(item="zz", label="9"))
    with pytest.raises(InvalidValueError, match="scale must be one of"):
        _dask(votes, pred, scale="cardinal")
    with pytest.raises(InvalidValueError, match="n_worst must be an integer >= 0"):
        _dask(votes, pred, n_worst=-1)


def test_votes_without_annotators_refused():
    votes = Votes.from_counts([[2, 1], [0, 3]], labels=["a", "b"])
    pred = pd.DataFrame({"item": ["0"], "annotator": ["x"], "label": ["a"]})
    with pytest.raises(SchemaError, match="perspectivist evaluation needs annotator ids"):
        _dask(votes, pred)


def test_repeated_votes_of_a_predicted_pair_refused():
    df = pd.DataFrame({"item": ["q", "q", "r"], "annotator": ["a", "a", "a"],
                       "label": ["x", "y", "x"]})
    votes = Votes.from_long(df, duplicates="keep")
    pred = pd.DataFrame({"item": ["q", "r"], "annotator": ["a", "a"], "label": ["y", "x"]})
    with pytest.raises(SchemaError, match="item 'q' has several votes from annotator 'a' and a "
                                          "prediction for them"):
        _dask(votes, pred)
    # memory scores the pair's first vote (x): one error in two pairs
    assert evaluate_annotators(votes, pred).scores["error_rate"] == 0.5
