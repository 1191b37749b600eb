"""Multi-label votes on Dask: an annotator may tick several labels of one item.

Multi-label votes are read as in memory (``annokit evaluate --multilabel``): a long table
with one row per ticked label, an (item, annotator) pair repeated once per label
(:func:`annokit.scale.votes.read_votes_dask` with ``duplicates="keep"``). Every item's
votes share a partition, so each partition checks its responses
(:func:`annokit.core.multilabel.response_pairs`: annotator ids needed, a label ticked twice
in one response refused with the in-memory message) and finds its items' tick counts,
responses, per-label soft labels and majority sets
(:func:`annokit.core.multilabel.majority_of_counts`) itself.

:func:`evaluate_multilabel_dask` returns what
``evaluate(align_multilabel(votes, predictions))`` returns in memory:

1. the per-label predictions are read once on the client by the in-memory reader
   (:func:`annokit.metrics.multilabel_records.read_multilabel_predictions`: every format it
   takes, logits through the logistic function, the same checks), their columns put in the
   votes' label order (:func:`annokit.metrics.alignment.label_permutation`), and each row
   sent to the partition holding its item (joined by item id);
2. each partition fills the engine's multi-label states
   (:class:`annokit.metrics.engine.EvalPlan` on a
   :class:`~annokit.metrics.multilabel_records.MultilabelRecords` of its items): the model,
   the chance and oracle baselines (:func:`annokit.metrics.engine.baseline_probs`) and,
   with ``n_boot``, chunks of Poisson bootstrap replicates keyed by item id (the
   replicates drawn in memory);
3. the states are merged by a tree reduction (``MetricState.merge``) and the result built
   by :func:`annokit.metrics.engine.results_from_values`, with the per-label values.

Not on Dask (refused when asked): ``ties="error"``. The per-item table (``per_item=True``) is
gathered on the client: one row per item.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.checks import check_option
from annokit.core.multilabel import DEFAULT_MULTILABEL_TIES, majority_of_counts
from annokit.core.resample import item_keys, poisson_weights, replicate_chunks
from annokit.errors import AlignmentError
from annokit.metrics.alignment import (
    label_permutation,
    no_match_error,
    report_missing,
    unknown_order_message,
)
from annokit.metrics.engine import (
    EvalPlan,
    EvalSetup,
    EvaluationResult,
    assemble_result,
    baseline_probs,
    check_setup,
    model_head,
    multilabel_item_frame,
    per_label_values,
    warn_ties,
)
from annokit.metrics.multilabel_records import MultilabelRecords, read_multilabel_predictions
from annokit.scale.eval_join import item_positions, rows_per_partition
from annokit.scale.progress import compute
from annokit.scale.votes_multilabel import (
    check_responses,
    merge_parts,
    merge_repeated,
    responses_part,
    tree,
)

__all__ = ["evaluate_multilabel_dask"]


@dataclasses.dataclass(frozen=True)
class _Spec:
    """What every partition evaluates."""

    k: int
    n_annotators: int
    labels: Any
    ties: str
    names: tuple[str, ...]
    options: dict[str, dict[str, Any]]
    seed: int
    chunks: tuple[tuple[int, int], ...]
    baselines: bool
    per_item: bool = False


def _part(frame: pd.DataFrame, items: pd.DataFrame, rows: dict[str, np.ndarray], spec: _Spec,
          annotator_ids: np.ndarray) -> dict[str, Any]:
    """One partition: its responses checked, its items' ticks joined to their predictions,
    and the states filled (see the module docstring)."""
    r = responses_part(frame, items, k=spec.k, n_annotators=spec.n_annotators,
                       labels=spec.labels, annotator_ids=annotator_ids)
    out: dict[str, Any] = {"repeated": [(r.n_repeated, r.shown_repeated)]}
    if r.n_repeated:
        return out
    ids, first, counts, n_resp = r.item_ids, r.first, r.counts, r.n_responses
    m = len(r.keys)
    code = np.searchsorted(r.keys, rows["item"]).astype(np.int64)  # rows of these items only
    order = np.argsort(code, kind="stable")
    code = code[order]
    has = np.zeros(m, dtype=bool)
    has[code] = True
    head = np.argsort(first)[:3]
    out.update(n_items=m, n_matched=int(code.size),
               first_ids=list(zip(first[head].tolist(), ids[head].tolist(), strict=True)),
               missing=list(zip(first[~has].tolist(), ids[~has].tolist(), strict=True)))
    hard, tied = majority_of_counts(counts[code], n_resp[code], spec.ties)
    out["n_ties"] = int(tied.sum())
    out["point"] = out["base"] = None
    out["boot"] = [None] * len(spec.chunks)
    out["frames"] = []
    if not code.size:
        return out
    rec = MultilabelRecords(item_ids=ids[code], labels=spec.labels, probs=rows["probs"][order],
                            soft=counts[code] / n_resp[code][:, None],
                            hard=hard.astype(np.float64), is_tied=tied, tie_policy=spec.ties,
                            n_responses=n_resp[code])
    plan = EvalPlan([rec.probs], rec.soft, rec.hard, spec.names, spec.options, [None],
                    [(0, code.size)])
    out["point"] = plan.fill(lambda lo, hi: None)[0][0]
    if spec.per_item:
        out["frames"] = [multilabel_item_frame(rec, spec.names, spec.options)
                         .assign(_first=first[code])]
    if spec.baselines:
        base = dataclasses.replace(plan, probs=[baseline_probs(rec, kind)
                                                for kind in ("chance", "oracle")])
        out["base"] = [row[0] for row in base.fill(_no_weights)]
    ukeys = r.keys[code].view(np.uint64)  # item_keys of the ids, as in memory
    out["boot"] = [plan.fill(functools.partial(_weights, ukeys, spec.seed, a, b))[0][0]
                   for a, b in spec.chunks]
    return out


def _weights(keys: np.ndarray, seed: int, a: int, b: int, lo: int, hi: int) -> np.ndarray:
    """Bootstrap replicates ``a:b``' Poisson weights of rows ``lo:hi``, keyed by item."""
    return poisson_weights(keys[lo:hi], seed, a, b)


