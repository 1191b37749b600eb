"""``annokit evaluate`` on Dask: the engine's metric states, filled per partition and merged.

:func:`evaluate_dask` returns what
``annokit.metrics.engine.evaluate(align(votes, predictions), ...)`` returns in
memory, from votes in a :class:`~annokit.scale.votes.DaskVotes` and predictions
in Parquet/CSV files or a Dask DataFrame:

1. each votes partition becomes one row of counts per item; the prediction rows are routed
   to the votes partitions of their items, or (when a prediction partition spans several)
   both are shuffled by the item id's key (:func:`annokit.core.resample.item_keys`) into the
   same partitions (:func:`annokit.scale.eval_join.co_partition`); they are joined there by
   item id, as
   :func:`annokit.metrics.records.align` joins them (label names, unknown items,
   items without predictions, duplicates: the same errors and counted warnings);
2. per partition: soft labels, the majority under the tie policy, and the
   registry's states filled by the engine's own pass
   (:class:`annokit.metrics.engine.EvalPlan`, :func:`annokit.metrics.states_ext.update_states`:
   the fused kernels' states and the binary and order-aware ones) with the
   engine's options (:func:`annokit.metrics.engine.resolve_options`; the scale is
   the votes' label set's), for the point estimates and, with ``n_boot``, for chunks of Poisson
   bootstrap replicates weighted by ``poisson_weights(item_keys(item_ids), seed, start, stop)``
   (keyed by item id, so the replicates are those drawn in memory);
3. the states are merged by a tree reduction (``MetricState.merge``) and
   computed on a worker; only metric values reach the client, which builds
   the result with :func:`annokit.metrics.engine.results_from_values`.

``by="agreement"`` needs the human-entropy quantiles of all items first: the
partitions' distinct entropy values with their counts are merged and the edges
computed from them exactly as ``np.quantile`` would
(:func:`annokit.metrics.records.agreement_bins` with ``counts``); the joined
partitions are kept in worker memory between the two passes.

The options are the in-memory workflow's (:class:`annokit.metrics.workflow.EvaluateOptions`),
checked and resolved by the engine's own steps (:func:`annokit.metrics.engine.check_setup`;
the result assembled by :func:`annokit.metrics.engine.assemble_result`). On Dask:

* ``model`` reads the prediction file in memory (one row per item) and picks that model;
* a fixed ``temperature``, or one fitted on ``fit_temperature_on`` (dev files read in memory,
  joined to the dev items' votes gathered from the partitions; the fit runs on the client),
  is applied to the prediction rows by the workers;
* ``per_item`` is written in the format of :func:`~annokit.metrics.workflow.per_item_format`:
  CSV, TSV and JSON Lines as one file, as the in-memory CLI writes it (the rows in the items'
  first-seen order); Parquet as a directory with one file per partition, written by the
  workers (a subdirectory per model with several models), swapped in atomically;
  ``result.per_item`` reads it back;
* ``target="population"``: the prior of :mod:`annokit.metrics.population` is fitted on all
  items together and its draws come from one random stream in item order, so neither splits
  by partition. The per-item part is small (items x labels): every item's counts and each
  model's probabilities are gathered on the client in the in-memory item order (first seen)
  and the in-memory estimator runs on them (:func:`annokit.metrics.engine.population_target`);
  the metrics it leaves as under the votes target (SMECE) come from the partitions' states;
* ``ties="random"`` and ``oracle_temperature`` are refused (:func:`dask_refusal`).

Memory per task is bounded by a chunk of replicates (``budget`` weights). The
adaptive-ECE point values (models, baselines and groups) do not gather the items:
their edges are exact quantiles bracketed and then read off in two round trips, and
their bin sums added in one more, each one task per worker
(:mod:`annokit.scale.eval_adaptive`). Its
bootstrap replicates still keep every item (each replicate has its own edges): 16
bytes per item, plus 8 per item and replicate of a chunk, on one worker, with
replicate chunks sized on all items, as in memory.
"""

from __future__ import annotations

