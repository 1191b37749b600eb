"""``annokit demo``: the main job on a built-in synthetic dataset."""

from __future__ import annotations

import sys

import click

from annokit.cli._common import SEED, check_bootstrap, echo, echo_json


@click.command(name="demo")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Directory of the report (replaced if it holds one); default ./annokit-demo. "
                   "With --json the report is written only when --out is given.")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="Seed of the synthetic data, models and bootstrap.")
@click.option("--n-boot", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Bootstrap replicates of the statistics' agreement intervals and of the "
                   "report (0: no intervals).")
@click.option("--png", is_flag=True, help="Also write every figure as PNG.")
@click.option("--no-report", is_flag=True, help="Only print the dataset statistics.")
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
def demo(out: str | None, seed: int, n_boot: int, png: bool, no_report: bool,
         as_json: bool) -> None:
    """Generate a deterministic synthetic multi-annotator dataset (items across
    agreement levels, annotators including spammers) and four synthetic models
    (posterior-matching, overconfident, underconfident, temperature-scaled),
    print the dataset statistics and write the full report to --out.
    """
    from annokit.io.atomic import check_outputs
    from annokit.io.synthetic import make_votes

    if no_report:
        given = [name for name, on in (("--png", png), ("--out", out is not None)) if on]
        if given:
            raise click.UsageError(f"{' and '.join(given)} appl{'y' if len(given) > 1 else 'ies'} "
                                   "to the report, which --no-report skips: drop one of them")
    if not no_report and not (as_json and out is None):
        check_outputs({"--out": out or "annokit-demo"}, directories=["--out"])
    from annokit.quality.dataset_stats import dataset_stats, stats_table

    check_bootstrap(n_boot, 10, n_groups=6 * 4)  # the demo report: 5 bins + all, 4 models
    data = make_votes(rng=seed)
    result = dataset_stats(data.votes, n_boot=n_boot, rng=seed)  # the same replicates as the report
    if as_json:
        echo_json(result)
    else:
        click.echo(f"annokit demo: synthetic dataset (seed {seed}), "
                   f"{int(data.spammer.sum())} of {data.spammer.size} annotators are spammers\n")
        echo(stats_table(result))
    if no_report or (as_json and out is None):
        return
    out = out or "annokit-demo"
    from annokit.report import write_report
    from annokit.report.demo import demo_report

    report = demo_report(data, seed=seed, n_boot=n_boot)
    path = write_report(report, out, png=png)
    click.echo(f"\nreport written to {path.resolve() / 'report.html'} (also report.md, report.json, "
               "figures/)", file=sys.stderr if as_json else None)
