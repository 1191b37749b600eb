"""Every registered metric, one test each (scikit-learn's sklearn/metrics/tests/test_common.py).

For each metric in REGISTRY: one state over all rows == seven states over random batches merged
in random order (1e-12 relative); compute() == the state; integer weights == repeated rows;
2-D replicate weights == separate 1-D states; invariance to item order and to a consistent
relabelling of classes (not for the order-aware metrics); documented values on one-hot and
uniform inputs; rejection of invalid inputs; and complete declarations (summary, unit,
citation, docstring on the state class, applicability). Inputs follow each metric's
applicability: two label columns for the binary metrics, per-label Bernoulli rows for the
multi-label ones.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit.errors import InvalidValueError, SchemaError
from annokit.metrics import REGISTRY, available, compute
from annokit.metrics.registry import SCALES, TASKS, MetricSpec, check_applicable
from annokit.metrics.states import MetricState
from annokit.metrics.sums import ITEM_QUANTITIES, quantity_needs

NAMES = list(REGISTRY)
RTOL = 1e-12

#: Exactly today's ``annokit evaluate --json`` keys, in output order.
EXPECTED_NAMES = ("accuracy", "ece", "ece_adaptive", "mce", "classwise_ece", "smece",
                  "smece_classwise", "rank_cs", "rank_cs_tie_aware", "ent_ce", "ent_ce_signed",
                  "dist_ce", "jsd", "kl", "brier", "brier_soft", "nll", "nll_majority")
#: The order-aware metrics, after the original ones, in output order.
ORDINAL_NAMES = ("wasserstein", "manhattan", "lewidi_ce", "mean_abs_error", "rps", "rps_soft")
BINARY_NAMES = ("ece_binary", "mce_binary")
MULTILABEL_NAMES = ("ece_multilabel", "brier_multilabel", "bce_multilabel")
#: Estimators requested by name only.
ESTIMATOR_NAMES = ("ece_debiased",)
#: Order-aware: their value changes when the categories are reordered.
ORDER_AWARE = ("wasserstein", "mean_abs_error", "rps", "rps_soft")
#: The calibration estimators (not listed by default) and their options.
CALIBRATION_OPTIONS = {"ece_sweep": {"norm": 1}, "tace": {"n_bins": 10, "threshold": 1e-3},
                       "macro_ce": {}, "kde_ece": {}}
#: The names above in output order; a metric declared in its own module (its place and
#: values checked by its own test file) may sit between them.
PUBLISHED_NAMES = (EXPECTED_NAMES + ORDINAL_NAMES + BINARY_NAMES + MULTILABEL_NAMES
                   + tuple(CALIBRATION_OPTIONS) + ESTIMATOR_NAMES)


def kind(name: str | None) -> str:
    spec = REGISTRY[name] if name else None
    if spec is not None and spec.task == "multilabel":
        return "multilabel"
    return "binary" if spec is not None and spec.n_labels == 2 else "single"


def make_inputs(seed: int, n: int = 150, k: int = 3, *, ties: bool = True, name: str | None = None):
    """Model rows with one-hot and uniform rows (ties, confidences on bin edges) when ``ties``;
    human rows from five votes (ties, zeros); hard labels the first human maximum.

    ``name`` fits the inputs to the metric: two columns for a binary metric; for a multi-label
    one, per-label probabilities (with exact 0, 1 and bin edges when ``ties``), the fraction of
    five annotators ticking each label, and the majority per label.
    """
    rng = np.random.default_rng(seed)
    if kind(name) == "binary":
        k = 2
    if kind(name) == "multilabel":
        probs = rng.random((n, k))
        if ties:
            m = max(1, n // 10)
            probs[:m] = rng.integers(0, 2, (m, k))
            probs[m:m + 3] = 0.5
        soft = rng.binomial(5, rng.random((n, k))) / 5 if ties else rng.random((n, k))
        return probs, soft, (soft > 0.5).astype(float)
    probs = rng.dirichlet(np.full(k, 0.7), size=n)
    if not ties:
        soft = rng.dirichlet(np.ones(k), size=n)
        return probs, soft, rng.integers(0, k, n)
    m = max(1, n // 10)
    probs[:m] = np.eye(k)[rng.integers(0, k, m)]
    probs[m:m + 3] = 1.0 / k
    soft = rng.multinomial(5, np.full(k, 1.0 / k), size=n) / 5
    return probs, soft, soft.argmax(axis=1)


def same(a, b, rtol=RTOL):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                               rtol=rtol, atol=0)


def one_state(name, probs, soft, hard, weights=None, **options):
    return REGISTRY[name].state(**options).update(probs, soft, hard, weights)


# --------------------------------------------------------------------------- declarations

def check_spec(key: str, spec: MetricSpec) -> None:
    """What every registered metric must declare; raises AssertionError naming what is missing."""
    assert spec.name == key, f"{key}: name {spec.name!r} differs from its key"
    assert spec.summary.strip() and "\n" not in spec.summary, f"{key}: no one-line summary"
    assert spec.unit.strip(), f"{key}: no unit"
    assert re.search(r"\b(19|20)\d\d\b", spec.citation), f"{key}: citation without a year"
    assert (spec.state_class.__doc__ or "").strip(), f"{key}: state class without a docstring"
    assert issubclass(spec.state_class, MetricState), f"{key}: not a MetricState"
    assert spec.needs and spec.needs <= {"soft", "hard"}, f"{key}: needs {spec.needs}"
    assert spec.lower_is_better in (True, False, None), f"{key}: lower_is_better"
    if spec.per_item is not None:
        assert spec.per_item in ITEM_QUANTITIES, f"{key}: unknown per-item quantity"
        assert spec.needs == {quantity_needs(spec.per_item)}, f"{key}: needs vs quantity"
    state = spec.state()
    assert state.needs == spec.needs, f"{key}: state needs {state.needs}"
    assert spec.scales and spec.scales <= set(SCALES), f"{key}: scales {spec.scales}"
    assert spec.listed is None or spec.listed <= spec.scales, f"{key}: listed outside scales"
    assert spec.task in TASKS, f"{key}: task {spec.task!r}"
    assert spec.n_labels in (None, 2), f"{key}: n_labels {spec.n_labels}"


@pytest.mark.parametrize("name", NAMES)
def test_declaration_is_complete(name):
    check_spec(name, REGISTRY[name])


@pytest.mark.parametrize("field, value, missing", [
    ("summary", "", "no one-line summary"),
    ("unit", " ", "no unit"),
    ("citation", "Somebody, a venue", "citation without a year"),
    ("state_class", type("Undocumented", (MetricState,), {}), "without a docstring"),
])
def test_declaration_check_catches_a_gap(field, value, missing):
    bad = replace(REGISTRY["ece"], **{field: value})
    with pytest.raises(AssertionError, match=missing):
        check_spec("ece", bad)


def test_names_order_and_read_only():
    assert tuple(name for name in REGISTRY if name in PUBLISHED_NAMES) == PUBLISHED_NAMES
    with pytest.raises(TypeError):
        REGISTRY["new"] = REGISTRY["ece"]  # type: ignore[index]
    with pytest.raises(AttributeError):
        REGISTRY["ece"].unit = "bits"  # type: ignore[misc]


def test_available():
    assert available(has_soft=True, has_hard=True) == EXPECTED_NAMES
    assert available(has_soft=False, has_hard=False) == ()
    hard_only = available(has_soft=False, has_hard=True)
    assert hard_only == ("accuracy", "ece", "ece_adaptive", "mce", "classwise_ece", "brier",
                         "nll_majority")
    assert set(available(has_soft=True, has_hard=False)) == set(EXPECTED_NAMES) - set(hard_only)
    assert available(True, True, scale="nominal", n_labels=None, multilabel=False) == EXPECTED_NAMES
    for scale in ("ordinal", "interval", "ratio"):
        assert available(True, True, scale=scale) == EXPECTED_NAMES + ORDINAL_NAMES
    assert available(False, True, scale="ordinal")[-1:] == ("rps",)
    assert available(True, True, n_labels=2) == EXPECTED_NAMES + BINARY_NAMES
    assert available(True, True, n_labels=3) == EXPECTED_NAMES
    assert available(True, True, scale="ordinal", n_labels=2) == \
        EXPECTED_NAMES + ORDINAL_NAMES + BINARY_NAMES
    assert available(True, True, multilabel=True) == MULTILABEL_NAMES
    assert available(True, False, multilabel=True) == MULTILABEL_NAMES[1:]
    assert available(True, True, scale="ordinal", multilabel=True) == ()


@pytest.mark.parametrize("name, data, match", [
    ("wasserstein", {}, "applies to ordinal, interval, ratio single-label data; the data are "
     "nominal single-label"),
    ("ece_binary", {"n_labels": 3}, "applies to nominal, ordinal, interval, ratio single-label "
     "data with 2 labels; the data are nominal single-label with 3 labels"),
    ("brier_multilabel", {}, "applies to nominal multi-label data; the data are nominal "
     "single-label"),
    ("ece", {"multilabel": True}, "applies to .* single-label data; the data are nominal "
     "multi-label"),
])
def test_check_applicable_refuses(name, data, match):
    with pytest.raises(InvalidValueError, match=f"metric '{name}' {match}"):
        check_applicable([name, "ece"], **data)


def test_check_applicable_accepts_requested_metrics():
    # manhattan and lewidi_ce apply to nominal data when asked for by name (not listed there)
    assert check_applicable(["manhattan", "lewidi_ce", "ece"]) == ("manhattan", "lewidi_ce", "ece")
    assert check_applicable("ece_binary") == ("ece_binary",)  # number of labels not stated
    assert check_applicable("wasserstein", scale="interval") == ("wasserstein",)
    with pytest.raises(InvalidValueError, match="scale must be one of"):
        available(True, True, scale="likert")
    with pytest.raises(InvalidValueError, match="unknown metric 'nope'"):
        check_applicable(["nope"])


def _expected_options(name):
    if name in ("wasserstein", "mean_abs_error"):
        return {"values": None}
    if name in BINARY_NAMES:
        return {"n_bins": 10, "positive": 1}
    binned = ("ece", "ece_adaptive", "mce", "classwise_ece", "smece", "smece_classwise",
              "ece_multilabel", "ece_debiased")
    if name in CALIBRATION_OPTIONS:
        return CALIBRATION_OPTIONS[name]
    return {"n_bins": 10} if name in binned else {}


@pytest.mark.parametrize("name", NAMES)
def test_options_and_defaults(name):
    spec = REGISTRY[name]
    assert dict(spec.options) == _expected_options(name)
    probs, soft, hard = make_inputs(0, name=name)
    same(compute(name, probs, soft, hard), compute(name, probs, soft, hard, **spec.options))
    with pytest.raises(InvalidValueError, match=rf"metric '{name}' accepts options .*got \['bins'\]"):
        spec.state(bins=3)


def test_unknown_metric():
    with pytest.raises(InvalidValueError, match=r"unknown metric 'ecee'; did you mean ece, smece, "
                                                r"ece_sweep\? registered: accuracy, ece, "):
        compute("ecee", [[1.0, 0.0]], hard=[0])
    with pytest.raises(InvalidValueError, match=r"unknown metric 'zzz'; registered: accuracy, "):
        compute("zzz", [[1.0, 0.0]], hard=[0])


@pytest.mark.parametrize("n_bins, match", [(0, "got 0"), (2.5, "got 2.5"), (True, "got True")])
def test_binned_option_values(n_bins, match):
    for name in ("ece", "ece_adaptive", "smece_classwise", "ece_binary", "ece_multilabel"):
        with pytest.raises(InvalidValueError, match=f"n_bins must be a positive integer; {match}"):
            REGISTRY[name].state(n_bins=n_bins)


# --------------------------------------------------------------------------- mergeability

def split_merge(name, probs, soft, hard, weights, rng, n_states=7, **options):
    """Rows dealt at random to ``n_states`` states (some may get none), merged in random order."""
    owner = rng.integers(0, n_states, probs.shape[0])
    states = []
    for j in range(n_states):
        rows = np.flatnonzero(owner == j)
        w = None if weights is None else weights[..., rows]
        states.append(one_state(name, probs[rows], soft[rows], hard[rows], w, **options))
    order = rng.permutation(n_states)
    merged = states[order[0]]
    for j in order[1:]:
        merged.merge(states[j])
    return merged.compute()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", range(3))
def test_seven_merged_states_equal_one(name, seed):
    probs, soft, hard = make_inputs(seed, name=name)
    rng = np.random.default_rng(100 + seed)
    whole = one_state(name, probs, soft, hard).compute()
    same(split_merge(name, probs, soft, hard, None, rng), whole)
    weights = rng.poisson(1.0, size=(4, probs.shape[0])).astype(float)
    options = {"n_bins": 7} if "n_bins" in REGISTRY[name].options else {}
    same(split_merge(name, probs, soft, hard, weights, rng, **options),
         one_state(name, probs, soft, hard, weights, **options).compute())


@pytest.mark.parametrize("name", NAMES)
def test_a_fresh_state_takes_the_merged_shape_and_updates_on(name):
    """merge into a never-updated state, then update it: the same as one state of all rows."""
    probs, soft, hard = make_inputs(5, name=name)
    half = probs.shape[0] // 2
    fresh = REGISTRY[name].state().merge(one_state(name, probs[:half], soft[:half], hard[:half]))
    assert fresh.n_labels == probs.shape[1]
    fresh.update(probs[half:], soft[half:], hard[half:])
    same(fresh.compute(), one_state(name, probs, soft, hard).compute())
    wider = make_inputs(6, 20, probs.shape[1] + 1, name=None if kind(name) == "binary" else name)
    with pytest.raises(SchemaError, match="label columns"):  # checked against the merged shape
        fresh.update(*wider)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 60), k=st.integers(2, 5),
       n_states=st.integers(1, 9))
def test_any_split_any_order(seed, n, k, n_states):
    rng = np.random.default_rng(seed)
    for name in NAMES:
        probs, soft, hard = make_inputs(seed, n, k, name=name)
        same(split_merge(name, probs, soft, hard, None, rng, n_states),
             one_state(name, probs, soft, hard).compute())


@pytest.mark.parametrize("name", NAMES)
def test_compute_equals_state(name):
    probs, soft, hard = make_inputs(1, name=name)
    assert compute(name, probs, soft, hard) == one_state(name, probs, soft, hard).compute()
    w = np.random.default_rng(2).random(probs.shape[0])
    assert compute(name, probs, soft, hard, weights=w) == \
        one_state(name, probs, soft, hard, w).compute()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", range(3))
def test_integer_weights_equal_repeated_rows(name, seed):
    probs, soft, hard = make_inputs(seed, name=name)
    w = np.random.default_rng(seed).poisson(1.3, probs.shape[0])  # zeros included
    rep = np.repeat(np.arange(probs.shape[0]), w)
    same(compute(name, probs, soft, hard, weights=w.astype(float)),
         compute(name, probs[rep], soft[rep], hard[rep]))


@pytest.mark.parametrize("name", NAMES)
def test_replicate_weights_equal_separate_states(name):
    probs, soft, hard = make_inputs(4, name=name)
    weights = np.random.default_rng(4).poisson(1.0, size=(5, probs.shape[0])).astype(float)
    weights[2] = 0.0  # a replicate with no weight at all: NaN
    got = compute(name, probs, soft, hard, weights=weights)
    assert got.shape == (5,)
    expected = [compute(name, probs, soft, hard, weights=w) for w in weights]
    assert np.isnan(got[2]) and np.isnan(expected[2])
    same(np.delete(got, 2), np.delete(expected, 2))


@pytest.mark.parametrize("name", NAMES)
def test_no_weight_is_nan(name):
    probs, soft, hard = make_inputs(5, n=10, name=name)
    assert np.isnan(REGISTRY[name].state().compute())
    assert np.isnan(compute(name, probs, soft, hard, weights=np.zeros(10)))
    empty = REGISTRY[name].state().update(probs[:0], soft[:0], hard[:0])
    assert np.isnan(empty.compute())
    assert empty.update(probs, soft, hard).compute() == compute(name, probs, soft, hard)


# --------------------------------------------------------------------------- invariances

@pytest.mark.parametrize("name", NAMES)
def test_item_order(name):
    probs, soft, hard = make_inputs(6, name=name)
    perm = np.random.default_rng(6).permutation(probs.shape[0])
    same(compute(name, probs[perm], soft[perm], hard[perm]), compute(name, probs, soft, hard))


SINGLE_NAMES = [n for n in NAMES if kind(n) == "single"]


@pytest.mark.parametrize("name", [n for n in SINGLE_NAMES if n not in ORDER_AWARE])
@pytest.mark.parametrize("perm", [[2, 0, 3, 1], [3, 2, 1, 0]])
def test_class_relabelling(name, perm):
    # Continuous rows: no ties, so argmax (first on ties) and the strict RankCS (tied human
    # classes in label order) are invariant too; with ties they are not (documented).
    probs, soft, hard = make_inputs(7, k=4, ties=False)
    perm = np.array(perm)  # new column j holds old class perm[j]
    same(compute(name, probs[:, perm], soft[:, perm], np.argsort(perm)[hard]),
         compute(name, probs, soft, hard))


@pytest.mark.parametrize("name", BINARY_NAMES)
def test_binary_relabelling_with_the_positive_class(name):
    probs, soft, hard = make_inputs(7, ties=False, name=name)
    same(compute(name, probs[:, ::-1], soft[:, ::-1], 1 - hard, positive=0),
         compute(name, probs, soft, hard, positive=1))


@pytest.mark.parametrize("name", MULTILABEL_NAMES)
def test_multilabel_label_permutation(name):
    probs, soft, hard = make_inputs(7, k=4, ties=False, name=name)
    perm = np.array([2, 0, 3, 1])
    same(compute(name, probs[:, perm], soft[:, perm], hard[:, perm]),
         compute(name, probs, soft, hard))


@pytest.mark.parametrize("name", ORDER_AWARE)
def test_order_aware_metrics_see_the_order(name):
    # moving mass to the far category costs more than to the next one: not invariant
    near = compute(name, [[0.0, 1.0, 0.0]], [[1.0, 0.0, 0.0]], [0])
    far = compute(name, [[0.0, 0.0, 1.0]], [[1.0, 0.0, 0.0]], [0])
    assert far > near > 0


def test_relabelling_changes_tie_dependent_metrics():
    probs = np.array([[0.4, 0.4, 0.2]])
    soft = np.array([[0.2, 0.2, 0.6]])
    perm = np.array([1, 0, 2])
    assert compute("accuracy", probs, soft, [0]) == 1.0  # first maximum
    assert compute("accuracy", probs[:, perm], soft[:, perm], [1]) == 0.0
    p2 = np.array([[0.3, 0.1, 0.6]])
    assert compute("rank_cs", p2, soft) == 0.0 and compute("rank_cs", p2[:, perm], soft[:, perm]) == 1.0
    assert compute("rank_cs_tie_aware", p2, soft) == compute("rank_cs_tie_aware", p2[:, perm],
                                                             soft[:, perm]) == 1.0


# --------------------------------------------------------------------------- documented values

def _uniform_values(k):
    """p and soft uniform, hard = 0 (the first maximum): the values the definitions give."""
    return {"accuracy": 1.0, "ece": 1 - 1 / k, "ece_adaptive": 1 - 1 / k, "mce": 1 - 1 / k,
            "classwise_ece": 2 * (k - 1) / k**2, "smece": 0.0, "smece_classwise": 0.0,
            "rank_cs": 1.0, "rank_cs_tie_aware": 1.0, "ent_ce": 0.0, "ent_ce_signed": 0.0,
            "dist_ce": 0.0, "jsd": 0.0, "kl": 0.0, "brier": (k - 1) / k, "brier_soft": 0.0,
            "nll": np.log(k), "nll_majority": np.log(k),
            # order-aware: equal distributions are at distance 0; hand computations below
            "wasserstein": 0.0, "manhattan": 0.0, "mean_abs_error": 0.0, "rps_soft": 0.0,
            "lewidi_ce": -np.log(1 / k + 1e-9),
            # hard = 0: cumulative uniform j/k against 1 for every j < k - 1
            "rps": sum((1 - j / k) ** 2 for j in range(1, k)),
            # two labels only: p(positive) = 1/2 in one bin, no item has hard == positive
            "ece_binary": 0.5, "mce_binary": 0.5,
            # every item correct at confidence 1/k; TACE is classwise (as classwise_ece);
            # MacroCE has no wrong prediction, so it is ICE_pos alone
            "ece_sweep": 1 - 1 / k, "tace": 2 * (k - 1) / k**2,
            "macro_ce": 1 - 1 / k, "kde_ece": 1 - 1 / k,
            # one bin, every item a hit (no target variance): the squared gap
            "ece_debiased": (1 - 1 / k) ** 2}


@pytest.mark.parametrize("name", [n for n in SINGLE_NAMES + list(BINARY_NAMES)
                                  if n in _uniform_values(3)])
@pytest.mark.parametrize("k", [2, 3, 5])
def test_uniform_model_and_humans(name, k):
    if kind(name) == "binary" and k != 2:
        return
    probs = np.full((6, k), 1.0 / k)
    got = compute(name, probs, probs, np.zeros(6, dtype=int))
    assert got == pytest.approx(_uniform_values(k)[name], abs=1e-12)


@pytest.mark.parametrize("name", SINGLE_NAMES + list(BINARY_NAMES))
def test_one_hot_model_equal_to_one_hot_humans(name):
    hard = np.array([0, 2, 1, 2, 0]) % (2 if kind(name) == "binary" else 3)
    onehot = np.eye(hard.max() + 1)[hard]
    ideal = 1.0 if name in ("accuracy", "rank_cs", "rank_cs_tie_aware") else 0.0
    if name == "lewidi_ce":  # the scorer's clip and shift: log(1 - 1e-12 + 1e-9) > 0
        ideal = -np.log(1 - 1e-12 + 1e-9)
    # kde_ece: the mass at confidence 1 is binned onto the two grid nodes around 1 and the
    # part above 1 is cut (Zhang et al.'s grid): the estimate has the grid's resolution
    tol = 2.2 / (2**14 - 1) if name == "kde_ece" else 1e-12
    assert compute(name, onehot, onehot, hard) == pytest.approx(ideal, abs=tol)


@pytest.mark.parametrize("name, expected", [
    ("accuracy", 0.0), ("ece", 1.0), ("mce", 1.0), ("ece_adaptive", 1.0), ("smece", 1.0),
    ("classwise_ece", 2 / 3), ("smece_classwise", 2 / 3), ("dist_ce", 1.0),
    ("jsd", np.sqrt(np.log(2))), ("kl", -np.log(1e-15)), ("brier", 2.0), ("brier_soft", 2.0),
    ("nll", -np.log(1e-15)), ("nll_majority", -np.log(1e-15)), ("ent_ce", 0.0),
    # hand computations: the model puts each item's mass one or two categories away
    # (distances 1, 2, 1 for hard 0, 2, 1)
    ("wasserstein", 4 / 3), ("mean_abs_error", 4 / 3), ("rps", 4 / 3), ("rps_soft", 4 / 3),
    ("manhattan", 2.0), ("lewidi_ce", -np.log(1e-12 + 1e-9)),
    ("ece_debiased", 1.0),  # one bin of three misses: gap 1, no target variance
])
def test_one_hot_model_always_wrong(name, expected):
    hard = np.array([0, 2, 1])
    probs = np.eye(3)[(hard + 1) % 3]
    assert compute(name, probs, np.eye(3)[hard], hard) == pytest.approx(expected, rel=1e-12)


# --------------------------------------------------------------------------- rejection

def _corrupt(where, value, probs, soft, hard):
    probs, soft, hard = probs.copy(), soft.copy(), hard.copy()
    k = probs.shape[1]
    target = {"probs": probs, "soft": soft}
    if where == "hard":
        hard[3] = value
    elif value == "negative":
        target[where][3] = [-0.1, 0.6, 0.5][:k] if k == 3 else [-0.1, 1.1]
    elif value == "sum":
        target[where][3] = 0.2
    else:
        target[where][3, 1] = value
    return probs, soft, hard


REJECT = [
    ("probs", np.nan, "probs has NaN or infinite values in row 3"),
    ("probs", np.inf, "probs has NaN or infinite values in row 3"),
    ("probs", "negative", "probs has a negative value in row 3"),
    ("probs", "sum", r"probs rows must sum to 1 \(tolerance 1e-06\); row 3 sums to 0.[46]"),
    ("soft", np.nan, "soft has NaN or infinite values in row 3"),
    ("soft", "negative", "soft has a negative value in row 3"),
    ("soft", "sum", "soft rows must sum to 1"),
    ("hard", 3, r"hard must lie in \[0, [23]\) \(one per probs column\); got 3 at item 3"),
    ("hard", -1, r"hard must lie in \[0, [23]\) .*got -1 at item 3"),
]


@pytest.mark.parametrize("name", [n for n in NAMES if kind(n) != "multilabel"])
@pytest.mark.parametrize("where, value, match", REJECT)
def test_invalid_values_rejected(name, where, value, match):
    # every input given is checked, whether or not the metric reads it
    bad = _corrupt(where, value, *make_inputs(8, n=20, ties=False, name=name))
    with pytest.raises(InvalidValueError, match=match):
        compute(name, *bad)
    state = REGISTRY[name].state()
    with pytest.raises(InvalidValueError, match=match):
        state.update(*bad)
    assert np.isnan(state.compute())  # nothing was absorbed


REJECT_MULTILABEL = [
    ("probs", np.nan, "probs has NaN or infinite values in row 3"),
    ("probs", -0.1, r"probs must lie in \[0, 1\] \(one probability per label\); got -0.1 in "
     "row 3, label column 1"),
    ("soft", 1.5, r"soft must lie in \[0, 1\] .*got 1.5 in row 3, label column 1"),
    ("soft", np.inf, "soft has NaN or infinite values in row 3"),
    ("hard", 0.5, "hard must be 0 or 1 per label; got 0.5 in row 3, label column 1"),
    ("hard", 2.0, r"hard must lie in \[0, 1\] .*got 2.0 in row 3"),
]


@pytest.mark.parametrize("name", MULTILABEL_NAMES)
@pytest.mark.parametrize("where, value, match", REJECT_MULTILABEL)
def test_invalid_multilabel_values_rejected(name, where, value, match):
    inputs = dict(zip(("probs", "soft", "hard"), make_inputs(8, n=20, name=name), strict=True))
    inputs[where] = inputs[where].copy()
    inputs[where][3, 1] = value
    with pytest.raises(InvalidValueError, match=match):
        compute(name, inputs["probs"], inputs["soft"], inputs["hard"])
    state = REGISTRY[name].state()
    with pytest.raises(InvalidValueError, match=match):
        state.update(inputs["probs"], inputs["soft"], inputs["hard"])
    assert np.isnan(state.compute())


def test_multilabel_rows_need_not_sum_to_one_and_tasks_do_not_mix():
    probs = np.array([[0.9, 0.8, 0.7]])
    assert compute("brier_multilabel", probs, probs) == 0.0
    with pytest.raises(SchemaError, match="single-label and multi-label metrics take different"):
        from annokit.metrics.states_ext import update_states
        update_states([REGISTRY["ece"].state(), REGISTRY["brier_multilabel"].state()], probs,
                      probs, [0])


@pytest.mark.parametrize("name", BINARY_NAMES)
def test_binary_metrics_need_two_labels(name):
    probs, soft, hard = make_inputs(3, n=10, k=3)
    with pytest.raises(SchemaError, match="BinaryBinnedState applies to 2 labels; the batch has 3"):
        compute(name, probs, soft, hard)
    with pytest.raises(InvalidValueError, match="positive must be the label index 0 or 1; got 2"):
        REGISTRY[name].state(positive=2)


@pytest.mark.parametrize("name", NAMES)
def test_bad_shapes_and_weights_rejected(name):
    probs, soft, hard = make_inputs(9, n=20, ties=False, name=name)
    k = probs.shape[1]
    multi = kind(name) == "multilabel"
    cases = [
        (lambda: compute(name, probs[0], soft, hard), SchemaError,
         rf"probs must be 2-D \(n_items, n_labels\); got shape \({k},\)"),
        (lambda: compute(name, probs[:0], soft[:0], hard[:0]), SchemaError, "probs has no rows"),
        (lambda: compute(name, probs, soft[:, :1], hard), SchemaError,
         rf"soft must have the shape of probs \(20, {k}\); got \(20, 1\)"),
        (lambda: compute(name, probs, soft, hard[:5]), SchemaError,
         rf"hard must have the shape of probs \(20, {k}\); got \(5, {k}\)" if multi else
         "hard has 5 entries but probs has 20 rows"),
        (lambda: compute(name, probs, soft, hard + 0.5), InvalidValueError,
         r"hard must lie in \[0, 1\]" if multi else
         r"hard must be integer class indices; got \d\.5 at item 0"),
        (lambda: compute(name, probs, soft, hard, weights=np.ones(19)), SchemaError,
         r"weights must have shape \(20,\) or \(n_replicates, 20\); got \(19,\)"),
        (lambda: compute(name, probs, soft, hard, weights=-np.ones(20)), InvalidValueError,
         r"weights must be finite and >= 0; got -1.0 at item 0"),
        (lambda: compute(name, probs, soft, hard, weights=np.full((2, 20), np.nan)),
         InvalidValueError, "weights must be finite and >= 0; got nan at item 0 of replicate 0"),
    ]
    for call, error, match in cases:
        with pytest.raises(error, match=match):
            call()
    for need in REGISTRY[name].needs:
        with pytest.raises(SchemaError, match=f"needs {need} labels; got {need}=None"):
            compute(name, probs, **{"soft": soft, "hard": hard, need: None})


def test_units_are_real_units_and_entropies_share_one_base():
    """No invented units ("Brier units"); every information quantity is in the one base, nats."""
    from annokit.core.soft_labels import ENTROPY_UNIT

    allowed = {"rate", "probability", "probability mass", "squared probability", "scale points",
               ENTROPY_UNIT, f"sqrt({ENTROPY_UNIT})"}
    assert {spec.unit for spec in REGISTRY.values()} <= allowed
    for name in ("ent_ce", "ent_ce_signed", "kl", "nll", "nll_majority", "lewidi_ce",
                 "bce_multilabel"):
        assert REGISTRY[name].unit == ENTROPY_UNIT, name
