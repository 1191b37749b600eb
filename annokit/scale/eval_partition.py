"""The per-partition work of :func:`annokit.scale.evaluate.evaluate_dask`.

Every function here runs on a worker on one partition and returns something
small (statistics, metric states) or writes a file; nothing per vote or per
item goes back to the client. A partition is whatever the shuffle by item key
left in it: possibly no item, one item, or items of one label only.

* :func:`counts_part` turns a partition of votes (and its items) into one row
  per item: ``item`` code, ``item_id``, ``_key`` and the counts ``c0 ..``.
* :func:`join_part` joins those rows with each model's prediction rows of the
  same shuffle partition (same item keys land in the same partition), as
  :func:`annokit.metrics.records.align` does for all items at once.
* :func:`part_stats` gives what the client checks before evaluating (missing
  and unmatched items, duplicates, ties, human-entropy values, the confusion of
  file columns with the majority for the label-order checks).
* :func:`part_states` fills the metric states of the engine
  (:class:`annokit.metrics.engine.EvalPlan`) for the point estimates and for
  chunks of bootstrap replicates; :func:`merge` adds two such results.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.labels import LabelSet
from annokit.core.resample import poisson_weights
from annokit.core.soft_labels import (
    DEFAULT_TIES,
    TiePolicy,
    distributions,
    majority,
)
from annokit.errors import SchemaError
from annokit.io.atomic import output_error
from annokit.metrics.engine import EvalPlan, per_item_frame
from annokit.metrics.records import AlignedRecords, agreement_entropy

#: Ids of missing items kept per partition when they are not all needed (messages show 5).
_SHOWN = 5


def counts_part(frame: pd.DataFrame, items: pd.DataFrame, k: int) -> pd.DataFrame:
    """Vote counts of the items of one partition: ``item``, ``item_id``, ``_key``, ``c0 ..``.

    An item's code is already its key (``DaskVotes.items["item"]``: ``item_keys`` of the id
    as int64), so ``_key`` is the code's bits and no id is hashed again; the ids keep the
    votes' (Arrow) strings.
    """
    codes = items["item"].to_numpy(dtype=np.int64)
    ids = items["item_id"]
    if not isinstance(ids.dtype, pd.StringDtype):  # ids read as numbers: their text
        ids = ids.astype(str)
    n = codes.size
    voted = frame["item"].to_numpy(dtype=np.int64)
    # an item's votes are consecutive rows (DaskVotes.frame is sorted by item): each run of
    # equal codes is looked up once, not each vote
    starts = np.flatnonzero(np.concatenate([[True], voted[1:] != voted[:-1]])) if voted.size \
        else np.zeros(0, np.int64)
    run = pd.Index(codes).get_indexer(voted[starts])
    if (run < 0).any():
        bad = int(voted[starts][np.argmax(run < 0)])
        raise SchemaError(f"item code {bad} has votes in a partition that does not list it "
                          "among its items (DaskVotes.items must match DaskVotes.frame)")
    local = np.repeat(run.astype(np.int64), np.diff(starts, append=voted.size))
    flat = local * k + frame["label"].to_numpy(dtype=np.int64)
    counts = np.bincount(flat, minlength=n * k).reshape(n, k)
    out = pd.DataFrame({"item": codes, "item_id": ids.array, "_key": codes.view(np.uint64)})
    for j in range(k):
        out[f"c{j}"] = counts[:, j]
    # the first-seen order of the in-memory reader (DaskVotes.items["first"]; else the codes)
    out["_first"] = items["first"].to_numpy(dtype=np.int64) if "first" in items else codes
    return out


@dataclass
class Joined:
    """The vote items of one partition with their predictions (see :func:`join_part`).

    ``codes``, ``ids`` (an array-like of str), ``keys``, ``counts`` are for the items kept
    (those the first model predicts); ``probs[m]`` are model ``m``'s rows of them in the
    votes' label order (None when the label order is not known yet);
    ``file_probs[m]`` model ``m``'s matched rows in file column order, with
    ``file_has[m]`` the mask of all vote items it predicts. ``first``: the kept items'
    first-seen positions (the in-memory item order).
    """

    codes: np.ndarray
    ids: np.ndarray
    keys: np.ndarray
    counts: np.ndarray
    probs: list[np.ndarray | None]
    stats: dict[str, Any]
    first: np.ndarray | None = None

    @property
    def n(self) -> int:
        return int(self.codes.size)


def _objects(ids: Any) -> np.ndarray:
    return np.asarray(ids.to_numpy(dtype=object) if hasattr(ids, "to_numpy") else ids,
                      dtype=object)


def _same_ids(pos: np.ndarray, pid: Any, ids: Any) -> None:
    """Unmatch (``pos`` -1) the rows whose key matched a prediction of another id: a key
    shared by two ids is no match (the ids compared as Arrow strings, not Python ones)."""
    found = pos >= 0
    if found.all():
        same = np.asarray(pid.take(pos) == ids, dtype=bool)
        pos[~same] = -1
    elif found.any():
        same = np.asarray(pid.take(pos[found]) == ids[found], dtype=bool)
        pos[np.flatnonzero(found)[~same]] = -1


def _duplicates(ids: np.ndarray) -> tuple[int, Any]:
    dup = pd.Series(ids, dtype=object).duplicated(keep=False).to_numpy()
    if not dup.any():
        return 0, None
    return int(pd.Series(ids[dup], dtype=object).nunique()), ids[np.argmax(dup)]


def _missing(first: np.ndarray, ids: np.ndarray, keep_all: bool) -> tuple[np.ndarray, np.ndarray]:
    """First-seen positions and ids of missing items, all or the first few, in first-seen order
    (the in-memory item order: ``align`` lists and names them in that order)."""
    if keep_all or first.size <= _SHOWN:
        order = np.argsort(first, kind="stable")
    else:  # a few of many (every item of a partition, for the messages): no full sort
        few = np.argpartition(first, _SHOWN)[:_SHOWN]  # positions are distinct: no ties
        order = few[np.argsort(first[few], kind="stable")]
    return first[order], ids[order]


def join_part(counts: pd.DataFrame, *preds: pd.DataFrame, perms: list[np.ndarray | None],
              keep_dropped: bool, k: int) -> Joined:
    """Join one shuffle partition of item counts with each model's predictions (by item id)."""
    codes = counts["item"].to_numpy(dtype=np.int64, copy=True)  # not a view of the frame
    ids = counts["item_id"].array  # the votes' strings (Arrow), not one Python str per id
    keys = codes.view(np.uint64)  # an item's code is its key (counts_part's ``_key``)
    cmat = counts[[f"c{j}" for j in range(k)]].to_numpy(dtype=np.int64).reshape(-1, k)
    first = counts["_first"].to_numpy(dtype=np.int64) if "_first" in counts else codes
    models: list[dict[str, Any]] = []
    has_list, rows_list = [], []
    for df in preds:
        pid = df["item_id"].array
        width = sum(1 for c in df.columns if c.startswith("p") and c[1:].isdigit())
        pm = df[[f"p{j}" for j in range(width)]].to_numpy(dtype=np.float64).reshape(-1, width)
        pkeys = pd.Index(df["_key"].to_numpy(dtype=np.uint64))
        # distinct keys mean distinct ids (one id, one key): rows matched by key, then by id
        by_key = pkeys.is_unique
        n_dup, dup_id = (0, None) if by_key else _duplicates(_objects(pid))
        st: dict[str, Any] = {"n_rows": len(pid), "n_dup": n_dup, "dup_id": dup_id}
        if n_dup:
            has = np.zeros(codes.size, dtype=bool)
            pos = np.full(codes.size, -1)
        elif by_key and len(pid):
            pos = pkeys.get_indexer(pd.Index(keys))
            _same_ids(pos, pid, ids)
            has = pos >= 0
        else:
            pos = pd.Index(_objects(pid)).get_indexer(pd.Index(_objects(ids))) if len(pid) \
                else np.full(codes.size, -1)
            has = pos >= 0
        every = bool(has.all())  # the common case: no row of the partition is masked
        st["n_matched"] = int(has.sum())
        st["n_missing"] = int((~has).sum())
        st["missing_first"], st["missing_ids"] = _missing(first[~has], ids[~has], keep_dropped)
        # confusion of the file's arg-max column with the untied human majority (label checks)
        maj = majority(cmat if every else cmat[has], ties=DEFAULT_TIES)
        untied = ~maj.is_tied
        top = pm.argmax(axis=1)[pos if every else pos[has]]
        cell = top[untied] * k + maj.labels[untied]
        st["confusion"] = np.bincount(cell, minlength=width * k).reshape(width, k)
        models.append(st)
        has_list.append(has)
        rows_list.append((pos, pm))
    keep: Any = has_list[0] if has_list else np.ones(codes.size, dtype=bool)
    for m, has in enumerate(has_list):
        models[m]["n_not_in_first"] = int((keep & ~has).sum())
    if keep.all():  # every vote item kept (the common case): views of the arrays, not copies
        keep = slice(None)
    probs: list[np.ndarray | None] = []
    for m, (pos, pm) in enumerate(rows_list):
        perm = perms[m]
        ok = perm is not None and models[m]["n_not_in_first"] == 0 and not models[m]["n_dup"]
        probs.append(pm[pos[keep]][:, perm] if ok else None)
    # the ids kept as the counts hold them (Arrow strings: about 17 bytes an id, not 70)
    return Joined(codes[keep], counts["item_id"].array[keep], keys[keep], cmat[keep], probs,
                  {"models": models, "n_vote_items": int(codes.size),
                   "vote_first": _missing(first, ids, False)}, first[keep])


