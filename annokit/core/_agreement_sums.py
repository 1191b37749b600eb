"""The sums of every chance-corrected coefficient under bootstrap weights, in one compiled pass.

Percent agreement, Gwet's AC1/AC2, Brennan-Prediger and Conger's kappa
(:mod:`annokit.core.agreement_gwet`) are functions of two kinds of weighted sums: the sums of
per-item terms (``w @ terms``) and, for Conger's kappa, each annotator's votes per label
weighted by the Poisson weight of the vote's item (``w @ X`` for the sparse items x
(annotator, label) matrix ``X``). :func:`block_sums` computes both for a block of replicates in
one pass over the items and their votes: an item's weights are read once, as uint8 (a
Poisson(1) count is at most 20, so a block of 32 replicates of a million items is 32 MB), and
each vote adds them to its cell. The cell sums are integers, added exactly in int32; the term
sums are added item after item, so a replicate's sums do not depend on how replicates are
blocked. A block of many replicates reads the items and votes once for all of them (a chunk
of the float64 weights holds few replicates when there are many items). Imported on first use
(``import annokit`` does not import numba).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["block_sums"]


@numba.njit(cache=True, nogil=True)
def block_sums(wt, terms, indptr, cells, n_cells):  # pragma: no cover - compiled
    """Sums of a block of ``R`` replicates: ``(terms_sums (R, T), cell_sums (R, n_cells),
    total (R,))``.

    ``wt`` (R, n_items) uint8: each item's weight in each replicate; ``terms`` (n_items, T):
    the per-item terms; ``indptr`` (n_items + 1,) and ``cells`` (n_votes,): the votes grouped
    by item (CSR), each vote's cell ``annotator * n_labels + label`` (``n_cells = 0``: no
    cells); ``total``: the sum of every item's weight. Cell sums are exact below 2**31
    (a cell with fewer than 100 million votes).
    """
    n_rep, n = wt.shape
    n_terms = terms.shape[1]
    sums = np.zeros((n_terms, n_rep))
    out = np.zeros((n_cells, n_rep), dtype=np.int32)  # a cell's replicates side by side
    total = np.zeros(n_rep, dtype=np.int64)
    col = np.empty(n_rep, dtype=np.int32)
    for i in range(n):
        for r in range(n_rep):
            col[r] = wt[r, i]
        for r in range(n_rep):
            total[r] += col[r]
        for t in range(n_terms):
            x = terms[i, t]
            row = sums[t]
            for r in range(n_rep):
                row[r] += col[r] * x
        if n_cells:
            for j in range(indptr[i], indptr[i + 1]):
                cell = out[cells[j]]
                for r in range(n_rep):
                    cell[r] += col[r]
    return np.ascontiguousarray(sums.T), np.ascontiguousarray(out.T).astype(np.float64), total