def _no_weights(lo: int, hi: int) -> None:
    """No bootstrap weights (the baselines' fill)."""
    return None


def _merge_states(a: list[Any] | None, b: list[Any] | None) -> list[Any] | None:
    if a is None:
        return b
    if b is not None:
        for x, y in zip(a, b, strict=True):
            x.merge(y)
    return a


def _merge_rest(out: dict[str, Any], p: dict[str, Any]) -> None:
    """The ids kept for messages (the first three seen), the missing items, the per-item
    frames and the metric states."""
    out["first_ids"] = sorted(out["first_ids"] + p["first_ids"])[:3]
    out["missing"] = out["missing"] + p["missing"]
    out["frames"] = out["frames"] + p["frames"]
    out["point"] = _merge_states(out["point"], p["point"])
    if out["base"] is None:
        out["base"] = p["base"]
    elif p["base"] is not None:
        out["base"] = [_merge_states(x, y) for x, y in zip(out["base"], p["base"], strict=True)]
    out["boot"] = [_merge_states(x, y) for x, y in zip(out["boot"], p["boot"], strict=True)]


#: One merge of partition results: the counts added, the rest by :func:`_merge_rest`.
_merge = functools.partial(merge_parts, summed=("n_items", "n_matched", "n_ties"),
                           rest=_merge_rest)


