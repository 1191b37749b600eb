"""Report sections that depend on the label scale and on per-annotator predictions.

Like :mod:`annokit.report.build`, nothing here draws, writes or computes a metric of
its own: the numbers come from the metrics layer and are copied into the report model.

* ordered scales (ordinal, interval, ratio): the mean human vote distribution and each
  model's mean predicted distribution, in scale order, overall and per agreement bin;
* two labels: the positive-class reliability diagram of each model
  (:func:`annokit.metrics.binary.binary_reliability`, on the hard labels the engine
  scores: the majority, ties to the first label);
* annotator predictions: :func:`annokit.metrics.perspectivist.evaluate_annotators`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from annokit.core.checks import first_offenders
from annokit.core.votes import Votes
from annokit.errors import AlignmentError, InputError
from annokit.metrics.binary import binary_reliability
from annokit.metrics.perspectivist import evaluate_annotators, read_annotator_predictions
from annokit.metrics.records import AlignedRecords
from annokit.report.model import (
    BinaryReliability,
    Histogram,
    LabelDistribution,
    PerAnnotatorRow,
    PerspectivistReport,
    WorstAnnotator,
)

__all__ = ["ORDERED_SCALES", "binary_section", "check_positive", "label_distribution",
           "perspectivist_section"]

#: Scales whose labels have an order (the report shows their distributions as ordered bars).
ORDERED_SCALES = ("ordinal", "interval", "ratio")

_HIST_BINS = 20


def label_distribution(dists: np.ndarray, bin_idx: np.ndarray, n_groups: int) -> LabelDistribution:
    """Mean of the rows of ``dists`` (n_items x n_labels), overall and per agreement bin."""
    per_bin = []
    for b in range(n_groups):
        rows = dists[bin_idx == b]
        per_bin.append(rows.mean(axis=0).tolist() if len(rows) else [None] * dists.shape[1])
    return LabelDistribution(overall=dists.mean(axis=0).tolist(), per_bin=per_bin)


def check_positive(positive: Any, labels: tuple[str, ...], *, option: str = "positive") -> None:
    """``positive`` names one of two labels (by name or index 0/1); else InputError
    naming ``option``."""
    if positive is None:
        return
    if len(labels) != 2:
        raise InputError(f"{option} {positive!r}: a positive class needs two labels; "
                         f"the votes have {len(labels)}: {list(labels)}")
    if isinstance(positive, str) and positive in labels:
        return
    if isinstance(positive, (int, np.integer)) and not isinstance(positive, bool) \
            and 0 <= positive < 2:
        return
    raise InputError(f"{option} {positive!r} is not a label; the labels are {list(labels)}")


def binary_section(record: AlignedRecords, positive_label: str, n_bins: int) -> BinaryReliability:
    """Positive-class reliability of one model on the hard labels the engine scores."""
    names = list(record.labels.names)
    r = binary_reliability(record.probs, record.majority.labels,
                           positive=names.index(positive_label), n_bins=n_bins, labels=names)
    b = r.bins
    freq = [None if np.isnan(v) else float(v) for v in b["frequency"]]
    mean_p = [None if np.isnan(v) else float(v) for v in b["mean_probability"]]
    return BinaryReliability(positive_label=positive_label,
                             edges=list(b["bin_low"]) + [b["bin_high"][-1]],
                             count=[int(round(w)) for w in b["weight"]],
                             mean_probability=mean_p, frequency=freq, ece=r.ece, mce=r.mce)


def _unknown(values: np.ndarray, known: Any) -> list[str]:
    ids = pd.Index(np.asarray(known, dtype=object).astype(str))
    bad = pd.unique(values[ids.get_indexer(values) < 0])
    return list(bad)


def perspectivist_section(votes: Votes, predictions: Any, *, scale: str,
                          notes: list[str], source: str | None = None) -> PerspectivistReport:
    """Per-annotator evaluation of ``predictions`` (a long table or its path) on ``votes``.

    Raises
    ------
    AlignmentError
        A predicted item or annotator the votes do not have.
    """
    frame = read_annotator_predictions(predictions)
    where = source or "annotator predictions"
    for what, column, known in (("item", "item", votes.item_ids),
                                ("annotator", "annotator", votes.annotator_ids)):
        if known is None:
            continue  # evaluate_annotators refuses votes without annotators
        bad = _unknown(frame[column].to_numpy(dtype=object), known)
        if bad:
            raise AlignmentError(f"{where}: {len(bad)} {what}(s) not in the votes: "
                                 f"{first_offenders(bad)}")
    values = getattr(votes.labels, "values", None)
    values = tuple(float(v) for v in values) \
        if scale in ("interval", "ratio") and values is not None else None
    res = evaluate_annotators(votes, frame, scale=scale, values=values)
    if res.n_unmatched_predictions:
        notes.append(f"{where}: {res.n_unmatched_predictions} predicted (item, annotator) "
                     "pair(s) without a vote are not scored")
    if res.n_votes_without_prediction:
        notes.append(f"{where}: {res.n_votes_without_prediction} of {votes.n_votes} votes have "
                     "no prediction and are not scored")
    table = res.per_annotator
    edges = np.linspace(0.0, 1.0, _HIST_BINS + 1)
    hists = {}
    for col in ("error_rate", "mean_distance"):
        if col in table.columns:
            vals = table[col].to_numpy(dtype=np.float64)
            vals = vals[~np.isnan(vals)]
            # distances are normalised by s >= the number of labels, so they stay in [0, 1]
            counts, _ = np.histogram(np.clip(vals, 0.0, 1.0), bins=edges)
            hists[col] = Histogram(edges=edges.tolist(), counts=counts.tolist())
    rows = [PerAnnotatorRow(**{str(k): (v.item() if isinstance(v, np.generic) else v)
                               for k, v in row.items()})
            for row in table.to_dict(orient="records")]
    return PerspectivistReport(
        source=source, scale=res.scale, normalizer=res.normalizer, n_pairs=res.n_pairs,
        n_items=res.n_items, n_annotators=res.n_annotators,
        n_unmatched_predictions=res.n_unmatched_predictions,
        n_votes_without_prediction=res.n_votes_without_prediction,
        scores=dict(res.scores), pooled=dict(res.pooled), gap=dict(res.gap),
        over_annotators=res.over_annotators,
        worst={k: [WorstAnnotator(**w) for w in ws] for k, ws in res.worst.items()},
        histograms=hists, per_annotator=rows)
