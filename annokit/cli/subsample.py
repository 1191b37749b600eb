"""``annokit subsample``: how many annotations are enough."""

from __future__ import annotations

import warnings
from typing import Any

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

#: Above this many (repetition x item x vote position) draws a progress bar goes to stderr.
PROGRESS_THRESHOLD = 2_000_000
#: Largest k accepted (a k-vote draw per item and repetition is made for every k up to it).
K_MAX = 100_000
#: Bytes of results per repetition and k (five metrics over the agreement bins and the TVD grid).
BYTES_PER_REP_AND_K = 512


def _parse_ks(ctx: click.Context, param: click.Parameter, value: str) -> list[int]:
    ks = int_list(value, "--k", min=1)
    if max(ks) > K_MAX:
        raise click.BadParameter(f"k must be at most {K_MAX:,}; got {max(ks)}")
    return ks


@click.command(name="subsample")
@votes_input()
@FORMAT_OPTION
@column_options
@click.option("--k", "ks", default="1,2,5,10,20,50", show_default=True, callback=_parse_ks,
              help="Votes per item to subsample, comma-separated positive integers.")
@click.option("--reps", type=click.IntRange(min=1), default=200, show_default=True,
              help="Repetitions per k.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Random seed (>= 0).")
@click.option("--epsilon", type=finite(0, 1, min_open=True), default=0.05,
              show_default=True, help="Tolerance: the largest expected TVD to the target "
                                      "distribution, in (0, 1].")
@click.option("--target", type=click.Choice(["population", "pool"]), default="population",
              show_default=True,
              help="What k is recommended against: the population the votes are a sample of "
                   "(a Dirichlet-multinomial fit to the votes; k may exceed the votes "
                   "available), or the pool of collected votes (the observed curve).")
@click.option("--short", type=click.Choice(["error", "skip", "keep"]), default="error",
              show_default=True,
              help="Items with fewer than k votes: fail, leave them out, or keep all their votes.")
@click.option("--jobs", type=click.IntRange(min=1, max=256), default=1, show_default=True,
              help="Threads (results do not depend on it).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (documented keys).")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Write the curves to this image file (PNG, SVG or PDF).")
def subsample(votes_path: str, fmt: str, ks: list[int], reps: int, seed: int, epsilon: float,
              target: str, short: str, jobs: int, as_json: bool, plot: str | None) -> None:
    """Subsampling curves for the votes in --votes: how far k-vote label
    distributions are from the full data (TVD, Jensen-Shannon distance, KL,
    majority agreement, entropy bias, with percentile intervals over
    repetitions), and the smallest k whose expected TVD is below --epsilon.

    --target population (the default) recommends k against the population the
    votes are a sample of: the per-item distributions of a Dirichlet-multinomial
    fitted to the votes, extrapolated beyond the votes available. --target pool
    recommends k against the collected votes themselves (the observed curve, up
    to half the fewest votes on an item; extrapolated only when it does not get
    below --epsilon). The output states the target, the tolerance, the
    recommended k and its interval.
    """
    from annokit.io import read_votes
    from annokit.subsample import curve_summary

    check_memory("--reps", reps, reps * len(ks) * BYTES_PER_REP_AND_K,
                 what=f"results of {reps} repetitions x {len(ks)} values of k")
    image_type = None
    if plot:
        from annokit.io.atomic import check_outputs
        from annokit.report.plots import image_format

        image_type = image_format(plot)  # fail before the work on a bad extension or folder
        check_outputs({"--plot": plot}, {"--votes": votes_path})
    votes = single_label(read_votes(votes_path, format=fmt, **read_options()), "subsample")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        curve, rec = _compute(votes, ks, reps, seed, epsilon, target, short, jobs)
    for message in dict.fromkeys(str(w.message) for w in caught):
        echo_warning(message)
    if plot:
        from annokit.report.plots import subsampling_figure, write_figure

        write_figure(subsampling_figure(curve, rec, fmt=image_type), plot)
    if as_json:
        echo_json(with_duplicates(curve_summary(curve, rec), votes))
        return
    frame = curve.to_frame()
    echo(f"{votes.n_items} items, {curve.n_votes_min}-{curve.n_votes_max} votes per item, "
         f"{reps} repetitions, seed {seed}")
    echo(frame.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    echo(f"target: {rec.kind} (tolerance: expected TVD < {rec.epsilon:g})")
    echo(rec.describe())


def _compute(votes: Any, ks: list[int], reps: int, seed: int, epsilon: float, target: str,
             short: str, jobs: int) -> tuple[Any, Any]:
    from annokit.errors import AnnokitError
    from annokit.subsample import recommend_k, subsampling_curve

    work = reps * votes.n_items * max(ks)
    if work > PROGRESS_THRESHOLD:
        from annokit.core.progress import progress as progress_bar

        with progress_bar(total=1000, desc="subsampling", unit="/1000") as bar:
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
    if target == "population":
        try:
            return curve, recommend_k(curve, epsilon, counts=votes, rng=seed, target=target)
        except AnnokitError as exc:  # e.g. a single label: no Dirichlet-multinomial to fit
            warnings.warn(f"the population target does not apply ({exc}); k is recommended "
                          "against the pool of collected votes", stacklevel=1)
    return curve, recommend_k(curve, epsilon, counts=votes, rng=seed)
