"""``annokit annotators``, ``annokit filter`` and ``annokit aggregate``: annotator quality."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from annokit.cli._common import (
    FORMAT_OPTION,
    SEED,
    check_engine,
    column_options,
    dask_votes,
    echo,
    echo_json,
    echo_warning,
    engine_options,
    finite,
    out_format_option,
    read_options,
    single_label,
    votes_input,
    with_duplicates,
    written,
)
from annokit.core.gold import describe_gold_items
from annokit.core.soft_labels import DEFAULT_TIES, describe_ties
from annokit.io.atomic import check_outputs, check_table_path, describe_output
from annokit.quality.filter import MIN_VERDICT_VOTES

if TYPE_CHECKING:
    from annokit.core.soft_labels import TiePolicy
    from annokit.io import Format
    from annokit.quality.filter import Audit

_SCORE_METHODS = ["agreement", "ds", "onecoin", "mace", "gold", "entropy"]
_AGG_METHODS = ["mv", "wmv", "ds", "onecoin", "mace", "glad", "wawa", "zbs", "crowdlab"]
_MAJORITY_LIKE = ("mv", "wmv", "wawa", "zbs")
_TIES = ["first", "first_seen", "random"]

_VOTES = votes_input("Votes file (long/wide CSV, TSV, JSONL, Parquet; ChaosNLI .jsonl).")
_GOLD = click.option("--gold", "gold_path", type=click.Path(exists=True, dir_okay=False),
                     help="Gold file with an item column and a gold column (e.g. question,truth); "
                          "a gold column in the votes file is used without it.")


def _infinite_threshold(verb: str) -> dict[str, str]:
    """What an infinite ``--threshold`` would do, said instead of "not a finite number"."""
    rest = "; give a finite threshold" + (", or --top-fraction F to remove the lowest-scoring "
                                          "fraction" if verb == "remove" else "")
    return {"inf": f"would {verb} every annotator (every score is below it){rest}",
            "-inf": f"would {verb} no annotator (no score is below it){rest}"}


_SEED = click.option("--seed", type=SEED, default=0, show_default=True,
                     help="Seed of MACE's random restarts.")


def _model_options(command: Any) -> Any:
    """``--predictions``, the options that read and join them, and ``--likelihood``."""
    return prediction_options(
        "Used by --method crowdlab (CROWDLAB, Goh et al. 2022).", likelihood=True)(command)


def prediction_options(use: str, *, likelihood: bool = False) -> Any:
    """``--predictions`` and the options that read and join them, as ``annokit evaluate``'s
    (``aggregate``, ``annotators``, ``plan``); ``use`` ends the help of ``--predictions``."""
    options = [
        click.option("--predictions", "pred_paths", multiple=True, type=click.Path(),
                     help="A model's prediction file (read and joined by item id and label "
                          "name as by `annokit evaluate`); repeat for several files of one "
                          f"model. {use}"),
        click.option("--pred-labels", help="Class of each prediction column in file order, by "
                                           "name or alias, comma-separated (e.g. e,c,n)."),
        click.option("--id-field", help="Item id field of the prediction files (default: item, "
                                        "id or uid, else a vote table's item spelling: "
                                        "item_id, Item ID, ...)."),
        click.option("--model", help="Model to read from a ChaosNLI-style {model: {uid: ...}} "
                                     "file."),
        click.option("--on-missing", type=click.Choice(["error", "drop"]), default="error",
                     show_default=True, help="Voted items without a prediction: fail, or drop "
                                             "them (reported)."),
        click.option("--renormalize", is_flag=True, help="Divide probability rows by their sum "
                                                         "instead of rejecting them."),
    ]
    if likelihood:
        options.append(click.option(
            "--likelihood", type=click.Choice(["shared", "confusion"]), default="shared",
            show_default=True,
            help="CROWDLAB's likelihood of a vote: one agreement rate shared by every "
                 "annotator (the paper), or each annotator's confusion with the consensus "
                 "(our variant; see the aggregation guide)."))

    def decorate(command: Any) -> Any:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def join_model(votes: Any, model_args: dict[str, Any]) -> Any:
    """The votes joined to the model's probabilities as ``evaluate`` joins them."""
    from annokit.cli.evaluate import _labels
    from annokit.metrics.model_join import item_probabilities

    return item_probabilities(votes, list(model_args["pred_paths"]),
                              pred_labels=_labels(model_args["pred_labels"]),
                              id_field=model_args["id_field"], model=model_args["model"],
                              renormalize=model_args["renormalize"],
                              on_missing=model_args["on_missing"])


