"""Aggregation and annotator quality on Dask: the ``aggregate`` and ``annotators`` jobs.

:func:`aggregate_dask` gives the summary of :func:`annokit.quality.aggregate.aggregate`
(method, items, gold items, accuracy against gold, iterations, convergence, ties) and
writes the per-item table partitioned; :func:`annotator_scores_dask` gives the
per-annotator scores of :func:`annokit.quality.filter.annotator_scores` (annotators are
few: the scores come to the client). Per-annotator sums are reduced over partitions.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.checks import check_option
from annokit.core.gold import GoldAccuracy, gold_accuracy
from annokit.core.soft_labels import TiePolicy, majority
from annokit.errors import InvalidValueError, SchemaError
from annokit.quality.aggregate import Aggregation
from annokit.quality.filter import DEFAULT_THRESHOLDS, MIN_VERDICT_VOTES, chance_rescale
from annokit.quality.spammer import spammer_score
from annokit.scale.em import fit_dask
from annokit.scale.stats import _part_counts, alpha_influence_dask
from annokit.scale.votes import DaskVotes
from annokit.scale.write import write_table_dask

__all__ = ["DaskAggregation", "aggregate_dask", "annotator_scores_dask", "flag_annotators_dask"]

AGGREGATE_METHODS = ("mv", "ds", "onecoin", "mace")
SCORE_METHODS = ("ds", "onecoin", "mace", "agreement", "gold", "entropy")


@dataclass(frozen=True)
class DaskAggregation(Aggregation):
    """An :class:`~annokit.quality.aggregate.Aggregation` whose ``table`` is a dask DataFrame
    (on the workers) and ``estimator`` None; ``rows_written`` counts the rows written."""

    rows_written: int | None = None


def _mv_part(frame: pd.DataFrame, items: pd.DataFrame, names: list[str], ties: TiePolicy,
             soft: bool) -> pd.DataFrame:
    counts, items = _part_counts(frame, items, len(names))
    maj = majority(counts, ties=ties) if len(counts) else None
    table = pd.DataFrame({"item": items["item_id"].to_numpy(dtype=object)})
    codes = maj.labels if maj is not None else np.zeros(0, np.int64)
    table["label"] = np.asarray(names, dtype=object)[codes]
    table["tied"] = maj.is_tied if maj is not None else np.zeros(0, bool)
    if soft:
        with np.errstate(invalid="ignore"):
            p = counts / counts.sum(axis=1, keepdims=True)
        for k, name in enumerate(names):
            table[f"p_{name}"] = p[:, k]
    table["_gold"] = items["gold"].to_numpy().astype(np.int64)
    table["_code"] = codes
    table["_first"] = items["first"].to_numpy().astype(np.int64)
    return table


def _gold_tally(table: pd.DataFrame, names: list[str]) -> tuple[GoldAccuracy, int]:
    codes = table["_code"].to_numpy() if "_code" in table else \
        pd.Index(names).get_indexer(table["label"].to_numpy())
    tied = int(table["tied"].sum()) if "tied" in table else 0
    return gold_accuracy(codes, table["_gold"].to_numpy()), tied


def aggregate_dask(votes: DaskVotes, method: str = "mv", *, ties: TiePolicy = "first",
                   soft: bool = False, clamp_gold: bool = False,
                   rng: np.random.Generator | int | None = 0,
                   out: str | os.PathLike | None = None,
                   out_format: str | None = None) -> DaskAggregation:
    """One label per item on Dask; the table written to ``out`` when given (in
    ``out_format``, the CLI's ``--out-format``, when given: ``parquet`` a dataset).

    ``out``: one ``.csv`` / ``.tsv`` file, as the in-memory ``write_table`` writes it (the
    rows in the items' first-seen order), or a ``.parquet`` directory of Parquet parts
    (:func:`annokit.scale.write.write_table_dask`).

    Methods ``mv`` (ties ``first`` or ``report``: ``first_seen`` and ``random`` depend on
    the order of rows, which partitions do not keep), ``ds``, ``onecoin`` and ``mace``.
    """
    import dask
    import dask.dataframe as dd

    check_option("method", method, AGGREGATE_METHODS)
    names = list(votes.labels.names)
    parts = list(zip(votes.frame.to_delayed(), votes.items.to_delayed(), strict=True))
    if method == "mv":
        check_option("ties", ties, ("first", "report"))
        tables = [dask.delayed(_mv_part)(f, i, names, ties, soft) for f, i in parts]
        meta = _mv_part(votes.frame._meta, votes.items._meta, names, ties, soft)
        table = dd.from_delayed(tables, meta=meta, verify_meta=False)
        n_iter, converged, policy = 1, True, ties
    else:
        fit = fit_dask(votes, method, clamp_gold=clamp_gold,
                       **({"rng": rng} if method == "mace" else {}))
        table = fit.table  # gold and first-seen position alongside, one partition per worker
        if not soft:
            table = table.drop(columns=[f"p_{n}" for n in names])
        else:  # the in-memory column order: item, label, p_<label>...
            table = table[["item", "label"] + [f"p_{n}" for n in names] + ["_gold", "_first"]]
        n_iter, converged, policy = fit.n_iter_, fit.converged_, None
    if votes.client is not None:
        table = votes.client.persist(table)
    tallies = votes.compute(*[dask.delayed(_gold_tally)(t, names) for t in table.to_delayed()])
    acc = sum((t[0] for t in tallies), GoldAccuracy(0, 0, 0))
    n_ties = sum(t[1] for t in tallies) if method == "mv" else None
    ordered = table.drop(columns=[c for c in ("_gold", "_code") if c in table.columns])
    public = ordered.drop(columns=["_first"])
    written = None if out is None else write_table_dask(
        ordered, out, client=votes.client, for_people=True, order="_first", jsonl=False,
        format=out_format)
    return DaskAggregation(method=method, build_table=lambda: public, n_items=votes.n_items,
                           n_gold=acc.n_items, accuracy=acc.accuracy, tie_policy=policy,
                           n_ties=n_ties, n_iter=int(n_iter), converged=bool(converged),
                           estimator=None, n_gold_unknown=acc.n_unknown, rows_written=written)


def _annotator_sums(frame: pd.DataFrame, items: pd.DataFrame, n_ann: int,
                    n_labels: int) -> dict[str, np.ndarray]:
    """Per-annotator sums of one partition (the in-memory annotator_stats' terms)."""
    counts, items = _part_counts(frame, items, n_labels)
    keys = items["item"].to_numpy()
    order = np.argsort(keys, kind="stable")
    item = order[np.searchsorted(keys[order], frame["item"].to_numpy())] if len(frame) else \
        np.zeros(0, np.int64)
    ann = frame["annotator"].to_numpy().astype(np.int64)
    lab = frame["label"].to_numpy().astype(np.int64)
    m_v = counts.sum(axis=1)[item]
    shared = m_v >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        pair = np.where(shared, (counts[item, lab] - 1) / (m_v - 1), 0.0)
    gold = items["gold"].to_numpy().astype(np.int64)[item]
    on_gold = gold >= 0
    return {
        "n_votes": np.bincount(ann, minlength=n_ann),
        "agree_num": np.bincount(ann[shared], weights=pair[shared], minlength=n_ann),
        "agree_den": np.bincount(ann[shared], minlength=n_ann),
        "gold_num": np.bincount(ann[on_gold], weights=(lab == gold)[on_gold].astype(float),
                                minlength=n_ann),
        "gold_den": np.bincount(ann[on_gold], minlength=n_ann),
        "usage": np.bincount(ann * n_labels + lab, minlength=n_ann * n_labels).reshape(
            n_ann, n_labels),
    }


def annotator_scores_dask(votes: DaskVotes, method: str, *,
                          rng: np.random.Generator | int | None = 0) -> pd.DataFrame:
    """Per-annotator quality scores on Dask (higher is better; NaN without evidence).

    Returns a table ``annotator``, ``n_votes``, ``score`` in the annotators' code order.
    """
    import dask

    check_option("method", method, SCORE_METHODS)
    if votes.annotator_ids is None:
        raise SchemaError(f"annotator scores need annotator ids; {votes.source} has none")
    n_ann, n_labels = len(votes.require_annotators("annotator scores")), len(votes.labels)
    sums = votes.compute(*[dask.delayed(_annotator_sums)(f, i, n_ann, n_labels) for f, i in
                           zip(votes.frame.to_delayed(), votes.items.to_delayed(), strict=True)])
    total = {k: np.sum([s[k] for s in sums], axis=0) for k in sums[0]}
    n_votes = total["n_votes"]
    with np.errstate(invalid="ignore", divide="ignore"):
        if method == "ds":
            scores = spammer_score(fit_dask(votes, "ds").confusions_)
        elif method == "onecoin":
            scores = chance_rescale(fit_dask(votes, "onecoin").skills_, n_labels)
        elif method == "mace":
            scores = fit_dask(votes, "mace", rng=rng).competence_
        elif method == "agreement":
            den = total["agree_den"]
            scores = chance_rescale(np.where(den > 0, total["agree_num"] / den, np.nan),
                                     n_labels)
        elif method == "gold":
            if not total["gold_den"].any():
                raise InvalidValueError("method 'gold' needs gold labels; these votes have none")
            den = total["gold_den"]
            scores = np.where(den > 0, total["gold_num"] / den, np.nan)
        else:
            usage = total["usage"].astype(np.float64)
            p = usage / usage.sum(axis=1, keepdims=True)
            terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
            ent = -terms.sum(axis=1) / np.log(n_labels) if n_labels > 1 else np.zeros(n_ann)
            scores = np.where(n_votes > 0, np.maximum(ent, 0.0), np.nan)
    scores = np.where(n_votes > 0, scores, np.nan)
    return pd.DataFrame({"annotator": votes.annotator_ids.astype(object), "n_votes": n_votes,
                         "score": scores, "threshold": DEFAULT_THRESHOLDS.get(method)})


def flag_annotators_dask(votes: DaskVotes, method: str = "agreement", *,
                         threshold: float | None = None,
                         rng: np.random.Generator | int | None = 0,
                         min_votes: int = MIN_VERDICT_VOTES) -> Any:
    """:func:`annokit.quality.filter.flag_annotators` on Dask (an ``AnnotatorFlags``).

    ``method="gold"`` is refused: its rule also flags runs of consecutive wrong answers,
    which need the votes' order; score gold accuracy with :func:`annotator_scores_dask`.
    """
    from annokit.quality.common import with_influence
    from annokit.quality.filter import AnnotatorFlags

    if method == "gold":
        raise InvalidValueError("method 'gold' flags runs of consecutive wrong gold answers, "
                                "which need the order of the votes; it runs in memory only")
    table = annotator_scores_dask(votes, method, rng=rng)
    thr = DEFAULT_THRESHOLDS[method] if threshold is None else float(threshold)
    scores = table["score"].to_numpy(dtype=np.float64)
    flagged = np.isfinite(scores) & (scores < thr)
    reasons = np.full(len(flagged), None, dtype=object)
    reasons[flagged] = f"{method} score below {thr:g}"
    out = pd.DataFrame({"annotator": table["annotator"].astype(str),
                        "n_votes": table["n_votes"].astype(np.int64), "score": scores,
                        "flagged": flagged, "reason": list(reasons)})
    return AnnotatorFlags(method, thr, with_influence(out, alpha_influence_dask(votes))
                          ).with_min_votes(min_votes)
