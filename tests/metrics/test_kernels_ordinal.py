"""The order-aware kernels (annokit.metrics.kernels_ordinal) against the numpy oracle."""

from __future__ import annotations

import numpy as np
import pytest
from metrics import oracle  # tests/metrics/oracle.py (pythonpath = tests)

from annokit.errors import InvalidValueError
from annokit.metrics import kernels
from annokit.metrics.kernels_ordinal import QUANTITIES, ordinal_sums, ordinal_values


def _rows(n, k, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(k, 0.7), size=n)
    s = rng.dirichlet(np.full(k, 0.7), size=n)
    return p, s, rng.integers(0, k, size=n)


@pytest.mark.parametrize("k", [2, 3, 5, 7])
@pytest.mark.parametrize("quantity", QUANTITIES)
def test_values_and_sums_equal_the_oracle(quantity, k):
    p, s, h = _rows(2_500, k, seed=k)
    values = np.cumsum(np.arange(1.0, k + 1))  # uneven spacing
    expected = oracle.ordinal_values(quantity, p, s, h, values)
    got = ordinal_values(quantity, p, s, h, values)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    w = np.random.default_rng(1).poisson(1.0, size=(3, p.shape[0])).astype(float)
    total, weight = ordinal_sums(quantity, p, s, h, w, values)
    np.testing.assert_allclose(total, w @ expected, rtol=1e-12)
    np.testing.assert_array_equal(weight, w.sum(axis=1))


def test_chunks_on_threads_equal_one_pass():
    n = kernels.PARALLEL_MIN_ROWS + 1_000
    p, s, h = _rows(n, 3)
    total, weight = ordinal_sums("cum_sq_soft", p, s, h, None)
    expected = oracle.ordinal_values("cum_sq_soft", p, s, h)
    assert total == pytest.approx(expected.sum(), rel=1e-12) and weight == n


def test_a_bad_row_raises_the_checks_message():
    p, s, h = _rows(50, 3)
    s[17] = [0.5, 0.6, 0.1]
    with pytest.raises(InvalidValueError, match="row 17"):
        ordinal_sums("emd", p, s, h, None)


def test_one_implementation_mutation_reaches_every_consumer(monkeypatch):
    """Replacing the one Wasserstein formula by a wrong one (here the kernel of another
    quantity) changes the named function, the registry state, the engine's per-item values
    and the perspectivist pooled score alike: none of them has a copy of its own."""
    import pandas as pd

    from annokit.core.votes import Votes
    from annokit.metrics import compute, kernels_ordinal
    from annokit.metrics.ordinal import OrdinalState, ordinal_score
    from annokit.metrics.perspectivist import evaluate_annotators

    p, s, _ = _rows(40, 4, seed=3)
    rng = np.random.default_rng(0)
    rows = [(f"i{i}", f"a{a}", str(rng.integers(0, 4))) for i in range(20) for a in range(4)]
    df = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    votes = Votes.from_long(df, labels=["0", "1", "2", "3"])
    pred = df[["item", "annotator"]].assign(label=rng.choice(["0", "1", "2", "3"], len(df)))

    def consumers():
        return (ordinal_score("emd", p, s), compute("wasserstein", p, s),
                OrdinalState("emd").item_values(p, s)[0],
                evaluate_annotators(votes, pred, scale="ordinal").pooled["wasserstein"])

    before = consumers()
    right = kernels_ordinal._code
    monkeypatch.setattr(kernels_ordinal, "_code",
                        lambda q: QUANTITIES.index("cum_sq_soft") if q == "emd" else right(q))
    after = consumers()
    assert all(a != pytest.approx(b, rel=1e-6) for a, b in zip(after, before, strict=True))
