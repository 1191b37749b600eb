"""``annokit annotators``, ``annokit filter`` and ``annokit aggregate``: annotator quality."""

from __future__ import annotations

import click

from annokit.cli._common import FORMAT_OPTION, column_options, echo_json, read_options
from annokit.core.soft_labels import DEFAULT_TIES, describe_ties
from annokit.io.atomic import check_table_path

_SCORE_METHODS = ["agreement", "ds", "onecoin", "mace", "gold", "entropy"]
_AGG_METHODS = ["mv", "wmv", "ds", "onecoin", "mace"]
_TIES = ["first", "first_seen", "random"]

_VOTES = click.option("--votes", "votes_path", required=True, type=click.Path(dir_okay=False),
                      help="Votes file (long/wide CSV, TSV, JSONL, Parquet; ChaosNLI .jsonl).")
_GOLD = click.option("--gold", "gold_path", type=click.Path(exists=True, dir_okay=False),
                     help="Gold file with an item column and a gold column (e.g. question,truth); "
                          "a gold column in the votes file is used without it.")
_SEED = click.option("--seed", type=int, default=0, show_default=True,
                     help="Seed of MACE's random restarts.")


def _read(votes_path: str, fmt: str, gold_path: str | None):
    from annokit.io import read_votes

    return read_votes(votes_path, format=fmt, gold=gold_path, **read_options())


@click.command(name="annotators")
@_VOTES
@_GOLD
@FORMAT_OPTION
@column_options
@click.option("--method", type=click.Choice(_SCORE_METHODS), default="agreement", show_default=True,
              help="Score: agreement with co-annotators, Dawid-Skene spammer score (ds), one-coin "
                   "skill, MACE competence, gold accuracy (ChaosNLI rule), label-usage entropy.")
@click.option("--threshold", type=float, default=None,
              help="Flag annotators scoring below this (default: the method's default threshold).")
@_SEED
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (documented keys).")
def annotators(votes_path: str, gold_path: str | None, fmt: str, method: str,
               threshold: float | None, seed: int, as_json: bool) -> None:
    """Score every annotator and mark the ones a filter would remove first.

    Scores are higher for better annotators; an annotator is flagged when the
    score is below the threshold (for --method gold also after 4 consecutive
    wrong gold answers).
    """
    from annokit.quality import flag_annotators

    flags = flag_annotators(_read(votes_path, fmt, gold_path), method, threshold=threshold,
                            rng=seed)
    if as_json:
        echo_json(flags.to_dict())
        return
    rows = flags.to_dict()["annotators"]
    click.echo(f"{'annotator':<24} {'n_votes':>7} {'score':>8}  flagged")
    for row in sorted(rows, key=lambda r: (r["score"] is None, r["score"] or 0.0)):
        score = "nan" if row["score"] is None else f"{row['score']:.3f}"
        mark = f"*  {row['reason']}" if row["flagged"] else ""
        click.echo(f"{row['annotator']:<24} {row['n_votes']:>7} {score:>8}  {mark}")
    click.echo(f"{flags.n_flagged} of {len(rows)} annotators flagged "
               f"(method {method}, threshold {flags.threshold:g})")


@click.command(name="filter")
@_VOTES
@_GOLD
@FORMAT_OPTION
@column_options
@click.option("--method", type=click.Choice(_SCORE_METHODS), required=True,
              help="Score used to remove annotators (see `annokit annotators`).")
@click.option("--threshold", type=float, default=None,
              help="Remove annotators scoring below this (default: the method's default).")
@click.option("--top-fraction", type=float, default=None,
              help="Instead of a threshold, remove this fraction of annotators (lowest scores).")
@click.option("--min-votes", type=click.IntRange(min=1), default=2, show_default=True,
              help="Items left with fewer votes are listed in the audit.")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False),
              help="Filtered votes (.csv, .tsv, .jsonl or .parquet), written atomically.")
@click.option("--audit", "audit_path", required=True, type=click.Path(dir_okay=False),
              help="Audit JSON: removed annotators with scores, affected items, TVD moved.")
