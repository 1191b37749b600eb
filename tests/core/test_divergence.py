"""Divergences between distributions: scipy references, properties, and rejection of non-distributions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import jensenshannon
from scipy.special import rel_entr

from annokit.core.divergence import KL_EPS, jensen_shannon_distance, kl_divergence, tvd
from annokit.errors import InvalidValueError, SchemaError

FUNCTIONS = {"tvd": tvd, "jsd": jensen_shannon_distance, "kl": kl_divergence}


def rows(seed, n=30, k=4):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k), size=n)
    q = rng.multinomial(3, np.full(k, 1 / k), size=n) / 3  # zeros
    return p, q


def test_jsd_equals_scipy():
    p, q = rows(0)
    expected = [jensenshannon(q[i], p[i]) for i in range(len(p))]
    np.testing.assert_allclose(jensen_shannon_distance(q, p), expected, rtol=1e-12, atol=1e-15)


def test_kl_equals_scipy_rel_entr_with_clipping():
    p, q = rows(1)
    np.testing.assert_allclose(kl_divergence(q, p), rel_entr(q, p).sum(axis=1), rtol=1e-12)
    # a zero model probability where humans put mass is clipped at 1e-15 (ChaosNLI)
    assert kl_divergence([[1.0, 0.0]], [[0.0, 1.0]])[0] == pytest.approx(-np.log(KL_EPS))
    assert kl_divergence([[1.0, 0.0]], [[0.0, 1.0]], eps=1e-6)[0] == pytest.approx(-np.log(1e-6))


def test_one_dimensional_input_is_one_row():
    assert tvd([0.5, 0.5], [1.0, 0.0]).tolist() == [0.5]
    assert jensen_shannon_distance([1.0, 0.0], [1.0, 0.0]).tolist() == [0.0]


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 6))
def test_tvd_and_jsd_are_bounded_symmetric_and_zero_on_equal_rows(seed, k):
    p, q = rows(seed, n=10, k=k)
    for fn, bound in ((tvd, 1.0), (jensen_shannon_distance, np.sqrt(np.log(2)))):
        d = fn(p, q)
        assert ((d >= 0) & (d <= bound + 1e-12)).all()
        np.testing.assert_allclose(d, fn(q, p), rtol=1e-12, atol=1e-15)
        assert (fn(p, p) == 0).all()
    assert (kl_divergence(p, q) >= -1e-12).all() and (kl_divergence(q, q) == 0).all()


@pytest.mark.parametrize("name", list(FUNCTIONS))
@pytest.mark.parametrize("p, q, match", [
    pytest.param([[-1, 2]], [[0.5, 0.5]], "p has a negative value in row 0", id="negative_tvd_-1_2"),
    pytest.param([[0.5, 0.5], [2.0, 0.0]], [[0.5, 0.5]] * 2,
                 r"p rows must sum to 1 \(tolerance 1e-06\); row 1 sums to 2.0",
                 id="not_renormalised"),
    pytest.param([[0.5, 0.5]], [[np.nan, 1.0]], "q has NaN or infinite values in row 0", id="nan"),
    pytest.param([[0.5, 0.5]], [[0.3, 0.3]], "q rows must sum to 1", id="q_short"),
])
def test_non_distributions_are_rejected(name, p, q, match):
    with pytest.raises(InvalidValueError, match=match):
        FUNCTIONS[name](p, q)


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_shape_mismatch(name):
    with pytest.raises(SchemaError, match=r"distributions must have equal 2-D shapes; "
                                          r"got \(1, 2\) and \(1, 3\)"):
        FUNCTIONS[name]([[0.5, 0.5]], [[0.2, 0.3, 0.5]])


def test_rows_within_tolerance_are_accepted_as_given():
    p = np.array([[0.5, 0.5 + 5e-7]])
    assert tvd(p, [[0.5, 0.5]])[0] == pytest.approx(2.5e-7)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_named_functions_equal_the_oracle_and_the_metric_kernels(k):
    """One implementation (core.divergence_rows): the named functions and the metric
    kernels' dist_ce, jsd, kl agree to 1e-12 with each other and the numpy oracle,
    rows with zeros and nearly equal rows included."""
    from metrics import oracle  # tests/metrics/oracle.py (pythonpath = tests)

    from annokit.metrics.kernels import item_values

    p, q = rows(k, n=400, k=k)
    q[:50] = p[:50] * (1 + 1e-9) / (1 + 1e-9 * p[:50].sum(axis=1, keepdims=True))
    q[50:60] = p[50:60]
    got = {"dist_ce": tvd(p, q), "jsd": jensen_shannon_distance(q, p), "kl": kl_divergence(q, p)}
    kernel = dict(zip(got, item_values(p, q, None, tuple(got)).T, strict=True))
    for name, values in got.items():
        expected = oracle.item_values(p, q, None, (name,))[:, 0]
        np.testing.assert_allclose(values, expected, rtol=1e-12, atol=1e-15, err_msg=name)
        np.testing.assert_allclose(kernel[name], values, rtol=1e-12, atol=1e-15, err_msg=name)
