"""``annokit evaluate``: calibration of model predictions against human label distributions."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import click

from annokit.cli._common import (
    FORMAT_OPTION,
    SEED,
    check_bootstrap,
    check_engine,
    column_options,
    dask_votes,
    echo,
    echo_json,
    echo_warning,
    engine_options,
    finite,
    memory_error,
    out_format_option,
    read_options,
    votes_input,
    with_duplicates,
)

if TYPE_CHECKING:
    from annokit.core.soft_labels import TiePolicy
    from annokit.io import Format


def _labels(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [v.strip() for v in value.split(",")]
    if any(not n for n in names):
        raise click.BadParameter(f"empty label name in {value!r}; give names separated by commas, "
                                 "e.g. e,c,n", param_hint="--pred-labels")
    return names


def _metric_names(ctx: click.Context, param: click.Parameter, value: str | None
                  ) -> tuple[str, ...] | str | None:
    """``--metrics``: ``all`` or registry names
    (:func:`annokit.metrics.registry.resolve_metric_names`)."""
    if value is None:
        return None
    names = [v.strip() for v in value.split(",")]
    if names == ["all"]:
        return "all"
    if any(not n for n in names):
        raise click.BadParameter(f"empty metric name in {value!r}; give registry names separated "
                                 "by commas, e.g. accuracy,manhattan,lewidi_ce, or all")
    from annokit.errors import InvalidValueError
    from annokit.metrics.registry import resolve_metric_names

    try:
        return resolve_metric_names(names)
    except InvalidValueError as exc:
        raise click.BadParameter(str(exc)) from None


def select_metrics(wanted: tuple[str, ...] | str | None, *, scale: str, n_labels: int | None,
                   multilabel: bool = False) -> tuple[str, ...] | None:
    """The metrics ``--metrics`` asks for on this data
    (:func:`annokit.metrics.workflow.resolve_metrics`, imported when called)."""
    from annokit.metrics.workflow import resolve_metrics

    return resolve_metrics(wanted, scale=scale, n_labels=n_labels, multilabel=multilabel)


#: ``--metrics`` of ``evaluate`` and ``report``.
METRICS_OPTION = click.option(
    "--metrics", "metric_names", callback=_metric_names, metavar="NAME,...|all",
    help="Registry metrics to compute, comma-separated (e.g. accuracy,manhattan,lewidi_ce), or "
         "all: every metric that applies to the labels' scale [default: the scale's default "
         "set].")


def _objective(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Check a temperature objective against the library's list (imported only when given)."""
    if value is None:
        return None
    from annokit.metrics.temperature import OBJECTIVES

    if value not in OBJECTIVES:
        raise click.BadParameter(f"{value!r} is not one of {', '.join(map(repr, OBJECTIVES))}.")
    return value


@click.command(name="evaluate")
@votes_input("Human votes: a ChaosNLI .jsonl file or a long/wide table (as for stats).")
@click.option("--predictions", "pred_paths", multiple=True,
              type=click.Path(),
              help="Prediction file (.jsonl/.json/.csv/.tsv/.parquet/.npy), or a directory or "
                   "quoted glob of .parquet/.csv/.tsv shards; repeat for several files of one "
                   "model (e.g. dev and test halves).")
@click.option("--annotator-predictions", "annotator_path", type=click.Path(),
              help="Perspectivist evaluation: predictions per (item, annotator), a long table "
                   "with columns item, annotator and label (or prob_<label> columns), scored "
                   "against each annotator's own vote (error rate, distance on ordered "
                   "scales, their spread over annotators, the gap to the pooled view).")
@click.option("--multilabel", is_flag=True,
              help="Multi-label votes (an annotator may tick several labels of an item; implied "
                   "when the votes hold such responses): per-label probabilities in the "
                   "prediction files, ECE, Brier and cross-entropy per label and averaged, "
                   "against the fraction of annotators ticking each label and its majority "
                   "(a label ticked by exactly half is a reported tie, left out).")
@click.option("--positive", metavar="LABEL",
              help="Positive class of the binary metrics (ece_binary, mce_binary) when there "
                   "are two labels (default: the second label).")
@click.option("--pred-labels", help="Class of each prediction column in file order, by name or "
                                    "alias, comma-separated (e.g. e,c,n).")
@click.option("--id-field", help="Item id field of the prediction files (default: item, id or "
                                 "uid, else a vote table's item spelling: item_id, Item ID, ...).")
@click.option("--model", help="Model to read from a ChaosNLI-style {model: {uid: ...}} file.")
@click.option("--on-missing", type=click.Choice(["error", "drop"]), default="error",
              show_default=True, help="Vote items without a prediction: fail, or drop them "
                                      "(reported).")
