"""``annokit subsample``: how many annotations are enough."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import click

from annokit.cli._common import FORMAT_OPTION, echo_json
from annokit.io.atomic import atomic_path

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

    votes = read_votes(path, format=fmt)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        curve, rec = _compute(votes, ks, reps, seed, epsilon, short, jobs)
    for message in dict.fromkeys(str(w.message) for w in caught):
        click.echo(f"Warning: {' '.join(message.split())}", err=True)
    if plot:
        write_plot(curve, rec, plot)
    if as_json:
        echo_json(curve_json(curve, rec))
        return
    frame = curve.to_frame()
    click.echo(f"{votes.n_items} items, {curve.n_votes_min}-{curve.n_votes_max} votes per item, "
               f"{reps} repetitions, seed {seed}")
    click.echo(frame.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    click.echo(recommendation_line(rec))


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


def recommendation_line(rec: Any) -> str:
    if rec.k is None:
        return (f"no k up to the limit reaches expected TVD < {rec.epsilon} "
                f"({rec.source}; target: {rec.target})")
    return (f"recommended k = {rec.k} (interval {rec.k_low}-{rec.k_high}) for expected "
            f"TVD < {rec.epsilon}; {rec.source}, against the {rec.target}")


def curve_json(curve: Any, rec: Any) -> dict[str, Any]:
    """The ``--json`` object (documented in the README)."""
    return {
        "curve": curve.to_records(),
        "recommended_k": rec.k,
        "recommended_k_low": rec.k_low,
        "recommended_k_high": rec.k_high,
        "recommendation_source": rec.source,
        "recommendation_target": rec.target,
        "epsilon": rec.epsilon,
        "n_items": curve.n_items,
        "reps": curve.reps,
        "seed": curve.seed,
        "interval": curve.interval,
        "short": curve.short,
        "n_short": [int(v) for v in curve.n_short],
        "kl_smoothing": curve.kl_smoothing,
        "n_votes_min": curve.n_votes_min,
        "n_votes_max": curve.n_votes_max,
        "by_bin": [{key: (val.item() if hasattr(val, "item") else val) for key, val in row.items()}
                   for row in curve.by_bin().to_dict(orient="records")],
    }


def write_plot(curve: Any, rec: Any, target: str) -> None:
    """Draw the TVD/JSD curves and majority agreement; write ``target`` atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from annokit.errors import AnnokitError

    frame = curve.to_frame()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.fill_between(frame.k, frame.tvd_low, frame.tvd_high, alpha=0.3,
                     label=f"TVD {int(curve.interval * 100)}% interval")
    ax1.plot(frame.k, frame.tvd_mean, marker="o", label="TVD")
    ax1.plot(frame.k, frame.jsd_mean, marker="s", label="Jensen-Shannon distance")
    ax1.axhline(rec.epsilon, color="grey", linestyle="--", label=f"epsilon = {rec.epsilon}")
    if rec.k is not None and rec.source == "observed":
        ax1.axvline(rec.k, color="black", linestyle=":", label=f"recommended k = {rec.k}")
    ax1.set_xscale("log")
    ax1.set_xlabel("votes per item (k)")
    ax1.set_ylabel("distance to the full data")
    ax1.legend(fontsize=8)
    ax2.plot(frame.k, frame.majority_agreement, marker="o")
    ax2.set_xscale("log")
    ax2.set_xlabel("votes per item (k)")
    ax2.set_ylabel("k-vote majority = full majority")
    for ax in (ax1, ax2):
        ax.set_xticks(frame.k.tolist())
        ax.set_xticklabels([str(int(k)) for k in frame.k])
        ax.minorticks_off()
    fig.suptitle(f"{curve.n_items} items, {curve.reps} repetitions per k", fontsize=10)
    fig.tight_layout()
    out = Path(target)
    suffix = out.suffix.lower().lstrip(".") or "png"
    if suffix not in ("png", "svg", "pdf"):
        plt.close(fig)
        raise AnnokitError(f"--plot {target}: unsupported image type {suffix!r}; "
                           "use .png, .svg or .pdf")
    directory = out.parent if str(out.parent) else Path(".")
    if not directory.is_dir():
        plt.close(fig)
        raise AnnokitError(f"--plot {target}: directory {directory} does not exist")
    try:
        with atomic_path(out, suffix=f".{suffix}") as tmp:
            fig.savefig(tmp, format=suffix, dpi=120)
    finally:
        plt.close(fig)
