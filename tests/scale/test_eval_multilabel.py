"""Multi-label evaluation on Dask equals memory (evaluate(align_multilabel(...))) on seeded data."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pandas as pd
import pytest

from _shared import assert_close_documents

dask = pytest.importorskip("dask", reason="the Dask engine needs annokit[dask]")

from annokit.core.votes import Votes  # noqa: E402
from annokit.errors import AlignmentError, SchemaError  # noqa: E402
from annokit.io.predictions import Predictions  # noqa: E402
from annokit.metrics.engine import evaluate  # noqa: E402
from annokit.metrics.multilabel_records import align_multilabel  # noqa: E402
from annokit.metrics.registry import available  # noqa: E402
from annokit.scale.eval_multilabel import evaluate_multilabel_dask  # noqa: E402
from annokit.scale.votes import from_votes  # noqa: E402

LABELS = ["ent", "neu", "con", "oth"]


def _data(seed: int, n_items: int = 40):
    """Responses ticking 1-3 labels each; predictions for all but 3 items plus 2 unknown ids."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        for a in rng.choice(8, size=rng.integers(2, 6), replace=False):
            for lab in rng.choice(LABELS, size=rng.integers(1, 4), replace=False):
                rows.append((f"it{i}", f"a{a}", lab))
    votes = Votes.from_long(pd.DataFrame(rows, columns=["item", "annotator", "label"]),
                            labels=LABELS, duplicates="keep")
    ids = [f"it{i}" for i in range(3, n_items)] + ["x1", "x2"]
    probs = rng.uniform(size=(len(ids), len(LABELS)))
    probs[0, 0] = 1.0  # the ends of [0, 1]
    probs[1, 1] = 0.0
    preds = Predictions.from_arrays(ids, probs=probs, label_names=LABELS[::-1], atol=np.inf)
    return votes, preds


def _quiet(f, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kw)


_close = functools.partial(assert_close_documents, key_order=True)


def _same(mem, dsk) -> None:
    d, m = dsk.to_dict(), mem.to_dict()
    d.pop("per_item", None)
    m.pop("per_item", None)
    _close(d, m)
    _close(dsk.per_label, mem.per_label)


@pytest.mark.parametrize("npartitions", [1, 3, 60])  # 60 > items: empty partitions
def test_equals_memory(npartitions):
    votes, preds = _data(npartitions)
    names = available(True, True, n_labels=len(LABELS), multilabel=True, listing=False)
    mem = _quiet(evaluate, _quiet(align_multilabel, votes, preds, on_missing="drop"), names,
                 n_boot=40, seed=3)
    with dask.config.set(scheduler="synchronous"):
        dv = from_votes(votes, npartitions=npartitions, client=False)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dsk = evaluate_multilabel_dask(dv, preds, names, on_missing="drop", n_boot=40,
                                           seed=3, per_item=True)
    said = [str(w.message) for w in caught]
    assert said[0].startswith("3 of 40 vote items have no prediction, e.g. ['it0', 'it1', "
                              "'it2']; they are dropped and 37 items are kept")
    assert said[1] == (f"{mem.n_ties} (item, label) cells are ticked by exactly half of the "
                       "annotators; tie policy 'exclude'")
    assert dsk.task == "multilabel" and dsk.n_ties == mem.n_ties > 0
    assert dsk.n_unmatched_predictions == 2 and dsk.n_dropped_items == 3
    assert dsk.per_label.keys() == mem.per_label.keys() and dsk.intervals
    _same(mem, dsk)
    pd.testing.assert_frame_equal(dsk.per_item, mem.per_item, check_exact=False, rtol=1e-12,
                                  atol=1e-12)


def test_equals_memory_on_a_cluster(dask_client, tmp_path):
    votes, preds = _data(7)
    frame = pd.DataFrame(preds.probs, columns=[f"prob_{n}" for n in LABELS[::-1]])
    frame.insert(0, "item", preds.item_ids)
    path = tmp_path / "preds.csv"
    frame.to_csv(path, index=False)
    mem = _quiet(evaluate, _quiet(align_multilabel, votes, str(path), on_missing="drop",
                                  ties="include"), n_boot=10)
    dsk = _quiet(evaluate_multilabel_dask, from_votes(votes, npartitions=4, client=dask_client),
                 str(path), on_missing="drop", ties="include", n_boot=10)
    assert dsk.tie_policy == "include"
    _same(mem, dsk)


def _dask(votes, preds, **kw):
    with dask.config.set(scheduler="synchronous"):
        return _quiet(evaluate_multilabel_dask, from_votes(votes, npartitions=3, client=False),
                      preds, **kw)


def test_errors_as_in_memory():
    votes, preds = _data(1)
    no_names = Predictions.from_arrays(preds.item_ids, probs=preds.probs, atol=np.inf)
    elsewhere = Predictions.from_arrays(["zz"], probs=preds.probs[:1], label_names=LABELS,
                                        atol=np.inf)
    for bad, kw, match in [
            (preds, {}, "3 of 40 vote items have no prediction, e.g. \\['it0', 'it1', 'it2'\\]; "
                        "pass --on-missing drop"),
            (no_names, {}, "the class order of the 4 prediction columns is not known"),
            (elsewhere, {}, "none of the 40 vote items has a prediction \\(vote item ids e.g. "
                            "\\['it0', 'it1', 'it2'"),
            (preds, {"pred_labels": ["ent", "neu", "con", "oth"]}, "contradict the class names")]:
        with pytest.raises(AlignmentError, match=match):
            align_multilabel(votes, bad, **kw)
        with pytest.raises(AlignmentError, match=match):
            _dask(votes, bad, **kw)


def test_repeated_tick_refused():
    df = pd.DataFrame({"item": ["q", "q", "q", "r"], "annotator": ["a", "a", "b", "a"],
                       "label": ["x", "x", "y", "x"]})
    votes = Votes.from_long(df, duplicates="keep")
    preds = Predictions.from_arrays(["q", "r"], probs=[[0.4, 0.9], [0.8, 0.3]],
                                    label_names=["x", "y"], atol=np.inf)
    match = ("1 \\(item, annotator, label\\) vote\\(s\\) repeated, e.g. \\[\\('q', 'a', 'x'\\)\\]; "
             "a response ticks each label at most once")
    with pytest.raises(SchemaError, match=match):
        align_multilabel(votes, preds)
    with pytest.raises(SchemaError, match=match):
        _dask(votes, preds)


def test_votes_without_annotators_refused():
    votes = Votes.from_counts([[2, 1], [0, 3]], labels=["x", "y"])
    preds = Predictions.from_arrays(["0", "1"], probs=[[0.4, 0.9], [0.8, 0.3]],
                                    label_names=["x", "y"], atol=np.inf)
    with pytest.raises(SchemaError, match="multi-label votes \\(a response is the set of labels "
                                          "one annotator gave one item\\) needs annotator ids"):
        _dask(votes, preds)
