"""Percent agreement, Gwet's AC1/AC2, Brennan-Prediger and Conger's kappa.

References: irrCAC 0.4.4 (Gwet's coefficients in Python, a test-only dependency, run with
the categories given: under pandas >= 2.2 it counts missing cells as a category otherwise),
and the definitions of Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed.

irrCAC 0.4.4's metadata pins scipy==1.12 and pandas<3, so it is not in the ``test`` extra (the
resolver would downgrade the environment or fail); its code runs on current scipy and pandas.
:func:`irrcac_module` imports it, and where it is missing installs it with ``--no-deps`` into a
temporary directory put on ``sys.path`` (once per test process), skipping, with the reason,
only when that fails (no network).
"""

from __future__ import annotations

import atexit
import functools
import importlib
import shutil
import subprocess
import sys
import tempfile
import warnings
from types import ModuleType

import numpy as np
import pandas as pd
import pytest

from annokit.core.agreement import cohen_kappa, fleiss_kappa
from annokit.core.agreement_gwet import (
    SCALE_WEIGHTS,
    agreement_weights,
    brennan_prediger,
    chance_coefficients,
    conger_kappa,
    gwet_ac1,
    percent_agreement,
)
from annokit.core.labels import LabelSet
from annokit.core.votes import Votes
from annokit.errors import DegenerateInputWarning, InvalidValueError, SchemaError
from annokit.io import read_votes

FUNCTIONS = {"percent_agreement": percent_agreement, "gwet_ac1": gwet_ac1,
             "brennan_prediger": brennan_prediger, "conger_kappa": conger_kappa}
IRRCAC = {"percent_agreement": "pa", "gwet_ac1": "gwet", "brennan_prediger": "bp",
          "conger_kappa": "conger"}


IRRCAC_SPEC = "irrCAC==0.4.4"


@functools.cache
def _fetched_irrcac() -> str | None:
    """A temporary directory holding irrCAC 0.4.4 (``pip install --no-deps --target``), or
    None when pip cannot fetch it."""
    target = tempfile.mkdtemp(prefix="annokit-irrcac-")
    atexit.register(shutil.rmtree, target, ignore_errors=True)
    try:
        done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                               "--disable-pip-version-check", "--target", target, IRRCAC_SPEC],
                              capture_output=True, timeout=180, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return target if done.returncode == 0 else None


def irrcac_module(name: str) -> ModuleType:
    """``irrCAC.raw`` or ``irrCAC.weights``: installed, else fetched (module docstring)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        pass
    target = _fetched_irrcac()
    if target is None:
        pytest.skip(f"{IRRCAC_SPEC} is not installed and pip could not fetch it (offline?); "
                    f"pip install --no-deps {IRRCAC_SPEC}")
    if target not in sys.path:
        sys.path.append(target)
    return importlib.import_module(name)


def wide(votes: Votes) -> tuple[pd.DataFrame, list]:
    """Items x annotators (label numbers on numeric scales, names otherwise) and the categories;
    without annotator ids, each item's votes fill columns 0, 1, ... (no rater identity)."""
    numeric = votes.labels.values is not None and votes.labels.scale != "nominal"
    cats = list(votes.labels.values) if numeric else list(votes.labels.names)
    names = np.asarray(cats, dtype=object)
    if votes.annotator_index is not None:
        col = votes.annotator_index
    else:
        order = np.argsort(votes.item_index, kind="stable")
        first = np.searchsorted(votes.item_index[order], votes.item_index[order])
        col = np.empty_like(order)
        col[order] = np.arange(order.size) - first
    frame = pd.DataFrame({"i": votes.item_index, "a": col, "v": names[votes.label_index]})
    table = frame.pivot(index="i", columns="a", values="v")
    return (table.astype(float) if numeric else table), cats


