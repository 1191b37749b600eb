"""Invariances every named metric function must satisfy (scikit-learn's test_common.py pattern).

The registry's states have their own common test (test_registry.py); this one covers the named
functions: list/ndarray/DataFrame input, per-item outputs, NaN rejection, single items.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
import pytest

from annokit.errors import InvalidValueError
from annokit.metrics import compute
from annokit.metrics.calibration import (
    classwise_calibration_error,
    expected_calibration_error,
    max_calibration_error,
    soft_calibration_error,
)
from annokit.metrics.human_calibration import (
    distribution_calibration_error,
    entropy_calibration_error,
    rank_calibration_score,
)
from annokit.metrics.scores import accuracy, brier_score, negative_log_likelihood

# name -> (function(probs, y), y is "labels" or "targets", returns per-item values)
METRICS = {
    "ece": (expected_calibration_error, "labels", False),
    "ece_quantile": (partial(expected_calibration_error, strategy="quantile", n_bins=4),
                     "labels", False),
    "mce": (max_calibration_error, "labels", False),
    "classwise_ece": (classwise_calibration_error, "labels", False),
    "smece": (soft_calibration_error, "targets", False),
    "smece_classwise": (partial(soft_calibration_error, mode="classwise"), "targets", False),
    "ent_ce": (entropy_calibration_error, "targets", True),
    "rank_cs": (rank_calibration_score, "targets", True),
    "rank_cs_tie_aware": (partial(rank_calibration_score, tie_aware=True), "targets", True),
    "dist_ce": (distribution_calibration_error, "targets", True),
    "accuracy": (accuracy, "labels", False),
    "accuracy_per_item": (partial(accuracy, reduction="none"), "labels", True),
    "brier": (brier_score, "labels", False),
    "brier_soft": (brier_score, "targets", False),
    "brier_per_item": (partial(brier_score, reduction="none"), "targets", True),
    "nll": (negative_log_likelihood, "labels", False),
    "nll_soft": (negative_log_likelihood, "targets", False),
    "nll_per_item": (partial(negative_log_likelihood, reduction="none"), "labels", True),
}
NAMES = sorted(METRICS)
LABEL_METRICS = [name for name in NAMES if METRICS[name][1] == "labels"]
NAN_CASES = [(name, where) for name in NAMES for where in ("probs", "targets")
             if where == "probs" or METRICS[name][1] == "targets"]


@pytest.fixture
def data():
    # continuous values: no ties in model or human rows, so argmax and ranks are unambiguous
    rng = np.random.default_rng(0)
    n, k = 40, 4
    probs = rng.dirichlet(np.ones(k), size=n)
    targets = rng.dirichlet(np.ones(k), size=n)
    labels = rng.integers(0, k, n)
    return probs, labels, targets


def call(name, probs, labels, targets):
    fn, kind, _ = METRICS[name]
    return fn(probs, labels if kind == "labels" else targets)


def same(a, b):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_item_order(name, data):
    probs, labels, targets = data
    perm = np.random.default_rng(1).permutation(len(labels))
    before = call(name, probs, labels, targets)
    after = call(name, probs[perm], labels[perm], targets[perm])
    if METRICS[name][2]:
        same(np.asarray(before)[perm], after)
    else:
        same(before, after)


@pytest.mark.parametrize("name", NAMES)
def test_class_relabelling(name, data):
    # permute the columns of probs and targets and rename the labels consistently
    probs, labels, targets = data
    perm = np.array([2, 0, 3, 1])  # new column j holds old class perm[j]
    new_label = np.argsort(perm)[labels]
    same(call(name, probs, labels, targets),
         call(name, probs[:, perm], new_label, targets[:, perm]))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kind", ["list", "frame", "series"])
def test_input_types(name, kind, data):
    probs, labels, targets = data
    if kind == "list":
        args = probs.tolist(), labels.tolist(), targets.tolist()
    else:
        args = pd.DataFrame(probs, columns=list("abcd")), pd.Series(labels), \
            pd.DataFrame(targets, columns=list("abcd"))
        if kind == "series":
            args = args[0], labels, args[2]
    same(call(name, probs, labels, targets), call(name, *args))


@pytest.mark.parametrize("name, where", NAN_CASES)
def test_nan_rejected(name, where, data):
    probs, labels, targets = (a.copy() for a in data)
    {"probs": probs, "targets": targets}[where][3, 1] = np.nan
    with pytest.raises(InvalidValueError, match=f"{where} has NaN or infinite values in row 3"):
        call(name, probs, labels, targets)


@pytest.mark.parametrize("name", LABEL_METRICS)
def test_nan_label_rejected(name, data):
    probs, labels, targets = data
    bad = labels.astype(float)
    bad[5] = np.nan
    with pytest.raises(InvalidValueError, match="labels has NaN or infinite values at item 5"):
        call(name, probs, bad, targets)


@pytest.mark.parametrize("name", NAMES)
def test_single_item(name, data):
    probs, labels, targets = data
    out = np.asarray(call(name, probs[:1], labels[:1], targets[:1]), dtype=float)
    assert np.isfinite(out).all()
    if METRICS[name][2]:
        assert out.shape == (1,)


#: named function -> the registry metric it is a thin form of
REGISTERED = {"ece": "ece", "ece_quantile": "ece_adaptive", "mce": "mce",
              "classwise_ece": "classwise_ece", "smece": "smece",
              "smece_classwise": "smece_classwise", "accuracy": "accuracy", "brier": "brier",
              "brier_soft": "brier_soft", "nll": "nll_majority", "nll_soft": "nll"}


@pytest.mark.parametrize("name", sorted(REGISTERED))
def test_named_function_equals_registry_metric(name, data):
    probs, labels, targets = data
    options = {"n_bins": 4} if name == "ece_quantile" else {}
    got = compute(REGISTERED[name], probs, targets, labels, **options)
    same(call(name, probs, labels, targets), got)


@pytest.mark.parametrize("name, registered", [
    ("ent_ce", "ent_ce_signed"), ("rank_cs", "rank_cs"), ("rank_cs_tie_aware", "rank_cs_tie_aware"),
    ("dist_ce", "dist_ce"), ("brier_per_item", "brier_soft"),
])
def test_per_item_mean_equals_registry_metric(name, registered, data):
    probs, labels, targets = data
    same(np.mean(call(name, probs, labels, targets)), compute(registered, probs, targets, labels))


def test_rank_cs_depends_on_label_order_only_with_human_ties():
    # Documented: the paper's RankCS keeps tied human classes in label order, so renaming
    # the classes can change it; the tie-aware variant does not change.
    probs = np.array([[0.3, 0.1, 0.6]])
    targets = np.array([[0.2, 0.2, 0.6]])
    perm = np.array([1, 0, 2])
    assert rank_calibration_score(probs, targets).tolist() == [False]
    assert rank_calibration_score(probs[:, perm], targets[:, perm]).tolist() == [True]
    assert rank_calibration_score(probs, targets, tie_aware=True).tolist() == \
        rank_calibration_score(probs[:, perm], targets[:, perm], tie_aware=True).tolist() == [True]