@click.option("--renormalize", is_flag=True,
              help="Divide probability rows by their sum instead of rejecting rows that do not "
                   "sum to 1.")
@METRICS_OPTION
@click.option("--n-bins", type=click.IntRange(min=1), default=10, show_default=True,
              help="Bins of ECE, MCE, classwise ECE and SMECE.")
@click.option("--temperature", type=finite(0, min_open=True),
              help="Divide the logits by this temperature (> 0).")
@click.option("--fit-temperature-on", "fit_paths", multiple=True, type=click.Path(dir_okay=False),
              help="Fit the temperature on these (dev) prediction files, joined to the same "
                   "votes, and apply it.")
@click.option("--oracle-temperature", is_flag=True,
              help="Fit the temperature on the evaluated items themselves (an upper bound, "
                   "reported as mode 'oracle').")
@click.option("--temperature-objective", callback=_objective,
              help="What a fitted temperature minimises: nll_majority (the default: NLL of the "
                   "human majority), nll_soft (cross-entropy against the human distribution) or "
                   "ece_grid (lowest ECE on the grid 0.1 ... 5.0).")
@click.option("--ties", type=click.Choice(["first", "random"]), default="first",
              show_default=True, help="Tie policy of the human majority: the first tied label in "
                                      "label order, or one at random (uses --seed).")
@click.option("--n-boot", "n_boot", type=click.IntRange(min=0), default=0, show_default=True,
              help="Poisson bootstrap replicates for the 95% intervals, each built by its "
                   "metric's method (0: none).")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="Seed of the bootstrap and of random tie breaking.")
@click.option("--by", type=click.Choice(["agreement"]),
              help="Also evaluate groups of items: agreement = equal-count bins of human "
                   "entropy.")
@click.option("--target", type=click.Choice(["votes", "population"]), default="votes",
              show_default=True,
              help="What the metrics are measured against: the collected votes' distribution "
                   "(the published values), or the distribution infinitely many annotators "
                   "would give (an empirical-Bayes correction of the few votes per item; "
                   "binned calibration errors and losses against the majority are not "
                   "computed; accuracy and rank_cs get no interval).")
@FORMAT_OPTION
@column_options
@click.option("--per-item", "per_item_path", type=click.Path(writable=True),
              help="Also write the per-item values (EntCE, DistCE, JSD, KL, ...) to this file: "
                   "CSV, TSV, JSON Lines or Parquet as its extension or --out-format names "
                   "(another extension: CSV). With --engine dask Parquet is a directory of "
                   "Parquet parts, one per partition (multi-label votes: one file).")
@out_format_option(option="--per-item")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (documented keys).")
@engine_options
def evaluate(votes_path: str, pred_paths: tuple[str, ...], annotator_path: str | None,
             multilabel: bool, positive: str | None, pred_labels: str | None,
             id_field: str | None, model: str | None, on_missing: str, renormalize: bool,
             metric_names: tuple[str, ...] | str | None, n_bins: int, temperature: float | None,
             fit_paths: tuple[str, ...],
             oracle_temperature: bool, temperature_objective: str | None, ties: TiePolicy, n_boot: int,
             seed: int, by: str | None, target: str, fmt: Format, per_item_path: str | None,
             out_format: str | None, as_json: bool, engine: str, scheduler: str | None) -> None:
    """Evaluate a model's probabilities against the human label distributions.

    Joins the predictions to the votes by item id and label name, then reports
    every registered metric (annokit.metrics.REGISTRY): accuracy against the
    human majority, ECE and its variants, SMECE, RankCS, EntCE (nats), DistCE,
    Jensen-Shannon distance, KL, Brier and NLL, next to a chance (uniform) and
    an oracle (human distribution) baseline. The metrics follow the labels'
    scale (--scale): ordered scales add Wasserstein, Manhattan, the LeWiDi
    cross-entropy, the error of the mean and RPS; two labels add ECE and MCE on
    p(positive) (--positive).

    With --annotator-predictions, also (or only, without --predictions) the
    perspectivist view: each (item, annotator) prediction against that
    annotator's vote.
    """
    options = _options(dict(locals()))  # the parameters above, by name
    from annokit.io.atomic import check_outputs
    from annokit.metrics.workflow import per_item_format

    check_engine(engine, scheduler)
    inputs = {"--votes": votes_path, "--predictions": pred_paths,
              "--fit-temperature-on": fit_paths, "--annotator-predictions": annotator_path}
    if engine == "dask":
        from annokit.scale.workflow import dask_refusals

        reason = dask_refusals(options, annotator_predictions=annotator_path is not None,
                               multilabel=multilabel, predictions=bool(pred_paths))
        if reason is not None:
            raise click.UsageError(reason)
    # the format (--out-format, the extension, else CSV), checked before any work; Parquet is
    # a directory of parts on Dask (multi-label: one file, gathered on the client)
    dataset = per_item_format(options) == "parquet" and engine == "dask" and not multilabel
    check_outputs({"--per-item": per_item_path}, inputs,
                  directories=["--per-item"] if dataset else [])
    run = _run(votes_path, pred_paths, options, engine=engine, scheduler=scheduler, fmt=fmt,
               annotator_path=annotator_path, multilabel=multilabel)
    _print(run, metric_names, as_json=as_json)


