"""The numba kernels (annokit.metrics.kernels) against the plain numpy oracle (tests/metrics/oracle.py).

Random inputs of many shapes (k = 2, 3, 5 and a large k; n from 1 to 200k, across
blocks and the threaded split), weights none / 1-D / 2-D, confidences exactly 0
and 1 and on bin edges, ties in argmax and in the stable argsorts of RankCS,
model rows equal to the human rows; every value check with its message.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from metrics import oracle  # tests/metrics/oracle.py (pythonpath = tests)

from annokit.errors import InvalidValueError, SchemaError
from annokit.metrics import kernels
from annokit.metrics._fastlog import log as fastlog
from annokit.metrics.sums import ITEM_QUANTITIES, quantity_needs

HARD = tuple(q for q in ITEM_QUANTITIES if quantity_needs(q) == "hard")
SOFT = tuple(q for q in ITEM_QUANTITIES if quantity_needs(q) == "soft")
BIN_FIELDS = ("count", "conf", "hit", "soft", "cw_count", "cw_conf", "cw_hit", "cw_soft")


def make_batch(n: int, k: int, seed: int = 0):
    """Model rows with edge cases, human distributions from few votes (ties, zeros)."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k) * 0.7, size=n)
    s = rng.multinomial(4, np.full(k, 1.0 / k), size=n) / 4.0
    edges = np.linspace(0.0, 1.0, 11)
    special = [np.eye(k)[i % k] for i in range(k)]          # confidence 1, exact zeros
    special.append(np.full(k, 1.0 / k))                      # argmax tie over every class
    special.append(np.r_[0.5, 0.5, np.zeros(k - 2)])         # two-way tie, zeros
    for e in edges[1:-1]:                                    # confidences on bin edges
        special.append(np.r_[e, np.full(k - 1, (1 - e) / (k - 1))])
        special.append(np.r_[np.full(k - 1, (1 - e) / (k - 1)), e])
    special = np.array(special)
    m = min(n, len(special))
    p[:m] = special[:m]
    if n > 2 * m:
        p[m:2 * m] = s[m:2 * m]                             # model == human (JS exactly 0)
        p[2 * m:3 * m] = s[2 * m:3 * m][:, ::-1]             # ties on both sides
    h = rng.integers(0, k, size=n)
    h[: n // 2] = s[: n // 2].argmax(axis=1)
    w1 = rng.integers(0, 4, size=n).astype(np.float64)
    w2 = rng.poisson(1.0, size=(3, n)).astype(np.float64)
    w2[1] = rng.random(n) * 2.5                              # non-integer weights
    return p, s, h, w1, w2


def assert_sums_equal(got, want, tol=1e-12):
    np.testing.assert_allclose(got.weight, want.weight, rtol=tol)
    assert np.shape(got.weight) == np.shape(want.weight)
    assert got.quantities == want.quantities
    scale = np.maximum(np.abs(np.asarray(want.weight, dtype=float)), 1.0)
    np.testing.assert_allclose(got.items, want.items, rtol=tol,
                               atol=tol * float(np.max(scale)))
    assert got.items.shape == want.items.shape
    assert (got.bins is None) == (want.bins is None)
    if want.bins is not None:
        np.testing.assert_allclose(got.bins.weight, want.bins.weight, rtol=tol)
        for f in BIN_FIELDS:
            a, b = getattr(got.bins, f), getattr(want.bins, f)
            assert (a is None) == (b is None), f
            if b is not None:
                assert a.shape == b.shape, f
                np.testing.assert_allclose(a, b, rtol=tol, atol=tol * float(np.max(scale)),
                                           err_msg=f)


WEIGHTS = ["none", "items", "replicates"]


def pick(weights, w1, w2):
    return {"none": None, "items": w1, "replicates": w2}[weights]


# --------------------------------------------------------------------------- item values

@pytest.mark.parametrize("k", [2, 3, 5, 12])
@pytest.mark.parametrize("n", [1, 2, 37, 4096, 4097, 20_000])
def test_item_values_equal_the_oracle(k, n):
    p, s, h, _, _ = make_batch(n, k, seed=n + k)
    got = kernels.item_values(p, s, h, ITEM_QUANTITIES)
    want = oracle.item_values(p, s, h, ITEM_QUANTITIES)
    assert got.shape == (n, len(ITEM_QUANTITIES))
    for c, q in enumerate(ITEM_QUANTITIES):
        np.testing.assert_allclose(got[:, c], want[:, c], rtol=1e-12, atol=1e-12, err_msg=q)


def test_item_values_large_input_on_threads():
    n = kernels.PARALLEL_MIN_ROWS + 5_000
    p, s, h, _, _ = make_batch(n, 3, seed=1)
    np.testing.assert_allclose(kernels.item_values(p, s, h), oracle.item_values(p, s, h),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("quantities, soft, hard", [
    (HARD, False, True), (HARD[::-1], True, True), (SOFT, True, False),
    (("jsd", "accuracy", "jsd"), True, True), ((), True, True)])
def test_item_values_subsets_and_missing_labels(quantities, soft, hard):
    p, s, h, _, _ = make_batch(500, 3, seed=2)
    s, h = (s if soft else None), (h if hard else None)
    got = kernels.item_values(p, s, h, quantities)
    np.testing.assert_allclose(got, oracle.item_values(p, s, h, quantities),
                               rtol=1e-12, atol=1e-12)
    assert got.shape == (500, len(quantities))


def test_exact_values_on_edge_rows():
    p = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    s = np.array([[1.0, 0.0, 0.0], [0.0, 0.5, 0.5], [0.2, 0.3, 0.5]])
    v = dict(zip(ITEM_QUANTITIES, kernels.item_values(p, s, [0, 1, 2]).T, strict=True))
    assert v["jsd"][0] == 0.0 and v["jsd"][2] == 0.0          # identical rows: exactly 0
    assert v["kl"][0] == 0.0 and v["dist_ce"][2] == 0.0
    assert list(v["accuracy"]) == [1.0, 0.0, 1.0]             # first maximum on ties
    assert list(v["rank_cs"]) == [1.0, 0.0, 1.0]              # stable orders: ties by index
    assert list(v["rank_cs_tie_aware"]) == [1.0, 0.0, 1.0]    # row 1: soft 0.5, 0, 0.5
    assert v["nll_majority"][1] == pytest.approx(np.log(2), abs=1e-15)
    assert v["nll"][0] == 0.0
    assert v["ent_ce_signed"][1] == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("human", [[0.25, 0.75], [0.5, 0.5], [0.2, 0.3, 0.5], [0.6, 0.4, 0.0]])
def test_jsd_keeps_its_digits_when_the_rows_nearly_coincide(human):
    # scipy's float64 formula cancels there (2% off at a distance of 1e-9); the kernels and
    # the oracle agree with the value computed with 60 decimal digits (rows off by 1e-9 are
    # within 1e-10: their float64 row sums, renormalised, limit any method).
    from decimal import Decimal, getcontext

    getcontext().prec = 60

    def exact(s_row, p_row):
        a, b = [Decimal(float(x)) for x in s_row], [Decimal(float(x)) for x in p_row]
        a, b = [x / sum(a) for x in a], [x / sum(b) for x in b]
        js = sum((x * (2 * x / (x + y)).ln() if x else 0) + (y * (2 * y / (x + y)).ln() if y else 0)
                 for x, y in zip(a, b, strict=True))
        return float((js / 2).sqrt())

    s = np.tile(human, (4, 1))
    p = s + np.array([0.0, 1e-9, 3e-6, 1e-3])[:, None] * np.r_[1.0, -1.0, np.zeros(len(human) - 2)]
    want = [exact(a, b) for a, b in zip(s, p, strict=True)]
    assert want[0] == 0.0
    for impl in (kernels, oracle):
        got = impl.item_values(p, s, None, ("jsd",))[:, 0]
        np.testing.assert_allclose(got[[0, 2, 3]], np.array(want)[[0, 2, 3]], rtol=1e-12, atol=0)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-10)


def test_the_oracle_jsd_is_scipys():
    from scipy.spatial.distance import jensenshannon

    p, s, h, _, _ = make_batch(3000, 4, seed=8)
    np.testing.assert_allclose(oracle.item_values(p, s, h, ("jsd",))[:, 0],
                               jensenshannon(s, p, axis=1), rtol=1e-9, atol=1e-10)


# --------------------------------------------------------------------------- batch sums

@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("n", [1, 3, 4097, 20_000])
def test_batch_sums_equal_the_oracle(n, k, weights):
    p, s, h, w1, w2 = make_batch(n, k, seed=3 * n + k)
    w = pick(weights, w1, w2)
    kw = {"quantities": ITEM_QUANTITIES, "n_bins": 10, "classwise": True}
    assert_sums_equal(kernels.batch_sums(p, s, h, w, **kw), oracle.batch_sums(p, s, h, w, **kw))


@pytest.mark.parametrize("weights", WEIGHTS)
def test_batch_sums_large_input_on_threads(weights):
    n = 200_000
    assert n >= kernels.PARALLEL_MIN_ROWS
    p, s, h, w1, w2 = make_batch(n, 3, seed=4)
    w = pick(weights, w1, w2)
    kw = {"quantities": ITEM_QUANTITIES, "n_bins": 15, "classwise": True}
    assert_sums_equal(kernels.batch_sums(p, s, h, w, **kw), oracle.batch_sums(p, s, h, w, **kw))


@pytest.mark.parametrize("weights", ["none", "replicates"])
def test_batch_sums_are_bit_identical_for_one_thread_or_many(weights, monkeypatch):
    # fixed-size chunks merged in chunk order: the thread count cannot change a bit
    n = 3 * kernels.CHUNK_ROWS + 17
    p, s, h, w1, w2 = make_batch(n, 3, seed=9)
    w = pick(weights, w1, w2)
    kw = {"quantities": ITEM_QUANTITIES, "n_bins": 10, "classwise": True}
    runs = []
    for threads in (1, 2, 3):
        monkeypatch.setattr(kernels, "MAX_THREADS", threads)
        runs.append(kernels.batch_sums(p, s, h, w, **kw))
    for got in runs[1:]:
        np.testing.assert_array_equal(got.items, runs[0].items)
        for f in BIN_FIELDS:
            np.testing.assert_array_equal(getattr(got.bins, f), getattr(runs[0].bins, f),
                                          err_msg=f)
    assert_sums_equal(runs[0], oracle.batch_sums(p, s, h, w, **kw))


@pytest.mark.parametrize("quantities, n_bins, classwise, soft, hard", [
    ((), 10, False, False, True),          # ECE: bins and hits only
    ((), 10, True, True, False),           # SMECE top-label and classwise
    (HARD, None, False, False, True),      # hard-label quantities only (no logs)
    (HARD, 7, True, True, True),
    (SOFT, 3, True, True, False),
    (("kl", "accuracy"), 1, True, True, True),
    ((), None, False, True, True),         # checks and the total weight only
])
@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("k", [3, 4])  # k = 3: the written-out loops (ECE: checks fused)
def test_batch_sums_subsets(quantities, n_bins, classwise, soft, hard, weights, k):
    # 3000 rows: two full blocks and a padded last one
    p, s, h, w1, w2 = make_batch(3000, k, seed=5)
    s, h, w = (s if soft else None), (h if hard else None), pick(weights, w1, w2)
    kw = {"quantities": quantities, "n_bins": n_bins, "classwise": classwise}
    assert_sums_equal(kernels.batch_sums(p, s, h, w, **kw), oracle.batch_sums(p, s, h, w, **kw))


@pytest.mark.parametrize("n_bins", [1, 2, 3, 7, 10, 13, 15, 20, 100, 1000])
def test_bins_on_every_edge_and_its_neighbours(n_bins):
    # the kernels' bin finder has no edge table: it must equal the linspace convention
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    c = np.unique(np.clip(np.concatenate([edges, np.nextafter(edges, 2.0),
                                          np.nextafter(edges, -1.0)]), 0.0, 1.0))
    p = np.stack([c, 1.0 - c], axis=1)
    got = kernels.batch_sums(p, None, None, None, n_bins=n_bins, classwise=True)
    want = oracle.batch_sums(p, None, None, None, n_bins=n_bins, classwise=True)
    np.testing.assert_array_equal(got.bins.count, want.bins.count)
    np.testing.assert_array_equal(got.bins.cw_count, want.bins.cw_count)


def test_probabilities_a_little_above_one_are_legal_and_in_the_last_bin():
    p = np.array([[1.0 + 5e-7, 0.0, 0.0], [0.0, 1.0 - 5e-7, 0.0]])
    kw = {"quantities": ITEM_QUANTITIES, "n_bins": 10, "classwise": True}
    got = kernels.batch_sums(p, p, [0, 1], None, **kw)
    assert got.bins.count.tolist() == [0.0] * 9 + [2.0]
    assert_sums_equal(got, oracle.batch_sums(p, p, [0, 1], None, **kw))


def test_integer_weights_equal_repeated_rows_and_batches_add_up():
    p, s, h, w1, _ = make_batch(5000, 3, seed=6)
    kw = {"quantities": ITEM_QUANTITIES, "n_bins": 10, "classwise": True}
    rep = np.repeat(np.arange(5000), w1.astype(int))
    weighted = kernels.batch_sums(p, s, h, w1, **kw)
    assert_sums_equal(weighted, kernels.batch_sums(p[rep], s[rep], h[rep], None, **kw))
    a = kernels.batch_sums(p[:1234], s[:1234], h[:1234], w1[:1234], **kw)
    b = kernels.batch_sums(p[1234:], s[1234:], h[1234:], w1[1234:], **kw)
    merged = type(weighted)(a.weight + b.weight, a.items + b.items, a.quantities,
                            a.bins.merge(b.bins))
    assert_sums_equal(merged, weighted)


def test_empty_batch():
    out = kernels.batch_sums(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, int),
                             np.zeros((2, 0)), quantities=("kl",), n_bins=4, classwise=True)
    assert out.weight.tolist() == [0.0, 0.0] and out.items.shape == (2, 1)
    assert out.bins.cw_soft.shape == (2, 3, 4) and not out.bins.count.any()
    assert kernels.item_values(np.zeros((0, 2)), None, np.zeros(0, int), HARD).shape == (0, 3)


