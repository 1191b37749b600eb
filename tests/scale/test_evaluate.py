"""The Dask evaluation engine, annokit/scale/evaluate.py: equal to the in-memory engine.

The independent implementation every test compares with is the in-memory path,
``annokit.metrics.engine.evaluate(align(votes, predictions))`` (itself tested
against scipy, sklearn-style oracles and published numbers in tests/metrics).
"""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _shared import assert_close_documents

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from annokit.core.resample import item_keys  # noqa: E402
from annokit.core.votes import CHAOSNLI_NLI_LABELS, LabelSet, Votes  # noqa: E402
from annokit.errors import (  # noqa: E402
    AlignmentError,
    DataFormatError,
    DegenerateInputWarning,
    InvalidValueError,
    OptionConflictError,
)
from annokit.io.predictions import Predictions  # noqa: E402
from annokit.metrics.engine import evaluate  # noqa: E402
from annokit.metrics.records import agreement_bins, align  # noqa: E402
from annokit.metrics.registry import available  # noqa: E402
from annokit.metrics.workflow import EvaluateOptions  # noqa: E402
from annokit.scale.evaluate import evaluate_dask as _evaluate_dask  # noqa: E402

NLI = CHAOSNLI_NLI_LABELS


def evaluate_dask(votes, predictions, metrics=None, *, client=None, budget=4_000_000,
                  per_item_out=None, scale=None, metric_options=None, **options):
    """``evaluate_dask`` with the in-memory ``evaluate``'s keywords gathered into its options."""
    return _evaluate_dask(votes, predictions,
                          EvaluateOptions(metrics=metrics, per_item=per_item_out, **options),
                          client=client, budget=budget, scale=scale,
                          metric_options=metric_options)