def _inputs(votes_path: str, gold_path: str | None) -> dict[str, str | None]:
    return {"--votes": votes_path, "--gold": gold_path}


def _read(votes_path: str, fmt: Format, gold_path: str | None, command: str) -> Any:
    from annokit.io import read_votes

    votes = read_votes(votes_path, format=fmt, gold=gold_path, **read_options())
    return single_label(votes, command)


@click.command(name="annotators")
@_VOTES
@_GOLD
@FORMAT_OPTION
@column_options
@click.option("--method", type=click.Choice(_SCORE_METHODS), default="agreement", show_default=True,
              help="Score: agreement with co-annotators, Dawid-Skene spammer score (ds), one-coin "
                   "skill, MACE competence, gold accuracy (ChaosNLI rule), label-usage entropy.")
@click.option("--threshold", type=finite(infinite=_infinite_threshold("flag")), default=None,
              help="Flag annotators scoring below this (default: the method's default threshold).")
@click.option("--min-annotator-votes", "min_votes", type=click.IntRange(min=1),
              default=MIN_VERDICT_VOTES, show_default=True,
              help="Fewest votes for a verdict: annotators with fewer are scored but never "
                   "flagged (shown as 'too few votes').")
@_SEED
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (documented keys).")
@engine_options
@click.option("--pairs", is_flag=True,
              help="Instead of the scores: every pair of annotators with at least --min-shared "
                   "shared items, with Cohen's kappa (weighted on ordered scales: linear on "
                   "ordinal, quadratic on interval and ratio labels), percent agreement and "
                   "the number of shared items.")
@click.option("--min-shared", type=click.IntRange(min=1), default=10, show_default=True,
              help="With --pairs: the fewest shared items a pair needs to be listed.")
@click.option("--out", "out_path", type=click.Path(),
              help="With --pairs: write the pair table (.csv, .tsv or .parquet).")
@out_format_option(jsonl=False)
@_model_options
def annotators(votes_path: str, gold_path: str | None, fmt: Format, method: str,
               threshold: float | None, min_votes: int, seed: int, as_json: bool, engine: str,
               scheduler: str | None, pairs: bool = False, min_shared: int = 10,
               out_path: str | None = None, out_format: str | None = None,
               **model_args: Any) -> None:
    """Score every annotator and mark the ones a filter would remove first.

    Scores are higher for better annotators; an annotator is flagged when the
    score is below the threshold (for --method gold also after 4 consecutive
    wrong gold answers) and they have at least --min-annotator-votes votes;
    those with fewer are shown as "too few votes". Each annotator's influence on
    agreement is shown too: Krippendorff's alpha without them and the change
    (positive: alpha rises without them). With --pairs: the agreement of every
    pair of annotators. With --predictions, each annotator's CROWDLAB quality
    (votes and the model together) is added.
    """
    check_engine(engine, scheduler)
    _check_model_args(model_args, "annotators", engine)
    if pairs and model_args["pred_paths"]:
        raise click.UsageError("--predictions applies to the scores, not to --pairs")
    if pairs:
        _annotator_pairs(votes_path, gold_path, fmt, engine, scheduler, min_shared, out_path,
                         out_format, as_json)
        return
    for name, given in (("--min-shared", "min_shared"), ("--out", "out_path"),
                        ("--out-format", "out_format")):
        if click.get_current_context().get_parameter_source(given) \
                is click.core.ParameterSource.COMMANDLINE:
            raise click.UsageError(f"{name} applies to --pairs")
    if engine == "dask":
        from annokit.scale.quality import flag_annotators_dask

        if method == "gold":  # refused before the votes are read
            raise click.UsageError("--method gold (ChaosNLI's rule, with runs of consecutive "
                                   "wrong answers in vote order) runs in memory only")
        votes = dask_votes(votes_path, scheduler, fmt=fmt, gold=gold_path)
        flags = flag_annotators_dask(votes, method, threshold=threshold, rng=seed,
                                     min_votes=min_votes)
    else:
        from annokit.quality import flag_annotators

        votes = _read(votes_path, fmt, gold_path, "annotators")
        flags = flag_annotators(votes, method, threshold=threshold, rng=seed,
                                min_votes=min_votes)
    doc = flags.to_dict()
    if model_args["pred_paths"]:
        doc = _with_model_scores(doc, votes, model_args)
    if as_json:
        echo_json(with_duplicates(doc, votes))
        return
    rows = doc["annotators"]
    model = "crowdlab_quality_score" in (rows[0] if rows else {})
    echo(f"{'annotator':<24} {'n_votes':>7} {'score':>8}" + (f" {'crowdlab':>8}" if model else "")
         + f" {'alpha w/o':>9} {'change':>7}  flagged")
    for row in sorted(rows, key=lambda r: (r["score"] is None, r["score"] or 0.0)):
        score = "nan" if row["score"] is None else f"{row['score']:.3f}"
        score = f"{score:>8}"
        if model:
            q = row["crowdlab_quality_score"]
            score += f" {'nan' if q is None else f'{q:.3f}':>8}"
        mark = (f"*  {row['reason']}" if row["flagged"] else
                "-  too few votes" if row["n_votes"] < min_votes else "")
        echo(f"{row['annotator']!s:<24} {row['n_votes']:>7} {score} "
             f"{_num(row.get('alpha_without'), 9)} {_num(row.get('alpha_change'), 7, '+')}  "
             f"{mark}")
    echo(f"{flags.n_flagged} of {len(rows)} annotators flagged "
         f"(method {method}, threshold {flags.threshold:g}); {doc['n_too_few_votes']} with "
         f"too few votes for a verdict (fewer than {min_votes}: --min-annotator-votes)")
    if flags.gold is not None:
        echo(f"scored on {describe_gold_items(flags.gold.n_items, flags.gold.n_unknown)}")