# --------------------------------------------------------------------------- the log

@numba.njit(error_model="numpy")
def log_strict(x, out):
    for i in range(x.shape[0]):
        out[i] = fastlog(x[i])


@numba.njit(error_model="numpy", fastmath=True)
def log_in_fastmath(x, out):
    for i in range(x.shape[0]):
        out[i] = fastlog(x[i])


def log_inputs(seed):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.random(200_000), rng.random(1000) * 1e-300,
                           10.0 ** rng.uniform(-320, 0, 1000), 1.0 + rng.random(100) * 1e-6,
                           [5e-324, 1e-310, 2.0**-1022, 1e-15, np.nextafter(1e-15, 0), 0.5,
                            np.sqrt(0.5), np.sqrt(2.0) / 2 + 1e-16, 1.0 - 2**-53, 1.0]])


def test_log_is_within_one_ulp_of_numpy():
    x = log_inputs(3)
    got = np.empty_like(x)
    log_strict(x, got)
    want = np.log(x)
    assert np.all(np.abs(got - want) <= np.spacing(np.abs(want)))
    assert got[-1] == 0.0
    zero = np.empty(1)
    log_strict(np.zeros(1), zero)
    assert np.isfinite(zero[0]) and zero[0] < np.log(oracle.EPS)  # 0 * log(0) = 0, clipped


