"""Private engine of :mod:`annokit.subsample`: exact subsample draws and fast curve metrics.

Three samplers, all vectorised across items and repetitions (no Python loop
over items or votes):

* :func:`hypergeometric_counts` draws one k-vote subsample per item and
  repetition from counts alone, as a sequence of conditional univariate
  hypergeometric draws over labels (exact multivariate hypergeometric).
* :func:`nested_count_draws` draws a uniformly random vote order per item and
  repetition, one vote position at a time (the next vote's label is
  categorical over the votes not drawn yet), so the first k votes of the order
  are an exact k-subsample for every k at once.
* :func:`vote_rank_draws` permutes vote rows per item by sorting on
  (item, random key); the rank of a vote within its item says in which
  k-subsamples it is (rank < k). This is the long-vote path.

Metrics are computed by :func:`count_metrics`, one numba pass over chunks of
repetitions small enough to stay in cache, with the divergences of
:mod:`annokit.core.divergence_rows`: the functions that the named divergences
(:mod:`annokit.core.divergence`) and the metric kernels compute, in float64 (the
tests check equality with the named functions to 1e-12). The k-vote side and
the full-data side use the same operations, so k = n gives exact zeros.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numba
import numpy as np

from annokit.core import divergence_rows as div
from annokit.core.progress import notice_if_slow
from annokit.core.soft_labels import ENTROPY_BASE
from annokit.errors import InvalidValueError

__all__: list[str] = []

#: Upper bound on the (repetition, item, label) cells of one chunk: small enough that
#: the per-chunk working arrays stay in the CPU cache.
CELL_BUDGET = 1_000_000

#: Up to this many votes per item, vote positions are drawn from 16-bit words (4 per
#: 64-bit output; rejection rate below n / 2^16), else from 32-bit words.
BITS16_MAX_VOTES = 1024


def rep_chunks(reps: int, n_cells_per_rep: int) -> list[tuple[int, int]]:
    """Deterministic split of ``range(reps)`` into chunks bounded by ``CELL_BUDGET``."""
    size = max(1, min(reps, CELL_BUDGET // max(1, n_cells_per_rep)))
    return [(a, min(reps, a + size)) for a in range(0, reps, size)]


def hypergeometric_counts(counts: np.ndarray, k: np.ndarray, reps: int,
                          gen: np.random.Generator) -> np.ndarray:
    """k-vote subsample counts, shape (reps, n_items, n_labels), without replacement.

    ``k`` is the per-item sample size (``<= counts.sum(1)``). Multivariate
    hypergeometric by the chain rule: the count of label ``j`` given the
    counts of labels ``< j`` is hypergeometric with ``counts[:, j]`` good and
    ``sum(counts[:, j+1:])`` bad votes, and sample size ``k - drawn so far``.
    """
    n_items, n_labels = counts.shape
    out = np.empty((reps, n_items, n_labels), dtype=np.int64)
    left_pool = np.broadcast_to(counts.sum(axis=1), (reps, n_items)).astype(np.int64)
    left_k = np.broadcast_to(np.asarray(k, dtype=np.int64), (reps, n_items)).copy()
    for j in range(n_labels - 1):
        good = np.broadcast_to(counts[:, j], (reps, n_items))
        bad = left_pool - good
        x = gen.hypergeometric(good, bad, left_k)
        out[:, :, j] = x
        left_k -= x
        left_pool = bad
    out[:, :, -1] = left_k
    return out


def _bounded_ints(gen: np.random.Generator, s: np.ndarray, shape: tuple[int, int],
                  bits: int) -> np.ndarray:
    """Uniform integers in ``[0, s)`` (``s`` broadcastable to ``shape``; 0 gives 0), exactly.

    Lemire's multiply-and-shift with rejection (Lemire 2019, "Fast random
    integer generation in an interval", Algorithm 5): ``m = x * s`` for
    ``x`` uniform on ``[0, 2^bits)``; ``m >> bits`` is uniform on ``[0, s)``
    once draws with ``m mod 2^bits < 2^bits mod s`` are rejected and redrawn.
    ``bits`` is 16 (four draws per 64-bit output of the bit generator) or 32.
    """
    size = shape[0] * shape[1]
    per_word = 64 // bits
    dtype = np.uint16 if bits == 16 else np.uint32
    wide = np.uint32 if bits == 16 else np.uint64
    raw = gen.bit_generator.random_raw(-(-size // per_word))
    x = raw.view(dtype)[:size].reshape(shape).astype(wide)
    s = np.asarray(s)
    s_w = s.astype(wide)
    thresh = np.where(s > 0, (1 << bits) % np.maximum(s, 1), 0).astype(wide)  # per item
    s_full, thresh_full = np.broadcast_to(s_w, shape), np.broadcast_to(thresh, shape)
    m = x * s_w
    mask = wide((1 << bits) - 1)
    low = m & mask
    rejected = np.less(low, thresh, out=np.empty(shape, dtype=bool))
    bad = np.nonzero(rejected) if rejected.any() else (np.zeros(0, np.intp),) * 2
    while bad[0].size:  # rare: probability below s / 2^bits per draw
        redo = gen.bit_generator.random_raw(-(-bad[0].size // per_word))
        xr = redo.view(dtype)[: bad[0].size].astype(wide)
        mr = xr * s_full[bad]
        m[bad] = mr
        still = (mr & mask) < thresh_full[bad]
        bad = (bad[0][still], bad[1][still])
    m >>= wide(bits)
    # values are below s < 2^31: reinterpret the 32-bit words, convert the 64-bit ones
    return m.view(np.int32) if bits == 16 else m.astype(np.int32)


def nested_count_draws(counts: np.ndarray, k_max: int, reps: int, gen: np.random.Generator,
                       stops: Sequence[int]) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(k, X)`` for each k in ``stops``; ``X`` has shape (n_labels - 1, reps, n_items).

    ``X[j]`` counts the first k votes (of a uniformly random order of each
    item's votes) whose label is ``<= j``. At draw ``t`` an item with ``r``
    votes left draws ``v`` uniform on ``{0, ..., r - 1}`` (exactly, see
    :func:`_bounded_ints`); the vote's label is ``<= j`` when
    ``v < sum_{l<=j} remaining_l``, so ``X[j] += v < (C[j] - X[j])`` with
    ``C`` the cumulative full counts. Items with no votes left draw ``v = 0``,
    which adds nothing since their remaining counts are all 0.
    """
    n_items, n_labels = counts.shape
    n = counts.sum(axis=1)
    bits = 16 if n.max() <= BITS16_MAX_VOTES else 32
    cum = np.ascontiguousarray(np.cumsum(counts, axis=1)[:, : n_labels - 1].T, dtype=np.int32)
    X = np.zeros((n_labels - 1, reps, n_items), dtype=np.int32)
    stop_set = {int(s) for s in stops}
    tmp = np.empty((reps, n_items), dtype=np.int32)
    hit = np.empty((reps, n_items), dtype=bool)
    for t in range(1, k_max + 1):
        left = np.maximum(n - (t - 1), 0)
        v = _bounded_ints(gen, left, (reps, n_items), bits)
        for j in range(n_labels - 1):
            np.subtract(cum[j], X[j], out=tmp)
            np.less(v, tmp, out=hit)
            np.add(X[j], hit, out=X[j])
        if t in stop_set:
            yield t, X


