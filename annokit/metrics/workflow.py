"""The evaluate workflow in memory, and the one options object both engines take.

``annokit evaluate`` is more than :func:`annokit.metrics.engine.evaluate`: it reads the
prediction files (one model, ``--model`` picking it out of a ChaosNLI-style file), joins them to
the votes, fits or applies a temperature (on dev files, on the evaluated items, or a fixed one),
warns when the fit saw evaluated items, resolves the metrics and the positive class against the
votes' labels, writes the per-item table, and adds the per-annotator (perspectivist) view or
runs the multi-label evaluation. :func:`evaluate_memory` holds that workflow for the in-memory
engine; :class:`EvaluateOptions` is what it takes, and what the Dask engine
(:func:`annokit.scale.evaluate.evaluate_dask`) takes too; :func:`annokit.scale.workflow.evaluate_files`
routes between the two.

The rules that name what goes together (:func:`option_conflict`, :func:`resolve_metrics`,
:func:`resolve_positive`) are written here once: the command line reports them as usage
errors (:class:`~annokit.errors.OptionConflictError`, exit status 2), the library raises them.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annokit.core.checks import check_int, check_open_unit, check_option
from annokit.core.soft_labels import TIE_POLICIES, TiePolicy
from annokit.errors import InvalidValueError, OptionConflictError

__all__ = [
    "EvaluateOptions",
    "EvaluateRun",
    "annotator_view",
    "dev_records",
    "evaluate_memory",
    "has_paths",
    "multilabel_conflict",
    "objective_of",
    "option_conflict",
    "per_item_format",
    "per_item_output",
    "read_model_predictions",
    "resolve_metrics",
    "resolve_positive",
    "warn_overlap",
    "write_per_item",
]

#: Temperature objectives (``annokit.metrics.temperature.OBJECTIVES``; repeated here so that
#: building options imports no scipy; a test checks they agree).
_OBJECTIVES = ("nll_majority", "nll_soft", "ece_grid")


def _paths(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, Path)):
        return (str(value),)
    return tuple(str(v) for v in value)


@dataclass(frozen=True)
class EvaluateOptions:
    """Everything ``annokit evaluate`` is asked besides its inputs; one object for both engines.

    Parameters
    ----------
    metrics : None, "all" or sequence of str
        Registry names; ``"all"``: every metric that applies to the labels' scale; None: the
        scale's default set (:func:`resolve_metrics`).
    n_boot, seed, confidence, n_bins, by
        As in :func:`annokit.metrics.engine.evaluate` (``by``: None or ``"agreement"``).
    ties : {"first", "report", "random"}, default "first"
        Tie policy of the human majority (``"random"`` draws with ``seed``; memory only).
    on_missing : {"error", "drop"}, default "error"
        Vote items without a prediction: fail, or drop them (reported).
    renormalize, atol, id_field, model
        How the prediction files are read (:func:`annokit.io.predictions.read_predictions`);
        ``model`` picks one model of a ChaosNLI-style ``{model: {uid: ...}}`` file.
    pred_labels : sequence of str, optional
        Class of each prediction column in file order (by name or alias).
    temperature : float, optional
        Divide the logits by this temperature.
    fit_temperature_on : sequence of paths
        Dev prediction files, joined to the same votes, to fit the temperature on.
    oracle_temperature : bool
        Fit the temperature on the evaluated items themselves (an upper bound).
    temperature_objective : str, optional
        What a fitted temperature minimises (default ``"nll_majority"``).
    positive : str, optional
        Positive class of the binary metrics (two labels), by name or alias.
    per_item : path, optional
        Also write the per-item values to this file, in :func:`per_item_format` (with the
        Dask engine, Parquet is a directory of parts, one per partition).
    per_item_format : {"csv", "tsv", "jsonl", "parquet"}, optional
        The format of ``per_item`` whatever its extension (the CLI's ``--out-format``);
        default the one its extension names, CSV for any other.
    baselines : bool, default True
        Also compute the chance and oracle rows.
    target : {"votes", "population"}, default "votes"
        What the metrics are measured against (``--target``): the collected votes, or the
        distribution infinitely many annotators would give
        (:mod:`annokit.metrics.population`; single-label votes, memory engine).

    Raises
    ------
    InvalidValueError
        A value out of its domain.
    OptionConflictError
        Options that do not go together (:func:`option_conflict`).

    Examples
    --------
    >>> EvaluateOptions(n_boot=100, temperature=2.0).n_boot
    100
    >>> EvaluateOptions(temperature=2.0, oracle_temperature=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    annokit.errors.OptionConflictError: use only one of --temperature, ... --oracle-temperature
    """

    metrics: Any = None
    n_boot: int = 0
    seed: int = 0
    confidence: float = 0.95
    n_bins: int = 10
    ties: TiePolicy = "first"
    by: str | None = None
    on_missing: str = "error"
    renormalize: bool = False
    atol: float = 1e-4
    id_field: str | None = None
    model: str | None = None
    pred_labels: Sequence[str] | None = None
    temperature: float | None = None
    fit_temperature_on: Sequence[Any] = field(default=())
    oracle_temperature: bool = False
    temperature_objective: str | None = None
    positive: str | None = None
    per_item: str | None = None
    baselines: bool = True
    per_item_format: str | None = None
    target: str = "votes"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if self.metrics is not None and not isinstance(self.metrics, str):
            set_(self, "metrics", tuple(self.metrics))
        if self.pred_labels is not None:
            set_(self, "pred_labels", tuple(self.pred_labels))
        set_(self, "fit_temperature_on", _paths(self.fit_temperature_on))
        if self.per_item is not None:
            set_(self, "per_item", str(self.per_item))
        check_int("n_boot", self.n_boot)
        check_int("seed", self.seed)
        check_int("n_bins", self.n_bins, low=1)
        check_open_unit("confidence", self.confidence)
        check_option("ties", self.ties, TIE_POLICIES)
        check_option("on_missing", self.on_missing, ("error", "drop"))
        check_option("target", self.target, ("votes", "population"))
        if self.per_item_format is not None:
            from annokit.io.table_formats import TABLE_FORMATS

            check_option("per_item_format", self.per_item_format, tuple(TABLE_FORMATS))
        if self.by is not None and self.by != "agreement":
            raise InvalidValueError(f"by must be None or 'agreement'; got {self.by!r}")
        if self.temperature is not None and not (isinstance(self.temperature, (int, float))
                                                 and 0 < self.temperature < math.inf):
            raise InvalidValueError(f"temperature must be a positive finite number; got "
                                    f"{self.temperature!r}")
        if self.temperature_objective is not None:
            check_option("temperature_objective", self.temperature_objective, _OBJECTIVES)
        reason = option_conflict(temperature=self.temperature,
                                 fit_temperature_on=self.fit_temperature_on,
                                 oracle_temperature=self.oracle_temperature,
                                 temperature_objective=self.temperature_objective)
        if reason is not None:
            raise OptionConflictError(reason)

    @property
    def temperature_mode(self) -> str | None:
        """``"fixed"``, ``"fit"`` (on dev files), ``"oracle"`` or None (no temperature)."""
        if self.temperature is not None:
            return "fixed"
        if self.fit_temperature_on:
            return "fit"
        return "oracle" if self.oracle_temperature else None


def option_conflict(*, temperature: float | None = None, fit_temperature_on: Any = (),
                    oracle_temperature: bool = False, temperature_objective: str | None = None
                    ) -> str | None:
    """Why the temperature options do not go together, or None: one message per rule, named by
    the command line's options.

    Examples
    --------
    >>> option_conflict(temperature=2.0, oracle_temperature=True)
    'use only one of --temperature, --fit-temperature-on and --oracle-temperature'
    """
    n_temp = (temperature is not None) + bool(fit_temperature_on) + bool(oracle_temperature)
    if n_temp > 1:
        return ("use only one of --temperature, --fit-temperature-on and "
                "--oracle-temperature")
    if temperature_objective is not None and not (fit_temperature_on or oracle_temperature):
        return ("--temperature-objective needs --fit-temperature-on or "
                "--oracle-temperature (a fixed --temperature is not fitted)")
    return None


def resolve_metrics(wanted: Any, *, scale: str, n_labels: int | None,
                    multilabel: bool = False) -> tuple[str, ...] | None:
    """The metrics ``--metrics`` asks for on this data: None (the default set), every metric that
    applies (``all``), or the names given, each checked against the data's scale and labels.

    Examples
    --------
    >>> resolve_metrics(["accuracy"], scale="nominal", n_labels=3)
    ('accuracy',)
    """
    from annokit.metrics.registry import available, check_applicable

    if wanted is None:
        return None
    if wanted == "all":
        return available(True, True, scale=scale, n_labels=n_labels, multilabel=multilabel,
                         listing=False)
    try:
        return check_applicable(wanted, scale=scale, n_labels=n_labels, multilabel=multilabel)
    except InvalidValueError as exc:
        raise InvalidValueError(f"--metrics: {exc} (leave it out of --metrics, or declare the "
                                "labels' scale with --scale)") from None


def resolve_positive(label: str | None, labels: Any) -> str | None:
    """The ``--positive`` label's name, checked against the votes' labels (two of them; a name
    or an alias).

    Raises
    ------
    OptionConflictError
        Not two labels, or not one of them.

    Examples
    --------
    >>> from annokit.core.labels import LabelSet
    >>> resolve_positive("yes", LabelSet(["no", "yes"]))
    'yes'
    """
    if label is None:
        return None
    names = list(labels.names)
    if len(names) != 2:
        raise OptionConflictError(f"Invalid value for '--positive': applies to two labels; the "
                                  f"votes have {len(names)} ({', '.join(names)})")
    try:
        return names[labels.index_of(label)]
    except InvalidValueError:
        raise OptionConflictError(f"Invalid value for '--positive': {label!r} is not one of the "
                                  f"labels {names}") from None


@dataclass
class EvaluateRun:
    """What the evaluate workflow produced.

    Attributes
    ----------
    result : EvaluationResult or None
        The metrics (None when only annotator predictions were evaluated).
    annotators : AnnotatorEvaluation or None
        The per-annotator (perspectivist) view, with annotator predictions.
    votes : Votes or DaskVotes
        The votes evaluated against (``duplicates_info``, the client of a Dask run).
    output : dict or None
        What was written to ``options.per_item`` (:func:`per_item_output`: the command's
        ``wrote ...`` line and its ``--json`` key ``output``); None without it.
    """

    result: Any
    annotators: Any
    votes: Any
    output: dict[str, Any] | None = None


def evaluate_memory(votes: Any, predictions: Any, options: EvaluateOptions | None = None, *,
                    annotator_predictions: Any = None, multilabel: bool = False) -> EvaluateRun:
    """The evaluate workflow on votes in memory (:class:`~annokit.core.votes.Votes`).

    Parameters
    ----------
    votes : Votes
    predictions : path or sequence of paths, or Predictions
        One model's prediction files (several: e.g. dev and test halves); may be empty with
        ``annotator_predictions``.
    options : EvaluateOptions, optional
    annotator_predictions : path or DataFrame, optional
        Predictions per (item, annotator) (:func:`annokit.metrics.perspectivist.evaluate_annotators`).
    multilabel : bool
        Multi-label votes (implied when an annotator ticked several labels of an item).

    Returns
    -------
    EvaluateRun

    Raises
    ------
    OptionConflictError
        Options the votes do not allow (multi-label votes with temperatures, ``--by``, ...; a
        ``--positive`` that is not one of two labels).
    AnnokitError
        The readers', :func:`~annokit.metrics.records.align`'s and the engine's errors.

    Examples
    --------
    >>> import pandas as pd
    >>> from annokit.core.votes import Votes
    >>> from annokit.io.predictions import Predictions
    >>> votes = Votes.from_counts([[3, 1], [0, 4]], labels=["a", "b"], item_ids=["x", "y"])
    >>> preds = Predictions.from_arrays(["x", "y"], probs=[[0.8, 0.2], [0.3, 0.7]],
    ...                                 label_names=["a", "b"])
    >>> run = evaluate_memory(votes, preds, EvaluateOptions(metrics=["accuracy"], temperature=2))
    >>> run.result.metrics
    {'accuracy': 1.0, 'temperature': 2.0}
    """
    from annokit.core.multilabel import is_multilabel
    from annokit.core.soft_votes import is_soft_only

    options = EvaluateOptions() if options is None else options
    if annotator_predictions is not None and options.target != "votes":
        raise OptionConflictError("--annotator-predictions has no population correction; "
                                  "use --target votes")
    if not has_paths(predictions):
        if annotator_predictions is None:
            raise OptionConflictError("Missing option '--predictions' (or "
                                      "--annotator-predictions).")
        return EvaluateRun(None, annotator_view(votes, annotator_predictions), votes)
    if multilabel or (not is_soft_only(votes) and is_multilabel(votes)):
        reason = multilabel_conflict(options, annotator_predictions=annotator_predictions)
        if reason is not None:
            raise OptionConflictError(reason)
        result = _multilabel(votes, predictions, options)
        return EvaluateRun(result, None, votes, write_per_item(result, options))
    result = _single_label(votes, predictions, options)
    return EvaluateRun(result, None if annotator_predictions is None
                       else annotator_view(votes, annotator_predictions), votes,
                       write_per_item(result, options))


def multilabel_conflict(options: EvaluateOptions, *, annotator_predictions: Any = None
                        ) -> str | None:
    """Why ``options`` do not apply to multi-label votes, in one line (None: they do); both
    engines ask."""
    o = options
    if o.target != "votes":
        return ("--target population evaluates single-label votes; multi-label votes take "
                "--target votes")
    if (o.temperature_mode or o.by or o.ties not in ("first", "report") or o.positive
            or annotator_predictions is not None or o.model or o.renormalize):
        return ("multi-label votes take --predictions, --pred-labels, --id-field, --on-missing, "
                "--n-bins, --n-boot, --seed and --per-item; not temperatures, --by, --ties, "
                "--positive, --annotator-predictions, --model or --renormalize")
    return None


def read_model_predictions(paths: Any, options: EvaluateOptions, *, row_ids: bool = False
                           ) -> Any:
    """One model's predictions read as the options say (``--model`` picks it out of a
    ChaosNLI-style file): the in-memory reader, also behind ``--model`` on Dask."""
    from annokit.io.predictions import Predictions, read_predictions

    if isinstance(paths, Predictions):
        return paths
    import pandas as pd

    source = paths if isinstance(paths, pd.DataFrame) else list(_paths(paths))
    return read_predictions(source, id_field=options.id_field,
                            renormalize=options.renormalize, atol=options.atol,
                            model=options.model, row_ids=row_ids)


def dev_records(votes: Any, options: EvaluateOptions, dev: Any = None) -> Any:
    """The dev records a temperature is fitted on (``--fit-temperature-on``): the dev files
    joined to ``votes`` (items without a dev prediction left out, silently: dev files cover
    other items)."""
    from annokit.metrics.records import align

    if dev is None:
        dev = read_model_predictions(options.fit_temperature_on, options)
    with warnings.catch_warnings():  # dev files cover other items: expected
        warnings.simplefilter("ignore")
        return align(votes, dev, pred_labels=options.pred_labels, on_missing="drop",
                     ties=options.ties, rng=options.seed)


def warn_overlap(info: dict[str, Any] | None) -> None:
    """Warn when a temperature fitted on dev files saw evaluated items."""
    if info is not None and info["mode"] == "fit" and info["n_overlap_items"]:
        warnings.warn(f"{info['n_overlap_items']} items used to fit the temperature are "
                      "also evaluated", stacklevel=3)


def objective_of(options: EvaluateOptions) -> str:
    """The temperature objective asked for, or the default (``nll_majority``)."""
    return options.temperature_objective or _OBJECTIVES[0]


def _single_label(votes: Any, predictions: Any, options: EvaluateOptions) -> Any:
    from annokit.metrics.engine import evaluate as run_engine
    from annokit.metrics.records import align
    from annokit.metrics.temperature import temperature_scale

    o = options
    metrics = resolve_metrics(o.metrics, scale=votes.labels.scale, n_labels=votes.n_labels)
    refused: dict[str, str] = {}
    if o.target == "population" and o.metrics == "all" and metrics is not None:
        from annokit.metrics.population import refusals

        refused = refusals(metrics)
        metrics = tuple(m for m in metrics if m not in refused)
    preds = read_model_predictions(predictions, o,
                                   row_ids=bool(getattr(votes, "row_ids", False)))
    records = align(votes, preds, pred_labels=o.pred_labels, on_missing=o.on_missing,
                    ties=o.ties, rng=o.seed)
    info = None
    if o.temperature_mode is not None:
        fit_on = dev_records(votes, o) if o.temperature_mode == "fit" else None
        records, info = temperature_scale(records, temperature=o.temperature, fit_on=fit_on,
                                          oracle=o.oracle_temperature, n_bins=o.n_bins,
                                          objective=objective_of(o))
        warn_overlap(info)
    positive = resolve_positive(o.positive, votes.labels)
    result = run_engine(records, metrics, by=o.by, n_boot=o.n_boot, seed=o.seed,
                        confidence=o.confidence, n_bins=o.n_bins, baselines=o.baselines,
                        metric_options=None if positive is None else {"positive": positive},
                        target=o.target)
    result.temperature = info
    result.not_computed = {**refused, **result.not_computed}
    return result


def _multilabel(votes: Any, predictions: Any, options: EvaluateOptions) -> Any:
    from annokit.metrics.engine import evaluate as run_engine
    from annokit.metrics.multilabel_records import align_multilabel, read_multilabel_predictions

    o = options
    metrics = resolve_metrics(o.metrics, scale=votes.labels.scale, n_labels=votes.n_labels,
                              multilabel=True)
    preds = read_multilabel_predictions(list(_paths(predictions)), id_field=o.id_field)
    records = align_multilabel(votes, preds, pred_labels=o.pred_labels, on_missing=o.on_missing)
    result = run_engine(records, metrics, n_boot=o.n_boot, seed=o.seed, confidence=o.confidence,
                        n_bins=o.n_bins, baselines=o.baselines)
    return result


def per_item_format(options: EvaluateOptions) -> str | None:
    """The format ``options.per_item`` is written in, the one rule of both engines:
    ``per_item_format`` (``--out-format``), else the one the extension names, else CSV;
    None without ``per_item``. Parquet is one file in memory and, on Dask, a dataset (a
    directory of part files, one per partition; multi-label: one file, gathered).

    Raises
    ------
    DataFormatError
        An extension that names another format than ``per_item_format``.

    Examples
    --------
    >>> [per_item_format(EvaluateOptions(per_item=p, per_item_format=f)) for p, f in
    ...  [("items.tsv", None), ("items", "parquet"), ("items.txt", None), (None, None)]]
    ['tsv', 'parquet', 'csv', None]
    """
    from annokit.io.table_formats import TABLE_FORMATS, table_format

    path = options.per_item
    if path is None:
        return None
    named = any(Path(path).suffix.lower() in exts for exts in TABLE_FORMATS.values())
    if options.per_item_format is None and not named:
        return "csv"
    return table_format(path, options.per_item_format)


def per_item_output(options: EvaluateOptions, n_rows: int, *, dataset: bool = False
                    ) -> dict[str, Any] | None:
    """What was written to ``options.per_item`` (:func:`annokit.io.table_formats.output_info`):
    one file, or with ``dataset`` a directory of Parquet part files (counted); None without
    ``per_item``."""
    from annokit.io.table_formats import output_info

    fmt = per_item_format(options)
    if fmt is None or options.per_item is None:
        return None
    n_files = None
    if dataset:
        n_files = sum(1 for f in Path(options.per_item).glob("*.parquet"))
    return output_info(options.per_item, fmt, n_rows, n_files=n_files)


def write_per_item(result: Any, options: EvaluateOptions) -> dict[str, Any] | None:
    """Write ``result.per_item`` to ``options.per_item`` as one file in
    :func:`per_item_format` (the in-memory tables, and the multi-label one of both engines);
    returns :func:`per_item_output` (None when there is no path)."""
    fmt = per_item_format(options)
    if fmt is None or options.per_item is None:
        return None
    from annokit.io.atomic import write_table

    table = result.per_item
    write_table(table, options.per_item, for_people=True, format=fmt)
    return per_item_output(options, len(table))


def annotator_view(votes: Any, source: Any) -> Any:
    """The per-annotator (perspectivist) evaluation of ``--annotator-predictions``."""
    from annokit.metrics.perspectivist import evaluate_annotators, read_annotator_predictions

    return evaluate_annotators(votes, read_annotator_predictions(source),
                               scale=votes.labels.scale)


def has_paths(value: Sequence[Any] | Any) -> bool:
    """Whether ``value`` names at least one prediction source."""
    return not (value is None or (isinstance(value, (list, tuple)) and not value))
