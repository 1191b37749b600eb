"""The calibration estimators of the ECE literature against their references.

- ``kde_ece``: Zhang et al.'s ``ece_kde_binary`` (Mix-n-Match-Calibration, util_evaluation.py),
  re-written below in numpy around the KDEpy ``FFTKDE`` their code calls (their code also
  needs torch, only for argmax loops).
- ``ece_sweep``: the authors' ``em_monotonic_sweep`` (google-research caltrain,
  calibration_metrics.py), re-written below as a plain loop over the number of bins.
- ``tace``: in ``test_calibration_tace.py``.
- ``macro_ce``: Si et al. (2022) Sec. 3, ``(ICE_pos + ICE_neg) / 2``; no package exists.

None of the papers prints a number computed on data we have (their tables are on CIFAR,
ImageNet and QA models' outputs), so no printed value is reproduced here.
"""

from __future__ import annotations

import numpy as np
import pytest

from annokit.errors import InvalidValueError
from annokit.metrics import REGISTRY, available, compute
from annokit.metrics import calibration_estimators as ce
from annokit.metrics.calibration_estimators import BUCKETED_MIN, sweep_ece
from annokit.metrics.workflow import resolve_metrics

NEW = ("ece_sweep", "tace", "macro_ce", "kde_ece")


def model(seed: int, n: int, k: int = 3, *, over: float = 1.0):
    """Dirichlet rows, and hard labels drawn from the rows flattened by ``over`` (1: calibrated;
    above 1 the model is overconfident, below 1 underconfident)."""
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.full(k, 0.8), size=n)
    truth = probs ** (1 / over)
    truth /= truth.sum(axis=1, keepdims=True)
    hard = (truth.cumsum(axis=1) < rng.random((n, 1))).sum(axis=1)
    return probs, np.minimum(hard, k - 1)


def top(probs, hard):
    return probs.max(axis=1), (probs.argmax(axis=1) == hard).astype(float)


# --------------------------------------------------------------------------- registration

def test_registered_not_listed_by_default_but_in_all():
    for name in NEW:
        assert REGISTRY[name].needs == {"hard"} and REGISTRY[name].lower_is_better
    assert not set(NEW) & set(available(True, True))
    assert set(NEW) <= set(available(True, True, listing=False))
    assert set(NEW) <= set(resolve_metrics("all", scale="nominal", n_labels=3))
    assert resolve_metrics(["ece_sweep"], scale="nominal", n_labels=3) == ("ece_sweep",)


# --------------------------------------------------------------------------- KDE ECE

def zhang_kde_ece(conf, hit):
    """Zhang et al.'s ``ece_kde_binary`` (top label, order 1), in numpy around KDEpy."""
    from KDEpy import FFTKDE

    x = np.linspace(-0.6, 1.6, num=2**14)
    bw = np.std(conf[hit == 1]) * (conf.size * 2) ** -0.2

    def density(d):
        mirrored = np.concatenate([-d[d < 0.5], d, 2 - d[d >= 0.5]])
        pp = FFTKDE(bw=bw, kernel="triweight").fit(mirrored).evaluate(x)
        pp[(x <= 0) | (x >= 1)] = 0
        return pp * 2

    pp1, pp2 = density(conf[hit == 1]), density(conf)
    integral = np.zeros(x.size)
    for i in range(x.size):  # their loop, carry-over included
        if max(pp1[i], pp2[i]) > 1e-6:
            with np.errstate(divide="ignore", invalid="ignore"):
                accu = min(hit.mean() * pp1[i] / pp2[i], 1.0)
            if not np.isnan(accu):
                integral[i] = abs(x[i] - accu) * pp2[i]
        elif i > 1:
            integral[i] = integral[i - 1]
    ind = (x >= 0) & (x <= 1)
    return np.trapezoid(integral[ind], x[ind]) / np.trapezoid(pp2[ind], x[ind])


@pytest.mark.parametrize("seed, n, over", [(0, 500, 1.0), (1, 3000, 1.5), (2, 3000, 0.7)])
def test_kde_ece_equals_mix_n_match(seed, n, over):
    pytest.importorskip("KDEpy")
    probs, hard = model(seed, n, over=over)
    expected = zhang_kde_ece(*top(probs, hard))
    # their carry-over where both densities vanish is left out (documented): at their
    # bandwidths it adds far less than this tolerance
    assert compute("kde_ece", probs, hard=hard) == pytest.approx(expected, rel=1e-6)


def test_kde_ece_undefined_without_a_correct_prediction():
    probs = np.array([[0.7, 0.3], [0.2, 0.8]])
    assert np.isnan(compute("kde_ece", probs, hard=[1, 0]))


# --------------------------------------------------------------------------- ECE-sweep

def caltrain_sweep(conf, hit, norm):
    """Roelofs et al.'s ``em_monotonic_sweep`` then ``_calc_ece_postbin`` (distinct conf)."""
    n = conf.size
    rank = np.empty(n, dtype=int)
    rank[np.argsort(conf)] = np.arange(n)

    def ece_at(b):
        bins = np.minimum(b - 1, np.floor(rank / n * b)).astype(int)
        err, last, monotone = 0.0, -1000.0, True
        for i in range(b):
            cur = bins == i
            if cur.any():
                ym = hit[cur].mean()
                monotone &= not ym < last
                last = ym
                err += cur.sum() * abs(ym - conf[cur].mean()) ** norm
        return (err / n) ** (1 / norm), monotone

    best = 1
    for b in range(2, n):
        if not ece_at(b)[1]:
            break
        best = b
    return ece_at(best)[0]


