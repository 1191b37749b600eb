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

from annokit.core.resample import item_keys
from annokit.scale.client import shuffle_method
from annokit.scale.progress import compute, persist

__all__ = ["co_partition", "routes"]


def _vote_keys(items: pd.DataFrame) -> np.ndarray:
    """A votes partition's item keys, sorted (the ``_key`` of its counts rows)."""
    ids = np.asarray(items["item_id"].astype(str).to_numpy(dtype=object), dtype=object)
    return np.sort(item_keys(ids)) if ids.size else np.zeros(0, np.uint64)


def _pred_keys(frame: pd.DataFrame) -> np.ndarray:
    """A prediction partition's item keys, sorted."""
    return np.sort(frame["_key"].to_numpy(dtype=np.uint64))


def routes(vote_keys: Sequence[np.ndarray], pred_keys: Sequence[np.ndarray]
           ) -> np.ndarray | None:
    """For each prediction partition, the votes partition holding all of its items (-1: an
    empty partition); None when one prediction partition has items of several votes
    partitions or an item without votes, or two votes partitions share a key.

    Examples
    --------
    >>> k = lambda *v: np.array(v, dtype=np.uint64)
    >>> routes([k(1, 5), k(2, 9)], [k(2, 9), k(), k(1, 5, 5)]).tolist()
    [1, -1, 0]
    >>> routes([k(1, 5), k(2, 9)], [k(1, 2)]) is None  # spans two votes partitions
    True
    """
    if not len(vote_keys):
        return None
    keys = np.concatenate([np.asarray(v, dtype=np.uint64) for v in vote_keys])
    owner = np.repeat(np.arange(len(vote_keys)), [len(v) for v in vote_keys])
    order = np.argsort(keys, kind="stable")
    keys, owner = keys[order], owner[order]
    if not keys.size or (keys[1:] == keys[:-1]).any():
        return None
    out = np.full(len(pred_keys), -1, dtype=np.int64)
    for p, ks in enumerate(pred_keys):
        if not len(ks):
            continue
        pos = np.minimum(np.searchsorted(keys, ks), keys.size - 1)
        if not (keys[pos] == ks).all():
            return None
        mine = owner[pos]
        if (mine != mine[0]).any():
            return None
        out[p] = mine[0]
    return out


def _concat(meta: pd.DataFrame, *parts: pd.DataFrame) -> pd.DataFrame:
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
