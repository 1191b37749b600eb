"""``annokit subsample``: how many annotations are enough."""

from __future__ import annotations

import sys
import warnings
from typing import Any

import click

from annokit.cli._common import FORMAT_OPTION, column_options, echo_json, read_options

#: Above this many (repetition x item x vote position) draws a progress bar goes to stderr.
PROGRESS_THRESHOLD = 2_000_000


def _parse_ks(ctx: click.Context, param: click.Parameter, value: str) -> list[int]:
    try:
        ks = [int(v) for v in value.replace(" ", "").split(",") if v != ""]
    except ValueError:
        raise click.BadParameter(f"expected comma-separated positive integers, e.g. 1,2,5,10; "
                                 f"got {value!r}") from None
    if not ks or min(ks) < 1:
        raise click.BadParameter(f"expected comma-separated positive integers, e.g. 1,2,5,10; "
                                 f"got {value!r}")
    return ks


@click.command(name="subsample")
@click.option("--votes", "path", required=True, type=click.Path(dir_okay=False),
              help="Votes file (ChaosNLI .jsonl, long or wide table) or a registered dataset name.")
@FORMAT_OPTION
@column_options
@click.option("--k", "ks", default="1,2,5,10,20,50", show_default=True, callback=_parse_ks,
              help="Votes per item to subsample, comma-separated.")
@click.option("--reps", type=click.IntRange(min=1), default=200, show_default=True,
              help="Repetitions per k.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
@click.option("--epsilon", type=click.FloatRange(min=0, max=1, min_open=True), default=0.05,
              show_default=True, help="Target expected TVD to the full-data distribution.")
@click.option("--short", type=click.Choice(["error", "skip", "keep"]), default="error",
              show_default=True,
              help="Items with fewer than k votes: fail, leave them out, or keep all their votes.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Threads (results do not depend on it).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (documented keys).")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Write the curves to this image file (PNG, SVG or PDF).")
def subsample(path: str, fmt: str, ks: list[int], reps: int, seed: int, epsilon: float,
              short: str, jobs: int, as_json: bool, plot: str | None) -> None:
    """Subsampling curves for the votes in --votes: how far k-vote label
    distributions are from the full data (TVD, Jensen-Shannon distance, KL,
    majority agreement, entropy bias, with percentile intervals over
    repetitions), and the smallest k whose expected TVD is below --epsilon.

    When no observed k gets below --epsilon, a Dirichlet-multinomial fitted
    to the votes extrapolates beyond the votes available.
    """
    from annokit.io import read_votes
    from annokit.subsample import curve_summary

    image_type = None
    if plot:
        from annokit.report.plots import image_format

        image_type = image_format(plot)  # fail before the work on a bad extension or folder
    votes = read_votes(path, format=fmt, **read_options())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        curve, rec = _compute(votes, ks, reps, seed, epsilon, short, jobs)
    for message in dict.fromkeys(str(w.message) for w in caught):
        click.echo(f"Warning: {' '.join(message.split())}", err=True)
    if plot:
        from annokit.report.plots import subsampling_figure, write_figure

        write_figure(subsampling_figure(curve, rec, fmt=image_type), plot)
    if as_json:
        echo_json(curve_summary(curve, rec))
        return
    frame = curve.to_frame()
    click.echo(f"{votes.n_items} items, {curve.n_votes_min}-{curve.n_votes_max} votes per item, "
               f"{reps} repetitions, seed {seed}")
    click.echo(frame.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    click.echo(rec.describe())


def _compute(votes: Any, ks: list[int], reps: int, seed: int, epsilon: float, short: str,
             jobs: int) -> tuple[Any, Any]:
    from annokit.subsample import recommend_k, subsampling_curve

    work = reps * votes.n_items * max(ks)
    if work > PROGRESS_THRESHOLD:
        with click.progressbar(length=1000, label="subsampling", file=sys.stderr) as bar:
            state = {"pos": 0}

            def progress(fraction: float) -> None:
                target = int(fraction * 1000)
                if target > state["pos"]:
                    bar.update(target - state["pos"])
                    state["pos"] = target

            curve = subsampling_curve(votes, ks, reps=reps, rng=seed, short=short,
                                      n_jobs=jobs, progress=progress)
    else:
        curve = subsampling_curve(votes, ks, reps=reps, rng=seed, short=short, n_jobs=jobs)
    return curve, recommend_k(curve, epsilon, counts=votes, rng=seed)
