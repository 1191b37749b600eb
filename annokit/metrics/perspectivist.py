"""Perspectivist evaluation: a model's prediction for each (item, annotator) against that annotator.

The pooled view scores a model's distribution against the pooled human
distribution; the perspectivist view asks whether the model predicts what *this*
annotator said. :func:`evaluate_annotators` joins predictions per (item,
annotator) (a label per pair, or a distribution per pair whose argmax, first on
ties, is the predicted label) with the annotators' actual votes and reports:

* per pair: the error ``[pred != actual]``; on ordered scales the normalised
  absolute distance ``|v_pred - v_actual| / s`` (category values ``v``, default
  ``0 .. k-1``; ``s`` the number of scale points, 6 for a 1-6 scale and 11 for
  -5..5, as the LeWiDi 2025 scorer); with distributions also ``-log max(p_actual, 1e-15)``;
* per annotator: pairs, accuracy, error rate, mean distance, NLL (a table), and
  their distribution over annotators (mean, median, quantiles, the worst annotators);
* the LeWiDi 2025 perspectivist scores: the mean over items of each item's mean
  error (``error_rate``, "Average ER") or mean normalised distance
  (``absolute_distance``, "ANAD", without the ``x 100``);
* the pooled view and the gap. Per item the model's predicted labels form a
  pooled distribution ``pbar_i`` and the annotators' labels the human one ``q_i``
  (over the same pairs). Any assignment of the predicted labels to the annotators
  errs on at least ``TVD(pbar_i, q_i)`` of them and is off by at least
  ``W1(pbar_i, q_i)`` on average (the optimal matching of two empirical
  distributions on a line), so ``gap = per-annotator score - pooled score >= 0``:
  the part of the per-annotator error that comes from giving the right labels to
  the wrong annotators, 0 when the model's per-annotator predictions are as good
  as their pooled counts allow.

Predictions come as a long table (:func:`read_annotator_predictions`): columns
``item``, ``annotator`` and ``label`` or one ``prob_<label>`` column per label.

References
----------
LeWiDi 2025 (third edition, NLPerspectives at EMNLP 2025): perspectivist scores in
``Evaluation_LeWiDi_2025_Metrics.ipynb``, Le-Wi-Di/le-wi-di.github.io.
Cabitza, Campagner, Basile (2023). Toward a Perspectivist Turn in Ground Truthing for
Predictive Computing. AAAI. DOI:10.1609/aaai.v37i6.25840.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.checks import check_simplex, first_offenders
from annokit.core.divergence import tvd
from annokit.core.votes import Votes
from annokit.errors import AlignmentError, DataFormatError, InvalidValueError, SchemaError
from annokit.metrics.kernels import item_values
from annokit.metrics.kernels_ordinal import ordinal_values
from annokit.metrics.states_ext import check_values_option

__all__ = ["AnnotatorEvaluation", "evaluate_annotators", "read_annotator_predictions"]

_SCALES = ("nominal", "ordinal", "interval", "ratio")
_NLL_EPS = 1e-15


def read_annotator_predictions(source: Any, *, item: str = "item", annotator: str = "annotator",
                               label: str = "label") -> pd.DataFrame:
    """Predictions per (item, annotator) as a long table.

    Parameters
    ----------
    source : str, Path or DataFrame
        A CSV (``.csv``), TSV (``.tsv``), JSON Lines (``.jsonl``) or Parquet file, or a frame.
    item, annotator, label : str
        Column names; ``label`` holds a predicted label name per pair, or is
        absent and ``prob_<label>`` columns hold a distribution per pair.

    Returns
    -------
    DataFrame
        Columns ``item``, ``annotator`` (strings) and ``label`` or the ``prob_*`` columns.

    Raises
    ------
    DataFormatError
        Unreadable or empty file, unknown file type, an empty id or label, a
        probability that is not a finite number (naming the file, line, column, item
        and annotator).
    SchemaError
        Missing columns, neither a label column nor ``prob_`` columns.

    Examples
    --------
    >>> df = pd.DataFrame({"item": [1, 1], "annotator": ["a", "b"], "label": ["x", "y"]})
    >>> read_annotator_predictions(df).dtypes["item"].kind
    'O'
    """
    if isinstance(source, pd.DataFrame):
        frame, where = source.copy(), source.attrs.get("annokit_source", "predictions")
        line_of = np.arange(len(frame)) + 1  # rows, counted from 1
        row_word = "row"
    else:
        from annokit.io.source import Input
        from annokit.io.tables import read_table

        frame = read_table(Input(source, what="annotator predictions"))
        where = Path(str(source)).name
        lines = frame.attrs.get("annokit_lines")
        line_of = (np.asarray(lines) if lines is not None
                   else np.arange(len(frame)) + frame.attrs.get("annokit_line_offset", 0))
        row_word = "line"
    missing = [c for c in (item, annotator) if c not in frame.columns]
    if missing:
        raise SchemaError(f"{where} is missing column(s) {missing}; got {list(frame.columns)}")
    probs = [c for c in frame.columns if str(c).startswith("prob_")]
    if label not in frame.columns and not probs:
        raise SchemaError(f"{where} needs a {label!r} column or prob_<label> columns; got "
                          f"{list(frame.columns)}")

    def fail(i: int, column: str, problem: str) -> DataFormatError:
        return DataFormatError(f"{row_word} {int(line_of[i])} of {where}, column {column!r} "
                               f"(item {frame[item].iloc[i]!r}, annotator "
                               f"{frame[annotator].iloc[i]!r}): {problem}")

    for c in (item, annotator) + ((label,) if label in frame.columns else ()):
        blank = frame[c].isna().to_numpy() | (frame[c].astype(str).str.strip() == "").to_numpy()
        if blank.any():
            raise fail(int(np.argmax(blank)), c, f"empty {c}")
    out = pd.DataFrame({"item": frame[item].astype(str).to_numpy(dtype=object),
                        "annotator": frame[annotator].astype(str).to_numpy(dtype=object)})
    if label in frame.columns:
        out["label"] = frame[label].astype(str).to_numpy(dtype=object)
    else:
        for c in probs:
            values = pd.to_numeric(frame[c], errors="coerce").to_numpy(dtype=np.float64)
            bad = ~np.isfinite(values)
            if bad.any():
                i = int(np.argmax(bad))
                raise fail(i, str(c), f"{frame[c].iloc[i]!r} is not a finite probability")
            out[str(c)] = values
    out.attrs["annokit_source"] = where
    return out


@dataclass
class AnnotatorEvaluation:
    """What :func:`evaluate_annotators` measured.

    Attributes
    ----------
    scale : str
    labels : tuple of str
    normalizer : float or None
        ``s`` of the distances (None on nominal data).
    n_pairs, n_items, n_annotators : int
        Matched (item, annotator) pairs, their items and annotators.
    n_unmatched_predictions : int
        Predicted pairs with no vote (unknown item, annotator, or pair).
    n_votes_without_prediction : int
        Votes no prediction covers (not scored).
    scores : dict
        ``accuracy``, ``error_rate`` (pairs pooled), the LeWiDi 2025 item-averaged
        ``lewidi_error_rate`` and (ordered scales) ``lewidi_absolute_distance``,
        ``mean_distance``, ``nll`` (distributions given).
    pooled : dict
        ``tvd`` (and ``wasserstein`` on ordered scales, divided by ``s``) between the
        model's pooled labels and the annotators' per item, item-averaged; with
        distributions also ``manhattan`` between the mean predicted and the human distribution.
    gap : dict
        ``error_rate``: ``lewidi_error_rate - pooled tvd``; ``absolute_distance``:
        ``lewidi_absolute_distance - pooled wasserstein`` (both ``>= 0``).
    over_annotators : dict
        Per metric: mean, median, quantiles and min/max over annotators.
    worst : dict
        Per metric: the worst annotators, ``[{annotator, value, n_pairs}]``.
    per_annotator : DataFrame
        One row per annotator: ``annotator``, ``n_pairs``, ``accuracy``,
        ``error_rate``, ``mean_distance``, ``nll`` (columns that apply).
    """

    scale: str
    labels: tuple[str, ...]
    normalizer: float | None
    n_pairs: int
    n_items: int
    n_annotators: int
    n_unmatched_predictions: int
    n_votes_without_prediction: int
    scores: dict[str, float]
    pooled: dict[str, float]
    gap: dict[str, float]
    over_annotators: dict[str, dict[str, float]]
    worst: dict[str, list[dict[str, Any]]]
    per_annotator: pd.DataFrame = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary (the per-annotator table as a list of rows)."""
        rows = self.per_annotator.to_dict(orient="records")
        return {"scale": self.scale, "labels": list(self.labels), "normalizer": self.normalizer,
                "n_pairs": self.n_pairs, "n_items": self.n_items,
                "n_annotators": self.n_annotators,
                "n_unmatched_predictions": self.n_unmatched_predictions,
                "n_votes_without_prediction": self.n_votes_without_prediction,
                "scores": dict(self.scores), "pooled": dict(self.pooled), "gap": dict(self.gap),
                "over_annotators": self.over_annotators, "worst": self.worst,
                "per_annotator": [{k: (v.item() if isinstance(v, np.generic) else v)
                                   for k, v in row.items()} for row in rows]}


