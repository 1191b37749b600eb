"""Krippendorff's alpha and Fleiss' kappa (annokit/core/agreement.py) against independent references."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit.core.agreement import fleiss_kappa, krippendorff_alpha
from annokit.core.resample import item_keys, poisson_weights
from annokit.errors import DegenerateInputWarning, InvalidValueError, SchemaError, VoteSchemaError
from annokit.io import read_votes

# Fleiss (1971), 10 subjects x 14 raters x 5 categories, as tabulated on the
# "Fleiss' kappa" Wikipedia page and in most textbooks; kappa = 0.210 (0.20993).
FLEISS_1971 = np.array([
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
])


@pytest.mark.parametrize("counts, expected", [pytest.param(FLEISS_1971, 0.2099, id="fleiss1971_wikipedia")])
def test_fleiss_kappa_reference(counts, expected):
    assert fleiss_kappa(counts).value == pytest.approx(expected, abs=5e-5)


CROWD = [
    ("snow2008_rte", "rte.standardized.tsv"),
    ("bluebirds", "answer.csv"),
    ("dog", "answer.csv"),
    ("face", "answer.csv"),
    ("chaosnli", "chaosNLI_snli.jsonl"),
    ("chaosnli", "chaosNLI_mnli_m.jsonl"),
    ("chaosnli", "chaosNLI_alphanli.jsonl"),
]


@pytest.mark.parametrize("folder, name", CROWD,
                         ids=[f"krippendorff_pkg_{f}_{n.split('.')[0]}" for f, n in CROWD])
def test_alpha_equals_krippendorff_package(shared_data, folder, name):
    krippendorff = pytest.importorskip("krippendorff")
    counts = read_votes(shared_data(folder, name)).counts()
    expected = krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
    assert krippendorff_alpha(counts).value == pytest.approx(expected, abs=1e-9)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 30), st.integers(2, 5))
def test_alpha_matches_package_on_random_unequal_counts(seed, n_items, n_labels):
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 5, (n_items, n_labels))
    counts[:, 0] += 2  # every item pairable
    if (counts.sum(axis=0) > 0).sum() < 2:
        counts[0, 1] += 1
    expected = krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
    assert krippendorff_alpha(counts).value == pytest.approx(expected, abs=1e-9)


def test_perfect_agreement_is_one_and_bootstrap_is_seeded():
    counts = np.array([[5, 0, 0], [0, 4, 0], [0, 0, 3], [6, 0, 0]])
    assert krippendorff_alpha(counts).value == pytest.approx(1.0)
    assert fleiss_kappa(counts).value == pytest.approx(1.0)
    a = krippendorff_alpha(FLEISS_1971, n_boot=200, rng=3)
    b = krippendorff_alpha(FLEISS_1971, n_boot=200, rng=3)
    assert a == b
    assert a.ci_low <= a.value <= a.ci_high
    gen_a, gen_b = np.random.default_rng(8), np.random.default_rng(8)
    assert krippendorff_alpha(FLEISS_1971, n_boot=50, rng=gen_a) == \
        krippendorff_alpha(FLEISS_1971, n_boot=50, rng=gen_b)


def _repeated_rows_alpha_and_kappa(counts, w):
    """Both coefficients on the count matrix with item i repeated w_i times (the resample)."""
    krippendorff = pytest.importorskip("krippendorff")
    rows = np.repeat(counts, w.astype(int), axis=0)
    if (rows.sum(axis=0) > 0).sum() < 2:
        return np.nan, np.nan
    alpha = krippendorff.alpha(value_counts=rows, level_of_measurement="nominal")
    m = rows.sum(axis=1)
    p_bar = ((rows * (rows - 1)).sum(axis=1) / (m * (m - 1))).mean()
    p_e = ((rows.sum(axis=0) / m.sum()) ** 2).sum()
    return alpha, (p_bar - p_e) / (1 - p_e)


def test_bootstrap_replicates_are_the_coefficients_of_repeated_items(shared_data):
    votes = read_votes(shared_data("dog", "answer.csv"))
    counts = votes.counts()
    keep = counts.sum(axis=1) >= 2
    a = krippendorff_alpha(counts, n_boot=40, rng=5, keys=votes.item_ids)
    k = fleiss_kappa(counts, n_boot=40, rng=5, keys=votes.item_ids)
    w = poisson_weights(item_keys(votes.item_ids[keep]), 5, 0, 40)
    reps = np.array([_repeated_rows_alpha_and_kappa(counts[keep], row) for row in w])
    for result, col in ((a, 0), (k, 1)):
        low, high = np.quantile(reps[:, col], [0.025, 0.975])
        assert result.ci_low == pytest.approx(low, abs=1e-9)
        assert result.ci_high == pytest.approx(high, abs=1e-9)
        assert result.n_invalid == 0 and result.n_boot == 40


def test_intervals_follow_item_ids_not_rows():
    counts = np.random.default_rng(0).multinomial(6, [0.5, 0.3, 0.2], size=400)
    ids = np.array([f"q{i}" for i in range(400)])
    perm = np.random.default_rng(1).permutation(400)
    for coefficient in (krippendorff_alpha, fleiss_kappa):
        a = coefficient(counts, n_boot=300, rng=2, keys=ids)
        b = coefficient(counts[perm], n_boot=300, rng=2, keys=ids[perm])
        assert b.value == pytest.approx(a.value, rel=1e-12)
        assert b.ci_low == pytest.approx(a.ci_low, rel=1e-12)
        assert b.ci_high == pytest.approx(a.ci_high, rel=1e-12)
        # row positions as keys: the draw moves with the rows
        c = coefficient(counts[perm], n_boot=300, rng=2)
        assert (c.ci_low, c.ci_high) != (b.ci_low, b.ci_high)


def test_undefined_replicates_are_counted():
    # two items, one all label 0 and one all label 1: alpha is 1 when both are drawn and
    # undefined when only one (or none) is
    a = krippendorff_alpha([[3, 0], [0, 3]], n_boot=500, rng=0)
    w = poisson_weights(np.arange(2, dtype=np.uint64), 0, 0, 500)
    assert a.n_invalid == int(((w[:, 0] == 0) | (w[:, 1] == 0)).sum()) > 0
    assert a.ci_low == a.ci_high == 1.0 and a.to_dict()["n_invalid"] == a.n_invalid


def test_quality_alpha_uses_the_same_formula(shared_data):
    from annokit.quality.stats import krippendorff_alpha_nominal

    votes = read_votes(shared_data("snow2008_rte", "rte.standardized.tsv"))
    assert krippendorff_alpha_nominal(votes) == pytest.approx(
        krippendorff_alpha(votes.counts()).value, rel=1e-14)


def test_items_with_one_vote_are_left_out_with_a_warning():
    with pytest.warns(DegenerateInputWarning, match="fewer than two votes"):
        res = krippendorff_alpha([[3, 1], [0, 2], [1, 0]])
    assert res.n_items == 2


def test_errors():
    with (pytest.raises(VoteSchemaError, match="at least one item with two or more votes"),
          pytest.warns(DegenerateInputWarning)):
        fleiss_kappa([[1, 0], [0, 1]])
    with pytest.raises(InvalidValueError, match="n_boot must be >= 0; got -1"):
        krippendorff_alpha(FLEISS_1971, n_boot=-1)
    with pytest.raises(InvalidValueError, match="n_boot must be >= 0; got 1.5"):
        krippendorff_alpha(FLEISS_1971, n_boot=1.5)
    with pytest.raises(InvalidValueError, match=r"confidence must be in \(0, 1\); got 1.5"):
        fleiss_kappa(FLEISS_1971, n_boot=10, confidence=1.5)
    with pytest.raises(SchemaError, match=re.escape(
            "keys must hold one key per item (10 for counts); got shape (3,)")):
        fleiss_kappa(FLEISS_1971, n_boot=10, keys=["a", "b", "c"])
    with pytest.warns(DegenerateInputWarning, match="alpha is undefined"):
        assert np.isnan(krippendorff_alpha([[3, 0], [2, 0]]).value)
    with pytest.warns(DegenerateInputWarning, match="kappa is undefined"):
        assert np.isnan(fleiss_kappa([[3, 0], [2, 0]]).value)


# -- levels of measurement ------------------------------------------------------

import json  # noqa: E402
import warnings  # noqa: E402

import pandas as pd  # noqa: E402

from annokit.core.agreement import annotator_kappa, cohen_kappa  # noqa: E402
from annokit.core.labels import LabelSet  # noqa: E402
from annokit.core.ratings import Ratings  # noqa: E402
from annokit.core.votes import Votes  # noqa: E402

LEVELS = ("nominal", "ordinal", "interval", "ratio")


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("folder, name", CROWD,
                         ids=[f"krippendorff_pkg_{f}_{n.split('.')[0]}" for f, n in CROWD])
def test_levels_equal_krippendorff_package_on_counts(shared_data, folder, name, level):
    krippendorff = pytest.importorskip("krippendorff")
    counts = read_votes(shared_data(folder, name)).counts()
    values = np.arange(1, counts.shape[1] + 1, dtype=float)  # columns as ordered categories 1..K
    expected = krippendorff.alpha(value_counts=counts, value_domain=values,
                                  level_of_measurement=level)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        got = krippendorff_alpha(counts, level=level, values=values).value
    assert got == pytest.approx(expected, abs=1e-9)


def _lewidi_reliability(path):
    """LeWiDi 2023 JSON -> (annotators x items) matrix with NaN, parsed here independently."""
    data = json.loads(path.read_text(encoding="utf-8"))
    anns = sorted({a for rec in data.values() for a in rec["annotators"].split(",")})
    col = {a: j for j, a in enumerate(anns)}
    mat = np.full((len(anns), len(data)), np.nan)
    for i, rec in enumerate(data.values()):
        for a, lab in zip(rec["annotators"].split(","), rec["annotations"].split(","), strict=True):
            mat[col[a], i] = float(lab)
    return mat


def _ratings_from_matrix(mat, scale="interval"):
    ann, item = np.nonzero(~np.isnan(mat))
    order = np.argsort(item, kind="stable")
    return Ratings.from_long(item[order].astype(str), ann[order].astype(str), mat[ann, item][order],
                             scale=scale)


LEWIDI = [("ArMIS", split) for split in ("train", "dev", "test")] + \
         [("HS-Brexit", split) for split in ("train", "dev", "test")]


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("folder, split", LEWIDI,
                         ids=[f"krippendorff_pkg_lewidi2023_{f}_{s}" for f, s in LEWIDI])
def test_levels_equal_krippendorff_package_on_lewidi2023(shared_data, folder, split, level):
    krippendorff = pytest.importorskip("krippendorff")
    mat = _lewidi_reliability(shared_data("lewidi2023", folder, f"{folder}_{split}.json"))
    expected = krippendorff.alpha(reliability_data=mat, level_of_measurement=level)
    assert krippendorff_alpha(_ratings_from_matrix(mat, "ratio"), level=level).value == \
        pytest.approx(expected, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 8), st.integers(2, 40),
       st.sampled_from(["integers", "continuous"]), st.floats(0.0, 0.7))
def test_levels_equal_package_on_random_ratings_with_missing(seed, n_ann, n_items, kind, p_missing):
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(seed)
    if kind == "integers":
        mat = rng.integers(0, 7, (n_ann, n_items)).astype(float)
    else:
        mat = np.round(rng.gamma(2.0, 3.0, (n_ann, n_items)), 3)
    mat[rng.random(mat.shape) < p_missing] = np.nan
    pairable = (~np.isnan(mat)).sum(axis=0) >= 2
    distinct = np.unique(mat[:, pairable][~np.isnan(mat[:, pairable])])
    if not pairable.any() or distinct.size < 2:
        return  # the package refuses these; our own errors are tested elsewhere
    ratings = _ratings_from_matrix(mat, "ratio")
    for level in LEVELS:
        expected = krippendorff.alpha(reliability_data=mat, level_of_measurement=level)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateInputWarning)
            got = krippendorff_alpha(ratings, level=level).value
        assert got == pytest.approx(expected, abs=1e-9), level
        if kind == "integers":  # the same data as counts over the categories 0..6
            counts = ratings.to_votes().counts()
            values = ratings.to_votes().labels.values
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DegenerateInputWarning)
                by_counts = krippendorff_alpha(counts, level=level, values=values).value
            assert by_counts == pytest.approx(expected, abs=1e-9), level


def test_votes_carry_their_level_and_values(shared_data):
    votes = read_votes(shared_data("bluebirds", "answer.csv"), scale="ordinal")
    assert votes.labels.scale == "ordinal"
    counts = votes.counts()
    assert krippendorff_alpha(votes).value == krippendorff_alpha(counts, level="ordinal").value
    assert krippendorff_alpha(votes, level="nominal").value == krippendorff_alpha(counts).value
    interval = Votes.from_counts([[2, 1, 0], [0, 1, 2], [0, 3, 0]],
                                 labels=LabelSet(["1", "2", "3"], scale="interval"))
    # hand computation (Krippendorff 2011): D_o sums 2 + 2 + 0, n = 9, D_e = 72
    assert krippendorff_alpha(interval).value == pytest.approx(1 - 8 * 4 / 72)


def _repeated_alpha(mat, w, level):
    krippendorff = pytest.importorskip("krippendorff")
    cols = np.repeat(np.arange(mat.shape[1]), w.astype(int))
    sub = mat[:, cols]
    if np.unique(sub[~np.isnan(sub)]).size < 2:
        return np.nan
    return krippendorff.alpha(reliability_data=sub, level_of_measurement=level)


@pytest.mark.parametrize("level", ["ordinal", "interval", "ratio"])
def test_level_bootstrap_replicates_are_alpha_of_repeated_items(level):
    rng = np.random.default_rng(4)
    mat = rng.integers(0, 5, (4, 60)).astype(float)
    mat[rng.random(mat.shape) < 0.3] = np.nan
    mat[:2, :] = np.where(np.isnan(mat[:2, :]), 1.0, mat[:2, :])  # every item pairable
    ratings = _ratings_from_matrix(mat)
    res = krippendorff_alpha(ratings, level=level, n_boot=30, rng=9)
    w = poisson_weights(item_keys(ratings.item_ids), 9, 0, 30)
    assert ratings.item_ids.tolist() == [str(i) for i in range(60)]  # column i is item "i"
    reps = np.array([_repeated_alpha(mat, row, level) for row in w])
    low, high = np.quantile(reps, [0.025, 0.975])
    assert res.ci_low == pytest.approx(low, abs=1e-9)
    assert res.ci_high == pytest.approx(high, abs=1e-9)


@pytest.mark.parametrize("level", LEVELS)
def test_level_intervals_follow_item_ids_not_rows(level):
    rng = np.random.default_rng(0)
    counts = rng.multinomial(6, [0.4, 0.3, 0.2, 0.1], size=300)
    ids = np.array([f"q{i}" for i in range(300)])
    perm = rng.permutation(300)
    values = [1.0, 2.0, 4.0, 8.0]
    a = krippendorff_alpha(counts, level=level, values=values, n_boot=200, rng=2, keys=ids)
    b = krippendorff_alpha(counts[perm], level=level, values=values, n_boot=200, rng=2,
                           keys=ids[perm])
    assert b.value == pytest.approx(a.value, rel=1e-12)
    assert (b.ci_low, b.ci_high) == pytest.approx((a.ci_low, a.ci_high), rel=1e-12)
    assert a.ci_low <= a.value <= a.ci_high


def test_level_errors_and_degenerate_input():
    with pytest.raises(InvalidValueError, match="the interval level needs the number of each column"):
        krippendorff_alpha([[1, 1], [2, 0]], level="interval")
    with pytest.raises(InvalidValueError, match="level must be one of"):
        krippendorff_alpha([[1, 1], [2, 0]], level="likert")
    with pytest.raises(SchemaError, match=r"values must hold one number per count column \(2\)"):
        krippendorff_alpha([[1, 1], [2, 0]], level="interval", values=[1, 2, 3])
    with pytest.raises(InvalidValueError, match="ratio values must be >= 0"):
        krippendorff_alpha([[1, 1], [2, 0]], level="ratio", values=[-1, 2])
    with pytest.raises(InvalidValueError, match="values= applies to count matrices"):
        krippendorff_alpha(Ratings.from_long(["a", "a"], None, [1.0, 2.0]), values=[1, 2])
    with pytest.raises(SchemaError, match="at least one item with two or more ratings"), \
            pytest.warns(DegenerateInputWarning, match="2 item"):
        krippendorff_alpha(Ratings.from_long(["a", "b"], None, [1.0, 2.0]))
    with pytest.warns(DegenerateInputWarning, match=r"krippendorff_alpha \(interval\): the values "
                                                    "show no variation"):
        assert np.isnan(krippendorff_alpha(Ratings.from_long(["a", "a"], None, [0.1, 0.1])).value)
    with pytest.warns(DegenerateInputWarning, match="the values show no variation"):
        assert np.isnan(krippendorff_alpha([[3, 0], [2, 0]], level="ordinal").value)


# -- Cohen's kappa --------------------------------------------------------------

def _kappa_by_definition(a, b, k, weights):
    """Cohen (1968), eq. 4, with explicit loops over the k x k table."""
    n = len(a)
    p = [[0.0] * k for _ in range(k)]
    for x, y in zip(a, b, strict=True):
        p[x][y] += 1 / n
    row = [sum(p[i]) for i in range(k)]
    col = [sum(p[i][j] for i in range(k)) for j in range(k)]
    v = {None: lambda i, j: float(i != j), "linear": lambda i, j: abs(i - j),
         "quadratic": lambda i, j: (i - j) ** 2}[weights]
    obs = sum(v(i, j) * p[i][j] for i in range(k) for j in range(k))
    exp = sum(v(i, j) * row[i] * col[j] for i in range(k) for j in range(k))
    return 1 - obs / exp


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 6), st.integers(2, 60),
       st.sampled_from([None, "linear", "quadratic"]))
def test_cohen_kappa_equals_the_definition(seed, k, n, weights):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, k, n)
    b = np.where(rng.random(n) < 0.5, a, rng.integers(0, k, n))
    if len(set(a) | set(b)) < 2:
        return
    names = [str(10 * j - 20) for j in range(k)]  # numeric names: -20, -10, 0, ...
    got = cohen_kappa(np.array(names)[a], np.array(names)[b], weights=weights,
                      labels=LabelSet(names, scale="ordinal")).value
    assert got == pytest.approx(_kappa_by_definition(a, b, k, weights), abs=1e-12)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_equals_sklearn(weights):
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(1)
    a = rng.integers(1, 7, 200)
    b = np.clip(a + rng.integers(-2, 3, 200), 1, 6)
    assert cohen_kappa(a, b, weights=weights).value == pytest.approx(
        sklearn_metrics.cohen_kappa_score(a, b, weights=weights), abs=1e-12)


def test_cohen_kappa_order_and_bootstrap():
    a, b = ["-5", "-5", "2", "10", "10"], ["2", "-5", "2", "10", "2"]
    numeric = {"-5": 0, "2": 1, "10": 2}
    text = {"-5": 0, "10": 1, "2": 2}
    # numeric names are ordered numerically (not as text: "-5" < "10" < "2")
    by_number = _kappa_by_definition([numeric[x] for x in a], [numeric[x] for x in b], 3, "linear")
    by_text = _kappa_by_definition([text[x] for x in a], [text[x] for x in b], 3, "linear")
    assert by_number != pytest.approx(by_text)
    assert cohen_kappa(a, b, weights="linear").value == pytest.approx(by_number, abs=1e-12)
    assert cohen_kappa(a, b, weights="linear", labels=["-5", "10", "2"]).value == \
        pytest.approx(by_text, abs=1e-12)
    a, b = a[:4], b[:4]
    ids = [f"u{i}" for i in range(4)]
    r1 = cohen_kappa(a * 10, b * 10, weights="quadratic", n_boot=100, rng=1,
                     keys=[f"{x}{j}" for j in range(10) for x in ids])
    assert r1.ci_low <= r1.value <= r1.ci_high
    with pytest.raises(InvalidValueError, match=r"weighted kappa needs the order of labels"):
        cohen_kappa(["lo", "hi"], ["hi", "hi"], weights="linear")
    assert cohen_kappa(["lo", "hi"], ["hi", "lo"]).value == pytest.approx(-1.0)
    with pytest.raises(InvalidValueError, match="weights must be one of"):
        cohen_kappa([1, 2], [1, 2], weights="cubic")
    with pytest.raises(SchemaError, match="equal length; got 2 and 1"):
        cohen_kappa([1, 2], [1])
    with pytest.raises(InvalidValueError, match="unknown label '7'"):
        cohen_kappa([1, 7], [1, 2], labels=["1", "2"])
    with pytest.warns(DegenerateInputWarning, match="kappa is undefined"):
        assert np.isnan(cohen_kappa([1, 1], [1, 1]).value)


def test_annotator_kappa_on_votes():
    df = pd.DataFrame({"item": list("aabbccdd") + ["e"], "annotator": list("xyxyxyxy") + ["x"],
                       "label": ["1", "2", "3", "3", "2", "2", "1", "1", "3"]})
    ordinal = Votes.from_long(df, labels=LabelSet(["1", "2", "3"], scale="ordinal"))
    res = annotator_kappa(ordinal, "x", "y", weights="quadratic")
    x, y = [0, 2, 1, 0], [1, 2, 1, 0]  # items a-d; e has one annotator only
    assert res.value == pytest.approx(_kappa_by_definition(x, y, 3, "quadratic"))
    assert res.n_items == 4
    nominal = Votes.from_long(df)
    assert annotator_kappa(nominal, "x", "y").value == pytest.approx(_kappa_by_definition(x, y, 3, None))
    with pytest.raises(InvalidValueError, match="weighted kappa needs ordered labels; the label set "
                                                "is nominal"):
        annotator_kappa(nominal, "x", "y", weights="linear")
    with pytest.raises(SchemaError, match="unknown annotator 'z'"):
        annotator_kappa(nominal, "x", "z")
    with pytest.raises(SchemaError, match="needs annotator ids"):
        annotator_kappa(Votes.from_counts([[1, 1]]), "x", "y")

