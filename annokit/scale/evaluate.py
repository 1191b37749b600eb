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
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from annokit.core.ids import id_positions
from annokit.core.resample import replicate_chunks
from annokit.core.scales import check_scale
from annokit.core.soft_labels import DEFAULT_TIES, TiePolicy, majority
from annokit.errors import (
    AlignmentError,
    AnnokitError,
    DataFormatError,
    DegenerateInputWarning,
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
    EvaluationResult,
    check_metrics,
    resolve_options,
    results_from_values,
)
from annokit.metrics.records import agreement_bins, agreement_groups
from annokit.metrics.registry import REGISTRY
from annokit.metrics.states import AdaptiveBinnedState
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
from annokit.scale.eval_join import co_partition
from annokit.scale.eval_predictions import DaskPredictions, read_predictions_dask
from annokit.scale.eval_temperature import temper_part, temperature_for
from annokit.scale.progress import compute, persist
from annokit.scale.write import write_table_dask

__all__ = ["dask_refusal", "evaluate_dask"]

_FAN_IN = 8
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


def _tree(items: list[Any], combine: Any, **kwargs: Any) -> Any:
    from dask import delayed

    if not items:
        raise SchemaError("the votes have no partitions")
    while len(items) > 1:
        items = [delayed(combine)(*items[i:i + _FAN_IN], **kwargs)
                 for i in range(0, len(items), _FAN_IN)]
    return items[0]


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
    if options.target == "population":
        return ("--target population runs in memory only: its prior is fitted on the "
                "items' vote counts and the model's probabilities together; use --engine memory")
    if options.ties == "random":
        return ("--ties random runs in memory only: the in-memory draw follows each item's "
                "rank in the whole item order (one random stream), which no partition knows; "
                "use --ties first, or --engine memory")
    if options.oracle_temperature:
        return ("--oracle-temperature runs in memory only: its fit reads every evaluated item "
                "at each step of the search; fit on dev files with --fit-temperature-on, or "
                "use --engine memory")
    return None


