"""``annokit stats``: dataset statistics."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from annokit.cli._common import (
    FORMAT_OPTION,
    SEED,
    check_engine,
    check_memory,
    column_options,
    dask_votes,
    echo,
    echo_json,
    engine_options,
    finite,
    read_options,
    votes_input,
    with_duplicates,
)
from annokit.core.soft_labels import DEFAULT_TIES, ENTROPY_BASE, TiePolicy

if TYPE_CHECKING:
    from annokit.io import Format

#: Bytes kept per bootstrap replicate (six coefficients: their replicate values, 48 bytes; the
#: weights go by chunks of a fixed budget).
BYTES_PER_REPLICATE = 64


@click.command(name="stats")
@votes_input()
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
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="Seed of the bootstrap (and of --ties random).")
@click.option("--base", type=finite(0, min_open=True, exclude=(1.0,)), default=ENTROPY_BASE,
              show_default="e",
              help="Logarithm base of the entropy (e: nats, as every entropy annokit reports; "
                   "2: bits, as ChaosNLI reports; > 0, not 1).")
@click.option("--multilabel", is_flag=True,
              help="Multi-label votes (an annotator may tick several labels of an item; implied "
                   "when the votes hold such responses): per-label tick rates, majorities "
                   "(exactly half: a reported tie) and Krippendorff's alpha of each label's "
                   "yes/no answers.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (documented keys).")
@click.option("--card", is_flag=True, help="Print the Markdown statistics section of a data card.")
@engine_options
def stats(votes_path: str, fmt: Format, gold: str | None, n_boot: int, ties: TiePolicy, seed: int,
          base: float, multilabel: bool, as_json: bool, card: bool, engine: str,
          scheduler: str | None) -> None:
    """Statistics of the votes in --votes (or VOTES): items, votes, annotators, entropy, ties
    (and the tie policy of the majority vote), majority-vote accuracy against gold, majority
    change against the original label, label counts, and agreement with bootstrap intervals:
    Krippendorff's alpha, Fleiss' kappa, percent agreement, Gwet's AC1, Brennan-Prediger and
    Conger's kappa (weighted to match ordinal, interval and ratio scales: AC2 and the weighted
    others; items with fewer than two votes are left out of the observed agreement).

    VOTES is a ChaosNLI .jsonl file, a long or wide CSV/TSV/JSONL/Parquet table,
    a directory or quoted glob of Parquet/CSV/TSV partitions of a long table, or a
    registered dataset name such as chaosnli-snli.
    """
    from annokit.io import read_votes
    from annokit.quality.dataset_stats import (
        dataset_stats,
        multilabel_stats,
        stats_markdown,
        stats_table,
    )

    if as_json and card:
        raise click.UsageError("--json and --card conflict: give one of them")
    check_memory("--n-boot", n_boot, n_boot * BYTES_PER_REPLICATE, what="bootstrap replicates")
    check_engine(engine, scheduler)
    result: Any
    if engine == "dask" and multilabel:
        from annokit.scale.stats_multilabel import multilabel_stats_dask

        if gold is not None:
            raise click.UsageError("gold labels (--gold, a gold column) apply to single-label "
                                   "votes, not to multi-label ones")
        if ties not in ("first", DEFAULT_TIES):
            raise click.UsageError("--ties applies to single-label votes (a multi-label tie is a "
                                   "label ticked by exactly half: reported, left out)")
        read_options(multilabel=True)  # --duplicates other than keep conflicts with it
        votes = dask_votes(votes_path, scheduler, fmt=fmt, duplicates="keep")
        if votes.n_gold_items():  # a gold column left blank is accepted, as in memory
            raise click.UsageError("gold labels (--gold, a gold column) apply to single-label "
                                   "votes, not to multi-label ones")
        result = multilabel_stats_dask(votes, n_boot=n_boot, rng=seed)
    elif engine == "dask":
        from annokit.scale.stats import dataset_stats_dask

        votes = dask_votes(votes_path, scheduler, fmt=fmt, gold=gold, not_on_dask={
            f"--ties {ties}": ties not in ("first", "report")})
        result = dataset_stats_dask(votes, base=base, n_boot=n_boot, ties=ties, rng=seed)
    else:
        from annokit.core.multilabel import is_multilabel
        from annokit.core.soft_votes import is_soft_only

        votes = read_votes(votes_path, format=fmt, gold=gold, **read_options(multilabel=multilabel))
        if is_soft_only(votes):
            from annokit.core.soft_votes import soft_only_message
            from annokit.errors import InputError
            from annokit.quality.dataset_stats import soft_stats

            if multilabel:
                raise InputError(soft_only_message(votes.source, "--multilabel"))
            result = soft_stats(votes, base=base, ties=ties, rng=seed)
        elif multilabel or is_multilabel(votes):
            if gold is not None or (votes.gold is not None and (votes.gold != -1).any()):
                raise click.UsageError("gold labels (--gold, a gold column) apply to "
                                       "single-label votes, not to multi-label ones")
            if ties not in ("first", DEFAULT_TIES):
                raise click.UsageError("--ties applies to single-label votes (a multi-label tie "
                                       "is a label ticked by exactly half: reported, left out)")
            result = multilabel_stats(votes, n_boot=n_boot, rng=seed)
        else:
            result = dataset_stats(votes, base=base, n_boot=n_boot, ties=ties, rng=seed)
    if as_json:
        echo_json(with_duplicates(result, votes))
    elif card:
        echo(stats_markdown(result))
    else:
        echo(stats_table(result))