def evaluate_multilabel_dask(votes: Any, predictions: Any, metrics: Any = None, *,
                             pred_labels: Sequence[Any] | str | None = None,
                             on_missing: str = "error", id_field: str | None = None,
                             ties: str = DEFAULT_MULTILABEL_TIES, n_boot: int = 0,
                             seed: int = 0, confidence: float = 0.95, n_bins: int = 10,
                             baselines: bool = True, per_item: bool = False,
                             budget: int = 4_000_000) -> EvaluationResult:
    """Evaluate per-label predictions against multi-label votes on Dask.

    Parameters
    ----------
    votes : DaskVotes
        Read with ``duplicates="keep"`` (one row per ticked label), with annotator ids.
    predictions : path(s) or Predictions
        As :func:`annokit.metrics.multilabel_records.align_multilabel` takes them (read once
        on the client), with its ``pred_labels``, ``on_missing`` and ``id_field``.
    metrics : str or sequence of str, optional
        Registry names; default every multi-label metric (as in memory).
    ties : {"exclude", "include"}, default "exclude"
        A label ticked by exactly half of the annotators (:func:`multilabel_majority`).
    n_boot, seed, confidence, n_bins, baselines
        As in :func:`annokit.metrics.engine.evaluate`; the intervals equal the in-memory
        ones for the same seed, whatever the partitioning.
    per_item : bool, default False
        Also gather the per-item table on the client (the in-memory columns and item order).
    budget : int, default 4_000_000
        Bootstrap weights held at once per partition task (float64).

    Returns
    -------
    EvaluationResult
        ``task == "multilabel"`` with ``per_label``, as in memory (``per_item`` with
        ``per_item=True``).

    Raises
    ------
    SchemaError, AlignmentError, DataFormatError, InvalidValueError
        As in memory; votes without annotator ids; a label ticked twice in one response.

    Examples
    --------
    >>> import dask
    >>> from annokit.core.votes import Votes
    >>> from annokit.io.predictions import Predictions
    >>> from annokit.scale.votes import from_votes
    >>> df = pd.DataFrame({"item": ["q", "q", "q", "r"], "annotator": ["a", "a", "b", "a"],
    ...                    "label": ["x", "y", "y", "x"]})
    >>> votes = Votes.from_long(df, duplicates="keep")
    >>> preds = Predictions.from_arrays(["q", "r"], probs=[[0.4, 0.9], [0.8, 0.3]],
    ...                                 label_names=["x", "y"], atol=np.inf)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     res = evaluate_multilabel_dask(from_votes(votes, npartitions=2, client=False),
    ...                                    preds, "brier_multilabel")
    >>> round(res.metrics["brier_multilabel"], 4), res.n_ties
    (0.0375, 1)
    """
    from annokit.io.predictions import Predictions

    labels = votes.labels
    setup = check_setup(labels, len(labels), metrics=metrics, scale=None, n_boot=n_boot,
                        seed=seed, confidence=confidence, n_bins=n_bins, metric_options=None,
                        multilabel=True)
    check_option("on_missing", on_missing, ("error", "drop"))
    check_option("ties", ties, ("exclude", "include"))
    annotator_ids = np.asarray(votes.require_annotators("multi-label votes (a response is the "
                                                        "set of labels one annotator gave one "
                                                        "item)"), dtype=object)
    preds = predictions if isinstance(predictions, Predictions) else \
        read_multilabel_predictions(predictions, id_field=id_field)
    perm = label_permutation(labels, pred_labels, preds.n_labels, preds.label_names)
    pieces, sizes = _pieces(votes, preds, perm)
    chunks = tuple(replicate_chunks(setup.n_boot, max(int(sizes.max(initial=0)), 1),
                                    budget=budget))
    spec = _Spec(k=len(labels), n_annotators=len(annotator_ids), labels=labels, ties=ties,
                 names=setup.names, options=setup.options, seed=setup.seed, chunks=chunks,
                 baselines=baselines, per_item=bool(per_item))
    res = _merged_parts(votes, spec, pieces, annotator_ids)
    if perm is None:  # no order suggested: the majority of multi-label votes is per label
        raise AlignmentError(unknown_order_message(labels, preds.n_labels, None))
    return _result(res, setup, spec, preds, on_missing)


