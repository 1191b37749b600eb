"""``annokit stats``: dataset statistics."""

from __future__ import annotations

import click

from annokit.cli._common import FORMAT_OPTION, column_options, echo_json, read_options
from annokit.core.soft_labels import DEFAULT_TIES


@click.command(name="stats")
@click.argument("path", type=click.Path(dir_okay=False))
@FORMAT_OPTION
@column_options
@click.option("--gold", type=click.Path(exists=True, dir_okay=False),
              help="A separate gold file (item and gold columns) for long/wide votes.")
@click.option("--n-boot", "n_boot", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Bootstrap replicates for the agreement intervals (0: none).")
@click.option("--ties", type=click.Choice(["first", "first_seen", "random"]), default=DEFAULT_TIES,
              show_default=True,
              help="Tie policy of the majority vote: first tied label in label order, the tied "
                   "label voted first (first_seen: the rule of the published RTE and dog "
                   "figures), or random (--seed).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the bootstrap (and of --ties random).")
@click.option("--base", type=float, default=2.0, show_default=True,
              help="Logarithm base of the entropy (2: bits).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (documented keys).")
@click.option("--card", is_flag=True, help="Print the Markdown statistics section of a data card.")
def stats(path: str, fmt: str, gold: str | None, n_boot: int, ties: str, seed: int, base: float,
          as_json: bool, card: bool) -> None:
    """Statistics of the votes in PATH: items, votes, annotators, entropy, ties
    (and the tie policy of the majority vote), majority-vote accuracy against gold, majority change against the original label, label counts, Krippendorff's
    alpha and Fleiss' kappa with bootstrap intervals.

    PATH is a ChaosNLI .jsonl file, a long or wide CSV/TSV/JSONL/Parquet table,
    or a registered dataset name such as chaosnli-snli.
    """
    from annokit.io import read_votes
    from annokit.quality.dataset_stats import dataset_stats, stats_markdown, stats_table

    votes = read_votes(path, format=fmt, gold=gold, **read_options())
    result = dataset_stats(votes, base=base, n_boot=n_boot, ties=ties, rng=seed)
    if as_json:
        echo_json(result)
    elif card:
        click.echo(stats_markdown(result))
    else:
        click.echo(stats_table(result))