def test_log_stays_strict_inside_a_fastmath_caller():
    # kernels inline _log at the LLVM level only: its instructions keep their strict flags
    x = log_inputs(4)
    strict, inlined = np.empty_like(x), np.empty_like(x)
    log_strict(x, strict)
    log_in_fastmath(x, inlined)
    np.testing.assert_array_equal(inlined, strict)


# --------------------------------------------------------------------------- rejection

def bad_batch(where: str, value: float, row: int = 2, k: int = 3, n: int = 5000):
    p, s, h, w1, w2 = make_batch(n, k, seed=7)
    if where == "probs":
        p[row, 1] = value
    elif where == "soft":
        s[row, 0] = value
    elif where == "hard":
        h[row] = value
    elif where == "weights":
        w1[row] = value
    elif where == "replicates":
        w2[1, row] = value
    return p, s, h, w1, w2


@pytest.mark.parametrize("where, value, match", [
    ("probs", np.nan, "probs has NaN or infinite values in row 4321"),
    ("probs", np.inf, "probs has NaN or infinite values in row 4321"),
    ("probs", -0.25, "probs has a negative value in row 4321"),
    ("probs", 0.9, r"probs rows must sum to 1 \(tolerance 1e-06\); row 4321 sums to"),
    ("soft", np.nan, "soft has NaN or infinite values in row 4321"),
    ("soft", -1.0, "soft has a negative value in row 4321"),
    ("soft", 0.75, "soft rows must sum to 1"),
    ("hard", 3, r"hard must lie in \[0, 3\) \(one per probs column\); got 3 at item 4321"),
    ("hard", -1, r"hard must lie in \[0, 3\).*got -1 at item 4321"),
    ("weights", -1.0, "weights must be finite and >= 0; got -1.0 at item 4321"),
    ("weights", np.nan, "weights must be finite and >= 0; got nan at item 4321"),
    ("replicates", np.inf, "weights must be finite and >= 0; got inf at item 4321 of replicate 1"),
])
def test_kernels_reject_bad_values_naming_the_row(where, value, match):
    p, s, h, w1, w2 = bad_batch(where, value, row=4321)
    w = w2 if where == "replicates" else w1
    with pytest.raises(InvalidValueError, match=match):
        kernels.batch_sums(p, s, h, w, quantities=ITEM_QUANTITIES, n_bins=10, classwise=True)
    with pytest.raises(InvalidValueError, match=match):  # the bins-only path checks too
        kernels.batch_sums(p, s, h, w, n_bins=10)
    if where not in ("weights", "replicates"):
        with pytest.raises(InvalidValueError, match=match):
            kernels.item_values(p, s, h, ITEM_QUANTITIES)
        with pytest.raises(InvalidValueError, match=match):  # hard-only quantities
            kernels.item_values(p, s, h, HARD)


