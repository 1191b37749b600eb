"""One state protocol: one update entry point, every kind of state fused.

Every registered state names the pass that fills it (``MetricState.filled_by``);
``update_many`` runs each pass once per batch, so all the states of one kind (the core
kernels' states, the order-aware, binary and multi-label ones) are filled from one read of
the batch. Checked here: each kind takes one pass whatever the number of its states; a
state filled together with every other state of its task, over any split of the rows merged
in any order, equals the state alone on all rows; the binary and multi-label sums equal
numpy evaluations of their definitions (with replicate weights) and do not depend on the
number of threads; and a failing check changes no state of any kind.
"""

from __future__ import annotations

import numpy as np
import pytest

from annokit.errors import InvalidValueError
from annokit.metrics import (
    REGISTRY,
    calibration_estimators,
    kernels,
    kernels_bernoulli,
    kernels_ordinal,
    multilabel,
    states_ext,
)
from annokit.metrics import states as states_mod
from annokit.metrics.states import StatePass, update_many
from annokit.metrics.states_ext import update_states

NAMES = list(REGISTRY)
RTOL = 1e-12
PASSES = ("kernels", "ordinal", "binary", "multilabel", "calibration")


def _kind(name: str) -> str:
    spec = REGISTRY[name]
    if spec.task == "multilabel":
        return "multilabel"
    return "binary" if spec.n_labels == 2 else "single"


def _options(name: str, k: int = 4) -> dict:
    """Options unlike the defaults: 7 bins, category values 0, 1, 2.5, 7 (the first ``k``)."""
    opts = REGISTRY[name].options
    out: dict = {"n_bins": 7} if "n_bins" in opts else {}
    if "values" in opts:
        out["values"] = (0.0, 1.0, 2.5, 7.0)[:k]
    return out


