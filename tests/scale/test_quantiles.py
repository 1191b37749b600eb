"""Exact quantiles over partitions (annokit.scale.quantiles) equal np.quantile bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit.scale import quantiles as qm
from annokit.scale.quantiles import exact_quantiles, exact_quantiles_sets, local_runner


def _quantiles(parts, q, **kwargs):
    return exact_quantiles(parts, q, run=local_runner(parts), **kwargs)


def _counting(parts):
    """local_runner that counts its calls (the round trips) and the values each returns."""
    run = local_runner(parts)
    calls = []

    def counted(step, args):
        out = run(step, args)
        calls.append(sum(a[1].size for a in out))
        return out

    return counted, calls


_KINDS = {
    "uniform": lambda rng, n: rng.random(n),
    "ties": lambda rng, n: rng.choice([1 / 3, 0.5, 0.5000000000000001, 1.0], n),
    "narrow": lambda rng, n: 0.99998 + rng.random(n) * 1e-5,
    "one-hot": lambda rng, n: np.where(rng.random(n) < 0.8, 1.0, rng.random(n)),
    "constant": lambda rng, n: np.full(n, 0.7),
    "neighbours": lambda rng, n: np.nextafter(0.5, 1.0) ** rng.integers(0, 3, n),
    "wide": lambda rng, n: rng.choice([-np.inf, -1e308, -5e-324, 0.0, 5e-324, 2.5, 1e308,
                                       np.inf], n),
    "subnormal": lambda rng, n: rng.integers(0, 40, n) * 5e-324,
    "mixed": lambda rng, n: np.where(rng.random(n) < 0.5, 0.25, rng.normal(size=n)),
}


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 3000), n_parts=st.integers(1, 8),
       kind=st.sampled_from(sorted(_KINDS)), sample=st.sampled_from([2, 3, 17, 1024]),
       gather=st.sampled_from([1, 7, 200, 1 << 19]), n_q=st.integers(1, 12),
       sorted_split=st.booleans())
def test_equals_numpy_quantile_on_any_split(seed, n, n_parts, kind, sample, gather, n_q,
                                            sorted_split):
    """(id: numpy-quantile) any values, any split (some parts empty, or each part one run of
    the sorted values), any sample and gather sizes."""
    rng = np.random.default_rng(seed)
    values = _KINDS[kind](rng, n)
    cuts = np.sort(rng.integers(0, n + 1, n_parts - 1))
    parts = np.split(np.sort(values) if sorted_split else rng.permutation(values), cuts)
    q = np.sort(rng.random(n_q)) if n_q > 2 else np.linspace(0, 1, n_q)
    with np.errstate(invalid="ignore"):  # inf - inf in the interpolation, as numpy
        got = _quantiles(parts, q, sample=sample, gather=gather)
        want = np.quantile(values, q)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


def test_edges_of_ten_equal_mass_bins_in_two_round_trips():
    """(id: numpy-quantile) 1e5 values in 13 parts: one sample, one gather of a few values."""
    rng = np.random.default_rng(0)
    values = rng.beta(5, 1, 100_000)
    q = np.linspace(0, 1, 11)
    parts = np.array_split(values, 13)
    run, calls = _counting(parts)
    assert np.array_equal(exact_quantiles(parts, q, run=run), np.quantile(values, q))
    assert len(calls) == 2
    assert calls[0] <= 13 * qm.SAMPLE  # round 1: the samples
    assert calls[1] <= 22 * 2 * 100_000 / qm.SAMPLE  # round 2: a few values per bracket


def test_a_point_mass_travels_as_one_value():
    """Most values tied at 1.0 (one-hot predictions): still two round trips, and the tie
    is one value and a count, not a million values."""
    rng = np.random.default_rng(1)
    values = np.where(rng.random(1_000_000) < 0.7, 1.0, rng.random(1_000_000))
    parts = np.array_split(values, 10)
    q = np.linspace(0, 1, 11)
    run, calls = _counting(parts)
    assert np.array_equal(exact_quantiles(parts, q, run=run), np.quantile(values, q))
    assert len(calls) == 2 and calls[1] < 50_000


def test_brackets_too_wide_to_gather_are_sampled_again():
    """A gather budget below the brackets' size: fallback rounds, the same edges."""
    rng = np.random.default_rng(2)
    values = rng.random(200_000)
    parts = np.array_split(values, 4)
    q = np.linspace(0, 1, 11)
    run, calls = _counting(parts)
    got = exact_quantiles(parts, q, run=run, sample=64, gather=1000)
    assert np.array_equal(got, np.quantile(values, q))
    assert len(calls) == 3 and max(calls[1:]) <= 4 * 64 * 11 + 1000 + 8


def test_no_values_one_value_and_sets_of_their_own():
    q = np.linspace(0, 1, 5)
    assert np.isnan(_quantiles([np.zeros(0), np.zeros(0)], q)).all()
    assert np.array_equal(_quantiles([np.zeros(0), np.array([0.3])], q), np.full(5, 0.3))
    sets = [[np.array([0.2, 0.9]), np.zeros(0), np.array([0.5])],  # per part: set 0, 1, 2
            [np.array([0.1]), np.zeros(0), np.zeros(0)]]
    runs = [local_runner([p[s] for p in sets]) for s in range(3)]
    got = exact_quantiles_sets(3, q, run=lambda step, args: [r(step, a) for r, a in
                                                             zip(runs, args, strict=True)])
    assert np.array_equal(got[0], np.quantile([0.2, 0.9, 0.1], q))
    assert np.isnan(got[1]).all()
    assert np.array_equal(got[2], np.full(5, 0.5))


def test_unknown_step_is_refused():
    with pytest.raises(ValueError, match="unknown step 'sort'"):
        qm.partition_step("sort", np.zeros(1), ())