_SPOILED = [
    ("probs", np.nan, "probs has NaN or infinite values in row 1234"),
    ("probs", -0.25, "probs has a negative value in row 1234"),
    ("probs", 0.9, "probs rows must sum to 1"),
    ("soft", np.inf, "soft has NaN or infinite values in row 1234"),
    ("hard", -1, r"hard must lie in \[0, \d\).*got -1 at item 1234"),
]


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("with_soft, where, value, match",
                         [(True, *case) for case in _SPOILED]
                         + [(False, *case) for case in _SPOILED if case[0] != "soft"])
def test_the_bins_only_pass_checks_in_its_argmax_loop(k, with_soft, where, value, match):
    # ECE alone: the checks run inside the argmax/bin loop (fused for k = 3)
    p, s, h, _, _ = bad_batch(where, value, row=1234, k=k)
    with pytest.raises(InvalidValueError, match=match):
        kernels.batch_sums(p, s if with_soft else None, h, None, n_bins=10)
    with pytest.raises(InvalidValueError, match=match):
        kernels.batch_sums(p, s if with_soft else None, h, None, n_bins=10, classwise=True)


def test_rejection_uses_the_callers_names_and_accepts_the_tolerance():
    p = np.array([[0.2, 0.3, 0.5], [0.5, 0.5, 1e-6]])  # row 1 sums to 1 + 1e-6: accepted
    out = kernels.batch_sums(p, None, [0, 1], None, quantities=HARD)
    assert out.weight == 2.0
    p[1, 2] = 2e-6
    with pytest.raises(InvalidValueError, match="targets rows must sum to 1.*row 1"):
        kernels.batch_sums(np.full((2, 3), 1 / 3), p, None, None, quantities=("kl",),
                           names=("probs", "targets", "labels"))


