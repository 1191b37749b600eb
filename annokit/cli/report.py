"""``annokit report``: the agreement-binned analysis report (HTML, Markdown, JSON)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from annokit.cli._common import FORMAT_OPTION
from annokit.errors import AnnokitError, VoteSchemaError


def _split_spec(spec: str, option: str) -> tuple[str, str]:
    name, sep, value = spec.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise VoteSchemaError(f"{option} expects NAME=VALUE; got {spec!r}")
    return name.strip(), value.strip()


def _paths(value: str) -> list[str]:
    return [p.strip() for p in value.split(",") if p.strip()]


class _Progress:
    """A click progress bar on stderr, advanced once per stage."""

    def __init__(self, length: int, enabled: bool):
        self.bar = click.progressbar(length=length, label="annokit report", file=sys.stderr,
                                     show_pos=True, item_show_func=lambda s: s) if enabled else None

    def __enter__(self):
        if self.bar is not None:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def __call__(self, stage: str) -> None:
        if self.bar is not None:
            self.bar.update(1, stage)


def load_models(votes, model_specs, *, pred_labels, id_field, on_missing, temperatures,
                fit_temperature_on, progress=lambda _s: None):
    """Read and align every ``--model NAME=PATH[,PATH]``; add temperature-scaled copies.

    Returns ``(votes, [ModelPredictions], notes)``; votes are restricted to the items every
    model predicts when ``on_missing == "drop"``.
    """
    import warnings

    import numpy as np

    from annokit.errors import DegenerateInputWarning
    from annokit.metrics.records import align, read_predictions
    from annokit.metrics.temperature import temperature_scale
    from annokit.report.build import ModelPredictions

    specs = [_split_spec(s, "--model") for s in model_specs]
    names = [n for n, _ in specs]
    if len(set(names)) != len(names):
        raise VoteSchemaError(f"--model names must be unique; got {names}")
    notes: list[str] = []
    preds = {}
    for name, value in specs:
        paths = _paths(value)
        preds[name] = (read_predictions(paths, id_field=id_field), [Path(p).name for p in paths])
        progress(f"read {name}")
    if on_missing == "drop":
        keep = np.ones(votes.n_items, dtype=bool)
        for name, (p, _) in preds.items():
            keep &= np.isin(votes.item_ids, np.asarray(p.item_ids, dtype=object))
        if not keep.all():
            dropped = votes.item_ids[~keep]
            msg = (f"{dropped.size} of {votes.n_items} vote items have no prediction from at "
                   f"least one model and are left out, e.g. {list(dropped[:5])}")
            warnings.warn(msg, DegenerateInputWarning, stacklevel=2)
            notes.append(msg)
            votes = votes.select_items(keep)
    records = {}
    out = []
    for name, (p, sources) in preds.items():
        rec = align(votes, p, pred_labels=pred_labels, on_missing="error")
        records[name] = rec
        if rec.n_unmatched_predictions:
            notes.append(f"model {name}: {rec.n_unmatched_predictions} prediction rows for items "
                         "not in the votes were ignored")
        out.append(ModelPredictions(name=name, probs=rec.probs, sources=sources))
    for spec in temperatures:
        name, value = _split_spec(spec, "--temperature")
        if name not in records:
            raise VoteSchemaError(f"--temperature {spec!r}: no --model named {name!r}; models are "
                                  f"{names}")
        try:
            t = float(value)
        except ValueError:
            raise VoteSchemaError(f"--temperature {spec!r}: {value!r} is not a number") from None
        scaled, _info = temperature_scale(records[name], temperature=t)
        out.append(ModelPredictions(name=f"{name} T={t:g}", probs=scaled.probs,
                                    sources=next(m.sources for m in out if m.name == name),
                                    temperature=t, temperature_note="fixed temperature"))
    for spec in fit_temperature_on:
        if "=" in spec:
            name, value = _split_spec(spec, "--fit-temperature-on")
        elif len(names) == 1:
            name, value = names[0], spec
        else:
            raise VoteSchemaError(f"--fit-temperature-on {spec!r}: with several models write "
                                  "NAME=PATH[,PATH] to say whose temperature to fit")
        if name not in records:
            raise VoteSchemaError(f"--fit-temperature-on {spec!r}: no --model named {name!r}; "
                                  f"models are {names}")
        paths = _paths(value)
        dev = align(votes, read_predictions(paths, id_field=id_field), pred_labels=pred_labels,
                    on_missing="drop")
        scaled, info = temperature_scale(records[name], fit_on=dev)
        note = (f"T fitted on {', '.join(Path(p).name for p in paths)} ({info['n_fit_items']} "
                f"items with votes, objective {info['objective']}); {info['n_overlap_items']} of "
                "them are also evaluated")
        notes.append(f"model {name} TS: {note}")
        out.append(ModelPredictions(name=f"{name} TS", probs=scaled.probs,
                                    sources=[Path(p).name for p in paths],
                                    temperature=info["value"], temperature_note=note))
    return votes, out, notes


def subsampling_rows(votes, ks, *, reps: int, seed: int, notes: list[str]) -> list[dict]:
    """``--subsample K,K,...`` parsed and computed (see :func:`annokit.report.build.subsampling_rows`)."""
    from annokit.report.build import subsampling_rows as rows

    if isinstance(ks, str):
        try:
            ks = [int(k) for k in ks.split(",") if k.strip()]
        except ValueError:
            raise VoteSchemaError(f"--subsample must be comma-separated integers; got {ks!r}") \
                from None
    return rows(votes, ks, reps=reps, rng=seed, notes=notes)


@click.command(name="report")
@click.option("--votes", "votes_path", required=True, type=click.Path(dir_okay=False),
              help="Votes file (any format `annokit stats` reads) or a registered dataset name.")
@FORMAT_OPTION
@click.option("--model", "models", multiple=True, required=True, metavar="NAME=PATH[,PATH]",
              help="A model's predictions; several files (dev + test halves) are concatenated. "
                   "Repeat for more models.")
@click.option("--pred-labels", default=None, metavar="NAME,NAME,...",
              help="Class order of the prediction columns, by label name or alias (e.g. e,c,n).")
@click.option("--id-field", default=None, help="Item id field of the predictions "
                                               "(default: item, id or uid).")
@click.option("--on-missing", type=click.Choice(["error", "drop"]), default="error",
              show_default=True, help="Vote items without a prediction: fail, or leave them out "
                                      "(reported).")
@click.option("--bins", default="5", show_default=True, metavar="N|E0,E1,...",
              help="Agreement bins: N equal-count human-entropy quantile bins, or edges in bits.")
@click.option("--temperature", "temperatures", multiple=True, metavar="NAME=T",
              help="Add a copy of model NAME scaled with temperature T (named 'NAME T=T').")
@click.option("--fit-temperature-on", "fit_temperature_on", multiple=True,
              metavar="[NAME=]PATH[,PATH]",
              help="Add model 'NAME TS' with a temperature fitted (NLL of the majority) on these "
                   "prediction files' items that have votes.")
@click.option("--bootstrap", "n_bootstrap", type=click.IntRange(min=0), default=1000,
              show_default=True, help="Bootstrap resamples of items (0: no intervals).")
@click.option("--n-bins", "n_ece_bins", type=click.IntRange(min=1), default=10, show_default=True,
              help="Equal-width confidence bins of ECE, SMECE and the reliability diagrams.")
@click.option("--no-ceiling", is_flag=True, help="Skip the split-half human ceiling.")
@click.option("--subsample", "subsample_ks", default=None, metavar="K,K,...",
              help="Also compute the 'how many annotations' curve for these k "
                   "(annokit subsample; items with fewer than k votes are skipped at that k).")
@click.option("--subsample-reps", type=click.IntRange(min=1), default=200, show_default=True,
              help="Repetitions of the subsampling curve.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the bootstrap and the ceiling split.")
@click.option("--title", default=None, help="Page title.")
@click.option("--png", is_flag=True, help="Also write every figure as PNG.")
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="Output directory (created, or replaced if it holds an earlier report).")
@click.option("--json", "as_json", is_flag=True, help="Also print report.json on stdout.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def report(votes_path, fmt, models, pred_labels, id_field, on_missing, bins, temperatures,
           fit_temperature_on, n_bootstrap, n_ece_bins, no_ceiling, subsample_ks, subsample_reps,
           seed, title, png, out, as_json, quiet):
    """Write the agreement-binned analysis report of one or more models to --out:
    report.html (self-contained page), report.md, report.json (versioned schema)
    and figures/.

    Items are grouped by the entropy of their human label distribution; for each
    bin and each model: accuracy against the majority, ECE, SMECE, DistCE,
    |EntCE|, Jensen-Shannon distance, KL and RankCS, next to a split-half human
    ceiling, plus pairwise model differences with paired-bootstrap intervals.
    """
    from annokit.io import read_votes
    from annokit.report import build_report, dump_json, write_report

    try:
        bin_spec = int(bins)
    except ValueError:
        try:
            bin_spec = [float(x) for x in bins.split(",")]
        except ValueError:
            raise VoteSchemaError(f"--bins must be an integer or comma-separated edges; "
                                  f"got {bins!r}") from None
    n_models = len(models) + len(temperatures) + len(fit_temperature_on)
    notes: list[str] = []
    with _Progress(length=3 + len(models) + n_models + 4, enabled=not quiet) as progress:
        votes = read_votes(votes_path, format=fmt)
        progress("votes")
        votes, preds, model_notes = load_models(
            votes, models, pred_labels=pred_labels, id_field=id_field, on_missing=on_missing,
            temperatures=temperatures, fit_temperature_on=fit_temperature_on, progress=progress)
        curve = None
        if subsample_ks:
            curve = subsampling_rows(votes, subsample_ks, reps=subsample_reps, seed=seed,
                                     notes=notes)
        rep = build_report(votes, preds, bins=bin_spec, n_bootstrap=n_bootstrap,
                           n_ece_bins=n_ece_bins, ceiling=not no_ceiling, rng=seed,
                           subsampling=curve,
                           title=title or f"annokit report: {Path(votes_path).name}",
                           progress=progress)
        rep.notes = model_notes + notes + rep.notes
        path = write_report(rep, out, png=png)
        progress("written")
    if as_json:
        click.echo(dump_json(rep), nl=False)
    click.echo(f"report written to {path.resolve() / 'report.html'} (also report.md, report.json, "
               "figures/)", err=as_json)


__all__ = ["AnnokitError", "load_models", "report", "subsampling_rows"]
