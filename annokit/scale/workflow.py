"""One evaluate workflow, two engines: :func:`evaluate_files`.

The workflow itself (prediction files, ``--model``, temperatures, metrics, positive class,
per-item output, annotator predictions, multi-label votes) is written once, for the in-memory
engine, in :mod:`annokit.metrics.workflow`, with the options object both engines take
(:class:`~annokit.metrics.workflow.EvaluateOptions`); the Dask engine
(:func:`annokit.scale.evaluate.evaluate_dask`) takes the same object. This module is where both
engines are visible (``scale`` is the top layer below the command line), so it holds the routing
between them and nothing else: it imports Dask only when ``engine="dask"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from annokit.core.checks import check_option
from annokit.errors import OptionConflictError
from annokit.metrics.workflow import (
    EvaluateOptions,
    EvaluateRun,
    evaluate_memory,
    has_paths,
    multilabel_conflict,
    per_item_format,
    per_item_output,
    resolve_metrics,
    write_per_item,
)

__all__ = ["ENGINES", "dask_refusals", "evaluate_files"]

#: The engines :func:`evaluate_files` routes to.
ENGINES = ("memory", "dask")


def dask_refusals(options: EvaluateOptions, *, annotator_predictions: bool = False,
                  multilabel: bool = False, predictions: bool = True) -> str | None:
    """Why the Dask engine cannot run this evaluation, in one line (None: it can): what
    :func:`annokit.scale.evaluate.dask_refusal` says about the options (``ties="random"``,
    the oracle temperature), and for multi-label votes what memory refuses too
    (:func:`~annokit.metrics.workflow.multilabel_conflict`)."""
    if multilabel:
        return multilabel_conflict(options, annotator_predictions=annotator_predictions or None)
    if not predictions:
        return None
    from annokit.scale.evaluate import dask_refusal

    return dask_refusal(options)


def evaluate_files(votes: Any, predictions: Any, *, options: EvaluateOptions | None = None,
                   engine: str = "memory", scheduler: str | None = None, client: Any = None,
                   read_options: Mapping[str, Any] | None = None,
                   annotator_predictions: Any = None, multilabel: bool = False) -> EvaluateRun:
    """Evaluate a model's predictions against human votes, in memory or on Dask.

    Parameters
    ----------
    votes : path, Votes or DaskVotes
        A path is read by the engine's reader: :func:`annokit.io.read_votes` (with
        ``read_options``: ``format``, ``columns``, ``scale``, ``duplicates``, ...) or
        :func:`annokit.scale.votes.read_votes_dask` (a file, directory, glob or list of
        Parquet/CSV partitions; ``columns`` and ``scale`` of ``read_options``).
    predictions : path, sequence of paths or DataFrame (or what either engine's reader takes)
        One model's prediction files, or a DataFrame laid out as one (in memory); may be
        empty with ``annotator_predictions``.
    options : EvaluateOptions, optional
        The same object for both engines.
    engine : {"memory", "dask"}, default "memory"
    scheduler : str, optional
        Dask scheduler address (``engine="dask"`` reading a path).
    client : distributed.Client, optional
        For ``engine="dask"``: the client to read the votes with and run on; default the
        votes' client (a path: :func:`annokit.scale.client.get_client`).
    read_options : mapping, optional
        Keyword arguments of the votes reader.
    annotator_predictions : path or DataFrame, optional
        Predictions per (item, annotator): the perspectivist view.
    multilabel : bool
        Multi-label votes (on Dask, read with ``duplicates="keep"``).

    Returns
    -------
    EvaluateRun
        ``result`` (an :class:`~annokit.metrics.results.EvaluationResult`), ``annotators``
        and the ``votes`` read.

    Raises
    ------
    OptionConflictError
        Options that do not go together, or that the engine cannot honour (one line saying
        why).
    AnnokitError
        The readers', the join's and the engine's errors.

    Examples
    --------
    >>> import pandas as pd
    >>> from annokit.core.votes import Votes
    >>> from annokit.io.predictions import Predictions
    >>> votes = Votes.from_counts([[3, 1], [0, 4]], labels=["a", "b"], item_ids=["x", "y"])
    >>> preds = Predictions.from_arrays(["x", "y"], probs=[[0.8, 0.2], [0.3, 0.7]],
    ...                                 label_names=["a", "b"])
    >>> run = evaluate_files(votes, preds, options=EvaluateOptions(metrics=["accuracy"]))
    >>> run.result.metrics
    {'accuracy': 1.0}
    """
    check_option("engine", engine, ENGINES)
    options = EvaluateOptions() if options is None else options
    read = dict(read_options or {})
    if engine == "memory":
        if isinstance(votes, (str, Path)):
            from annokit.io import read_votes

            if multilabel:  # every label an annotator ticked is a vote
                read.setdefault("duplicates", "keep")
            votes = read_votes(votes, **read)
        return evaluate_memory(votes, predictions, options,
                               annotator_predictions=annotator_predictions,
                               multilabel=multilabel)
    reason = dask_refusals(options, annotator_predictions=annotator_predictions is not None,
                           multilabel=multilabel, predictions=has_paths(predictions))
    if reason is not None:
        raise OptionConflictError(reason)
    if isinstance(votes, (str, Path, list, tuple)):
        votes = _read_dask_votes(votes, read, multilabel=multilabel, scheduler=scheduler,
                                 client=client)
    return _dask_route(votes, predictions, options, client=client,
                       annotator_predictions=annotator_predictions, multilabel=multilabel)


def _read_dask_votes(source: Any, read: Mapping[str, Any], *, multilabel: bool,
                     scheduler: str | None, client: Any) -> Any:
    """Votes read by the Dask reader with the options it takes of ``read_options``."""
    from annokit.scale.votes import read_votes_dask

    return read_votes_dask(source, columns=read.get("columns"), labels=read.get("labels"),
                           duplicates="keep" if multilabel else "error", scheduler=scheduler,
                           scale=read.get("scale"), client=client)


def _dask_route(votes: Any, predictions: Any, options: EvaluateOptions, *, client: Any,
                annotator_predictions: Any = None, multilabel: bool = False) -> EvaluateRun:
    """The Dask engine's evaluation: the routing of :func:`evaluate_memory`, on partitions
    (single-label :func:`annokit.scale.evaluate.evaluate_dask`, multi-label
    :func:`annokit.scale.eval_multilabel.evaluate_multilabel_dask`, annotator predictions
    :func:`annokit.scale.eval_annotators.evaluate_annotators_dask`)."""
    client = client if client is not None else getattr(votes, "client", None)
    if isinstance(predictions, (list, tuple)):
        predictions = predictions[0] if len(predictions) == 1 else list(predictions)
    if multilabel:
        from annokit.scale.eval_multilabel import evaluate_multilabel_dask

        o = options
        metrics = resolve_metrics(o.metrics, scale=votes.labels.scale,
                                  n_labels=len(votes.labels.names), multilabel=True)
        result = evaluate_multilabel_dask(
            votes, predictions if isinstance(predictions, list) else [predictions], metrics,
            pred_labels=o.pred_labels, on_missing=o.on_missing, id_field=o.id_field,
            n_boot=o.n_boot, seed=o.seed, confidence=o.confidence, n_bins=o.n_bins,
            baselines=o.baselines, per_item=o.per_item is not None)
        # one file, gathered on the client, as in memory (Parquet too)
        return EvaluateRun(result, None, votes, write_per_item(result, o))
    view = None
    if annotator_predictions is not None:
        from annokit.scale.eval_annotators import evaluate_annotators_dask

        view = evaluate_annotators_dask(votes, annotator_predictions)
    if not has_paths(predictions):  # annotator predictions only
        return EvaluateRun(None, view, votes)
    from annokit.scale.evaluate import evaluate_dask

    result = evaluate_dask(votes, predictions, options, client=client)
    dataset = per_item_format(options) == "parquet"  # a directory of part files on Dask
    return EvaluateRun(result, view, votes,
                       per_item_output(options, result.n_items, dataset=dataset))
