"""Multi-label metrics against per-label computations written independently (numpy loops)."""

from __future__ import annotations

import numpy as np
import pytest

from annokit.errors import SchemaError
from annokit.metrics import compute
from annokit.metrics.multilabel import bce_rows, multilabel_scores


def _data(seed, n=200, L=4):
    rng = np.random.default_rng(seed)
    probs = rng.random((n, L))
    soft = rng.binomial(6, probs ** 1.3) / 6  # six annotators tick each label
    return probs, soft, (soft > 0.5).astype(float)


def _ece_1d(p, y, n_bins):
    edges = np.linspace(0, 1, n_bins + 1)
    total = 0.0
    for b in range(n_bins):
        hi_ok = p < edges[b + 1] if b < n_bins - 1 else p <= edges[b + 1]
        m = (p >= edges[b]) & hi_ok
        total += abs(p[m].sum() - y[m].sum())
    return total / len(p)


@pytest.mark.parametrize("n_bins", [5, 10])
def test_ece_per_label_equals_binary_ece_per_column(n_bins):
    probs, soft, hard = _data(n_bins)
    per = [_ece_1d(probs[:, j], hard[:, j], n_bins) for j in range(probs.shape[1])]
    out = multilabel_scores(probs, soft, hard, n_bins=n_bins)
    np.testing.assert_allclose(out["ece"]["per_label"], per, rtol=1e-12)
    assert compute("ece_multilabel", probs, soft, hard, n_bins=n_bins) == \
        pytest.approx(np.mean(per), rel=1e-12)
    # one label column is the binary metric on (1 - p, p) with positive = 1
    two = np.column_stack([1 - probs[:, 0], probs[:, 0]])
    assert compute("ece_binary", two, hard=hard[:, 0].astype(int), n_bins=n_bins) == \
        pytest.approx(per[0], rel=1e-12)


def test_brier_and_bce_per_label():
    probs, soft, hard = _data(1)
    brier = [np.mean([(p - s) ** 2 for p, s in zip(probs[:, j], soft[:, j], strict=True)])
             for j in range(4)]
    eps = 1e-15

    def bce(p, s):
        pos = s * np.log(max(p, eps)) if s > 0 else 0.0
        neg = (1 - s) * np.log(max(1 - p, eps)) if s < 1 else 0.0
        return -(pos + neg)

    bces = [np.mean([bce(p, s) for p, s in zip(probs[:, j], soft[:, j], strict=True)])
            for j in range(4)]
    out = multilabel_scores(probs, soft)
    np.testing.assert_allclose(out["brier"]["per_label"], brier, rtol=1e-12)
    np.testing.assert_allclose(out["bce"]["per_label"], bces, rtol=1e-12)
    assert compute("brier_multilabel", probs, soft) == pytest.approx(np.mean(brier), rel=1e-12)
    assert compute("bce_multilabel", probs, soft) == pytest.approx(np.mean(bces), rel=1e-12)


def test_bce_of_one_label_is_the_two_class_nll():
    # one label = two classes (1 - p, p) against (1 - s, s): the registry's nll (same clip)
    probs, soft, _ = _data(2, L=1)
    two_p = np.column_stack([1 - probs[:, 0], probs[:, 0]])
    two_s = np.column_stack([1 - soft[:, 0], soft[:, 0]])
    assert compute("bce_multilabel", probs, soft) == pytest.approx(
        compute("nll", two_p, two_s), rel=1e-12)


def test_perfect_predictions_and_default_majority():
    soft = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    out = multilabel_scores(soft, soft)
    assert out["ece"]["mean"] == 0.0 and out["brier"]["mean"] == 0.0 and out["bce"]["mean"] == 0.0
    tied = multilabel_scores([[0.5]], [[0.5]])  # majority of a 0.5 tie is 0: |0.5 - 0| = 0.5
    assert tied["ece"]["mean"] == 0.5


def test_bce_rows_come_from_the_kernel_and_need_soft_labels():
    probs, soft, _ = _data(2, n=30)
    eps = 1e-15
    want = -(np.where(soft > 0, soft * np.log(np.maximum(probs, eps)), 0.0)
             + np.where(soft < 1, (1 - soft) * np.log(np.maximum(1 - probs, eps)), 0.0))
    np.testing.assert_allclose(bce_rows(probs, soft), want, rtol=1e-12)
    coarse = bce_rows(np.zeros((1, 2)), np.ones((1, 2)), eps=1e-3)  # the clip is eps
    np.testing.assert_allclose(coarse, -np.log(1e-3), rtol=1e-12)
    with pytest.raises(SchemaError, match="soft must be given: the fraction of annotators"):
        bce_rows(probs, None)
