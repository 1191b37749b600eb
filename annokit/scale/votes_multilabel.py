"""Multi-label votes in Dask partitions: each partition's responses, checked and counted.

Multi-label votes are read as in memory (``--multilabel``): a long table with one row per
ticked label, an (item, annotator) pair repeated once per label
(:func:`annokit.scale.votes.read_votes_dask` with ``duplicates="keep"``). Every item's votes
share a partition, so :func:`responses_part` checks and counts one partition's responses
with the in-memory code (:func:`annokit.core.multilabel.response_pairs`): the items' tick
counts, how many annotators answered each, the labels per response, and the repeated
(item, annotator, label) votes (an error, named as in memory by
:func:`check_responses`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.multilabel import repeated_ticks_error, response_pairs

__all__ = ["PartResponses", "check_responses", "item_codes", "merge_parts", "merge_repeated",
           "responses_part", "tree"]

#: Repeated votes named in the error.
SHOWN = 5

#: Partition results merged by one task of :func:`tree`.
FAN_IN = 8


@dataclass
class PartResponses:
    """One partition's multi-label responses (items in ascending key order).

    Attributes
    ----------
    keys : ndarray of int64, shape (m,)
        Item keys.
    item_ids : ndarray of str, shape (m,)
    first : ndarray of int64, shape (m,)
        Each item's first-seen position (``DaskVotes.items["first"]``).
    counts : ndarray of int64, shape (m, k)
        Annotators who ticked each label.
    n_responses : ndarray of int64, shape (m,)
        Annotators who answered each item.
    sizes : ndarray of int64
        Labels ticked in each response.
    n_repeated : int
        Repeated (item, annotator, label) votes (the rest is empty when some are).
    shown_repeated : list of tuple
        The first of them as (item id, annotator id, label name).
    """

    keys: np.ndarray
    item_ids: np.ndarray
    first: np.ndarray
    counts: np.ndarray
    n_responses: np.ndarray
    sizes: np.ndarray
    n_repeated: int
    shown_repeated: list[tuple]


def item_codes(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct item keys of a partition's votes (ascending) and each vote's code among
    them: one pass when the votes are sorted by item (as a ``DaskVotes`` partition is),
    else a sort."""
    keys = np.asarray(keys, dtype=np.int64)
    if keys.size and not (keys[1:] >= keys[:-1]).all():
        distinct, local = np.unique(keys, return_inverse=True)
        return distinct, local.reshape(-1).astype(np.int64)
    start = np.r_[True, keys[1:] != keys[:-1]] if keys.size else np.zeros(0, bool)
    return keys[start], np.cumsum(start, dtype=np.int64) - 1


def responses_part(frame: pd.DataFrame, items: pd.DataFrame, *, k: int, n_annotators: int,
                   labels: Any, annotator_ids: np.ndarray) -> PartResponses:
    """The :class:`PartResponses` of one partition (``frame`` and ``items`` of a
    :class:`~annokit.scale.votes.DaskVotes`, annotator codes ``0 .. n_annotators - 1``)."""
    distinct, local = item_codes(frame["item"].to_numpy(dtype=np.int64))
    label = frame["label"].to_numpy().astype(np.int64)
    pairs, sizes, rep = response_pairs(local * n_annotators + frame["annotator"].to_numpy(),
                                       label, k)
    pos = pd.Index(items["item"].to_numpy(dtype=np.int64)).get_indexer(distinct)
    ids = items["item_id"].to_numpy(dtype=object)[pos]
    first = items["first"].to_numpy(dtype=np.int64)[pos]
    m = len(distinct)
    if rep.size:
        pair, lab = rep // k, rep % k
        shown = [(ids[p // n_annotators], annotator_ids[p % n_annotators], labels.names[j])
                 for p, j in zip(pair[:SHOWN], lab[:SHOWN], strict=True)]
        empty = np.zeros(0, np.int64)
        return PartResponses(distinct, ids, first, np.zeros((0, k), np.int64), empty, empty,
                             int(rep.size), shown)
    counts = np.bincount(local * k + label, minlength=m * k).reshape(m, k)
    n_resp = np.bincount(pairs // n_annotators, minlength=m)
    return PartResponses(distinct, ids, first, counts, n_resp, sizes, 0, [])


def merge_repeated(parts: list[tuple[int, list[tuple]]]) -> tuple[int, list[tuple]]:
    """Total repeated votes and the first :data:`SHOWN` of them, from partitions' (count,
    shown) in partition order."""
    shown: list[tuple] = []
    for _, s in parts:
        shown = (shown + list(s))[:SHOWN]
    return sum(n for n, _ in parts), shown


def check_responses(source: str, n_repeated: int, shown: list[tuple]) -> None:
    """Raise the in-memory error for repeated (item, annotator, label) votes, if any."""
    if n_repeated:
        raise repeated_ticks_error(source, n_repeated, shown)


def merge_parts(*parts: dict[str, Any], summed: tuple[str, ...],
                rest: Callable[[dict[str, Any], dict[str, Any]], None] | None = None
                ) -> dict[str, Any]:
    """Merge the results of several partitions (or subtrees) of a multi-label pass.

    Each result holds ``repeated`` (its partition's repeated ticks, concatenated here in
    partition order) and, when its partition repeats no tick, ``n_items`` and the rest. Once
    some partition repeats a tick only the error is reported, so the merged result drops
    ``n_items`` (and nothing else is merged); otherwise the keys ``summed`` are added and
    ``rest(merged, part)`` merges the others in place.
    """
    out = dict(parts[0])
    for p in parts[1:]:
        out["repeated"] = out["repeated"] + p["repeated"]
        if "n_items" not in out or "n_items" not in p:
            out.pop("n_items", None)
            continue
        for key in summed:
            out[key] = out[key] + p[key]
        if rest is not None:
            rest(out, p)
    return out


def tree(nodes: list[Any], merge: Callable[..., dict[str, Any]]) -> Any:
    """The delayed reduction of partition results ``nodes`` by ``merge`` (up to
    :data:`FAN_IN` at a time)."""
    from dask import delayed

    while len(nodes) > 1:
        nodes = [delayed(merge)(*nodes[i:i + FAN_IN]) for i in range(0, len(nodes), FAN_IN)]
    return nodes[0]
