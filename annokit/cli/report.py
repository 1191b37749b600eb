"""``annokit report``: the agreement-binned analysis report (HTML, Markdown, JSON)."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import click

from annokit.cli._common import (
    FORMAT_OPTION,
    SEED,
    check_bootstrap,
    check_memory,
    column_options,
    echo,
    echo_warning,
    float_list,
    int_list,
    read_options,
    single_label,
    votes_input,
)
from annokit.cli.evaluate import METRICS_OPTION
from annokit.cli.subsample import (  # the memory check and the shared options of subsample
    BYTES_PER_REP_AND_K,
    EPSILON_OPTION,
    K_MAX,
    N_DEFAULT_KS,
    TARGET_OPTION,
)
from annokit.subsample.defaults import EPSILON, REPS, TARGET


def _split_spec(spec: str, option: str) -> tuple[str, str]:
    name, sep, value = spec.partition("=")
    if not sep or not name.strip() or not value.strip():
        value = {"--model": "NAME=PATH[,PATH]", "--temperature": "NAME=T",
                 "--fit-temperature-on": "NAME=PATH[,PATH]"}.get(option, "NAME=VALUE")
        example = (f", e.g. {Path(spec.strip()).stem or 'model'}={spec.strip()}"
                   if option == "--model" and sep == "" and spec.strip() else "")
        raise click.BadParameter(f"expects {value}{example}; got {spec!r}",
                                 param_hint=f"'{option}'")
    return name.strip(), value.strip()


def _paths(value: str) -> list[str]:
    return [p.strip() for p in value.split(",") if p.strip()]


class _Progress:
    """A click progress bar on stderr, advanced once per stage; drawn only where the other bars
    are (:func:`annokit.core.progress.progress_enabled`: stderr a terminal, no ``--quiet``)."""

    def __init__(self, length: int, enabled: bool):
        from annokit.core.progress import progress_enabled

        enabled = enabled and progress_enabled(sys.stderr)
        self.bar = click.progressbar(length=length, label="annokit report", file=sys.stderr,
                                     show_pos=True, item_show_func=lambda s: s) if enabled else None

    def __enter__(self):
        if self.bar is not None:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def __call__(self, stage: str) -> None:
        if self.bar is not None:
            self.bar.update(1, stage)


def _temperature(spec: str, names: list[str]) -> tuple[str, float]:
    name, value = _split_spec(spec, "--temperature")
    if name not in names:
        raise click.BadParameter(f"{spec!r}: no --model named {name!r}; models are {names}",
                                 param_hint="'--temperature'")
    try:
        t = float(value)
    except ValueError:
        raise click.BadParameter(f"{spec!r}: {value!r} is not a number",
                                 param_hint="'--temperature'") from None
    if not math.isfinite(t) or t <= 0:
        raise click.BadParameter(f"{spec!r}: the temperature must be a finite number > 0",
                                 param_hint="'--temperature'")
    return name, t


def _fit_on(spec: str, names: list[str]) -> tuple[str, list[str]]:
    if "=" in spec:
        name, value = _split_spec(spec, "--fit-temperature-on")
    elif len(names) == 1:
        name, value = names[0], spec
    else:
        raise click.BadParameter(f"{spec!r}: with several models write NAME=PATH[,PATH] to say "
                                 "whose temperature to fit", param_hint="'--fit-temperature-on'")
    if name not in names:
        raise click.BadParameter(f"{spec!r}: no --model named {name!r}; models are {names}",
                                 param_hint="'--fit-temperature-on'")
    return name, _paths(value)


def _bins(text: str) -> int | list[float]:
    """``--bins``: a number of equal-count bins (>= 1) or comma-separated finite edges."""
    if "," not in text:
        value = float_list(text, "--bins")[0]
        if value == int(value) and value < 1:
            raise click.BadParameter(f"the number of bins must be >= 1; got {int(value)}",
                                     param_hint="'--bins'")
        if value != int(value):
            raise click.BadParameter(f"one value is a number of bins, a whole number (edges "
                                     f"are two or more comma-separated numbers); got {text!r}",
                                     param_hint="'--bins'")
        return int(value)  # 1e9 is a number of bins, as 1000000000 is
    return float_list(text, "--bins")


def _check_bins_for(text: str, bin_spec: int | list[float], n_items: int) -> int | list[float]:
    """Refuse more agreement bins than items before any work (each bin needs an item); the
    default number of bins on fewer items becomes one bin per item, said in a warning."""
    n = _n_groups(bin_spec)
    ctx = click.get_current_context()
    if (n > n_items and isinstance(bin_spec, int)
            and ctx.get_parameter_source("bins") == click.core.ParameterSource.DEFAULT):
        echo_warning(f"{n_items} item(s): {n_items} agreement bin(s) instead of the default "
                     f"{bin_spec} (--bins)")
        return n_items
    if n > n_items:
        what = f"{n:,} agreement bins" if isinstance(bin_spec, int) else \
            f"{len(bin_spec):,} edges ({n:,} agreement bins)"
        raise click.BadParameter(f"{what} for {n_items:,} items; choose at most {n_items:,} "
                                 "bins (the default is 5)", param_hint="'--bins'")
    return bin_spec


def _n_groups(bin_spec: int | list[float]) -> int:
    return bin_spec if isinstance(bin_spec, int) else max(len(bin_spec) - 1, 1)


@click.command(name="report")
@votes_input("Votes file (any format `annokit stats` reads) or a registered dataset name.")
@FORMAT_OPTION
@column_options
@click.option("--model", "models", multiple=True, required=True, metavar="NAME=PATH[,PATH]",
              help="A model's predictions; several files (dev + test halves) are concatenated. "
                   "Repeat for more models.")
@click.option("--pred-labels", default=None, metavar="NAME,NAME,...",
              help="Class order of the prediction columns, by label name or alias (e.g. e,c,n).")
@click.option("--id-field", default=None, help="Item id field of the predictions "
                                               "(default: item, id or uid, else a vote "
                                               "table's item spelling: item_id, Item ID, ...).")
@click.option("--on-missing", type=click.Choice(["error", "drop"]), default="error",
              show_default=True, help="Vote items without a prediction: fail, or leave them out "
                                      "(reported).")
@click.option("--bins", default="5", show_default=True, metavar="N|E0,E1,...",
              help="Agreement bins: N equal-count human-entropy quantile bins, or edges in nats "
                   "(natural log).")
@click.option("--bin-on", "bin_on", type=click.Choice(["votes", "population"]), default="votes",
              show_default=True,
              help="Cut the agreement bins on each item's vote entropy, or on the posterior mean "
                   "of its population entropy (corrects the regression to the mean of a cut on "
                   "the entropy of a few votes).")
@click.option("--population", "population", type=click.Choice(["auto", "always", "never"]),
              default="auto", show_default=True,
              help="Population-target figures (evaluate --target population) beside the "
                   "votes-target ones, overall and per bin; auto: when the median number of "
                   "votes per item is below 20.")
@click.option("--temperature", "temperatures", multiple=True, metavar="NAME=T",
              help="Add a copy of model NAME scaled with temperature T (named 'NAME T=T').")
@click.option("--fit-temperature-on", "fit_temperature_on", multiple=True,
              metavar="[NAME=]PATH[,PATH]",
              help="Add model 'NAME TS' with a temperature fitted (NLL of the majority) on these "
                   "prediction files' items that have votes.")
@click.option("--n-boot", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Poisson-bootstrap replicates of items (0: no intervals).")
@METRICS_OPTION
@click.option("--n-bins", type=click.IntRange(min=1), default=10, show_default=True,
              help="Equal-width confidence bins of the binned metrics (ECE, SMECE, ...) and the "
                   "reliability diagrams.")
@click.option("--no-ceiling", is_flag=True, help="Skip the split-half human ceiling.")
@click.option("--subsample", "subsample_ks", default=None, metavar="K,K,...|default",
              help="Also compute the 'how many annotations' curve for these k and the "
                   "recommended k (as annokit subsample, with the same defaults; items with "
                   "fewer than k votes are skipped at that k); 'default': 1,2,5,10,20,50,... up "
                   "to the most votes on an item.")
@click.option("--subsample-reps", type=click.IntRange(min=1), default=REPS, show_default=True,
              help="Repetitions of the subsampling curve.")
@EPSILON_OPTION
@TARGET_OPTION
@click.option("--plan-budget", "plan_budget", type=click.IntRange(min=0), default=None,
              metavar="N",
              help="Add 'Where the next votes would go': where N more votes would go (as "
                   "annokit plan --budget N, with its defaults and --seed; 0: only where the "
                   "dataset stands).")
@click.option("--plan-goal", "plan_goal", type=click.Choice(["majority", "distribution"]),
              default=None, help="Goal of --plan-budget (as annokit plan --goal) [default: "
                                 "majority].")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="Seed of the bootstrap, the ceiling split and --plan-budget.")
@click.option("--positive", default=None, metavar="LABEL",
              help="Two labels: the positive class of ece_binary, mce_binary and the "
                   "positive-class reliability diagram (default: the second label).")
@click.option("--annotator-predictions", "annotator_predictions", default=None,
              type=click.Path(exists=True, dir_okay=False),
              help="Predictions per (item, annotator): a long table (.csv, .tsv, .jsonl, "
                   ".parquet) with item, annotator and label or prob_<label> columns; adds "
                   "the per-annotator (perspectivist) section.")
@click.option("--title", default=None, help="Page title.")
@click.option("--png", is_flag=True, help="Also write every figure as PNG.")
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="Output directory (created, or replaced if it holds an earlier report).")
@click.option("--json", "as_json", is_flag=True, help="Also print report.json on stdout.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def report(votes_path, fmt, models, pred_labels, id_field, on_missing, bins, bin_on, population,
           temperatures, fit_temperature_on, n_boot, metric_names, n_bins, no_ceiling, subsample_ks,
           subsample_reps, epsilon, target, plan_budget, plan_goal, seed, positive,
           annotator_predictions, title, png, out, as_json, quiet):
    """Write the agreement-binned analysis report of one or more models to --out:
    report.html (self-contained page), report.md, report.json (versioned schema)
    and figures/.

    Items are grouped by the entropy of their human label distribution; for each
    bin and each model: every registered metric (accuracy against the majority,
    ECE, SMECE, DistCE, |EntCE|, Jensen-Shannon distance, KL, RankCS, Brier,
    NLL, ...), next to a split-half human ceiling, plus differences from the
    first model with paired-bootstrap intervals.

    The report states the label scale (--scale); on ordered scales it adds the
    order-aware metrics and the human and model label distributions in scale
    order; with two labels the positive-class calibration (--positive); with
    --annotator-predictions the per-annotator evaluation.
    """
    from annokit.io import read_votes
    from annokit.report import dump_json, write_report
    from annokit.report.workflow import run_report

    options, specs = _options(
        bins=bins, models=models, temperatures=temperatures, fit_temperature_on=fit_temperature_on,
        n_boot=n_boot, n_bins=n_bins, subsample_ks=subsample_ks, subsample_reps=subsample_reps,
        epsilon=epsilon, target=target, plan_budget=plan_budget, plan_goal=plan_goal,
        pred_labels=pred_labels, id_field=id_field, on_missing=on_missing, metrics=metric_names,
        no_ceiling=no_ceiling, seed=seed, positive=positive, bin_on=bin_on, population=population,
        annotator_predictions=annotator_predictions,
        title=title or f"annokit report: {Path(votes_path).name}")
    from annokit.io.atomic import check_outputs

    check_outputs({"--out": out}, {"--votes": votes_path,
                                   "--model": [p for _, v in specs for p in _paths(v)],
                                   "--fit-temperature-on": [p for _, ps in
                                                            options.fit_temperature_on for p in ps],
                                   "--annotator-predictions": annotator_predictions},
                  directories=["--out"])
    # stages: votes, each model read, build_report's five, written
    with _Progress(length=len(models) + 7, enabled=not quiet) as progress:
        votes, options = _checked_votes(read_votes(votes_path, format=fmt, **read_options()),
                                        options, bins)
        rep = run_report(votes, {n: _paths(v) for n, v in specs}, options, progress=progress)
        path = write_report(rep, out, png=png)
        progress("written")
    if as_json:
        click.echo(dump_json(rep), nl=False)
    echo(f"report written to {path.resolve() / 'report.html'} (also report.md, report.json, "
               "figures/)", err=as_json)


def _options(*, bins, models, temperatures, fit_temperature_on, n_boot, n_bins, subsample_ks,
             subsample_reps, epsilon, target, plan_budget, plan_goal, metrics, no_ceiling,
             **given) -> tuple[Any, list[tuple[str, str]]]:
    """The options parsed and checked before any work (sizes, specs, what needs what), as the
    workflow's options object, and the ``--model`` specs."""
    from annokit.report.options import ReportOptions

    bin_spec = _bins(bins)
    # every agreement bin and every model (with its temperature copies) is bootstrapped
    n_models = len(models) + len(temperatures) + len(fit_temperature_on)
    check_bootstrap(n_boot, n_groups=max(n_models, 1))  # --n-boot alone, then --bins
    n_groups = _n_groups(bin_spec)
    check_memory("--bins", bins, 8 * 32 * max(n_boot, 1) * (n_groups + 1) * max(n_models, 1),
                 what=f"replicate values of every metric in {n_groups:,} agreement bins")
    check_bootstrap(n_boot, n_bins, n_groups=(n_groups + 1) * max(n_models, 1))
    specs = [_split_spec(s, "--model") for s in models]
    names = [n for n, _ in specs]
    if len(set(names)) != len(names):
        raise click.BadParameter(f"names must be unique; got {names}", param_hint="'--model'")
    fixed = [_temperature(s, names) for s in temperatures]
    fitted = [_fit_on(s, names) for s in fit_temperature_on]
    subsample = _subsample(subsample_ks, subsample_reps, epsilon, target)
    if plan_goal is not None and plan_budget is None:
        raise click.UsageError("--plan-goal applies to the plan section: add --plan-budget N")
    options = ReportOptions(
        bins=bin_spec, n_boot=n_boot, n_bins=n_bins, metrics=metrics, ceiling=not no_ceiling,
        temperatures=tuple(fixed), fit_temperature_on=tuple(fitted), subsample=subsample,
        subsample_reps=subsample_reps, epsilon=epsilon, subsample_target=target,
        plan_budget=plan_budget, plan_goal=plan_goal or "majority", **given)
    return options, specs


