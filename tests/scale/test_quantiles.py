"""Exact quantiles over partitions (annokit.scale.quantiles) equal np.quantile bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit.scale.quantiles import exact_quantiles, local_runner


def _quantiles(parts, q, **kwargs):
    return exact_quantiles(parts, q, run=local_runner(parts), **kwargs)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 2000), n_parts=st.integers(1, 8),
       kind=st.sampled_from(["uniform", "ties", "narrow", "one-hot"]),
       cells=st.sampled_from([2, 3, 17, 4096]), gather=st.sampled_from([1, 7, 1 << 16]),
       n_q=st.integers(1, 12))
def test_equals_numpy_quantile_on_any_split(seed, n, n_parts, kind, cells, gather, n_q):
    rng = np.random.default_rng(seed)
    values = {"uniform": lambda: rng.random(n),
              "ties": lambda: rng.choice([1 / 3, 0.5, 0.5000000000000001, 1.0], n),
              "narrow": lambda: 0.99998 + rng.random(n) * 1e-5,
              "one-hot": lambda: np.where(rng.random(n) < 0.8, 1.0, rng.random(n))}[kind]()
    cuts = np.sort(rng.integers(0, n + 1, n_parts - 1))
    parts = np.split(rng.permutation(values), cuts)  # some parts may be empty
    q = np.sort(rng.random(n_q)) if n_q > 2 else np.linspace(0, 1, n_q)
    got = _quantiles(parts, q, cells=cells, gather=gather)
    assert np.array_equal(got, np.quantile(values, q))


def test_edges_of_ten_equal_mass_bins_and_no_values():
    rng = np.random.default_rng(0)
    values = rng.beta(5, 1, 100_000)
    q = np.linspace(0, 1, 11)
    parts = np.array_split(values, 13)
    assert np.array_equal(_quantiles(parts, q, gather=100), np.quantile(values, q))
    assert np.isnan(_quantiles([np.zeros(0), np.zeros(0)], q)).all()


def test_unknown_step_is_refused():
    from annokit.scale.quantiles import partition_step

    with pytest.raises(ValueError, match="unknown step"):
        partition_step("sort", np.zeros(1), ())
