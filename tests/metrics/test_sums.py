"""The sums API: per-item values, weighted batch sums with replicates, and the input checks."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon

from annokit.core.divergence import kl_divergence, tvd
from annokit.errors import InvalidValueError, SchemaError
from annokit.metrics import kernels, sums
from annokit.metrics.human_calibration import (
    entropy_calibration_error,
    rank_calibration_score,
)
from annokit.metrics.scores import accuracy, brier_score, negative_log_likelihood


@pytest.fixture
def batch():
    rng = np.random.default_rng(0)
    n, k = 50, 4
    probs = rng.dirichlet(np.ones(k), size=n)
    probs[:5] = np.eye(k)[rng.integers(0, k, 5)]
    soft = rng.multinomial(4, np.full(k, 0.25), size=n) / 4
    return probs, soft, soft.argmax(axis=1)


def test_item_values_match_the_named_functions(batch):
    p, s, h = batch
    values = kernels.item_values(p, s, h)
    assert values.shape == (50, len(sums.ITEM_QUANTITIES))
    col = dict(zip(sums.ITEM_QUANTITIES, values.T, strict=True))
    signed = entropy_calibration_error(p, s)
    expected = {
        "accuracy": accuracy(p, h, reduction="none"), "ent_ce": np.abs(signed),
        "ent_ce_signed": signed, "dist_ce": tvd(p, s),
        "jsd": [jensenshannon(s[i], p[i]) for i in range(50)], "kl": kl_divergence(s, p),
        "brier": brier_score(p, h, reduction="none"),
        "brier_soft": brier_score(p, s, reduction="none"),
        "nll_majority": negative_log_likelihood(p, h, reduction="none"),
        "nll": negative_log_likelihood(p, s, reduction="none"),
        "rank_cs": rank_calibration_score(p, s),
        "rank_cs_tie_aware": rank_calibration_score(p, s, tie_aware=True),
    }
    assert set(expected) == set(sums.ITEM_QUANTITIES)
    for name, want in expected.items():
        np.testing.assert_allclose(col[name], np.asarray(want, dtype=float), rtol=1e-12,
                                   atol=1e-15, err_msg=name)
    picked = kernels.item_values(p, s, None, ("kl", "dist_ce"))
    np.testing.assert_array_equal(picked, np.column_stack([col["kl"], col["dist_ce"]]))


def test_batch_sums_shapes_and_weights(batch):
    p, s, h = batch
    q = ("kl", "accuracy")
    plain = kernels.batch_sums(p, s, h, None, quantities=q, n_bins=5, classwise=True)
    ones = kernels.batch_sums(p, s, h, np.ones(50), quantities=q, n_bins=5, classwise=True)
    assert plain.weight == ones.weight == 50.0 and plain.quantities == q
    np.testing.assert_allclose(plain.items, ones.items, rtol=1e-14)
    for field in ("count", "conf", "hit", "soft", "cw_count", "cw_conf", "cw_hit", "cw_soft"):
        np.testing.assert_allclose(getattr(plain.bins, field), getattr(ones.bins, field),
                                   rtol=1e-14, err_msg=field)
    assert plain.bins.count.shape == (5,) and plain.bins.cw_conf.shape == (4, 5)
    assert plain.bins.count.sum() == 50 and (plain.bins.cw_count.sum(axis=1) == 50).all()
    w = np.random.default_rng(1).poisson(1.0, size=(3, 50)).astype(float)
    rep = kernels.batch_sums(p, s, h, w, quantities=q, n_bins=5, classwise=True)
    assert rep.weight.shape == (3,) and rep.items.shape == (3, 2)
    assert rep.bins.hit.shape == (3, 5) and rep.bins.cw_soft.shape == (3, 4, 5)
    for r in range(3):
        one = kernels.batch_sums(p, s, h, w[r], quantities=q, n_bins=5, classwise=True)
        np.testing.assert_allclose(rep.items[r], one.items, rtol=1e-14)
        np.testing.assert_allclose(rep.bins.cw_hit[r], one.bins.cw_hit, rtol=1e-14)
        assert rep.weight[r] == one.weight
    none = kernels.batch_sums(p, None, None, None)
    assert none.bins is None and none.items.shape == (0,) and none.weight == 50.0


def test_quantity_needs_and_errors(batch):
    p, s, h = batch
    assert [sums.quantity_needs(q) for q in ("accuracy", "brier", "nll_majority", "kl")] == \
        ["hard", "hard", "hard", "soft"]
    with pytest.raises(SchemaError, match="accuracy needs hard labels; got hard=None"):
        kernels.item_values(p, s, None, ("accuracy",))
    with pytest.raises(SchemaError, match="jsd needs soft labels; got soft=None"):
        kernels.batch_sums(p, None, h, None, quantities=("jsd",))
    with pytest.raises(InvalidValueError, match="unknown per-item quantity 'tvd'"):
        kernels.item_values(p, s, h, ("tvd",))


@pytest.mark.parametrize("args, error, match", [
    (([[0.5, 0.5]], None, None, np.ones((1, 2))), SchemaError,
     r"weights must have shape \(1,\) or \(n_replicates, 1\); got \(1, 2\)"),
    ((np.zeros((2, 0)),), SchemaError, "probs has no label columns"),
    (([[0.5, 0.5]], None, ["a"]), SchemaError, "hard must be integer class indices; got dtype <U1"),
    (([[0.5, 0.5]], None, [np.nan]), InvalidValueError, "hard has NaN or infinite values at item 0"),
    (([[0.5, 0.5]], None, [[0]]), SchemaError, r"hard must be 1-D \(n_items,\); got shape \(1, 1\)"),
    (([[0.5, 0.5]], [[0.5, 0.5]], [0], [np.inf]), InvalidValueError,
     "weights must be finite and >= 0; got inf at item 0"),
])
def test_prepare_and_check_errors(args, error, match):
    with pytest.raises(error, match=match):
        p, s, h, w = sums.prepare(*args)
        sums.check_values(p, s, h, w)


def test_prepare_accepts_frames_and_float_labels():
    import pandas as pd

    p, s, h, w = sums.prepare(pd.DataFrame([[0.2, 0.8]]), None, pd.Series([1.0]))
    assert p.dtype == np.float64 and h.dtype == np.int64 and h.tolist() == [1]
    assert s is None and w is None
