"""Binary positive-class calibration against an independent numpy computation.

scikit-learn is not installed in the test environment; when it is, its ``calibration_curve``
(uniform bins) is compared with the reliability-diagram data too.
"""

from __future__ import annotations

import numpy as np
import pytest

from annokit.errors import SchemaError
from annokit.metrics import compute
from annokit.metrics.binary import binary_reliability


def _reference(p_pos, y, n_bins):
    """ECE, MCE and per-bin (mean p, frequency, count) over equal-width bins, written with a loop
    over bins and numpy masks (bins [lo, hi), the last closed)."""
    edges = np.linspace(0, 1, n_bins + 1)
    ece, mce, rows = 0.0, 0.0, []
    for b in range(n_bins):
        lo, hi = edges[b], edges[b + 1]
        mask = (p_pos >= lo) & ((p_pos < hi) if b < n_bins - 1 else (p_pos <= hi))
        if not mask.any():
            rows.append((np.nan, np.nan, 0))
            continue
        gap = abs(p_pos[mask].mean() - y[mask].mean())
        ece += mask.sum() / len(p_pos) * gap
        mce = max(mce, gap)
        rows.append((p_pos[mask].mean(), y[mask].mean(), int(mask.sum())))
    return ece, mce, rows


def _data(seed, n=300):
    rng = np.random.default_rng(seed)
    p1 = rng.beta(2, 2, n)
    y = (rng.random(n) < p1 ** 1.5).astype(int)  # miscalibrated on purpose
    return np.column_stack([1 - p1, p1]), y


@pytest.mark.parametrize("positive", [1, 0])
@pytest.mark.parametrize("n_bins", [5, 10, 15])
def test_ece_mce_equal_numpy_reference(positive, n_bins):
    probs, y = _data(positive + n_bins)
    ece, mce, rows = _reference(probs[:, positive], (y == positive).astype(float), n_bins)
    assert compute("ece_binary", probs, hard=y, positive=positive, n_bins=n_bins) == \
        pytest.approx(ece, rel=1e-12)
    assert compute("mce_binary", probs, hard=y, positive=positive, n_bins=n_bins) == \
        pytest.approx(mce, rel=1e-12)
    r = binary_reliability(probs, y, positive=positive, n_bins=n_bins, labels=["neg", "pos"])
    assert r.positive == positive and r.positive_label == ["neg", "pos"][positive]
    np.testing.assert_allclose(r.bins["mean_probability"], [m for m, _, _ in rows], rtol=1e-12)
    np.testing.assert_allclose(r.bins["frequency"], [f for _, f, _ in rows], rtol=1e-12)
    np.testing.assert_array_equal(r.bins["weight"], [c for _, _, c in rows])
    assert r.to_dict()["positive"] == positive and r.ece == pytest.approx(ece, rel=1e-12)


def test_reliability_equals_sklearn_calibration_curve():
    calibration = pytest.importorskip("sklearn.calibration", reason="scikit-learn not installed")
    probs, y = _data(7)
    r = binary_reliability(probs, y, n_bins=10)
    prob_true, prob_pred = calibration.calibration_curve(y, probs[:, 1], n_bins=10)
    filled = ~np.isnan(r.bins["frequency"])
    np.testing.assert_allclose(np.asarray(r.bins["frequency"])[filled], prob_true, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(r.bins["mean_probability"])[filled], prob_pred, rtol=1e-12)


def test_binary_ece_differs_from_top_label_ece():
    # top-label ECE bins max(p) and checks the argmax; binary ECE bins p(positive): by hand,
    # p1 = 0.3 and 0.7, labels 1 and 1: binary bins 0.2-0.4 and 0.6-0.8 (1 bin width 0.1 each):
    # |0.3 - 1| / 2 + |0.7 - 1| / 2 = 0.5; top label: confidences 0.7, 0.7, hits 0, 1 -> 0.2
    probs = np.array([[0.7, 0.3], [0.3, 0.7]])
    assert compute("ece_binary", probs, hard=[1, 1]) == pytest.approx(0.5)
    assert compute("ece", probs, hard=[1, 1]) == pytest.approx(0.2)


def test_needs_two_labels():
    with pytest.raises(SchemaError, match="applies to 2 labels; the batch has 3"):
        binary_reliability([[0.2, 0.3, 0.5]], [1])


def test_engine_evaluates_binary_metrics_by_default_with_two_labels():
    from annokit.metrics import available
    from annokit.metrics.engine import evaluate
    from annokit.metrics.records import AlignedRecords

    rng = np.random.default_rng(3)
    counts = rng.multinomial(5, [0.3, 0.7], size=40)
    probs, _ = _data(3, n=40)
    rec = AlignedRecords.from_arrays(probs, counts, labels=["no", "yes"])
    res = evaluate(rec, baselines=False)
    assert res.names == available(True, True, n_labels=2) and res.positive_label == "yes"
    assert res.to_dict()["positive_label"] == "yes"
    hard = counts.argmax(axis=1)  # five votes on two labels: no ties
    assert res.metrics["ece_binary"] == pytest.approx(compute("ece_binary", probs, hard=hard))
    flipped = evaluate(rec, ["ece_binary"], metric_options={"positive": 0})
    assert flipped.metrics["ece_binary"] == pytest.approx(
        compute("ece_binary", probs, hard=hard, positive=0))
    by_name = evaluate(rec, ["ece_binary"], metric_options={"positive": "no"})
    assert by_name.metrics == flipped.metrics and by_name.positive_label == "no"
    assert "positive_label" in evaluate(rec, ["ece"]).to_dict()  # null without binary metrics
    assert evaluate(rec, ["ece"]).positive_label is None
