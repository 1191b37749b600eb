"""Routing prediction partitions to the votes partitions of their items (annokit/scale/eval_join.py).

Each case runs ``evaluate_dask`` on hand-made partitions and compares the result with the
in-memory path ``evaluate(align(votes, predictions))``; a patched ``shuffle`` records whether the
shuffle by item key ran (it must not when every prediction partition lies within one votes
partition, and must otherwise).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from _shared import assert_close_documents

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

from annokit.core.votes import Votes  # noqa: E402
from annokit.errors import DataFormatError, DegenerateInputWarning  # noqa: E402
from annokit.io.predictions import Predictions  # noqa: E402
from annokit.metrics.engine import evaluate  # noqa: E402
from annokit.metrics.records import align  # noqa: E402
from annokit.metrics.workflow import EvaluateOptions  # noqa: E402
from annokit.scale.eval_join import routes  # noqa: E402
from annokit.scale.evaluate import evaluate_dask  # noqa: E402
from annokit.scale.votes import read_votes_dask  # noqa: E402

LABELS = ["a", "b", "c"]


def _votes(n: int, seed: int) -> Votes:
    counts = np.random.default_rng(seed).integers(0, 4, size=(n, 3))
    counts[:, 0] += 1
    return Votes.from_counts(counts, labels=LABELS, item_ids=[f"it{j:03d}" for j in range(n)])


def _preds(ids: list[str], seed: int) -> pd.DataFrame:
    probs = np.random.default_rng(seed).dirichlet(np.ones(3), size=len(ids))
    df = pd.DataFrame({"item": ids})
    for j, name in enumerate(LABELS):
        df[f"prob_{name}"] = probs[:, j]
    return df


def _dask_votes(votes: Votes, tmp_path, bounds: list[int]):
    """The votes as item-disjoint Parquet files (items ``bounds[i]:bounds[i+1]`` in file i)."""
    long = votes.to_long()
    code = pd.Index(votes.item_ids).get_indexer(long["item"])
    folder = tmp_path / "votes"
    folder.mkdir()
    for i, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        long[(code >= lo) & (code < hi)].to_parquet(folder / f"part-{i}.parquet", index=False)
    with dask.config.set(scheduler="synchronous"):  # not on a cluster another test started
        return read_votes_dask(folder, client=False)


_close = assert_close_documents


@pytest.fixture
def shuffles(monkeypatch):
    """How many times a Dask DataFrame was shuffled."""
    calls = []
    original = dd.DataFrame.shuffle

    def counted(self, *args, **kwargs):
        calls.append(args)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(dd.DataFrame, "shuffle", counted)
    return calls


def _run(votes, dv, parts: list[pd.DataFrame], **kwargs):
    whole = pd.concat(parts, ignore_index=True)
    preds = Predictions.from_arrays(whole["item"], probs=whole[[f"prob_{n}" for n in LABELS]]
                                    .to_numpy(), label_names=LABELS)
    frame = dd.from_map(lambda i: parts[i], range(len(parts)), meta=parts[0].iloc[:0],
                        enforce_metadata=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        ref = evaluate(align(votes, preds, on_missing=kwargs.get("on_missing", "error")),
                       **{k: v for k, v in kwargs.items() if k != "on_missing"})
        with dask.config.set(scheduler="synchronous"):
            got = evaluate_dask(dv, frame, EvaluateOptions(**kwargs))
    return ref, got


@pytest.mark.parametrize("n_boot", [0, 40])
def test_predictions_within_votes_partitions_are_routed_without_a_shuffle(tmp_path, shuffles,
                                                                           n_boot):
    votes = _votes(90, seed=1)
    dv = _dask_votes(votes, tmp_path, [0, 30, 55, 90])
    ids = list(votes.item_ids)
    # five prediction partitions, each within one votes file, in another order
    parts = [_preds(ids[55:90], 2), _preds(ids[10:30], 3), _preds(ids[30:55], 4),
             _preds(ids[0:10][::-1], 5)]
    ref, got = _run(votes, dv, parts, n_boot=n_boot, by="agreement")
    assert shuffles == []
    _close(ref.to_dict(), got.to_dict())


def test_predictions_spanning_votes_partitions_are_shuffled_as_before(tmp_path, shuffles):
    votes = _votes(60, seed=3)
    dv = _dask_votes(votes, tmp_path, [0, 20, 60])
    ids = list(votes.item_ids)
    parts = [_preds(ids[0:25], 6), _preds(ids[25:60], 7)]  # the first spans both files
    ref, got = _run(votes, dv, parts, n_boot=30)
    assert len(shuffles) == 2  # the counts and the one model's predictions
    _close(ref.to_dict(), got.to_dict())


def test_predictions_of_items_without_votes_are_counted_as_in_memory(tmp_path, shuffles):
    votes = _votes(40, seed=4)
    dv = _dask_votes(votes, tmp_path, [0, 20, 40])
    ids = list(votes.item_ids)
    parts = [_preds(ids[0:20], 8), _preds(ids[20:38] + ["stranger"], 9)]
    ref, got = _run(votes, dv, parts, on_missing="drop")
    assert len(shuffles) == 2
    _close(ref.to_dict(), got.to_dict())
    assert got.to_dict()["n_unmatched_predictions"] == 1


def test_an_id_in_two_routed_prediction_partitions_is_refused_as_in_memory(tmp_path):
    votes = _votes(30, seed=5)
    dv = _dask_votes(votes, tmp_path, [0, 15, 30])
    ids = list(votes.item_ids)
    parts = [_preds(ids[0:15], 10), _preds(ids[15:30], 11), _preds([ids[3]], 12)]
    frame = dd.from_map(lambda i: parts[i], range(3), meta=parts[0].iloc[:0],
                        enforce_metadata=False)
    with pytest.raises(DataFormatError, match=r"item id 'it003' appears more than once; 1 "
                                              r"duplicated id\(s\) in all"), \
            dask.config.set(scheduler="synchronous"):
        evaluate_dask(dv, frame)


def test_routes_need_every_key_in_one_votes_partition():
    k = lambda *v: np.array(v, dtype=np.uint64)  # noqa: E731
    assert routes([k(1, 5), k(2, 9)], [k(9), k(5, 1), k()]).tolist() == [1, 0, -1]
    assert routes([k(1, 5), k(2, 9)], [k(1, 9)]) is None  # two votes partitions
    assert routes([k(1, 5), k(2, 9)], [k(3)]) is None  # an item without votes
    assert routes([k(1, 5), k(5)], [k(1)]) is None  # a key in two votes partitions
    assert routes([], [k(1)]) is None


def _routes_oracle(vote_keys, pred_keys):
    """routes() by its definition: each key's owner among all votes partitions."""
    owner = {}
    for v, keys in enumerate(vote_keys):
        for key in keys.tolist():
            if key in owner:
                return None
            owner[key] = v
    out = []
    for keys in pred_keys:
        owners = {owner.get(key, -2) for key in keys.tolist()}
        if -2 in owners or len(owners) > 1:
            return None
        out.append(owners.pop() if owners else -1)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_routes_equal_their_definition_on_random_partitions(seed):
    rng = np.random.default_rng(seed)
    pool = rng.permutation(rng.integers(0, 2**64 - 1, size=60, dtype=np.uint64, endpoint=True))
    assert np.unique(pool).size == 60
    cuts = np.sort(rng.choice(np.arange(1, 50), size=3, replace=False))
    vote_keys = [np.sort(k) for k in np.split(pool[:50], cuts)]
    if seed % 4 == 1:  # a key in two votes partitions
        vote_keys[1] = np.sort(np.append(vote_keys[1], vote_keys[0][0]))
    pred_keys = []
    for _ in range(5):
        v = vote_keys[rng.integers(len(vote_keys))]
        ks = rng.choice(v, size=rng.integers(0, v.size + 1), replace=True)
        pred_keys.append(rng.permutation(ks))  # any order, repeats allowed
    if seed % 4 == 2:  # an item without votes, or items of two votes partitions
        pred_keys[-1] = np.append(pred_keys[-1], pool[55] if seed % 8 == 2 else vote_keys[0][-1])
    got = routes(vote_keys, pred_keys)
    want = _routes_oracle(vote_keys, pred_keys)
    assert (got if got is None else got.tolist()) == want
    # unsorted votes keys are sorted first
    shuffled = [rng.permutation(v) for v in vote_keys]
    again = routes(shuffled, pred_keys)
    assert (again if again is None else again.tolist()) == want