def _codes(values: np.ndarray, ids: Any) -> np.ndarray:
    return pd.Index(np.asarray(ids, dtype=object).astype(str)).get_indexer(values)


def _pair_predictions(frame: pd.DataFrame, names: tuple[str, ...]
                      ) -> tuple[np.ndarray, np.ndarray | None]:
    """Predicted label codes and (optionally) distributions in label order."""
    src = frame.attrs.get("annokit_source", "predictions")
    if "label" in frame.columns:
        pred = pd.Index(names).get_indexer(frame["label"].to_numpy())
        if (pred < 0).any():
            bad = frame["label"].to_numpy()[pred < 0]
            raise InvalidValueError(f"{src}: unknown label(s) {first_offenders(pd.unique(bad))}"
                                    f"; the votes' labels are {list(names)}")
        return pred.astype(np.int64), None
    cols = [f"prob_{n}" for n in names]
    missing = [c for c in cols if c not in frame.columns]
    extra = sorted(set(c for c in frame.columns if c.startswith("prob_")) - set(cols))
    if missing or extra:
        raise SchemaError(f"{src}: prob_ columns must match the votes' labels {list(names)}; "
                          f"missing {missing}, unknown {extra}")
    probs = np.ascontiguousarray(frame[cols].to_numpy(dtype=np.float64))
    check_simplex(probs, name=src)
    return probs.argmax(axis=1).astype(np.int64), probs