@_SEED
@click.option("--json", "as_json", is_flag=True, help="Print the audit summary as JSON.")
def filter_cmd(votes_path: str, gold_path: str | None, fmt: str, method: str,
               threshold: float | None, top_fraction: float | None, min_votes: int,
               out_path: str, audit_path: str, seed: int, as_json: bool) -> None:
    """Remove low-quality annotators, writing the kept votes and an audit.

    Threshold rules repeat until no remaining annotator is flagged, so filtering
    the output again changes nothing.
    """
    import warnings

    from annokit.errors import AnnokitWarning
    from annokit.io import write_votes
    from annokit.quality import filter_annotators

    check_table_path(out_path)
    votes = _read(votes_path, fmt, gold_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", AnnokitWarning)
        kept, audit = filter_annotators(votes, method=method, threshold=threshold,
                                        top_fraction=top_fraction, min_votes=min_votes, rng=seed)
    write_votes(kept, out_path)
    audit.write_json(audit_path)
    summary = audit.summary()
    if as_json:
        echo_json(summary)
    else:
        click.echo(
            f"removed {summary['n_annotators_removed']} of {summary['n_annotators_before']} "
            f"annotators ({summary['n_votes_removed']} of {summary['n_votes_before']} votes; "
            f"method {method}, threshold {summary['threshold']}, {summary['rounds']} round(s))"
        )
        click.echo(
            f"items: {summary['n_items_affected']} affected, {summary['n_items_removed']} removed, "
            f"{summary['n_items_too_few_votes']} with fewer than {min_votes} votes; "
            f"mean TVD moved {_fmt(summary['tvd_mean'])}, max {_fmt(summary['tvd_max'])}"
        )
        click.echo(f"wrote {out_path} and {audit_path}")
    for w in caught:
        click.echo(f"Warning: {w.message}", err=True)


def _fmt(x) -> str:
    return "n/a" if x is None else f"{x:.4f}"


@click.command(name="aggregate")
@_VOTES
@_GOLD
@FORMAT_OPTION
@column_options
@click.option("--method", type=click.Choice(_AGG_METHODS), default="mv", show_default=True,
              help="Majority vote, weighted MV, Dawid-Skene, one-coin DS, MACE.")
@click.option("--ties", type=click.Choice(_TIES), default=DEFAULT_TIES, show_default=True,
              help="Tie policy of mv and wmv: first tied label in label order, the tied label "
                   "voted first (first_seen: the rule of the published RTE and dog figures), "
                   "or random (--seed).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False),
              help="Write one row per item (.csv, .tsv or .parquet), atomically; default stdout.")
@click.option("--soft", is_flag=True, help="Add the posterior of every label (p_<label> columns).")
@click.option("--clamp-gold", is_flag=True,
              help="Fix gold items to their gold label while fitting (ds, onecoin, mace).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of MACE's random restarts and of --ties random.")
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON summary instead of the labels (accuracy against gold).")
def aggregate(votes_path: str, gold_path: str | None, fmt: str, method: str, ties: str,
              out_path: str | None, soft: bool, clamp_gold: bool, seed: int,
              as_json: bool) -> None:
    """One label (or, with --soft, a posterior) per item from the votes."""
    from annokit.io.atomic import write_table
    from annokit.quality import aggregate as run_aggregate

    if out_path is not None:
        check_table_path(out_path, jsonl=False)
    result = run_aggregate(_read(votes_path, fmt, gold_path), method, ties=ties, soft=soft,
                           clamp_gold=clamp_gold, rng=seed)
    if out_path is not None:
        write_table(result.table, out_path, jsonl=False)
    if as_json:
        echo_json(result.summary())
    elif out_path is None:
        click.echo(result.table.to_csv(index=False), nl=False)
    else:
        acc = ("n/a (no gold)" if result.accuracy is None
               else f"{result.accuracy:.4f} on {result.n_gold} gold items")
        if result.tie_policy is not None:
            acc += f", ties: {result.tie_policy} ({describe_ties(result.tie_policy)})"
        click.echo(f"{method}: {result.n_items} items, accuracy {acc}, {result.n_iter} "
                   f"iteration(s), converged {result.converged}; wrote {out_path}")