def part_stats(joined: Joined, ties: TiePolicy) -> dict[str, Any]:
    """What the client checks and bins by: model stats, ties, human-entropy value counts."""
    out = dict(joined.stats)
    if joined.n:
        maj = majority(joined.counts, ties=ties)
        out["n_ties"] = maj.n_ties
        h = agreement_entropy(distributions(joined.counts))
        out["entropy_values"], out["entropy_counts"] = np.unique(h, return_counts=True)
    else:
        out["n_ties"] = 0
        out["entropy_values"], out["entropy_counts"] = np.zeros(0), np.zeros(0, dtype=np.int64)
    out["n_kept"] = out["max_part"] = joined.n
    return out


def merge_stats(*parts: dict[str, Any], keep_dropped: bool) -> dict[str, Any]:
    """Add several partitions' (or subtrees') statistics."""
    out = parts[0]
    for p in parts[1:]:
        out = _merge_two_stats(out, p, keep_dropped)
    return out


def _merge_two_stats(a: dict[str, Any], b: dict[str, Any], keep_dropped: bool) -> dict[str, Any]:
    models = []
    for x, y in zip(a["models"], b["models"], strict=True):
        st = {key: x[key] + y[key] for key in ("n_rows", "n_dup", "n_matched", "n_missing",
                                               "n_not_in_first", "confusion")}
        st["dup_id"] = x["dup_id"] if x["dup_id"] is not None else y["dup_id"]
        first = np.concatenate([x["missing_first"], y["missing_first"]])
        ids = np.concatenate([x["missing_ids"], y["missing_ids"]])
        st["missing_first"], st["missing_ids"] = _missing(first, ids, keep_dropped)
        models.append(st)
    vf = _missing(np.concatenate([a["vote_first"][0], b["vote_first"][0]]),
                  np.concatenate([a["vote_first"][1], b["vote_first"][1]]), False)
    values, inverse = np.unique(np.concatenate([a["entropy_values"], b["entropy_values"]]),
                                return_inverse=True)
    counts = np.bincount(inverse, weights=np.concatenate([a["entropy_counts"],
                                                          b["entropy_counts"]]),
                         minlength=values.size).astype(np.int64)
    return {"models": models, "n_vote_items": a["n_vote_items"] + b["n_vote_items"],
            "vote_first": vf, "n_ties": a["n_ties"] + b["n_ties"], "n_kept": a["n_kept"] +
            b["n_kept"], "max_part": max(a["max_part"], b["max_part"]),
            "entropy_values": values, "entropy_counts": counts}