def _subsample(subsample_ks: str | None, reps: int, epsilon: Any, target: Any
               ) -> tuple[int, ...] | str | None:
    """``--subsample``: None, "default" or the k asked for, with what it needs checked."""
    if subsample_ks is None:
        for option, value, default in (("--epsilon", epsilon, EPSILON), ("--target", target, TARGET)):
            if value != default:
                raise click.UsageError(f"{option} applies to the recommended k: add --subsample")
        return None
    ks = None
    if subsample_ks.strip() != "default":
        ks = int_list(subsample_ks, "--subsample")
        if max(ks) > K_MAX:
            raise click.BadParameter(f"k must be at most {K_MAX:,}; got {max(ks)}",
                                     param_hint="'--subsample'")
    n_ks = len(ks) if ks is not None else N_DEFAULT_KS
    check_memory("--subsample-reps", reps, reps * n_ks * BYTES_PER_REP_AND_K,
                 what=f"results of {reps} repetitions x {n_ks} values of k")
    return "default" if ks is None else tuple(ks)


def _checked_votes(votes: Any, options: Any, bins: str) -> tuple[Any, Any]:
    """The votes the report can use (soft labels only refuse what needs votes; multi-label votes
    are refused), and the options with the agreement bins the votes allow."""
    from dataclasses import replace

    from annokit.core.soft_votes import is_soft_only, soft_only_message
    from annokit.errors import InputError
    from annokit.report.sections import check_positive

    if is_soft_only(votes):  # the distributions make the report; no ceiling, no draws
        for option, on in (("report --subsample", options.subsample is not None),
                           ("--annotator-predictions", options.annotator_predictions is not None)):
            if on:
                raise InputError(soft_only_message(votes.source, option))
    else:
        votes = single_label(votes, "report")
    check_positive(options.positive, tuple(votes.labels.names), option="--positive")
    return votes, replace(options, bins=_check_bins_for(bins, options.bins, votes.n_items))


__all__ = ["report"]
