"""Dataset-level statistics of a multi-annotator dataset (``annokit stats``).

:func:`dataset_stats` returns a plain dict whose keys are a public interface
(``annokit stats --json``, the report's dataset summary, the data cards).
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from annokit.core.agreement import krippendorff_alpha
from annokit.core.checks import seed_or_rng
from annokit.core.gold import describe_accuracy, gold_accuracy
from annokit.core.resample import item_keys, seed_from_rng
from annokit.core.soft_labels import (
    DEFAULT_TIES,
    ENTROPY_BASE,
    TiePolicy,
    describe_ties,
    distribution_majority,
    distributions,
    entropy,
    entropy_unit,
    majority_change,
    vote_majority,
)
from annokit.core.votes import Votes
from annokit.errors import DegenerateInputWarning
from annokit.quality.rating_stats import (  # noqa: F401  (BIMODAL, rating_summary: re-exported)
    BIMODAL,
    LIST_LEVELS,
    by_scale,
    rating_rows,
    rating_summary,
)

if TYPE_CHECKING:
    from annokit.core.multilabel import MultilabelTies

__all__ = ["STATS_SCHEMA_VERSION", "DatasetStats", "dataset_stats", "multilabel_stats", "rating_summary",
                  "soft_stats", "stats_markdown", "stats_rows", "stats_table"]

STATS_SCHEMA_VERSION = 1


class DatasetStats(dict):
    """What :func:`dataset_stats` and :func:`multilabel_stats` return: the ``stats --json``
    object (a plain dict: keys, JSON and equality as documented) with a table view.

    The keys of :func:`dataset_stats`:

    ``read_as`` (the format and columns the reader chose, or None for votes built in
    memory), ``n_items``, ``n_votes``, ``n_annotators`` (None when unknown), ``labels``,
    ``scale`` (the label set's level of measurement),
    ``votes_per_item`` {min, median, max}, ``entropy`` {base, mean, median},
    ``agreement`` {mean, median, n_unanimous, unanimous_share} (share of the top label;
    items whose votes all carry one label), ``ties`` (items
    whose top label is tied), ``tie_policy`` (the majority's tie policy),
    ``majority_change`` {rate, n_changed,
    n_compared, n_tied} or None, ``label_counts`` (votes per label),
    ``majority_counts`` {label: items whose majority it is, ties resolved by
    ``tie_policy``}, ``old_majority_counts`` / ``original_label_counts``
    (when the data carry original labels), ``gold`` {n_items, majority_accuracy,
    n_tied, tie_policy, n_unknown_label} or None (``n_items``: items whose gold is one
    of the labels, the accuracy's denominator; ``n_unknown_label``: items whose gold
    label is not among the votes' labels, left out; ``majority_accuracy`` is None
    when every gold label is unknown), ``krippendorff_alpha`` and ``fleiss_kappa`` {value, ci_low,
    ci_high, n_items, n_boot, confidence, n_invalid} (``n_invalid``: bootstrap
    replicates on which the coefficient is undefined, left out of the interval);
    ``percent_agreement``, ``gwet_ac1``, ``brennan_prediger`` and ``conger_kappa``
    (:mod:`annokit.core.agreement_gwet`; Gwet 2014), the same objects with ``weights``
    (those of the scale, :data:`~annokit.core.agreement_gwet.SCALE_WEIGHTS`: the weighted
    versions, AC2, on ordered scales) and ``se``, Gwet's analytic standard error where it
    equals irrCAC's (AC1/AC2 and Brennan-Prediger; None for the others), on the same
    bootstrap replicates; items with fewer
    than two votes are left out of their observed agreement, and ``conger_kappa`` is None
    without annotator ids;
    alpha is at the labels' ``level`` (ordinal, interval and ratio differences on
    ordered scales), kappa is nominal. ``ratings``: on an ordered scale with
    numeric labels, ``item_mean``, ``item_sd`` (sample) and ``bimodality``
    (Sarle's coefficient; ``n_bimodal`` items above 5/9) as {mean, median,
    n_items} over items, and ``votes``, the distribution of every vote's number
    (:func:`annokit.quality.rating_stats.vote_values`: mean, sd, quantiles, histogram);
    None otherwise.

    Figures of unordered categories are None on scales where they mean nothing
    (:func:`annokit.quality.rating_stats.by_scale`): ``majority_counts`` and
    ``fleiss_kappa`` on ordered scales, and ``entropy``, ``agreement`` and ``ties`` as
    well on interval and ratio scales (an exact value is not a category).

    Examples
    --------
    >>> s = dataset_stats(Votes.from_counts([[3, 1], [2, 2]], labels=["yes", "no"]), n_boot=0)
    >>> s["n_items"], isinstance(s, dict)
    (2, True)
    >>> s.to_frame().loc[["n_items", "entropy.mean", "label_counts.yes"], "value"].tolist()
    [2, 0.6277411625893767, 5]
    """

    def to_frame(self) -> pd.DataFrame:
        """One row per statistic: nested keys joined by dots (``entropy.mean``,
        ``label_counts.yes``, ``krippendorff_alpha.ci_low``), index ``statistic``, column
        ``value`` (lists such as ``labels`` or histogram edges stay lists)."""
        rows: dict[str, Any] = {}

        def walk(prefix: str, value: Any) -> None:
            if isinstance(value, dict) and value:
                for k, v in value.items():
                    walk(f"{prefix}.{k}" if prefix else str(k), v)
            else:
                rows[prefix] = value

        walk("", dict(self))
        return pd.DataFrame({"value": pd.Series(rows, dtype=object)}).rename_axis("statistic")


def _label_counts(codes: np.ndarray, names: tuple[str, ...]) -> dict[str, int]:
    tally = np.bincount(codes[codes >= 0], minlength=len(names)) if codes.size else \
        np.zeros(len(names), dtype=np.int64)
    return {name: int(n) for name, n in zip(names, tally, strict=True)}


def _codes(votes: Votes, column: str) -> np.ndarray | None:
    """Label codes of an item metadata column of label names (-1 where missing)."""
    if column not in votes.item_metadata.columns:
        return None
    values = votes.item_metadata[column].to_numpy(dtype=object)
    have = ~pd.isna(values)
    out = np.full(len(values), -1, dtype=np.int64)
    if have.any():
        out[have] = votes.labels.encode(values[have], where=f"{votes.source}, {column}")
    return out


def dataset_stats(votes: Votes, *, base: float = ENTROPY_BASE, n_boot: int = 1000, confidence: float = 0.95,
                  ties: TiePolicy = DEFAULT_TIES,
                  rng: np.random.Generator | int | None = 0,
                  seed: int | None = None) -> dict[str, Any]:
    """Summary statistics of a vote set.

    Parameters
    ----------
    votes : Votes
    base : float, default=e
        Logarithm base for entropy (:data:`annokit.core.soft_labels.ENTROPY_BASE`: nats,
        as every entropy annokit reports; 2: bits, as ChaosNLI reports).
    n_boot : int, default=1000
        Bootstrap replicates for the agreement coefficients' intervals (0: none).
    confidence : float, default=0.95
    ties : {"first", "first_seen", "random", "report"}, default=DEFAULT_TIES
        Tie policy of the majority vote (:func:`annokit.core.soft_labels.break_ties`);
        by default the first tied label in label order. ``"first_seen"`` gives
        the figures published with Snow et al.'s RTE and the dog data.
    rng : numpy Generator, int seed or None, default=0
        Seed of the bootstrap (a Generator draws one seed) and of ``ties="random"``,
        so the same data gives the same bytes. Both coefficients use the same
        replicates, and an item's weights depend on its id, not its row
        (:mod:`annokit.core.resample`).
    seed : int, optional
        The same as ``rng=`` an int (the name ``evaluate`` uses); give one of the two.

    Returns
    -------
    DatasetStats
        A dict; its keys are listed in :class:`DatasetStats`.

    Notes
    -----
    ``majority_change`` compares the new majority with the item's original label
    (``old_label`` metadata). Where the data publish their own majority label
    (ChaosNLI's ``majority_label``), that label is the new majority, as in Nie et
    al. (2020, Table 2); otherwise the majority under ``ties``. ``n_tied`` counts the
    compared items whose new top label is tied, for which "changed" depends on
    how the tie was broken.

    Examples
    --------
    >>> v = Votes.from_counts([[3, 1], [2, 2]], labels=["yes", "no"])
    >>> s = dataset_stats(v, n_boot=0)
    >>> s["n_items"], s["ties"], s["label_counts"]
    (2, 1, {'yes': 5, 'no': 3})
    >>> slider = Votes.from_counts([[0, 1, 2], [3, 0, 0]], labels=["0", "50", "100"])
    >>> r = dataset_stats(slider.with_scale("interval"), n_boot=0)
    >>> r["ratings"]["votes"]["mean"], r["fleiss_kappa"], r["entropy"]
    (41.666..., None, None)
    """
    rng = seed_or_rng(seed, rng, "dataset_stats", default=0)
    counts = votes.counts()
    gen = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    maj = vote_majority(votes, ties=ties, rng=gen)
    published = _codes(votes, "majority_label")
    new_majority = published if published is not None and (published >= 0).all() else maj.labels
    result = _vote_figures(votes, counts, base, maj, new_majority)
    result.update(_original_labels(votes, new_majority, maj))
    result["gold"] = _gold(votes, maj)
    result["ratings"] = rating_summary(counts, votes.labels)
    result.update(agreement_stats(votes, counts, n_boot=n_boot, confidence=confidence,
                                  rng=rng))
    return DatasetStats(by_scale(result))


def _vote_figures(votes: Votes, counts: np.ndarray, base: float, maj: Any,
                  new_majority: np.ndarray) -> dict[str, Any]:
    """The figures of the votes themselves: sizes, votes per item, entropy, agreement, ties,
    the counts per label and per majority label (``majority_change`` None until compared)."""
    names = votes.labels.names
    per_item = counts.sum(axis=1)
    ent = entropy(distributions(counts), base=base)
    return {
        "schema_version": STATS_SCHEMA_VERSION,
        "source": votes.source,
        "read_as": getattr(votes, "read_info", None),
        "n_items": votes.n_items,
        "n_votes": votes.n_votes,
        "n_annotators": votes.n_annotators,
        "labels": list(names),
        "scale": votes.labels.scale,
        "votes_per_item": {"min": int(per_item.min()), "median": float(np.median(per_item)),
                           "max": int(per_item.max())},
        "entropy": {"base": base, "unit": entropy_unit(base), "mean": math.fsum(ent) / ent.size,
                    "median": float(np.median(ent))},
        "agreement": {"mean": math.fsum(counts.max(axis=1) / per_item) / per_item.size,
                      "median": float(np.median(counts.max(axis=1) / per_item)),
                      **unanimous(counts.max(axis=1) == per_item)},
        "ties": maj.n_ties,
        "tie_policy": maj.policy,
        "majority_change": None,
        "label_counts": _label_counts(votes.label_index, names),
        "majority_counts": _label_counts(new_majority, names),
    }


def _original_labels(votes: Votes, new_majority: np.ndarray, maj: Any) -> dict[str, Any]:
    """``majority_change`` and ``old_majority_counts`` against the items' ``old_label``, and
    ``original_label_counts`` of their ``old_labels``, where the data carry them."""
    names = votes.labels.names
    out: dict[str, Any] = {}
    old = _codes(votes, "old_label")
    if old is not None:
        out["majority_change"] = majority_change(new_majority, old, tied=maj.tied).to_dict()
        out["old_majority_counts"] = _label_counts(old, names)
    if "old_labels" in votes.item_metadata.columns:
        flat = votes.item_metadata["old_labels"].explode().dropna().to_numpy(dtype=object)
        out["original_label_counts"] = _label_counts(
            votes.labels.encode(flat) if flat.size else np.zeros(0, dtype=np.int64), names)
    return out


def _gold(votes: Votes, maj: Any) -> dict[str, Any] | None:
    """The majority vote's accuracy against the gold labels, or None without gold."""
    acc = gold_accuracy(maj.labels, votes.gold)
    if not acc.n_gold:
        return None
    return {"n_items": acc.n_items, "majority_accuracy": acc.accuracy,
            "n_tied": gold_accuracy(maj.labels, votes.gold, maj.is_tied).n_items,
            "tie_policy": maj.policy, "n_unknown_label": acc.n_unknown}


def agreement_stats(votes: Votes, counts: np.ndarray, *, n_boot: int, confidence: float,
                    rng: np.random.Generator | int | None) -> dict[str, Any]:
    """The agreement coefficients of :func:`dataset_stats`, bootstrapped together.

    One seed and one pass of replicate weights for all of them: each chunk of Poisson weights
    is drawn once and every coefficient's statistic reads it (alpha and kappa on the pairable
    items, with their own chunks, so their figures are those of :func:`krippendorff_alpha` and
    :func:`fleiss_kappa`). Items are in id order, so sums do not depend on the file's rows.
    """
    from annokit.core.agreement import intervals_together, prepare_alpha, prepare_fleiss
    from annokit.core.agreement_gwet import GWET_COEFFICIENTS, chance_coefficients

    out: dict[str, Any] = {k: None for k in ("krippendorff_alpha", "fleiss_kappa",
                                              *GWET_COEFFICIENTS)}
    per_item = counts.sum(axis=1)
    if not (per_item >= 2).any():  # nothing to agree on: null, not an error
        return out
    seed = seed_from_rng(rng) if n_boot else 0
    by_id = np.argsort(votes.item_ids.astype(str), kind="stable")
    pair = per_item[by_id] >= 2
    ordered, keys = counts[by_id][pair], votes.item_ids[by_id][pair]
    scale = votes.labels.scale
    parts: list[tuple[str, Any, bool]] = [("krippendorff_alpha", prepare_alpha(
        ordered, level=scale, values=votes.labels if scale in ("interval", "ratio") else None,
        keys=keys, stacklevel=4), False)]
    if scale == "nominal":
        parts.append(("fleiss_kappa", prepare_fleiss(ordered, keys, stacklevel=4), False))
    names = [n for n in GWET_COEFFICIENTS
             if n != "conger_kappa" or votes.annotator_index is not None]
    n_single = int((~pair).sum())
    if n_single:
        for name, _, _ in parts:
            warnings.warn(f"{name}: {n_single} item(s) with fewer than two votes cannot be paired "
                          "and were left out", DegenerateInputWarning, stacklevel=3)
        warnings.warn(f"{', '.join(names)}: {n_single} item(s) with fewer than two votes were left "
                      "out of the observed agreement (their votes count in the chance agreement)",
                      DegenerateInputWarning, stacklevel=3)
    # the chance terms read the items with one vote too: after the pairable ones
    chance = chance_coefficients(votes, names=names,
                                 order=np.concatenate([by_id[pair], by_id[~pair]]))
    parts += [(c.name, (c.value, c.stat, c.n_items, None), True) for c in chance]
    results = intervals_together([(p, a) for _, p, a in parts], item_keys(keys),
                                 item_keys(votes.item_ids[by_id][~pair]), n_boot=n_boot,
                                 confidence=confidence, seed=seed)
    for (name, _, _), res in zip(parts, results, strict=True):
        out[name] = res.to_dict()
    out["krippendorff_alpha"]["level"] = scale
    for c in chance:
        out[c.name]["weights"] = c.weights
        out[c.name]["se"] = c.se
    return out


def multilabel_stats(votes: Votes, *, n_boot: int = 1000, confidence: float = 0.95,
                     ties: MultilabelTies = "exclude", rng: np.random.Generator | int | None = 0
                     ) -> dict[str, Any]:
    """Summary statistics of multi-label votes (an annotator may tick several labels of an item).

    Each label is a yes/no question per response (:mod:`annokit.core.multilabel`).

    Returns
    -------
    dict
        ``task`` ("multilabel"), ``source``, ``read_as``, ``n_items``, ``n_votes``
        (ticks), ``n_responses`` ((item, annotator) pairs), ``n_annotators``, ``labels``,
        ``responses_per_item`` {min, median, max}, ``labels_per_response`` {mean, max},
        ``empty_responses`` (always 0: a response is known from its ticks),
        ``per_label``: {label: {tick_rate (ticks / responses), majority_items (items
        whose majority set holds the label), tied_items, krippendorff_alpha}} where
        alpha is the nominal alpha of the label's yes/no answers (with a bootstrap
        interval keyed by item id), ``majority_set_size`` {mean, counts}, ``n_tied_cells``
        and ``tie_policy``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": ["q", "q", "q", "r", "r"], "annotator": ["a", "a", "b", "a", "b"],
    ...                    "label": ["x", "y", "y", "x", "x"]})
    >>> s = multilabel_stats(Votes.from_long(df, duplicates="keep"), n_boot=0)
    >>> s["n_responses"], s["per_label"]["y"]["tick_rate"], s["n_tied_cells"]
    (4, 0.5, 1)
    """
    from annokit.core.multilabel import multilabel_majority, n_responses, response_sizes

    counts = votes.counts()
    answered = n_responses(votes)  # checks the votes (annotator ids, no repeated tick)
    maj = multilabel_majority(votes, ties=ties)
    seed = seed_from_rng(rng) if n_boot else 0
    by_id = np.argsort(votes.item_ids.astype(str), kind="stable")
    per_label = {}
    for j, name in enumerate(votes.labels.names):
        yes_no = np.stack([answered - counts[:, j], counts[:, j]], axis=1)[by_id]
        alpha = (krippendorff_alpha(yes_no, n_boot=n_boot, confidence=confidence, rng=seed,
                                    keys=votes.item_ids[by_id]).to_dict()
                 if (answered >= 2).any() else None)
        per_label[name] = {"tick_rate": float(counts[:, j].sum() / answered.sum()),
                           "majority_items": int(maj.labels[:, j].sum()),
                           "tied_items": int(maj.is_tied[:, j].sum()),
                           "krippendorff_alpha": alpha}
    size = maj.labels.sum(axis=1)
    return DatasetStats({
        "schema_version": STATS_SCHEMA_VERSION, "task": "multilabel", "source": votes.source,
        "read_as": getattr(votes, "read_info", None), "n_items": votes.n_items,
        "n_votes": votes.n_votes, "n_responses": int(answered.sum()),
        "n_annotators": votes.n_annotators, "labels": list(votes.labels.names),
        "responses_per_item": {"min": int(answered.min()), "median": float(np.median(answered)),
                               "max": int(answered.max())},
        "labels_per_response": {"mean": votes.n_votes / int(answered.sum()),
                                "max": int(response_sizes(votes).max())},
        "per_label": per_label,
        "majority_set_size": {"mean": float(size.mean()),
                              "counts": {str(k): int(c) for k, c in
                                         enumerate(np.bincount(size)) if c}},
        "n_tied_cells": maj.n_ties, "tie_policy": maj.policy,
    })


def unanimous(same: Any, weights: Any = None) -> dict[str, Any]:
    """``n_unanimous`` and ``unanimous_share``: items whose votes all carry one label (``same``
    per item, or per distinct count vector with ``weights`` items each)."""
    same = np.asarray(same, dtype=bool)
    w = np.ones(same.size, dtype=np.int64) if weights is None else np.asarray(weights)
    n = int(w[same].sum())
    total = int(w.sum())
    return {"n_unanimous": n, "unanimous_share": n / total if total else math.nan}


def soft_stats(soft: Votes, *, base: float = ENTROPY_BASE, ties: TiePolicy = DEFAULT_TIES,
               rng: np.random.Generator | int | None = 0) -> dict[str, Any]:
    """:func:`dataset_stats` of soft labels published without votes
    (:class:`~annokit.core.soft_votes.SoftLabels`): the figures of distributions only.

    The keys are those of :func:`dataset_stats`; what needs votes is None (``n_votes``,
    ``label_counts``, the agreement coefficients; ``votes_per_item`` unless the number of
    annotators per item was published) and ``soft_only`` is True. ``agreement`` is the mean
    top-label probability and ``n_unanimous`` the items with a probability of 1.

    Examples
    --------
    >>> from annokit.core.labels import LabelSet
    >>> from annokit.core.soft_votes import SoftLabels
    >>> s = soft_stats(SoftLabels([[0.5, 0.5], [1.0, 0.0]], labels=LabelSet(["a", "b"]),
    ...                           item_ids=["q", "r"]))
    >>> s["ties"], s["agreement"]["n_unanimous"], s["n_votes"]
    (1, 1, None)
    """
    probs = soft.distributions()
    ent = entropy(probs, base=base)
    gen = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    maj = distribution_majority(probs, ties=ties, rng=gen)
    top = probs.max(axis=1)
    n = getattr(soft, "n_annotators_per_item", None)
    result: dict[str, Any] = {
        "schema_version": STATS_SCHEMA_VERSION, "source": soft.source,
        "read_as": getattr(soft, "read_info", None), "soft_only": True,
        "n_items": soft.n_items, "n_votes": None, "n_annotators": None,
        "labels": list(soft.labels.names), "scale": soft.labels.scale,
        "votes_per_item": None if n is None else {"min": int(n.min()),
                                                  "median": float(np.median(n)),
                                                  "max": int(n.max())},
        "entropy": {"base": base, "unit": entropy_unit(base), "mean": math.fsum(ent) / ent.size,
                    "median": float(np.median(ent))},
        "agreement": {"mean": math.fsum(top) / top.size, "median": float(np.median(top)),
                      **unanimous(top == 1.0)},
        "ties": maj.n_ties, "tie_policy": maj.policy, "majority_change": None,
        "label_counts": None, "majority_counts": _label_counts(maj.labels, soft.labels.names),
        "gold": None, "ratings": None, "krippendorff_alpha": None, "fleiss_kappa": None,
        "percent_agreement": None, "gwet_ac1": None, "brennan_prediger": None,
        "conger_kappa": None,
    }
    return DatasetStats(by_scale(result))


def _fmt(x: Any, digits: int = 4) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, float):
        return "nan" if math.isnan(x) else f"{x:.{digits}f}"
    return f"{x:,}" if isinstance(x, int) else str(x)


def _counts(counts: dict[str, int]) -> str:
    """``label: count`` pairs, ``;``-separated, so numeric labels read unambiguously
    (``0: 1,900; 1: 1,699``, not ``0 1,900, 1 1,699``)."""
    return "; ".join(f"{k}: {v:,}" for k, v in counts.items())


def _labels(stats: dict[str, Any]) -> str:
    """The labels, or on a numeric scale with many values their number and range."""
    scale = stats.get("scale", "nominal")
    votes = (stats.get("ratings") or {}).get("votes")
    if votes and len(stats["labels"]) > LIST_LEVELS:
        text = (f"{len(stats['labels']):,} distinct values from {votes['min']:g} to "
                f"{votes['max']:g}")
    else:
        text = ", ".join(stats["labels"])
    return text + (f" ({scale})" if scale != "nominal" else "")


def stats_rows(stats: dict[str, Any]) -> list[tuple[str, str]]:
    """The rows of ``stats_table``: on numeric scales the ratings' figures replace the lists
    per label (a histogram beyond :data:`LIST_LEVELS` values), and figures set to None by
    :func:`~annokit.quality.rating_stats.by_scale` are left out."""
    if stats.get("task") == "multilabel":
        return _multilabel_rows(stats)
    vpi = stats["votes_per_item"]
    ent = stats["entropy"]
    many = (stats.get("ratings") or {}).get("votes") and len(stats["labels"]) > LIST_LEVELS
    soft_only = bool(stats.get("soft_only"))
    rows = [
        *([("read as", stats["read_as"])] if stats.get("read_as") else []),
        ("items", _fmt(stats["n_items"])),
        ("votes", _fmt(stats["n_votes"]) if not soft_only else "unknown (soft labels only)"),
        ("annotators", _fmt(stats["n_annotators"]) if stats["n_annotators"] is not None
         else "unknown (soft labels only)" if soft_only else "unknown (counts only)"),
        ("labels", _labels(stats)),
    ]
    if vpi is not None:
        rows.append(("votes per item (min / median / max)" if not soft_only else
                     "annotators per item (min / median / max)",
                     f"{vpi['min']} / {vpi['median']:g} / {vpi['max']}"))
    if ent is not None:
        rows.append((f"entropy, {entropy_unit(ent['base'])} (mean / median)",
                     f"{_fmt(ent['mean'])} / {_fmt(ent['median'])}"))
    if stats.get("agreement") is not None:
        rows.append(("agreement, top-label share (mean)", _fmt(stats["agreement"]["mean"])))
        if "n_unanimous" in stats["agreement"]:
            a = stats["agreement"]
            rows.append(("unanimous items", f"{a['n_unanimous']:,} "
                                            f"({100 * a['unanimous_share']:.2f}%)"))
    if stats.get("ties") is not None:
        rows += [("items with a tied top label", _fmt(stats["ties"])),
                 ("majority tie policy",
                  f"{stats['tie_policy']} ({describe_ties(stats['tie_policy'])})")]
    if not many and stats["label_counts"] is not None:
        rows.append(("votes per label", _counts(stats["label_counts"])))
    if stats.get("majority_counts") is not None:
        rows.append(("majority label counts", _counts(stats["majority_counts"])))
    if "old_majority_counts" in stats:
        rows.append(("items per original label", _counts(stats["old_majority_counts"])))
    if "original_label_counts" in stats:
        rows.append(("original annotators' votes per label",
                     _counts(stats["original_label_counts"])))
    mc = stats["majority_change"]
    if mc is not None:
        rows.append(("majority change vs original label",
                     (f"{100 * mc['rate']:.2f}% ({mc['n_changed']:,} of {mc['n_compared']:,}; "
                      f"{mc['n_tied']} tied)")))
    if stats.get("gold"):
        g = stats["gold"]
        rows.append(("majority-vote accuracy vs gold", describe_accuracy(
            g["majority_accuracy"], g["n_items"], g.get("n_unknown_label", 0),
            f"{g['n_tied']} tied, ties: {g['tie_policy']}")))
    rows += rating_rows(stats)
    return rows + _coefficient_rows(stats)


#: Row titles of the chance-corrected coefficients (``{w}``: the weights, on ordered scales).
_TITLES = {"percent_agreement": "percent agreement", "gwet_ac1": "Gwet's AC1",
           "brennan_prediger": "Brennan-Prediger", "conger_kappa": "Conger's kappa"}


def _coefficient_rows(stats: dict[str, Any]) -> list[tuple[str, str]]:
    """One row per agreement coefficient: value and bootstrap interval, or why it is n/a."""
    level = stats.get("scale", "nominal")
    soft_only = bool(stats.get("soft_only"))
    coefficients = [("krippendorff_alpha", f"Krippendorff's alpha ({level})")]
    if level == "nominal":
        coefficients.append(("fleiss_kappa", "Fleiss' kappa"))
    for key, title in _TITLES.items():
        if key not in stats:  # a stats object from before these coefficients
            continue
        w = (stats[key] or {}).get("weights", "identity")
        if key == "gwet_ac1" and w != "identity":
            title = "Gwet's AC2"
        # the weights in brackets, as alpha's level: rows no wider than the table's others
        coefficients.append((key, title + (f" ({w})" if w != "identity" else "")))
    rows = []
    for key, title in coefficients:
        a = stats[key]
        if a is None:
            rows.append((title, "n/a (soft labels only: it needs votes)" if soft_only
                         else "n/a (it needs annotator ids)" if key == "conger_kappa"
                         and stats.get("n_annotators") is None
                         else "n/a (no item has two votes)"))
            continue
        dropped = (f"; {a['n_invalid']} left out: undefined where all resampled votes carry "
                   "the same label") if a.get("n_invalid") else ""
        ci = (f" [{_fmt(a['ci_low'])}, {_fmt(a['ci_high'])}] ({100 * a['confidence']:g}% bootstrap, "
              f"{a['n_boot']} reps{dropped})" if a["ci_low"] is not None else "")
        rows.append((title, _fmt(a["value"]) + ci))
    return rows


def _multilabel_rows(stats: dict[str, Any]) -> list[tuple[str, str]]:
    rpi, lpr = stats["responses_per_item"], stats["labels_per_response"]
    rows = [
        *([("read as", stats["read_as"])] if stats.get("read_as") else []),
        ("items", _fmt(stats["n_items"])),
        ("ticks (votes)", _fmt(stats["n_votes"])),
        ("responses ((item, annotator) pairs)", _fmt(stats["n_responses"])),
        ("annotators", _fmt(stats["n_annotators"])),
        ("labels (multi-label)", ", ".join(stats["labels"])),
        ("responses per item (min / median / max)",
         f"{rpi['min']} / {rpi['median']:g} / {rpi['max']}"),
        ("labels per response (mean / max)", f"{_fmt(lpr['mean'])} / {lpr['max']}"),
        ("majority set size (mean)", _fmt(stats["majority_set_size"]["mean"])),
        ("tied (item, label) cells", f"{stats['n_tied_cells']:,} (policy {stats['tie_policy']})"),
    ]
    for name, d in stats["per_label"].items():
        a = d["krippendorff_alpha"]
        alpha = "n/a" if a is None else _fmt(a["value"]) + (
            f" [{_fmt(a['ci_low'])}, {_fmt(a['ci_high'])}]" if a["ci_low"] is not None else "")
        rows.append((f"label {name}: tick rate / majority items / alpha",
                     f"{_fmt(d['tick_rate'])} / {d['majority_items']:,} / {alpha}"))
    return rows


def stats_table(stats: dict[str, Any]) -> str:
    """A plain-text two-column table for the terminal."""
    rows = stats_rows(stats)
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)


def stats_markdown(stats: dict[str, Any]) -> str:
    """A Markdown table (the statistics section of a data card)."""
    lines = ["| statistic | value |", "|---|---|"]
    rows = stats_rows(stats)
    lines += [f"| {k} | {v} |" for k, v in rows]
    return "\n".join(lines)
