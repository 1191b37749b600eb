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

Metrics are computed by :func:`count_metrics` in float32 with in-place
ufuncs over chunks of repetitions small enough to stay in cache: the same
quantities as :mod:`annokit.core.divergence` and
:mod:`annokit.core.soft_labels` (tests check agreement to float32 precision), at
a fraction of the cost, which the k = 1..100 benchmark needs. The k-vote
side and the full-data side use the same float32 operations, so k = n gives
exact zeros.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np

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
    stops = {int(s) for s in stops}
    tmp = np.empty((reps, n_items), dtype=np.int32)
    hit = np.empty((reps, n_items), dtype=bool)
    for t in range(1, k_max + 1):
        left = np.maximum(n - (t - 1), 0)
        v = _bounded_ints(gen, left, (reps, n_items), bits)
        for j in range(n_labels - 1):
            np.subtract(cum[j], X[j], out=tmp)
            np.less(v, tmp, out=hit)
            np.add(X[j], hit, out=X[j])
        if t in stops:
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


_TINY = np.float32(1e-30)


class Reference:
    """Per-item quantities of the full-data distribution reused at every k (float32)."""

    def __init__(self, counts: np.ndarray, *, kl_smoothing: float,
                 gaps: np.ndarray | None = None):
        counts = np.asarray(counts, dtype=np.int64)
        #: distances between neighbouring labels on an ordered scale (``wasserstein``), or None
        self.gaps = None if gaps is None else np.asarray(gaps, dtype=np.float32)
        self.counts = counts
        self.n = counts.sum(axis=1)
        self.n_labels = counts.shape[1]
        # computed exactly as the k-vote side is, so that k = n gives exact zeros
        p = counts.astype(np.float32) / self.n.astype(np.float32)[:, None]
        self.p = np.ascontiguousarray(p.T)  # (L, N): rows broadcast along reps
        pc = np.maximum(p, _TINY)
        self.sum_plogp = (p * np.log(pc)).sum(axis=1, dtype=np.float32)  # -H(p), (N,)
        self.top = np.ascontiguousarray((counts == counts.max(axis=1, keepdims=True)).T)
        self.alpha = np.float32(kl_smoothing)