import contextlib
import functools
import math
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from annokit.core.ids import id_positions
from annokit.core.scales import check_scale
from annokit.core.soft_labels import DEFAULT_TIES, TiePolicy, majority
from annokit.errors import (
    AlignmentError,
    AnnokitError,
    DataFormatError,
    InvalidValueError,
    OptionConflictError,
    SchemaError,
)
from annokit.io.atomic import atomic_directory, check_outputs
from annokit.metrics.alignment import (
    label_permutation,
    no_match_error,
    report_missing,
    unknown_order_message,
    warn_below_chance,
)
from annokit.metrics.engine import (
    AGREEMENT_BINS,
    EvalSetup,
    EvaluationResult,
    check_setup,
)
from annokit.metrics.population import refusals
from annokit.metrics.records import agreement_bins
from annokit.metrics.workflow import (
    EvaluateOptions,
    per_item_format,
    read_model_predictions,
    resolve_metrics,
    resolve_positive,
    warn_overlap,
)
from annokit.scale import eval_partition as ep
from annokit.scale.eval_adaptive import adaptive_point_values
from annokit.scale.eval_job import EvalJob, job_result, tree
from annokit.scale.eval_join import co_partition
from annokit.scale.eval_predictions import DaskPredictions, read_predictions_dask
from annokit.scale.eval_temperature import temper_part, temperature_for
from annokit.scale.progress import compute, persist
from annokit.scale.write import write_table_dask

__all__ = ["dask_refusal", "evaluate_dask"]

_LOCAL_SCHEDULERS = ("sync", "synchronous", "single-threaded", "threads", "threading",
                     "processes", "multiprocessing")


def _require_dask() -> None:
    try:
        import dask  # noqa: F401
        import dask.dataframe  # noqa: F401
    except ImportError:
        raise AnnokitError("evaluate_dask needs the optional Dask engine: "
                           "pip install 'annokit[dask]'") from None


def _client(client: Any) -> Any:
    """The given client; None when dask is set to a local scheduler (``dask.config.set(
    scheduler="synchronous")``); else :func:`annokit.scale.client.get_client`."""
    import dask

    if client is None and dask.config.get("scheduler", None) in _LOCAL_SCHEDULERS:
        return None
    try:
        from annokit.scale.client import get_client
    except ImportError:  # pragma: no cover - before annokit.scale.client exists
        if client is not None:
            return client
        try:
            from distributed import default_client
            return default_client()
        except (ImportError, ValueError):
            return None
    return get_client(client)


def _check_model(name: str | None, st: dict[str, Any], pred: DaskPredictions,
                 perm: np.ndarray | None, labels: Any, stats: dict[str, Any],
                 on_missing: str) -> None:
    """The checks and warnings of ``align(votes, predictions)``, from merged statistics."""
    if st["n_dup"]:
        raise DataFormatError(f"{pred.source}: item id {st['dup_id']!r} appears more than once; "
                              f"{st['n_dup']} duplicated id(s) in all")
    n_items = stats["n_vote_items"]
    conf = st["confusion"]
    if perm is None:
        matched = pred.n_labels == len(labels) and st["n_matched"]
        raise AlignmentError(unknown_order_message(labels, pred.n_labels,
                                                   conf if matched else None))
    if not st["n_matched"]:
        first = pred.frame["item_id"].head(3, npartitions=-1, compute=True).tolist()
        raise no_match_error(n_items, [str(v) for v in list(stats["vote_first"][1])[:3]],
                             st["n_rows"], [str(v) for v in first])
    report_missing(st["n_missing"], n_items, [str(v) for v in list(st["missing_ids"])[:5]],
                   st["n_matched"], on_missing, stacklevel=3)
    warn_below_chance(conf, perm, labels, stacklevel=3)


def _perm(pred: DaskPredictions, pred_labels: Any, labels: Any) -> np.ndarray | None:
    """The column permutation of ``align`` (None: the order is not known; checked later)."""
    return label_permutation(labels, pred_labels, pred.n_labels, pred.label_names)

def dask_refusal(options: EvaluateOptions) -> str | None:
    """Why the Dask engine cannot honour ``options``, in one line naming the option and the
    way out; None when it can. The command line refuses these up front (exit status 2)."""
    if options.ties == "random":
        return ("--ties random runs in memory only: the in-memory draw follows each item's "
                "rank in the whole item order (one random stream), which no partition knows; "
                "use --ties first, or --engine memory")
    if options.oracle_temperature:
        return ("--oracle-temperature runs in memory only: its fit reads every evaluated item "
                "at each step of the search; fit on dev files with --fit-temperature-on, or "
                "use --engine memory")
    return None


