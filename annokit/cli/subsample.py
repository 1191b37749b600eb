"""``annokit subsample``: how many annotations are enough."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import click

from annokit.cli._common import (
    FORMAT_OPTION,
    SEED,
    check_memory,
    column_options,
    echo,
    echo_json,
    echo_warning,
    finite,
    int_list,
    read_options,
    single_label,
    votes_input,
    with_duplicates,
)
from annokit.subsample.defaults import AGREEMENT_BINS, EPSILON, REPS, SHORT, TARGET, TARGETS

if TYPE_CHECKING:
    from annokit.io import Format

#: Above this many (repetition x item x vote position) draws a progress bar goes to stderr.
PROGRESS_THRESHOLD = 2_000_000
#: Largest k accepted (a k-vote draw per item and repetition is made for every k up to it).
K_MAX = 100_000
#: Bytes of results per repetition and k (five metrics over the agreement bins and the TVD grid).
BYTES_PER_REP_AND_K = 512
#: Values of k of the default grid counted by the memory check before the votes are read
#: (1, 2, 5, ... up to K_MAX).
N_DEFAULT_KS = 16


#: The options ``annokit subsample`` shares with ``annokit report --subsample`` (one set of
#: defaults, :mod:`annokit.subsample.defaults`).
EPSILON_OPTION = click.option(
    "--epsilon", type=finite(0, 1, min_open=True), default=EPSILON, show_default=True,
    help="Tolerance: the largest expected TVD to the target distribution, in (0, 1].")
TARGET_OPTION = click.option(
    "--target", type=click.Choice([TARGET, *(t for t in TARGETS if t != TARGET)]), default=TARGET,
    show_default=True,
    help="What k is recommended against: the population the votes are a sample of "
         "(a Dirichlet-multinomial fit to the votes; k may exceed the votes available), "
         "or the pool of collected votes (the observed curve, up to half the fewest votes on "
         "an item; never extrapolated).")


def _parse_ks(ctx: click.Context, param: click.Parameter, value: str | None) -> list[int] | None:
    if value is None:
        return None
    ks = int_list(value, "--k", min=1)
    if max(ks) > K_MAX:
        raise click.BadParameter(f"k must be at most {K_MAX:,}; got {max(ks)}")
    return ks


@click.command(name="subsample")
@votes_input()
@FORMAT_OPTION
@column_options
@click.option("--k", "ks", default=None, callback=_parse_ks, metavar="K,K,...",
              help="Votes per item to subsample, comma-separated positive integers "
                   "[default: 1,2,5,10,20,50,... up to the most votes on an item].")
@click.option("--reps", type=click.IntRange(min=1), default=REPS, show_default=True,
              help="Repetitions per k.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Random seed (>= 0).")
@EPSILON_OPTION
@TARGET_OPTION
@click.option("--short", type=click.Choice(["error", "skip", "keep"]), default=SHORT,
              show_default=True,
              help="Items with fewer than k votes: fail, leave them out at that k (counted and "
                   "reported), or keep all their votes.")
@click.option("--bins", "n_bins", type=click.IntRange(min=1), default=AGREEMENT_BINS,
              show_default=True,
              help="Agreement bins of the curve's by_bin rows (--json): quantiles of the "
                   "full-data entropy, as evaluate's and the report's.")
@click.option("--jobs", type=click.IntRange(min=1, max=256), default=1, show_default=True,
              help="Threads (results do not depend on it).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (documented keys).")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Write the curves to this image file (PNG, SVG or PDF).")
def subsample(votes_path: str, fmt: Format, ks: list[int] | None, reps: int, seed: int, epsilon: float,
              target: str, short: str, n_bins: int, jobs: int, as_json: bool,
              plot: str | None) -> None:
    """Subsampling curves for the votes in --votes: how far k-vote label
    distributions are from the full data (TVD, Jensen-Shannon distance, KL,
    majority agreement, entropy bias, with percentile intervals over
    repetitions), and the smallest k whose expected TVD is below --epsilon.

    --target population (the default) recommends k against the population the
    votes are a sample of: the per-item distributions of a Dirichlet-multinomial
    fitted to the votes, extrapolated beyond the votes available. --target pool
    recommends k against the collected votes themselves (the observed curve, up
    to half the fewest votes on an item; it is never extrapolated: when the curve
    does not get below --epsilon, no k is given and the output says why). The
    output states the target, the tolerance, the recommended k and its interval.
    `annokit report --subsample` gives the same recommendation for the same
    options.
    """
    from annokit.io import read_votes
    from annokit.subsample import curve_summary

    n_ks = len(ks) if ks is not None else N_DEFAULT_KS
    check_memory("--reps", reps, reps * n_ks * BYTES_PER_REP_AND_K,
                 what=f"results of {reps} repetitions x {n_ks} values of k")
    image_type = None
    if plot:
        from annokit.io.atomic import check_outputs
        from annokit.report.plots import image_format

        image_type = image_format(plot)  # fail before the work on a bad extension or folder
        check_outputs({"--plot": plot}, {"--votes": votes_path})
    votes = single_label(read_votes(votes_path, format=fmt, **read_options()), "subsample")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        curve, rec = _compute(votes, ks, reps, seed, epsilon, target, short, jobs, n_bins)
    for message in dict.fromkeys(str(w.message) for w in caught):
        echo_warning(message)
    if plot and image_type is not None:  # image_type is set exactly when --plot is given
        from annokit.report.plots import subsampling_figure, write_figure

        write_figure(subsampling_figure(curve, rec, fmt=image_type), plot)
    if as_json:
        echo_json(with_duplicates(curve_summary(curve, rec), votes))
        return
    frame = curve.to_frame()
    echo(f"{votes.n_items} items, {votes_per_item(curve.n_votes_min, curve.n_votes_max)}, "
         f"{reps} repetitions, seed {seed}")
    from annokit.subsample.recommend import curve_units, named_curve_frame

    echo("curve: k-vote subsamples against the pool (all votes of each item; pool_* columns)")
    echo(named_curve_frame(frame).to_string(index=False, float_format=lambda v: f"{v:.4f}"))

    shown = [c for c in curve_units() if any(col.startswith(c) for col in frame.columns)]
    echo("units: " + ", ".join(f"{c} {curve_units()[c]}" for c in shown))
    echo(f"target: {rec.kind} (tolerance: expected TVD < {rec.epsilon:g})")
    echo(rec.describe())


def votes_per_item(low: int, high: int) -> str:
    """``"100 votes per item"``, or ``"7-9 votes per item"`` when items differ."""
    return f"{low} votes per item" if low == high else f"{low}-{high} votes per item"


def _compute(votes: Any, ks: list[int] | None, reps: int, seed: int, epsilon: float,
             target: str, short: str, jobs: int, n_bins: int) -> tuple[Any, Any]:
    from annokit.subsample import how_many
    from annokit.subsample.defaults import default_ks

    n_max = int(votes.counts().sum(axis=1).max())
    work = reps * votes.n_items * max(ks if ks is not None else default_ks(n_max))
    options = {"target": target, "epsilon": epsilon, "reps": reps, "seed": seed, "short": short,
               "n_jobs": jobs, "n_bins": n_bins}
    if work <= PROGRESS_THRESHOLD:
        return how_many(votes, ks, **options)
    from annokit.core.progress import progress as progress_bar

    with progress_bar(total=1000, desc="subsampling", unit="/1000") as bar:
        state = {"pos": 0}

        def progress(fraction: float) -> None:
            done = int(fraction * 1000)
            if done > state["pos"]:
                bar.update(done - state["pos"])
                state["pos"] = done

        return how_many(votes, ks, progress=progress, **options)
