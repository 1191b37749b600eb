"""Perspectivist evaluation on Dask: a prediction per (item, annotator) against that annotator.

:func:`evaluate_annotators_dask` returns what
:func:`annokit.metrics.perspectivist.evaluate_annotators` returns in memory, from votes in
a :class:`~annokit.scale.votes.DaskVotes`:

1. the predictions (one row per (item, annotator) pair: as many rows as votes at most,
   far fewer columns) are read once on the client by the in-memory reader
   (:func:`~annokit.metrics.perspectivist.read_annotator_predictions`: CSV, TSV, JSON
   Lines, Parquet or a frame, with its checks and messages), coded there (item key, annotator
   code, predicted label code and distribution) and checked as in memory (repeated pairs,
   labels, distributions);
2. each row goes to the partition that holds its item (every item's votes share a
   partition), and each partition joins its rows to its votes by (item, annotator) and
   fills the in-memory engine's sums (:func:`~annokit.metrics.perspectivist.pair_sums`);
3. the sums are merged by a tree reduction (:meth:`PairSums.merge`) and finished on the
   client by :func:`~annokit.metrics.perspectivist.annotator_evaluation`, the function
   memory finishes with: the scores, the pooled view, the gap and the per-annotator table.

Votes read with ``duplicates="keep"`` may hold several votes of one pair; memory scores the
first in file order, which the Dask engine does not keep across files: such a pair with
a prediction is refused (one line, naming it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from annokit.core.resample import item_keys
from annokit.core.scales import SCALES
from annokit.errors import InvalidValueError, SchemaError
from annokit.metrics.perspectivist import (
    AnnotatorEvaluation,
    PairSums,
    annotator_evaluation,
    check_repeated_pairs,
    first_vote_of,
    no_pair_match,
    pair_predictions,
    pair_sums,
    read_annotator_predictions,
)
from annokit.metrics.states_ext import check_values_option
from annokit.scale.eval_join import item_positions, rows_per_partition
from annokit.scale.progress import compute
from annokit.scale.votes_multilabel import item_codes

__all__ = ["evaluate_annotators_dask"]

_FAN_IN = 8


def _part(frame: pd.DataFrame, items: pd.DataFrame, rows: dict[str, np.ndarray], *, k: int,
          n_annotators: int, scale: str, values: np.ndarray, normalizer: float,
          annotator_ids: np.ndarray, source: str) -> tuple[PairSums | None, int]:
    """One partition: its prediction rows joined to its votes by (item, annotator); the sums
    of the matched pairs (None when only counting matches) and how many matched."""
    keys = frame["item"].to_numpy(dtype=np.int64)
    distinct, local = item_codes(keys)
    vote_key = local * n_annotators + frame["annotator"].to_numpy()
    # the client sent only rows of this partition's items: every key is among ``distinct``
    code = np.searchsorted(distinct, rows["item"]).astype(np.int64)
    key = code * n_annotators + rows["annotator"]
    pos = first_vote_of(vote_key, key)
    matched = pos >= 0
    vote_pos = pos[matched]
    if len(vote_key) and pd.Index(vote_key).has_duplicates:
        twice = pd.Index(vote_key).duplicated(keep=False)[vote_pos]
        if twice.any():
            j = vote_pos[np.argmax(twice)]
            item_id = items.loc[items["item"] == keys[j], "item_id"].iloc[0]
            who = annotator_ids[int(frame["annotator"].iloc[j])]
            raise SchemaError(f"{source}: item {item_id!r} has several votes from annotator "
                              f"{who!r} and a prediction for them; the Dask engine does not "
                              "know which vote comes first across files: use --engine memory "
                              "(it scores the first)")
    n = int(matched.sum())
    if "pred" not in rows:
        return None, n
    probs = rows.get("probs")
    sums = pair_sums(rows["pred"][matched], None if probs is None else probs[matched],
                     frame["label"].to_numpy()[vote_pos], local[vote_pos],
                     frame["annotator"].to_numpy()[vote_pos], k=k, n_annotators=n_annotators,
                     scale=scale, values=values, normalizer=normalizer,
                     n_votes_covered=n)  # distinct pairs: distinct first votes
    return sums, n


def _merge(*parts: tuple[PairSums | None, int]) -> tuple[PairSums | None, int]:
    sums = [p[0] for p in parts if p[0] is not None]
    n = sum(p[1] for p in parts)
    if not sums:
        return None, n
    out = sums[0]
    for s in sums[1:]:
        out = out.merge(s)
    return out, n


def _pieces(votes: Any, frame: pd.DataFrame, annotator_ids: Any, names: tuple[str, ...]
            ) -> tuple[list[dict[str, np.ndarray]], Exception | None]:
    """Each partition's prediction rows (item key, annotator code, prediction), the repeated
    pairs refused first; and the error of the predictions' values, which memory raises after
    the match check (None: none)."""
    n_ann = len(annotator_ids)
    pred_key = (item_keys(frame["item"].to_numpy(dtype=object)).view(np.int64) if len(frame)
                else np.zeros(0, np.int64))
    item, sizes = item_positions(votes, pred_key, desc="annotator predictions")
    ann = pd.Index(np.asarray(annotator_ids, dtype=object).astype(str)).get_indexer(
        frame["annotator"].to_numpy())
    check_repeated_pairs(frame, item, ann, n_ann)
    try:
        pred, probs = pair_predictions(frame, names)
        late = None
    except (InvalidValueError, SchemaError) as exc:  # memory raises it after the match check
        pred, probs, late = None, None, exc
    pieces = []
    for r in rows_per_partition(item, np.flatnonzero((item >= 0) & (ann >= 0)), sizes):
        piece = {"item": pred_key[r], "annotator": ann[r].astype(np.int64)}
        if pred is not None:
            piece["pred"] = pred[r]
            if probs is not None:
                piece["probs"] = probs[r]
        pieces.append(piece)
    return pieces, late


def _tree(nodes: list[Any]) -> Any:
    from dask import delayed

    while len(nodes) > 1:
        nodes = [delayed(_merge)(*nodes[i:i + _FAN_IN]) for i in range(0, len(nodes), _FAN_IN)]
    return nodes[0]


def evaluate_annotators_dask(votes: Any, predictions: Any, *, scale: str | None = None,
                             values: Any = None, normalizer: float | None = None,
                             quantiles: tuple[float, ...] = (0.1, 0.25, 0.75, 0.9),
                             n_worst: int = 5) -> AnnotatorEvaluation:
    """Score predictions per (item, annotator) against each annotator's own vote, on Dask.

    Parameters
    ----------
    votes : DaskVotes
        With annotator ids (:func:`annokit.scale.votes.read_votes_dask`).
    predictions : str, Path or DataFrame
        As :func:`annokit.metrics.perspectivist.evaluate_annotators` takes them (a long
        CSV/TSV/JSON Lines/Parquet table or a frame), read once on the client.
    scale : {"nominal", "ordinal", "interval", "ratio"}, optional
        Default the votes' label set's (``votes.labels.scale``), as the CLI passes it in
        memory.
    values, normalizer, quantiles, n_worst
        As in :func:`~annokit.metrics.perspectivist.evaluate_annotators`.

    Returns
    -------
    AnnotatorEvaluation
        Equal to the in-memory result (sums merged in another order: within 1e-12).

    Raises
    ------
    SchemaError, AlignmentError, InvalidValueError, DataFormatError
        As in memory; and a pair with several votes and a prediction (module docstring).

    Examples
    --------
    >>> import dask
    >>> from annokit.core.votes import Votes
    >>> from annokit.scale.votes import from_votes
    >>> votes = Votes.from_long(pd.DataFrame({"item": ["i1", "i1", "i2", "i2"],
    ...     "annotator": ["a", "b", "a", "b"], "label": ["x", "y", "y", "y"]}))
    >>> preds = pd.DataFrame({"item": ["i1", "i1", "i2", "i2"],
    ...     "annotator": ["a", "b", "a", "b"], "label": ["y", "x", "y", "y"]})
    >>> with dask.config.set(scheduler="synchronous"):
    ...     res = evaluate_annotators_dask(from_votes(votes, npartitions=2, client=False), preds)
    >>> res.scores["lewidi_error_rate"], res.pooled["tvd"], res.gap["error_rate"]
    (0.5, 0.0, 0.5)
    """
    from dask import delayed

    scale = getattr(votes.labels, "scale", "nominal") if scale is None else scale
    if scale not in SCALES:
        raise InvalidValueError(f"scale must be one of {list(SCALES)}; got {scale!r}")
    annotator_ids = votes.require_annotators("perspectivist evaluation")
    if isinstance(n_worst, bool) or not isinstance(n_worst, (int, np.integer)) or n_worst < 0:
        raise InvalidValueError(f"n_worst must be an integer >= 0; got {n_worst!r}")
    frame = read_annotator_predictions(predictions)
    names = tuple(votes.labels.names)
    k, n_ann = len(names), len(annotator_ids)
    v = check_values_option(values, k)
    s = float(k if normalizer is None else normalizer)
    if scale != "nominal" and not (np.isfinite(s) and s > 0):
        raise InvalidValueError(f"normalizer must be a positive number; got {normalizer!r}")
    cl = votes.client
    pieces, late = _pieces(votes, frame, annotator_ids, names)
    if cl is not None:
        pieces = cl.scatter(pieces)
    ids = delayed(np.asarray(annotator_ids, dtype=object), pure=True)
    parts = [delayed(_part)(f, i, r, k=k, n_annotators=n_ann, scale=scale, values=v,
                            normalizer=s, annotator_ids=ids, source=votes.source)
             for f, i, r in zip(votes.frame.to_delayed(), votes.items.to_delayed(), pieces,
                                strict=True)]
    if not parts:
        raise SchemaError(f"{votes.source}: the votes have no partitions")
    sums, n_matched = compute(cl, [_tree(parts)], desc="annotator predictions")[0]
    if not n_matched:
        raise no_pair_match(len(frame), votes.n_votes)
    if late is not None:
        raise late
    if sums is None:  # pragma: no cover - every partition returns sums when pred is given
        raise ValueError("no sums from the partitions")
    return annotator_evaluation(sums, annotator_ids, labels=names,
                                n_unmatched_predictions=len(frame) - n_matched,
                                n_votes=votes.n_votes, quantiles=quantiles, n_worst=n_worst)