def _setup(labels: Any, o: EvaluateOptions, scale: str | None,
           metric_options: Mapping[str, Any] | None
           ) -> tuple[EvalSetup, TiePolicy, dict[str, str]]:
    """The engine's checked options (:func:`annokit.metrics.engine.check_setup`), the tie
    policy, and the metrics ``--metrics all`` leaves out under the population target."""
    reason = dask_refusal(o)
    if reason is not None:
        raise OptionConflictError(reason)
    scale = check_scale(getattr(labels, "scale", "nominal") if scale is None else scale)
    metrics = resolve_metrics(o.metrics, scale=scale, n_labels=len(labels))
    refused: dict[str, str] = {}
    if o.target == "population" and o.metrics == "all" and metrics is not None:
        refused = refusals(metrics)  # as the in-memory workflow: listed, not refused
        metrics = tuple(m for m in metrics if m not in refused)
    policy = DEFAULT_TIES if o.ties is None else o.ties
    majority(np.ones((1, 2), dtype=np.int64), ties=policy)  # the in-memory error of first_seen
    positive = resolve_positive(o.positive, labels)
    if positive is not None:
        metric_options = {**(metric_options or {}), "positive": positive}
    setup = check_setup(labels, len(labels), metrics=metrics, scale=scale, n_boot=o.n_boot,
                        seed=o.seed, confidence=o.confidence, n_bins=o.n_bins,
                        metric_options=metric_options, target=o.target)
    return setup, policy, refused


def _inputs(predictions: Any, o: EvaluateOptions) -> dict[str | None, Any]:
    """The models' prediction sources, checked against the per-item output and temperature."""
    if isinstance(predictions, Mapping):
        if not predictions:
            raise SchemaError("no models to evaluate: the mapping of model name to records is "
                              "empty")
        inputs: dict[str | None, Any] = {str(k): v for k, v in predictions.items()}
    else:
        inputs = {None: predictions}
    out_format = per_item_format(o)
    one_file = out_format is not None and out_format != "parquet"
    if one_file and len(inputs) > 1:
        raise InvalidValueError(f"per_item as one {out_format} file takes one model; give a "
                                ".parquet path (one folder of Parquet parts per model) for "
                                "several")
    if o.per_item is not None:
        check_outputs({"per_item_out": o.per_item},
                      directories=[] if one_file else ["per_item_out"])
    if o.temperature_mode is not None and len(inputs) > 1:
        raise OptionConflictError("a temperature applies to one model's predictions; evaluate "
                                  "the models one at a time")
    return inputs


def _read_models(inputs: dict[str | None, Any], o: EvaluateOptions
                 ) -> dict[str | None, DaskPredictions]:
    """Each model's prediction rows (``--model`` picked out of its file in memory first)."""
    if o.model is not None:  # the in-memory reader picks the model out of its file
        inputs = {m: p if isinstance(p, DaskPredictions) else read_model_predictions(p, o)
                  for m, p in inputs.items()}
    return {m: p if isinstance(p, DaskPredictions) else
            read_predictions_dask(p, id_field=o.id_field, renormalize=o.renormalize,
                                  atol=o.atol)
            for m, p in inputs.items()}