@pytest.fixture(scope="module")
def eval_client():
    """Two in-process workers (named apart from tests/scale/conftest.py's shared cluster)."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=None)
    client = distributed.Client(cluster, set_as_default=False)
    yield client
    client.close()
    cluster.close()


class _HandVotes:
    """A DaskVotes built by hand: items of each partition chosen by ``part_of`` (any split).

    As read_votes_dask codes them: an item's code is its key (``item_keys`` of the id as
    int64), ``first`` its first-seen position."""

    def __init__(self, votes: Votes, part_of: np.ndarray, npart: int):
        ii = votes.item_index.astype(np.int64)
        key = item_keys(np.asarray(votes.item_ids, dtype=object)).view(np.int64)
        frames, items = [], []
        for p in range(npart):
            sel = part_of[ii] == p
            frames.append(pd.DataFrame({"item": key[ii[sel]],
                                        "annotator": np.full(int(sel.sum()), -1, np.int32),
                                        "label": votes.label_index[sel].astype(np.int16)}))
            codes = np.flatnonzero(part_of == p).astype(np.int64)
            items.append(pd.DataFrame({"item": key[codes],
                                       "item_id": np.asarray(votes.item_ids, dtype=object)[codes],
                                       "gold": np.full(codes.size, -1, np.int16),
                                       "first": codes}))
        self.frame = dd.from_map(lambda i: frames[i], range(npart), meta=frames[0].iloc[:0],
                                 enforce_metadata=False)
        self.items = dd.from_map(lambda i: items[i], range(npart), meta=items[0].iloc[:0],
                                 enforce_metadata=False)
        self.labels, self.n_items, self.n_votes = votes.labels, votes.n_items, votes.n_votes
        self.annotator_ids, self.n_annotators, self.source = None, None, "hand"


def _votes(n=120, k=3, seed=0, one_label=False):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 5, size=(n, k))
    counts[:, 0] += 1
    if one_label:
        counts[: n // 3, 1:] = 0
    labels = NLI if k == 3 else [f"l{j}" for j in range(k)]
    return Votes.from_counts(counts, labels=labels, item_ids=[f"it{j}" for j in range(n)])


def _probs(n, k, seed):
    return np.random.default_rng(seed + 100).dirichlet(np.ones(k), size=n)


def _frame(ids, probs, names):
    df = pd.DataFrame({"item": np.asarray(ids, dtype=object)})
    for j, name in enumerate(names):
        df[f"prob_{name}"] = probs[:, j]
    return df


_close = assert_close_documents


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        return fn(*args, **kwargs)


def _both(votes, preds_frame, part_of, npart, *, client=None, names=None, budget=4_000_000,
          **kwargs):
    names = names or list(votes.labels.names)
    preds = Predictions.from_arrays(preds_frame["item"],
                                    probs=preds_frame[[f"prob_{n}" for n in names]].to_numpy(),
                                    label_names=names)
    ref = _quiet(evaluate, _quiet(align, votes, preds, on_missing=kwargs.get("on_missing",
                                                                             "error")),
                 **{k: v for k, v in kwargs.items() if k != "on_missing"})
    got = _quiet(evaluate_dask, _HandVotes(votes, part_of, npart), preds_frame, client=client,
                 budget=budget, **kwargs)
    return ref, got


# --------------------------------------------------------------------------- equality


@pytest.mark.parametrize("by", [None, "agreement"])
@pytest.mark.parametrize("n_boot", [0, 60])
def test_every_registered_metric_equals_in_memory_on_a_cluster(eval_client, by, n_boot):
    votes = _votes(200, seed=1)
    frame = _frame(votes.item_ids, _probs(200, 3, 1), NLI.names)
    part_of = np.random.default_rng(2).integers(0, 5, votes.n_items)
    ref, got = _both(votes, frame, part_of, 5, client=eval_client, n_boot=n_boot, seed=7, by=by)
    assert list(got.metrics) == list(available(True, True))
    _close(ref.to_dict(), got.to_dict())
    if n_boot:  # every replicate, not only the interval bounds
        for name in available(True, True):
            np.testing.assert_allclose(got.intervals[name].replicates,
                                       ref.intervals[name].replicates, rtol=1e-12, atol=1e-12)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 40), npart=st.integers(1, 7), k=st.integers(2, 4),
       seed=st.integers(0, 10_000), n_boot=st.sampled_from([0, 15]),
       by=st.sampled_from([None, "agreement"]), one_label=st.booleans())
def test_any_partitioning_gives_the_in_memory_result(n, npart, k, seed, n_boot, by, one_label):
    """Empty partitions, one-item partitions, one-label partitions: the same values and intervals."""
    votes = _votes(n, k=k, seed=seed, one_label=one_label)
    rng = np.random.default_rng(seed)
    part_of = rng.integers(0, npart, n)
    if npart > 1 and n > 1:
        part_of[0] = npart - 1  # a one-item partition next to possibly empty ones
        part_of[part_of == npart - 1] = 0
        part_of[0] = npart - 1
    frame = _frame(votes.item_ids, _probs(n, k, seed), votes.labels.names)
    frame = frame.sample(frac=1.0, random_state=seed)  # prediction rows in another order
    with dask.config.set(scheduler="synchronous"):
        ref, got = _both(votes, frame, part_of, npart, n_boot=n_boot, seed=seed, by=by,
                         budget=37)
    _close(ref.to_dict(), got.to_dict())


def _scaled_votes(labels, n, seed):
    """Votes on ``labels`` (any scale); a third of the items have votes for one label only."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 4, size=(n, len(labels)))
    counts[:, -1] += 1
    counts[: n // 3, :-1] = 0
    return Votes.from_counts(counts, labels=labels, item_ids=[f"it{j}" for j in range(n)])


_SCALED = [pytest.param(LabelSet(["no", "yes"]), {}, id="binary"),
           pytest.param(LabelSet(["no", "yes"]), {"metric_options": {"positive": "no"}},
                        id="binary-positive-by-name"),
           pytest.param(LabelSet(["1", "2", "3", "4", "5"], scale="ordinal"), {}, id="ordinal"),
           pytest.param(LabelSet(["-2", "0", "1.5", "4"], scale="interval"), {}, id="interval"),
           pytest.param(LabelSet(["1", "2", "3", "4", "5"], scale="ordinal"),
                        {"scale": "interval", "metric_options": {"values": (0, 1, 2, 4, 8)}},
                        id="scale-and-values-given"),
           pytest.param(LabelSet(["0", "1"], scale="ratio"), {"by": "agreement"},
                        id="binary-ratio-by-agreement")]


@pytest.mark.parametrize(("labels", "kwargs"), _SCALED)
def test_binary_and_order_aware_metrics_equal_in_memory_on_any_partitioning(labels, kwargs):
    """Two labels (ece_binary, mce_binary) and ordered scales (wasserstein ... rps_soft): the
    default list, values, positive label and intervals of the in-memory engine."""
    n = 40
    votes = _scaled_votes(labels, n, seed=len(labels))
    frame = _frame(votes.item_ids, _probs(n, len(labels), 3), labels.names)
    frame = frame.sample(frac=1.0, random_state=4)
    scale = kwargs.get("scale", labels.scale)
    expected = available(True, True, scale=scale, n_labels=len(labels))
    for npart, part_of in ((1, np.zeros(n, dtype=int)),
                           (4, np.random.default_rng(5).integers(0, 4, n)),
                           (n + 3, np.arange(n) + 3)):  # one item each, three empty partitions
        with dask.config.set(scheduler="synchronous"):
            ref, got = _both(votes, frame, part_of, npart, n_boot=30, seed=9, budget=37,
                             **kwargs)
        assert got.names == expected and got.scale == scale
        _close(ref.to_dict(), got.to_dict())
        for name in expected:  # every replicate, not only the interval bounds
            np.testing.assert_allclose(got.intervals[name].replicates,
                                       ref.intervals[name].replicates, rtol=1e-12, atol=1e-12)
    if len(labels) == 2:
        given = kwargs.get("metric_options", {})
        assert got.positive_label == given.get("positive", labels.names[1])
    else:
        assert got.positive_label is None and "wasserstein" in got.metrics


def test_several_models_paired_differences(eval_client):
    votes = _votes(150, seed=4)
    names = NLI.names
    fa, fb = (_frame(votes.item_ids, _probs(150, 3, s), names) for s in (4, 5))
    pa, pb = (Predictions.from_arrays(f["item"], probs=f.iloc[:, 1:].to_numpy(),
                                      label_names=names) for f in (fa, fb))
    ref = _quiet(evaluate, {"a": align(votes, pa), "b": align(votes, pb)}, n_boot=40, seed=2)
    got = _quiet(evaluate_dask, _HandVotes(votes, np.arange(150) % 3, 3), {"a": fa, "b": fb},
                 n_boot=40, seed=2, client=eval_client)
    assert set(got.comparisons) == {"b"} and got.comparisons["b"]["dist_ce"].n_boot == 40
    _close(ref.to_dict(), got.to_dict())


def test_parquet_directory_csv_files_and_logits(tmp_path):
    votes = _votes(90, seed=8)
    probs = _probs(90, 3, 8)
    frame = _frame(votes.item_ids, probs, ["e", "n", "c"])
    (tmp_path / "pq").mkdir()
    shuffled = frame.sample(frac=1, random_state=1)
    for i, part in enumerate(shuffled.iloc[a:a + 30] for a in (0, 30, 60)):
        part.to_parquet(tmp_path / "pq" / f"part{i}.parquet", index=False)
        part.to_csv(tmp_path / f"p{i}.csv", index=False)
    logits = np.log(probs) + 2.0
    lf = pd.DataFrame({"id": votes.item_ids, "logit_e": logits[:, 0], "logit_n": logits[:, 1],
                       "logit_c": logits[:, 2]})
    lf.to_parquet(tmp_path / "logits.parquet", index=False)
    dv = _HandVotes(votes, np.arange(90) % 4, 4)
    with dask.config.set(scheduler="synchronous"):
        ref = _quiet(evaluate, align(votes, sorted((tmp_path / "pq").iterdir())), n_boot=20)
        for source in (tmp_path / "pq", str(tmp_path / "p*.csv"),
                       [tmp_path / f"p{i}.csv" for i in range(3)]):
            _close(ref.to_dict(), _quiet(evaluate_dask, dv, source, n_boot=20).to_dict())
        ref_l = _quiet(evaluate, align(votes, tmp_path / "logits.parquet"))
        _close(ref_l.to_dict(), _quiet(evaluate_dask, dv, tmp_path / "logits.parquet").to_dict())


@pytest.mark.parametrize("labels", [NLI, LabelSet(["1", "2", "3", "4", "5"], scale="ordinal")],
                         ids=["nominal", "ordinal"])
def test_per_item_output_written_by_partition(tmp_path, eval_client, labels):
    """The in-memory per-item frame, with the order-aware metrics' columns on ordered scales."""
    votes = _scaled_votes(labels, 80, seed=9)
    frame = _frame(votes.item_ids, _probs(80, len(labels), 9), labels.names)
    out = tmp_path / "per_item"
    ref = _quiet(evaluate, align(votes, Predictions.from_arrays(
        frame["item"], probs=frame.iloc[:, 1:].to_numpy(), label_names=labels.names)))
    if labels.scale == "ordinal":
        assert {"wasserstein", "rps_soft"} <= set(ref.per_item.columns)
    got = _quiet(evaluate_dask, _HandVotes(votes, np.arange(80) % 3, 3), frame,
                 per_item_out=out, per_item_format="parquet", client=eval_client)
    files = sorted(p.name for p in out.iterdir())
    assert files == [f"part.{i:05d}.parquet" for i in range(3)]
    mine = got.per_item.set_index("item").loc[ref.per_item["item"]].reset_index()
    pd.testing.assert_frame_equal(mine, ref.per_item, check_exact=False, rtol=1e-12)


def test_unmatched_predictions_counted_and_dropped_items_listed():
    votes = _votes(60, seed=3)
    frame = _frame(votes.item_ids, _probs(60, 3, 3), NLI.names)
    frame = pd.concat([frame.iloc[7:], _frame(["x1", "x2"], _probs(2, 3, 0), NLI.names)])
    with dask.config.set(scheduler="synchronous"):
        ref, got = _both(votes, frame, np.arange(60) % 4, 4, on_missing="drop")
    assert got.n_unmatched_predictions == 2 and got.n_dropped_items == 7
    assert got.dropped_item_ids == [f"it{j}" for j in range(7)]
    _close(ref.to_dict(), got.to_dict())


# --------------------------------------------------------------------------- errors


def _message(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        try:
            fn()
        except (AlignmentError, DataFormatError, InvalidValueError) as exc:
            return type(exc), str(exc)
    raise AssertionError("no error raised")


def _error_cases():
    votes = _votes(30, seed=5)
    full = _frame(votes.item_ids, _probs(30, 3, 5), NLI.names)
    unnamed = pd.DataFrame({"item": full["item"], "probs": list(full.iloc[:, 1:].to_numpy())})
    return votes, [
        pytest.param(full.iloc[3:], {}, id="items-without-predictions"),
        pytest.param(full.assign(item=[f"zz{j}" for j in range(30)]), {}, id="none-matched"),
        pytest.param(full, {"pred_labels": ["e", "n", "x"]}, id="unknown-label-name"),
        pytest.param(full, {"pred_labels": ["e", "c", "n"]}, id="contradicts-column-names"),
        pytest.param(full.rename(columns={"prob_contradiction": "prob_q"}), {}, id="column-label-mismatch"),
        pytest.param(unnamed, {}, id="class-order-unknown"),
    ]


_VOTES, _CASES = _error_cases()


@pytest.mark.parametrize(("frame", "kwargs"), _CASES)
def test_errors_are_the_in_memory_ones(frame, kwargs):
    votes = _VOTES

    def in_memory():
        if "probs" in frame.columns:
            preds = Predictions.from_arrays(frame["item"], probs=np.stack(frame["probs"]))
        else:
            cols = [c for c in frame.columns if c != "item"]
            preds = Predictions.from_arrays(frame["item"], probs=frame[cols].to_numpy(),
                                            label_names=[c[5:] for c in cols])
        evaluate(align(votes, preds, **kwargs))

    with dask.config.set(scheduler="synchronous"):
        got = _message(lambda: evaluate_dask(_HandVotes(votes, np.arange(30) % 3, 3), frame,
                                             **kwargs))
    assert got == _message(in_memory)


def test_other_errors():
    votes = _VOTES
    frame = _frame(votes.item_ids, _probs(30, 3, 5), NLI.names)
    dv = _HandVotes(votes, np.arange(30) % 2, 2)
    with dask.config.set(scheduler="synchronous"):
        # within one partition the in-memory reader's message (rows of that partition);
        # across partitions the join's
        with pytest.raises(DataFormatError, match=r"item id 'it4' appears more than once \(row 4 "
                                                  r"of partition 0, row 30 of partition 0\); 1 "):
            evaluate_dask(dv, pd.concat([frame, frame.iloc[4:5]]))
        two = dd.from_pandas(pd.concat([frame, frame.iloc[4:5]]), npartitions=2, sort=False)
        with pytest.raises(DataFormatError, match=r"predictions DataFrame: item id 'it4' appears "
                                                  r"more than once; 1 duplicated id\(s\) in all"):
            evaluate_dask(dv, two)
        with pytest.raises(OptionConflictError, match="--ties random runs in memory only: the "
                                                      "in-memory draw follows each item's rank"):
            evaluate_dask(dv, frame, ties="random")
        with pytest.raises(InvalidValueError, match="by must be None or 'agreement'"):
            evaluate_dask(dv, frame, by="gold")
        with pytest.raises(InvalidValueError, match=re.escape("--metrics: unknown metric 'nope'")):
            evaluate_dask(dv, frame, "nope")
        with pytest.raises(AlignmentError, match="model 'b' has 28 items, 2 of the first"):
            _quiet(evaluate_dask, dv, {"a": frame, "b": frame.iloc[2:]}, on_missing="drop")
        bad = frame.copy()
        bad.loc[3, "prob_entailment"] += 0.5
        with pytest.raises(DataFormatError, match=r"row \d+ of partition 0 of predictions "
                                                  r"DataFrame \(item 'it3'\): probs sum to"):
            evaluate_dask(dv, bad)


def test_tie_warning_as_in_memory():
    votes = Votes.from_counts([[2, 2, 0], [3, 0, 0], [0, 1, 1]], labels=NLI,
                              item_ids=["a", "b", "c"])
    frame = _frame(["a", "b", "c"], _probs(3, 3, 1), NLI.names)
    with dask.config.set(scheduler="synchronous"):
        with pytest.warns(DegenerateInputWarning, match="2 of 3 items have a tied human majority"):
            res = evaluate_dask(_HandVotes(votes, np.array([0, 1, 1]), 3), frame)
    assert res.n_ties == 2 and res.tie_policy == "first"


# --------------------------------------------------------------------------- real data


def test_chaosnli_with_baan_predictions_equals_in_memory(shared_data, eval_client):
    from annokit.io import read_votes
    from annokit.io.predictions import read_predictions

    votes = read_votes(shared_data("chaosnli", "chaosNLI_snli.jsonl"))
    d = shared_data("chaosnli_predictions_baan2022")
    files = [d / "SNLI_dev_roberta-base_0.json", d / "SNLI_test_roberta-base_0.json"]
    ref = _quiet(evaluate, align(votes, files, pred_labels=["e", "c", "n"]), n_boot=200,
                 seed=11, by="agreement")
    part_of = np.random.default_rng(0).integers(0, 6, votes.n_items)
    got = _quiet(evaluate_dask, _HandVotes(votes, part_of, 6), read_predictions(files),
                 pred_labels=["e", "c", "n"], n_boot=200, seed=11, by="agreement",
                 client=eval_client)
    assert got.n_items == 1514 and got.n_unmatched_predictions == 4921 + 4921 - 1514
    _close(json.loads(json.dumps(ref.to_dict())), json.loads(json.dumps(got.to_dict())))


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.sampled_from([0.0, 0.3, 0.5, 0.9183, 1.0, 1.5849, 0.1 / 3]),
                       min_size=1, max_size=60),
       bins=st.integers(1, 8))