def irrcac(votes: Votes, names, weights: str) -> dict[str, float]:
    """irrCAC 0.4.4's values of ``names`` (one CAC object), its categories given."""
    raw = irrcac_module("irrCAC.raw")
    table, cats = wide(votes)
    out = {}
    with warnings.catch_warnings():  # irrCAC calls pandas with positional arguments
        warnings.simplefilter("ignore")
        cac = raw.CAC(table, weights=weights, categories=cats, digits=16)
        for name in names:
            est = getattr(cac, IRRCAC[name])()["est"] if name != "percent_agreement" else \
                cac.gwet()["est"]
            out[name] = float(est["pa" if name == "percent_agreement" else "coefficient_value"])
    return out


NOMINAL = [("snow2008_rte", "rte.standardized.tsv"), ("bluebirds", "answer.csv"),
           ("dog", "answer.csv"), ("face", "answer.csv")]


@pytest.mark.parametrize("folder, file", NOMINAL, ids=[f"irrcac044_{f}" for f, _ in NOMINAL])
def test_nominal_coefficients_equal_irrcac(shared_data, folder, file):
    votes = read_votes(shared_data(folder, file))
    want = irrcac(votes, FUNCTIONS, "identity")
    for name, f in FUNCTIONS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateInputWarning)
            got = f(votes).value
        assert got == pytest.approx(want[name], abs=1e-9), name


@pytest.mark.parametrize("name, expected", [
    ("gwet_ac1", 0.2727), ("brennan_prediger", 0.2574), ("conger_kappa", 0.2571),
    ("percent_agreement", 0.6287)], ids=lambda x: f"irrcac044_rte_{x}" if isinstance(x, str) else "")
def test_rte_figures_printed_by_irrcac(shared_data, name, expected):
    """irrCAC 0.4.4's figures on RTE (categories given), to the 4 digits it prints."""
    votes = read_votes(shared_data("snow2008_rte", "rte.standardized.tsv"))
    assert round(FUNCTIONS[name](votes).value, 4) == expected
    assert round(fleiss_kappa(votes.counts()).value, 4) == 0.2414


ORDERED = [("lewidi2025/CSC/CSC_dev.json", list(FUNCTIONS)),
           ("pavlick2019_nli_variation/sentence-pair-analysis/preprocessed-data.jsonl",
            ["percent_agreement", "gwet_ac1", "brennan_prediger"])]


@pytest.mark.parametrize("path, names", ORDERED, ids=["irrcac044_lewidi2025_csc_ordinal",
                                                      "irrcac044_pavlick2019_interval"])
def test_weighted_coefficients_equal_irrcac(shared_data, path, names):
    """The scale's weights (ordinal on CSC's 1-6, quadratic on Pavlick's -50..50 slider)."""
    votes = read_votes(shared_data(*path.split("/")))
    weights = SCALE_WEIGHTS[votes.labels.scale]
    want = irrcac(votes, names, weights)
    for name in names:
        assert FUNCTIONS[name](votes).value == pytest.approx(want[name], abs=1e-9), name


@pytest.mark.parametrize("weights", ["identity", "ordinal", "linear", "quadratic", "radical",
                                     "ratio"], ids=lambda w: f"irrcac044_weights_{w}")
def test_weights_and_missing_ratings_equal_irrcac(weights):
    """Random sparse ratings (items with one vote, unused categories) on every weighting."""
    irrcac_module("irrCAC.raw")
    rng = np.random.default_rng(7)
    rows = [(i, a, int(rng.integers(0, 4))) for i in range(40) for a in range(6)
            if rng.random() < (0.15 if i < 5 else 0.6)]
    frame = pd.DataFrame(rows, columns=["item", "annotator", "label"]).astype(str)
    labels = LabelSet(["1", "2", "3", "4", "5"], scale="interval")  # "5" is never used
    votes = Votes.from_long(frame.assign(label=(frame["label"].astype(int) + 1).astype(str)),
                            labels=labels)
    want = irrcac(votes, FUNCTIONS, weights)
    for name, f in FUNCTIONS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateInputWarning)
            got = f(votes, weights=weights).value
        assert got == pytest.approx(want[name], abs=1e-9), (name, weights)