def _check_model_args(model_args: dict[str, Any], command: str, engine: str,
                      method: str | None = None) -> None:
    """Usage errors of ``--predictions`` and its options (``aggregate``, ``annotators``)."""
    ctx = click.get_current_context()
    given = [f"--{name.replace('_', '-')}" for name in model_args if name != "pred_paths"
             and ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE]
    if not model_args["pred_paths"]:
        if method == "crowdlab":
            raise click.UsageError("--method crowdlab needs a model's probabilities: give "
                                   "--predictions FILE")
        if given:
            raise click.UsageError(f"{', '.join(given)} applies to --predictions")
        return
    if method is not None and method != "crowdlab":
        raise click.UsageError(f"--predictions applies to --method crowdlab, not --method "
                               f"{method}")
    if engine == "dask":
        raise click.UsageError(f"{command} --predictions runs in memory only: drop --engine dask")


def _with_model_scores(doc: dict[str, Any], votes: Any, model_args: dict[str, Any]
                       ) -> dict[str, Any]:
    """Add each annotator's CROWDLAB quality and agreement with its consensus to
    ``annotators --json``, and the join's counts (``predictions``)."""
    from annokit.core.jsonable import finite_or_none
    from annokit.quality.crowdlab import CrowdLab

    join = join_model(votes, model_args)
    fit = CrowdLab(likelihood=model_args["likelihood"]).fit(join.votes, join.probs)
    for row, q, a in zip(doc["annotators"], fit.annotator_quality_score_,
                         fit.annotator_agreement_, strict=True):
        row["crowdlab_quality_score"] = finite_or_none(q)
        row["crowdlab_agreement"] = finite_or_none(a)
    return {**doc, "predictions": {**join.summary(), "model_weight": fit.model_weight_,
                                   "likelihood": fit.likelihood}}


def _num(x: float | None, width: int, sign: str = "") -> str:
    return f"{'nan':>{width}}" if x is None or x != x else f"{x:>{sign}{width}.4f}"


