"""``annokit plan``: where to spend the next annotations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from annokit.cli._common import (
    FORMAT_OPTION,
    SEED,
    column_options,
    echo,
    echo_json,
    finite,
    out_format_option,
    read_options,
    single_label,
    votes_input,
    with_duplicates,
    written,
)
from annokit.cli.quality import join_model, prediction_options

if TYPE_CHECKING:
    from annokit.io import Format

_JSON_KEYS = (
    "goal, budget, votes_planned, budget_unspent, n_items, n_votes, n_settled, n_unsettled, "
    "n_items_planned, n_cannot_settle, n_at_max_per_item, expected_now, expected_after, "
    "confidence, epsilon, max_per_item, alpha, n_draws, horizon, seed, method, prior, "
    "prior_alpha (the Dirichlet prior per label), model_prior (with --predictions), estimate "
    "(--goal distribution), rank (with --rank activelab), read_as, "
    "out, "
    "output (with --out: what was written)")


@click.command(name="plan", epilog=f"--json keys: {_JSON_KEYS}.")
@votes_input()
@FORMAT_OPTION
@column_options
@click.option("--budget", type=click.IntRange(min=0), required=True,
              help="Extra votes to place in this round (0: only report where the dataset "
                   "stands).")
@click.option("--goal", type=click.Choice(["majority", "distribution"]), default="majority",
              show_default=True,
              help="majority: the leading label should be the population majority; "
                   "distribution: the soft label should be close (TVD) to the population "
                   "distribution.")
@click.option("--confidence", type=finite(0, 1, min_open=True, max_open=True), default=0.95,
              show_default=True,
              help="--goal majority: an item is settled when P(its leading label is the "
                   "population majority) reaches this.")
@click.option("--epsilon", type=finite(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True,
              help="--goal distribution: an item is settled when the expected TVD of its soft "
                   "label to the population distribution is at most this.")
@click.option("--max-per-item", "max_per_item", type=click.IntRange(min=1), default=None,
              help="Most votes an item may have in total after this round; items already there "
                   "get none (their number is stated).")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="Seed of the Monte Carlo draws: the same seed and votes give the same file.")
@click.option("--prior", type=click.Choice(["fitted", "uniform"]), default="fitted",
              show_default=True,
              help="Prior of each item's population distribution: the Dirichlet of the "
                   "Dirichlet-multinomial fitted to the votes (as subsample --target "
                   "population fits it), or the uniform Dirichlet(1, ..., 1). With "
                   "--predictions: one prior per item centred on the model's probabilities.")
@click.option("--estimate", type=click.Choice(["posterior-mean", "proportions"]),
              default="posterior-mean", show_default=True,
              help="--goal distribution: the estimate of each item's distribution whose TVD the "
                   "plan values: the posterior mean under the prior, (counts + alpha) / (n + "
                   "sum alpha), or the raw proportions of the votes (the soft label).")
@click.option("--rank", type=click.Choice(["value", "activelab"]), default="value",
              show_default=True,
              help="value: votes to the largest expected gains in the goal under the posterior; "
                   "activelab (with --predictions): to the lowest ActiveLab scores (CROWDLAB's "
                   "consensus quality, Goh and Mueller 2023), one vote per item per pass.")
@prediction_options("With it each item's prior is centred on the model's probabilities, "
                    "its spread and a temperature fitted to the votes.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), default=None,
              help="Write the plan here (.csv, .tsv or .parquet), atomically: columns "
                   "item,extra_votes, one row per item that gets votes. Required unless "
                   "--budget 0.")
@out_format_option(jsonl=False)
@click.option("--json", "as_json", is_flag=True,
              help="Print the summary as one JSON object (keys below).")
def plan(votes_path: str, fmt: Format, budget: int, goal: str, confidence: float,
         epsilon: float, max_per_item: int | None, seed: int, prior: str, estimate: str,
         rank: str, out_path: str | None,
         out_format: str | None, as_json: bool, **model_args: Any) -> None:
    """Where to spend the next votes: per item, how many more votes to collect now for the
    goal, under a Dirichlet posterior of each item's population label distribution (its prior
    fitted to the votes, or uniform with --prior uniform). The budget goes to the unsettled
    items where more votes raise the expected share of correct majorities (--goal majority)
    or lower the expected TVD of the soft labels (--goal distribution) most; the sum of
    extra_votes never exceeds --budget.

    Meant to run in rounds: collect the planned votes, append them to the votes file, plan
    again. See the guide "Where to spend the next annotations".
    """
    from annokit.core.progress import progress
    from annokit.io import read_votes
    from annokit.io.atomic import check_outputs, check_table_path, describe_output, write_table
    from annokit.subsample.plan import plan as run_plan

    if out_path is None and budget > 0:
        raise click.UsageError("give --out FILE for the planned votes (or --budget 0 to only "
                               "report where the dataset stands)")
    if out_format is not None and out_path is None:
        raise click.UsageError("--out-format applies to --out")
    if out_path is not None:
        check_table_path(out_path, jsonl=False, format=out_format)
        check_outputs({"--out": out_path}, {"--votes": votes_path})
    votes = single_label(read_votes(votes_path, format=fmt, **read_options()), "plan")
    probs = None
    if model_args["pred_paths"]:
        if click.get_current_context().get_parameter_source("prior") \
                is click.core.ParameterSource.COMMANDLINE:
            raise click.UsageError("--prior applies without --predictions (with it, each "
                                   "item's prior is centred on the model's probabilities)")
        join = join_model(votes, model_args)
        votes, probs = join.votes, join.probs
    else:
        if rank == "activelab":
            raise click.UsageError("--rank activelab needs --predictions FILE (ActiveLab scores "
                                   "items from the votes and a model)")
        _no_join_options(model_args)
    with progress(desc="plan", unit="count vectors") as bar:
        result = run_plan(votes, budget=budget, goal=goal,  # type: ignore[arg-type]
                          confidence=confidence, epsilon=epsilon, max_per_item=max_per_item,
                          seed=seed, bar=bar, prior=prior, probs=probs,
                          estimate=estimate.replace("-", "_"), rank=rank)
    info = result.summary()
    output = None
    if out_path is not None:
        write_table(result.next_votes(), out_path, jsonl=False, format=out_format)
        output = written(out_path, out_format, info["n_items_planned"], jsonl=False)
    if as_json:
        echo_json(with_duplicates({**info, "read_as": getattr(votes, "read_info", None),
                                   "out": out_path, **({"output": output} if output else {})},
                                  votes))
        return
    for line in summary_lines(info, read_as=getattr(votes, "read_info", None)):
        echo(line)
    if output is not None:
        echo(f"wrote {describe_output(output)}")


def _no_join_options(model_args: dict[str, Any]) -> None:
    ctx = click.get_current_context()
    given = [f"--{name.replace('_', '-')}" for name in model_args if name != "pred_paths"
             and ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE]
    if given:
        raise click.UsageError(f"{', '.join(given)} applies to --predictions")


def summary_lines(info: dict, *, read_as: str | None = None) -> list[str]:
    """The plain-text summary of a plan (``annokit plan`` without --json)."""
    majority = info["goal"] == "majority"
    rule = (f"P(leading label is the population majority) >= {info['confidence']:g}" if majority
            else f"expected TVD to the population distribution <= {info['epsilon']:g}")
    estimate = {"posterior_mean": "posterior means"}.get(info.get("estimate", ""), "soft labels")
    what = ("expected share of items whose leading label is the population majority"
            if majority else f"expected mean TVD of the {estimate} to the population")
    lines = [f"read as: {read_as}"] if read_as else []
    lines += [
        f"{info['n_items']} items, {info['n_votes']} votes; goal {info['goal']} (settled: {rule})",
        *_prior_line(info),
        f"settled now: {_items(info['n_settled'])}; unsettled: {info['n_unsettled']}",
        f"planned {info['votes_planned']} of {info['budget']} votes for "
        f"{_items(info['n_items_planned'])}"
        + (f" ({info['budget_unspent']} left unplanned: no item that is unsettled and below "
           "--max-per-item gains from more)"
           if info["budget_unspent"] and info["budget"] else ""),
    ]
    if info["n_at_max_per_item"]:
        lines.append(f"{_items(info['n_at_max_per_item'])} already have --max-per-item "
                     f"{info['max_per_item']} votes or more: no votes planned for them")
    if info["expected_now"] is not None:
        lines.append(f"{what}: {info['expected_now']:.4f} now, {info['expected_after']:.4f} "
                     "after this round")
    lines.append(f"unsettled items still short of the goal after this round: "
                 f"{info['n_cannot_settle']}")
    need = info.get("votes_to_settle")
    if need:
        lines.append(_settle_line(need))
    return lines


def _settle_line(need: dict) -> str:
    """How many more votes would settle the items this round leaves short."""
    text = f"to settle those {_items(need['n_items'])}: "
    reachable = need["n_items"] - need["n_beyond_horizon"]
    if reachable:
        text += (f"about {need['total']:,} more votes in total for {_items(reachable)} "
                 f"(per item {need['min']} to {need['max']}, median {need['median']:g})")
    if need["n_beyond_horizon"]:
        text += ("; " if reachable else "") + (
            f"{_items(need['n_beyond_horizon'])} need more than {need['horizon']} each (votes "
            "near a tie: their population may have no clear majority)")
    return text + "; choose --budget accordingly"

def _prior_line(info: dict) -> list[str]:
    """``prior: fitted Dirichlet(e 2.1, c 0.8, n 1.3)``, when the summary names one."""
    if "prior_alpha" not in info:
        return []
    alpha = ", ".join(f"{name} {a:.3g}" for name, a in info["prior_alpha"].items())
    if "model_prior" in info:
        fit = info["model_prior"]
        return [f"prior: per item, Dirichlet({fit['concentration']:.3g} x the model's "
                f"probabilities at temperature {fit['temperature']:.3g}; mean {alpha})"]
    return [f"prior: {info['prior']} Dirichlet({alpha})"]


def _items(n: int) -> str:
    return f"{n} item{'' if n == 1 else 's'}"