def test_agreement_edges_from_value_counts_equal_numpy_quantile(values, bins):
    """The merged (value, count) pairs give np.quantile's edges bit for bit (id: numpy-quantile)."""
    h = np.asarray(values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        edges, index, _, _ = agreement_bins(h, bins)
        v, c = np.unique(h, return_counts=True)
        edges_c, index_c, _, _ = agreement_bins(v, bins, counts=c)
    assert np.array_equal(edges, edges_c)
    assert np.array_equal(index, index_c[np.searchsorted(v, h)])


@pytest.mark.parametrize("by", [None, "agreement"])
def test_adaptive_ece_point_values_without_gathering_equal_in_memory(monkeypatch, by):
    """Tie-heavy confidences (one-hot and uniform rows) split one item per partition: the
    exact-quantile edges give the in-memory bins, and no adaptive state is built for them."""
    from annokit.metrics import states

    n, k = 90, 3
    votes = _votes(n=n, k=k, seed=5)
    probs = _probs(n, k, 5)
    rng = np.random.default_rng(9)
    probs[:10] = 1.0 / k
    probs[10:30] = np.eye(k)[rng.integers(0, k, 20)]
    frame = _frame(votes.item_ids, probs, list(votes.labels.names))
    part_of = np.arange(n) % 37
    with dask.config.set(scheduler="synchronous"):  # no client given: no cluster started
        ref, _ = _both(votes, frame, part_of, 37, metrics=["ece_adaptive", "ece"], by=by)
    built = []
    original = states.AdaptiveBinnedState.__init__

    def spy(self, *args, **kwargs):
        built.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(states.AdaptiveBinnedState, "__init__", spy)
    with dask.config.set(scheduler="synchronous"):
        got = _quiet(evaluate_dask, _HandVotes(votes, part_of, 37), frame,
                     metrics=["ece_adaptive", "ece"], by=by)
    _close(ref.to_dict(), got.to_dict())
    assert not built  # the point values came from eval_adaptive's bin sums


def test_adaptive_ece_edges_in_two_round_trips_one_task_per_worker(eval_client, monkeypatch):
    """20,000 items in 6 partitions on 2 workers: the edges of every set (model, chance,
    oracle) come from 2 rounds, each one task per worker over all its partitions' sorted
    runs (a partition's hits and misses); the in-memory result."""
    from annokit.scale import quantiles

    n, k = 20_000, 3
    votes = _votes(n=n, k=k, seed=8)
    frame = _frame(votes.item_ids, _probs(n, k, 8), list(votes.labels.names))
    part_of = np.random.default_rng(1).integers(0, 6, n)
    calls = []
    original = quantiles.partition_step

    def spy(step, runs, args):
        calls.append(len(runs))
        return original(step, runs, args)

    monkeypatch.setattr(quantiles, "partition_step", spy)
    ref, got = _both(votes, frame, part_of, 6, client=eval_client, metrics=["ece_adaptive"])
    _close(ref.to_dict(), got.to_dict())
    n_sets = 3
    rounds = sum(calls) / (n_sets * 2 * 6)  # every round reads each partition's 2 runs per set
    assert rounds == 2
    assert len(calls) / (rounds * n_sets) <= 2  # tasks per round and set: one per worker


@pytest.mark.parametrize("kind", ["jsonl", "npy"])
def test_prediction_files_only_memory_reads_are_read_once_and_joined(tmp_path, kind):
    """JSON Lines and .npy (+ ids file) predictions: read on the client with the in-memory
    reader, joined with the votes' partitions by item id; the in-memory result."""
    votes = _votes(50, seed=4)
    probs = _probs(50, 3, 4)
    ids = np.asarray(votes.item_ids, dtype=object)[::-1]  # another order than the votes'
    if kind == "jsonl":
        path = tmp_path / "p.jsonl"
        path.write_text("".join(json.dumps({"id": i, "probs": p.tolist()}) + "\n"
                                for i, p in zip(ids, probs, strict=True)))
    else:
        path = tmp_path / "p.npy"
        np.save(path, probs)
        (tmp_path / "p.ids.txt").write_text("\n".join(ids) + "\n")
    ref = _quiet(evaluate, _quiet(align, votes, path, pred_labels=list(NLI.names)))
    with dask.config.set(scheduler="synchronous"):
        got = _quiet(evaluate_dask, _HandVotes(votes, np.arange(50) % 3, 3), path,
                     pred_labels=list(NLI.names))
    _close(ref.to_dict(), got.to_dict())


def test_calibration_estimators_equal_in_memory_on_any_partitioning():
    """The calibration estimators of the ECE literature on Dask: the grid and sum states
    merge; the row-keeping ones (ece_sweep, tace) gather their rows through the generic tree
    reduction. Tie-heavy rows."""
    names = ["ece_sweep", "smooth_ece", "tace", "macro_ce", "kde_ece"]
    n, k = 60, 3
    votes = _votes(n=n, k=k, seed=11)
    probs = _probs(n, k, 11)
    probs[:8] = np.eye(k)[np.random.default_rng(11).integers(0, k, 8)]
    frame = _frame(votes.item_ids, probs, list(votes.labels.names))
    for npart, part_of in ((1, np.zeros(n, dtype=int)), (5, np.arange(n) % 5)):
        with dask.config.set(scheduler="synchronous"):
            ref, got = _both(votes, frame, part_of, npart, metrics=names, n_boot=20, seed=3)
        assert got.names == tuple(names)
        _close(ref.to_dict(), got.to_dict())
        for name in names:
            np.testing.assert_allclose(got.intervals[name].replicates,
                                       ref.intervals[name].replicates, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("by", [None, "agreement"])
def test_population_target_equals_in_memory(by):
    """``target="population"`` on Dask: every item's counts and probabilities gathered in the
    in-memory item order and the in-memory estimator (annokit.metrics.population) run on them:
    values, replicates and the chance row equal memory's to 1e-12; the same seed gives the same
    bytes."""
    n = 90
    votes = _votes(n, seed=21)
    frame = _frame(votes.item_ids, _probs(n, 3, 21), NLI.names)
    frame = frame.sample(frac=1.0, random_state=5)  # prediction rows in another order
    part_of = np.random.default_rng(6).integers(0, 4, n)
    with dask.config.set(scheduler="synchronous"):
        ref, got = _both(votes, frame, part_of, 4, n_boot=20, seed=8, by=by,
                         target="population")
        again = _quiet(evaluate_dask, _HandVotes(votes, part_of, 4), frame, n_boot=20, seed=8,
                       by=by, target="population")
    assert got.target == "population" and got.not_computed == ref.not_computed
    assert "ece" in got.not_computed and "jsd" in got.metrics
    _close(ref.to_dict(), got.to_dict())
    for name in ref.metrics:
        np.testing.assert_allclose(got.metrics[name], ref.metrics[name], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(got.intervals[name].replicates,
                                   ref.intervals[name].replicates, rtol=1e-12, atol=1e-15)
    assert json.dumps(got.to_dict()) == json.dumps(again.to_dict())
