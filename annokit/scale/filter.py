"""The audited annotator filter on Dask: rounds of scoring until a fixed point.

The rule is :func:`annokit.quality.filter.filter_annotators`' own: score the annotators
(:func:`annokit.scale.quality.annotator_scores_dask`), remove those below the threshold
(or the lowest ``top_fraction``, one round), score the remaining ones again, until a round
removes nobody. The audit has the same summary and removed-annotator rows; its per-item
rows are computed on the workers and only the affected items (fewer votes after the
filter) come to the client. The kept votes are written partitioned (a long table: item,
annotator, label), from the workers.
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.checks import check_open_unit, check_option
from annokit.core.divergence import tvd
from annokit.core.gold import GOLD_UNKNOWN, warn_unknown_gold_dropped
from annokit.core.jsonable import finite_or_none
from annokit.core.soft_labels import break_ties
from annokit.errors import DegenerateInputWarning, InvalidValueError
from annokit.io.atomic import write_text_atomic
from annokit.quality.filter import DEFAULT_THRESHOLDS, Audit, audit_rows, warn_unconverged
from annokit.scale.quality import annotator_scores_dask
from annokit.scale.stats import _part_counts
from annokit.scale.votes import DaskVotes
from annokit.scale.write import write_table_dask

__all__ = ["DaskAudit", "filter_annotators_dask"]


@dataclass
class DaskAudit(Audit):
    """An :class:`~annokit.quality.filter.Audit` whose ``items`` holds only the items the
    filter touched or left with too few votes; whole-data item totals are in ``item_totals``."""

    item_totals: dict[str, Any] | None = None

    def summary(self) -> dict[str, Any]:
        out = super().summary()
        t = self.item_totals or {}
        out.update({"n_items_before": t.get("n_items", 0),
                    "tvd_mean": finite_or_none(t["tvd_sum"] / t["n_kept"]) if t.get("n_kept")
                    else None,
                    "tvd_max": finite_or_none(t["tvd_max"]) if t.get("n_kept") else None})
        return out


def _keep_part(frame: pd.DataFrame, removed: np.ndarray) -> pd.DataFrame:
    return frame[~removed[frame["annotator"].to_numpy()]] if len(frame) else frame


def _items_part(items: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    return items[items["item"].isin(frame["item"])].reset_index(drop=True) if len(items) else items


def _audit_part(before: pd.DataFrame, after: pd.DataFrame, items: pd.DataFrame, k: int,
                min_votes: int) -> dict[str, Any]:
    cb, items = _part_counts(before, items, k)
    ca, _ = _part_counts(after, items, k)
    nb, na = cb.sum(axis=1), ca.sum(axis=1)
    kept = na > 0
    moved = np.full(len(nb), np.nan)
    if kept.any():
        moved[kept] = tvd(cb[kept] / nb[kept, None], ca[kept] / na[kept, None])
    mb = break_ties(cb == cb.max(axis=1, keepdims=True)) if len(cb) else np.zeros(0, int)
    ma = break_ties(ca == ca.max(axis=1, keepdims=True)) if len(ca) else np.zeros(0, int)
    rows = pd.DataFrame({"item": items["item_id"].to_numpy(dtype=object), "n_votes_before": nb,
                         "n_votes_after": na, "removed": ~kept,
                         "too_few_votes": kept & (na < min_votes), "tvd": moved,
                         "majority_changed": kept & (mb != ma)})
    affected = rows[(rows["n_votes_after"] < rows["n_votes_before"]) | rows["too_few_votes"]]
    return {"rows": affected, "n_items": len(rows), "n_kept": int(kept.sum()),
            "tvd_sum": float(np.nansum(moved)), "tvd_max": float(np.nanmax(moved))
            if kept.any() else float("nan")}


def _subset(votes: DaskVotes, removed: np.ndarray) -> DaskVotes:
    import dask
    import dask.dataframe as dd

    frames = [dask.delayed(_keep_part)(f, removed) for f in votes.frame.to_delayed()]
    items = [dask.delayed(_items_part)(i, f)
             for i, f in zip(votes.items.to_delayed(), frames, strict=True)]
    frame = dd.from_delayed(frames, meta=votes.frame._meta, verify_meta=False)
    item_frame = dd.from_delayed(items, meta=votes.items._meta, verify_meta=False)
    if votes.client is not None:
        frame, item_frame = votes.client.persist([frame, item_frame])
    sizes = votes.compute(*[dask.delayed(len)(f) for f in frame.to_delayed()],
                          *[dask.delayed(len)(i) for i in item_frame.to_delayed()])
    n = frame.npartitions
    return replace(votes, frame=frame, items=item_frame, n_votes=int(sum(sizes[:n])),
                   n_items=int(sum(sizes[n:])))


def _long_part(frame: pd.DataFrame, items: pd.DataFrame, names: np.ndarray,
               annotators: np.ndarray, gold: bool = False) -> pd.DataFrame:
    """The votes of one partition as :func:`annokit.io.votes_table` writes them: ``item``,
    ``annotator``, ``label`` and, for votes with gold, ``gold`` (blank for none)."""
    ids = items.set_index("item")
    rows = ids.loc[frame["item"]] if len(frame) else None
    out = pd.DataFrame({"item": rows["item_id"].to_numpy(dtype=object) if rows is not None
                        else np.zeros(0, dtype=object),
                        "annotator": annotators[frame["annotator"].to_numpy()],
                        "label": names[frame["label"].to_numpy()]})
    if gold:
        codes = rows["gold"].to_numpy().astype(np.int64) if rows is not None else \
            np.zeros(0, np.int64)
        out["gold"] = np.asarray([*names, ""], dtype=object)[np.maximum(codes, -1)]
    return out


def filter_annotators_dask(votes: DaskVotes, *, method: str, threshold: float | None = None,
                           top_fraction: float | None = None, min_votes: int = 2,
                           max_rounds: int = 20, rng: np.random.Generator | int | None = 0,
                           out: str | os.PathLike | None = None,
                           audit_path: str | os.PathLike | None = None,
                           out_format: str | None = None) -> tuple[DaskVotes, DaskAudit]:
    """Filter annotators on Dask; write the kept votes (in ``out_format``, the CLI's
    ``--out-format``, when given: ``parquet`` a dataset) and the audit.

    ``out``: one ``.csv`` / ``.tsv`` / ``.jsonl`` file with the columns the in-memory
    ``write_filtered`` writes (the votes grouped by item, items in hash order: the votes'
    own order is not kept across partitions), or a ``.parquet`` directory of Parquet parts
    (:func:`annokit.scale.write.write_table_dask`).

    ``method="gold"`` (ChaosNLI's rule, which includes runs of consecutive wrong answers in
    vote order) runs in memory only.
    """
    threshold = _check_options(method, threshold, top_fraction)
    votes.require_annotators("filtering annotators")  # refused before any work
    current, removed, rows, n_rounds, threshold, converged = _rounds(
        votes, method, threshold, top_fraction, max_rounds, rng)
    notes = [] if converged else [warn_unconverged(max_rounds)]
    affected, totals = _item_audit(votes, current, min_votes)
    before_active = int((table_active := _active(votes)).sum())
    after_active = int((~removed & table_active).sum())
    audit = DaskAudit(method=method, threshold=float(threshold) if threshold is not None
                      else float("nan"), top_fraction=top_fraction, rounds=n_rounds,
                      annotators=pd.DataFrame(rows, columns=["annotator", "n_votes", "score",
                                                             "threshold", "reason", "round"]),
                      items=affected, n_votes_before=votes.n_votes,
                      n_votes_after=current.n_votes, n_annotators_before=before_active,
                      n_annotators_after=after_active, min_votes=min_votes, notes=notes,
                      item_totals=totals)
    too_few = int(affected["too_few_votes"].sum())
    if too_few:
        warnings.warn(f"{too_few} item(s) have fewer than {min_votes} votes after filtering; "
                      "see audit.items_too_few_votes", DegenerateInputWarning, stacklevel=2)
    if out is not None:
        _write_kept(votes, current, out, out_format)
    if audit_path is not None:
        write_text_atomic(audit_path, audit.to_json())
    return current, audit


def _check_options(method: str, threshold: float | None, top_fraction: float | None
                   ) -> float | None:
    """The filter's options checked; the threshold (the method's default without either)."""
    check_option("method", method, ("ds", "onecoin", "mace", "agreement", "entropy"))
    if threshold is not None and top_fraction is not None:
        raise InvalidValueError("give either threshold or top_fraction, not both")
    if top_fraction is not None:
        check_open_unit("top_fraction", top_fraction)
    if top_fraction is None and threshold is None:
        threshold = DEFAULT_THRESHOLDS[method]
    if threshold is not None and not math.isfinite(threshold):
        raise InvalidValueError(f"threshold must be a finite number; got {threshold!r}")
    return threshold


def _rounds(votes: DaskVotes, method: str, threshold: float | None,
            top_fraction: float | None, max_rounds: int, rng: Any
            ) -> tuple[DaskVotes, np.ndarray, list[dict[str, Any]], int, float | None, bool]:
    """Score, flag and remove annotators round after round: the kept votes, the removed
    mask, the audit rows, the rounds run, the threshold used and whether nothing was left
    to flag."""
    ann_ids = votes.require_annotators("filtering annotators")
    n_ann = len(ann_ids)
    removed = np.zeros(n_ann, dtype=bool)
    rows: list[dict[str, Any]] = []
    current, converged, n_rounds = votes, False, 0
    for n_rounds in range(1, max_rounds + 1):
        table = annotator_scores_dask(current, method, rng=rng)
        scores = table["score"].to_numpy(dtype=np.float64)
        valid = np.isfinite(scores) & ~removed
        if top_fraction is not None:
            cand = np.flatnonzero(valid)
            k = min(math.ceil(top_fraction * len(cand)), len(cand))
            order = cand[np.argsort(scores[cand], kind="stable")][:k]
            flagged = np.zeros(n_ann, dtype=bool)
            flagged[order] = True
            threshold = float(scores[order].max()) if k else float("nan")
            reason = f"{method} score in the lowest {top_fraction:g} of annotators"
        elif threshold is not None:
            flagged = valid & (scores < threshold)
            reason = f"{method} score below {threshold:g}"
        else:  # the threshold defaults when no top_fraction is given
            raise ValueError("filter_annotators_dask: neither threshold nor top_fraction")
        if not flagged.any():
            converged = True
            break
        rows += audit_rows(ann_ids, flagged, table["n_votes"].to_numpy(), scores,
                           threshold, reason, n_rounds)
        removed |= flagged
        if removed.all():
            raise InvalidValueError(f"the {method} filter would remove every annotator; lower "
                                    "--threshold (Python: threshold=)")
        current = _subset(votes, removed)
        if top_fraction is not None:
            converged = True
            break
    return current, removed, rows, n_rounds, threshold, converged


def _item_audit(votes: DaskVotes, current: DaskVotes, min_votes: int
                ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The items the filter changed, and the totals over all items (from the partitions)."""
    import dask

    k = len(votes.labels)
    parts = votes.compute(*[dask.delayed(_audit_part)(b, a, i, k, min_votes) for b, a, i in
                            zip(votes.frame.to_delayed(), current.frame.to_delayed(),
                                votes.items.to_delayed(), strict=True)])
    affected = pd.concat([p["rows"] for p in parts], ignore_index=True)
    totals = {"n_items": sum(p["n_items"] for p in parts),
              "n_kept": sum(p["n_kept"] for p in parts),
              "tvd_sum": math.fsum(p["tvd_sum"] for p in parts),
              "tvd_max": max((p["tvd_max"] for p in parts if p["n_kept"]), default=float("nan"))}
    return affected, totals


