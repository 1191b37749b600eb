"""The Poisson(1) bootstrap weights of :func:`annokit.core.resample.poisson_weights` in one loop.

The definition is in :mod:`annokit.core.resample`'s docstring: each weight is the
Poisson(1) inverse CDF of SplitMix64's output function of ``state[i] + (r + 1) *
gamma`` (``state[i]``: the same function of the item's key xor the mixed seed),
found in a table by the top bits (a binary search of the thresholds where a
threshold cuts the table's slice). One compiled pass writes each weight once with
unsigned 64-bit arithmetic; the tests compare it with a numpy evaluation of the
definition bit for bit. Imported on first use (``import annokit`` does not import
numba).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise

import numba
import numpy as np

__all__ = ["fill_weights", "fill_weights_threaded"]

#: Below this many weights one thread fills them all.
_THREAD_MIN = 1 << 20


@numba.njit(cache=True, nogil=True, inline="always")
def _mix(z, m1, m2):  # pragma: no cover - compiled
    """SplitMix64's output function on a uint64."""
    z ^= z >> np.uint64(30)
    z *= m1
    z ^= z >> np.uint64(27)
    z *= m2
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True, nogil=True)
def fill_weights(keys, seed, start, stop, gamma, m1, m2, table, thresholds, shift,
                 out):  # pragma: no cover - compiled
    """``out[r - start, i]``: the weight of item ``i`` in replicate ``r``, for ``start <= r < stop``.

    ``keys``: the items' keys (uint64); ``seed``: the tagged seed (uint64); ``gamma``,
    ``m1``, ``m2``: SplitMix64's constants; ``table``: the count for each
    top-``64 - shift``-bit slice (NaN where a threshold cuts it); ``thresholds``: the
    inverse-CDF thresholds (uint64, sorted).
    """
    seed_state = _mix(seed, m1, m2)
    for r in range(start, stop):
        c = np.uint64(r + 1) * gamma
        row = out[r - start]
        for i in range(keys.shape[0]):
            z = _mix(_mix(keys[i] ^ seed_state, m1, m2) + c, m1, m2)
            v = table[z >> shift]
            if v != v:  # NaN: a threshold cuts this slice of the table
                v = float(np.searchsorted(thresholds, z, side="right"))
            row[i] = v

def fill_weights_threaded(keys, seed, start, stop, gamma, m1, m2, table, thresholds, shift,
                          out) -> None:
    """:func:`fill_weights` on the CPUs this process may use: replicate rows split between
    threads (items when there is one row); each weight depends on its item and replicate
    only, so the split changes no bit."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    rows, n = out.shape
    threads = min(cpus, max(rows, n // _THREAD_MIN)) if out.size >= _THREAD_MIN else 1
    args = (gamma, m1, m2, table, thresholds, shift)
    if threads < 2:
        fill_weights(keys, seed, start, stop, *args, out)
        return
    if rows >= threads:
        cuts = np.linspace(0, rows, threads + 1).astype(int)
        jobs = [(keys, start + a, start + b, out[a:b]) for a, b in pairwise(cuts)]
    else:
        cuts = np.linspace(0, n, threads + 1).astype(int)
        jobs = [(keys[a:b], start, stop, out[:, a:b]) for a, b in pairwise(cuts)]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(lambda job: fill_weights(job[0], seed, job[1], job[2], *args,
                                               job[3]), jobs))