@pytest.mark.parametrize("norm", [1, 2])
@pytest.mark.parametrize("seed, over", [(0, 1.0), (1, 1.5), (2, 0.6)])
def test_ece_sweep_equals_the_authors_sweep(seed, over, norm):
    probs, hard = model(seed, 150, over=over)
    expected = caltrain_sweep(*top(probs, hard), norm)
    assert compute("ece_sweep", probs, hard=hard, norm=norm) == pytest.approx(expected,
                                                                              rel=1e-12)


def test_ece_sweep_monotone_everywhere_takes_n_minus_one_bins():
    conf = np.linspace(0.5, 0.99, 60)
    hit = (conf > 0.8).astype(float)  # accuracy monotone at every scale: b* = n - 1
    assert sweep_ece(conf, hit) == pytest.approx(caltrain_sweep(conf, hit, 1), rel=1e-12)
    assert sweep_ece(conf, hit, norm=2) == pytest.approx(caltrain_sweep(conf, hit, 2), rel=1e-12)


def test_ece_sweep_ties_stay_in_one_bin():
    # two tied confidences with different outcomes: never split, whatever their order
    conf, hit = np.array([0.6, 0.6, 0.9, 0.95]), np.array([1.0, 0.0, 1.0, 1.0])
    assert sweep_ece(conf, hit) == sweep_ece(conf[::-1], hit[::-1])


# --------------------------------------------------------------------------- bucketed ranks

def _large(seed: int, kind: str, k: int = 3):
    """BUCKETED_MIN + 1000 rows: Dirichlet probabilities (``tied``: rounded to 0.01;
    ``onehot``: half of them one-hot), labels drawn from them (``flat``: at random)."""
    rng = np.random.default_rng(seed)
    n = BUCKETED_MIN + 1000
    probs = rng.dirichlet(np.full(k, 0.6), n)
    if kind == "tied":
        probs = np.round(probs, 2)
        probs[:, -1] = 1 - probs[:, :-1].sum(axis=1)
        probs = np.clip(probs, 0.0, 1.0)
    if kind == "onehot":
        probs[: n // 2] = np.eye(k)[rng.integers(0, k, n // 2)]
    hard = (probs.cumsum(axis=1) < rng.random((n, 1))).sum(axis=1).clip(0, k - 1)
    if kind == "flat":
        hard = rng.integers(0, k, n)
    return probs, hard


@pytest.mark.parametrize("kind", ["calibrated", "flat", "tied"])
def test_ece_sweep_bucketed_ranks_equal_the_full_sort(kind):
    """Unit weights from BUCKETED_MIN rows on: bucket counts instead of one sort, the same
    bins (the sums agree to rounding)."""
    probs, hard = _large(10, kind)
    conf, hit = top(probs, hard)
    v, W, Y = ce._unit_groups(conf, hit)
    for norm in (1, 2):
        full = ce._sweep_groups(W, v * W, Y, norm)
        assert sweep_ece(conf, hit, norm=norm) == pytest.approx(full, rel=1e-9)
        assert ce._sweep_bucketed(conf, hit, norm) == pytest.approx(full, rel=1e-9)


def test_three_label_kernels_equal_the_general_ones():
    rng = np.random.default_rng(13)
    probs = rng.dirichlet([1.0, 1.0, 1.0], 5000)
    probs[:100] = np.array([0.5, 0.5, 0.0])  # ties: the first maximum
    hard = rng.integers(0, 3, 5000)
    out = [(np.empty(5000), np.empty(5000)) for _ in range(2)]
    assert ce._top_label(probs, hard, *out[0], 1e-9) and ce._top_label3(probs, hard, *out[1],
                                                                           1e-9)
    assert np.array_equal(out[0][0], out[1][0]) and np.array_equal(out[0][1], out[1][1])
    for bad in (np.nan, np.inf, -np.inf, -0.1):
        p = probs.copy()
        p[7, 1] = bad
        assert not ce._labelled_rows_ok3(p, hard, 1e-9)
        assert not ce._labelled_rows_ok(p, hard, 1e-9)
        with pytest.raises(InvalidValueError):
            compute("tace", p, hard=hard)


# --------------------------------------------------------------------------- MacroCE

def test_macro_ce_equals_si_et_al_definition():
    probs, hard = model(6, 500, over=0.6)
    conf, hit = top(probs, hard)
    ice_pos = np.mean(1 - conf[hit == 1])
    ice_neg = np.mean(conf[hit == 0])
    assert compute("macro_ce", probs, hard=hard) == pytest.approx((ice_pos + ice_neg) / 2,
                                                                  rel=1e-12)


def test_macro_ce_with_one_group_is_that_group():
    probs = np.array([[0.9, 0.1], [0.7, 0.3]])
    assert compute("macro_ce", probs, hard=[0, 0]) == pytest.approx(0.2)
    assert compute("macro_ce", probs, hard=[1, 1]) == pytest.approx(0.8)


# --------------------------------------------------------------------------- behaviour

def test_a_calibrated_model_scores_lower_than_an_overconfident_one():
    # not macro_ce: it is not a distance to the calibration curve (a calibrated model of low
    # accuracy has a large MacroCE; Si et al. use it to reward separating right from wrong)
    for name in ("ece_sweep", "tace", "kde_ece"):
        probs, hard = model(7, 4000, over=1.0)
        good = compute(name, probs, hard=hard)
        probs, hard = model(7, 4000, over=2.5)
        bad = compute(name, probs, hard=hard)
        assert good < bad, name
