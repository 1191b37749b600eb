"""Statistics of multi-label votes on Dask: the dictionary of
:func:`annokit.quality.dataset_stats.multilabel_stats`.

Each partition checks and counts its responses (:func:`annokit.scale.votes_multilabel.
responses_part`) and returns small sums: histograms of the responses per item, of the
majority-set sizes, ticks, majority and tied items per label, and for each label the
terms of the nominal Krippendorff's alpha of its yes/no answers (the observed
disagreement and the yes/no totals of the items with two or more responses,
:func:`annokit.core.agreement.coincidence_parts`), summed with every bootstrap replicate's
Poisson weights keyed by item id, as in memory. The client adds them and applies
:func:`annokit.core.agreement.nominal_alpha`: counts, histograms and the majority sets are
identical to memory; alpha and its interval agree to about 1e-15 (sums in another order).
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.agreement import AgreementResult, coincidence_parts, nominal_alpha
from annokit.core.checks import check_open_unit, check_option
from annokit.core.multilabel import (
    DEFAULT_MULTILABEL_TIES,
    MULTILABEL_TIE_POLICIES,
    majority_of_counts,
)
from annokit.core.resample import (
    item_keys,
    percentile_interval,
    poisson_weights,
    replicate_chunks,
    seed_from_rng,
)
from annokit.errors import DegenerateInputWarning, InvalidValueError
from annokit.quality.dataset_stats import STATS_SCHEMA_VERSION, DatasetStats
from annokit.scale.progress import compute
from annokit.scale.votes_multilabel import (
    check_responses,
    merge_parts,
    merge_repeated,
    responses_part,
    tree,
)

__all__ = ["multilabel_stats_dask"]


def _part(frame: pd.DataFrame, items: pd.DataFrame, *, k: int, n_annotators: int, labels: Any,
          annotator_ids: np.ndarray, ties: str, seed: int, n_boot: int,
          budget: int) -> dict[str, Any]:
    r = responses_part(frame, items, k=k, n_annotators=n_annotators, labels=labels,
                       annotator_ids=annotator_ids)
    out: dict[str, Any] = {"repeated": [(r.n_repeated, r.shown_repeated)]}
    if r.n_repeated:
        return out
    counts, answered = r.counts, r.n_responses
    maj, tied = majority_of_counts(counts, answered, ties)
    keep = answered >= 2
    yes = counts[keep].astype(np.float64)  # (n, k): per label the items' yes/no answers
    yes_no = np.stack([answered[keep][:, None] - yes, yes], axis=2)  # (n, k, 2)
    disagreement = np.stack([coincidence_parts(yes_no[:, j])[0] for j in range(k)], axis=1) \
        if len(yes) else np.zeros((0, k))
    out.update(
        n_items=len(r.keys), n_votes=int(counts.sum()), n_responses=int(answered.sum()),
        answered=np.bincount(answered, minlength=1),
        max_size=int(r.sizes.max()) if r.sizes.size else 0,
        ticks=counts.sum(axis=0), majority=maj.sum(axis=0), tied=tied.sum(axis=0),
        set_sizes=np.bincount(maj.sum(axis=1), minlength=k + 1), n_single=int((~keep).sum()),
        n_pairable=int(keep.sum()), d=disagreement.sum(axis=0), totals=yes_no.sum(axis=0),
        reps_w=np.zeros(n_boot), reps_d=np.zeros((n_boot, k)), reps_t=np.zeros((n_boot, k, 2)))
    if n_boot and len(yes):
        keys = item_keys(r.item_ids[keep])
        for a, b in replicate_chunks(n_boot, len(yes), budget=budget):
            w = poisson_weights(keys, seed, a, b)
            out["reps_w"][a:b] = w.sum(axis=1)
            out["reps_d"][a:b] = w @ disagreement
            out["reps_t"][a:b] = np.einsum("rn,nkc->rkc", w, yes_no)
    return out


_SUMMED = ("n_items", "n_votes", "n_responses", "ticks", "majority", "tied", "n_single",
           "n_pairable", "d", "totals", "reps_w", "reps_d", "reps_t")


def _merge_histograms(out: dict[str, Any], p: dict[str, Any]) -> None:
    for key in ("answered", "set_sizes"):
        a, b = out[key], p[key]
        n = max(a.size, b.size)
        out[key] = np.pad(a, (0, n - a.size)) + np.pad(b, (0, n - b.size))
    out["max_size"] = max(out["max_size"], p["max_size"])


#: One merge of partition results: the sums added, the histograms padded and added.
_merge = functools.partial(merge_parts, summed=_SUMMED, rest=_merge_histograms)


def _median(hist: np.ndarray) -> float:
    """``np.median`` of the values ``i`` repeated ``hist[i]`` times."""
    c = np.cumsum(hist)
    n = int(c[-1])
    lo = np.searchsorted(c, (n - 1) // 2, side="right")
    hi = np.searchsorted(c, n // 2, side="right")
    return float((lo + hi) / 2)


def _alpha(res: dict[str, Any], j: int, n_boot: int, confidence: float) -> dict[str, Any]:
    """Nominal alpha of label ``j``'s yes/no answers from the merged sums, with the warnings
    of :func:`annokit.core.agreement.krippendorff_alpha`."""
    if res["n_single"]:
        warnings.warn(f"krippendorff_alpha: {res['n_single']} item(s) with fewer than two votes "
                      "cannot be paired and were left out", DegenerateInputWarning, stacklevel=3)
    point = float(nominal_alpha(res["d"][j], res["totals"][j]))
    if not np.isfinite(point):
        warnings.warn("krippendorff_alpha: every vote has the same label, alpha is undefined "
                      "(nan)", DegenerateInputWarning, stacklevel=3)
    n = res["n_pairable"]
    if not n_boot:
        return AgreementResult(point, None, None, n, 0, float(confidence)).to_dict()
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(res["reps_w"] > 0,
                          nominal_alpha(res["reps_d"][:, j], res["reps_t"][:, j]), np.nan)
    ci = percentile_interval(point, values, float(confidence))
    return AgreementResult(point, ci.low, ci.high, n, ci.n_boot, ci.confidence,
                           ci.n_invalid).to_dict()


def multilabel_stats_dask(votes: Any, *, n_boot: int = 1000, confidence: float = 0.95,
                          ties: str = DEFAULT_MULTILABEL_TIES,
                          rng: np.random.Generator | int | None = 0,
                          budget: int = 4_000_000) -> DatasetStats:
    """Summary statistics of multi-label votes on Dask: those of
    :func:`annokit.quality.dataset_stats.multilabel_stats` in memory.

    Parameters
    ----------
    votes : DaskVotes
        Read with ``duplicates="keep"`` (one row per ticked label), with annotator ids.
    n_boot, confidence, ties, rng
        As in memory (``ties`` ``"exclude"`` or ``"include"``; the bootstrap weights are
        keyed by item id, so the intervals are the in-memory ones whatever the partitioning).
    budget : int, default 4_000_000
        Bootstrap weights held at once per partition task (float64).

    Returns
    -------
    DatasetStats
        ``read_as`` names the Dask engine and the partitions.

    Raises
    ------
    SchemaError
        Votes without annotator ids; a label ticked twice in one response.
    InvalidValueError
        A bad ``n_boot``, ``confidence`` or ``ties``.

    Examples
    --------
    >>> import dask
    >>> from annokit.core.votes import Votes
    >>> from annokit.scale.votes import from_votes
    >>> df = pd.DataFrame({"item": ["q", "q", "q", "r", "r"],
    ...                    "annotator": ["a", "a", "b", "a", "b"],
    ...                    "label": ["x", "y", "y", "x", "x"]})
    >>> votes = from_votes(Votes.from_long(df, duplicates="keep"), npartitions=2, client=False)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     s = multilabel_stats_dask(votes, n_boot=0)
    >>> s["n_responses"], s["per_label"]["y"]["tick_rate"], s["n_tied_cells"]
    (4, 0.5, 1)
    """
    from dask import delayed

    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise InvalidValueError(f"n_boot must be >= 0; got {n_boot!r}")
    check_open_unit("confidence", confidence)
    check_option("ties", ties, MULTILABEL_TIE_POLICIES[:2])
    annotator_ids = np.asarray(votes.require_annotators(
        "multi-label votes (a response is the set of labels one annotator gave one item)"),
        dtype=object)
    labels = votes.labels
    k = len(labels)
    seed = seed_from_rng(rng) if n_boot else 0
    ids = delayed(annotator_ids, pure=True)
    parts = [delayed(_part)(f, i, k=k, n_annotators=len(annotator_ids), labels=labels,
                            annotator_ids=ids, ties=ties, seed=seed, n_boot=int(n_boot),
                            budget=budget)
             for f, i in zip(votes.frame.to_delayed(), votes.items.to_delayed(), strict=True)]
    res = compute(votes.client, [tree(parts, _merge)], desc="multi-label stats")[0]
    check_responses(votes.source, *merge_repeated(res["repeated"]))
    return _stats(res, votes, ties=ties, n_boot=int(n_boot), confidence=confidence)


def _stats(res: dict[str, Any], votes: Any, *, ties: str, n_boot: int, confidence: float
           ) -> DatasetStats:
    """The statistics from the partitions' merged sums (:func:`_merge`)."""
    labels = votes.labels
    answered, sizes = res["answered"], res["set_sizes"]
    n_resp = res["n_responses"]
    per_label = {}
    for j, name in enumerate(labels.names):
        per_label[name] = {"tick_rate": float(res["ticks"][j] / n_resp),
                           "majority_items": int(res["majority"][j]),
                           "tied_items": int(res["tied"][j]),
                           "krippendorff_alpha": _alpha(res, j, n_boot, confidence)
                           if res["n_pairable"] else None}
    nonzero = np.flatnonzero(answered)
    n_items = res["n_items"]
    return DatasetStats({
        "schema_version": STATS_SCHEMA_VERSION, "task": "multilabel", "source": votes.source,
        "read_as": f"{votes.source}: Dask engine, {votes.npartitions} partitions",
        "n_items": n_items, "n_votes": res["n_votes"], "n_responses": n_resp,
        "n_annotators": votes.n_annotators, "labels": list(labels.names),
        "responses_per_item": {"min": int(nonzero[0]), "median": _median(answered),
                               "max": int(nonzero[-1])},
        "labels_per_response": {"mean": res["n_votes"] / n_resp, "max": res["max_size"]},
        "per_label": per_label,
        "majority_set_size": {"mean": float((np.arange(sizes.size) * sizes).sum() / n_items),
                              "counts": {str(s): int(c) for s, c in enumerate(sizes) if c}},
        "n_tied_cells": int(res["tied"].sum()), "tie_policy": ties,
    })
