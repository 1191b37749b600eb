"""One name for each idea: ``seed=`` wherever ``rng=`` is taken, and one
default number of agreement bins."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from annokit.core.checks import seed_or_rng
from annokit.errors import InvalidValueError

COUNTS = np.random.default_rng(0).multinomial(10, [0.6, 0.3, 0.1], size=40)


def _functions():
    from annokit.quality import filter_annotators, flag_annotators
    from annokit.quality.dataset_stats import dataset_stats
    from annokit.subsample import (
        how_many,
        recommend_k,
        split_half,
        subsample_votes,
        subsampling_curve,
    )

    return [how_many, subsampling_curve, recommend_k, split_half, subsample_votes,
            filter_annotators, flag_annotators, dataset_stats]


@pytest.mark.parametrize("func", _functions(), ids=lambda f: f.__name__)
def test_every_function_taking_rng_takes_seed(func):
    params = inspect.signature(func).parameters
    assert "rng" in params and params["seed"].kind is inspect.Parameter.KEYWORD_ONLY


def test_seed_is_rng_an_int():
    from annokit.subsample import how_many

    by_seed = how_many(COUNTS, [1, 5], reps=10, seed=3)
    by_rng = how_many(COUNTS, [1, 5], reps=10, rng=3)
    np.testing.assert_array_equal(by_seed[0].values["tvd"], by_rng[0].values["tvd"])
    assert by_seed[1] == by_rng[1]


def test_seed_and_rng_together_or_a_bad_seed_are_refused():
    with pytest.raises(InvalidValueError, match=r"^how_many: give seed= or rng=, not both "
                                                r"\(seed=3 is rng=3\)$"):
        seed_or_rng(1, 2, "how_many")
    assert seed_or_rng(1, 0, "dataset_stats", default=0) == 1  # the default rng is no conflict
    with pytest.raises(InvalidValueError, match=r"^seed must be a non-negative integer; got -1$"):
        seed_or_rng(-1, None, "x")


def test_one_default_number_of_agreement_bins():
    """SubsampleCurve.by_bin used 4 bins against evaluate's and the report's 5."""
    from annokit.core.soft_labels import AGREEMENT_BINS
    from annokit.metrics.engine import AGREEMENT_BINS as EVALUATE_BINS
    from annokit.report import build_report
    from annokit.subsample import subsampling_curve
    from annokit.subsample.defaults import AGREEMENT_BINS as CLI_BINS

    curve_default = inspect.signature(subsampling_curve).parameters["n_bins"].default
    report_default = inspect.signature(build_report).parameters["bins"].default
    assert AGREEMENT_BINS == EVALUATE_BINS == CLI_BINS == curve_default == report_default == 5
    curve = subsampling_curve(np.random.default_rng(1).multinomial(20, [0.5, 0.3, 0.2], 200),
                              [1, 5], reps=5, rng=0)
    assert curve.by_bin()["bin"].nunique() == AGREEMENT_BINS