def _annotator_pairs(votes_path: str, gold_path: str | None, fmt: Format, engine: str,
                     scheduler: str | None, min_shared: int, out_path: str | None,
                     out_format: str | None, as_json: bool) -> None:
    """``annotators --pairs``: the pair table on stdout, in --out, or as JSON."""
    from annokit.core.jsonable import jsonable
    from annokit.io.atomic import write_table

    if out_format is not None and out_path is None:
        raise click.UsageError("--out-format applies to --out")
    if out_path is not None:
        check_table_path(out_path, jsonl=False, format=out_format)
        check_outputs({"--out": out_path}, _inputs(votes_path, gold_path))
    if engine == "dask":
        from annokit.scale.stats import annotator_pairs_dask

        votes = dask_votes(votes_path, scheduler, fmt=fmt, gold=gold_path)
        table = annotator_pairs_dask(votes, min_shared=min_shared)
    else:
        from annokit.core.annotator_agreement import annotator_pairs

        votes = _read(votes_path, fmt, gold_path, "annotators")
        table = annotator_pairs(votes, min_shared=min_shared)
    output = None
    if out_path is not None:
        write_table(table, out_path, jsonl=False, for_people=True, format=out_format)
        output = written(out_path, out_format, len(table), jsonl=False)
    left = table.attrs["n_left_out"]
    if as_json:
        doc = {"min_shared": min_shared, "n_pairs": len(table), "n_left_out": left,
               "weights": str(table["weights"].iloc[0]) if len(table) else None,
               "pairs": jsonable(table.drop(columns="weights").to_dict(orient="records"))}
        echo_json(with_duplicates(doc if output is None else {**doc, "output": output}, votes))
        return
    if out_path is None:
        echo(f"{'annotator_1':<20} {'annotator_2':<20} {'n_shared':>8} {'kappa':>7} "
             f"{'agreement':>9}")
        for a, b, n, kappa, agree in zip(table["annotator_1"], table["annotator_2"],
                                          table["n_shared"].tolist(), table["kappa"].tolist(),
                                          table["percent_agreement"].tolist(), strict=True):
            echo(f"{a!s:<20} {b!s:<20} {n:>8} {_num(kappa, 7)} {_num(agree, 9)}")
    weights = str(table["weights"].iloc[0]) if len(table) else "none"
    echo(f"{len(table)} pairs with at least {min_shared} shared items (Cohen's kappa, weights "
         f"{weights}); {left} pairs with fewer left out"
         + (f"; wrote {describe_output(output or {})}" if out_path is not None else ""))


@click.command(name="filter")
@_VOTES
@_GOLD
@FORMAT_OPTION
@column_options
@click.option("--method", type=click.Choice(_SCORE_METHODS), required=True,
              help="Score used to remove annotators (see `annokit annotators`).")
@click.option("--threshold", type=finite(infinite=_infinite_threshold("remove")), default=None,
              help="Remove annotators scoring below this (default: the method's default).")
@click.option("--top-fraction", type=finite(0, 1, min_open=True, max_open=True), default=None,
              help="Instead of a threshold, remove this fraction of annotators (lowest scores; "
                   "in (0, 1)).")
@click.option("--min-votes", type=click.IntRange(min=1), default=2, show_default=True,
              help="Items left with fewer votes are listed in the audit.")
@click.option("--out", "out_path", required=True, type=click.Path(),
              help="Filtered votes (.csv, .tsv, .jsonl or .parquet), written atomically; with "
                   "--engine dask .csv/.tsv/.jsonl one file, .parquet a directory of Parquet "
                   "parts (a dataset).")
@out_format_option()
@click.option("--audit", "audit_path", required=True, type=click.Path(dir_okay=False),
              help="Audit JSON: removed annotators with scores, affected items, TVD moved.")
