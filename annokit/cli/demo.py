"""``annokit demo``: the main job on a built-in synthetic dataset."""

from __future__ import annotations

import click

from annokit.cli._common import echo_json


@click.command(name="demo")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the synthetic data.")
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
def demo(seed: int, as_json: bool) -> None:
    """Generate a deterministic synthetic multi-annotator dataset (items across
    agreement levels, annotators including spammers) and print its statistics.
    """
    from annokit.stats import dataset_stats, stats_table
    from annokit.synthetic import make_votes

    data = make_votes(rng=seed)
    result = dataset_stats(data.votes, rng=seed)
    if as_json:
        echo_json(result)
        return
    click.echo(f"annokit demo: synthetic dataset (seed {seed}), "
               f"{int(data.spammer.sum())} of {data.spammer.size} annotators are spammers\n")
    click.echo(stats_table(result))