def test_row_sums_on_the_tolerance_follow_numpy():
    # 16 classes summing to 1 + 1e-6 within rounding: the kernels' left-to-right sum is
    # over the tolerance, numpy's pairwise sum is not; numpy decides (the row is accepted)
    row = np.array([0.038798205884222337, 0.0858490598948302, 0.057993239759330836,
                    0.11963378936394803, 0.09288592460499366, 0.09942116302272334,
                    0.031066310312169367, 0.01822871321334644, 0.023855377311572473,
                    0.0517392953768784, 0.06130090745880476, 0.023293468950571675,
                    0.09335429935863268, 0.10394554201455876, 0.03782373462429928,
                    0.06081196884911781])
    assert abs(sum(row.tolist()) - 1) > 1e-6 >= abs(row.sum() - 1)
    p = np.vstack([np.full(16, 1 / 16), row])
    kw = {"quantities": ITEM_QUANTITIES, "n_bins": 10, "classwise": True}
    assert_sums_equal(kernels.batch_sums(p, p, [0, 3], None, **kw),
                      oracle.batch_sums(p, p, [0, 3], None, **kw))
    np.testing.assert_allclose(kernels.item_values(p, p, [0, 3]), oracle.item_values(p, p, [0, 3]),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call, error, match", [
    (lambda: kernels.batch_sums([[0.5, 0.5]], None, None, None, quantities=("jsd",)),
     SchemaError, "jsd needs soft labels; got soft=None"),
    (lambda: kernels.item_values([[0.5, 0.5]], [[0.5, 0.5]], None, ("brier",)),
     SchemaError, "brier needs hard labels; got hard=None"),
    (lambda: kernels.batch_sums([[0.5, 0.5]], None, None, None, quantities=("ece",)),
     InvalidValueError, "unknown per-item quantity 'ece'"),
    (lambda: kernels.batch_sums([[0.5, 0.5]], None, None, None, n_bins=0),
     InvalidValueError, "n_bins must be a positive integer; got 0"),
    (lambda: kernels.batch_sums([[0.5, 0.5]], None, None, [1.0, 2.0]),
     SchemaError, r"weights must have shape \(1,\) or \(n_replicates, 1\)"),
])
def test_kernels_reject_bad_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("quantities", [("dist_ce",), ("brier_soft", "rank_cs"),
                                        ("rank_cs_tie_aware", "accuracy", "brier")])
