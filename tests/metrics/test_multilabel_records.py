"""Multi-label evaluation: align_multilabel + the engine, checked against
plain numpy computations of the per-label scores, and ``annokit evaluate`` on such votes."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from annokit.cli import main
from annokit.core.votes import Votes
from annokit.errors import DataFormatError, SchemaError
from annokit.io.predictions import Predictions
from annokit.metrics.engine import evaluate
from annokit.metrics.multilabel_records import align_multilabel, read_multilabel_predictions
from annokit.metrics.registry import available

LABELS = ["x", "y", "z"]


def _frame(n_items=60, n_annotators=5, seed=0):
    rng = np.random.default_rng(seed)
    rate = rng.random((n_items, len(LABELS)))
    rows = [(f"i{i}", f"a{a}", label) for i in range(n_items) for a in range(n_annotators)
            for j, label in enumerate(LABELS) if rng.random() < rate[i, j]]
    frame = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    # every item answered by every annotator: a response may be empty, so add a tick
    return frame, rng


def _numpy_ece(p, y, n_bins=10):
    """Equal-width binned ECE of one label, written out with a loop (independent)."""
    idx = np.minimum((p * n_bins).astype(int), n_bins - 1)
    total = 0.0
    for b in range(n_bins):
        sel = idx == b
        if sel.any():
            total += sel.sum() * abs(p[sel].mean() - y[sel].mean())
    return total / p.size


def test_engine_equals_numpy_per_label_scores():
    frame, rng = _frame()
    votes = Votes.from_long(frame, duplicates="keep")
    ids = votes.item_ids.astype(str)
    probs = rng.random((len(ids), 3))
    rec = align_multilabel(votes, Predictions.from_arrays(ids, probs=probs, label_names=LABELS,
                                                          atol=np.inf))
    # independent: ticks per (item, label) over the annotators who answered the item
    ticks = frame.groupby(["item", "label"]).size().unstack(fill_value=0).reindex(
        index=ids, columns=LABELS, fill_value=0).to_numpy()
    answered = frame.groupby("item")["annotator"].nunique().reindex(ids).to_numpy()
    soft = ticks / answered[:, None]
    hard = (2 * ticks > answered[:, None]).astype(float)
    np.testing.assert_allclose(rec.soft, soft)
    res = evaluate(rec, baselines=True)
    assert res.task == "multilabel" and list(res.metrics) == list(
        available(True, True, multilabel=True))
    brier = ((probs - soft) ** 2).mean(axis=0)
    eps = 1e-12
    q = np.clip(probs, eps, 1 - eps)
    bce = -(soft * np.log(q) + (1 - soft) * np.log(1 - q)).mean(axis=0)
    ece = [_numpy_ece(probs[:, j], hard[:, j]) for j in range(3)]
    for name, ref in (("brier_multilabel", brier), ("ece_multilabel", ece),
                      ("bce_multilabel", bce)):
        got = [res.per_label[name][label] for label in LABELS]
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-9, err_msg=name)
        assert res.metrics[name] == pytest.approx(np.mean(ref), rel=1e-6)
    assert res.baselines["oracle"]["brier_multilabel"] == 0.0
    assert res.baselines["chance"]["brier_multilabel"] == pytest.approx(
        ((0.5 - soft) ** 2).mean())
    assert res.n_ties == int((2 * ticks == answered[:, None]).sum())


def test_batches_and_bootstrap_do_not_depend_on_the_batch_size():
    frame, rng = _frame(seed=1)
    votes = Votes.from_long(frame, duplicates="keep")
    ids = votes.item_ids.astype(str)
    rec = align_multilabel(votes, Predictions.from_arrays(ids, probs=rng.random((len(ids), 3)),
                                                          label_names=LABELS, atol=np.inf))
    whole = evaluate(rec, n_boot=60, seed=3)
    batched = evaluate(rec, n_boot=60, seed=3, batch_size=7)
    for name in whole.metrics:
        assert batched.metrics[name] == pytest.approx(whole.metrics[name], abs=1e-12)
        assert batched.intervals[name].low == pytest.approx(whole.intervals[name].low, abs=1e-12)
    doc = whole.to_dict()
    assert doc["task"] == "multilabel" and set(doc["per_label"]) == set(whole.metrics)
    frame_out = whole.per_item
    assert list(frame_out.columns[:3]) == ["item", "n_responses", "n_tied_labels"]


def test_logits_go_through_the_logistic_function_and_probabilities_above_one_fail(tmp_path):
    path = tmp_path / "logits.jsonl"
    path.write_text('{"item": "a", "logits": [0.0, 2.0]}\n{"item": "b", "logits": [-1.0, 1.0]}\n')
    preds = read_multilabel_predictions(path)
    np.testing.assert_allclose(preds.probs, 1 / (1 + np.exp(-np.array([[0, 2.0], [-1, 1.0]]))))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item": "a", "probs": [0.2, 0.7]}\n{"item": "b", "probs": [0.9, 1.5]}\n')
    with pytest.raises(DataFormatError, match=r"line 2 of .*bad.jsonl \(item 'b'\): a per-label "
                                              r"probability above 1"):
        read_multilabel_predictions(bad)


def test_votes_without_annotators_are_refused():
    votes = Votes.from_counts([[2, 1]], labels=["x", "y"])
    with pytest.raises(SchemaError):
        align_multilabel(votes, Predictions.from_arrays(["0"], probs=[[0.5, 0.5]],
                                                        label_names=["x", "y"]))


def run(*args):
    return CliRunner().invoke(main, ["evaluate", *map(str, args)])


def test_cli_multilabel_json_and_table(tmp_path):
    frame, rng = _frame(n_items=30, seed=2)
    votes_path = tmp_path / "votes.csv"
    frame.to_csv(votes_path, index=False)
    ids = sorted(frame["item"].unique())
    preds = pd.DataFrame({"item": ids, **{f"prob_{label}": rng.random(len(ids))
                                          for label in LABELS}})
    preds_path = tmp_path / "preds.csv"
    preds.to_csv(preds_path, index=False)
    result = run(votes_path, "--predictions", preds_path, "--multilabel", "--json",
                 "--n-boot", "20")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["task"] == "multilabel" and "ci" in out
    expected = evaluate(align_multilabel(Votes.from_long(frame, duplicates="keep"),
                                         read_multilabel_predictions(preds_path)))
    assert out["metrics"] == pytest.approx(expected.metrics)
    table = run(votes_path, "--predictions", preds_path, "--multilabel").stdout
    assert "multi-label" in table and "per label:" in table
    # without the flag the repeated (item, annotator) votes are refused, naming the option
    plain = run(votes_path, "--predictions", preds_path)
    assert plain.exit_code != 0 and "Traceback" not in plain.output
    by = run(votes_path, "--predictions", preds_path, "--multilabel", "--by", "agreement")
    assert by.exit_code == 2 and "multi-label votes take" in by.stderr
