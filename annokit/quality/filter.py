"""Audited annotator filtering: scores, thresholds, ChaosNLI's gold rule.

:func:`filter_annotators` scores every annotator with one method, removes the flagged
annotators' votes, and returns the filtered votes with an :class:`Audit` that lists every
removed annotator (score, threshold, reason, round), the votes and items affected, items left
with too few votes and the total variation distance each item's soft label moved. Nothing
leaves the votes without appearing in the audit.

Threshold rules are applied until a fixed point: after removing the flagged annotators the
remaining ones are scored again (their scores depend on the others' votes), until a round flags
nobody. Hence filtering the output again with the same rule changes nothing.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.annotator_agreement import alpha_influence
from annokit.core.checks import check_open_unit, check_option, seed_or_rng
from annokit.core.divergence import tvd
from annokit.core.gold import GOLD_UNKNOWN, GoldAccuracy, gold_accuracy
from annokit.core.jsonable import finite_or_none, jsonable
from annokit.core.soft_labels import break_ties
from annokit.core.votes import Votes
from annokit.errors import AnnokitWarning, DegenerateInputWarning, InvalidValueError, SchemaError
from annokit.io import votes_table
from annokit.io.atomic import atomic_paths, check_table_path, dump_table, write_text_atomic
from annokit.quality.common import (
    check_positive_int,
    gold_codes,
    require_annotators,
    with_influence,
    withhold_verdicts,
)
from annokit.quality.dawid_skene import DawidSkene, OneCoinDawidSkene
from annokit.quality.mace import MACE
from annokit.quality.spammer import spammer_score
from annokit.quality.stats import annotator_stats

__all__ = [
    "CHAOSNLI_MAX_WRONG_RUN",
    "CHAOSNLI_MIN_GOLD_ACCURACY",
    "DEFAULT_THRESHOLDS",
    "METHODS",
    "AnnotatorFlags",
    "Audit",
    "annotator_scores",
    "filter_annotators",
    "flag_annotators",
    "write_filtered",
]

#: ChaosNLI (Nie et al. 2020, section 3): annotators below 75% accuracy on the
#: unanimous gold control items, or with 4 consecutive wrong answers, were blocked.
CHAOSNLI_MIN_GOLD_ACCURACY = 0.75
CHAOSNLI_MAX_WRONG_RUN = 4

METHODS = ("ds", "onecoin", "mace", "agreement", "gold", "entropy")

#: Score below the threshold -> flagged. Scores: ds = Raykar-Yu spammer score of the Dawid-Skene
#: confusion matrices (0 spammer .. 1 perfect); onecoin = one-coin skill minus chance
#: (1/n_labels), rescaled to [0, 1]; mace = MACE competence; agreement = mean share of
#: co-annotators agreeing, minus chance, rescaled; gold = accuracy on gold items; entropy =
#: normalised label-usage entropy. The defaults were chosen from the injected-spammer study
#: (recipes/spammer_study.py) on RTE, dog, bluebirds and face: each is the value where
#: uniform-random spammers with 20+ votes are caught with high recall while annotators
#: significantly better than chance are rarely removed.
DEFAULT_THRESHOLDS = {"ds": 0.15, "onecoin": 0.25, "mace": 0.3, "agreement": 0.1,
                      "gold": CHAOSNLI_MIN_GOLD_ACCURACY, "entropy": 0.1}


def chance_rescale(x: np.ndarray, n_labels: int) -> np.ndarray:
    """Scores rescaled so that chance agreement (``1 / n_labels``) is 0 and perfect is 1."""
    chance = 1.0 / n_labels
    return (x - chance) / (1.0 - chance)


def annotator_scores(votes: Votes, method: str, *, gold: Any = None,
                     rng: np.random.Generator | int | None = 0) -> np.ndarray:
    """Quality score per annotator (higher is better); NaN for annotators without evidence.

    Parameters
    ----------
    votes : Votes
        With annotator ids.
    method : {"ds", "onecoin", "mace", "agreement", "gold", "entropy"}
        See :data:`DEFAULT_THRESHOLDS` for what each score means.
    gold : array-like of shape (n_items,), optional
        Gold codes for ``method="gold"`` (default ``votes.gold``).
    rng : numpy Generator, int or None, default=0
        Seeds MACE's restarts (fixed by default so that scores are reproducible).

    Returns
    -------
    ndarray of shape (n_annotators,)

    Examples
    --------
    >>> df = pd.DataFrame({"item": list("aaabbbcccddd"), "annotator": list("xyz" * 4),
    ...                    "label": list("110001111000")})
    >>> annotator_scores(Votes.from_long(df), "agreement").round(2).tolist()
    [0.5, 0.5, 0.0]
    """
    votes = require_annotators(votes, f"annotator_scores(method={method!r})")
    check_option("method", method, METHODS)
    active = votes.votes_per_annotator() > 0
    if method == "ds":
        scores = spammer_score(DawidSkene().fit(votes).confusions_)
    elif method == "onecoin":
        scores = chance_rescale(OneCoinDawidSkene().fit(votes).skills_, votes.n_labels)
    elif method == "mace":
        scores = MACE(rng=rng).fit(votes).competence_
    else:
        stats = annotator_stats(votes, gold=gold, alpha=False)
        if method == "agreement":
            scores = chance_rescale(stats["agreement"].to_numpy(), votes.n_labels)
        elif method == "entropy":
            scores = stats["label_entropy"].to_numpy()
        else:
            scores = stats["gold_accuracy"].to_numpy()
    return np.where(active, scores, np.nan)


#: Fewest votes for a verdict of :func:`flag_annotators` (``--min-annotator-votes``).
MIN_VERDICT_VOTES = 5


@dataclass(frozen=True)
class AnnotatorFlags:
    """Every annotator's score and whether a filter would remove them (``annokit annotators``).

    Attributes
    ----------
    method : str
    threshold : float
    table : DataFrame
        One row per annotator: ``annotator``, ``n_votes``, ``score`` (NaN without evidence),
        ``flagged``, ``reason`` (None when not flagged), ``alpha_without`` (Krippendorff's alpha
        at the labels' level without the annotator; NaN when undefined) and ``alpha_change``
        (its difference from alpha with everyone).
    gold : GoldAccuracy or None
        Under ``method="gold"``: the gold items scored (``n_items``) and those whose gold label
        is not among the votes' labels (``n_unknown``, never right or wrong).
    """

    method: str
    threshold: float
    table: pd.DataFrame
    gold: GoldAccuracy | None = None
    min_votes: int = 1

    @property
    def n_flagged(self) -> int:
        return int(self.table["flagged"].sum())

    def with_min_votes(self, min_votes: int) -> AnnotatorFlags:
        """These flags with no verdict for annotators with fewer than ``min_votes`` votes
        (:func:`annokit.quality.common.withhold_verdicts`)."""
        return AnnotatorFlags(self.method, self.threshold,
                              withhold_verdicts(self.table, min_votes), self.gold, min_votes)

    def to_frame(self) -> pd.DataFrame:
        """The scores, one row per annotator indexed by annotator id: ``n_votes``, ``score``,
        ``flagged``, ``reason`` (a copy of ``table``).

        Examples
        --------
        >>> df = pd.DataFrame({"item": list("aaabbbcccddd"), "annotator": list("xyz" * 4),
        ...                    "label": list("110001111000")})
        >>> flags = flag_annotators(Votes.from_long(df), "agreement", threshold=0.25,
        ...                         min_votes=1)
        >>> flags.to_frame().sort_values("score")[["score", "flagged"]].round(3)
                   score  flagged
        annotator
        z            0.0     True
        x            0.5    False
        y            0.5    False
        """
        return self.table.set_index("annotator")

    def __repr__(self) -> str:
        return (f"AnnotatorFlags(method={self.method!r}, threshold={self.threshold:g}, "
                f"n_annotators={len(self.table)}, n_flagged={self.n_flagged})")

    def to_dict(self) -> dict[str, Any]:
        """The ``annokit annotators --json`` object (NaN scores as null)."""
        out = {"method": self.method, "threshold": finite_or_none(self.threshold),
               "n_annotators": len(self.table), "n_flagged": self.n_flagged,
               "min_votes": self.min_votes,
               "n_too_few_votes": int((self.table["n_votes"] < self.min_votes).sum()),
               "annotators": jsonable(self.table.to_dict(orient="records"))}
        if self.gold is not None:
            out["gold"] = {"n_items": self.gold.n_items, "n_unknown_label": self.gold.n_unknown}
        return out


def flag_annotators(votes: Votes, method: str = "agreement", *, threshold: float | None = None,
                    gold: Any = None, rng: np.random.Generator | int | None = 0,
                    seed: int | None = None,
                    min_votes: int = MIN_VERDICT_VOTES) -> AnnotatorFlags:
    """Score every annotator and mark those the first round of :func:`filter_annotators` removes
    among those with at least ``min_votes`` votes (all of them with ``min_votes=1``).

    Parameters
    ----------
    votes : Votes
        With annotator ids.
    method : {"ds", "onecoin", "mace", "agreement", "gold", "entropy"}, default="agreement"
    threshold : float, optional
        Flag annotators scoring below it; default ``DEFAULT_THRESHOLDS[method]``.
        Under ``method="gold"`` also 4 or more consecutive wrong gold answers flag.
    gold : array-like of shape (n_items,), optional
        Gold codes (-1 = none); default ``votes.gold``.
    rng : numpy Generator, int or None, default=0
        Seeds MACE.
    min_votes : int, default=MIN_VERDICT_VOTES (5)
        Fewest votes for a verdict: an annotator with fewer is scored but never flagged
        (``reason`` "too few votes"; CLI ``--min-annotator-votes``).
    seed : int, optional
        The same as ``rng=`` an int (the name ``evaluate`` uses); give one of the two.

    Returns
    -------
    AnnotatorFlags

    Raises
    ------
    SchemaError
        The votes carry no annotator ids, or ``method="gold"`` without any gold label.

    Examples
    --------
    >>> df = pd.DataFrame({"item": list("aaabbbcccddd"), "annotator": list("xyz" * 4),
    ...                    "label": list("110001111000")})
    >>> flags = flag_annotators(Votes.from_long(df), "agreement", threshold=0.25,
    ...                         min_votes=1)
    >>> flags.table[["annotator", "flagged"]].values.tolist(), flags.n_flagged
    ([['x', False], ['y', False], ['z', True]], 1)
    """
    rng = seed_or_rng(seed, rng, "flag_annotators", default=0)
    votes = require_annotators(votes, "annotator scoring")
    _, annotator_ids = votes.annotator_codes("annotator scoring")
    check_option("method", method, METHODS)
    thr = DEFAULT_THRESHOLDS[method] if threshold is None else threshold
    g = _require_gold(votes, method, gold)
    flagged, scores, reasons, _ = _flag(votes, method, thr, None, g,
                                        CHAOSNLI_MAX_WRONG_RUN if method == "gold" else None, rng)
    table = pd.DataFrame({
        "annotator": annotator_ids.astype(str),
        "n_votes": votes.votes_per_annotator().astype(np.int64),
        "score": scores.astype(np.float64),
        "flagged": flagged,
        "reason": [r or None for r in reasons],
    })
    return AnnotatorFlags(method=method, threshold=float(thr), table=with_influence(
        table, alpha_influence(votes)),
                          gold=gold_accuracy(g, g) if method == "gold" else None
                          ).with_min_votes(min_votes)


@dataclass
class Audit:
    """What a filter removed, and why.

    Attributes
    ----------
    method : str
    threshold : float
        The threshold applied (derived from the scores under ``top_fraction``).
    top_fraction : float or None
    rounds : int
        Scoring rounds run; the last one flags nobody (a fixed point), except under
        ``top_fraction`` (one round) or when ``max_rounds`` was reached.
    annotators : DataFrame
        One row per removed annotator: ``annotator``, ``n_votes``, ``score``, ``threshold``,
        ``reason``, ``round``.
    items : DataFrame
        One row per item of the input: ``item``, ``n_votes_before``, ``n_votes_after``,
        ``removed`` (no vote left), ``too_few_votes`` (kept but below ``min_votes``), ``tvd``
        (total variation distance between the vote distributions before and after; NaN for
        removed items), ``majority_changed``.
    n_votes_before, n_votes_after, n_annotators_before, n_annotators_after : int
    min_votes : int
    """

    method: str
    threshold: float
    top_fraction: float | None
    rounds: int
    annotators: pd.DataFrame
    items: pd.DataFrame
    n_votes_before: int
    n_votes_after: int
    n_annotators_before: int
    n_annotators_after: int
    min_votes: int
    notes: list[str] = field(default_factory=list)

    @property
    def n_votes_removed(self) -> int:
        return self.n_votes_before - self.n_votes_after

    @property
    def removed_annotators(self) -> list[str]:
        return self.annotators["annotator"].astype(str).tolist()

    @property
    def items_affected(self) -> list[str]:
        it = self.items
        return it.loc[it.n_votes_after < it.n_votes_before, "item"].astype(str).tolist()

    @property
    def items_removed(self) -> list[str]:
        return self.items.loc[self.items.removed, "item"].astype(str).tolist()

    @property
    def items_too_few_votes(self) -> list[str]:
        return self.items.loc[self.items.too_few_votes, "item"].astype(str).tolist()

    def summary(self) -> dict[str, Any]:
        """The headline numbers as a JSON-ready dict."""
        moved = self.items.tvd.to_numpy(dtype=float)
        moved = moved[np.isfinite(moved)]
        return {
            "method": self.method,
            "threshold": finite_or_none(self.threshold),
            "top_fraction": self.top_fraction,
            "rounds": self.rounds,
            "n_annotators_before": self.n_annotators_before,
            "n_annotators_removed": len(self.annotators),
            "n_annotators_after": self.n_annotators_after,
            "n_votes_before": self.n_votes_before,
            "n_votes_removed": self.n_votes_removed,
            "n_votes_after": self.n_votes_after,
            "n_items_before": len(self.items),
            "n_items_affected": len(self.items_affected),
            "n_items_removed": len(self.items_removed),
            "n_items_too_few_votes": len(self.items_too_few_votes),
            "min_votes": self.min_votes,
            "n_majority_changed": int(self.items.majority_changed.sum()),
            "tvd_mean": finite_or_none(moved.mean()) if moved.size else None,
            "tvd_max": finite_or_none(moved.max()) if moved.size else None,
        }

    def to_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready: the summary, removed annotators, and per-item rows."""
        out = self.summary()
        out["annotators"] = jsonable(self.annotators.to_dict(orient="records"))
        out["items_removed"] = self.items_removed
        out["items_too_few_votes"] = self.items_too_few_votes
        out["items"] = jsonable(self.items[self.items.n_votes_after
                                           < self.items.n_votes_before].to_dict(orient="records"))
        out["notes"] = list(self.notes)
        return out

    def to_json(self) -> str:
        """:meth:`to_dict` as indented strict JSON text (NaN and infinities are None)."""
        return json.dumps(jsonable(self.to_dict()), indent=2, allow_nan=False) + "\n"

    def write_json(self, path: str | os.PathLike) -> Path:
        """Write :meth:`to_dict` as JSON, atomically (temporary file + ``os.replace``)."""
        return write_text_atomic(path, self.to_json())

def write_filtered(votes: Votes, audit: Audit, out: str | os.PathLike,
                   audit_path: str | os.PathLike, *, format: str | None = None
                   ) -> tuple[Path, Path]:
    """Write filtered votes and their audit together: both files or neither.

    ``format`` (csv, tsv, jsonl or parquet; the CLI's ``--out-format``): the votes' format
    whatever ``out``'s extension (default: the one it names).

    Both are rendered first and renamed into place last (see
    :func:`annokit.io.atomic.atomic_paths`), so a failure (an unwritable audit
    path, a full disk) leaves both earlier files as they were.

    Raises
    ------
    DataFormatError
        ``out`` has no table extension.
    OutputError
        Either file cannot be written.
    """
    out, audit_path = check_table_path(out, format=format), Path(audit_path)
    text = audit.to_json()
    table = votes_table(votes)
    with atomic_paths([out, audit_path]) as (tmp_votes, tmp_audit):
        dump_table(table, tmp_votes, format=format)
        tmp_audit.write_text(text, encoding="utf-8")
    return out, audit_path


def filter_annotators(votes: Votes, *, method: str, threshold: float | None = None,
                      top_fraction: float | None = None, gold: Any = None, min_votes: int = 2,
                      max_wrong_run: int | None = None, max_rounds: int = 20,
                      rng: np.random.Generator | int | None = 0,
                      seed: int | None = None) -> tuple[Votes, Audit]:
    """Remove low-quality annotators and report exactly what was removed.

    Parameters
    ----------
    votes : Votes
        With annotator ids.
    method : {"ds", "onecoin", "mace", "agreement", "gold", "entropy"}
        The score (see :func:`annotator_scores`). ``"gold"`` is ChaosNLI's rule: accuracy on
        gold items below ``threshold`` (default 0.75) or at least ``max_wrong_run`` (default 4)
        consecutive wrong gold answers in vote order.
    threshold : float, optional
        Annotators scoring below it are removed. Default ``DEFAULT_THRESHOLDS[method]`` unless
        ``top_fraction`` is given.
    top_fraction : float in (0, 1), optional
        Instead of a threshold, remove this fraction of the annotators with votes, lowest
        scores first (rounded up; one round only). Re-applying a fraction removes more; for an
        idempotent rule re-use ``audit.threshold``.
    gold : array-like of shape (n_items,), optional
        Gold codes (-1 = none); default ``votes.gold``.
    min_votes : int, default=2
        Items left with fewer votes are listed as ``too_few_votes`` in the audit.
    max_wrong_run : int, optional
        Gold rule only; default 4 (ChaosNLI).
    max_rounds : int, default=20
        Bound on the fixed-point iteration of threshold rules.
    rng, seed : numpy Generator, int or None, default=0; int, optional
        Seeds MACE (fixed by default: the filter is reproducible); ``seed`` is the same as
        ``rng=`` an int (the name ``evaluate`` uses); give one of the two.

    Returns
    -------
    filtered : Votes
        The votes of the kept annotators (vote order preserved); items left with no vote are
        removed (and listed in the audit).
    audit : Audit

    Raises
    ------
    SchemaError
        No annotator ids, or the gold rule without gold labels.
    InvalidValueError
        An unknown method, both threshold and top_fraction, a threshold that is not finite or
        would remove every annotator.

    Examples
    --------
    >>> df = pd.DataFrame({"item": list("aaabbbcccddd"), "annotator": list("xyz" * 4),
    ...                    "label": list("110001111000"), "gold": list("111000111000")})
    >>> votes = Votes.from_long(df, gold="gold")
    >>> kept, audit = filter_annotators(votes, method="gold")
    >>> audit.removed_annotators, audit.n_votes_removed
    (['z'], 4)
    """
    rng = seed_or_rng(seed, rng, "filter_annotators", default=0)
    votes = require_annotators(votes, "filter_annotators")
    threshold, max_wrong_run, g = _checked(votes, method, threshold, top_fraction, min_votes,
                                           max_rounds, max_wrong_run, gold)
    run = _Rounds(votes, method, top_fraction, g, max_wrong_run, rng)
    threshold, converged = run.run(threshold, max_rounds)
    run.notes += [] if converged else [warn_unconverged(max_rounds)]
    audit = _build_audit(votes, run.current, run.keep_vote, method, threshold, top_fraction,
                         run.n_rounds, run.rows, min_votes, run.notes)
    too_few = int(audit.items.too_few_votes.sum())
    if too_few:
        warnings.warn(f"{too_few} item(s) have fewer than {min_votes} votes after filtering; "
                      "see audit.items_too_few_votes", DegenerateInputWarning, stacklevel=2)
    return run.current.compact_annotators(), audit


def _checked(votes: Votes, method: str, threshold: float | None, top_fraction: float | None,
             min_votes: int, max_rounds: int, max_wrong_run: int | None,
             gold: Any) -> tuple[float | None, int | None, np.ndarray]:
    """:func:`filter_annotators`' options checked: the threshold (the method's default unless
    a fraction is given), the gold rule's longest run of wrong answers, and the gold codes."""
    votes.annotator_codes("filter_annotators")
    check_option("method", method, METHODS)
    check_positive_int("min_votes", min_votes)
    check_positive_int("max_rounds", max_rounds)
    if threshold is not None and top_fraction is not None:
        raise InvalidValueError("give either threshold or top_fraction, not both")
    if top_fraction is not None:
        check_open_unit("top_fraction", top_fraction)
    elif threshold is None:
        threshold = DEFAULT_THRESHOLDS[method]
    if threshold is not None and not (isinstance(threshold, (int, float))
                                      and math.isfinite(threshold)):
        would = (" (it would remove every annotator: every score is below it)"
                 if threshold == math.inf else "")
        raise InvalidValueError(f"threshold must be a finite number; got {threshold!r}{would} "
                                "(CLI: --threshold)")
    g = _require_gold(votes, method, gold)
    if method == "gold":
        max_wrong_run = CHAOSNLI_MAX_WRONG_RUN if max_wrong_run is None else max_wrong_run
        check_positive_int("max_wrong_run", max_wrong_run)
    elif max_wrong_run is not None:
        raise InvalidValueError("max_wrong_run applies only to method='gold'")
    return threshold, max_wrong_run, g


class _Rounds:
    """The filter's rounds: score the annotators still in, remove those flagged, until none is
    flagged (a threshold's fixed point) or after one round (a fraction)."""

    def __init__(self, votes: Votes, method: str, top_fraction: float | None, gold: np.ndarray,
                 max_wrong_run: int | None, rng: Any) -> None:
        self.votes, self.method, self.top_fraction = votes, method, top_fraction
        self.gold, self.max_wrong_run, self.rng = gold, max_wrong_run, rng
        self.annotators, self.annotator_ids = votes.annotator_codes("filter_annotators")
        self.keep_vote = np.ones(votes.n_votes, dtype=bool)
        self.removed = np.zeros(len(self.annotator_ids), dtype=bool)
        self.rows: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.n_rounds, self.current = 0, votes

    def run(self, threshold: float | None, max_rounds: int) -> tuple[float | None, bool]:
        """Every round; returns the threshold used (a fraction's score cut) and whether the
        rounds stopped before ``max_rounds``."""
        for self.n_rounds in range(1, max_rounds + 1):
            flagged, scores, reasons, used = _flag(
                self.current, self.method, threshold, self.top_fraction,
                self.gold[_item_map(self.votes, self.current)], self.max_wrong_run, self.rng)
            flagged &= ~self.removed
            if self.top_fraction is not None:
                threshold = used
            if not flagged.any():
                return threshold, True
            self.rows += audit_rows(self.annotator_ids, flagged,
                                    self.current.votes_per_annotator(), scores, used, reasons,
                                    self.n_rounds)
            self.removed |= flagged
            self.keep_vote = ~self.removed[self.annotators]
            if not self.keep_vote.any():
                raise InvalidValueError(f"the {self.method} filter would remove every "
                                        "annotator; lower --threshold (Python: threshold=)")
            self.current = self.votes.select_votes(self.keep_vote, keep_annotators=True)
            if self.top_fraction is not None:
                return threshold, True
        return threshold, False


def audit_rows(annotator_ids: np.ndarray, flagged: np.ndarray, n_votes: np.ndarray,
               scores: np.ndarray, threshold: float, reasons: Any, round_: int) -> list[dict]:
    """The audit's rows for the annotators flagged in one round (in memory and on Dask).

    ``reasons`` is one string for every annotator or one per annotator.
    """
    return [{"annotator": str(annotator_ids[j]), "n_votes": int(n_votes[j]),
             "score": float(scores[j]), "threshold": float(threshold),
             "reason": reasons if isinstance(reasons, str) else reasons[j], "round": round_}
            for j in np.flatnonzero(flagged)]


def warn_unconverged(max_rounds: int) -> str:
    """Warn that the filter stopped while still flagging; returns the audit's note."""
    warnings.warn(f"filter_annotators stopped after {max_rounds} rounds while still flagging "
                  "annotators; the result may change if filtered again", AnnokitWarning,
                  stacklevel=3)
    return f"stopped after max_rounds={max_rounds} rounds without reaching a fixed point"


def _require_gold(votes: Votes, method: str, gold: Any = None) -> np.ndarray:
    """Gold codes; raise when the gold rule is asked for without any gold label."""
    g = gold_codes(votes, gold, what="filter_annotators")
    if method == "gold" and not (g >= 0).any():
        unknown = int((g == GOLD_UNKNOWN).sum())
        raise SchemaError(
            "method 'gold' needs gold labels (a gold column, a gold file or gold=); none of the "
            f"{votes.n_items} items has one" + (
                f" among the votes' labels ({unknown} item(s) have a gold label that is not)"
                if unknown else "")
        )
    return g


def _item_map(original: Votes, current: Votes) -> np.ndarray:
    """Positions in ``original`` of the items of ``current``."""
    if current is original:
        return np.arange(original.n_items)
    return original.item_positions(current.item_ids)


def _flag(votes, method, threshold, top_fraction, gold, max_wrong_run, rng):
    """(flagged mask, scores, reasons, threshold used) for the annotators of ``votes``."""
    scores = annotator_scores(votes, method, gold=gold, rng=rng)
    n_ann = votes.n_annotators
    reasons = np.full(n_ann, "", dtype=object)
    valid = np.isfinite(scores)
    if top_fraction is not None:
        candidates = np.flatnonzero(valid)
        k = min(math.ceil(top_fraction * len(candidates)), len(candidates))
        order = candidates[np.argsort(scores[candidates], kind="stable")][:k]
        flagged = np.zeros(n_ann, dtype=bool)
        flagged[order] = True
        used = float(scores[order].max()) if k else float("nan")
        reasons[flagged] = f"{method} score in the lowest {top_fraction:g} of annotators"
        return flagged, scores, reasons, used
    flagged = valid & (scores < threshold)
    reasons[flagged] = f"{method} score below {threshold:g}"
    if method == "gold":
        from annokit.quality.stats import max_consecutive_wrong

        runs = max_consecutive_wrong(votes, gold)
        long_run = runs >= max_wrong_run
        both = flagged & long_run
        only_run = long_run & ~flagged
        reasons[only_run] = f"{max_wrong_run} or more consecutive wrong gold answers"
        reasons[both] = (f"gold accuracy below {threshold:g} and {max_wrong_run} or more "
                         "consecutive wrong gold answers")
        flagged = flagged | long_run
    return flagged, scores, reasons, float(threshold)


def _build_audit(before: Votes, after: Votes, keep_vote, method, threshold, top_fraction,
                 rounds, rows, min_votes, notes) -> Audit:
    n_before = before.votes_per_item()
    n_after = np.bincount(before.item_index[keep_vote], minlength=before.n_items)
    counts_before = before.counts()
    flat = before.item_index[keep_vote].astype(np.int64) * before.n_labels + \
        before.label_index[keep_vote]
    counts_after = np.bincount(flat, minlength=before.n_items * before.n_labels).reshape(
        before.n_items, before.n_labels)
    kept = n_after > 0
    moved = np.full(before.n_items, np.nan)
    p_before = counts_before / n_before[:, None]
    if kept.any():
        p_after = counts_after[kept] / n_after[kept, None]
        moved[kept] = tvd(p_before[kept], p_after)
    # the majority under the default tie policy, before and after (removed items: label 0, unused)
    maj_before = break_ties(counts_before == counts_before.max(axis=1, keepdims=True))
    maj_after = break_ties(counts_after == counts_after.max(axis=1, keepdims=True))
    items = pd.DataFrame({
        "item": before.item_ids.astype(object), "n_votes_before": n_before,
        "n_votes_after": n_after, "removed": ~kept,
        "too_few_votes": kept & (n_after < min_votes), "tvd": moved,
        "majority_changed": kept & (maj_before != maj_after)})
    annotators = pd.DataFrame(rows, columns=["annotator", "n_votes", "score", "threshold",
                                             "reason", "round"])
    active_before = int((before.votes_per_annotator() > 0).sum())
    return Audit(
        method=method, threshold=float(threshold) if threshold is not None else float("nan"),
        top_fraction=top_fraction, rounds=rounds, annotators=annotators, items=items,
        n_votes_before=before.n_votes, n_votes_after=int(keep_vote.sum()),
        n_annotators_before=active_before,
        n_annotators_after=int((after.votes_per_annotator() > 0).sum()),
        min_votes=min_votes, notes=notes)