def test_quantities_without_logs_equal_the_full_row(quantities):
    # their own kernel (no log computed) gives the values of the full row, bit for bit
    rng = np.random.default_rng(5)
    for k in (2, 3, 6):
        p, s = rng.dirichlet(np.ones(k), 300), rng.dirichlet(np.ones(k), 300)
        s[::7] = p[::7]  # ties between the rankings
        h = rng.integers(0, k, 300)
        full = kernels.item_values(p, s, h, (*quantities, "kl"))[:, :-1]
        np.testing.assert_array_equal(kernels.item_values(p, s, h, quantities), full)
        np.testing.assert_allclose(kernels.item_values(p, s, h, quantities),
                                   oracle.item_values(p, s, h, quantities), rtol=1e-12)


@pytest.mark.parametrize("quantities", [("kl",), ("jsd",), ("ent_ce_signed", "nll"),
                                        ("nll_majority", "accuracy"), ("dist_ce", "kl")])
def test_a_metric_alone_equals_the_full_row(quantities):
    # a call computes only the groups of what it asks for (kernels._GROUPS: KL alone takes
    # no log of the JSD mixture): the values are those of every quantity at once, bit for bit
    rng = np.random.default_rng(6)
    for k in (2, 3, 6):
        p, s = rng.dirichlet(np.ones(k), 300), rng.dirichlet(np.ones(k), 300)
        s[::7] = p[::7]
        p[::5, 0], s[::3, -1] = 0.0, 0.0  # zeros: 0 log 0 = 0 in every kernel
        p, s = p / p.sum(axis=1, keepdims=True), s / s.sum(axis=1, keepdims=True)
        h = rng.integers(0, k, 300)
        full = kernels.item_values(p, s, h, ITEM_QUANTITIES)
        cols = [ITEM_QUANTITIES.index(q) for q in quantities]
        np.testing.assert_array_equal(kernels.item_values(p, s, h, quantities), full[:, cols])
        sums = kernels.batch_sums(p, s, h, None, quantities=quantities)
        np.testing.assert_allclose(sums.items, full[:, cols].sum(axis=0), rtol=1e-12)


def test_hard_label_values_with_or_without_soft_labels():
    # whether soft labels are given is a constant of the kernel (its checks vectorise); the
    # hard-label values do not depend on it
    rng = np.random.default_rng(7)
    p, s = rng.dirichlet(np.ones(4), 200), rng.dirichlet(np.ones(4), 200)
    h = rng.integers(0, 4, 200)
    hard_q = ("accuracy", "brier", "nll_majority")
    np.testing.assert_array_equal(kernels.item_values(p, s, h, hard_q),
                                  kernels.item_values(p, None, h, hard_q))


@pytest.mark.parametrize("k", [3, 4])
def test_bins_only_call_reusing_a_full_kernel_is_bit_identical(k, monkeypatch):
    """A reliability diagram after an evaluation runs the kernel already compiled
    (every per-item quantity, bins at run time) instead of compiling the bins-only one; its
    bin sums must be those of the bins-only kernel, bit for bit."""
    rng = np.random.default_rng(k)
    p, s = rng.dirichlet(np.ones(k), 700), rng.dirichlet(np.ones(k), 700)
    h, w = rng.integers(0, k, 700), rng.poisson(1.0, (3, 700)).astype(float)
    monkeypatch.setattr(kernels, "_READY", set())

    def bins(weights, classwise):
        b = kernels.batch_sums(p, s, h, weights, n_bins=7, classwise=classwise).bins
        return [b.count, b.conf, b.hit, b.soft, b.cw_count, b.cw_conf, b.cw_hit, b.cw_soft]

    alone = [bins(wt, cw) for wt in (None, w) for cw in (False, True)]
    kernels.batch_sums(p[:5], s[:5], h[:5], None, quantities=("nll", "jsd", "accuracy"))
    assert any(key[1] == 2 for key in kernels._READY)
    reused = [bins(wt, cw) for wt in (None, w) for cw in (False, True)]
    for a, b in zip(alone, reused, strict=True):
        for x, y in zip(a, b, strict=True):
            assert (x is None and y is None) or np.array_equal(x, y)