def evaluate_dask(votes: Any, predictions: Any, options: EvaluateOptions | None = None, *,
                  client: Any = None, budget: int = 4_000_000, scale: str | None = None,
                  metric_options: Mapping[str, Any] | None = None) -> EvaluationResult:
    """Evaluate registered metrics on Dask: the result of the in-memory workflow
    (:func:`annokit.metrics.workflow.evaluate_memory`) with the same options.

    Parameters
    ----------
    votes : DaskVotes
        From :func:`annokit.scale.votes.read_votes_dask` or ``from_votes``.
    predictions : path(s), glob, dask/pandas DataFrame, Predictions, or a mapping of them
        One model (see :func:`annokit.scale.eval_predictions.read_predictions_dask`),
        or ``{model name: predictions}`` to evaluate several on the same items
        with paired differences (``result.comparisons``).
    options : EvaluateOptions, optional
        The options of the in-memory workflow (:class:`annokit.metrics.workflow.EvaluateOptions`);
        what the Dask engine does with some of them (``model``, the temperatures,
        ``per_item``) is said in the module notes; :func:`dask_refusal` says which it refuses.
    client : distributed.Client, optional
        Default: :func:`annokit.scale.client.get_client`.
    budget : int, default 4_000_000
        Bootstrap weights held at once per task (float64).
    scale, metric_options
        As in :func:`annokit.metrics.engine.evaluate` (the scale defaults to the votes'
        label set's; ``positive`` comes from ``options``).

    Returns
    -------
    EvaluationResult
        As in memory (``temperature`` included); ``per_item`` only with ``options.per_item``.

    Raises
    ------
    AnnokitError
        Dask is not installed.
    OptionConflictError
        Options the Dask engine cannot honour, temperatures with several models.
    AlignmentError, DataFormatError, InvalidValueError, SchemaError
        The errors of ``align`` and ``evaluate``.

    Examples
    --------
    >>> import pandas as pd
    >>> from annokit.core.votes import Votes
    >>> from annokit.scale.votes import from_votes
    >>> votes = Votes.from_counts([[3, 1], [0, 4], [2, 2]], labels=["a", "b"],
    ...                           item_ids=["x", "y", "z"])
    >>> preds = pd.DataFrame({"item": ["x", "y", "z"], "prob_a": [0.8, 0.1, 0.5],
    ...                       "prob_b": [0.2, 0.9, 0.5]})
    >>> import dask
    >>> with dask.config.set(scheduler="synchronous"):
    ...     res = evaluate_dask(from_votes(votes, npartitions=2), preds,
    ...                         EvaluateOptions(metrics=["accuracy"]))
    >>> res.metrics, res.n_ties
    ({'accuracy': 1.0}, 1)
    """
    _require_dask()
    o = EvaluateOptions() if options is None else options
    setup, policy, refused = _setup(votes.labels, o, scale, metric_options)
    inputs = _inputs(predictions, o)
    cl = _client(client)
    preds = _read_models(inputs, o)
    temperature, info, fit_ids = temperature_for(votes, o, cl)
    if temperature is not None:
        for p in preds.values():
            p.frame = p.frame.map_partitions(temper_part, temperature, p.n_labels,
                                             meta=p.frame._meta)
    job = EvalJob(setup, o, policy, votes.labels, preds,
               [_perm(p, o.pred_labels, votes.labels) for p in preds.values()], cl, budget)
    stats, specs, vals = _passes(job, votes, _join(job, votes, fit_ids))
    if info is not None and fit_ids is not None:
        info = {**info, "n_overlap_items": int(stats["n_overlap"])}
    result = job_result(job, stats, specs, vals, temperature)
    result.temperature = info
    result.not_computed = {**refused, **result.not_computed}
    warn_overlap(info)
    return result


def _join(job: EvalJob, votes: Any, fit_ids: Any) -> Any:
    """Join each votes partition's item counts with the models' rows (``job.joined``); the
    delayed merged statistics the client checks (with the temperature fit's overlap)."""
    import dask.dataframe as dd
    from dask import delayed

    k = len(job.labels)
    meta = ep.counts_part(votes.frame._meta, votes.items._meta, k)
    counts = dd.from_delayed([delayed(ep.counts_part)(f, i, k) for f, i in
                              zip(votes.frame.to_delayed(), votes.items.to_delayed(), strict=True)],
                             meta=meta, verify_meta=False)
    aligned = co_partition(counts, votes.items, [p.frame for p in job.preds.values()],
                           client=job.client, npartitions=max(1, votes.frame.npartitions))
    keep_dropped = job.options.on_missing == "drop"
    job.joined = [delayed(ep.join_part)(*row, perms=job.perms, keep_dropped=keep_dropped, k=k)
                  for row in zip(*aligned, strict=True)]
    del aligned  # the predictions kept on the workers are released once joined
    if job.two_pass:
        job.joined = persist(job.client, job.joined, desc="joining predictions")
    stats_node = tree([delayed(ep.part_stats)(j, job.policy) for j in job.joined],
                       ep.merge_stats, keep_dropped=keep_dropped)
    if fit_ids is not None:  # how many items the temperature was fitted on are evaluated
        ids_node = delayed(fit_ids, pure=True)
        stats_node = delayed(_with_overlap)(stats_node, tree(
            [delayed(_overlap)(j, ids_node) for j in job.joined], _add))
    return stats_node


