"""Dataset statistics on Dask: the dictionary of :func:`annokit.quality.dataset_stats.dataset_stats`.

Every per-item statistic (votes, entropy, top-label share, ties, the majority) depends on
the item's count vector alone, so each partition returns the distinct count vectors with
how many items have each; the client merges them by adding. From that histogram the
counts, minima, maxima and medians are exactly those of the whole data, and the means are
exactly rounded sums (fractions of the float values times their multiplicities; the same
float as :func:`math.fsum`, which the in-memory statistics use), so they are identical
to the in-memory figures whatever the partitioning.

Agreement (Krippendorff's alpha and Fleiss' kappa, nominal) is a function of weighted
sums over items of per-item terms. Each partition returns those sums for every bootstrap
replicate, with Poisson weights keyed by item id (:mod:`annokit.core.resample`), in
chunks of replicates so that a worker holds at most ``budget`` weights at once; the client
adds them and applies the formula. The replicate weights are the in-memory ones; the sums
are added in another order, so the coefficients and their intervals agree with the
in-memory ones to about 1e-15 (relative), not bit for bit.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.agreement import AgreementResult, coincidence_parts, nominal_alpha
from annokit.core.agreement_gwet import (
    GWET_COEFFICIENTS,
    SCALE_WEIGHTS,
    agreement_weights,
    analytic_se,
    chance_block_sums,
    coefficient_from_sums,
    item_terms,
)
from annokit.core.alpha_levels import alpha_from_pairs, pair_weights
from annokit.core.annotator_agreement import (
    influence_frame,
    influence_sums,
    merge_pair_tables,
    pair_tables,
    pairs_frame,
)
from annokit.core.checks import check_option
from annokit.core.gold import GOLD_NONE, GoldAccuracy, gold_accuracy
from annokit.core.resample import (
    percentile_interval,
    poisson_weights,
    replicate_chunks,
    seed_from_rng,
)
from annokit.core.soft_labels import (
    ENTROPY_BASE,
    distributions,
    entropy,
    entropy_unit,
    majority,
)
from annokit.errors import DegenerateInputWarning, InvalidValueError
from annokit.quality.dataset_stats import (
    STATS_SCHEMA_VERSION,
    DatasetStats,
    rating_summary,
    unanimous,
)
from annokit.quality.rating_stats import by_scale
from annokit.scale.votes import DaskVotes

__all__ = ["alpha_influence_dask", "annotator_pairs_dask", "dataset_stats_dask"]

_DASK_TIES = ("first", "report")


def _part_counts(frame: pd.DataFrame, items: pd.DataFrame, k: int, rows: bool = False
                 ) -> Any:
    """Counts (n_local, k) of one partition, rows in the order of ``items`` (by key) (and with
    ``rows`` each vote's row)."""
    keys = items["item"].to_numpy()
    order = np.argsort(keys, kind="stable")
    # the row of each vote's item in ``items``, whatever the order of ``items``
    local = order[np.searchsorted(keys[order], frame["item"].to_numpy())] if len(frame) else \
        np.zeros(0, np.int64)
    counts = np.bincount(local * k + frame["label"].to_numpy().astype(np.int64),
                         minlength=len(keys) * k).reshape(len(keys), k)
    return (counts, items, local) if rows else (counts, items)


def _stats_part(frame: pd.DataFrame, items: pd.DataFrame, k: int, seed: int, n_boot: int,
                budget: int, pairs: bool, chance: _Chance
                ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """One partition's :func:`_patterns` and :func:`_agreement_part`, its counts made once."""
    counts, items, local = _part_counts(frame, items, k, rows=True)
    return (_patterns(counts, items, k),
            _agreement_part(counts, items, k, seed, n_boot, budget, pairs,
                            chance=chance, votes=(local, frame)))


def _distinct_rows(counts: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``counts`` and how many times each occurs (in no set order): each
    row read as one number in base ``max + 1`` when that fits in 62 bits, else row-wise."""
    if not len(counts):
        return np.zeros((0, k), np.int64), np.zeros(0, np.int64)
    base = int(counts.max()) + 1
    if k * math.log2(max(base, 2)) >= 62:
        return np.unique(counts, axis=0, return_counts=True)
    code = counts.astype(np.int64) @ (np.int64(base) ** np.arange(k, dtype=np.int64))
    _, first, mult = np.unique(code, return_index=True, return_counts=True)
    return counts[first], mult


def _patterns(counts: np.ndarray, items: pd.DataFrame, k: int) -> dict[str, Any]:
    """One partition's histogram of count vectors, gold tallies and label totals."""
    out: dict[str, Any] = {"n_items": len(items), "n_votes": int(counts.sum())}
    out["patterns"] = _distinct_rows(counts, k)
    gold = items["gold"].to_numpy().astype(np.int64)
    out["gold"] = None
    if (gold != GOLD_NONE).any():
        maj = majority(counts, ties="first")
        out["gold"] = (gold_accuracy(maj.labels, gold),
                       gold_accuracy(maj.labels, gold, maj.is_tied).n_items)
    return out


@dataclass(frozen=True)
class _Chance:
    """What a partition needs for the chance-corrected coefficients: their weights and, for
    Conger's kappa, the number of annotators (0: none, no annotator sums)."""

    wmat: np.ndarray
    n_annotators: int


def _agreement_part(counts: np.ndarray, items: pd.DataFrame, k: int, seed: int, n_boot: int,
                    budget: int, pairs: bool = False, *, chance: _Chance | None = None,
                    votes: tuple[np.ndarray, pd.DataFrame] | None = None
                    ) -> dict[str, np.ndarray]:
    """Per-item agreement terms of one partition summed with every replicate's weights.

    Columns of the terms: 1 (pairable items), alpha's disagreement, kappa's item agreement,
    the item's votes ``m``, then the ``k`` label counts. With ``pairs`` (alpha at an
    ordered level) also the (k, k) pair weights (:func:`annokit.core.alpha_levels.pair_weights`)
    for the point estimate and every replicate. With ``chance``, ``chance`` and
    ``chance_reps``: the sums of :func:`annokit.core.agreement_gwet.item_terms` over every
    item (one-vote items too), followed by the annotator x label vote sums when
    ``chance.n_annotators`` (Conger's kappa).
    """
    from annokit.core.resample import item_keys

    arr = counts.astype(np.float64)
    m = arr.sum(axis=1)
    keep = m >= 2
    arr, m = arr[keep], m[keep]
    d, _ = coincidence_parts(arr)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_item = (arr * (arr - 1)).sum(axis=1) / (m * (m - 1))
    terms = np.column_stack([np.ones(len(arr)), d, p_item, m, arr])
    out = {"n_single": int((~keep).sum()), "point": terms.sum(axis=0),
           "reps": np.zeros((n_boot, terms.shape[1]))}
    if pairs:
        out["pairs"] = pair_weights(arr) if len(arr) else np.zeros((k, k))
        out["pairs_reps"] = np.zeros((n_boot, k, k))
    cells = None
    if chance is not None:
        # items in the order pairable, then one-vote: the weights below are drawn so
        order = np.concatenate([np.flatnonzero(keep), np.flatnonzero(~keep)])
        gwet = item_terms(counts[order], chance.wmat)
        if chance.n_annotators and votes is not None:
            where = np.empty(order.size, dtype=np.int64)
            where[order] = np.arange(order.size)
            row = where[votes[0]]
            by_row = np.argsort(row, kind="stable")
            n_cells = chance.n_annotators * k
            codes = (votes[1]["annotator"].to_numpy().astype(np.int64) * k
                     + votes[1]["label"].to_numpy().astype(np.int64))[by_row]
            cells = (np.searchsorted(row[by_row], np.arange(order.size + 1)).astype(np.int64),
                     codes.astype(np.int32), n_cells)
        point = gwet.sum(axis=0)
        if cells is not None:
            point = np.concatenate([point, np.bincount(cells[1], minlength=cells[2])])
        out["chance"] = point
        out["chance_moments"] = gwet.T @ gwet
        out["chance_reps"] = np.zeros((n_boot, point.size))
    if n_boot and len(counts):
        ids = items["item_id"].to_numpy(dtype=object)
        keys, rest = item_keys(ids[keep]), item_keys(ids[~keep])
        for start, stop in replicate_chunks(n_boot, max(len(arr), 1),
                                            budget=budget // max(1, k * k) if pairs else budget):
            w = poisson_weights(keys, seed, start, stop)
            out["reps"][start:stop] = w @ terms
            if pairs and len(arr):
                out["pairs_reps"][start:stop] = pair_weights(arr, w)
            if chance is not None:
                w_all = np.hstack([w, poisson_weights(rest, seed, start, stop)])
                sums, cell_sums, _ = chance_block_sums(w_all, gwet, cells)
                if cells is not None:
                    sums = np.hstack([sums, cell_sums])
                out["chance_reps"][start:stop] = sums
    return out


def _alpha(s: np.ndarray) -> np.ndarray:
    return nominal_alpha(s[..., 1], s[..., 4:])


def _level_alpha(level: str, pairs: np.ndarray, pairs_reps: np.ndarray, v: np.ndarray) -> Any:
    """Alpha at an ordered level from merged terms (label totals in columns 4:) and pair weights."""

    def alpha(s: np.ndarray) -> np.ndarray:
        if s.ndim == 1:
            return alpha_from_pairs(level, s[4:], pairs, v)[0]
        return alpha_from_pairs(level, s[:, 4:], pairs_reps, v)
    return alpha


def _kappa(s: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        p_bar = s[..., 2] / s[..., 0]
        p_c = s[..., 4:] / s[..., 3][..., None]
        p_e = (p_c**2).sum(axis=-1)
        return (p_bar - p_e) / (1 - p_e)


def influence_part(frame: pd.DataFrame, items: pd.DataFrame, k: int, n_annotators: int
                   ) -> tuple[np.ndarray, ...]:
    """One partition's :func:`annokit.core.annotator_agreement.influence_sums` (whole items)."""
    counts, _, local = _part_counts(frame, items, k, rows=True)
    return influence_sums(counts, local, frame["annotator"].to_numpy().astype(np.int64),
                          frame["label"].to_numpy().astype(np.int64), n_annotators)


def alpha_influence_dask(votes: DaskVotes) -> pd.DataFrame:
    """:func:`annokit.core.annotator_agreement.alpha_influence` on Dask: the partitions'
    sums added (equal to the in-memory figures to rounding)."""
    import dask

    ids = votes.require_annotators("alpha_influence")
    k, r = len(votes.labels), len(ids)
    parts = [dask.delayed(influence_part)(f, i, k, r) for f, i in
             zip(votes.frame.to_delayed(), votes.items.to_delayed(), strict=True)]
    n_votes = [dask.delayed(lambda f: np.bincount(f["annotator"].to_numpy().astype(np.int64),
                                                  minlength=r))(f)
               for f in votes.frame.to_delayed()]
    sums, counts = votes.compute(parts, n_votes)
    merged = tuple(np.sum([p[j] for p in sums], axis=0) for j in range(4))
    scale = getattr(votes.labels, "scale", "nominal")
    values = (np.asarray(votes.labels.values, dtype=np.float64)
              if scale in ("interval", "ratio") else np.arange(k, dtype=np.float64))
    return influence_frame(merged, scale, values, ids, np.sum(counts, axis=0))


def annotator_pairs_dask(votes: DaskVotes, *, min_shared: int = 10,
                         weights: Any = "scale") -> pd.DataFrame:
    """:func:`annokit.core.annotator_agreement.annotator_pairs` on Dask: each partition's
    contingency tables (whole items) added on the client; the same frame as in memory."""
    import dask

    ids = votes.require_annotators("annotator pairs")
    k, r = len(votes.labels), len(ids)

    def part(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        return pair_tables(frame["item"].to_numpy(), frame["annotator"].to_numpy().astype(np.int64),
                           frame["label"].to_numpy().astype(np.int64), r, k)

    parts = votes.compute([dask.delayed(part)(f) for f in votes.frame.to_delayed()])[0]
    return pairs_frame(merge_pair_tables(list(parts)), ids,
                       getattr(votes.labels, "scale", "nominal"), min_shared=min_shared,
                       weights=weights)


def _coefficient(name: str, f: Any, point: np.ndarray, reps: np.ndarray, n_items: int,
                 n_boot: int, confidence: float) -> dict[str, Any]:
    value = float(f(point))
    if not np.isfinite(value):
        warnings.warn(f"{name}: every vote has the same label, it is undefined (nan)",
                      DegenerateInputWarning, stacklevel=3)
    if n_boot == 0:
        return AgreementResult(value, None, None, n_items, 0, float(confidence)).to_dict()
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(reps[:, 0] > 0, f(reps), np.nan)
    ci = percentile_interval(value, values, confidence)
    return AgreementResult(value, ci.low, ci.high, n_items, ci.n_boot, ci.confidence,
                           ci.n_invalid).to_dict()


def _chance_results(agree: list[dict[str, Any]], chance: _Chance, wname: str, n_pairable: int,
                    n_single: int, n_boot: int, confidence: float, k: int) -> dict[str, Any]:
    """The coefficients of :mod:`annokit.core.agreement_gwet` from the partitions' sums."""
    point = np.sum([a["chance"] for a in agree], axis=0)
    reps = np.sum([a["chance_reps"] for a in agree], axis=0)
    names = [n for n in GWET_COEFFICIENTS if n != "conger_kappa" or chance.n_annotators]
    out: dict[str, Any] = {n: None for n in GWET_COEFFICIENTS}
    if n_pairable == 0:
        return out
    if n_single:
        warnings.warn(f"{', '.join(names)}: {n_single} item(s) with fewer than two votes were "
                      "left out of the observed agreement (their votes count in the chance "
                      "agreement)", DegenerateInputWarning, stacklevel=3)
    width = 3 + k

    def formula(name: str) -> Any:
        def f(s: np.ndarray) -> np.ndarray:
            cells = s[..., width:].reshape(*s.shape[:-1], -1, k) if name == "conger_kappa" \
                else None
            return coefficient_from_sums(name, s[..., :width], chance.wmat, cells)
        return f

    moments = np.sum([a["chance_moments"] for a in agree], axis=0)
    for name in names:
        out[name] = _coefficient(name, formula(name), point, reps, n_pairable, n_boot,
                                 confidence)
        out[name]["weights"] = wname
        out[name]["se"] = analytic_se(name, point[:width], moments, chance.wmat)
    return out


def _exact_mean(values: np.ndarray, mult: np.ndarray) -> float:
    """``math.fsum`` of every item's value over the items, from distinct values and counts."""
    total = sum((Fraction(float(v)) * int(c) for v, c in zip(values, mult, strict=True)),
                Fraction(0))
    n = int(mult.sum())
    return float(total) / n


def _median(values: np.ndarray, mult: np.ndarray) -> float:
    """``np.median`` of the multiset (each value repeated by its count)."""
    order = np.argsort(values, kind="stable")
    v, c = values[order], np.cumsum(mult[order])
    n = int(c[-1])
    lo = v[np.searchsorted(c, (n - 1) // 2, side="right")]
    hi = v[np.searchsorted(c, n // 2, side="right")]
    return float(np.median(np.array([lo, hi])))


def _count_figures(hist: list[dict[str, Any]], votes: DaskVotes, *, base: float, ties: str
                   ) -> dict[str, Any]:
    """The figures of the count vectors, from the partitions' histograms (:func:`_patterns`):
    sizes, votes per item, entropy, agreement, ties, counts per label, ratings and gold."""
    k = len(votes.labels)
    names = list(votes.labels.names)
    merged: Counter[tuple[int, ...]] = Counter()
    for h in hist:
        rows, mult = h["patterns"]
        for row, c in zip(map(tuple, rows.tolist()), mult.tolist(), strict=True):
            merged[row] += c
    rows = np.array(sorted(merged), dtype=np.int64).reshape(-1, k)
    mult = np.array([merged[tuple(r)] for r in rows.tolist()], dtype=np.int64)
    per_item = rows.sum(axis=1)
    ent = entropy(distributions(rows), base=base)
    share = rows.max(axis=1) / per_item
    maj = majority(rows, ties="first")
    label_counts = (rows * mult[:, None]).sum(axis=0)
    majority_counts = np.bincount(maj.labels, weights=mult, minlength=k).astype(np.int64)
    result: dict[str, Any] = {
        "schema_version": STATS_SCHEMA_VERSION,
        "source": votes.source,
        "read_as": f"{votes.source}: Dask engine, {votes.npartitions} partitions",
        "n_items": votes.n_items,
        "n_votes": votes.n_votes,
        "n_annotators": votes.n_annotators,
        "labels": names,
        "scale": getattr(votes.labels, "scale", "nominal"),
        "votes_per_item": {"min": int(per_item.min()), "median": _median(per_item, mult),
                           "max": int(per_item.max())},
        "entropy": {"base": base, "unit": entropy_unit(base), "mean": _exact_mean(ent, mult),
                    "median": _median(ent, mult)},
        "agreement": {"mean": _exact_mean(share, mult), "median": _median(share, mult),
                      **unanimous(share == 1, mult)},
        "ties": int(mult[maj.is_tied].sum()),
        "tie_policy": ties,
        "majority_change": None,
        "label_counts": {n: int(c) for n, c in zip(names, label_counts, strict=True)},
        "majority_counts": {n: int(c) for n, c in zip(names, majority_counts, strict=True)},
    }
    gold = [h["gold"] for h in hist if h["gold"] is not None]
    result["ratings"] = rating_summary(rows, votes.labels, mult)
    result["gold"] = None
    if gold:
        acc = sum((g[0] for g in gold), GoldAccuracy(0, 0, 0))
        result["gold"] = {"n_items": acc.n_items, "majority_accuracy": acc.accuracy,
                          "n_tied": sum(g[1] for g in gold), "tie_policy": ties,
                          "n_unknown_label": acc.n_unknown}
    return result


def _agreement_results(agree: list[dict[str, np.ndarray]], labels: Any, n_boot: int,
                       confidence: float) -> dict[str, Any]:
    """Krippendorff's alpha (at the labels' level) and Fleiss' kappa from the partitions'
    sums (:func:`_agreement_part`)."""
    k = len(labels)
    scale = getattr(labels, "scale", "nominal")
    n_single = sum(a["n_single"] for a in agree)
    point = np.sum([a["point"] for a in agree], axis=0)
    reps = np.sum([a["reps"] for a in agree], axis=0)
    n_pairable = int(point[0])
    values = labels.values if scale in ("interval", "ratio") else np.arange(k, dtype=float)
    if values is None:  # LabelSet gives every interval and ratio label set its values
        raise ValueError(f"a label set on the {scale} scale has no label values")
    alpha_fn = _alpha if scale == "nominal" else _level_alpha(
        scale, np.sum([a["pairs"] for a in agree], axis=0),
        np.sum([a["pairs_reps"] for a in agree], axis=0), values)
    result: dict[str, Any] = {}
    for key, f in (("krippendorff_alpha", alpha_fn), ("fleiss_kappa", _kappa)):
        if n_pairable == 0:
            result[key] = None
            continue
        if n_single:
            warnings.warn(f"{key}: {n_single} item(s) with fewer than two votes cannot be paired "
                          "and were left out", DegenerateInputWarning, stacklevel=3)
        result[key] = _coefficient(key, f, point, reps, n_pairable, n_boot, confidence)
    if result["krippendorff_alpha"] is not None:
        result["krippendorff_alpha"]["level"] = scale
    return result


def dataset_stats_dask(votes: DaskVotes, *, base: float = ENTROPY_BASE, n_boot: int = 1000,
                       confidence: float = 0.95, ties: str = "first",
                       rng: np.random.Generator | int | None = 0,
                       budget: int = 4_000_000) -> dict[str, Any]:
    """:func:`annokit.quality.dataset_stats.dataset_stats` on Dask votes.

    The same dictionary, with identical counts and statistics (see the module docstring);
    ``majority_change`` and ``old_majority_counts`` are absent (long tables carry no
    original labels), and ``ties`` may be ``"first"`` or ``"report"`` (``"first_seen"`` and
    ``"random"`` depend on the order of the rows or items, which partitions do not keep).
    On ordered scales alpha is at the labels' level, from the label totals and the (k, k)
    pair weights :func:`annokit.core.alpha_levels.pair_weights` summed over partitions
    (equal to the in-memory value to rounding), and ``ratings`` is computed from the
    distinct count rows.

    Examples
    --------
    >>> import dask
    >>> from annokit.core.votes import Votes
    >>> from annokit.scale.votes import from_votes
    >>> v = Votes.from_counts([[3, 1], [2, 2]], labels=["yes", "no"])
    >>> with dask.config.set(scheduler="synchronous"):
    ...     s = dataset_stats_dask(from_votes(v, npartitions=2), n_boot=0)
    >>> s["n_items"], s["ties"], s["label_counts"]
    (2, 1, {'yes': 5, 'no': 3})
    """
    import dask

    check_option("ties", ties, _DASK_TIES)
    scale = getattr(votes.labels, "scale", "nominal")
    ordered = scale != "nominal"
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise InvalidValueError(f"n_boot must be >= 0; got {n_boot!r}")
    k = len(votes.labels)
    seed = seed_from_rng(rng) if n_boot else 0
    parts = list(zip(votes.frame.to_delayed(), votes.items.to_delayed(), strict=True))
    wname = SCALE_WEIGHTS[scale]
    chance = _Chance(agreement_weights(wname, getattr(votes.labels, "values", None), n=k),
                     len(votes.require_annotators("conger_kappa"))
                     if votes.has_annotators else 0)
    both = [dask.delayed(_stats_part)(f, i, k, seed, int(n_boot), budget, ordered, chance)
            for f, i in parts]
    both = votes.compute(both)[0]
    hist, agree = [h for h, _ in both], [a for _, a in both]
    result = _count_figures(hist, votes, base=base, ties=ties)
    result.update(_agreement_results(agree, votes.labels, int(n_boot), confidence))
    n_pairable = int(np.sum([a["point"][0] for a in agree]))
    result.update(_chance_results(agree, chance, wname, n_pairable,
                                  sum(a["n_single"] for a in agree), int(n_boot), confidence, k))
    if not math.isfinite(result["entropy"]["mean"]):  # pragma: no cover - defensive
        raise InvalidValueError("entropy is not finite")
    return DatasetStats(by_scale(result))
