"""Exact quantiles over partitions (annokit.scale.quantiles) equal np.quantile bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit.scale import quantiles as qm
from annokit.scale.quantiles import exact_quantiles, exact_quantiles_sets, local_runner


def _quantiles(parts, q, n_groups=None, **kwargs):
    return exact_quantiles(parts, q, run=local_runner(_grouped(parts, n_groups)), **kwargs)


def _grouped(parts, n_groups):
    """The parts dealt to ``n_groups`` groups (a worker's partitions), or one group each."""
    if n_groups is None:
        return [[p] for p in parts]
    return [parts[g::n_groups] for g in range(n_groups)]


def _counting(parts, n_groups=None):
    """local_runner that counts its calls (the round trips) and the values each returns."""
    run = local_runner(_grouped(parts, n_groups))
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
       sorted_split=st.booleans(), n_groups=st.sampled_from([None, 1, 2, 3]))
def test_equals_numpy_quantile_on_any_split(seed, n, n_parts, kind, sample, gather, n_q,
                                            sorted_split, n_groups):
    """(id: numpy-quantile) any values, any split (some parts empty, or each part one run of
    the sorted values), parts answering alone or in groups, any sample and gather sizes."""
    rng = np.random.default_rng(seed)
    values = _KINDS[kind](rng, n)
    cuts = np.sort(rng.integers(0, n + 1, n_parts - 1))
    parts = np.split(np.sort(values) if sorted_split else rng.permutation(values), cuts)
    q = np.sort(rng.random(n_q)) if n_q > 2 else np.linspace(0, 1, n_q)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf, 1e308 + 1e308: as numpy
        got = _quantiles(parts, q, n_groups, sample=sample, gather=gather)
        want = np.quantile(values, q)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("n_groups", [None, 2])
def test_edges_of_ten_equal_mass_bins_in_two_round_trips(n_groups):
    """(id: numpy-quantile) 1e6 values in 13 parts, alone or in 2 groups: round 1 sends
    about ``SAMPLE`` values per group, round 2 a few values per bracket."""
    rng = np.random.default_rng(0)
    values = rng.beta(5, 1, 1_000_000)
    q = np.linspace(0, 1, 11)
    parts = np.array_split(values, 13)
    run, calls = _counting(parts, n_groups)
    assert np.array_equal(exact_quantiles(parts, q, run=run), np.quantile(values, q))
    groups = 13 if n_groups is None else n_groups
    assert len(calls) == 2
    assert calls[0] <= groups * qm.SAMPLE + 2 * 13
    assert calls[1] <= 11 * 4 * 1_000_000 / qm.SAMPLE


def test_a_point_mass_travels_as_one_value():
    """Most values tied at 1.0 (one-hot predictions): still two round trips, and the tie
    is one value and a count, not a million values."""
    rng = np.random.default_rng(1)
    values = np.where(rng.random(1_000_000) < 0.7, 1.0, rng.random(1_000_000))
    parts = np.array_split(values, 10)
    q = np.linspace(0, 1, 11)
    run, calls = _counting(parts, 3)
    assert np.array_equal(exact_quantiles(parts, q, run=run), np.quantile(values, q))
    assert len(calls) == 2 and calls[1] < 50_000


def test_brackets_too_wide_to_gather_are_sampled_again():
    """A gather budget below the brackets' size: fallback rounds, the same edges."""
    rng = np.random.default_rng(2)
    values = rng.random(200_000)
    parts = np.array_split(values, 4)
    q = np.linspace(0, 1, 11)
    run, calls = _counting(parts, 2)
    got = exact_quantiles(parts, q, run=run, sample=64, gather=1000)
    assert np.array_equal(got, np.quantile(values, q))
    assert len(calls) == 3 and max(calls[1:]) <= 11 * 2 * (64 + 4) + 1000


def test_no_values_one_value_and_sets_of_their_own():
    q = np.linspace(0, 1, 5)
    assert np.isnan(_quantiles([np.zeros(0), np.zeros(0)], q)).all()
    assert np.array_equal(_quantiles([np.zeros(0), np.array([0.3])], q), np.full(5, 0.3))
    sets = [[np.array([0.2, 0.9]), np.zeros(0), np.array([0.5])],  # per part: set 0, 1, 2
            [np.array([0.1]), np.zeros(0), np.zeros(0)]]
    runs = [local_runner([[p[s]] for p in sets]) for s in range(3)]
    got = exact_quantiles_sets(3, q, run=lambda step, args: [r(step, a) for r, a in
                                                             zip(runs, args, strict=True)])
    assert np.array_equal(got[0], np.quantile([0.2, 0.9, 0.1], q))
    assert np.isnan(got[1]).all()
    assert np.array_equal(got[2], np.full(5, 0.5))


def test_unknown_step_is_refused():
    with pytest.raises(ValueError, match="unknown step 'sort'"):
        qm.partition_step("sort", np.zeros(1), ())
