"""Agreement seen from the annotators: each one's influence on alpha, and every pair's kappa.

:func:`alpha_influence` gives Krippendorff's alpha without each annotator, like the "alpha if
item deleted" of reliability analyses, from the coincidences minus that annotator's share: a
vote removed from an item changes only that item's coincidences, so the change of the label
totals and pair weights (:func:`annokit.core.alpha_levels.pair_weights`) caused by removing an
annotator is a sum over the items they labelled, computed for every annotator at once (no
alpha is refitted). :func:`annotator_pairs` gives Cohen's kappa and the percent agreement of
every pair of annotators on the items both labelled, from one pass over the pairs of votes
that share an item.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from annokit.core.agreement import kappa_disagreement, kappa_from_tables
from annokit.core.alpha_levels import alpha_from_pairs, pair_weights
from annokit.core.checks import check_int
from annokit.core.scales import check_scale
from annokit.core.votes import Votes
from annokit.errors import SchemaError

__all__ = ["PAIR_WEIGHTS", "alpha_influence", "annotator_pairs", "influence_frame",
           "influence_sums", "merge_pair_tables", "pair_matrix", "pair_tables", "pairs_frame"]

#: Cohen's kappa weights of :func:`annotator_pairs` on each scale (positions of the labels).
PAIR_WEIGHTS = {"nominal": None, "ordinal": "linear", "interval": "quadratic",
                "ratio": "quadratic"}


def _annotator_votes(votes: Votes, what: str
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(item, annotator, label) codes of every vote and the annotator ids; SchemaError without
    annotator ids."""
    if votes.annotator_index is None or votes.annotator_ids is None:
        raise SchemaError(f"{votes.source}: {what} needs annotator ids (a long table with an "
                          "annotator column)")
    return (votes.item_index.astype(np.int64), votes.annotator_index.astype(np.int64),
            votes.label_index.astype(np.int64), np.asarray(votes.annotator_ids))


def _level_values(votes: Votes, level: str | None) -> tuple[str, np.ndarray]:
    level = check_scale(votes.labels.scale if level is None else level, name="level")
    values = votes.labels.values if level in ("interval", "ratio") else None
    k = len(votes.labels)
    return level, (np.arange(k, dtype=np.float64) if values is None
                   else np.asarray(values, dtype=np.float64))


def alpha_influence(votes: Votes, *, level: str | None = None) -> pd.DataFrame:
    """Krippendorff's alpha without each annotator, and the change from alpha with everyone.

    Parameters
    ----------
    votes : Votes
        With annotator ids.
    level : {"nominal", "ordinal", "interval", "ratio"}, optional
        Default: the labels' scale (as :func:`~annokit.core.agreement.krippendorff_alpha`).

    Returns
    -------
    DataFrame
        One row per annotator (index ``annotator``): ``n_votes``, ``alpha_without`` (NaN when
        nothing pairable or no variation is left) and ``alpha_change`` (``alpha_without``
        minus alpha with every annotator: positive when alpha rises without them).

    Notes
    -----
    With label totals :math:`t = \\sum_i c_i` and pair weights :math:`P = \\sum_i c_i
    c_i^T / (m_i - 1)` over items with :math:`m_i \\ge 2` votes, alpha is a function of
    :math:`(t, P)` (:func:`~annokit.core.alpha_levels.alpha_from_pairs`). Removing the votes
    :math:`e_i` of annotator ``g`` replaces each of their items' terms by those of
    :math:`c_i - e_i` (nothing once fewer than two votes remain), so
    :math:`t_{-g} = t + \\sum_{i \\in g} \\Delta t_i` and likewise for :math:`P`: one sum over
    the (annotator, item) pairs for all annotators. It equals alpha recomputed on the votes
    without ``g`` (``krippendorff.alpha``).

    Examples
    --------
    >>> df = pd.DataFrame({"item": list("aabbcc") + ["a", "b", "c"],
    ...                    "annotator": ["x", "y"] * 3 + ["z"] * 3,
    ...                    "label": list("110000") + list("010")})
    >>> alpha_influence(Votes.from_long(df))["alpha_change"].round(3).tolist()
    [-0.361, -0.361, 0.889]
    """
    item, who, label, ids = _annotator_votes(votes, "alpha_influence")
    level, v = _level_values(votes, level)
    sums = influence_sums(votes.counts(), item, who, label, len(ids))
    return influence_frame(sums, level, v, ids, np.bincount(who, minlength=len(ids)))