def _inputs(kind: str, n: int, seed: int):
    """Rows with ties and bin edges: four labels (two for binary); multi-label per-label
    probabilities (exact 0, 1 and 0.5 included), the fraction of five annotators, the majority."""
    rng = np.random.default_rng(seed)
    if kind == "multilabel":
        probs = rng.random((n, 3))
        probs[: n // 10] = rng.integers(0, 2, (n // 10, 3))
        probs[n // 10:n // 10 + 2] = 0.5
        soft = rng.binomial(5, rng.random((n, 3))) / 5
        return probs, soft, (soft > 0.5).astype(float)
    k = 2 if kind == "binary" else 4
    probs = rng.dirichlet(np.full(k, 0.7), size=n)
    probs[: n // 10] = np.eye(k)[rng.integers(0, k, n // 10)]
    soft = rng.multinomial(5, np.full(k, 1.0 / k), size=n) / 5
    return probs, soft, soft.argmax(axis=1)


def _task_names(name: str) -> list[str]:
    """Every registered metric that can share a batch with ``name`` (same task; binary ones
    with two labels)."""
    kind = _kind(name)
    if kind == "multilabel":
        return [n for n in NAMES if _kind(n) == "multilabel"]
    return [n for n in NAMES if _kind(n) != "multilabel" and (kind == "binary" or
                                                              _kind(n) != "binary")]


def _weights(how: str | None, n: int, rng: np.random.Generator):
    if how is None:
        return None
    w = rng.poisson(1.0, size=(3, n)).astype(float)
    return w[0] if how == "1d" else w


def _same(a, b, rtol=RTOL):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                               rtol=rtol, atol=0)


# --------------------------------------------------------------------------- every state, one pass

@pytest.mark.parametrize("name", NAMES)
def test_every_registered_state_is_filled_by_the_fused_pass_of_its_kind(name):
    state = REGISTRY[name].state()
    assert isinstance(state.filled_by, StatePass)
    assert state.filled_by.name in PASSES  # none by the per-state numpy rows pass
    assert state.filled_by.task == REGISTRY[name].task


def test_update_states_is_the_one_entry_point():
    assert update_states is update_many


def _count(monkeypatch, module, attr):
    calls = []
    real = getattr(module, attr)

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, attr, counted)
    return calls


@pytest.mark.parametrize("kind", ["single", "binary", "multilabel"])
def test_each_kind_reads_a_batch_once_whatever_the_number_of_its_states(monkeypatch, kind):
    names = _task_names({"single": "ece", "binary": "ece_binary",
                         "multilabel": "ece_multilabel"}[kind])
    calls = {"kernels": _count(monkeypatch, states_mod._kernels, "batch_sums"),
             "ordinal": _count(monkeypatch, kernels_ordinal, "ordinal_sums_many"),
             "binary": _count(monkeypatch, states_ext, "binary_bin_sums"),
             "multilabel": _count(monkeypatch, multilabel, "multilabel_sums"),
             "calibration": _count(monkeypatch, calibration_estimators, "top_label_rows")}
    probs, soft, hard = _inputs(kind, 500, 0)
    states = [REGISTRY[n].state(**_options(n, probs.shape[1])) for n in names]
    update_many(states, probs, soft, hard)
    passes = {st.filled_by.name for st in states}
    want = {"single": {"kernels", "ordinal", "calibration"},
            "binary": {"kernels", "ordinal", "binary", "calibration"},
            "multilabel": {"multilabel"}}[kind]
    assert passes == want
    for name in passes:  # one read of the batch per pass (each call reads every row once)
        assert len(calls[name]) == 1, (name, len(calls[name]))
    for name in set(PASSES) - passes:
        assert not calls[name], name


def test_binary_and_multilabel_passes_serve_several_options_in_one_read(monkeypatch):
    probs, soft, hard = _inputs("binary", 300, 1)
    states = [REGISTRY["ece_binary"].state(n_bins=5), REGISTRY["mce_binary"].state(n_bins=9),
              REGISTRY["ece_binary"].state(positive=0)]
    calls = _count(monkeypatch, states_ext, "binary_bin_sums")
    update_many(states, probs, soft, hard)
    assert len(calls) == 1
    ml = _inputs("multilabel", 300, 1)
    ml_states = [REGISTRY["ece_multilabel"].state(n_bins=4),
                 REGISTRY["ece_multilabel"].state(n_bins=11),
                 REGISTRY["brier_multilabel"].state(), REGISTRY["bce_multilabel"].state()]
    calls = _count(monkeypatch, multilabel, "multilabel_sums")
    update_many(ml_states, *ml)
    assert len(calls) == 1


# --------------------------------------------------------------------------- fused = one by one

@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("weights", [None, "1d", "2d"])
def test_fused_in_any_split_and_merge_order_equals_the_state_alone(name, weights):
    """The protocol of ARCHITECTURE.md for every registered state: filled together with every
    other state of its task, batch by batch (an empty batch too), merged in a random order
    (into a fresh state first), it equals the state alone updated with all rows at once."""
    rng = np.random.default_rng(NAMES.index(name))
    kind = _kind(name)
    probs, soft, hard = _inputs(kind, 240, 7)
    n, k = probs.shape
    w = _weights(weights, n, rng)
    names = _task_names(name)
    cuts = np.sort(rng.choice(np.arange(1, n), size=5, replace=False))
    bounds = [0, 0, *cuts.tolist(), n]  # the first batch is empty
    batches = []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        states = [REGISTRY[m].state(**_options(m, k)) for m in names]
        wb = None if w is None else w[..., lo:hi]
        update_many(states, probs[lo:hi], soft[lo:hi], hard[lo:hi], wb)
        batches.append(states[names.index(name)])
    merged = REGISTRY[name].state(**_options(name, k))
    for j in rng.permutation(len(batches)):
        merged.merge(batches[j])
    alone = REGISTRY[name].state(**_options(name, k)).update(probs, soft, hard, w)
    _same(merged.compute(), alone.compute())


# --------------------------------------------------------------------------- the sums themselves

def _bin_of(x, n_bins):
    return np.clip(np.searchsorted(np.linspace(0, 1, n_bins + 1), x, side="right") - 1, 0,
                   n_bins - 1)


def _numpy_bins(x, y, w, n_bins):
    """Per bin (weight, sum w x, sum w y) by a loop over bins, weights (r, n)."""
    b = _bin_of(x, n_bins)
    return np.stack([np.stack([(w * (b == j)).sum(axis=-1), (w * x * (b == j)).sum(axis=-1),
                               (w * y * (b == j)).sum(axis=-1)], axis=-1)
                     for j in range(n_bins)], axis=-1)  # (r, 3, n_bins)


@pytest.mark.parametrize("positive", [0, 1])
def test_binary_sums_equal_numpy_with_replicate_weights(positive):
    probs, soft, hard = _inputs("binary", 400, 3)
    w = np.random.default_rng(3).poisson(1.0, size=(4, 400)).astype(float)
    sums, weight = kernels_bernoulli.binary_bin_sums(probs, soft, hard, w, [(6, positive)])
    want = _numpy_bins(probs[:, positive], (hard == positive).astype(float), w, 6)
    _same(sums[0], want)
    _same(weight, w.sum(axis=1))


def test_multilabel_sums_equal_numpy_with_replicate_weights():
    probs, soft, hard = _inputs("multilabel", 400, 4)
    w = np.random.default_rng(4).poisson(1.0, size=(4, 400)).astype(float)
    out = kernels_bernoulli.multilabel_sums(probs, soft, hard, w, n_bins=(5,),
                                            quantities=("squared", "log"), check=lambda: None)
    for lab in range(3):
        _same(out.bins[0][:, :, lab], _numpy_bins(probs[:, lab], hard[:, lab], w, 5))
    eps = 1e-15
    with np.errstate(divide="ignore", invalid="ignore"):
        bce = -(np.where(soft > 0, soft * np.log(np.maximum(probs, eps)), 0.0)
                + np.where(soft < 1, (1 - soft) * np.log(np.maximum(1 - probs, eps)), 0.0))
    _same(out.means["squared"], w @ (probs - soft) ** 2)
    _same(out.means["log"], w @ bce)
    _same(out.weight, w.sum(axis=1))


@pytest.mark.parametrize("kind", ["binary", "multilabel"])
def test_large_batches_are_bit_identical_on_one_thread_or_many(kind, monkeypatch):
    n = 2 * kernels.CHUNK_ROWS + 1234  # three chunks
    probs, soft, hard = _inputs(kind, n, 5)
    w = np.random.default_rng(5).poisson(1.0, size=(2, n)).astype(float)
    names = [m for m in NAMES if _kind(m) == kind]

    def run():
        states = [REGISTRY[m].state() for m in names]
        update_many(states, probs, soft, hard, w)
        return [np.asarray(st.compute()) for st in states]

    many = run()
    monkeypatch.setattr(kernels, "MAX_THREADS", 1)
    for a, b in zip(run(), many, strict=True):
        np.testing.assert_array_equal(a, b)
    if kind == "binary":  # and equal to the numpy definition on the whole input
        sums, _ = kernels_bernoulli.binary_bin_sums(probs, soft, hard, w, [(10, 1)])
        _same(sums[0], _numpy_bins(probs[:, 1], hard.astype(float), w, 10), rtol=1e-10)


# --------------------------------------------------------------------------- all or nothing

def test_a_failed_check_changes_no_state_of_any_kind():
    probs, soft, hard = _inputs("binary", 50, 6)
    states = [REGISTRY[m].state() for m in _task_names("ece_binary")]
    update_many(states, probs, soft, hard)
    before = [np.asarray(st.compute()) for st in states]
    bad = soft.copy()
    bad[17] = [0.7, 0.7]
    with pytest.raises(InvalidValueError, match="soft rows must sum to 1.*row 17"):
        update_many(states, probs, bad, hard)
    for st, value in zip(states, before, strict=True):
        np.testing.assert_array_equal(np.asarray(st.compute()), value)
    ml = _inputs("multilabel", 50, 6)
    ml_states = [REGISTRY[m].state() for m in NAMES if _kind(m) == "multilabel"]
    hard_ml = ml[2].copy()
    hard_ml[9, 2] = 0.5
    with pytest.raises(InvalidValueError, match="hard must be 0 or 1 per label; got 0.5 in row 9"):
        update_many(ml_states, ml[0], ml[1], hard_ml)
    assert all(np.isnan(st.compute()) for st in ml_states)


def test_multilabel_weights_are_checked_in_the_pass():
    probs, soft, hard = _inputs("multilabel", 30, 2)
    w = np.ones(30)
    w[11] = -1.0
    state = REGISTRY["brier_multilabel"].state()
    with pytest.raises(InvalidValueError, match="weights must be finite and >= 0; got -1.0 at "
                                                "item 11"):
        state.update(probs, soft, hard, w)
    assert np.isnan(state.compute())
