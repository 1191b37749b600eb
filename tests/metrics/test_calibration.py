"""Binned calibration metrics: paper values, an independent loop reference, numba == numpy,
SMECE == ECE on one-hot targets, accumulators == functions, and every error message."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit.errors import VoteSchemaError
from annokit.metrics import _binning, _fast
from annokit.metrics._binning import BinStats
from annokit.metrics.calibration import (
    CalibrationErrorAccumulator,
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


@pytest.fixture
def numpy_only(monkeypatch):
    """Force the plain-numpy reference path."""
    monkeypatch.setattr(_fast, "use_fast", lambda n: False)


@pytest.fixture
def fast_always(monkeypatch):
    """Force the numba path even for small inputs."""
    if not _fast.HAVE_NUMBA:
        pytest.skip("numba is not installed")
    monkeypatch.setattr(_fast, "FAST_MIN_ITEMS", 1)


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
            acc = sum(1.0 for i, p in zip(members, preds) if p == labels[i]) / len(members)
        else:
            acc = sum(soft[i][p] for i, p in zip(members, preds)) / len(members)
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
def test_ece_mce_match_loop(seed, n_bins, numpy_only):
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


# --------------------------------------------------------------------------- numba == numpy

@pytest.mark.parametrize("n_bins", [1, 2, 3, 7, 10, 13, 15, 20, 100])
def test_fast_bin_finders_follow_the_convention(n_bins):
    if not _fast.HAVE_NUMBA:
        pytest.skip("numba is not installed")
    edges = _binning.uniform_edges(n_bins)
    rng = np.random.default_rng(n_bins)
    values = np.clip(np.concatenate([edges, np.nextafter(edges, 2), np.nextafter(edges, -1),
                                     rng.random(200)]), 0, 1)
    expected = _binning.bin_index(values, edges).tolist()
    assert [_fast._find_bin_uniform(v, edges, n_bins) for v in values] == expected
    assert [_fast._find_bin(v, edges, n_bins) for v in values] == expected
    quantile = _binning.quantile_edges(rng.random(50) ** 3, n_bins)
    assert [_fast._find_bin(v, quantile, n_bins) for v in values] == \
        _binning.bin_index(values, quantile).tolist()


@pytest.mark.parametrize("k", [2, 3, 5])
def test_fast_kernel_equals_numpy(k):
    if not _fast.HAVE_NUMBA:
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(k)
    probs, labels, targets = random_inputs(rng, 3000, k)
    for edges in (_binning.uniform_edges(10), _binning.uniform_edges(7),
                  _binning.quantile_edges(probs.max(axis=1), 6)):
        fast = _fast.update_fast(probs, labels, targets, edges)
        ref = _binning.update_numpy(probs, labels, targets, edges)
        for name in ("count", "cw_count"):
            np.testing.assert_array_equal(getattr(fast, name), getattr(ref, name))
        for name in ("sum_conf", "sum_correct", "sum_soft", "cw_sum_prob", "cw_sum_hit",
                     "cw_sum_soft"):
            np.testing.assert_allclose(getattr(fast, name), getattr(ref, name), rtol=1e-12,
                                       atol=1e-12)


def test_public_functions_agree_between_paths(monkeypatch):
    if not _fast.HAVE_NUMBA:
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(11)
    probs, labels, targets = random_inputs(rng, 2000, 3)
    calls = [
        lambda: expected_calibration_error(probs, labels),
        lambda: expected_calibration_error(probs, labels, strategy="quantile"),
        lambda: max_calibration_error(probs, labels, n_bins=15),
        lambda: classwise_calibration_error(probs, labels),
        lambda: soft_calibration_error(probs, targets),
        lambda: soft_calibration_error(probs, targets, mode="classwise"),
    ]
    monkeypatch.setattr(_fast, "FAST_MIN_ITEMS", 1)
    fast = [c() for c in calls]
    monkeypatch.setattr(_fast, "use_fast", lambda n: False)
    ref = [c() for c in calls]
    np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("where, value, match", [
    ("probs", np.nan, "probs has NaN or infinite values in row 5"),
    ("probs", -0.5, "probs has a negative value in row 5"),
    ("probs", 5.0, "probs rows must sum to 1"),
    ("targets", np.inf, "targets has NaN or infinite values in row 5"),
    ("labels", 7, r"labels must lie in \[0, 3\)"),
])
def test_fast_path_reports_numpy_messages(fast_always, where, value, match):
    rng = np.random.default_rng(0)
    probs, labels, targets = random_inputs(rng, 50, 3)
    {"probs": probs, "targets": targets, "labels": labels}[where][5] = value
    with pytest.raises(VoteSchemaError, match=match):
        if where == "labels":
            expected_calibration_error(probs, labels)
        else:
            soft_calibration_error(probs, targets) if where == "targets" else \
                classwise_calibration_error(probs, labels)


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


# --------------------------------------------------------------------------- accumulators

@pytest.mark.parametrize("path", ["numpy", "fast"])
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_batches=st.integers(1, 6))
def test_accumulator_batches_equal_functions(path, seed, n_batches):
    rng = np.random.default_rng(seed)
    probs, labels, targets = random_inputs(rng, 90, 3)
    cuts = np.sort(rng.choice(np.arange(1, 90), size=n_batches - 1, replace=False))
    parts = np.split(np.arange(90), cuts)
    old = _fast.FAST_MIN_ITEMS
    _fast.FAST_MIN_ITEMS = 1 if (path == "fast" and _fast.HAVE_NUMBA) else 10**12
    try:
        halves = [CalibrationErrorAccumulator(3, n_bins=8), CalibrationErrorAccumulator(3, n_bins=8)]
        for j, part in enumerate(parts):
            halves[j % 2].update(probs[part], labels[part], targets[part])
        got = halves[0].merge(halves[1]).compute()
    finally:
        _fast.FAST_MIN_ITEMS = old
    expected = {
        "ece": expected_calibration_error(probs, labels, n_bins=8),
        "mce": max_calibration_error(probs, labels, n_bins=8),
        "classwise_ece": classwise_calibration_error(probs, labels, n_bins=8),
        "smece": soft_calibration_error(probs, targets, n_bins=8),
        "smece_classwise": soft_calibration_error(probs, targets, n_bins=8, mode="classwise"),
    }
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-12), key


def test_accumulator_labels_only_and_errors():
    acc = CalibrationErrorAccumulator(2, n_bins=5)
    with pytest.raises(VoteSchemaError, match="the accumulator is empty"):
        acc.compute()
    with pytest.raises(VoteSchemaError, match="update needs labels, targets or both"):
        acc.update([[0.5, 0.5]])
    with pytest.raises(VoteSchemaError, match="probs has 3 columns; the accumulator was built for 2"):
        acc.update([[0.2, 0.3, 0.5]], [0])
    acc.update([[0.9, 0.1]], [0])
    assert set(acc.compute()) == {"ece", "mce", "classwise_ece"}
    with pytest.raises(VoteSchemaError, match="targets is present in one and missing"):
        acc.update([[0.9, 0.1]], [0], [[1.0, 0.0]])
    with pytest.raises(VoteSchemaError, match=r"cannot merge accumulators with \(n_labels, n_bins\)"):
        acc.merge(CalibrationErrorAccumulator(2, n_bins=6))
    with pytest.raises(VoteSchemaError, match="n_labels must be a positive integer"):
        CalibrationErrorAccumulator(0)
    empty = CalibrationErrorAccumulator(2, n_bins=5)
    assert empty.merge(acc).compute() == acc.compute()


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
    with pytest.raises(VoteSchemaError, match=match):
        expected_calibration_error(PAVLOVIC_PROBS, PAVLOVIC_LABELS, **kwargs)


@pytest.mark.parametrize("labels, match", [
    ([[0, 1]], r"labels must be 1-D \(n_items,\); got shape \(1, 2\)"),
    ([0, 1], "labels has 2 entries but probs has 9 rows"),
    ([0.0] * 8 + [np.nan], "labels has NaN or infinite values at item 8"),
    ([0.0] * 8 + [1.5], "labels must be integer class indices; got 1.5 at item 8"),
    (["a"] * 9, "labels must be integer class indices; got dtype <U1"),
    ([0] * 8 + [3], r"labels must lie in \[0, 3\) \(one per probs column\); got 3 at item 8"),
])
def test_label_errors(labels, match, numpy_only):
    with pytest.raises(VoteSchemaError, match=match):
        expected_calibration_error(PAVLOVIC_PROBS, labels)


def test_float_labels_with_integral_values_are_accepted():
    assert expected_calibration_error(PAVLOVIC_PROBS, PAVLOVIC_LABELS.astype(float), n_bins=5) \
        == expected_calibration_error(PAVLOVIC_PROBS, PAVLOVIC_LABELS, n_bins=5)


def test_shape_errors(fast_always):
    with pytest.raises(VoteSchemaError, match=r"probs must be 2-D \(n_items, n_labels\); got shape \(3,\)"):
        expected_calibration_error([0.2, 0.3, 0.5], [0])
    with pytest.raises(VoteSchemaError, match="probs has no rows"):
        expected_calibration_error(np.zeros((0, 3)), [])
    with pytest.raises(VoteSchemaError, match=r"targets must have the shape of probs \(9, 3\); got \(9, 2\)"):
        soft_calibration_error(PAVLOVIC_PROBS, np.full((9, 2), 0.5))
    with pytest.raises(VoteSchemaError, match=r"targets must be 2-D"):
        soft_calibration_error(PAVLOVIC_PROBS, np.full(9, 0.5))


@pytest.mark.parametrize("probs, targets, match", [
    (np.full((4, 3), 1 / 3), np.full(4, 0.5), r"mode='binary' needs probs of shape \(n_items,\) or \(n_items, 2\); got \(4, 3\)"),
    (np.full((2, 2, 2), 0.5), np.full(2, 0.5), r"mode='binary' needs probs of shape .*got \(2, 2, 2\)"),
    (np.zeros(0), np.zeros(0), "probs has no rows"),
    (np.array([0.5, np.nan]), np.array([0.5, 0.5]), "probs has NaN or infinite values in row 1"),
    (np.array([0.5, 1.5]), np.array([0.5, 0.5]), r"probs must lie in \[0, 1\]; got 1.5 in row 1"),
    (np.array([0.5, 0.5]), np.array([0.5, -0.1]), r"targets must lie in \[0, 1\]; got -0.1 in row 1"),
    (np.array([0.5, 0.5]), np.array([0.5]), "probs and targets must have the same number of rows; got 2 and 1"),
])
def test_binary_errors(probs, targets, match):
    with pytest.raises(VoteSchemaError, match=match):
        soft_calibration_error(probs, targets, mode="binary")


def test_mode_error():
    with pytest.raises(VoteSchemaError, match=r"mode must be one of \['top_label', 'classwise', 'binary'\]"):
        soft_calibration_error(PAVLOVIC_PROBS, PAVLOVIC_PROBS, mode="multi")


def test_private_compute_errors():
    s = BinStats(1, np.ones(2, np.int64), np.ones(2), None, None)
    with pytest.raises(VoteSchemaError, match="labels were not given"):
        _binning.compute_top(s)
    with pytest.raises(VoteSchemaError, match="soft targets were not given"):
        _binning.compute_top(s, soft=True)
    with pytest.raises(VoteSchemaError, match="labels were not given"):
        _binning.compute_classwise(s)
    with pytest.raises(VoteSchemaError, match="soft targets were not given"):
        _binning.compute_classwise(s, soft=True)
    s.sum_correct = np.zeros(2)
    s.count = np.zeros(2, np.int64)
    assert _binning.compute_top(s, reduce="max") == 0.0


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