@_SEED
@click.option("--json", "as_json", is_flag=True, help="Print the audit summary as JSON.")
@engine_options
def filter_cmd(votes_path: str, gold_path: str | None, fmt: Format, method: str,
               threshold: float | None, top_fraction: float | None, min_votes: int,
               out_path: str, out_format: str | None, audit_path: str, seed: int,
               as_json: bool, engine: str, scheduler: str | None) -> None:
    """Remove low-quality annotators, writing the kept votes and an audit.

    Threshold rules repeat until no remaining annotator is flagged, so filtering
    the output again changes nothing.
    """
    import warnings

    from annokit.errors import AnnokitWarning
    from annokit.quality import filter_annotators
    from annokit.quality.filter import write_filtered

    if threshold is not None and top_fraction is not None:
        raise click.UsageError("--threshold and --top-fraction conflict: give one of them")
    check_engine(engine, scheduler)
    audit: Audit  # a DaskAudit on dask (whole-data item totals in its summary)
    kind = "file"
    if engine == "dask":
        from annokit.scale.filter import filter_annotators_dask

        if method == "gold":
            raise click.UsageError("--method gold (ChaosNLI's rule, with runs of consecutive "
                                   "wrong answers in vote order) runs in memory only")
        from annokit.scale.write import output_kind

        kind = output_kind(out_path, format=out_format)
        check_outputs({"--out": out_path, "--audit": audit_path},
                      _inputs(votes_path, gold_path),
                      directories=["--out"] if kind == "dataset" else [])
        votes = dask_votes(votes_path, scheduler, fmt=fmt, gold=gold_path)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", AnnokitWarning)
            _, audit = filter_annotators_dask(votes, method=method, threshold=threshold,
                                              top_fraction=top_fraction, min_votes=min_votes,
                                              rng=seed, out=out_path, audit_path=audit_path,
                                              out_format=out_format)
    else:
        check_table_path(out_path, format=out_format)
        check_outputs({"--out": out_path, "--audit": audit_path}, _inputs(votes_path, gold_path))
        votes = _read(votes_path, fmt, gold_path, "filter")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", AnnokitWarning)
            kept, audit = filter_annotators(votes, method=method, threshold=threshold,
                                            top_fraction=top_fraction, min_votes=min_votes,
                                            rng=seed)
        write_filtered(kept, audit, out_path, audit_path, format=out_format)
    summary = audit.summary()
    output = written(out_path, out_format, summary["n_votes_after"], engine=engine)
    if as_json:
        echo_json(with_duplicates({**summary, "output": output}, votes))
    else:
        echo(
            f"removed {summary['n_annotators_removed']} of {summary['n_annotators_before']} "
            f"annotators ({summary['n_votes_removed']} of {summary['n_votes_before']} votes; "
            f"method {method}, threshold {summary['threshold']}, {summary['rounds']} round(s))"
        )
        echo(
            f"items: {summary['n_items_affected']} affected, {summary['n_items_removed']} removed, "
            f"{summary['n_items_too_few_votes']} with fewer than {min_votes} votes; "
            f"mean TVD moved {_fmt(summary['tvd_mean'])}, max {_fmt(summary['tvd_max'])}"
        )
        echo(f"wrote {describe_output(output)} and {audit_path}")
    for w in caught:
        echo_warning(w.message)


def _fmt(x) -> str:
    return "n/a" if x is None else f"{x:.4f}"


@click.command(name="aggregate")
@_VOTES
@_GOLD
@FORMAT_OPTION
@column_options
@click.option("--method", type=click.Choice(_AGG_METHODS), default="mv", show_default=True,
              help="Majority vote, weighted MV, Dawid-Skene, one-coin DS, MACE, GLAD, Wawa "
                   "(MV weighted by agreement with MV), Zero-Based Skill.")
@click.option("--ties", type=click.Choice(_TIES), default=DEFAULT_TIES, show_default=True,
              help="Tie policy of mv, wmv, wawa and zbs: first tied label in label order, the tied label "
                   "voted first (first_seen: the rule of the published RTE and dog figures), "
                   "or random (--seed).")
@click.option("--out", "out_path", type=click.Path(),
              help="Write one row per item (.csv, .tsv or .parquet), atomically; default stdout. "
                   "With --engine dask: .csv/.tsv one file (required: no stdout), .parquet a "
                   "directory of Parquet parts (a dataset), each replaced atomically.")