def _merged_parts(votes: Any, spec: _Spec, pieces: list[dict[str, np.ndarray]],
                  annotator_ids: np.ndarray) -> dict[str, Any]:
    """Every partition's :func:`_part` merged by a tree reduction; the responses checked."""
    from dask import delayed

    cl = votes.client
    if cl is not None:
        pieces = cl.scatter(pieces)
    spec_d, ids_d = delayed(spec, pure=True), delayed(annotator_ids, pure=True)
    parts = [delayed(_part)(f, i, r, spec_d, ids_d) for f, i, r in
             zip(votes.frame.to_delayed(), votes.items.to_delayed(), pieces, strict=True)]
    res = compute(cl, [tree(parts, _merge)], desc="multi-label evaluate")[0]
    check_responses(votes.source, *merge_repeated(res["repeated"]))
    return res


def _pieces(votes: Any, preds: Any, perm: np.ndarray | None
            ) -> tuple[list[dict[str, np.ndarray]], np.ndarray]:
    """Each partition's prediction rows (item keys, probabilities in the votes' label order),
    and the partitions' numbers of items."""
    pred_key = item_keys(np.asarray(preds.item_ids, dtype=object)).view(np.int64)
    pos, sizes = item_positions(votes, pred_key, desc="multi-label votes")
    probs = preds.probs if perm is None else preds.probs[:, perm]
    pieces = [{"item": pred_key[r], "probs": np.ascontiguousarray(probs[r])}
              for r in rows_per_partition(pos, np.flatnonzero(pos >= 0), sizes)]
    return pieces, sizes


def _result(res: dict[str, Any], setup: EvalSetup, spec: _Spec, preds: Any, on_missing: str
            ) -> EvaluationResult:
    """The checks of the merged partitions (as ``align_multilabel``'s) and the result: the
    engine's assembly, with the per-label values."""
    n_items, n_matched = res["n_items"], res["n_matched"]
    if not n_matched:
        raise no_match_error(n_items, [i for _, i in res["first_ids"]], preds.n_rows,
                             preds.item_ids)
    dropped = np.asarray([i for _, i in sorted(res["missing"])], dtype=object)
    report_missing(len(dropped), n_items, dropped, n_matched, on_missing, stacklevel=3)
    warn_ties(res["n_ties"], n_items, spec.ties, multilabel=True, stacklevel=3)
    k, names = spec.k, setup.names
    values = EvalPlan([], np.zeros((0, k)), np.zeros((0, k)), names, setup.options, [None],
                      []).values
    est = values(res["point"], None)[None, None, :]
    reps = None
    if setup.n_boot:
        reps = np.empty((1, 1, len(names), setup.n_boot, 3))  # value and bound statistics
        for (a, b), states in zip(spec.chunks, res["boot"], strict=True):
            reps[0, 0, :, a:b] = values(states, b - a)
    base = {}
    if spec.baselines and res["base"] is not None:
        base = {kind: dict(zip(names, map(float, values(states, None)), strict=True))
                for kind, states in zip(("chance", "oracle"), res["base"], strict=True)}
    heads: dict[str | None, dict[str, Any]] = {None: model_head(
        n_matched, preds.n_rows - n_matched, len(dropped), dropped, spec.labels.names, None)}
    sources: dict[str | None, Any] = {}
    if spec.per_item:
        frame = (pd.concat(res["frames"], ignore_index=True).sort_values("_first")
                 .drop(columns="_first").reset_index(drop=True))
        sources[None] = lambda: frame
    result = assemble_result(setup, heads, est, reps, base, by=None, groups=[], group_sizes=[],
                             tie_policy=spec.ties, n_ties=res["n_ties"], frames=sources)
    result.task = "multilabel"
    result.per_label = per_label_values(names, res["point"], spec.labels.names)
    return result