def vote_rank_draws(item_index: np.ndarray, n_items: int, reps: int,
                    gen: np.random.Generator) -> np.ndarray:
    """Rank of every vote within its item under a random order, shape (reps, n_votes).

    Sorting on (item, random key) permutes each item's votes uniformly; the
    rank is the position after the item's first row in that order.
    """
    n_votes = len(item_index)
    starts = np.concatenate([[0], np.cumsum(np.bincount(item_index, minlength=n_items))[:-1]])
    ranks = np.empty((reps, n_votes), dtype=np.int64)
    for r in range(reps):  # one sort per repetition; vectorised over votes
        keys = gen.random(n_votes)
        order = np.lexsort((keys, item_index))
        ranks[r, order] = np.arange(n_votes) - starts[item_index[order]]
    return ranks


def ranks_to_cumulative(item_index: np.ndarray, label_index: np.ndarray, ranks: np.ndarray,
                        n_items: int, n_labels: int, k: int) -> np.ndarray:
    """Counts of the votes with rank < k, as ``X`` of :func:`nested_count_draws`."""
    reps = ranks.shape[0]
    X = np.zeros((n_labels - 1, reps, n_items), dtype=np.int32)
    rows = np.broadcast_to(np.arange(reps)[:, None], ranks.shape)
    items = np.broadcast_to(item_index, ranks.shape)
    taken = ranks < k
    for j in range(n_labels - 1):
        sel = taken & (label_index <= j)[None, :]
        X[j] = np.bincount(rows[sel] * n_items + items[sel],
                           minlength=reps * n_items).reshape(reps, n_items)
    return X