def influence_sums(counts: np.ndarray, item: np.ndarray, who: np.ndarray, label: np.ndarray,
                   n_annotators: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Label totals ``t`` (k,), pair weights ``P`` (k, k), and each annotator's changes of
    both, ``dt`` (r, k) and ``dP`` (r, k, k), over the items of ``counts``, whose votes are
    ``item`` (rows of ``counts``), ``who`` and ``label`` (alpha_influence's Notes).

    Every term is a sum over items, so sums over disjoint sets of whole items add up (the Dask
    engine sums its partitions').
    """
    counts = np.asarray(counts, dtype=np.float64)
    n_items, k = counts.shape
    r = n_annotators
    totals = (counts * (counts.sum(axis=1) >= 2)[:, None]).sum(axis=0)
    pairs = pair_weights(counts) if n_items else np.zeros((k, k))
    # the (annotator, item) pairs and the annotator's votes on the item
    key, inverse = np.unique(who * max(n_items, 1) + item, return_inverse=True)
    g, i = np.divmod(key, max(n_items, 1))
    e = np.bincount(inverse * k + label, minlength=key.size * k).reshape(key.size, k)
    c = counts[i]
    m = c.sum(axis=1)
    after = c - e
    m_after = m - e.sum(axis=1)
    keep_before, keep_after = m >= 2, m_after >= 2
    d_totals = after * keep_after[:, None] - c * keep_before[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        a_before = np.where(keep_before, 1.0 / (m - 1), 0.0)
        a_after = np.where(keep_after, 1.0 / (m_after - 1), 0.0)
    dt = np.zeros((r, k))
    dp = np.zeros((r, k, k))
    for a in range(k):
        dt[:, a] = np.bincount(g, d_totals[:, a], minlength=r)
        for b in range(a, k):
            cell = a_after * after[:, a] * after[:, b] - a_before * c[:, a] * c[:, b]
            dp[:, a, b] = dp[:, b, a] = np.bincount(g, cell, minlength=r)
    return totals, pairs, dt, dp


def influence_frame(sums: tuple[np.ndarray, ...], level: str, values: np.ndarray,
                    annotator_ids: Any, n_votes: np.ndarray) -> pd.DataFrame:
    """:func:`alpha_influence`'s frame from :func:`influence_sums` (merged over items)."""
    totals, pairs, dt, dp = sums
    base = float(alpha_from_pairs(level, totals, pairs, values)[0])
    without = alpha_from_pairs(level, totals[None, :] + dt, pairs[None, :, :] + dp, values)
    return pd.DataFrame({
        "annotator": np.asarray(annotator_ids).astype(str),
        "n_votes": np.asarray(n_votes).astype(np.int64),
        "alpha_without": without, "alpha_change": without - base,
    }).set_index("annotator")


def annotator_pairs(votes: Votes, *, min_shared: int = 10, weights: Any = "scale"
                    ) -> pd.DataFrame:
    """Cohen's kappa and percent agreement of every pair of annotators with enough shared items.

    Parameters
    ----------
    votes : Votes
        With annotator ids; one vote per (item, annotator) (repeated votes of an annotator on an
        item are not paired with each other, and each is paired with the other's votes).
    min_shared : int, default=10
        Pairs with fewer shared items are left out (their count is in ``attrs["n_left_out"]``).
    weights : {"scale", None, "linear", "quadratic"}, default="scale"
        Cohen's weights over label positions (:func:`annokit.core.agreement.cohen_kappa`);
        "scale": :data:`PAIR_WEIGHTS` of the labels' scale (unweighted on nominal labels).

    Returns
    -------
    DataFrame
        One row per pair, ``annotator_1`` < ``annotator_2`` in annotator order: ``n_shared``
        (items both labelled), ``kappa`` (NaN where the chance disagreement is 0),
        ``percent_agreement`` (share of shared items with the same label) and ``weights``.

    Examples
    --------
    >>> df = pd.DataFrame({"item": list("aabbccdd"), "annotator": ["x", "y"] * 4,
    ...                    "label": list("11000110")})
    >>> annotator_pairs(Votes.from_long(df), min_shared=2)[["n_shared", "kappa"]].values.tolist()
    [[4.0, 0.0]]
    """
    item, who, label, ids = _annotator_votes(votes, "annotator pairs")
    return pairs_frame(pair_tables(item, who, label, len(ids), len(votes.labels)), ids,
                       votes.labels.scale, min_shared=min_shared, weights=weights)


def pair_tables(item: np.ndarray, who: np.ndarray, label: np.ndarray, n_annotators: int,
                k: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of annotators who share an item (keys ``first * n_annotators + second``,
    sorted) and their (k, k) contingency tables, from votes on whole items: sums over items,
    so the tables of disjoint sets of items add up (:func:`merge_pair_tables`).

    An annotator's repeated votes on an item are not paired with each other; each is paired
    with the other annotators' votes. One compiled pass over the pairs of votes that share an
    item (:mod:`annokit.core._pair_tables`).
    """
    from annokit.core._pair_tables import count_pairs, fill_pairs

    who = np.asarray(who, dtype=np.int64)
    label = np.asarray(label, dtype=np.int64)
    order = np.lexsort((who, np.asarray(item)))  # by item, then annotator
    item_sorted = np.asarray(item)[order]
    new = np.ones(item_sorted.size, dtype=bool)
    new[1:] = item_sorted[1:] != item_sorted[:-1]
    vote_item = np.cumsum(new) - 1
    item_ptr = np.append(np.flatnonzero(new), item_sorted.size).astype(np.int64)
    item_who, item_label = who[order], label[order]
    by_who = np.argsort(item_who, kind="stable")
    who_ptr = np.zeros(n_annotators + 1, dtype=np.int64)
    np.cumsum(np.bincount(item_who, minlength=n_annotators), out=who_ptr[1:])
    per_first = count_pairs(by_who, who_ptr, vote_item, item_ptr, item_who)
    offsets = np.zeros(n_annotators + 1, dtype=np.int64)
    np.cumsum(per_first, out=offsets[1:])
    keys = np.empty(int(offsets[-1]), dtype=np.int64)
    tables = np.empty((keys.size, k, k), dtype=np.int64)
    fill_pairs(by_who, who_ptr, vote_item, item_label, item_ptr, item_who, item_label, k,
               offsets, keys, tables)
    return keys, tables


def merge_pair_tables(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Add :func:`pair_tables` of disjoint sets of items."""
    keys = np.concatenate([p[0] for p in parts])
    tables = np.concatenate([p[1] for p in parts])
    merged, inverse = np.unique(keys, return_inverse=True)
    out = np.zeros((merged.size, *tables.shape[1:]), dtype=tables.dtype)
    np.add.at(out, inverse, tables)
    return merged, out


def pairs_frame(tables: tuple[np.ndarray, np.ndarray], annotator_ids: Any, scale: str, *,
                min_shared: int = 10, weights: Any = "scale") -> pd.DataFrame:
    """:func:`annotator_pairs`' frame from :func:`pair_tables`."""
    min_shared = check_int("min_shared", min_shared, low=1)
    if weights == "scale":
        weights = PAIR_WEIGHTS[scale]
    pair, tab = tables
    k = tab.shape[-1]
    r = len(annotator_ids)
    tab = tab.astype(np.float64)
    n = tab.sum(axis=(1, 2))
    keep = n >= min_shared
    tab, pair, n = tab[keep], pair[keep], n[keep]
    ids = np.asarray(annotator_ids).astype(str)
    first, second = np.divmod(pair, r)
    empty = np.zeros(0)
    out = pd.DataFrame({
        "annotator_1": ids[first], "annotator_2": ids[second], "n_shared": n.astype(np.int64),
        "kappa": kappa_from_tables(tab, kappa_disagreement(weights, k)) if len(n) else empty,
        "percent_agreement": np.trace(tab, axis1=1, axis2=2) / n if len(n) else empty,
        "weights": "none" if weights is None else weights,
    })
    out.attrs["n_left_out"] = int((~keep).sum())
    out.attrs["min_shared"] = min_shared
    return out


def pair_matrix(pairs: pd.DataFrame, value: str = "kappa") -> pd.DataFrame:
    """The pairs as a symmetric annotator x annotator matrix (NaN where a pair is absent, 1 on
    the diagonal), rows and columns ordered so that annotators who agree stand together
    (average-linkage clustering of ``1 - value``, scipy; absent pairs count as distance 1)."""
    names = np.unique(np.concatenate([pairs["annotator_1"].to_numpy(dtype=str),
                                      pairs["annotator_2"].to_numpy(dtype=str)]))
    a = np.searchsorted(names, pairs["annotator_1"].to_numpy(dtype=str))
    b = np.searchsorted(names, pairs["annotator_2"].to_numpy(dtype=str))
    mat = np.full((names.size, names.size), np.nan)
    mat[a, b] = mat[b, a] = pairs[value].to_numpy(dtype=np.float64)
    np.fill_diagonal(mat, 1.0)
    order = np.arange(names.size)
    if names.size > 2:
        from scipy.cluster.hierarchy import leaves_list, linkage
        from scipy.spatial.distance import squareform

        dist = np.clip(1.0 - np.nan_to_num(mat, nan=0.0), 0.0, None)
        np.fill_diagonal(dist, 0.0)
        order = leaves_list(linkage(squareform(dist, checks=False), "average"))
    return pd.DataFrame(mat[np.ix_(order, order)], index=names[order], columns=names[order])