@dataclass(frozen=True)
class StateSpec:
    """What :func:`part_states` fills: metrics, options, groups, replicate chunks.

    ``edges``: human-entropy bin edges of ``by="agreement"`` (None: no groups);
    ``chunks``: replicate ranges for the constant-size states (``names_boot``);
    ``adaptive_chunk``: one replicate range for the states that keep every item
    (``names_adaptive``), filled alone so that only that chunk's weights are held.
    """

    names: tuple[str, ...]
    options: dict[str, dict[str, Any]]
    ties: TiePolicy
    edges: np.ndarray | None = None
    baselines: bool = False
    seed: int = 0
    names_boot: tuple[str, ...] = ()
    chunks: tuple[tuple[int, int], ...] = ()
    names_adaptive: tuple[str, ...] = ()
    adaptive_chunk: tuple[int, int] | None = None
    point: bool = True


def partition_plan(joined: Joined, spec: StateSpec, names: tuple[str, ...],
                   probs: list[np.ndarray], grouped: bool) -> EvalPlan:
    """The engine's plan for the partition's rows: human labels, groups (``grouped``: all items,
    then the agreement bins of ``spec.edges``) and one batch."""
    soft = distributions(joined.counts)
    hard = majority(joined.counts, ties=spec.ties).labels
    groups: list[np.ndarray | None] = [None]
    if grouped and spec.edges is not None:
        h = agreement_entropy(soft)
        nb = spec.edges.size - 1
        index = np.clip(np.searchsorted(spec.edges, h, side="right") - 1, 0, nb - 1)
        groups += [np.flatnonzero(index == b) for b in range(nb)]
    n = joined.n
    return EvalPlan(probs, soft, hard, names, spec.options, groups, [(0, n)] if n else [])


