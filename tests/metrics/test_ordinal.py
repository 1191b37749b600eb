"""Order-aware metrics against scipy, the LeWiDi scorers' formulas and hand computations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import wasserstein_distance

from annokit.errors import InvalidValueError, SchemaError
from annokit.metrics import compute
from annokit.metrics.ordinal import ordinal_score


def _rows(seed, n=40, k=6):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(k, 0.8), size=n)
    q = rng.multinomial(7, np.full(k, 1 / k), size=n) / 7
    return p, q, q.argmax(axis=1)


@pytest.mark.parametrize("values", [
    pytest.param(None, id="scipy-wasserstein_distance-unit-spacing"),
    pytest.param([1, 2, 3, 4, 5, 6], id="scipy-wasserstein_distance-sarcasm-1-6"),
    pytest.param([-5, -3, -1, 0, 2, 5], id="scipy-wasserstein_distance-uneven-values"),
])
def test_wasserstein_equals_scipy(values):
    p, q, _ = _rows(0)
    v = np.arange(6.0) if values is None else np.asarray(values, float)
    expected = np.mean([wasserstein_distance(v, v, u_weights=qi, v_weights=pi)
                        for pi, qi in zip(p, q, strict=True)])
    got = compute("wasserstein", p, q, **({} if values is None else {"values": values}))
    assert got == pytest.approx(expected, rel=1e-12)


def test_wasserstein_is_lewidi_2025_transport_cost_with_unit_spacing():
    # LeWiDi 2025 (Par, CSC) solves the transport problem with cost |h - k|; on a line this is
    # the L1 distance between the CDFs. Hand: mass 0.5 moved 2 steps and 0.5 moved 1 step.
    p = [[0.5, 0.5, 0.0, 0.0]]
    q = [[0.0, 0.0, 0.5, 0.5]]
    assert compute("wasserstein", p, q) == pytest.approx(0.5 * 2 + 0.5 * 2)


def _lewidi_average_md(targets, predictions):
    """The LeWiDi 2025 notebook's average_MD, written out: per item sum |p - t| rounded to 5
    decimals, then the mean rounded to 5 decimals (the official score is rounded)."""
    per_item = [round(sum(abs(a - b) for a, b in zip(pi, ti, strict=True)), 5)
                for ti, pi in zip(targets, predictions, strict=True)]
    return round(sum(per_item) / len(per_item), 5)


def test_manhattan_matches_lewidi_2025_average_md_to_its_rounding():
    p, q, _ = _rows(1)
    got = compute("manhattan", p, q)
    assert abs(got - _lewidi_average_md(q.tolist(), p.tolist())) <= 1e-5
    assert got == pytest.approx(2 * compute("dist_ce", p, q), rel=1e-12)  # 2 x TVD


def _lewidi_2023_ce(targets, predictions, epsilon=1e-12):
    """SemEval-2023 Task 11 scorer's cross-entropy, as defined there: predictions clipped to
    [eps, 1 - eps], natural log of (p + 1e-9), summed over all entries, divided by N."""
    predictions = np.clip(predictions, epsilon, 1.0 - epsilon)
    return -np.sum(targets * np.log(predictions + 1e-9)) / predictions.shape[0]


@pytest.mark.parametrize("seed", range(3))
def test_lewidi_ce_equals_semeval2023_scorer(seed):
    p, q, _ = _rows(seed, k=2)
    p[:3] = [[1.0, 0.0], [0.0, 1.0], [1e-14, 1 - 1e-14]]  # clipped entries
    assert compute("lewidi_ce", p, q) == pytest.approx(_lewidi_2023_ce(q, p), rel=1e-12)


def test_lewidi_ce_differs_from_nll_only_by_the_clipping_conventions():
    p, q, _ = _rows(2)
    assert compute("lewidi_ce", p, q) == pytest.approx(compute("nll", p, q), abs=1e-7)
    hard_zero = np.array([[1.0, 0.0]]), np.array([[0.5, 0.5]])
    assert compute("nll", *hard_zero) == pytest.approx(-0.5 * np.log(1e-15))
    assert compute("lewidi_ce", *hard_zero) == pytest.approx(-0.5 * np.log(1e-12 + 1e-9))


def test_mean_abs_error_by_hand():
    # E_p = 0*0.2 + 1*0.3 + 2*0.5 = 1.3; E_q = 0.5*0 + 0.5*2 = 1.0
    assert compute("mean_abs_error", [[0.2, 0.3, 0.5]], [[0.5, 0.0, 0.5]]) == pytest.approx(0.3)
    # with values 1, 4, 5: E_p = 0.2 + 1.2 + 2.5 = 3.9; E_q = 0.5 + 2.5 = 3.0
    assert compute("mean_abs_error", [[0.2, 0.3, 0.5]], [[0.5, 0.0, 0.5]],
                   values=[1, 4, 5]) == pytest.approx(0.9)


def test_rps_by_hand_and_as_half_brier_for_two_categories():
    # Epstein (1969) / Murphy (1971): cumulative p = (0.2, 0.5), observed category 2 -> (0, 0)
    assert compute("rps", [[0.2, 0.3, 0.5]], hard=[2]) == pytest.approx(0.2**2 + 0.5**2)
    assert compute("rps_soft", [[0.2, 0.3, 0.5]], [[0.5, 0.0, 0.5]]) == \
        pytest.approx(0.3**2 + 0.0**2)
    p, q, h = _rows(3, k=2)
    assert compute("rps", p, q, h) == pytest.approx(compute("brier", p, q, h) / 2, rel=1e-12)
    assert compute("rps_soft", p, q) == pytest.approx(compute("brier_soft", p, q) / 2, rel=1e-12)


def test_ordinal_score_function_and_errors():
    p, q, h = _rows(4)
    assert ordinal_score("emd", p, q) == compute("wasserstein", p, q)
    assert ordinal_score("cum_sq_hard", p, h) == compute("rps", p, hard=h)
    with pytest.raises(InvalidValueError, match="values must be finite and strictly increasing"):
        compute("wasserstein", p, q, values=[0, 1, 1, 2, 3, 4])
    with pytest.raises(SchemaError, match=r"values must give one number per label \(6\)"):
        compute("wasserstein", p, q, values=[0, 1, 2])
    with pytest.raises(InvalidValueError, match="unknown ordinal quantity 'wd'"):
        ordinal_score("wd", p, q)


def test_engine_lists_order_aware_metrics_on_ordered_scales_only():
    from annokit.metrics.engine import evaluate
    from annokit.metrics.records import AlignedRecords

    rng = np.random.default_rng(5)
    counts = rng.multinomial(6, np.full(4, 0.25), size=30)
    probs = rng.dirichlet(np.ones(4), size=30)
    rec = AlignedRecords.from_arrays(probs, counts)
    nominal = evaluate(rec, baselines=False)
    assert "wasserstein" not in nominal.metrics and "manhattan" not in nominal.metrics
    ordinal = evaluate(rec, scale="ordinal", metric_options={"values": [1, 2, 4, 8]},
                       baselines=False)
    human = counts / counts.sum(axis=1, keepdims=True)
    assert ordinal.metrics["wasserstein"] == pytest.approx(
        compute("wasserstein", probs, human, values=[1, 2, 4, 8]), rel=1e-12)
    assert evaluate(rec, ["manhattan"]).metrics["manhattan"] == pytest.approx(
        compute("manhattan", probs, human), rel=1e-12)  # asked for by name on nominal data
    with pytest.raises(InvalidValueError, match="metric 'wasserstein' applies to ordinal"):
        evaluate(rec, ["wasserstein"])