def cumulative_to_counts(X: np.ndarray, kk: np.ndarray) -> np.ndarray:
    """Per-label counts (n_labels, reps, n_items) from cumulative ``X`` and sizes ``kk``.

    int16 when every size fits (half the memory traffic of int32), else int32.
    """
    dtype = np.int16 if kk.max() < 2**15 else np.int32
    out = np.empty((X.shape[0] + 1,) + X.shape[1:], dtype=dtype)
    out[0] = X[0]
    np.subtract(X[1:], X[:-1], out=out[1:-1], casting="unsafe")
    np.subtract(kk.astype(np.int32), X[-1], out=out[-1], casting="unsafe")
    return out


class Reference:
    """Per-item quantities of the full-data distribution reused at every k.

    ``values``: the category values of an ordered scale (``wasserstein``), or None.
    """

    def __init__(self, counts: np.ndarray, *, kl_smoothing: float,
                 values: np.ndarray | None = None):
        counts = np.asarray(counts, dtype=np.int64)
        #: category values of an ordered scale (``wasserstein``), or None
        self.values = None if values is None else np.ascontiguousarray(values, dtype=np.float64)
        self.counts = counts
        self.n = counts.sum(axis=1)
        self.n_labels = counts.shape[1]
        #: full-data majority labels, (L, N)
        self.top = np.ascontiguousarray((counts == counts.max(axis=1, keepdims=True)).T)
        self.alpha = float(kl_smoothing)
        #: log of the integers 0 .. max n (log 0 given as 0: always multiplied by 0)
        self.log_int = np.log(np.maximum(np.arange(int(self.n.max()) + 1), 1.0))
        #: log(x + alpha) for the counts x = 0 .. max n
        self.log_x_alpha = np.log(np.arange(int(self.n.max()) + 1) + self.alpha)
        # computed exactly as the k-vote side is (_count_values), so that k = n gives zeros
        #: the full-data distribution, (L, N) (rows broadcast along reps), and its log
        #: (finite where p = 0)
        self.p = np.ascontiguousarray((counts / self.n[:, None]).T)
        #: p / 2, and the smallest normal float where p = 0: m = (p + q) / 2 is then never
        #: 0 (its log is finite, times 0) and otherwise unchanged (tiny is far below its ulp)
        self.half_p = np.where(self.p > 0, 0.5 * self.p, _TINY)
        self.log_p = np.ascontiguousarray((self.log_int[counts]
                                           - self.log_int[self.n][:, None]).T)
        # -H(p): the entropy bias of p against a zero reference (H = 0), negated
        self.sum_plogp = np.zeros(len(counts))
        x = np.ascontiguousarray(counts.T[:, None, :],
                                 np.int16 if self.n.max() < 2**15 else np.int32)
        self.sum_plogp = -_values(x, self.n, self, ["entropy_bias"])[0, 0]


#: The smallest normal float64: where a zero's log is taken instead (it is multiplied by 0).
_TINY = np.finfo(np.float64).tiny

