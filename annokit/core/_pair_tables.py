"""Contingency tables of every pair of annotators who share an item, in one compiled pass.

:func:`annokit.core.annotator_agreement.pair_tables` needs, for each pair of annotators
``g < h`` with a shared item, the ``k x k`` table of their labels on the items both labelled.
The loop below takes the annotators one at a time: for annotator ``g`` it walks ``g``'s votes
and, on each vote's item, the votes of every annotator ``h > g``, adding one to cell
``(label of g, label of h)`` of a scratch table per ``h``; the ``h`` touched are then written
out in increasing order and their tables cleared. The work is one step per pair of votes that
share an item (about ``n_items * m * (m - 1) / 2`` for ``m`` votes per item) and the scratch
memory ``n_annotators * k * k``, whatever the number of pairs. Imported on first use
(``import annokit`` does not import numba).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["count_pairs", "fill_pairs"]


@numba.njit(cache=True, nogil=True)
def count_pairs(by_who, who_ptr, vote_item, item_ptr, item_who):  # pragma: no cover - compiled
    """The number of pairs ``g < h`` who share an item, per first annotator ``g``.

    ``by_who`` (n_votes,): the votes grouped by annotator (``who_ptr``, CSR); ``vote_item``:
    each vote's item; ``item_ptr`` and ``item_who``: the votes grouped by item (CSR), each
    item's annotators in increasing order.
    """
    r = who_ptr.size - 1
    seen = np.full(r, -1, dtype=np.int64)
    out = np.zeros(r, dtype=np.int64)
    for g in range(r):
        n = 0
        for j in range(who_ptr[g], who_ptr[g + 1]):
            i = vote_item[by_who[j]]
            for t in range(item_ptr[i + 1] - 1, item_ptr[i] - 1, -1):
                h = item_who[t]
                if h <= g:
                    break
                if seen[h] != g:
                    seen[h] = g
                    n += 1
        out[g] = n
    return out


@numba.njit(cache=True, nogil=True)
def fill_pairs(by_who, who_ptr, vote_item, vote_label, item_ptr, item_who, item_label, k,
               offsets, keys, tables):  # pragma: no cover - compiled
    """Write each pair's key ``g * n_annotators + h`` and its (k, k) table, pairs of ``g`` from
    ``offsets[g]`` on, ``h`` increasing (so the keys are sorted); arguments as
    :func:`count_pairs`, with each vote's label (``vote_label``, ``item_label``)."""
    r = who_ptr.size - 1
    scratch = np.zeros((r, k, k), dtype=tables.dtype)
    touched = np.empty(r, dtype=np.int64)
    seen = np.full(r, -1, dtype=np.int64)
    for g in range(r):
        n = 0
        for j in range(who_ptr[g], who_ptr[g + 1]):
            v = by_who[j]
            i = vote_item[v]
            a = vote_label[v]
            for t in range(item_ptr[i + 1] - 1, item_ptr[i] - 1, -1):
                h = item_who[t]
                if h <= g:
                    break
                if seen[h] != g:
                    seen[h] = g
                    touched[n] = h
                    n += 1
                scratch[h, a, item_label[t]] += 1
        hs = np.sort(touched[:n])
        base = offsets[g]
        for p in range(n):
            h = hs[p]
            keys[base + p] = g * r + h
            tables[base + p] = scratch[h]
            scratch[h] = 0
