"""TACE (:mod:`annokit.metrics.calibration_tace`) against its definition.

Nixon et al. (2019) Sec. 4, ``ACE = 1/(K R) sum_k sum_r |acc(r, k) - conf(r, k)|`` with
equal-count bins (``np.array_split`` of the sorted predictions), and TACE, the same over the
predictions at or above a threshold with bins between ``np.quantile`` edges; no package
implements either. The paper prints no number computed on data we have.
"""

from __future__ import annotations

import numpy as np
import pytest
from metrics.test_calibration_estimators import _large, model  # (pythonpath = tests)

from annokit.metrics import REGISTRY, compute
from annokit.metrics import calibration_tace as ct


def test_declared_in_its_module_after_smooth_ece():
    names = list(REGISTRY)
    assert REGISTRY["tace"] is ct.METRICS[0]
    assert names.index("tace") == names.index("smooth_ece") + 1
    assert REGISTRY["tace"].needs == {"hard"} and not REGISTRY["tace"].listed


def nixon_ace(probs, hard, n_bins):
    """Nixon et al. (2019) ACE: per class, the sorted predictions cut into ``n_bins``
    equal-count ranges; ``1/(K R) sum_k sum_r |acc(r, k) - conf(r, k)|``."""
    k = probs.shape[1]
    total = 0.0
    for j in range(k):
        order = np.argsort(probs[:, j])
        for rows in np.array_split(order, n_bins):
            total += abs(np.mean(hard[rows] == j) - probs[rows, j].mean())
    return total / (k * n_bins)


def test_tace_equals_nixon_ace_on_equal_count_bins():
    probs, hard = model(4, 300)  # 300 predictions per class, 10 bins of 30: equal masses
    assert compute("tace", probs, hard=hard, threshold=0.0) == pytest.approx(
        nixon_ace(probs, hard, 10), rel=1e-12)


def thresholded_adaptive(probs, hard, n_bins, threshold):
    """TACE from its definition: per class the predictions >= threshold, bins between the
    ``b / n_bins`` quantiles (``np.quantile``), ``sum_b |hits_b - conf_b| / n_j``; the mean
    over classes."""
    per_class = []
    for j in range(probs.shape[1]):
        kept = probs[:, j] >= threshold
        c, y = probs[kept, j], (hard[kept] == j).astype(float)
        edges = np.quantile(c, np.linspace(0, 1, n_bins + 1))
        idx = np.clip(np.searchsorted(edges, c, side="right") - 1, 0, n_bins - 1)
        per_class.append(sum(abs(y[idx == b].sum() - c[idx == b].sum())
                             for b in range(n_bins)) / c.size)
    return np.mean(per_class)


@pytest.mark.parametrize("n_bins", [5, 15])
def test_tace_threshold_drops_small_predictions(n_bins):
    probs, hard = model(5, 400)
    probs[:40] = np.array([0.9995, 0.0005, 0.0])  # below 1e-3: left out of classes 1 and 2
    probs[40:80] = np.array([0.0, 0.0004, 0.9996])
    got = compute("tace", probs, hard=hard, n_bins=n_bins)
    assert got == pytest.approx(thresholded_adaptive(probs, hard, n_bins, 1e-3), rel=1e-12)
    assert got != pytest.approx(thresholded_adaptive(probs, hard, n_bins, 0.0), rel=1e-6)


@pytest.mark.parametrize("kind, threshold, n_bins, k",
                         [("calibrated", 1e-3, 10, 3), ("tied", 1e-3, 7, 3), ("onehot", 0.0, 15, 3),
                          ("flat", 0.05, 10, 3), ("calibrated", 1e-3, 10, 4)])
def test_tace_bucketed_equals_the_class_by_class_path(kind, threshold, n_bins, k):
    """Many unit-weight rows (bucketed edges and bin sums, one gathering pass) against the
    class-by-class ``np.quantile`` path the weighted rows take; in one batch, in two merged
    ones, in batches too small to be counted as they arrive, and with unit weights given."""
    probs, hard = _large(11, kind, k)
    state = ct.TACEState(n_bins=n_bins, threshold=threshold)
    expected = np.mean(state._per_class(np.ascontiguousarray(probs.T), hard, None))
    one = state.update(probs, hard=hard).compute()
    a = ct.TACEState(n_bins=n_bins, threshold=threshold).update(probs[:9000], hard=hard[:9000])
    a.merge(ct.TACEState(n_bins=n_bins, threshold=threshold).update(probs[9000:],
                                                                    hard=hard[9000:]))
    small = ct.TACEState(n_bins=n_bins, threshold=threshold)
    for rows in np.array_split(np.arange(hard.size), 9):  # below CLASS_BUCKETS rows each
        small.update(probs[rows], hard=hard[rows])
    ones = ct.TACEState(n_bins=n_bins, threshold=threshold).update(
        probs, hard=hard, weights=np.ones(hard.size)).compute()
    for got in (one, a.compute(), small.compute(), ones):
        assert got == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("n", [500, 140_000], ids=["class_by_class", "bucketed"])
def test_tace_keeps_its_own_copy_of_a_batch(n):
    """A caller that reuses its arrays after ``update`` (a buffer refilled batch by batch)
    does not change the value."""
    rng = np.random.default_rng(3)
    probs, hard = rng.dirichlet(np.ones(3), n), rng.integers(0, 3, n)
    weights = rng.random(n) if n < 1000 else None
    expected = compute("tace", probs, hard=hard, weights=weights)
    state = ct.TACEState().update(probs, hard=hard, weights=weights)
    probs[:] = np.eye(3)[0]
    hard[:] = 2
    if weights is not None:
        weights[:] = 1.0
    assert state.compute() == expected


def test_tace_edges_are_numpy_quantiles_bit_for_bit():
    rng = np.random.default_rng(12)
    for m in (1, 2, 7, 1000, 1001):
        x = np.sort(np.round(rng.random(m), 3))
        vi = (m - 1) * np.linspace(0.0, 1.0, 11)
        assert np.array_equal(ct._tace_edges(vi, lambda r, x=x: x[r], m),
                              np.quantile(x, np.linspace(0.0, 1.0, 11)))