@pytest.mark.parametrize("weights", ["identity", "quadratic"],
                         ids=lambda w: f"irrcac044_analytic_se_{w}")
def test_analytic_standard_errors_equal_irrcac(weights):
    """Gwet's (2014) linearised variance of AC1/AC2 and Brennan-Prediger, as irrCAC 0.4.4."""
    raw = irrcac_module("irrCAC.raw")
    rng = np.random.default_rng(11)
    rows = [(i, a, int(rng.integers(0, 3)) + 1) for i in range(50) for a in range(5)
            if rng.random() < (0.2 if i < 6 else 0.7)]
    frame = pd.DataFrame(rows, columns=["item", "annotator", "label"]).astype(str)
    votes = Votes.from_long(frame, labels=LabelSet(["1", "2", "3", "4"], scale="interval"))
    got = {c.name: c.se for c in chance_coefficients(votes, weights=weights)}
    table, cats = wide(votes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cac = raw.CAC(table, weights=weights, categories=cats, digits=16)
        assert got["gwet_ac1"] == pytest.approx(cac.gwet()["est"]["se"], abs=1e-9)
        assert got["brennan_prediger"] == pytest.approx(cac.bp()["est"]["se"], abs=1e-9)
    assert got["percent_agreement"] is None and got["conger_kappa"] is None


def test_weight_matrices_equal_irrcac():
    w = irrcac_module("irrCAC.weights")
    values = [1.0, 2.0, 4.0, 7.0]
    for name in ("identity", "ordinal", "linear", "quadratic", "radical", "ratio"):
        np.testing.assert_allclose(agreement_weights(name, values),
                                   w.Weights(values)[name], atol=1e-12, err_msg=name)


def test_two_annotators_conger_is_cohen():
    """Conger (1980): with two annotators and no missing rating his kappa is Cohen's."""
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 3, 50), rng.integers(0, 3, 50)
    b[:30] = a[:30]
    frame = pd.DataFrame({"item": np.tile(np.arange(50), 2), "annotator": np.repeat(["x", "y"], 50),
                          "label": np.concatenate([a, b])}).astype(str)
    votes = Votes.from_long(frame, labels=LabelSet(["0", "1", "2"]))
    assert conger_kappa(votes).value == pytest.approx(cohen_kappa(a, b).value, abs=1e-12)


#: Gwet (2014)'s 4 raters x 12 subjects with missing ratings (rows: subjects), as printed in
#: irrCAC's documentation with its results (AC1 0.77544, pa 0.81818, pe 0.19032).
FOUR_RATERS = ["1 1 . 1", "2 2 3 2", "3 3 3 3", "3 3 3 3", "2 2 2 2", "1 2 3 4", "4 4 4 4",
               "1 1 2 1", "2 2 2 2", ". 5 5 5", ". . 1 1", ". . 3 ."]


def test_gwet2014_four_raters_example_as_printed_in_irrcac_docs():
    rows = [(i, a, x) for i, line in enumerate(FOUR_RATERS) for a, x in enumerate(line.split())
            if x != "."]
    frame = pd.DataFrame(rows, columns=["item", "annotator", "label"]).astype(str)
    votes = Votes.from_long(frame, labels=LabelSet(["1", "2", "3", "4", "5"]))
    with pytest.warns(DegenerateInputWarning, match="1 item"):
        assert round(gwet_ac1(votes).value, 5) == 0.77544
    with pytest.warns(DegenerateInputWarning):
        assert round(percent_agreement(votes).value, 5) == 0.81818
    assert round(next(c.se for c in chance_coefficients(votes, names=["gwet_ac1"])), 5) == 0.14295


