"""Bringing each item's vote counts and prediction rows into one partition, for evaluate on Dask.

:func:`co_partition` returns, for every joined partition, the partition of item counts and
each model's prediction rows of the same items. When every prediction partition holds items
of one votes partition only (the common case: predictions written in the item order of the
votes, or one prediction file per votes file), the prediction partitions are routed to that
votes partition and nothing is shuffled: the counts stay where the votes are. Otherwise the
counts and the predictions are shuffled by item key into the same partitions.

Routing is decided exactly from the partitions' sorted item keys
(:func:`annokit.core.resample.item_keys` of the ids): a prediction partition is routed only
when every one of its keys is an item of one votes partition, so every prediction row of an
item (duplicates included) lands where the shuffle would put it beside that item's counts,
and the per-partition join (:func:`annokit.scale.eval_partition.join_part`) sees the same
rows. A prediction row of an item without votes, or a prediction partition spanning several
votes partitions, falls back to the shuffle.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from annokit.scale.client import shuffle_method
from annokit.scale.progress import compute, persist

__all__ = ["co_partition", "item_positions", "routes", "rows_per_partition"]


def _vote_keys(items: pd.DataFrame) -> np.ndarray:
    """A votes partition's item keys, sorted (the ``_key`` of its counts rows): an item's code
    is its key (``DaskVotes.items["item"]``, ``item_keys`` of the id as int64)."""
    return np.sort(items["item"].to_numpy(dtype=np.int64).view(np.uint64))


def _pred_keys(frame: pd.DataFrame) -> np.ndarray:
    """A prediction partition's item keys, sorted."""
    return np.sort(frame["_key"].to_numpy(dtype=np.uint64))


def routes(vote_keys: Sequence[np.ndarray], pred_keys: Sequence[np.ndarray]
           ) -> np.ndarray | None:
    """For each prediction partition, the votes partition holding all of its items (-1: an
    empty partition); None when one prediction partition has items of several votes
    partitions or an item without votes, or two votes partitions share a key.

    A prediction partition's candidate is the votes partition holding its first key; it is
    routed there when every one of its keys is found there (the votes partitions share no
    key, so no other partition holds any of them): one search per key within one partition,
    no sort of all the keys together beyond the merge of the sorted runs that finds shared
    keys.

    Examples
    --------
    >>> k = lambda *v: np.array(v, dtype=np.uint64)
    >>> routes([k(1, 5), k(2, 9)], [k(2, 9), k(), k(1, 5, 5)]).tolist()
    [1, -1, 0]
    >>> routes([k(1, 5), k(2, 9)], [k(1, 2)]) is None  # spans two votes partitions
    True
    """
    votes = [_sorted(v) for v in vote_keys]
    if not votes or not sum(v.size for v in votes):
        return None
    merged = np.sort(np.concatenate(votes), kind="stable")  # sorted runs: a merge
    if (merged[1:] == merged[:-1]).any():
        return None
    preds = [np.asarray(ks, dtype=np.uint64) for ks in pred_keys]
    out = np.full(len(preds), -1, dtype=np.int64)
    full = np.flatnonzero([ks.size > 0 for ks in preds])
    firsts = np.array([preds[p][0] for p in full], dtype=np.uint64)
    for v, keys in enumerate(votes):  # the owner of each partition's first key
        if keys.size:
            out[full[_found(keys, firsts)]] = v
    for p in full:
        if out[p] < 0 or not _found(votes[out[p]], preds[p]).all():
            return None
    return out


def _sorted(keys: np.ndarray) -> np.ndarray:
    keys = np.asarray(keys, dtype=np.uint64)
    return keys if (keys[1:] >= keys[:-1]).all() else np.sort(keys)


def _found(keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Which of ``wanted`` are among the sorted, non-empty ``keys``."""
    return keys[np.minimum(np.searchsorted(keys, wanted), keys.size - 1)] == wanted


def _concat(meta: pd.DataFrame, *parts: pd.DataFrame) -> pd.DataFrame:
    if len(parts) == 1:  # the common case: one prediction partition per votes partition
        return parts[0]
    return pd.concat(parts, ignore_index=True) if parts else meta


def co_partition(counts: Any, items: Any, frames: Sequence[Any], *, client: Any,
                 npartitions: int) -> list[list[Any]]:
    """``[counts partitions, model 1's partitions, ...]`` (lists of Dask delayed objects of
    equal length) with every item's counts and prediction rows at the same position.

    ``counts``: one row per item (``_key`` column) in the votes' partitions, ``items`` the
    votes' items (``item_id``) in the same partitions; ``frames``: each model's prediction
    rows (``_key`` column), computed once and kept on the workers until the result is
    released (one row per item). See the module notes for when the shuffle is skipped.
    """
    import dask
    import dask.dataframe as dd
    from dask import delayed

    # the predictions are read and validated once, kept on the workers (one row per item)
    kept = [persist(client, list(f.to_delayed()), desc="reading predictions") for f in frames]
    vote_nodes = [delayed(_vote_keys)(i) for i in items.to_delayed()]
    pred_nodes = [[delayed(_pred_keys)(d) for d in parts] for parts in kept]
    found = compute(client, [vote_nodes, *pred_nodes], desc="matching predictions to votes")
    vote_keys, pred_keys = found[0], found[1:]
    plan = [routes(vote_keys, keys) for keys in pred_keys]
    if all(r is not None for r in plan):
        out = [list(counts.to_delayed())]
        for f, parts, route in zip(frames, kept, plan, strict=True):
            meta = f._meta
            out.append([delayed(_concat)(meta, *[parts[p] for p in np.flatnonzero(route == v)])
                        for v in range(len(vote_keys))])
        return out
    again = [dd.from_delayed(parts, meta=f._meta, verify_meta=False)
             for f, parts in zip(frames, kept, strict=True)]
    with dask.config.set({"dataframe.shuffle.method": shuffle_method(client)}):
        return [x.to_delayed() for x in
                [counts.shuffle("_key", npartitions=npartitions)]
                + [f.shuffle("_key", npartitions=npartitions) for f in again]]


def _item_codes(items: pd.DataFrame) -> np.ndarray:
    return items["item"].to_numpy(dtype=np.int64)


def item_positions(votes: Any, keys: np.ndarray, *, desc: str
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Where each of ``keys`` (item keys as int64) is among the votes' items, partition after
    partition (-1: not an item of the votes), and the partitions' numbers of items."""
    from dask import delayed

    per_part = compute(votes.client, [delayed(_item_codes)(p) for p in votes.items.to_delayed()],
                       desc=desc)
    sizes = np.array([len(p) for p in per_part], dtype=np.int64)
    all_keys = np.concatenate(per_part) if per_part else np.zeros(0, np.int64)
    # item keys are distinct across partitions: one lookup
    return pd.Index(all_keys).get_indexer(pd.Index(keys)), sizes


def rows_per_partition(pos: np.ndarray, rows: np.ndarray, sizes: np.ndarray
                       ) -> list[np.ndarray]:
    """The ``rows`` (positions of rows whose item is at ``pos[rows]``) of each partition, in
    row order (the client sends each partition the rows of its items)."""
    part_of = np.searchsorted(np.cumsum(sizes), pos[rows], side="right")
    order = np.argsort(part_of, kind="stable")
    bounds = np.searchsorted(part_of[order], np.arange(len(sizes) + 1))
    return [rows[order[bounds[p]:bounds[p + 1]]] for p in range(len(sizes))]
