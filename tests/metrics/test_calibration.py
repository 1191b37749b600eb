"""Binned calibration metrics: paper values, an independent loop reference, SMECE == ECE on
one-hot targets, batched states == functions, and every error message."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit.errors import InvalidValueError, SchemaError, VoteSchemaError
from annokit.metrics import REGISTRY, _binning
from annokit.metrics.calibration import (
    ReliabilityDiagram,
    classwise_calibration_error,
    expected_calibration_error,
    max_calibration_error,
    reliability_diagram,
    soft_calibration_error,
)

# Pavlovic (2025), "Understanding Model Calibration", Figure 4 (classes cat, dog, toad).
PAVLOVIC_PROBS = np.array([
    [0.78, 0.12, 0.10], [0.10, 0.64, 0.26], [0.04, 0.04, 0.92], [0.58, 0.30, 0.12],
    [0.05, 0.51, 0.44], [0.85, 0.15, 0.00], [0.22, 0.70, 0.08], [0.63, 0.34, 0.03],
    [0.02, 0.15, 0.83]])
PAVLOVIC_LABELS = np.array([0, 1, 1, 0, 0, 0, 1, 2, 2])


# --------------------------------------------------------------------------- references

def loop_ece(probs, labels, edges, *, soft=None, reduce="ece"):
    """From-scratch top-label ECE/MCE: bins [lo, hi), the last one [lo, 1]."""
    n, n_bins = len(probs), len(edges) - 1
    total, worst = 0.0, 0.0
    for b in range(n_bins):
        lo, hi = edges[b], edges[b + 1]
        members = []
        for i in range(n):
            c = max(probs[i])
            inside = lo <= c < hi or (b == n_bins - 1 and c >= hi) or (b == 0 and c < lo)
            if inside:
                members.append(i)
        if not members:
            continue
        conf = sum(max(probs[i]) for i in members) / len(members)
        preds = [int(np.argmax(probs[i])) for i in members]
        if soft is None:
            acc = sum(1.0 for i, p in zip(members, preds, strict=True) if p == labels[i]) / len(members)
        else:
            acc = sum(soft[i][p] for i, p in zip(members, preds, strict=True)) / len(members)
        total += len(members) / n * abs(acc - conf)
        worst = max(worst, abs(acc - conf))
    return total if reduce == "ece" else worst


def loop_binary(p, y, edges):
    """From-scratch binary ECE/SMECE on the positive-class probability (Leznik Eq. 5)."""
    n, n_bins, total = len(p), len(edges) - 1, 0.0
    for b in range(n_bins):
        lo, hi = edges[b], edges[b + 1]
        members = [i for i in range(n) if lo <= p[i] < hi or (b == n_bins - 1 and p[i] >= hi)]
        if members:
            total += len(members) / n * abs(np.mean([p[i] for i in members])
                                            - np.mean([y[i] for i in members]))
    return total


def loop_classwise(probs, y_cols, edges):
    """Nixon et al. (2019) SCE from scratch: mean over classes of binary ECE per column."""
    return float(np.mean([loop_binary(probs[:, k], y_cols[:, k], edges)
                          for k in range(probs.shape[1])]))


def random_inputs(rng, n, k, *, extremes=True):
    probs = rng.dirichlet(np.full(k, 0.7), size=n)
    if extremes:
        m = max(1, n // 5)
        probs[:m] = np.eye(k)[rng.integers(0, k, m)]  # confidences exactly 1, classwise 0
        edge_rows = min(n - m, 2)
        if edge_rows > 0 and k == 3:
            probs[m:m + edge_rows] = [[0.3, 0.3, 0.4], [0.6, 0.2, 0.2]][:edge_rows]  # on edges
    labels = rng.integers(0, k, n)
    targets = rng.dirichlet(np.ones(k), size=n)
    return probs, labels, targets


# --------------------------------------------------------------------------- paper values

@pytest.mark.parametrize("probs, labels, n_bins, expected", [
    pytest.param(PAVLOVIC_PROBS, PAVLOVIC_LABELS, 5, 0.10445, id="pavlovic2025_toy"),
])
def test_ece_paper_value(probs, labels, n_bins, expected):
    assert expected_calibration_error(probs, labels, n_bins=n_bins) == pytest.approx(
        expected, abs=1e-5)


@pytest.mark.parametrize("n_bins", [5, 10, 15])
def test_majority_at_prevalence_has_zero_ece(n_bins):
    # Pavlovic (2025) section 3.1: 7 cats, 2 dogs, 1 toad; always "cat" at 0.7.
    labels = np.array([0] * 7 + [1] * 2 + [2])
    probs = np.tile([0.7, 0.2, 0.1], (10, 1))
    assert expected_calibration_error(probs, labels, n_bins=n_bins) == pytest.approx(0, abs=1e-12)
    assert expected_calibration_error(probs, labels, n_bins=n_bins, strategy="quantile") == \
        pytest.approx(0, abs=1e-12)


# --------------------------------------------------------------------------- independent loop

@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n_bins", [1, 3, 10, 15])
def test_ece_mce_match_loop(seed, n_bins):
    rng = np.random.default_rng(seed)
    probs, labels, targets = random_inputs(rng, 60, 3)
    edges = np.linspace(0, 1, n_bins + 1)
    assert expected_calibration_error(probs, labels, n_bins=n_bins) == pytest.approx(
        loop_ece(probs, labels, edges), abs=1e-12)
    assert max_calibration_error(probs, labels, n_bins=n_bins) == pytest.approx(
        loop_ece(probs, labels, edges, reduce="max"), abs=1e-12)
    assert soft_calibration_error(probs, targets, n_bins=n_bins) == pytest.approx(
        loop_ece(probs, labels, edges, soft=targets), abs=1e-12)
    onehot = np.eye(3)[labels]
    assert classwise_calibration_error(probs, labels, n_bins=n_bins) == pytest.approx(
        loop_classwise(probs, onehot, edges), abs=1e-12)
    assert soft_calibration_error(probs, targets, n_bins=n_bins, mode="classwise") == \
        pytest.approx(loop_classwise(probs, targets, edges), abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_quantile_ece_matches_loop(seed):
    rng = np.random.default_rng(seed)
    probs, labels, _ = random_inputs(rng, 80, 4, extremes=False)
    conf = probs.max(axis=1)
    edges = np.quantile(conf, np.linspace(0, 1, 6))
    assert expected_calibration_error(probs, labels, n_bins=5, strategy="quantile") == \
        pytest.approx(loop_ece(probs, labels, edges), abs=1e-12)
    counts = reliability_diagram(probs, labels, n_bins=5, strategy="quantile").count
    assert counts.sum() == 80 and counts.min() >= 15  # roughly equal mass


def test_binary_mode_matches_loop_with_zero_and_one():
    rng = np.random.default_rng(7)
    p = rng.random(200)
    p[:20] = 0.0
    p[20:40] = 1.0
    p[40:50] = 0.3  # exactly on an inner edge of linspace(0, 1, 11)
    soft = rng.random(200)
    hard = (rng.random(200) < p).astype(float)
    edges = np.linspace(0, 1, 11)
    for y in (soft, hard):
        assert soft_calibration_error(p, y, mode="binary") == pytest.approx(
            loop_binary(p, y, edges), abs=1e-12)
        two = np.column_stack([1 - p, p]), np.column_stack([1 - y, y])
        assert soft_calibration_error(*two, mode="binary") == pytest.approx(
            loop_binary(p, y, edges), abs=1e-12)


def test_inner_edges_follow_documented_convention():
    edges = np.linspace(0, 1, 11)
    values = np.concatenate([edges, np.nextafter(edges, 2), np.nextafter(edges, -1)])
    values = np.clip(values, 0, 1)
    idx = _binning.bin_index(values, edges)
    expected = [max(0, min(9, int(np.searchsorted(edges, v, side="right")) - 1)) for v in values]
    assert idx.tolist() == expected
    assert _binning.bin_index(np.array([0.0, 1.0]), edges).tolist() == [0, 9]


# --------------------------------------------------------------------------- SMECE == ECE

@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), k=st.integers(2, 5),
       n_bins=st.integers(1, 20))
def test_smece_equals_ece_on_one_hot(seed, n, k, n_bins):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.full(k, 0.5), size=n)
    probs[rng.random(n) < 0.2] = np.eye(k)[0]
    labels = rng.integers(0, k, n)
    onehot = np.eye(k)[labels]
    assert soft_calibration_error(probs, onehot, n_bins=n_bins) == \
        expected_calibration_error(probs, labels, n_bins=n_bins)
    assert soft_calibration_error(probs, onehot, n_bins=n_bins, mode="classwise") == \
        classwise_calibration_error(probs, labels, n_bins=n_bins)
    if k == 2:
        assert soft_calibration_error(probs, onehot, n_bins=n_bins, mode="binary") == \
            pytest.approx(loop_binary(probs[:, 1], onehot[:, 1], np.linspace(0, 1, n_bins + 1)),
                          abs=1e-12)


def test_smece_zero_for_posterior_matching_model():
    # Leznik (2026) Proposition 2: predictions equal to the soft labels give exactly 0.
    rng = np.random.default_rng(3)
    p = 1 / (1 + np.exp(-4 * rng.uniform(-3, 3, 500)))
    assert soft_calibration_error(p, p, mode="binary") == 0.0
    probs = rng.dirichlet(np.ones(3), size=100)
    assert soft_calibration_error(probs, probs) == 0.0
    assert soft_calibration_error(probs, probs, mode="classwise") == 0.0


# --------------------------------------------------------------------------- batched states

BINNED = {
    "ece": lambda p, y, t, nb: expected_calibration_error(p, y, n_bins=nb),
    "ece_adaptive": lambda p, y, t, nb: expected_calibration_error(p, y, n_bins=nb,
                                                                  strategy="quantile"),
    "mce": lambda p, y, t, nb: max_calibration_error(p, y, n_bins=nb),
    "classwise_ece": lambda p, y, t, nb: classwise_calibration_error(p, y, n_bins=nb),
    "smece": lambda p, y, t, nb: soft_calibration_error(p, t, n_bins=nb),
    "smece_classwise": lambda p, y, t, nb: soft_calibration_error(p, t, n_bins=nb,
                                                                  mode="classwise"),
}


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_batches=st.integers(1, 6))
def test_batched_states_equal_functions(seed, n_batches):
    rng = np.random.default_rng(seed)
    probs, labels, targets = random_inputs(rng, 90, 3)
    cuts = np.sort(rng.choice(np.arange(1, 90), size=n_batches - 1, replace=False))
    parts = np.split(np.arange(90), cuts)
    for name, fn in BINNED.items():
        halves = [REGISTRY[name].state(n_bins=8), REGISTRY[name].state(n_bins=8)]
        for j, part in enumerate(parts):
            halves[j % 2].update(probs[part], targets[part], labels[part])
        got = halves[0].merge(halves[1]).compute()
        assert got == pytest.approx(fn(probs, labels, targets, 8), rel=1e-12, abs=1e-15), name


def test_named_functions_are_the_registry_metrics():
    rng = np.random.default_rng(5)
    probs, labels, targets = random_inputs(rng, 70, 4)
    from annokit.metrics import compute

    for name, fn in BINNED.items():
        assert fn(probs, labels, targets, 7) == compute(name, probs, targets, labels, n_bins=7)


# --------------------------------------------------------------------------- reliability data

def test_reliability_diagram_bins():
    d = reliability_diagram(PAVLOVIC_PROBS, PAVLOVIC_LABELS, np.eye(3)[PAVLOVIC_LABELS], n_bins=5)
    assert isinstance(d, ReliabilityDiagram)
    assert d.count.tolist() == [0, 0, 2, 4, 3]
    np.testing.assert_allclose(d.accuracy[2:], [0.5, 0.75, 2 / 3])
    np.testing.assert_allclose(d.mean_confidence[2:], [(0.58 + 0.51) / 2, (0.78 + 0.64 + 0.7
                                                                        + 0.63) / 4,
                                                       (0.92 + 0.85 + 0.83) / 3])
    np.testing.assert_array_equal(d.mean_soft_target[2:], d.accuracy[2:])
    assert np.isnan(d.accuracy[:2]).all()
    frame = d.to_frame()
    assert list(frame.columns) == ["lower", "upper", "count", "mean_confidence", "accuracy",
                                   "mean_soft_target"]
    ece = float((d.count[2:] / 9 * np.abs(d.accuracy[2:] - d.mean_confidence[2:])).sum())
    assert ece == pytest.approx(expected_calibration_error(PAVLOVIC_PROBS, PAVLOVIC_LABELS,
                                                           n_bins=5), abs=1e-15)
    assert "mean_soft_target" not in reliability_diagram(PAVLOVIC_PROBS, PAVLOVIC_LABELS).to_frame()


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("kwargs, match", [
    ({"n_bins": 0}, "n_bins must be a positive integer; got 0"),
    ({"n_bins": 2.5}, "n_bins must be a positive integer; got 2.5"),
    ({"strategy": "equal"}, r"strategy must be one of \['uniform', 'quantile'\]; got 'equal'"),
])
def test_option_errors(kwargs, match):
    with pytest.raises(InvalidValueError, match=match):
        expected_calibration_error(PAVLOVIC_PROBS, PAVLOVIC_LABELS, **kwargs)


@pytest.mark.parametrize("labels, error, match", [
    ([[0, 1]], SchemaError, r"labels must be 1-D \(n_items,\); got shape \(1, 2\)"),
    ([0, 1], SchemaError, "labels has 2 entries but probs has 9 rows"),
    ([0.0] * 8 + [np.nan], InvalidValueError, "labels has NaN or infinite values at item 8"),
    ([0.0] * 8 + [1.5], InvalidValueError, "labels must be integer class indices; got 1.5 at item 8"),
    (["a"] * 9, SchemaError, "labels must be integer class indices; got dtype <U1"),
    ([0] * 8 + [3], InvalidValueError,
     r"labels must lie in \[0, 3\) \(one per probs column\); got 3 at item 8"),
])
def test_label_errors(labels, error, match):
    with pytest.raises(error, match=match):
        expected_calibration_error(PAVLOVIC_PROBS, labels)


def test_float_labels_with_integral_values_are_accepted():
    assert expected_calibration_error(PAVLOVIC_PROBS, PAVLOVIC_LABELS.astype(float), n_bins=5) \
        == expected_calibration_error(PAVLOVIC_PROBS, PAVLOVIC_LABELS, n_bins=5)


def test_shape_errors():
    with pytest.raises(SchemaError, match=r"probs must be 2-D \(n_items, n_labels\); got shape \(3,\)"):
        expected_calibration_error([0.2, 0.3, 0.5], [0])
    with pytest.raises(SchemaError, match="probs has no rows"):
        expected_calibration_error(np.zeros((0, 3)), [])
    with pytest.raises(SchemaError, match=r"targets must have the shape of probs \(9, 3\); got \(9, 2\)"):
        soft_calibration_error(PAVLOVIC_PROBS, np.full((9, 2), 0.5))
    with pytest.raises(SchemaError, match=r"targets must be 2-D"):
        soft_calibration_error(PAVLOVIC_PROBS, np.full(9, 0.5))


@pytest.mark.parametrize("probs, targets, match", [
    (np.full((4, 3), 1 / 3), np.full(4, 0.5),
     r"mode='binary' needs probs of shape \(n_items,\) or \(n_items, 2\); got \(4, 3\)"),
    (np.full((2, 2, 2), 0.5), np.full(2, 0.5),
     r"mode='binary' needs probs of shape .*got \(2, 2, 2\)"),
    (np.zeros(0), np.zeros(0), "probs has no rows"),
    (np.array([0.5, np.nan]), np.array([0.5, 0.5]), "probs has NaN or infinite values in row 1"),
    (np.array([0.5, 1.5]), np.array([0.5, 0.5]), r"probs must lie in \[0, 1\]; got 1.5 in row 1"),
    (np.array([0.5, 0.5]), np.array([0.5, -0.1]), r"targets must lie in \[0, 1\]; got -0.1 in row 1"),
    (np.array([0.5, 0.5]), np.array([0.5]),
     "probs and targets must have the same number of rows; got 2 and 1"),
])
def test_binary_errors(probs, targets, match):
    with pytest.raises(VoteSchemaError, match=match):  # SchemaError or InvalidValueError
        soft_calibration_error(probs, targets, mode="binary")


def test_mode_error():
    with pytest.raises(InvalidValueError,
                       match=r"mode must be one of \['top_label', 'classwise', 'binary'\]"):
        soft_calibration_error(PAVLOVIC_PROBS, PAVLOVIC_PROBS, mode="multi")


def test_no_warnings_for_empty_bins():
    # Empty bins are the normal case for top-label confidences (>= 1/K): documented, not warned.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        expected_calibration_error(PAVLOVIC_PROBS, PAVLOVIC_LABELS, n_bins=20)


# --------------------------------------------------------------------------- SMECE recipe

def _load_recipe():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "recipes" / "smece_simulation.py"
    spec = importlib.util.spec_from_file_location("smece_simulation", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_smece_simulation_small(capsys):
    # Leznik (2026) experiment 4, small: SMECE(A) exactly 0, ECE(A) near 0.115.
    recipe = _load_recipe()
    rng = np.random.default_rng(0)
    exp4 = recipe.experiment4((300, 1000), 4, rng)
    assert recipe.headline(exp4)
    out = capsys.readouterr().out
    assert "SMECE(A) == 0 exactly at every size and replicate: True" in out
    exp1 = recipe.one_run(1500, 2.0, rng)
    assert exp1["A"][0] == 0.0
    # the paper's inversion: ECE (thresholded outcomes) prefers overconfident B to A
    assert exp1["B"][1] < exp1["A"][1]
    assert min(exp1, key=lambda m: exp1[m][0]) == "A"


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_reliability_diagram_has_the_bins_of_the_ece_states(strategy):
    """The diagram reads the binned states' per-bin sums (uniform: the fused kernel's
    scatter; quantile: AdaptiveBinnedState's): its bins give back ECE / SMECE / adaptive
    ECE to 1e-12, and match the numpy oracle's bins."""
    from metrics import oracle  # tests/metrics/oracle.py (pythonpath = tests)

    rng = np.random.default_rng(3)
    probs = rng.dirichlet(np.full(3, 0.6), size=500)
    soft = rng.dirichlet(np.ones(3), size=500)
    labels = rng.integers(0, 3, size=500)
    d = reliability_diagram(probs, labels, soft, n_bins=7, strategy=strategy)
    w = d.count / d.count.sum()
    gap = np.nan_to_num(np.abs(d.mean_confidence - d.accuracy))
    gap_soft = np.nan_to_num(np.abs(d.mean_confidence - d.mean_soft_target))
    if strategy == "uniform":
        assert (w * gap).sum() == pytest.approx(
            expected_calibration_error(probs, labels, n_bins=7), rel=1e-12)
        assert (w * gap_soft).sum() == pytest.approx(
            soft_calibration_error(probs, soft, n_bins=7), rel=1e-12)
        bins = oracle.batch_sums(probs, soft, labels, None, n_bins=7).bins
        np.testing.assert_array_equal(d.count, bins.count)
        np.testing.assert_allclose(np.nan_to_num(d.mean_confidence) * d.count, bins.conf,
                                   rtol=1e-12)
    else:
        assert (w * gap).sum() == pytest.approx(
            expected_calibration_error(probs, labels, n_bins=7, strategy="quantile"), rel=1e-12)
