"""``annokit annotators``, ``annokit filter`` and ``annokit aggregate``: annotator quality."""

from __future__ import annotations

from pathlib import Path

import click

from annokit.cli._common import FORMAT_OPTION, echo_json
from annokit.errors import DataFormatError
from annokit.io.atomic import atomic_path

_SCORE_METHODS = ["agreement", "ds", "onecoin", "mace", "gold", "entropy"]
_AGG_METHODS = ["mv", "wmv", "ds", "onecoin", "mace"]

_VOTES = click.option("--votes", "votes_path", required=True, type=click.Path(dir_okay=False),
                      help="Votes file (long/wide CSV, TSV, JSONL, Parquet; ChaosNLI .jsonl).")
_GOLD = click.option("--gold", "gold_path", type=click.Path(exists=True, dir_okay=False),
                     help="Gold file with an item column and a gold column (e.g. question,truth); "
                          "a gold column in the votes file is used without it.")
_SEED = click.option("--seed", type=int, default=0, show_default=True,
                     help="Seed of MACE's random restarts.")


def _read(votes_path: str, fmt: str, gold_path: str | None):
    from annokit.io import read_votes

    return read_votes(votes_path, format=fmt, gold=gold_path)


def _write_table(df, path: str) -> Path:
    """Write a DataFrame as CSV/TSV/Parquet by extension, atomically (temp file + os.replace)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".tsv", ".parquet"):
        raise DataFormatError(f"{path.name}: cannot write {suffix!r}; use .csv, .tsv or .parquet")
    with atomic_path(path) as tmp:
        if suffix == ".parquet":
            df.to_parquet(tmp, index=False)
        else:
            df.to_csv(tmp, index=False, sep="," if suffix == ".csv" else "\t")
    return path


def _check_out(path: str | None) -> None:
    if path is None:
        return
    if Path(path).suffix.lower() not in (".csv", ".tsv", ".parquet"):
        raise DataFormatError(f"{Path(path).name}: cannot write {Path(path).suffix!r}; "
                              "use .csv, .tsv or .parquet")


@click.command(name="annotators")
@_VOTES
@_GOLD
@FORMAT_OPTION
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
    from annokit.quality import DEFAULT_THRESHOLDS
    from annokit.quality._common import require_annotators
    from annokit.quality.filter import _flag, _require_gold

    votes = require_annotators(_read(votes_path, fmt, gold_path), "annokit annotators")
    thr = DEFAULT_THRESHOLDS[method] if threshold is None else threshold
    gold = _require_gold(votes, method)
    flagged, scores, reasons, _ = _flag(votes, method, thr, None, gold,
                                        4 if method == "gold" else None, seed)
    n_votes = votes.votes_per_annotator()
    rows = [{"annotator": str(a), "n_votes": int(n), "score": float(s), "flagged": bool(f),
             "reason": r or None}
            for a, n, s, f, r in zip(votes.annotator_ids, n_votes, scores, flagged, reasons)]
    if as_json:
        echo_json({"method": method, "threshold": thr, "n_annotators": len(rows),
                   "n_flagged": int(flagged.sum()), "annotators": rows})
        return
    click.echo(f"{'annotator':<24} {'n_votes':>7} {'score':>8}  flagged")
    for row in sorted(rows, key=lambda r: (r["score"] != r["score"], r["score"])):
        score = "nan" if row["score"] != row["score"] else f"{row['score']:.3f}"
        mark = f"*  {row['reason']}" if row["flagged"] else ""
        click.echo(f"{row['annotator']:<24} {row['n_votes']:>7} {score:>8}  {mark}")
    click.echo(f"{int(flagged.sum())} of {len(rows)} annotators flagged "
               f"(method {method}, threshold {thr:g})")


@click.command(name="filter")
@_VOTES
@_GOLD
@FORMAT_OPTION
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

    if Path(out_path).suffix.lower() not in (".csv", ".tsv", ".jsonl", ".ndjson", ".parquet"):
        raise DataFormatError(f"{Path(out_path).name}: cannot write {Path(out_path).suffix!r}; "
                              "use .csv, .tsv, .jsonl or .parquet")
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
@click.option("--method", type=click.Choice(_AGG_METHODS), default="mv", show_default=True,
              help="Majority vote (first-seen ties), weighted MV, Dawid-Skene, one-coin DS, MACE.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False),
              help="Write one row per item (.csv, .tsv or .parquet), atomically; default stdout.")
@click.option("--soft", is_flag=True, help="Add the posterior of every label (p_<label> columns).")
@click.option("--clamp-gold", is_flag=True,
              help="Fix gold items to their gold label while fitting (ds, onecoin, mace).")
@_SEED
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON summary instead of the labels (accuracy against gold).")
def aggregate(votes_path: str, gold_path: str | None, fmt: str, method: str,
              out_path: str | None, soft: bool, clamp_gold: bool, seed: int,
              as_json: bool) -> None:
    """One label (or, with --soft, a posterior) per item from the votes."""
    import numpy as np
    import pandas as pd

    from annokit.quality import make_aggregator

    _check_out(out_path)
    votes = _read(votes_path, fmt, gold_path)
    est = make_aggregator(method, rng=seed, clamp_gold=clamp_gold).fit(votes)
    names = np.asarray(votes.labels.names, dtype=object)
    table = pd.DataFrame({"item": votes.item_ids.astype(str), "label": names[est.labels_]})
    if hasattr(est, "is_tied_"):
        table["tied"] = est.is_tied_
    if soft:
        for k, name in enumerate(votes.labels.names):
            table[f"p_{name}"] = est.posteriors_[:, k]
    if out_path is not None:
        _write_table(table, out_path)
    gold = votes.gold if votes.gold is not None else np.full(votes.n_items, -1)
    known = gold >= 0
    accuracy = float((est.labels_[known] == gold[known]).mean()) if known.any() else None
    if as_json:
        echo_json({"method": method, "n_items": votes.n_items, "n_gold": int(known.sum()),
                   "accuracy": accuracy, "iterations": int(est.n_iter_),
                   "converged": bool(est.converged_),
                   "n_ties": int(est.n_ties_) if hasattr(est, "n_ties_") else None})
    elif out_path is None:
        click.echo(table.to_csv(index=False), nl=False)
    else:
        acc = "n/a (no gold)" if accuracy is None else f"{accuracy:.4f} on {int(known.sum())} gold items"
        click.echo(f"{method}: {votes.n_items} items, accuracy {acc}, {est.n_iter_} iteration(s), "
                   f"converged {est.converged_}; wrote {out_path}")