def _summary(values: np.ndarray, quantiles: tuple[float, ...]) -> dict[str, float]:
    v = values[~np.isnan(values)]
    if v.size == 0:
        return {}
    out = {"mean": float(v.mean()), "median": float(np.median(v)), "min": float(v.min()),
           "max": float(v.max())}
    out.update({f"q{q:g}": float(x) for q, x in zip(quantiles, np.quantile(v, quantiles), strict=True)})
    return out


def evaluate_annotators(votes: Votes, predictions: Any, *, scale: str = "nominal",
                        values: Any = None, normalizer: float | None = None,
                        quantiles: tuple[float, ...] = (0.1, 0.25, 0.75, 0.9),
                        n_worst: int = 5) -> AnnotatorEvaluation:
    """Score predictions per (item, annotator) against each annotator's own label.

    Parameters
    ----------
    votes : Votes
        With annotator ids.
    predictions : DataFrame, str or Path
        A long table (:func:`read_annotator_predictions`): ``item``, ``annotator``
        and ``label`` or ``prob_<label>`` columns (one per label of ``votes``).
    scale : {"nominal", "ordinal", "interval", "ratio"}, default "nominal"
        Ordered scales add the distances.
    values : sequence of float, optional
        Category values in label order (default ``0 .. k-1``).
    normalizer : float, optional
        ``s`` of the normalised distance; default the number of labels (LeWiDi
        2025: 6 for CSC's 1-6, 11 for Paraphrase's -5..5).
    quantiles : tuple of float
        Quantiles of the per-annotator values to report (the median always is).
    n_worst : int, default 5
        How many worst annotators to list per metric.

    Returns
    -------
    AnnotatorEvaluation

    Raises
    ------
    SchemaError
        Votes without annotators, bad prediction columns.
    AlignmentError
        Repeated (item, annotator) predictions, or no prediction matches a vote.
    InvalidValueError
        Unknown scale or predicted label, distributions off the simplex, bad ``values``.

    Examples
    --------
    >>> votes = Votes.from_long(pd.DataFrame({"item": ["i1", "i1", "i2", "i2"],
    ...     "annotator": ["a", "b", "a", "b"], "label": ["x", "y", "y", "y"]}))
    >>> preds = pd.DataFrame({"item": ["i1", "i1", "i2", "i2"], "annotator": ["a", "b", "a", "b"],
    ...                       "label": ["y", "x", "y", "y"]})
    >>> res = evaluate_annotators(votes, preds)
    >>> res.scores["lewidi_error_rate"], res.pooled["tvd"], res.gap["error_rate"]
    (0.5, 0.0, 0.5)
    """
    if scale not in _SCALES:
        raise InvalidValueError(f"scale must be one of {list(_SCALES)}; got {scale!r}")
    if votes.annotator_index is None or votes.annotator_ids is None:
        raise SchemaError("perspectivist evaluation needs annotator ids; these votes have none")
    if isinstance(n_worst, bool) or not isinstance(n_worst, (int, np.integer)) or n_worst < 0:
        raise InvalidValueError(f"n_worst must be an integer >= 0; got {n_worst!r}")
    frame = read_annotator_predictions(predictions)
    names = tuple(votes.labels.names)
    k, n_ann = len(names), len(votes.annotator_ids)
    ordered = scale != "nominal"
    v = check_values_option(values, k)
    s = float(k if normalizer is None else normalizer)
    if ordered and not (np.isfinite(s) and s > 0):
        raise InvalidValueError(f"normalizer must be a positive number; got {normalizer!r}")

    item = _codes(frame["item"].to_numpy(), votes.item_ids)
    ann = _codes(frame["annotator"].to_numpy(), votes.annotator_ids)
    known = (item >= 0) & (ann >= 0)
    key = np.where(known, item.astype(np.int64) * n_ann + ann, -1)
    dup = pd.Index(key[known]).duplicated()
    if dup.any():
        bad = frame.loc[np.flatnonzero(known)[dup], ["item", "annotator"]].astype(str)
        raise AlignmentError(f"{frame.attrs.get('annokit_source', 'predictions')} repeats "
                             "(item, annotator) pair(s) "
                             f"{first_offenders(list(map(tuple, bad.to_numpy())))}")
    vote_key = votes.item_index.astype(np.int64) * n_ann + votes.annotator_index
    pos = pd.Index(vote_key).get_indexer(key) if not pd.Index(vote_key).has_duplicates else \
        pd.Index(vote_key).drop_duplicates().get_indexer(key)
    matched = known & (pos >= 0)
    if not matched.any():
        raise AlignmentError(f"no prediction matches a vote: {len(frame)} predicted pairs, "
                             f"{votes.n_votes} votes")
    pred_all, probs_all = _pair_predictions(frame, names)
    vote_pos = pos[matched]
    pred = pred_all[matched]
    probs = None if probs_all is None else probs_all[matched]
    actual = votes.label_index[vote_pos].astype(np.int64)
    it, an = votes.item_index[vote_pos].astype(np.int64), votes.annotator_index[vote_pos]

    err = (pred != actual).astype(np.float64)
    per_pair = {"error_rate": err}
    if ordered:
        per_pair["mean_distance"] = np.abs(v[pred] - v[actual]) / s
    if probs is not None:
        per_pair["nll"] = item_values(probs, None, actual, ("nll_majority",), eps=_NLL_EPS)[:, 0]

    # per item (LeWiDi: mean over the item's annotators, then over items)
    items, it_code = np.unique(it, return_inverse=True)
    per_item_n = np.bincount(it_code).astype(np.float64)
    scores = {"accuracy": float(1 - err.mean()), "error_rate": float(err.mean()),
              "lewidi_error_rate": float((np.bincount(it_code, err) / per_item_n).mean())}
    if ordered:
        d = per_pair["mean_distance"]
        scores["mean_distance"] = float(d.mean())
        scores["lewidi_absolute_distance"] = float((np.bincount(it_code, d) / per_item_n).mean())
    if probs is not None:
        scores["nll"] = float(per_pair["nll"].mean())
    m = len(items)
    pooled_pred = np.bincount(it_code * k + pred, minlength=m * k).reshape(m, k) / per_item_n[:, None]
    pooled_true = np.bincount(it_code * k + actual, minlength=m * k).reshape(m, k) / per_item_n[:, None]
    pooled = {"tvd": float(tvd(pooled_pred, pooled_true).mean())}
    gap = {"error_rate": scores["lewidi_error_rate"] - pooled["tvd"]}
    if ordered:
        pooled["wasserstein"] = float(ordinal_values("emd", pooled_pred, pooled_true, None,
                                                     v).mean() / s)
        gap["absolute_distance"] = scores["lewidi_absolute_distance"] - pooled["wasserstein"]
    if probs is not None:
        mean_probs = np.stack([np.bincount(it_code, probs[:, j], minlength=m)
                               for j in range(k)], axis=1) / per_item_n[:, None]
        pooled["manhattan"] = float(ordinal_values("l1", mean_probs, pooled_true, None).mean())

    # per annotator
    anns, an_code = np.unique(an, return_inverse=True)
    n_pairs = np.bincount(an_code)
    table = pd.DataFrame({"annotator": votes.annotator_ids[anns].astype(str), "n_pairs": n_pairs})
    table["accuracy"] = 1 - np.bincount(an_code, err) / n_pairs
    for name, vals in per_pair.items():
        table[name] = np.bincount(an_code, vals) / n_pairs
    metrics = [c for c in table.columns if c not in ("annotator", "n_pairs")]
    over = {c: _summary(table[c].to_numpy(dtype=np.float64), tuple(quantiles)) for c in metrics}
    worst = {}
    for c in metrics:
        order = table.sort_values([c, "annotator"], ascending=[c == "accuracy", True],
                                  kind="stable").head(n_worst)
        worst[c] = [{"annotator": str(a), "value": float(x), "n_pairs": int(n)}
                    for a, x, n in zip(order["annotator"], order[c], order["n_pairs"],
                                           strict=True)]
    n_votes_covered = int(np.unique(vote_pos).size)
    return AnnotatorEvaluation(
        scale=scale, labels=names, normalizer=s if ordered else None, n_pairs=int(matched.sum()),
        n_items=m, n_annotators=len(anns), n_unmatched_predictions=int((~matched).sum()),
        n_votes_without_prediction=int(votes.n_votes - n_votes_covered), scores=scores,
        pooled=pooled, gap=gap, over_annotators=over, worst=worst, per_annotator=table)