METRICS = ("tvd", "jsd", "kl", "majority_agreement", "majority_tie", "entropy_bias",
           "wasserstein")


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _count_values(x, kk, log_kk, p, log_p, sum_plogp, top, values, log_int, log_x_alpha,
                  log_den, log_m, slot, out):  # pragma: no cover - compiled
    """``out[slot[m], r, i]`` = metric ``m`` (index into METRICS; slot -1: not computed) of
    the k-vote counts ``x[:, r, i]`` against the full-data distribution ``p[:, i]``.

    The divergences are the terms of :mod:`annokit.core.divergence_rows`, summed over
    the labels. Labels are the outer loop and items the inner one, so that each loop
    reads contiguous rows and vectorises; ``log q = log x - log kk`` from a table of
    logs of integers, ``log_m[j, r, i] = log((p + q) / 2)`` computed by numpy
    (vectorised; numba's scalar log is 3.7x slower). One loop over the items per
    label and quantity (LLVM vectorises small loops): 1.3x faster than one fused loop,
    for 0.2 s more compile time (about 1 s of CPU once the process has compiled any kernel).
    """
    n_labels, reps, n_items = x.shape
    do_tv, do_js, do_kl = slot[0] >= 0, slot[1] >= 0, slot[2] >= 0
    do_top, do_ent, do_w = (slot[3] >= 0) | (slot[4] >= 0), slot[5] >= 0, slot[6] >= 0
    acc = np.empty((6, n_items))
    tv, js, kl, sq, cum, w = acc[0], acc[1], acc[2], acc[3], acc[4], acc[5]
    counters = np.empty((3, n_items), dtype=np.int64)
    best, n_top, hits = counters[0], counters[1], counters[2]
    q, lq = np.empty(n_items), np.empty(n_items)
    for r in range(reps):
        acc[:] = 0.0
        counters[:] = 0
        if do_top:
            x0 = x[0, r]
            for i in range(n_items):  # not best[:] = x[0, r]: the shape check of a slice
                best[i] = x0[i]       # assignment, and its message, take numba ~7 s to compile
            for j in range(1, n_labels):
                xr = x[j, r]
                for i in range(n_items):
                    best[i] = max(best[i], xr[i])
        for j in range(n_labels):
            xr, pj, lpj = x[j, r], p[j], log_p[j]
            for i in range(n_items):
                q[i] = xr[i] / kk[i]
            if do_tv:
                for i in range(n_items):
                    tv[i] += div.tv_term(q[i], pj[i])
            if do_js or do_ent:
                for i in range(n_items):
                    lq[i] = log_int[xr[i]] - log_kk[i]  # finite where q = 0 (times 0)
            if do_ent:
                for i in range(n_items):
                    sq[i] += div.plogp_term(q[i], lq[i])
            if do_js:
                lmj = log_m[j, r]
                for i in range(n_items):
                    js[i] += div.js_term_logs(pj[i], q[i], lpj[i], lq[i], lmj[i])
            if do_kl:  # KL(p || q_alpha), log q_alpha = log(x + alpha) - log(kk + L alpha)
                for i in range(n_items):
                    kl[i] += div.kl_term(pj[i], lpj[i], log_x_alpha[xr[i]] - log_den[i])
            if do_top:
                tj = top[j]
                for i in range(n_items):
                    is_top = xr[i] == best[i]
                    n_top[i] += 1 if is_top else 0
                    hits[i] += 1 if is_top & tj[i] else 0
            if do_w and j < n_labels - 1:  # c = F_q(j) - F_p(j)
                lo, hi = values[j], values[j + 1]
                for i in range(n_items):
                    cum[i] += q[i] - pj[i]
                    w[i] += div.wasserstein_term(cum[i], lo, hi)
        for i in range(n_items):
            if do_tv:
                out[slot[0], r, i] = div.tv_distance(tv[i])
            if do_js:
                out[slot[1], r, i] = div.js_distance(js[i])
            if do_kl:
                out[slot[2], r, i] = kl[i]
            if slot[3] >= 0:
                out[slot[3], r, i] = hits[i] / n_top[i]
            if slot[4] >= 0:
                out[slot[4], r, i] = 1.0 if n_top[i] > 1 else 0.0
            if do_ent:
                out[slot[5], r, i] = div.entropy_gap(sq[i], sum_plogp[i])
            if do_w:
                out[slot[6], r, i] = w[i]


