"""Per-annotator statistics: volume, agreement with the others, gold accuracy,
label-usage entropy, and Krippendorff's alpha with and without each annotator.

All statistics are computed for every annotator at once from per-vote arrays
(``np.bincount`` over annotator codes); leave-one-out quantities subtract an
annotator's own votes from the item counts instead of recomputing anything per
annotator.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from annokit.core.agreement import coincidence_parts, nominal_alpha
from annokit.core.votes import Votes
from annokit.quality.common import gold_codes, require_annotators, require_votes

__all__ = ["annotator_stats", "krippendorff_alpha_nominal", "max_consecutive_wrong"]


def krippendorff_alpha_nominal(votes: Votes) -> float:
    """Krippendorff's alpha for nominal labels over all items with two or more votes.

    The value of :func:`annokit.core.agreement.krippendorff_alpha` on
    ``votes.counts()`` (the same formula, :func:`~annokit.core.agreement.nominal_alpha`),
    as a float, without its warnings: items with one vote are left out silently
    and no pairable item gives NaN (the leave-one-out columns of
    :func:`annotator_stats` need both).

    Examples
    --------
    >>> df = pd.DataFrame({"item": list("aabbcc"), "annotator": list("xyxyxy"),
    ...                    "label": list("110101")})
    >>> round(krippendorff_alpha_nominal(Votes.from_long(df)), 4)
    -0.25
    """
    votes = require_votes(votes, "krippendorff_alpha_nominal")
    disagreement, pairable = coincidence_parts(votes.counts().astype(np.float64))
    return float(nominal_alpha(disagreement.sum(), pairable.sum(axis=0)))


def max_consecutive_wrong(votes: Votes, gold: Any = None) -> np.ndarray:
    """Longest run of consecutive wrong answers on gold items per annotator, in vote order.

    Only votes on items with a gold label count; their order is the row order of
    ``votes`` (file order). Returns an int array of shape (n_annotators,).

    Examples
    --------
    >>> df = pd.DataFrame({"item": list("abcdab"), "annotator": list("xxxxyy"),
    ...                    "label": list("101011"), "gold": list("000000")})
    >>> max_consecutive_wrong(Votes.from_long(df, gold="gold")).tolist()
    [1, 2]
    """
    votes = require_annotators(votes, "max_consecutive_wrong")
    annotators, annotator_ids = votes.annotator_codes("max_consecutive_wrong")
    g = gold_codes(votes, gold, what="max_consecutive_wrong")
    on_gold = np.flatnonzero(g[votes.item_index] >= 0)
    out = np.zeros(len(annotator_ids), dtype=np.int64)
    if on_gold.size == 0:
        return out
    ann = annotators[on_gold]
    order = np.argsort(ann, kind="stable")          # group by annotator, keep vote order
    rows = on_gold[order]
    ann = ann[order]
    wrong = votes.label_index[rows] != g[votes.item_index[rows]]
    pos = np.arange(rows.size)
    start = np.ones(rows.size, dtype=bool)
    start[1:] = ann[1:] != ann[:-1]
    # last position that breaks a run: a correct answer, or just before an annotator's first vote
    marker = np.where(~wrong, pos, np.where(start, pos - 1, -1))
    last_break = np.maximum.accumulate(marker)
    run = np.where(wrong, pos - last_break, 0)
    np.maximum.at(out, ann, run)
    return out


def annotator_stats(votes: Votes, *, gold: Any = None, alpha: bool = True) -> pd.DataFrame:
    """One row of quality statistics per annotator.

    Parameters
    ----------
    votes : Votes
        With annotator ids.
    gold : array-like of shape (n_items,) or mapping of item id to label, optional
        Gold label codes (-1 = none); default ``votes.gold``.
    alpha : bool, default=True
        Also compute Krippendorff's alpha without each annotator.

    Returns
    -------
    DataFrame with columns
        ``annotator``, ``n_votes``, ``agreement`` (mean share of the *other* votes on
        the same item that agree with the annotator's vote: the chance a random
        co-annotator agrees), ``loo_majority_agreement`` (share of votes equal to the
        leave-one-out majority of the other votes; a tie among the others counts
        ``1 / n_tied`` when the vote is one of the tied labels), ``n_gold``,
        ``gold_accuracy`` (NaN without gold votes), ``max_consecutive_wrong``,
        ``label_entropy`` (normalised entropy of the annotator's label usage: 0 for
        the "always the same label" spammer, 1 for uniform use), and with
        ``alpha=True`` ``alpha_without`` and ``alpha_delta`` (alpha of all votes minus
        alpha without the annotator: positive when the annotator raises agreement).
        Agreement columns are NaN for annotators whose items have no other vote.

    Examples
    --------
    >>> df = pd.DataFrame({"item": list("aaabbbccc"), "annotator": list("xyzxyzxyz"),
    ...                    "label": list("110001111")})
    >>> annotator_stats(Votes.from_long(df))[["annotator", "agreement"]].round(3).values.tolist()
    [['x', 0.667], ['y', 0.667], ['z', 0.333]]
    """
    votes = require_annotators(votes, "annotator_stats")
    ann, annotator_ids = votes.annotator_codes("annotator_stats")
    n_ann = len(annotator_ids)
    counts = votes.counts()
    n_votes = np.bincount(ann, minlength=n_ann)
    agreement, loo_agreement = _agreement_columns(votes, ann, n_ann, counts)
    g = gold_codes(votes, gold, what="annotator_stats")
    g_v = g[votes.item_index]
    gold_acc, n_gold = _per_annotator_mean(ann, n_ann, (votes.label_index == g_v).astype(
        np.float64), g_v >= 0)
    table = pd.DataFrame({
        "annotator": annotator_ids.astype(object),
        "n_votes": n_votes,
        "agreement": agreement,
        "loo_majority_agreement": loo_agreement,
        "n_gold": n_gold,
        "gold_accuracy": gold_acc,
        "max_consecutive_wrong": max_consecutive_wrong(votes, g),
        "label_entropy": _label_entropy(votes, n_votes),
    })
    if alpha:
        without = _alpha_without(votes, counts)
        total = krippendorff_alpha_nominal(votes)
        table["alpha_without"] = without
        table["alpha_delta"] = total - without
    return table


def _per_annotator_mean(ann: np.ndarray, n_ann: int, values: np.ndarray, mask: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Each annotator's mean of ``values`` over their votes in ``mask`` (NaN for none), and
    how many votes that is."""
    num = np.bincount(ann[mask], weights=values[mask], minlength=n_ann)
    den = np.bincount(ann[mask], minlength=n_ann)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan), den