def _options(options: EvaluateOptions, scale: str, n_labels: int
             ) -> tuple[tuple[str, ...], TiePolicy]:
    reason = dask_refusal(options)
    if reason is not None:
        raise OptionConflictError(reason)
    names = check_metrics(resolve_metrics(options.metrics, scale=scale, n_labels=n_labels),
                          scale=scale, n_labels=n_labels)
    policy = DEFAULT_TIES if options.ties is None else options.ties
    majority(np.ones((1, 2), dtype=np.int64), ties=policy)  # the in-memory error of first_seen
    return names, policy


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
        The options of the in-memory workflow (:class:`annokit.metrics.workflow.EvaluateOptions`):
        the metrics (default: the labels' scale's default set), ``n_boot``, ``seed``,
        ``confidence``, ``n_bins``, ``by`` (the intervals equal the in-memory ones for the
        same seed, whatever the partitioning), the reading and joining of the predictions
        (``pred_labels``, ``on_missing``, ``id_field``, ``renormalize``, ``atol``; ``model``
        reads the files in memory and picks that model's predictions), ``positive``, a fixed
        ``temperature`` or one fitted on ``fit_temperature_on`` (dev files, read in memory,
        joined to the dev items' votes gathered from the partitions; the fit runs on the
        client and the workers apply it to the prediction rows), ``ties`` (``"first"``;
        ``"random"`` is refused, see :func:`dask_refusal`, as is ``oracle_temperature``) and
        ``per_item`` in the format of :func:`~annokit.metrics.workflow.per_item_format` (the
        in-memory rule: ``per_item_format``, else the extension's, else CSV): CSV, TSV and
        JSON Lines are one file, as the in-memory CLI writes it (the rows in the items'
        first-seen order); Parquet a directory that receives the per-item values (the columns
        of ``EvaluationResult.per_item``) as one Parquet file per partition, written by the
        workers (a subdirectory per model with several models), swapped in atomically;
        ``result.per_item`` reads it back.
    client : distributed.Client, optional
        Default: :func:`annokit.scale.client.get_client`.
    budget : int, default 4_000_000
        Bootstrap weights held at once per task (float64).
    scale, metric_options
        As in :func:`annokit.metrics.engine.evaluate`: the scale defaults to the
        votes' label set's (``votes.labels.scale``); the options (the order-aware metrics'
        ``values``; ``positive`` comes from ``options``) are resolved by
        :func:`annokit.metrics.engine.resolve_options`.

    Returns
    -------
    EvaluationResult
        As in memory (``temperature`` included); ``per_item`` only with ``options.per_item``
        (from a directory: in partition order).

    Raises
    ------
    AnnokitError
        Dask is not installed.
    OptionConflictError
        Options the Dask engine cannot honour (:func:`dask_refusal`), temperatures with
        several models.
    AlignmentError, DataFormatError, InvalidValueError, SchemaError
        The errors of ``align`` and ``evaluate`` (label names, items without
        predictions, duplicated ids, bad options).

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
    from dask import delayed

    o = EvaluateOptions() if options is None else options
    pred_labels, on_missing, n_boot, seed, n_bins = (o.pred_labels, o.on_missing, o.n_boot,
                                                      o.seed, o.n_bins)
    confidence, by, baselines, per_item_out = o.confidence, o.by, o.baselines, o.per_item
    labels = votes.labels
    k = len(labels)
    scale = check_scale(getattr(labels, "scale", "nominal") if scale is None else scale)
    names, policy = _options(o, scale, k)
    positive = resolve_positive(o.positive, labels)
    if positive is not None:
        metric_options = {**(metric_options or {}), "positive": positive}
    state_options, positive_label = resolve_options(names, labels, scale, n_bins=n_bins,
                                              metric_options=metric_options)
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
    if per_item_out is not None:
        check_outputs({"per_item_out": per_item_out},
                      directories=[] if one_file else ["per_item_out"])
    if o.temperature_mode is not None and len(inputs) > 1:
        raise OptionConflictError("a temperature applies to one model's predictions; evaluate "
                                  "the models one at a time")
    cl = _client(client)
    if o.model is not None:  # the in-memory reader picks the model out of its file
        inputs = {m: p if isinstance(p, DaskPredictions) else read_model_predictions(p, o)
                  for m, p in inputs.items()}
    preds = {m: p if isinstance(p, DaskPredictions) else
             read_predictions_dask(p, id_field=o.id_field, renormalize=o.renormalize,
                                   atol=o.atol)
             for m, p in inputs.items()}
    temperature, info, fit_ids = temperature_for(votes, o, cl)
    if temperature is not None:
        for p in preds.values():
            p.frame = p.frame.map_partitions(temper_part, temperature, p.n_labels,
                                             meta=p.frame._meta)
    perms = [_perm(p, pred_labels, labels) for p in preds.values()]

    # one row of counts per item, shuffled with the predictions by the id's key
    import dask.dataframe as dd

    meta = ep.counts_part(votes.frame._meta, votes.items._meta, k)
    counts = dd.from_delayed([delayed(ep.counts_part)(f, i, k) for f, i in
                              zip(votes.frame.to_delayed(), votes.items.to_delayed(), strict=True)],
                             meta=meta, verify_meta=False)
    nparts = max(1, votes.frame.npartitions)
    aligned = co_partition(counts, votes.items, [p.frame for p in preds.values()], client=cl,
                           npartitions=nparts)
    keep_dropped = on_missing == "drop"
    joined = [delayed(ep.join_part)(*row, perms=perms, keep_dropped=keep_dropped, k=k)
              for row in zip(*aligned, strict=True)]
    del aligned  # the predictions kept on the workers are released once joined
    adaptive = tuple(n for n in names if REGISTRY[n].state_class is AdaptiveBinnedState)
    constant = tuple(n for n in names if n not in adaptive)
    # the adaptive edges need passes of their own over the joined partitions
    two_pass = by is not None or any(p is None for p in perms) or bool(adaptive)
    if two_pass:
        joined = persist(cl, joined, desc="joining predictions")
    stats_node = _tree([delayed(ep.part_stats)(j, policy) for j in joined], ep.merge_stats,
                       keep_dropped=keep_dropped)
    if fit_ids is not None:  # how many items the temperature was fitted on are evaluated
        ids_node = delayed(fit_ids, pure=True)
        stats_node = delayed(_with_overlap)(stats_node, _tree(
            [delayed(_overlap)(j, ids_node) for j in joined], _add))

    def spec_for(edges: np.ndarray | None, n_kept: int, max_part: int) -> list[ep.StateSpec]:
        chunks = tuple(replicate_chunks(n_boot, max(max_part, 1), budget=budget))
        # point values of the adaptive metrics: eval_adaptive (exact edges, no gathering)
        main = ep.StateSpec(constant, state_options, policy, edges, baselines, seed, constant,
                            chunks)
        specs = [main]
        if n_boot and adaptive:
            specs += [ep.StateSpec(names, state_options, policy, edges, False, seed, (), (),
                                   adaptive, c, point=False)
                      for c in replicate_chunks(n_boot, max(n_kept, 1), budget=budget)]
        return specs

    def trees(specs: list[ep.StateSpec]) -> list[Any]:
        return [delayed(ep.values)(_tree([delayed(ep.part_states)(j, s) for j in joined],
                                         ep.merge), s) for s in specs]

    with contextlib.ExitStack() as stack:
        tmp_dir = None
        if one_file:  # parts in a scratch folder, then one file in the items' first-seen order
            tmp_dir = tempfile.mkdtemp(prefix=".per-item-", dir=Path(str(per_item_out)).parent)
            stack.callback(shutil.rmtree, tmp_dir, True)
        elif per_item_out is not None:
            tmp_dir = str(stack.enter_context(atomic_directory(per_item_out)))
        if two_pass:
            stats = _compute(cl, [stats_node])[0]
            edges = _check(preds, perms, stats, labels, on_missing, by)
            specs = spec_for(edges, stats["n_kept"], stats["max_part"])
            vals, _ = _run(cl, trees(specs), joined, tmp_dir, labels, names, state_options,
                           policy, list(preds), order=one_file)
            if adaptive:
                vals[0]["adaptive_point"] = adaptive_point_values(
                    joined, specs[0], adaptive, state_options, n_models=len(preds),
                    n_groups=1 if edges is None else edges.size, baselines=baselines,
                    compute=lambda nodes: _compute(cl, nodes),
                    persist=lambda nodes: persist(cl, nodes, desc="adaptive ECE"), client=cl)
        else:
            # partition sizes are not known yet: replicate chunks for a bound on them
            bound = math.ceil(votes.n_items / nparts) * 2 if votes.n_items else 1
            specs = spec_for(None, votes.n_items, bound)
            stats, vals, _ = _run(cl, trees(specs), joined, tmp_dir, labels, names, state_options,
                                  policy, list(preds), stats_node, order=one_file)
            _check(preds, perms, stats, labels, on_missing, by)
        if one_file and tmp_dir is not None and per_item_out is not None:
            import dask.dataframe as dd

            parts = sorted(str(f) for f in Path(tmp_dir).glob("part.*.parquet"))
            write_table_dask(dd.read_parquet(parts), per_item_out, client=cl, for_people=True,
                             order="_first", format=out_format)
    if info is not None and fit_ids is not None:
        info = {**info, "n_overlap_items": int(stats["n_overlap"])}
    result = _result(preds, stats, specs, vals, names, constant, adaptive, n_boot, policy,
                     n_bins, confidence, seed, by, baselines, labels, per_item_out, out_format,
                     on_missing, scale, positive_label, temperature)
    result.temperature = info
    warn_overlap(info)
    return result


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


def _run(cl: Any, value_nodes: list[Any], joined: list[Any], tmp_dir: str | None, labels: Any,
         names: tuple[str, ...], options: Mapping[str, dict[str, Any]], policy: str,
         models: list[Any], stats_node: Any = None, order: bool = False) -> Any:
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


def _check(preds: dict[str | None, DaskPredictions], perms: list[Any], stats: dict[str, Any],
           labels: Any, on_missing: str, by: Any) -> np.ndarray | None:
    """The checks of align (per model) and evaluate (several models, ties); the bin edges."""
    for (model, pred), perm, st in zip(preds.items(), perms, stats["models"], strict=True):
        _check_model(model, st, pred, perm, labels, stats, on_missing)
    first = stats["models"][0]
    for model, st in list(zip(preds, stats["models"], strict=True))[1:]:
        if st["n_not_in_first"] or st["n_matched"] != first["n_matched"]:
            raise AlignmentError(f"model {model!r} has {st['n_matched']} items, "
                                 f"{st['n_not_in_first']} of the first model's "
                                 f"{first['n_matched']} items missing; several models must be "
                                 "aligned to the same items")
    return _edges(stats) if by is not None else None


def _edges(stats: dict[str, Any]) -> np.ndarray:
    edges, _, _, _ = agreement_bins(stats["entropy_values"], AGREEMENT_BINS,
                                    counts=stats["entropy_counts"])
    return edges


def _result(preds: dict[str | None, DaskPredictions], stats: dict[str, Any],
            specs: list[ep.StateSpec], vals: list[dict[str, Any]], names: tuple[str, ...],
            constant: tuple[str, ...], adaptive: tuple[str, ...], n_boot: int, policy: str,
            n_bins: int, confidence: float, seed: int, by: Any, baselines: bool, labels: Any,
            per_item_out: Any, out_format: str | None, on_missing: str, scale: str,
            positive_label: str | None, temperature: float | None = None) -> EvaluationResult:
    n_ties, n_kept = stats["n_ties"], stats["n_kept"]
    if n_ties:
        warnings.warn(f"{n_ties} of {n_kept} items have a tied human majority; "
                      f"tie policy {policy!r} takes the first tied label in label order",
                      DegenerateInputWarning, stacklevel=3)
    main = vals[0]
    est = _with_adaptive(main, "point", names, constant, adaptive)
    reps = None
    if n_boot:
        reps = np.full(est.shape + (n_boot, 3), np.nan)  # value and bound statistics
        cols = [names.index(n) for n in constant]
        if "boot" in main:  # absent when every metric's state is adaptive-size
            for (a, b), chunk in zip(specs[0].chunks, main["boot"], strict=True):
                reps[:, :, cols, a:b] = chunk
        acols = [names.index(n) for n in adaptive]
        for spec, v in zip(specs[1:], vals[1:], strict=True):
            if spec.adaptive_chunk is None:  # spec_for gives every spec after the first one
                raise ValueError("an adaptive-metric spec without its replicate range")
            a, b = spec.adaptive_chunk
            reps[:, :, acols, a:b] = v["adaptive"]
    base = {}
    if baselines:
        both = _with_adaptive(main, "baselines", names, constant, adaptive)
        base = {kind: dict(zip(names, map(float, both[i, 0]), strict=True))
                for i, kind in enumerate(("chance", "oracle"))}
    info: list[dict[str, Any]] = []
    sizes = np.zeros(0, dtype=int)
    if by is not None:
        edges = specs[0].edges
        if edges is None:  # spec_for gives the first spec the agreement bins' edges
            raise ValueError("agreement groups without their bin edges")
        nb = edges.size - 1
        info = agreement_groups(edges)
        index = np.clip(np.searchsorted(edges, stats["entropy_values"], side="right") - 1, 0,
                        nb - 1)
        sizes = np.bincount(index, weights=stats["entropy_counts"], minlength=nb).astype(int)
    heads: dict[str | None, dict[str, Any]] = {}
    sources: dict[str | None, Callable[[], Any]] = {}
    for model, st in zip(preds, stats["models"], strict=True):
        dropped = [str(i) for i in st["missing_ids"]] if on_missing == "drop" else []
        heads[model] = {"n_items": n_kept, "n_unmatched_predictions": st["n_rows"] -
                        st["n_matched"], "n_dropped_items": st["n_missing"],
                        "dropped_item_ids": dropped, "labels": tuple(labels.names),
                        "temperature": temperature}
        if per_item_out is not None and out_format != "parquet":
            sources[model] = functools.partial(_read_back_file, Path(per_item_out), out_format)
        elif per_item_out is not None:
            folder = Path(per_item_out) if model is None else Path(per_item_out) / str(model)
            sources[model] = functools.partial(_read_back, folder)
    return results_from_values(heads, names, est, reps, baselines=base,
                               by="agreement" if by is not None else None, groups=info,
                               group_sizes=list(sizes), tie_policy=policy, n_ties=n_ties,
                               n_bins=n_bins, n_boot=n_boot, confidence=confidence, seed=seed,
                               frame_sources=sources, scale=scale, positive_label=positive_label)


def _with_adaptive(main: dict[str, Any], key: str, names: tuple[str, ...],
                   constant: tuple[str, ...], adaptive: tuple[str, ...]) -> np.ndarray:
    """``main[key]`` values of the constant-size states with the adaptive ones put in place."""
    part = main[key]
    if not adaptive:
        return part
    out = np.empty(part.shape[:2] + (len(names),))
    out[:, :, [names.index(n) for n in constant]] = part
    out[:, :, [names.index(n) for n in adaptive]] = main["adaptive_point"][key]
    return out


def _read_back(folder: Path) -> Any:
    import pandas as pd

    files = sorted(folder.glob("part.*.parquet"))
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def _read_back_file(path: Path, fmt: str | None) -> Any:
    """The per-item table of one CSV/TSV/JSON Lines file (item ids as text)."""
    import pandas as pd

    if fmt == "jsonl":
        return pd.read_json(path, lines=True, dtype={"item": str})
    sep = "," if fmt == "csv" else "\t"
    return pd.read_csv(path, sep=sep, dtype={"item": str, "majority": str},
                       keep_default_na=False, na_values=[""])