def model_probs(joined: Joined) -> list[np.ndarray] | None:
    """Each model's rows of the partition's items; None when a model's check failed."""
    probs = [p for p in joined.probs if p is not None]
    return probs if len(probs) == len(joined.probs) else None


def baseline_probs(joined: Joined) -> list[np.ndarray]:
    """The chance (uniform) and oracle (human distribution) rows of the partition's items."""
    soft = distributions(joined.counts)
    return [np.full_like(soft, 1.0 / soft.shape[1]), soft.copy()]


def part_states(joined: Joined, spec: StateSpec) -> dict[str, Any]:
    """The partition's metric states: ``point``, ``baselines``, ``boot`` (per chunk), ``adaptive``.

    Each is ``[model][group] -> list of states (one per name) or None`` (no rows),
    exactly what the in-memory engine builds for a batch of rows.
    """
    probs = model_probs(joined)
    out: dict[str, Any] = {}
    if probs is None:  # a failed check: the client raises from the statistics
        return out
    if spec.point:
        out["point"] = partition_plan(joined, spec, spec.names, probs, True).fill(
            lambda lo, hi: None)
        if spec.baselines:
            out["baselines"] = partition_plan(joined, spec, spec.names, baseline_probs(joined),
                                     False).fill(lambda lo, hi: None)
    if spec.chunks and spec.names_boot:
        plan = partition_plan(joined, spec, spec.names_boot, probs, True)

        def replicates(a: int, b: int) -> Callable[[int, int], np.ndarray]:
            """The Poisson weights of replicates ``a:b`` for the rows ``lo:hi``."""
            return lambda lo, hi: poisson_weights(joined.keys[lo:hi], spec.seed, a, b)

        out["boot"] = [plan.fill(replicates(a, b)) for a, b in spec.chunks]
    if spec.adaptive_chunk is not None and spec.names_adaptive:
        a, b = spec.adaptive_chunk
        plan = partition_plan(joined, spec, spec.names_adaptive, probs, True)
        out["adaptive"] = plan.fill(lambda lo, hi: poisson_weights(joined.keys[lo:hi],
                                                                   spec.seed, a, b))
    return out