def _agreement_columns(votes: Votes, ann: np.ndarray, n_ann: int, counts: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    """``agreement`` (the share of the other votes on the item that agree with the vote) and
    ``loo_majority_agreement`` (a tie among the others counts ``1 / n_tied``), per annotator
    over their votes on items with another vote."""
    item, lab = votes.item_index, votes.label_index
    m_v = counts.sum(axis=1)[item]
    shared = m_v >= 2
    same = counts[item, lab]
    with np.errstate(invalid="ignore", divide="ignore"):
        pair_agree = (same - 1) / (m_v - 1)
    agreement, _ = _per_annotator_mean(ann, n_ann, np.where(shared, pair_agree, 0.0), shared)
    loo = counts[item].astype(np.int64)
    loo[np.arange(len(lab)), lab] -= 1
    top = loo == loo.max(axis=1, keepdims=True)
    loo_hit = top[np.arange(len(lab)), lab] / top.sum(axis=1)
    loo_agreement, _ = _per_annotator_mean(ann, n_ann, np.where(shared, loo_hit, 0.0), shared)
    return agreement, loo_agreement


def _label_entropy(votes: Votes, n_votes: np.ndarray) -> np.ndarray:
    """The normalised entropy of each annotator's label usage (NaN without votes)."""
    n_labels = votes.n_labels
    usage = votes.annotator_label_counts().astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = usage / usage.sum(axis=1, keepdims=True)
        terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
        ent = -terms.sum(axis=1) / np.log(n_labels) if n_labels > 1 else np.zeros(len(n_votes))
    return np.where(n_votes > 0, np.maximum(ent, 0.0), np.nan)


def _alpha_without(votes: Votes, counts: np.ndarray) -> np.ndarray:
    """Nominal alpha with each annotator's votes removed, for all annotators at once.

    Removing annotator ``j`` only changes the items ``j`` voted on: per (item,
    annotator) pair we subtract the item's old disagreement and label counts
    (:func:`~annokit.core.agreement.coincidence_parts`) and add those of its
    counts without ``j``'s votes.
    """
    annotators, annotator_ids = votes.annotator_codes("_alpha_without")
    n_ann, n_labels = len(annotator_ids), votes.n_labels
    counts = counts.astype(np.float64)
    d_i, marg_i = coincidence_parts(counts)
    d_total, marg_total = d_i.sum(), marg_i.sum(axis=0)

    key = votes.item_index.astype(np.int64) * n_ann + annotators
    pair_keys, pair_of_vote = np.unique(key, return_inverse=True)
    pair_item = pair_keys // n_ann
    pair_ann = pair_keys % n_ann
    removed = np.bincount(pair_of_vote.astype(np.int64) * n_labels + votes.label_index,
                          minlength=len(pair_keys) * n_labels).reshape(-1, n_labels)
    new_d, new_marg = coincidence_parts(counts[pair_item] - removed)
    delta_d = np.bincount(pair_ann, weights=d_i[pair_item] - new_d, minlength=n_ann)
    flat = pair_ann[:, None] * n_labels + np.arange(n_labels)
    delta_marg = np.bincount(flat.reshape(-1), weights=(marg_i[pair_item] - new_marg).reshape(-1),
                             minlength=n_ann * n_labels).reshape(n_ann, n_labels)
    return nominal_alpha(d_total - delta_d, marg_total[None, :] - delta_marg)