def _passes(job: EvalJob, votes: Any, stats_node: Any
            ) -> tuple[dict[str, Any], list[ep.StateSpec], list[dict[str, Any]]]:
    """The statistics (checked), the state specs and their values; the per-item output
    written by the workers on the way (one file: gathered in first-seen order)."""
    o, cl = job.options, job.client
    out_format = per_item_format(o)
    one_file = out_format is not None and out_format != "parquet"
    write = functools.partial(_run, cl, joined=job.joined, labels=job.labels,
                              names=job.setup.names, options=job.setup.options,
                              policy=job.policy, models=list(job.preds), order=one_file)
    with contextlib.ExitStack() as stack:
        tmp_dir = None
        if one_file:  # parts in a scratch folder, then one file in the items' first-seen order
            tmp_dir = tempfile.mkdtemp(prefix=".per-item-", dir=Path(str(o.per_item)).parent)
            stack.callback(shutil.rmtree, tmp_dir, True)
        elif o.per_item is not None:
            tmp_dir = str(stack.enter_context(atomic_directory(o.per_item)))
        if job.two_pass:
            stats = _compute(cl, [stats_node])[0]
            edges = _check(job, stats)
            specs = job.specs(edges, stats["n_kept"], stats["max_part"])
            vals, _ = write(job.trees(specs), tmp_dir=tmp_dir)
            if job.adaptive:
                vals[0]["adaptive_point"] = adaptive_point_values(
                    job.joined, specs[0], job.adaptive, job.setup.options,
                    n_models=len(job.preds), n_groups=1 if edges is None else edges.size,
                    baselines=o.baselines, compute=lambda nodes: _compute(cl, nodes),
                    persist=lambda nodes: persist(cl, nodes, desc="adaptive ECE"), client=cl)
        else:
            # partition sizes are not known yet: replicate chunks for a bound on them
            nparts = max(1, votes.frame.npartitions)
            bound = math.ceil(votes.n_items / nparts) * 2 if votes.n_items else 1
            specs = job.specs(None, votes.n_items, bound)
            stats, vals, _ = write(job.trees(specs), tmp_dir=tmp_dir, stats_node=stats_node)
            _check(job, stats)
        if one_file and tmp_dir is not None and o.per_item is not None:
            import dask.dataframe as dd

            parts = sorted(str(f) for f in Path(tmp_dir).glob("part.*.parquet"))
            write_table_dask(dd.read_parquet(parts), o.per_item, client=cl, for_people=True,
                             order="_first", format=out_format)
    return stats, specs, vals


def _overlap(j: ep.Joined, ids: Any) -> int:
    """How many of the partition's evaluated items the temperature was fitted on (as
    :func:`annokit.metrics.temperature.temperature_scale` counts them, by one hash join)."""
    return int((id_positions(ids, j.ids) >= 0).sum()) if j.n else 0


def _add(*counts: int) -> int:
    return sum(counts)


def _with_overlap(stats: dict[str, Any], n_overlap: int) -> dict[str, Any]:
    return {**stats, "n_overlap": n_overlap}


def _compute(cl: Any, nodes: list[Any]) -> list[Any]:
    """Compute delayed objects on the client (None: dask's own scheduler), with a progress bar."""
    return compute(cl, nodes, desc="evaluate")


def _run(cl: Any, value_nodes: list[Any], *, joined: list[Any], tmp_dir: str | None,
         labels: Any, names: tuple[str, ...], options: Mapping[str, dict[str, Any]],
         policy: str, models: list[Any], stats_node: Any = None, order: bool = False) -> Any:
    """Compute the value nodes (after ``stats_node``) and the per-item writes together."""
    from dask import delayed

    writes = []
    if tmp_dir is not None:
        writes = [delayed(ep.write_per_item)(j, tmp_dir, i, labels=labels, names=names,
                                             options=options, ties=policy, models=models,
                                             order=order)
                  for i, j in enumerate(joined)]
    head = [] if stats_node is None else [stats_node]
    out = _compute(cl, head + value_nodes + writes)
    vals = out[len(head):len(head) + len(value_nodes)]
    return (*out[:len(head)], vals, out[len(head) + len(value_nodes):])


def _check(job: EvalJob, stats: dict[str, Any]) -> np.ndarray | None:
    """The checks of align (per model) and evaluate (several models, ties); the bin edges."""
    for (model, pred), perm, st in zip(job.preds.items(), job.perms, stats["models"],
                                       strict=True):
        _check_model(model, st, pred, perm, job.labels, stats, job.options.on_missing)
    first = stats["models"][0]
    for model, st in list(zip(job.preds, stats["models"], strict=True))[1:]:
        if st["n_not_in_first"] or st["n_matched"] != first["n_matched"]:
            raise AlignmentError(f"model {model!r} has {st['n_matched']} items, "
                                 f"{st['n_not_in_first']} of the first model's "
                                 f"{first['n_matched']} items missing; several models must be "
                                 "aligned to the same items")
    return _edges(stats) if job.options.by is not None else None


def _edges(stats: dict[str, Any]) -> np.ndarray:
    edges, _, _, _ = agreement_bins(stats["entropy_values"], AGREEMENT_BINS,
                                    counts=stats["entropy_counts"])
    return edges