def _merge_acc(a: Any, b: Any) -> Any:
    """Merge ``[model][group] -> states | None`` nests (``a`` is a private copy)."""
    for row_a, row_b in zip(a, b, strict=True):
        for g, (sa, sb) in enumerate(zip(row_a, row_b, strict=True)):
            if sb is None:
                continue
            if sa is None:
                row_a[g] = copy.deepcopy(sb)
            else:
                for x, y in zip(sa, sb, strict=True):
                    x.merge(y)
    return a


def merge(*parts: dict[str, Any]) -> dict[str, Any]:
    """Merge the :func:`part_states` of several partitions (their inputs are not changed)."""
    out = copy.deepcopy(parts[0])
    for p in parts[1:]:
        for key, val in p.items():
            if key not in out:
                out[key] = copy.deepcopy(val)
            elif key == "boot":
                out[key] = [_merge_acc(x, y) for x, y in zip(out[key], val, strict=True)]
            else:
                out[key] = _merge_acc(out[key], val)
    return out


def _stub(names: tuple[str, ...], options: dict[str, dict[str, Any]]) -> EvalPlan:
    """A plan over no rows, used only to turn merged states into values."""
    no_rows = np.empty(0)
    return EvalPlan([], no_rows, no_rows, names, options, [], [])


def values(merged: dict[str, Any], spec: StateSpec) -> dict[str, Any]:
    """Metric values of merged states: arrays ``[model, group, name(, replicate, 3)]`` (with
    replicates, each metric's value and bound statistics: ``EvalPlan.values``)."""
    out: dict[str, Any] = {}
    for key, names in (("point", spec.names), ("baselines", spec.names)):
        if key in merged:
            stub = _stub(names, spec.options)
            out[key] = np.array([[stub.values(st, None) for st in row] for row in merged[key]])
    if "boot" in merged:
        stub = _stub(spec.names_boot, spec.options)
        out["boot"] = [np.array([[stub.values(st, b - a) for st in row] for row in acc])
                       for (a, b), acc in zip(spec.chunks, merged["boot"], strict=True)]
    if "adaptive" in merged:
        if spec.adaptive_chunk is None:  # part_states keeps adaptive states for a range only
            raise ValueError("adaptive states without their replicate range")
        a, b = spec.adaptive_chunk
        stub = _stub(spec.names_adaptive, spec.options)
        out["adaptive"] = np.array([[stub.values(st, b - a) for st in row]
                                    for row in merged["adaptive"]])
    return out


def write_per_item(joined: Joined, directory: str, part: int, *, labels: LabelSet,
                   names: tuple[str, ...], options: dict[str, dict[str, Any]], ties: TiePolicy,
                   models: list[str | None], order: bool = False) -> int:
    """Write the partition's per-item rows (the columns of ``EvaluationResult.per_item``).

    ``order``: add the items' first-seen positions as ``_first``.

    One Parquet file per partition (``part.<i>.parquet``), in ``<directory>/<model>/``
    with several models. Returns the rows written.
    """
    counts = joined.counts
    maj = majority(counts, ties=ties)
    for m, model in enumerate(models):
        folder = Path(directory) if model is None else Path(directory) / str(model)
        folder.mkdir(parents=True, exist_ok=True)
        probs = joined.probs[m] if joined.n else np.zeros((0, len(labels)))
        if probs is None:  # per-item rows are written after every check passed
            raise ValueError(f"partition {part}: model {model!r} has no rows")
        rec = AlignedRecords(item_ids=np.asarray(joined.ids, dtype=object), labels=labels,
                             probs=probs,
                             counts=counts, human=distributions(counts) if joined.n else
                             np.zeros((0, len(labels))), majority=maj)
        frame = per_item_frame(rec, maj, names, options)
        if order:  # the items' first-seen positions, to sort one output file by
            frame["_first"] = joined.first if joined.first is not None else joined.codes
        path = folder / f"part.{part:05d}.parquet"
        try:
            frame.to_parquet(path, index=False)
        except OSError as exc:
            raise output_error(path, exc) from None
    return joined.n
