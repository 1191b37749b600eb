"""Annotator x label sums under bootstrap item weights, in one compiled pass over the votes.

Conger's kappa needs, for every replicate, each annotator's votes per label weighted by
the Poisson weight of the vote's item (:func:`annokit.core.agreement_gwet.conger_kappa`).
That is ``w @ X`` for the sparse items x (annotator, label) matrix ``X``; this loop reads
each vote once per chunk of replicates and adds its item's weights to its cell (the weights of
an item, a column of ``w``, are loaded once for all its votes). Imported on first use
(``import annokit`` does not import numba).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["cell_sums"]


@numba.njit(cache=True, nogil=True)
def cell_sums(w, indptr, cells, n_cells):  # pragma: no cover - compiled
    """``out[r, c] = sum_i w[r, i] * #(votes of item i in cell c)``.

    ``indptr`` (n_items + 1,) and ``cells`` (n_votes,): the votes grouped by item (CSR), each
    vote's cell ``annotator * n_labels + label``.
    """
    n_rep = w.shape[0]
    out = np.zeros((n_cells, n_rep))  # a cell's replicates side by side: one cache line
    col = np.empty(n_rep)
    for i in range(indptr.size - 1):
        lo, hi = indptr[i], indptr[i + 1]
        if lo == hi:
            continue
        for r in range(n_rep):
            col[r] = w[r, i]
        for j in range(lo, hi):
            c = cells[j]
            for r in range(n_rep):
                out[c, r] += col[r]
    return np.ascontiguousarray(out.T)
