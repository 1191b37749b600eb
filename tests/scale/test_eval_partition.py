"""The per-partition join of evaluate on Dask (annokit/scale/eval_partition.py, eval_predictions.py).

counts_part takes an item's key from its code (``DaskVotes.items["item"]``: ``item_keys`` of the
id as int64) instead of hashing the id again; these tests check that contract on votes read by
``read_votes_dask`` (text and numeric ids), the counts against ``Votes.counts``, and the join's
match by key then by id (a key shared by two ids is no match).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

from annokit.core.resample import item_keys  # noqa: E402
from annokit.core.votes import Votes  # noqa: E402
from annokit.errors import DataFormatError, SchemaError  # noqa: E402
from annokit.scale.eval_partition import counts_part, join_part  # noqa: E402
from annokit.scale.eval_predictions import read_predictions_dask  # noqa: E402
from annokit.scale.votes import read_votes_dask  # noqa: E402

LABELS = ["a", "b", "c"]


def _long(n: int, seed: int, ids: list) -> pd.DataFrame:
    counts = np.random.default_rng(seed).integers(0, 4, size=(n, 3))
    counts[:, 0] += 1
    long = Votes.from_counts(counts, labels=LABELS, item_ids=[str(i) for i in ids]).to_long()
    return long.assign(item=np.repeat(np.asarray(ids, dtype=object), counts.sum(axis=1)))


def _read(long: pd.DataFrame, tmp_path, bounds: list[int]):
    folder = tmp_path / "votes"
    folder.mkdir()
    code = pd.factorize(long["item"])[0]
    for i, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        long[(code >= lo) & (code < hi)].to_parquet(folder / f"part-{i}.parquet", index=False)
    with dask.config.set(scheduler="synchronous"):
        return read_votes_dask(folder, client=False)


@pytest.mark.parametrize("numeric", [False, True], ids=["text-ids", "integer-ids"])
def test_counts_rows_carry_each_items_key_and_the_in_memory_counts(tmp_path, numeric):
    ids = list(range(1000, 1040)) if numeric else [f"it{j:02d}" for j in range(40)]
    long = _long(40, 1, ids)
    dv = _read(long, tmp_path, [0, 13, 29, 40])
    memory = Votes.from_long(long.astype({"item": str}), labels=LABELS)
    want = dict(zip(memory.item_ids, memory.counts().tolist(), strict=True))
    with dask.config.set(scheduler="synchronous"):
        frames, items = dv.frame.to_delayed(), dv.items.to_delayed()
        parts = dask.compute(*[dask.delayed(counts_part)(f, i, 3) for f, i in
                               zip(frames, items, strict=True)])
        # the votes of a partition in any row order: counted alike
        mixed = dask.compute(*[dask.delayed(lambda f, i: counts_part(
            f.sample(frac=1, random_state=0), i, 3))(f, i) for f, i in
            zip(frames, items, strict=True)])
    rows = pd.concat(parts, ignore_index=True)
    got_ids = rows["item_id"].to_numpy(dtype=object)
    assert sorted(got_ids) == sorted(str(i) for i in ids)
    assert (rows["_key"].to_numpy() == item_keys(got_ids)).all()  # the key of the id's text
    got = dict(zip(got_ids, rows[["c0", "c1", "c2"]].to_numpy().tolist(), strict=True))
    assert got == want
    pd.testing.assert_frame_equal(pd.concat(mixed, ignore_index=True), rows)


def test_counts_refuse_votes_of_an_item_the_partition_does_not_list():
    frame = pd.DataFrame({"item": np.array([5, 5, 7], np.int64),
                          "annotator": np.full(3, -1, np.int32),
                          "label": np.zeros(3, np.int16)})
    items = pd.DataFrame({"item": np.array([5], np.int64), "item_id": ["x"],
                          "gold": np.full(1, -1, np.int16)})
    with pytest.raises(SchemaError, match=r"item code 7 has votes in a partition that does not "
                                          r"list it among its items \(DaskVotes.items must match "
                                          r"DaskVotes.frame\)"):
        counts_part(frame, items, 3)


def _counts(ids: list[str], counts: list[list[int]]) -> pd.DataFrame:
    keys = item_keys(np.asarray(ids, dtype=object))
    out = pd.DataFrame({"item": keys.view(np.int64), "item_id": pd.array(ids, dtype="string"),
                        "_key": keys})
    for j in range(3):
        out[f"c{j}"] = [row[j] for row in counts]
    out["_first"] = np.arange(len(ids), dtype=np.int64)
    return out


def _preds(ids: list[str], keys: np.ndarray, probs: np.ndarray) -> pd.DataFrame:
    out = pd.DataFrame({"item_id": pd.array(ids, dtype="string"), "_key": keys})
    for j in range(probs.shape[1]):
        out[f"p{j}"] = probs[:, j]
    return out


def test_join_matches_by_key_then_by_id():
    counts = _counts(["u", "v", "w"], [[3, 0, 0], [0, 2, 1], [1, 1, 4]])
    probs = np.array([[0.1, 0.2, 0.7], [0.6, 0.3, 0.1], [0.2, 0.5, 0.3]])
    perm = np.arange(3)
    # every item predicted, in another order: all kept, rows in the votes' order
    keys = counts["_key"].to_numpy()
    joined = join_part(counts, _preds(["w", "u", "v"], keys[[2, 0, 1]], probs), perms=[perm],
                       keep_dropped=True, k=3)
    assert joined.stats["models"][0]["n_matched"] == 3 and joined.n == 3
    np.testing.assert_array_equal(joined.probs[0], probs[[1, 2, 0]])
    assert list(joined.ids) == ["u", "v", "w"]
    # "x" carries v's key (two ids, one key): no match; v is missing, x an unmatched row
    joined = join_part(counts, _preds(["w", "u", "x"], keys[[2, 0, 1]], probs), perms=[perm],
                       keep_dropped=True, k=3)
    st = joined.stats["models"][0]
    assert (st["n_rows"], st["n_matched"], st["n_missing"]) == (3, 2, 1)
    assert list(st["missing_ids"]) == ["v"] and list(joined.ids) == ["u", "w"]
    np.testing.assert_array_equal(joined.probs[0], probs[[1, 0]])
    np.testing.assert_array_equal(joined.counts, [[3, 0, 0], [1, 1, 4]])
    # some keys not found at all, and a shared key among the found ones
    joined = join_part(counts, _preds(["x", "q"], np.array([keys[0], 99], np.uint64),
                                      probs[:2]), perms=[perm], keep_dropped=True, k=3)
    st = joined.stats["models"][0]
    assert (st["n_matched"], st["n_missing"], joined.n) == (0, 3, 0)
    assert list(st["missing_ids"]) == ["u", "v", "w"]


def test_prediction_ids_are_kept_as_the_files_strings_with_their_keys(tmp_path):
    ids = [f"item{j:04d}" for j in range(50)]
    probs = np.random.default_rng(3).dirichlet(np.ones(3), size=50)
    folder = tmp_path / "preds"
    folder.mkdir()
    for i in range(2):
        rows = slice(25 * i, 25 * (i + 1))
        pd.DataFrame({"item": ids[rows], **{f"prob_{n}": probs[rows, j]
                                             for j, n in enumerate(LABELS)}}).to_parquet(
            folder / f"part-{i}.parquet", index=False)
    with dask.config.set(scheduler="synchronous"):
        frame = read_predictions_dask(folder).frame.compute()
    assert frame["item_id"].tolist() == ids
    assert (frame["_key"].to_numpy() == item_keys(np.asarray(ids, dtype=object))).all()
    np.testing.assert_array_equal(frame[["p0", "p1", "p2"]].to_numpy(), probs)
    # a failed check names its row and partition (the row names are built for the message)
    bad = probs.copy()
    bad[30] = [0.5, 0.7, -0.2]
    pd.DataFrame({"item": ids[25:], **{f"prob_{n}": bad[25:, j] for j, n in
                                       enumerate(LABELS)}}).to_parquet(
        folder / "part-1.parquet", index=False)
    with pytest.raises(DataFormatError, match=r"^row 5 of partition 1 of .*part-0.parquet \(and "
                                              r"1 more\) \(item 'item0030'\): probs has a "
                                              r"negative value"), \
            dask.config.set(scheduler="synchronous"):
        read_predictions_dask(folder).frame.compute()