def _options(o: dict[str, Any]) -> Any:
    """The command's options as :class:`annokit.metrics.workflow.EvaluateOptions`, refusing
    the combinations that do not go together (usage errors; the engine's options checked
    too)."""
    from annokit.metrics.workflow import EvaluateOptions, option_conflict

    if not o["pred_paths"] and o["annotator_path"] is None:
        raise click.UsageError("Missing option '--predictions' (or --annotator-predictions).")
    conflict = option_conflict(temperature=o["temperature"], fit_temperature_on=o["fit_paths"],
                               oracle_temperature=o["oracle_temperature"],
                               temperature_objective=o["temperature_objective"])
    if conflict is not None:
        raise click.UsageError(conflict)
    if o["out_format"] is not None and o["per_item_path"] is None:
        raise click.UsageError("--out-format applies to --per-item")
    check_bootstrap(o["n_boot"], o["n_bins"], n_groups=6 if o["by"] else 1)
    options = EvaluateOptions(
        metrics=o["metric_names"], n_boot=o["n_boot"], seed=o["seed"], n_bins=o["n_bins"],
        ties=o["ties"], by=o["by"], on_missing=o["on_missing"], renormalize=o["renormalize"],
        id_field=o["id_field"], model=o["model"], pred_labels=_labels(o["pred_labels"]),
        temperature=o["temperature"], fit_temperature_on=o["fit_paths"],
        oracle_temperature=o["oracle_temperature"],
        temperature_objective=o["temperature_objective"], positive=o["positive"],
        per_item=o["per_item_path"], per_item_format=o["out_format"], target=o["target"])
    check_engine(o["engine"], o["scheduler"])
    if not o["pred_paths"] and (options.temperature_mode or o["per_item_path"] or o["by"]
                                or o["n_boot"] or o["positive"] is not None
                                or o["metric_names"] is not None):
        raise click.UsageError("--per-item, --by, --n-boot, --positive, --metrics and the "
                               "temperature options need --predictions")
    return options


def _run(votes_path: str, pred_paths: tuple[str, ...], options: Any, *, engine: str,
         scheduler: str | None, fmt: Format, annotator_path: str | None, multilabel: bool
         ) -> Any:
    """:func:`annokit.scale.workflow.evaluate_files` on the command's inputs; its warnings on
    stderr, an option conflict as a usage error, running out of memory as one line."""
    from annokit.errors import OptionConflictError
    from annokit.scale.workflow import evaluate_files

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if engine == "dask":
                read_options(multilabel=multilabel)  # --duplicates other than keep conflicts
                votes, read = dask_votes(votes_path, scheduler, fmt=fmt, duplicates="keep"
                                         if multilabel else "error"), None
            else:
                votes, read = votes_path, {"format": fmt, **read_options(multilabel=multilabel)}
            return evaluate_files(votes, list(pred_paths), options=options, engine=engine,
                                  read_options=read, annotator_predictions=annotator_path,
                                  multilabel=multilabel)
        except OptionConflictError as exc:
            raise click.UsageError(str(exc)) from None
        except MemoryError:
            raise memory_error(("--n-bins", options.n_bins, 10),
                               ("--n-boot", options.n_boot, 0)) from None
        finally:
            for w in caught:
                echo_warning(w.message)


def _print(run: Any, metric_names: Any, *, as_json: bool) -> None:
    """The JSON document or the tables (:mod:`annokit.metrics.results`), and the file written."""
    from annokit.io.atomic import describe_output
    from annokit.metrics.results import annotator_table, metric_selection, result_table

    result, view = run.result, run.annotators
    if result is None:  # annotator predictions only
        echo_json(with_duplicates({"annotators": view.to_dict()}, run.votes)) if as_json else \
            echo(annotator_table(view))
        return
    if as_json:
        doc = {**result.to_dict(), **metric_selection(metric_names, result)}
        if view is not None:
            doc["annotators"] = view.to_dict()
        if run.output is not None:
            doc["output"] = run.output
        echo_json(with_duplicates(doc, run.votes))
        return
    if result.task == "multilabel" or view is None:
        echo(result_table(result))
    else:
        echo(result_table(result) + "\n\n" + annotator_table(view))
    if run.output is not None:
        echo(f"wrote {describe_output(run.output)}")
