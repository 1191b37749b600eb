"""Baan et al. (2022) human-calibration measures, proper scores, and the fused summary."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import entropy as scipy_entropy

from annokit.core.divergence import jensen_shannon_distance, kl_divergence, tvd
from annokit.errors import VoteSchemaError
from annokit.metrics import _fast
from annokit.metrics.human import (
    SUMMARY_KEYS,
    _summary_numpy,
    accuracy,
    brier_score,
    calibration_summary,
    distribution_calibration_error,
    entropy_calibration_error,
    negative_log_likelihood,
    rank_calibration_score,
)


def vote_targets(rng, n, k, n_votes=5):
    """Human distributions from few votes: many exact ties and zeros."""
    counts = rng.multinomial(n_votes, np.full(k, 1.0 / k), size=n)
    return counts / n_votes


def model_probs(rng, n, k):
    return rng.dirichlet(np.ones(k), size=n)


# --------------------------------------------------------------------------- EntCE, DistCE

def test_entce_matches_scipy_in_nats():
    rng = np.random.default_rng(0)
    p, t = model_probs(rng, 30, 3), vote_targets(rng, 30, 3)
    expected = scipy_entropy(p, axis=1) - scipy_entropy(t, axis=1)  # natural log
    np.testing.assert_allclose(entropy_calibration_error(p, t), expected, atol=1e-12)


def test_entce_sign_means_model_less_certain():
    ent = entropy_calibration_error([[0.5, 0.5], [1.0, 0.0]], [[0.9, 0.1], [0.5, 0.5]])
    assert ent[0] > 0 > ent[1]
    assert ent[1] == pytest.approx(-np.log(2), abs=1e-15)


def test_distce_is_tvd():
    rng = np.random.default_rng(1)
    p, t = model_probs(rng, 20, 4), vote_targets(rng, 20, 4)
    np.testing.assert_array_equal(distribution_calibration_error(p, t), tvd(p, t))


def test_oracle_is_exactly_zero():
    rng = np.random.default_rng(2)
    t = vote_targets(rng, 50, 3)
    assert (entropy_calibration_error(t, t) == 0).all()
    assert (distribution_calibration_error(t, t) == 0).all()
    assert rank_calibration_score(t, t).all()


# --------------------------------------------------------------------------- RankCS

@pytest.mark.parametrize("probs, targets, strict, tie_aware", [
    pytest.param([0.1, 0.3, 0.6], [0.2, 0.3, 0.5], True, True, id="same_order"),
    pytest.param([0.3, 0.1, 0.6], [0.2, 0.3, 0.5], False, False, id="swapped_bottom"),
    # human tie between classes 0 and 1: the paper's code wants label order 0 < 1
    pytest.param([0.1, 0.3, 0.6], [0.2, 0.2, 0.6], True, True, id="tie_in_label_order"),
    pytest.param([0.3, 0.1, 0.6], [0.2, 0.2, 0.6], False, True, id="tie_reversed"),
    pytest.param([0.3, 0.6, 0.1], [0.2, 0.2, 0.6], False, False, id="tie_but_wrong_top"),
    # model tie: ordered by label index in both variants
    pytest.param([0.2, 0.2, 0.6], [0.3, 0.1, 0.6], False, False, id="model_tie"),
])
def test_rank_cs_cases(probs, targets, strict, tie_aware):
    assert rank_calibration_score([probs], [targets]).tolist() == [strict]
    assert rank_calibration_score([probs], [targets], tie_aware=True).tolist() == [tie_aware]


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 6))
def test_rank_cs_definitions(seed, k):
    rng = np.random.default_rng(seed)
    p, t = model_probs(rng, 40, k), vote_targets(rng, 40, k, n_votes=4)
    strict = rank_calibration_score(p, t)
    aware = rank_calibration_score(p, t, tie_aware=True)
    # Baan et al.'s code ran np.argsort's default kind, which in 2022 numpy was an insertion
    # sort (stable) below 17 items; Python's sorted() is the same stable order. (numpy >= 1.25
    # may dispatch the default kind to an unstable SIMD sort on AVX-512: hence kind="stable".)
    def ranks(rows):
        return np.array([sorted(range(k), key=lambda j: row[j]) for row in rows])

    baan = (ranks(p) == ranks(t)).all(axis=1)
    np.testing.assert_array_equal(strict, baan)
    assert (aware | ~strict).all()  # strict => tie-aware
    no_ties = np.array([len(set(row)) == k for row in t])
    np.testing.assert_array_equal(strict[no_ties], aware[no_ties])
    # tie-aware brute force: some ordering of tied human classes equals the model's ranking
    order = np.argsort(p, axis=1, kind="stable")
    brute = [all(t[i, order[i, j]] <= t[i, order[i, j + 1]] for j in range(k - 1))
             for i in range(40)]
    np.testing.assert_array_equal(aware, brute)


# --------------------------------------------------------------------------- proper scores

def test_accuracy_and_per_item():
    p = [[0.9, 0.1], [0.4, 0.6], [0.5, 0.5]]
    assert accuracy(p, [0, 0, 0]) == pytest.approx(2 / 3)
    assert accuracy(p, [0, 0, 0], reduction="none").tolist() == [1.0, 0.0, 1.0]  # tie -> col 0


def test_brier_normalisation():
    # sum over classes, mean over items; two classes: twice scikit-learn's brier_score_loss
    p = np.array([[0.8, 0.2], [0.3, 0.7]])
    assert brier_score(p, [0, 0]) == pytest.approx(((0.2**2 * 2) + (0.7**2 * 2)) / 2)
    assert brier_score(p, np.array([[0.5, 0.5], [0.5, 0.5]])) == pytest.approx(
        (0.3**2 * 2 + 0.2**2 * 2) / 2)
    assert brier_score(p, [0, 1], reduction="none") == pytest.approx([0.08, 0.18])


def test_nll_and_cross_entropy():
    p = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    assert negative_log_likelihood(p, [2, 2], reduction="none") == pytest.approx(
        [-np.log(1e-15), -np.log(0.5)])
    t = np.array([[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    assert negative_log_likelihood(p, t, reduction="none") == pytest.approx([np.log(2), np.log(2)])
    # cross-entropy = KL(human || model) + H(human)
    rng = np.random.default_rng(4)
    q, h = model_probs(rng, 25, 3), vote_targets(rng, 25, 3)
    np.testing.assert_allclose(negative_log_likelihood(q, h, reduction="none"),
                               kl_divergence(h, q) + scipy_entropy(h, axis=1), atol=1e-12)


@pytest.mark.parametrize("call, match", [
    (lambda: negative_log_likelihood([[0.5, 0.5]], [0], eps=0), r"eps must be a number in \(0, 1\); got 0"),
    (lambda: brier_score([[0.5, 0.5]], [0], reduction="sum"), r"reduction must be one of \['mean', 'none'\]; got 'sum'"),
    (lambda: entropy_calibration_error([[0.5, 0.5]], [[0.2, 0.3, 0.5]]), r"targets must have the shape of probs \(1, 2\); got \(1, 3\)"),
    (lambda: brier_score([[0.5, 0.5]], [[0.5, 0.4]]), r"targets rows must sum to 1"),
    (lambda: accuracy([[0.5, 0.5]], [2]), r"labels must lie in \[0, 2\)"),
])
def test_errors(call, match):
    with pytest.raises(VoteSchemaError, match=match):
        call()


# --------------------------------------------------------------------------- fused summary

@pytest.mark.parametrize("k", [2, 3, 5])
def test_summary_fast_equals_reference(k, monkeypatch):
    if not _fast.HAVE_NUMBA:
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(10 + k)
    n = 3000
    p = model_probs(rng, n, k)
    p[:200] = np.eye(k)[rng.integers(0, k, 200)]  # zeros and ones, clipped logs
    p[200:210] = 1.0 / k  # model ties
    t = vote_targets(rng, n, k, n_votes=3)  # human ties and zeros
    y = t.argmax(axis=1)
    monkeypatch.setattr(_fast, "FAST_MIN_ITEMS", 1)
    fast = calibration_summary(p, y, t, n_bins=10)
    monkeypatch.setattr(_fast, "use_fast", lambda n: False)
    ref = calibration_summary(p, y, t, n_bins=10)
    assert tuple(fast) == tuple(ref) == SUMMARY_KEYS
    for key in SUMMARY_KEYS:
        assert fast[key] == pytest.approx(ref[key], rel=1e-12, abs=1e-12), key
    # the reference is the individual functions
    assert ref["jsd"] == pytest.approx(float(jensen_shannon_distance(t, p).mean()), abs=1e-15)
    assert ref == _summary_numpy(p, y, t, 10)


def test_summary_fast_path_rejects_bad_values(monkeypatch):
    if not _fast.HAVE_NUMBA:
        pytest.skip("numba is not installed")
    monkeypatch.setattr(_fast, "FAST_MIN_ITEMS", 1)
    t = np.full((4, 2), 0.5)
    with pytest.raises(VoteSchemaError, match="targets has NaN or infinite values in row 2"):
        bad = t.copy()
        bad[2, 0] = np.nan
        calibration_summary(t, [0, 0, 0, 0], bad)
    with pytest.raises(VoteSchemaError, match=r"labels must lie in \[0, 2\)"):
        calibration_summary(t, [0, 0, 5, 0], t)


def test_fast_log_is_within_one_ulp_of_numpy():
    # The k = 3 summary kernel uses its own vectorisable log (fdlibm's algorithm).
    if not _fast.HAVE_NUMBA:
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.random(200_000), rng.random(1000) * 1e-300,
                        10.0 ** rng.uniform(-320, 0, 1000),
                        [5e-324, 1e-310, 2.0**-1022, 1e-15, np.nextafter(1e-15, 0), 0.5,
                         np.sqrt(0.5), np.sqrt(2.0) / 2 + 1e-16, 1.0 - 2**-53, 1.0]])
    got = np.empty_like(x)
    _fast._log_array(x, got)
    want = np.log(x)
    assert np.all(np.abs(got - want) <= np.spacing(np.abs(want))), \
        np.max(np.abs(got - want) / np.spacing(np.abs(want)))
    assert got[-1] == 0.0
    zero = np.empty(1)
    _fast._log_array(np.zeros(1), zero)
    assert np.isfinite(zero[0]) and zero[0] < np.log(_fast.EPS)  # 0 * log(0) = 0, clipped


@pytest.mark.parametrize("n_bins", [1, 2, 3, 7, 10, 15, 100, 1000])
def test_k3_bin_finder_follows_the_convention(n_bins):
    # _find_bin_step (no edge look-ups) must equal clip(searchsorted(edges, c, "right") - 1)
    # on numpy's linspace edges, including values on, just above and just below every edge.
    if not _fast.HAVE_NUMBA:
        pytest.skip("numba is not installed")
    from annokit.metrics import _binning

    edges = _binning.uniform_edges(n_bins)
    assert _fast._linspace_step(edges) == 1.0 / n_bins
    assert _fast._linspace_step(np.array([0.0, 0.3, 1.0])) is None
    rng = np.random.default_rng(n_bins)
    probs = rng.dirichlet(np.ones(3), size=5000)
    near = np.concatenate([edges, np.nextafter(edges, 2.0), np.nextafter(edges, -1.0)]).clip(0, 1)
    probs[:len(near), 0] = near  # rows need not sum to 1 here: only the bins are checked
    idx = np.empty(4 * len(probs), dtype=np.int64)
    _fast._summary_binidx3(np.ascontiguousarray(probs).reshape(-1), 1.0 / n_bins, n_bins, idx)
    idx = idx.reshape(-1, 4)
    assert np.array_equal(idx[:, 0], _binning.bin_index(probs.max(axis=1), edges))
    assert np.array_equal(idx[:, 1:], _binning.bin_index(probs, edges))


def test_fast_log_stays_strict_inside_a_fastmath_caller():
    # _summary_sums3 is compiled with fastmath={"reassoc"}; the inlined _log must not be.
    if not _fast.HAVE_NUMBA:
        pytest.skip("numba is not installed")
    import numba

    @numba.njit(error_model="numpy", fastmath=True)
    def logs_in_fastmath(x, out):
        for i in range(x.shape[0]):
            out[i] = _fast._log(x[i])

    rng = np.random.default_rng(4)
    x = np.concatenate([rng.random(50_000), 10.0 ** rng.uniform(-320, 0, 5000), [0.0, 1.0]])
    strict, inlined = np.empty_like(x), np.empty_like(x)
    _fast._log_array(x, strict)
    logs_in_fastmath(x, inlined)
    np.testing.assert_array_equal(inlined, strict)


@pytest.mark.parametrize("n", [20_001, 3])
def test_summary_k3_kernel_equals_reference_on_edge_rows(n, monkeypatch):
    # k = 3 has its own kernel: several chunks and both parts (n > BLOCK_ROWS),
    # exact zeros and ones, subnormal and clipped probabilities, ties on both sides,
    # model == human rows, row sums off by rounding.
    if not _fast.HAVE_NUMBA:
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(33)
    p = model_probs(rng, n, 3)
    t = vote_targets(rng, n, 3, n_votes=4)
    edge = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [1e-310, 0.5, 0.5 - 1e-310],
                     [1e-16, 1e-20, 1.0 - 1e-16], [1 / 3, 1 / 3, 1 / 3], [0.5, 0.5, 0.0],
                     [0.1, 0.2, 0.7], [0.7, 0.2, 0.1 + 1e-7]])
    m = min(len(edge), n)
    p[:m] = edge[:m]
    t[:m] = edge[::-1][:m]
    p[-m:] = t[-m:]  # model equals the human distribution
    y = t.argmax(axis=1)
    monkeypatch.setattr(_fast, "FAST_MIN_ITEMS", 1)
    fast = calibration_summary(p, y, t, n_bins=10)
    monkeypatch.setattr(_fast, "use_fast", lambda n: False)
    ref = calibration_summary(p, y, t, n_bins=10)
    for key in SUMMARY_KEYS:
        assert fast[key] == pytest.approx(ref[key], rel=1e-12, abs=1e-12), key


@pytest.mark.parametrize("where, value, match", [
    ("probs", np.nan, "probs has NaN or infinite values in row 1"),
    ("targets", -0.5, "targets"),
    ("probs", 1.5, "probs"),
    ("labels", 3, r"labels must lie in \[0, 3\)"),
    ("labels", -1, r"labels must lie in \[0, 3\)"),
])
def test_summary_k3_kernel_rejects_bad_values(where, value, match, monkeypatch):
    if not _fast.HAVE_NUMBA:
        pytest.skip("numba is not installed")
    monkeypatch.setattr(_fast, "FAST_MIN_ITEMS", 1)
    p = np.tile([0.2, 0.3, 0.5], (4, 1))
    t = p.copy()
    y = np.array([2, 2, 2, 2])
    if where == "labels":
        y[1] = value
    else:
        arr = p if where == "probs" else t
        arr[1, 0] = value
    with pytest.raises(VoteSchemaError, match=match):
        calibration_summary(p, y, t)


def test_summary_k3_kernel_rejects_rows_not_summing_to_one(monkeypatch):
    if not _fast.HAVE_NUMBA:
        pytest.skip("numba is not installed")
    monkeypatch.setattr(_fast, "FAST_MIN_ITEMS", 1)
    p = np.tile([0.2, 0.3, 0.5], (4, 1))
    bad = p.copy()
    bad[3] = [0.2, 0.3, 0.4]
    with pytest.raises(VoteSchemaError, match="sum to 1"):
        calibration_summary(p, [0, 0, 0, 0], bad)


# --------------------------------------------------------------------------- real data

@pytest.fixture
def snli(shared_data):
    from annokit.core.soft_labels import distributions, majority
    from annokit.io import read_chaosnli

    votes = read_chaosnli(shared_data("chaosnli", "chaosNLI_snli.jsonl"))
    counts = votes.counts()
    return distributions(counts), majority(counts, ties="first").labels


@pytest.mark.parametrize("metric, expected, tol", [
    pytest.param("ece", 0.25, 0.01, id="baan2022_table1_oracle_ece"),
    pytest.param("dist_ce", 0.0, 0.0, id="baan2022_table1_oracle_distce"),
    pytest.param("ent_ce", 0.0, 0.0, id="baan2022_table1_oracle_entce"),
    pytest.param("rank_cs", 1.0, 0.0, id="baan2022_table1_oracle_rankcs"),
])
def test_chaosnli_snli_oracle(snli, metric, expected, tol):
    targets, majority_labels = snli
    got = calibration_summary(targets, majority_labels, targets)[metric]
    print(f"{metric}: ours {got:.4f}, Baan et al. (2022) Table 1 oracle {expected}")
    assert abs(got - expected) <= tol


@pytest.mark.parametrize("metric, expected", [
    pytest.param("jsd", 0.383, id="nie2020_table5_snli_chance_jsd"),
    pytest.param("kl", 0.5457, id="nie2020_table5_snli_chance_kl"),
])
def test_chaosnli_snli_chance(snli, metric, expected):
    targets, majority_labels = snli
    uniform = np.full_like(targets, 1 / 3)
    got = calibration_summary(uniform, majority_labels, targets)[metric]
    print(f"{metric}: ours {got:.4f}, Nie et al. (2020) Table 5 chance {expected}")
    assert abs(got - expected) <= 0.0005