def _write_kept(votes: DaskVotes, current: DaskVotes, out: str | os.PathLike,
                out_format: str | None) -> None:
    """The kept votes as the in-memory writer writes them (unknown gold blank, counted)."""
    import dask
    import dask.dataframe as dd

    names = np.asarray(votes.labels.names, dtype=object)
    ann = np.asarray(votes.annotator_ids, dtype=object)
    pairs = zip(current.frame.to_delayed(), current.items.to_delayed(), strict=True)
    long = [dask.delayed(_long_part)(f, i, names, ann, votes.has_gold) for f, i in pairs]
    meta = _long_part(votes.frame._meta, votes.items._meta, names, ann, votes.has_gold)
    if votes.has_gold:  # as the in-memory writer: unknown gold is written blank, counted
        unknown = votes.compute(*[dask.delayed(lambda i: int((i["gold"] == GOLD_UNKNOWN)
                                                             .sum()))(i)
                                  for i in current.items.to_delayed()])
        warn_unknown_gold_dropped(np.full(sum(unknown), GOLD_UNKNOWN), votes.source)
    write_table_dask(dd.from_delayed(long, meta=meta, verify_meta=False), out,
                     client=votes.client, format=out_format)


def _active(votes: DaskVotes) -> np.ndarray:
    import dask

    n_ann = len(votes.require_annotators("filtering annotators"))
    counts = votes.compute(*[dask.delayed(lambda f: np.bincount(
        f["annotator"].to_numpy(), minlength=n_ann))(f) for f in votes.frame.to_delayed()])
    return np.sum(counts, axis=0) > 0