def _values(x: np.ndarray, kk: np.ndarray, ref: Reference, names: list[str]) -> np.ndarray:
    """(len(names), reps, n_items) values of :func:`_count_values` (entropies in nats)."""
    slot = np.array([names.index(m) if m in names else -1 for m in METRICS], dtype=np.int64)
    n_labels, reps, n_items = x.shape
    kk = np.ascontiguousarray(kk, dtype=np.int64)
    if "jsd" in names:  # log((p + q) / 2) = log(q / 2 + p / 2), vectorised by numpy
        log_m = x / (2 * kk)  # halving is exact: the same m as (p + q) / 2
        log_m += ref.half_p[:, None, :]
        np.log(log_m, out=log_m)
    else:
        log_m = np.zeros((1, 1, 1))
    log_den = np.log(kk + n_labels * ref.alpha)
    values = ref.values if ref.values is not None else np.zeros(n_labels)
    res = np.empty((len(names), reps, n_items))
    args = (x, kk, ref.log_int[kk], ref.p, ref.log_p, ref.sum_plogp, ref.top, values,
            ref.log_int, ref.log_x_alpha, log_den, log_m, slot, res)
    if not _count_values.signatures:  # load it from numba's cache, or compile it once
        with notice_if_slow("annokit: compiling the subsampling kernel (once per environment; "
                            "later runs load it from the cache) ..."):
            _count_values(*args)
    else:
        _count_values(*args)
    return res


def count_metrics(x: np.ndarray, kk: np.ndarray, ref: Reference,
                  which: Sequence[str] | None = None) -> tuple[list[str], np.ndarray]:
    """Per (repetition, item) metrics of k-vote counts ``x`` against the full data.

    Parameters
    ----------
    x : ndarray of shape (n_labels, reps, n_items)
        Vote counts of the k-vote estimate.
    kk : ndarray of shape (n_items,)
        Votes in each item's estimate (``k``, or fewer for short items kept).
    which : sequence of str, optional
        The metrics to compute; default every one of :data:`METRICS` that the
        reference allows (``wasserstein`` needs ``ref.values``).

    Returns the metric names (in :data:`METRICS` order) and an array of
    shape (n_metrics, reps, n_items), float64 (items on the inner axis, so that
    per-item quantities broadcast along contiguous rows). With ``q = x / kk`` the
    k-vote distribution and ``p`` the full data's, the divergences are those of
    :mod:`annokit.core.divergence` (one implementation,
    :mod:`annokit.core.divergence_rows`):

    * ``tvd``: ``TVD(q, p)``;
    * ``jsd``: the Jensen-Shannon distance (natural log, ``scipy`` convention);
    * ``kl``: ``KL(p || q_alpha)`` in nats with ``q_alpha = (x + alpha) / (kk + L alpha)``;
    * ``majority_agreement``: ``|S cap F| / |S|`` with ``S`` the top labels of the
      k-vote counts and ``F`` those of the full data: the probability that the
      k-vote majority, ties broken uniformly at random, is a full-data majority label;
    * ``majority_tie``: 1 where the k-vote majority is tied;
    * ``entropy_bias``: ``H(q) - H(p)`` in nats (``core.soft_labels.ENTROPY_BASE``);
    * ``wasserstein`` (ordered scales, ``ref.values``): Wasserstein-1 between ``q``
      and ``p`` on the category values.
    """
    if which is None:  # every metric the reference allows
        which = [m for m in METRICS if m != "wasserstein" or ref.values is not None]
    if "wasserstein" in which and ref.values is None:
        raise InvalidValueError("wasserstein needs the label distances of an ordered scale")
    names = [m for m in METRICS if m in which]
    res = _values(x, kk, ref, names)
    if "entropy_bias" in names and ENTROPY_BASE != math.e:
        res[names.index("entropy_bias")] /= np.log(ENTROPY_BASE)
    return names, res


def group_matrix(groups: np.ndarray, n_groups: int, include: np.ndarray | None) -> np.ndarray:
    """(n_groups, n_items) indicator of each included item's group."""
    w = np.zeros((n_groups, len(groups)))
    w[groups, np.arange(len(groups))] = 1.0 if include is None else include
    return w


def summarise(res: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Means over items per repetition, overall and per item group.

    ``res`` (n_metrics, reps, n_items) holds per-item values; ``groups``
    (n_groups, n_items) is :func:`group_matrix`. Returns (n_metrics, reps,
    1 + n_groups): column 0 the mean over all included items, then one column
    per group (NaN when the group has no included item).
    """
    sums = np.matmul(res, groups.T)  # (M, reps, G)
    sizes = groups.sum(axis=1, dtype=np.float64)
    out = np.empty((res.shape[0], res.shape[1], 1 + groups.shape[0]))
    out[:, :, 0] = sums.sum(axis=2) / sizes.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        out[:, :, 1:] = sums / sizes
    out[:, :, 1:][:, :, sizes == 0] = np.nan
    return out