@out_format_option(jsonl=False)
@click.option("--soft", is_flag=True, help="Add the posterior of every label (p_<label> columns).")
@click.option("--clamp-gold", is_flag=True,
              help="Fix gold items to their gold label while fitting (ds, onecoin, mace).")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="Seed of MACE's random restarts and of --ties random.")
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON summary instead of the labels (accuracy against gold).")
@engine_options
@_model_options
def aggregate(votes_path: str, gold_path: str | None, fmt: Format, method: str, ties: TiePolicy,
              out_path: str | None, out_format: str | None, soft: bool, clamp_gold: bool,
              seed: int, as_json: bool, engine: str, scheduler: str | None,
              **model_args: Any) -> None:
    """One label (or, with --soft, a posterior) per item from the votes (with --method
    crowdlab, from the votes and a model's --predictions)."""
    from annokit.io.atomic import write_table
    from annokit.io.escape import neutralise_formulas
    from annokit.quality import aggregate as run_aggregate

    if clamp_gold and method not in ("ds", "onecoin", "mace"):
        raise click.UsageError(f"--clamp-gold applies to ds, onecoin and mace, not --method "
                               f"{method}")
    ctx = click.get_current_context()
    if (method not in _MAJORITY_LIKE
            and ctx.get_parameter_source("ties") is click.core.ParameterSource.COMMANDLINE):
        raise click.UsageError(f"--ties applies to mv, wmv, wawa and zbs, not --method {method} "
                               "(its label is the most probable one in label order)")
    check_engine(engine, scheduler)
    _check_model_args(model_args, "aggregate", engine, method)
    if out_format is not None and out_path is None:
        raise click.UsageError("--out-format applies to --out (the table on stdout is CSV)")
    if engine == "dask":
        _aggregate_dask(votes_path, gold_path, fmt, method, ties, out_path, out_format, soft,
                        clamp_gold, seed, as_json, scheduler)
        return
    if out_path is not None:
        check_table_path(out_path, jsonl=False, format=out_format)
        check_outputs({"--out": out_path}, _inputs(votes_path, gold_path))
    votes = _read(votes_path, fmt, gold_path, "aggregate")
    join = None
    if model_args["pred_paths"]:
        join = join_model(votes, model_args)
        votes = join.votes
    result = run_aggregate(votes, method, ties=ties, soft=soft, clamp_gold=clamp_gold, rng=seed,
                           probs=None if join is None else join.probs,
                           likelihood=model_args["likelihood"])
    output = None
    if out_path is not None:
        write_table(result.table, out_path, jsonl=False, for_people=True, format=out_format)
        output = written(out_path, out_format, result.n_items, jsonl=False)
    if as_json:
        summary = result.summary() if output is None else {**result.summary(), "output": output}
        if join is not None:
            summary["predictions"] = join.summary()
        echo_json(with_duplicates(summary, votes))
    elif out_path is None:
        text = neutralise_formulas(result.table).to_csv(index=False)
        # data on a pipe stays exact; on a terminal control characters are escaped
        (echo if sys.stdout.isatty() else click.echo)(text, nl=False)
    else:
        acc = result.gold_note()
        if result.tie_policy is not None:
            acc += f", ties: {result.tie_policy} ({describe_ties(result.tie_policy)})"
        echo(f"{method}: {result.n_items} items, accuracy {acc}{_fit_text(result)}; "
             f"wrote {describe_output(output or {})}")


def _fit_text(result: Any) -> str:
    """``, N iteration(s), converged B`` for the iterative methods (Dawid-Skene, one-coin,
    MACE); nothing for a (weighted) majority vote, one pass that reports its ties instead."""
    if result.tie_policy is not None:
        return ""
    return f", {result.n_iter} iteration(s), converged {result.converged}"


def _aggregate_dask(votes_path: str, gold_path: str | None, fmt: Format, method: str,
                    ties: TiePolicy, out_path: str | None, out_format: str | None, soft: bool,
                    clamp_gold: bool, seed: int, as_json: bool, scheduler: str | None) -> None:
    """``aggregate --engine dask``: the table goes to one CSV/TSV file or a Parquet dataset
    (``--out DIR.parquet``), never to stdout."""
    from annokit.scale.quality import aggregate_dask
    from annokit.scale.write import output_kind

    if method in ("wmv", "glad", "wawa", "zbs"):
        raise click.UsageError(f"--method {method} runs in memory only: drop --engine dask")
    if out_path is None:
        raise click.UsageError("--engine dask writes the per-item table to a file, not to "
                               "stdout: give --out FILE.csv (or .tsv), or --out DIR.parquet for "
                               "a Parquet dataset")
    kind = output_kind(out_path, jsonl=False, format=out_format)
    check_outputs({"--out": out_path}, _inputs(votes_path, gold_path),
                  directories=["--out"] if kind == "dataset" else [])
    votes = dask_votes(votes_path, scheduler, fmt=fmt, gold=gold_path, not_on_dask={
        f"--ties {ties}": ties not in ("first", "report")})
    result = aggregate_dask(votes, method, ties=ties, soft=soft, clamp_gold=clamp_gold, rng=seed,
                            out=out_path, out_format=out_format)
    output = written(out_path, out_format, result.rows_written, engine="dask", jsonl=False)
    if as_json:
        echo_json({**result.summary(), "output": output})
        return
    acc = result.gold_note()
    if result.tie_policy is not None:
        acc += f", ties: {result.tie_policy} ({describe_ties(result.tie_policy)})"
    echo(f"{method}: {result.n_items} items, accuracy {acc}{_fit_text(result)}; "
         f"wrote {describe_output(output)}")