def test_handbook_definitions_on_a_small_table():
    """Gwet (2014, eqs. of ch. 2 and 4) by hand: 3 items of 3 votes, 2 labels."""
    counts = [[3, 0], [0, 3], [2, 1]]
    pa = (1 + 1 + 1 / 3) / 3
    pi = np.array([(1 + 0 + 2 / 3) / 3, (0 + 1 + 1 / 3) / 3])
    pe_gwet = 2 * (pi * (1 - pi)).sum() / 2
    assert percent_agreement(counts).value == pytest.approx(pa)
    assert gwet_ac1(counts).value == pytest.approx((pa - pe_gwet) / (1 - pe_gwet))
    assert brennan_prediger(counts).value == pytest.approx((pa - 0.5) / 0.5)


def test_bootstrap_interval_and_batch_invariance():
    rng = np.random.default_rng(0)
    counts = rng.multinomial(5, [0.6, 0.3, 0.1], size=200)
    keys = np.arange(200) * 7
    r = gwet_ac1(counts, n_boot=200, rng=1, keys=keys)
    assert r.ci_low < r.value < r.ci_high and r.n_boot == 200 and r.n_items == 200
    perm = rng.permutation(200)
    s = gwet_ac1(counts[perm], n_boot=200, rng=1, keys=keys[perm])
    assert (s.ci_low, s.ci_high) == pytest.approx((r.ci_low, r.ci_high), rel=1e-12)


def test_block_sums_equal_numpy_and_do_not_depend_on_blocks():
    """The compiled pass of the bootstrap (chance_block_sums) against ``w @ terms`` and the
    annotator x label vote sums computed by numpy; dataset_stats' intervals the same whether
    the replicates are gathered in blocks of 3 or all at once (budget)."""
    from annokit.core.agreement import intervals_together
    from annokit.core.agreement_gwet import chance_block_sums
    from annokit.core.resample import item_keys

    rng = np.random.default_rng(3)
    rows = [(f"i{i}", f"a{a}", str(int(rng.integers(0, 3)))) for i in range(60) for a in range(5)
            if rng.random() < 0.6]
    votes = Votes.from_long(pd.DataFrame(rows, columns=["item", "annotator", "label"]))
    group = chance_coefficients(votes)[0].stat.group
    w = rng.poisson(1.0, size=(7, votes.n_items)).astype(np.float64)
    sums, cells, total = chance_block_sums(w, group.terms, group.cells)
    np.testing.assert_allclose(sums, w @ group.terms, rtol=1e-13)
    indptr, codes, n_cells = group.cells
    dense = np.zeros((votes.n_items, n_cells))
    np.add.at(dense, (np.repeat(np.arange(votes.n_items), np.diff(indptr)), codes), 1)
    np.testing.assert_array_equal(cells, w @ dense)
    np.testing.assert_array_equal(total, w.sum(axis=1))
    keys = item_keys(votes.item_ids)
    parts = [((c.value, c.stat, c.n_items, None), True) for c in chance_coefficients(votes)]
    small, large = (intervals_together(parts, keys, n_boot=50, confidence=0.9, seed=2,
                                       budget=budget) for budget in (3 * votes.n_items // 8,
                                                                     10**6))
    assert small == large


def test_errors():
    with pytest.raises(SchemaError, match="conger_kappa needs Votes with annotator ids"):
        conger_kappa([[2, 0], [1, 1]])
    with pytest.raises(SchemaError, match="at least one item with two or more votes"):
        gwet_ac1([[1, 0], [0, 1]])
    with pytest.raises(SchemaError, match="weights must be a 2 x 2 matrix"):
        gwet_ac1([[2, 0]], weights=np.eye(3))
    with pytest.raises(InvalidValueError, match="weights"):
        gwet_ac1([[2, 0]], weights="cubic")
    with pytest.warns(DegenerateInputWarning, match="1 item.s. with fewer than two votes"):
        percent_agreement([[2, 0], [1, 0]])
    with pytest.raises(SchemaError, match="conger_kappa needs annotator ids"):
        chance_coefficients(Votes.from_counts([[2, 0]], labels=["a", "b"]), names=["conger_kappa"])