METRICS = ("tvd", "jsd", "kl", "majority_agreement", "majority_tie", "entropy_bias",
           "wasserstein")


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
        reference allows (``wasserstein`` needs ``ref.gaps``).

    Returns the metric names (in :data:`METRICS` order) and an array of
    shape (n_metrics, reps, n_items), float32 (items on the inner axis, so that
    per-item quantities broadcast along contiguous rows):

    * ``tvd``: ``0.5 * sum_j |q_j - p_j|`` with ``q = x / kk`` and ``p`` the full data.
    * ``jsd``: Jensen-Shannon distance, natural log (``scipy`` convention):
      ``sqrt(H(m) - (H(p) + H(q)) / 2)`` with ``m = (p + q) / 2``.
    * ``kl``: ``KL(p || q_alpha)`` in nats with ``q_alpha = (x + alpha) / (kk + L alpha)``,
      i.e. ``sum p log p - sum_j p_j log(x_j + alpha) + log(kk + L alpha)``.
    * ``majority_agreement``: ``|S cap F| / |S|`` with ``S`` the top labels of the
      k-vote counts and ``F`` those of the full data: the probability that the
      k-vote majority, ties broken uniformly at random, is a full-data majority label.
    * ``majority_tie``: 1 where the k-vote majority is tied.
    * ``entropy_bias``: ``H(q) - H(p)`` in nats (``core.soft_labels.ENTROPY_BASE``).
    * ``wasserstein`` (ordered scales, ``ref.gaps``): Wasserstein-1 between ``q`` and
      ``p`` on the label line, ``sum_j |Q_j - P_j| (v_{j+1} - v_j)`` over the
      cumulative distributions.
    """
    if which is None:  # every metric the reference allows
        which = [m for m in METRICS if m != "wasserstein" or ref.gaps is not None]
    which = set(which)
    n_labels, reps, n_items = x.shape
    kk32 = kk.astype(np.float32)
    shape = (reps, n_items)
    f32 = np.float32
    tvd = np.zeros(shape, f32) if "tvd" in which else None
    need_hq = bool({"jsd", "entropy_bias"} & which)
    sqlogq = np.zeros(shape, f32) if need_hq else None
    smlogm = np.zeros(shape, f32) if "jsd" in which else None
    cross = np.zeros(shape, f32) if "kl" in which else None
    if "wasserstein" in which and ref.gaps is None:
        raise InvalidValueError("wasserstein needs the label distances of an ordered scale")
    emd = np.zeros(shape, f32) if "wasserstein" in which else None
    cum = np.zeros(shape, f32) if emd is not None else None  # Q_j - P_j
    q = np.empty(shape, f32)
    tmp = np.empty(shape, f32)
    tmp2 = np.empty(shape, f32)
    for j in range(n_labels):
        pj = ref.p[j]
        np.divide(x[j], kk32, out=q, casting="unsafe")
        if tvd is not None:
            np.subtract(q, pj, out=tmp)
            np.abs(tmp, out=tmp)
            tvd += tmp
        if sqlogq is not None:  # q log q, with log(0 + tiny) * 0 = 0
            np.add(q, _TINY, out=tmp)
            np.log(tmp, out=tmp)
            tmp *= q
            sqlogq += tmp
        if smlogm is not None:  # s log s with s = p + q = 2m
            np.add(q, pj, out=tmp2)
            np.add(tmp2, _TINY, out=tmp)
            np.log(tmp, out=tmp)
            tmp *= tmp2
            smlogm += tmp
        if cross is not None:
            np.add(x[j], ref.alpha, out=tmp, casting="unsafe")
            np.log(tmp, out=tmp)
            tmp *= pj
            cross += tmp
        if emd is not None and j < n_labels - 1:
            cum += q
            cum -= pj
            np.abs(cum, out=tmp)
            tmp *= ref.gaps[j]
            emd += tmp
    names = [m for m in METRICS if m in which]
    res = np.empty((len(names), reps, n_items), f32)
    slot = {m: res[i] for i, m in enumerate(names)}
    if tvd is not None:
        np.multiply(tvd, f32(0.5), out=slot["tvd"])
    if "entropy_bias" in which:
        np.subtract(ref.sum_plogp, sqlogq, out=slot["entropy_bias"])
        if ENTROPY_BASE != math.e:
            slot["entropy_bias"] /= f32(np.log(ENTROPY_BASE))
    if smlogm is not None:
        # JSD = H(m) - (H(p) + H(q)) / 2 with m = s / 2, sum s = 2:
        # -sum m log m = -(1/2) sum s log s + log 2
        js = slot["jsd"]
        np.add(ref.sum_plogp, sqlogq, out=js)
        js -= smlogm
        js *= f32(0.5)
        js += f32(np.log(2.0))
        np.maximum(js, f32(0.0), out=js)
        np.sqrt(js, out=js)
    if emd is not None:
        slot["wasserstein"][...] = emd
    if cross is not None:
        kl = slot["kl"]
        np.subtract(ref.sum_plogp, cross, out=kl)
        kl += np.log(kk32 + f32(n_labels) * ref.alpha)
        np.maximum(kl, f32(0.0), out=kl)
    if {"majority_agreement", "majority_tie"} & which:
        top = x[0].copy()
        for j in range(1, n_labels):
            np.maximum(top, x[j], out=top)
        n_top = np.zeros(shape, np.int16)
        hits = np.zeros(shape, np.int16)
        eq = np.empty(shape, bool)
        for j in range(n_labels):
            np.equal(x[j], top, out=eq)
            n_top += eq
            eq &= ref.top[j]
            hits += eq
        if "majority_agreement" in which:
            np.divide(hits, n_top, out=slot["majority_agreement"], dtype=f32, casting="unsafe")
        if "majority_tie" in which:
            np.greater(n_top, 1, out=slot["majority_tie"], casting="unsafe")
    return names, res


def group_matrix(groups: np.ndarray, n_groups: int, include: np.ndarray | None) -> np.ndarray:
    """(n_groups, n_items) float32 indicator of each included item's group."""
    w = np.zeros((n_groups, len(groups)), dtype=np.float32)
    w[groups, np.arange(len(groups))] = 1.0 if include is None else include
    return w


def summarise(res: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Means over items per repetition, overall and per item group.

    ``res`` (n_metrics, reps, n_items) holds per-item values; ``groups``
    (n_groups, n_items) is :func:`group_matrix`. Returns (n_metrics, reps,
    1 + n_groups): column 0 the mean over all included items, then one column
    per group (NaN when the group has no included item). Group sums are
    float32 (exact for whole-number sums below 2^24, such as agreement at
    k = n) and are added across groups in float64.
    """
    sums = np.matmul(res, groups.T).astype(np.float64)  # (M, reps, G)
    sizes = groups.sum(axis=1, dtype=np.float64)
    out = np.empty((res.shape[0], res.shape[1], 1 + groups.shape[0]))
    out[:, :, 0] = sums.sum(axis=2) / sizes.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        out[:, :, 1:] = sums / sizes
    out[:, :, 1:][:, :, sizes == 0] = np.nan
    return out


