"""The resampling engine (annokit/core/resample.py): item keys, the counter-based Poisson(1)
generator, replicate chunks, and the split invariance every bootstrap in annokit relies on."""

from __future__ import annotations

import decimal
import math
import re

import numpy as np
import pytest
from scipy import stats

from annokit.core import resample as rs
from annokit.core.resample import (
    bootstrap_replicates,
    item_keys,
    poisson_weights,
    replicate_chunks,
    seed_from_rng,
)
from annokit.errors import InvalidValueError, SchemaError

M64 = 2**64 - 1


# --- independent oracles of the documented definitions (pure Python integers) ----------------

def _rotl(x: int, b: int) -> int:
    return ((x << b) | (x >> (64 - b))) & M64


def _siphash24(key: bytes, data: bytes) -> int:
    """SipHash-2-4 (Aumasson & Bernstein 2012, reference implementation)."""
    k0, k1 = int.from_bytes(key[:8], "little"), int.from_bytes(key[8:], "little")
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D,
         k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def rounds(n: int) -> None:
        for _ in range(n):
            v[0] = (v[0] + v[1]) & M64
            v[1] = _rotl(v[1], 13) ^ v[0]
            v[0] = _rotl(v[0], 32)
            v[2] = (v[2] + v[3]) & M64
            v[3] = _rotl(v[3], 16) ^ v[2]
            v[0] = (v[0] + v[3]) & M64
            v[3] = _rotl(v[3], 21) ^ v[0]
            v[2] = (v[2] + v[1]) & M64
            v[1] = _rotl(v[1], 17) ^ v[2]
            v[2] = _rotl(v[2], 32)

    tail = len(data) % 8
    blocks = [int.from_bytes(data[i:i + 8], "little") for i in range(0, len(data) - tail, 8)]
    blocks.append(((len(data) & 0xFF) << 56) | int.from_bytes(data[len(data) - tail:], "little"))
    for m in blocks:
        v[3] ^= m
        rounds(2)
        v[0] ^= m
    v[2] ^= 0xFF
    rounds(4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def _mix(z: int) -> int:
    """SplitMix64's output function (Steele, Lea & Flood 2014)."""
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & M64
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def _key(item_id: str) -> int:
    return _mix(_siphash24(b"0123456789123456", item_id.encode("utf-8")))


def _poisson_cdf_thresholds() -> list[int]:
    """ceil(2**64 F(j)) for the Poisson(1) CDF F: z >= T_j exactly when z / 2**64 >= F(j)."""
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        p = 1 / decimal.Decimal(1).exp()
        out, cdf = [], decimal.Decimal(0)
        for j in range(25):
            cdf += p / math.factorial(j)
            out.append(math.ceil(cdf * 2**64))
        return out


THRESHOLDS = _poisson_cdf_thresholds()


def _weight(key: int, seed: int, r: int) -> int:
    """The module docstring's definition, step by step."""
    s = _mix((seed % 2**64) ^ 0x616E6E6F6B697421)
    state = _mix(key ^ s)
    z = _mix((state + (r + 1) * 0x9E3779B97F4A7C15) & M64)
    return sum(z >= t for t in THRESHOLDS)


# --- item keys --------------------------------------------------------------------------------

IDS = ["item-1", "2407214681.jpg#0r1n", "é", ""]


@pytest.mark.parametrize("item_id, key", [
    ("item-1", 17411121567957968829),
    ("2407214681.jpg#0r1n", 16519629798601427104),   # a ChaosNLI SNLI id
    ("é", 16908809132758853863),
    ("", 1760245841805064774),
], ids=["ascii", "chaosnli_snli_id", "non_ascii", "empty"])
def test_item_keys_are_pinned_and_match_siphash_oracle(item_id, key):
    assert item_keys([item_id]).tolist() == [key]
    assert _key(item_id) == key


def test_item_keys_read_ids_as_strings_whatever_the_container():
    import pandas as pd

    expected = item_keys(["1", "2", "30"])
    assert expected.dtype == np.uint64
    for ids in ([1, 2, 30], np.array([1, 2, 30]), np.array(["1", "2", "30"]),
                np.array([1, "2", "30"], dtype=object), pd.Series(["1", "2", "30"])):
        np.testing.assert_array_equal(item_keys(ids), expected)
    assert len(set(item_keys([f"q{i}" for i in range(10_000)]).tolist())) == 10_000


def test_item_keys_rejects_2d():
    with pytest.raises(SchemaError, match=re.escape("item ids must be 1-D; got shape (1, 2)")):
        item_keys([["a", "b"]])


# --- the generator ----------------------------------------------------------------------------

def test_thresholds_are_the_exact_poisson1_cdf():
    assert rs._THRESHOLDS.tolist() == THRESHOLDS[:20]
    assert THRESHOLDS[19] == 2**64 - 2 and THRESHOLDS[20] == 2**64  # no count above 20


def test_weights_follow_the_documented_definition():
    ids = [f"item{i}" for i in range(40)] + IDS
    keys = item_keys(ids)
    for seed in (0, 1, 2**64 - 1, -3):
        w = poisson_weights(keys, seed, 5, 17)
        expected = [[_weight(int(k), seed, r) for k in keys] for r in range(5, 17)]
        assert w.astype(int).tolist() == expected
    # the 8 table slices a threshold cuts are resolved exactly: force z into them
    assert np.isnan(rs._TABLE).sum() == 8


def test_weights_are_pinned():
    w = poisson_weights(item_keys(["a", "b", "c"]), 0, 0, 6)
    assert w.dtype == np.float64
    assert w.astype(int).tolist() == [[2, 0, 0], [1, 1, 0], [3, 0, 2], [2, 1, 0], [1, 1, 2],
                                      [2, 1, 1]]


def test_poisson_counts_have_mean_one_variance_one_and_the_poisson_pmf():
    n, reps = 200_000, 50
    w = poisson_weights(np.arange(n), 7, 0, reps)          # adjacent integer keys: the hard case
    size = w.size
    # 5 standard errors: Var(K) = 1, Var((K - 1)^2) = mu4 - 1 = 3 for Poisson(1)
    assert abs(w.mean() - 1) < 5 / math.sqrt(size)
    assert abs(w.var() - 1) < 5 * math.sqrt(3 / size)
    observed = np.bincount(w.astype(np.int64).ravel(), minlength=8)[:8].astype(float)
    observed[7] = size - observed[:7].sum()
    pmf = np.array([math.exp(-1) / math.factorial(k) for k in range(7)])
    expected = np.append(pmf, 1 - pmf.sum()) * size
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def _mix_np(z: np.ndarray) -> np.ndarray:
    """SplitMix64's output function on uint64 arrays (the wrap-around of the definition's & M64)."""
    z = z ^ (z >> np.uint64(30))
    z = z * np.uint64(0xBF58476D1CE4E5B9)
    z = z ^ (z >> np.uint64(27))
    z = z * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _z_numpy(keys: np.ndarray, seed: int, start: int, stop: int) -> np.ndarray:
    """The definition's 64-bit integers z[r - start, i] as whole-array numpy."""
    s = _mix_np(np.array([(seed % 2**64) ^ 0x616E6E6F6B697421], dtype=np.uint64))
    state = _mix_np(keys ^ s)
    r = np.arange(start + 1, stop + 1, dtype=np.uint64)[:, None]
    return _mix_np(state[None, :] + r * np.uint64(0x9E3779B97F4A7C15))


def _weights_numpy(keys: np.ndarray, seed: int, start: int, stop: int) -> np.ndarray:
    """The definition's counts: how many thresholds z reaches."""
    t = np.array([x for x in THRESHOLDS if x < 2**64], dtype=np.uint64)
    return np.searchsorted(t, _z_numpy(keys, seed, start, stop), side="right").astype(np.float64)


def test_uniforms_behind_the_counts_are_uniform_and_independent():
    keys = item_keys([f"item{i}" for i in range(2_000)])
    z = _z_numpy(keys, 0, 0, 50)
    u = (z >> np.uint64(11)).astype(np.float64) * 2.0**-53
    assert stats.kstest(u.ravel(), "uniform").pvalue > 1e-3
    # consecutive replicates of one item, and neighbouring items in one replicate
    assert abs(np.corrcoef(u[:-1].ravel(), u[1:].ravel())[0, 1]) < 5 / math.sqrt(u[1:].size)
    assert abs(np.corrcoef(u[:, :-1].ravel(), u[:, 1:].ravel())[0, 1]) < 5 / math.sqrt(u.size)
    # and the counts are exactly the inverse CDF of those uniforms' 64-bit integers
    expected = np.searchsorted(np.array(THRESHOLDS[:20], dtype=np.uint64), z, side="right")
    np.testing.assert_array_equal(poisson_weights(keys, 0, 0, 50), expected)


def test_replicates_of_different_seeds_and_items_differ():
    keys = item_keys([f"i{i}" for i in range(500)])
    a, b = poisson_weights(keys, 1, 0, 20), poisson_weights(keys, 2, 0, 20)
    assert not np.array_equal(a, b)
    assert abs(np.corrcoef(a.ravel(), b.ravel())[0, 1]) < 5 / math.sqrt(a.size)


# --- split invariance -------------------------------------------------------------------------

def test_weights_do_not_depend_on_batch_order_or_replicate_range():
    keys = item_keys([f"item{i}" for i in range(1_000)])
    whole = poisson_weights(keys, 11, 0, 30)
    perm = np.random.default_rng(0).permutation(1_000)
    np.testing.assert_array_equal(poisson_weights(keys[perm], 11, 0, 30), whole[:, perm])
    for part in np.array_split(np.arange(1_000), 7):
        np.testing.assert_array_equal(poisson_weights(keys[part], 11, 0, 30), whole[:, part])
    np.testing.assert_array_equal(poisson_weights(keys, 11, 12, 19), whole[12:19])
    np.testing.assert_array_equal(
        np.vstack([poisson_weights(keys, 11, a, b) for a, b in replicate_chunks(30, 1_000,
                                                                                budget=3_500)]),
        whole)


def test_the_compiled_weights_equal_the_definition_in_numpy():
    # 800k weights: about a hundred fall in the table slices that a threshold cuts
    keys = item_keys([f"item{i}" for i in range(20_000)])
    for seed, start, stop in ((0, 0, 40), (2**64 - 1, 7, 47), (12345, 1000, 1040)):
        np.testing.assert_array_equal(poisson_weights(keys, seed, start, stop),
                                      _weights_numpy(keys, seed, start, stop))


def test_a_mean_merged_over_batches_equals_the_whole():
    """Workers each hold some items: their weighted sums merge into the same replicates."""
    rng = np.random.default_rng(4)
    ids = np.array([f"q{i}" for i in range(3_000)], dtype=object)
    values = rng.gamma(2.0, size=3_000)
    keys = item_keys(ids)
    whole = bootstrap_replicates(lambda w: w @ values / w.sum(axis=1), keys, n_boot=200, seed=9)
    num = np.zeros(200)
    den = np.zeros(200)
    for part in np.array_split(rng.permutation(3_000), 5):
        w = poisson_weights(item_keys(ids[part]), 9, 0, 200)
        num += w @ values[part]
        den += w.sum(axis=1)
    np.testing.assert_allclose(num / den, whole, rtol=1e-12)


def test_chunk_budget_does_not_change_replicates():
    values = np.random.default_rng(2).normal(size=700)
    keys = np.arange(700, dtype=np.uint64)
    def f(w):
        return w @ values / w.sum(axis=1)

    whole = bootstrap_replicates(f, keys, n_boot=100, seed=1)
    small = bootstrap_replicates(f, keys, n_boot=100, seed=1, budget=1)
    np.testing.assert_allclose(small, whole, rtol=1e-13)


def test_zero_total_weight_replicates_are_nan():
    reps = bootstrap_replicates(lambda w: w[:, 0] * 0 + 1.0, np.arange(1, dtype=np.uint64),
                                n_boot=400, seed=0)
    w = poisson_weights(np.arange(1, dtype=np.uint64), 0, 0, 400)[:, 0]
    np.testing.assert_array_equal(np.isnan(reps), w == 0)
    assert 0.3 < np.isnan(reps).mean() < 0.45  # P(K = 0) = e^-1


# --- chunks, seeds, errors --------------------------------------------------------------------

def test_replicate_chunks_bound_the_matrix():
    assert replicate_chunks(10, 1_000, budget=4_000) == [(0, 4), (4, 8), (8, 10)]
    assert replicate_chunks(3, 10**7) == [(0, 1), (1, 2), (2, 3)]
    assert replicate_chunks(1_000, 1_000_000) == [(r, r + 4) for r in range(0, 1_000, 4)]
    assert replicate_chunks(0, 5) == []
    assert replicate_chunks(5, 0) == [(0, 5)]


def test_seed_from_rng():
    assert seed_from_rng(5) == 5 and seed_from_rng(np.int64(5)) == 5
    a, b = seed_from_rng(np.random.default_rng(1)), seed_from_rng(np.random.default_rng(1))
    assert a == b and 0 <= a < 2**63
    assert isinstance(seed_from_rng(None), int)
    with pytest.raises(ValueError, match="rng must be a numpy Generator, an int seed or None"):
        seed_from_rng("seed")


@pytest.mark.parametrize("call, error, match", [
    (lambda: poisson_weights(["a"], 0, 0, 1), SchemaError,
     r"keys must be a 1-D integer array \(see item_keys\); got dtype <U1, shape \(1,\)"),
    (lambda: poisson_weights(np.zeros((2, 2), int), 0, 0, 1), SchemaError, r"shape \(2, 2\)"),
    (lambda: poisson_weights(np.arange(2), 1.5, 0, 1), InvalidValueError,
     "seed must be an integer; got 1.5"),
    (lambda: poisson_weights(np.arange(2), True, 0, 1), InvalidValueError,
     "seed must be an integer; got True"),
    (lambda: poisson_weights(np.arange(2), 0, -1, 1), InvalidValueError,
     "start must be an integer >= 0; got -1"),
    (lambda: poisson_weights(np.arange(2), 0, 3, 1), InvalidValueError,
     "stop must be an integer >= 3; got 1"),
    (lambda: replicate_chunks(-1, 5), InvalidValueError, "n_boot must be an integer >= 0; got -1"),
    (lambda: replicate_chunks(5, 5, budget=0), InvalidValueError,
     "budget must be a positive integer; got 0"),
], ids=["string_keys", "2d_keys", "float_seed", "bool_seed", "negative_start", "stop_before_start",
        "negative_n_boot", "zero_budget"])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_normal_interval_equals_scipy_norm_interval_with_the_bootstrap_se():
    """Efron & Tibshirani (1993) eq. 13.5: estimate -/+ z sd(replicates); scipy.stats.norm
    gives the same ends; invalid replicates are counted and left out."""
    from scipy import stats

    from annokit.core.resample import normal_interval

    reps = np.random.default_rng(3).normal(0.3, 0.02, 200)
    r = normal_interval(0.31, np.append(reps, np.nan), 0.9)
    low, high = stats.norm.interval(0.9, loc=0.31, scale=reps.std(ddof=1))
    assert (r.low, r.high) == pytest.approx((low, high), abs=1e-14)
    assert r.method == "normal" and r.n_invalid == 1 and r.n_boot == 201
