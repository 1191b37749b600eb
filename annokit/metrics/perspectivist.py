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

__all__ = ["AnnotatorEvaluation", "PairSums", "annotator_evaluation", "check_repeated_pairs",
           "evaluate_annotators", "first_vote_of", "no_pair_match", "pair_predictions",
           "pair_sums", "read_annotator_predictions"]

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

        def place(i: int) -> str:
            return f"row {i + 1}"  # rows, counted from 1
    else:
        from annokit.io.source import Input
        from annokit.io.tables import read_table, row_where

        frame = read_table(Input(source, what="annotator predictions"))
        where = Path(str(source)).name

        def place(i: int) -> str:
            return row_where(frame, i)  # the file line (found now), or the row of a Parquet file

    missing = [c for c in (item, annotator) if c not in frame.columns]
    if missing:
        raise SchemaError(f"{where} is missing column(s) {missing}; got {list(frame.columns)}")
    probs = [c for c in frame.columns if str(c).startswith("prob_")]
    if label not in frame.columns and not probs:
        raise SchemaError(f"{where} needs a {label!r} column or prob_<label> columns; got "
                          f"{list(frame.columns)}")

    def fail(i: int, column: str, problem: str) -> DataFormatError:
        return DataFormatError(f"{place(i)} of {where}, column {column!r} "
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


def pair_predictions(frame: pd.DataFrame, names: tuple[str, ...]
                     ) -> tuple[np.ndarray, np.ndarray | None]:
    """Predicted label codes and (optionally) distributions in label order, from
    :func:`read_annotator_predictions`'s frame (the argmax of a distribution, first on ties).

    Raises
    ------
    InvalidValueError
        An unknown predicted label; distributions off the simplex.
    SchemaError
        ``prob_`` columns that do not match ``names``.
    """
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


@dataclass
class PairSums:
    """Mergeable sums of :func:`evaluate_annotators` over a set of matched pairs.

    Every pair of an item must be in one set (the per-item means and the pooled view are
    complete per item); sets of disjoint items merge by adding (:meth:`merge`), so a
    partitioned engine fills one per partition and :func:`annotator_evaluation` finishes
    the merged sums as in memory.

    Attributes
    ----------
    scale : str
    normalizer : float
        ``s`` of the distances.
    has_probs : bool
        Whether distributions were given (``nll`` and the pooled ``manhattan``).
    n_pairs, n_items, n_votes_covered : int
        Matched pairs, their items, and the distinct votes they cover.
    pair : dict of str to float
        Sums over pairs of ``error_rate``, ``mean_distance`` (ordered scales), ``nll``.
    item : dict of str to float
        Sums over items of the per-item mean error (``lewidi_error_rate``) and distance
        (``lewidi_absolute_distance``), and of the pooled ``tvd``, ``wasserstein`` (divided
        by ``s``) and ``manhattan``.
    annotator_n : ndarray of int64, shape (n_annotators,)
        Pairs per annotator code.
    annotator : dict of str to ndarray of shape (n_annotators,)
        Sums per annotator code of the per-pair values (as ``pair``).
    """

    scale: str
    normalizer: float
    has_probs: bool
    n_pairs: int
    n_items: int
    n_votes_covered: int
    pair: dict[str, float]
    item: dict[str, float]
    annotator_n: np.ndarray
    annotator: dict[str, np.ndarray]

    def merge(self, other: PairSums) -> PairSums:
        """The sums of both sets (of disjoint items)."""
        if (other.scale, other.has_probs, other.annotator_n.shape) != (
                self.scale, self.has_probs, self.annotator_n.shape):
            raise ValueError("cannot merge PairSums of different scales, prediction kinds or "
                             "annotator sets")
        return PairSums(
            scale=self.scale, normalizer=self.normalizer, has_probs=self.has_probs,
            n_pairs=self.n_pairs + other.n_pairs, n_items=self.n_items + other.n_items,
            n_votes_covered=self.n_votes_covered + other.n_votes_covered,
            pair={k: v + other.pair[k] for k, v in self.pair.items()},
            item={k: v + other.item[k] for k, v in self.item.items()},
            annotator_n=self.annotator_n + other.annotator_n,
            annotator={k: v + other.annotator[k] for k, v in self.annotator.items()})


def pair_sums(pred: np.ndarray, probs: np.ndarray | None, actual: np.ndarray, item: np.ndarray,
              annotator: np.ndarray, *, k: int, n_annotators: int, scale: str,
              values: np.ndarray, normalizer: float, n_votes_covered: int) -> PairSums:
    """The :class:`PairSums` of matched pairs.

    Parameters
    ----------
    pred, actual : ndarray of int, shape (n_pairs,)
        Predicted and voted label codes.
    probs : ndarray of shape (n_pairs, k) or None
        Predicted distributions.
    item, annotator : ndarray of int, shape (n_pairs,)
        The pairs' item codes (any integers) and annotator codes (``0 .. n_annotators-1``).
    k, n_annotators, scale, values, normalizer, n_votes_covered
        Labels, annotators, the scale, the category values ``v`` and ``s``; distinct votes
        the pairs cover.

    Notes
    -----
    Per pair ``e = [pred != actual]``, ``d = |v_pred - v_actual| / s`` and
    ``-log max(p_actual, 1e-15)``; per item the means of ``e`` and ``d`` over its pairs and
    ``TVD(pbar_i, q_i)``, ``W1(pbar_i, q_i) / s`` between the pooled predicted labels
    ``pbar_i`` and the pooled votes ``q_i``, and ``L1`` between the mean predicted
    distribution and ``q_i`` (module docstring).
    """
    pred = np.asarray(pred, dtype=np.int64)
    actual = np.asarray(actual, dtype=np.int64)
    ordered = scale != "nominal"
    s = float(normalizer)
    err = (pred != actual).astype(np.float64)
    per_pair = {"error_rate": err}
    if ordered:
        per_pair["mean_distance"] = np.abs(values[pred] - values[actual]) / s
    if probs is not None:
        per_pair["nll"] = (item_values(probs, None, actual, ("nll_majority",), eps=_NLL_EPS)[:, 0]
                           if len(pred) else np.zeros(0))
    it, items = pd.factorize(np.asarray(item))  # items in first-seen order
    it = np.asarray(it, dtype=np.int64)
    m = len(items)
    per_item_n = np.bincount(it, minlength=m).astype(np.float64)
    item_sums = {"lewidi_error_rate": float((np.bincount(it, err, minlength=m)
                                             / per_item_n).sum())}
    if ordered:
        item_sums["lewidi_absolute_distance"] = float(
            (np.bincount(it, per_pair["mean_distance"], minlength=m) / per_item_n).sum())
    pooled_pred = (np.bincount(it * k + pred, minlength=m * k).reshape(m, k)
                   / per_item_n[:, None])
    pooled_true = (np.bincount(it * k + actual, minlength=m * k).reshape(m, k)
                   / per_item_n[:, None])
    item_sums["tvd"] = float(tvd(pooled_pred, pooled_true).sum()) if m else 0.0
    if ordered:
        item_sums["wasserstein"] = (float(ordinal_values("emd", pooled_pred, pooled_true, None,
                                                         values).sum() / s) if m else 0.0)
    if probs is not None:
        mean_probs = np.stack([np.bincount(it, probs[:, j], minlength=m)
                               for j in range(k)], axis=1) / per_item_n[:, None]
        item_sums["manhattan"] = (float(ordinal_values("l1", mean_probs, pooled_true,
                                                       None).sum()) if m else 0.0)
    an = np.asarray(annotator, dtype=np.int64)
    return PairSums(scale=scale, normalizer=s, has_probs=probs is not None, n_pairs=len(pred),
                    n_items=m, n_votes_covered=int(n_votes_covered),
                    pair={name: float(x.sum()) for name, x in per_pair.items()}, item=item_sums,
                    annotator_n=np.bincount(an, minlength=n_annotators).astype(np.int64),
                    annotator={name: np.bincount(an, x, minlength=n_annotators)
                               for name, x in per_pair.items()})


def annotator_evaluation(sums: PairSums, annotator_ids: np.ndarray, *, labels: tuple[str, ...],
                         n_unmatched_predictions: int, n_votes: int,
                         quantiles: tuple[float, ...] = (0.1, 0.25, 0.75, 0.9),
                         n_worst: int = 5) -> AnnotatorEvaluation:
    """The :class:`AnnotatorEvaluation` of (merged) :class:`PairSums`: the scores, the pooled
    view and the gap, the per-annotator table and its distribution over annotators."""
    n, m = sums.n_pairs, sums.n_items
    ordered = sums.scale != "nominal"
    err = sums.pair["error_rate"] / n
    scores = {"accuracy": float(1 - err), "error_rate": float(err),
              "lewidi_error_rate": sums.item["lewidi_error_rate"] / m}
    if ordered:
        scores["mean_distance"] = sums.pair["mean_distance"] / n
        scores["lewidi_absolute_distance"] = sums.item["lewidi_absolute_distance"] / m
    if sums.has_probs:
        scores["nll"] = sums.pair["nll"] / n
    pooled = {"tvd": sums.item["tvd"] / m}
    gap = {"error_rate": scores["lewidi_error_rate"] - pooled["tvd"]}
    if ordered:
        pooled["wasserstein"] = sums.item["wasserstein"] / m
        gap["absolute_distance"] = scores["lewidi_absolute_distance"] - pooled["wasserstein"]
    if sums.has_probs:
        pooled["manhattan"] = sums.item["manhattan"] / m

    anns = np.flatnonzero(sums.annotator_n)
    n_pairs = sums.annotator_n[anns]
    table = pd.DataFrame({"annotator": np.asarray(annotator_ids, dtype=object)[anns].astype(str),
                          "n_pairs": n_pairs})
    table["accuracy"] = 1 - sums.annotator["error_rate"][anns] / n_pairs
    for name, vals in sums.annotator.items():
        table[name] = vals[anns] / n_pairs
    metrics = [c for c in table.columns if c not in ("annotator", "n_pairs")]
    over = {c: _summary(table[c].to_numpy(dtype=np.float64), tuple(quantiles)) for c in metrics}
    worst = {}
    for c in metrics:
        order = table.sort_values([c, "annotator"], ascending=[c == "accuracy", True],
                                  kind="stable").head(n_worst)
        worst[c] = [{"annotator": str(a), "value": float(x), "n_pairs": int(n)}
                    for a, x, n in zip(order["annotator"], order[c], order["n_pairs"],
                                       strict=True)]
    return AnnotatorEvaluation(
        scale=sums.scale, labels=tuple(labels), normalizer=sums.normalizer if ordered else None,
        n_pairs=int(n), n_items=int(m), n_annotators=len(anns),
        n_unmatched_predictions=int(n_unmatched_predictions),
        n_votes_without_prediction=int(n_votes - sums.n_votes_covered), scores=scores,
        pooled=pooled, gap=gap, over_annotators=over, worst=worst, per_annotator=table)


def _inputs(votes: Votes, predictions: Any, scale: str, values: Any, normalizer: float | None,
            n_worst: Any) -> tuple[pd.DataFrame, Any, float, tuple[np.ndarray, np.ndarray]]:
    """The inputs of :func:`evaluate_annotators` checked: the prediction table, the category
    values, the normaliser ``s`` of the distances, and the votes' annotator index and ids."""
    if scale not in _SCALES:
        raise InvalidValueError(f"scale must be one of {list(_SCALES)}; got {scale!r}")
    if votes.annotator_index is None or votes.annotator_ids is None:
        raise SchemaError("perspectivist evaluation needs annotator ids; these votes have none")
    if isinstance(n_worst, bool) or not isinstance(n_worst, (int, np.integer)) or n_worst < 0:
        raise InvalidValueError(f"n_worst must be an integer >= 0; got {n_worst!r}")
    frame = read_annotator_predictions(predictions)
    k = len(votes.labels.names)
    v = check_values_option(values, k)
    s = float(k if normalizer is None else normalizer)
    if scale != "nominal" and not (np.isfinite(s) and s > 0):
        raise InvalidValueError(f"normalizer must be a positive number; got {normalizer!r}")
    return frame, v, s, (votes.annotator_index, votes.annotator_ids)


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
    names = tuple(votes.labels.names)
    k = len(names)
    frame, v, s, (ann_index, ann_ids) = _inputs(votes, predictions, scale, values, normalizer,
                                                n_worst)
    n_ann = len(ann_ids)
    item = _codes(frame["item"].to_numpy(), votes.item_ids)
    ann = _codes(frame["annotator"].to_numpy(), ann_ids)
    check_repeated_pairs(frame, item, ann, n_ann)
    vote_key = votes.item_index.astype(np.int64) * n_ann + ann_index
    key = np.where((item >= 0) & (ann >= 0), item.astype(np.int64) * n_ann + ann, -1)
    pos = first_vote_of(vote_key, key)
    matched = pos >= 0
    if not matched.any():
        raise no_pair_match(len(frame), votes.n_votes)
    pred_all, probs_all = pair_predictions(frame, names)
    vote_pos = pos[matched]
    sums = pair_sums(pred_all[matched], None if probs_all is None else probs_all[matched],
                     votes.label_index[vote_pos], votes.item_index[vote_pos],
                     ann_index[vote_pos], k=k, n_annotators=n_ann, scale=scale,
                     values=v, normalizer=s, n_votes_covered=vote_pos.size)  # distinct pairs
    return annotator_evaluation(sums, ann_ids, labels=names,
                                n_unmatched_predictions=int((~matched).sum()),
                                n_votes=votes.n_votes, quantiles=quantiles, n_worst=n_worst)


def check_repeated_pairs(frame: pd.DataFrame, item: np.ndarray, annotator: np.ndarray,
                         n_annotators: int) -> None:
    """Refuse predictions that repeat an (item, annotator) pair of the votes.

    ``item`` and ``annotator`` are the rows' codes among the votes' items and annotators
    (``-1``: unknown, such rows are unmatched, not repeated).

    Raises
    ------
    AlignmentError
        Naming the first repeated pairs by their ids.
    """
    known = (item >= 0) & (annotator >= 0)
    key = item[known].astype(np.int64) * n_annotators + annotator[known]
    dup = pd.Index(key).duplicated()
    if dup.any():
        bad = frame.loc[np.flatnonzero(known)[dup], ["item", "annotator"]].astype(str)
        raise AlignmentError(f"{frame.attrs.get('annokit_source', 'predictions')} repeats "
                             "(item, annotator) pair(s) "
                             f"{first_offenders(list(map(tuple, bad.to_numpy())))}")


def first_vote_of(vote_key: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Position in the votes of the first vote with each ``key`` (an (item, annotator) pair's
    code), -1 for none (``key`` -1: an unknown item or annotator).

    Several votes of one pair (read with ``duplicates="keep"``): the first in vote order
    is scored.
    """
    key = np.asarray(key, dtype=np.int64)
    index = pd.Index(vote_key)
    if not index.has_duplicates:
        pos = index.get_indexer(key)
    else:
        distinct, first = np.unique(vote_key, return_index=True)
        pos = pd.Index(distinct).get_indexer(key)
        pos = np.where(pos >= 0, first[np.maximum(pos, 0)], -1)
    return np.where(key >= 0, pos, -1)


def no_pair_match(n_predictions: int, n_votes: int) -> AlignmentError:
    """The error when no predicted (item, annotator) pair has a vote."""
    return AlignmentError(f"no prediction matches a vote: {n_predictions} predicted pairs, "
                          f"{n_votes} votes")
