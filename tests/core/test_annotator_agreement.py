"""Each annotator's influence on alpha, and every pair's Cohen's kappa.

References: alpha recomputed without each annotator by the ``krippendorff`` package
(Krippendorff 2011), and :func:`annokit.core.agreement.cohen_kappa` (Cohen 1960, 1968; itself
tested against scikit-learn) on each pair's shared items.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from annokit.core.agreement import annotator_kappa
from annokit.core.annotator_agreement import (
    alpha_influence,
    annotator_pairs,
    merge_pair_tables,
    pair_matrix,
    pair_tables,
    pairs_frame,
)
from annokit.core.labels import LabelSet
from annokit.core.votes import Votes
from annokit.errors import SchemaError
from annokit.io import read_votes


def _random_votes(seed: int, scale: str, n_items: int = 25, n_annotators: int = 6) -> Votes:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 4, n_items)
    rows = []
    for i in range(n_items):
        for a in range(n_annotators):
            if rng.random() < 0.6:
                label = truth[i] if rng.random() < 0.6 else rng.integers(0, 4)
                rows.append((f"i{i}", f"a{a}", str(int(label) * 2 + 1)))
    frame = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    return Votes.from_long(frame, labels=LabelSet(["1", "3", "5", "7"], scale=scale))


def _alpha_without(votes: Votes, drop: int, level: str) -> float:
    krippendorff = pytest.importorskip("krippendorff")
    keep = votes.annotator_index != drop
    mat = np.full((len(votes.annotator_ids), votes.n_items), np.nan)
    values = np.asarray(votes.labels.values, dtype=float) if level in ("interval", "ratio") \
        else np.arange(len(votes.labels), dtype=float)
    mat[votes.annotator_index[keep], votes.item_index[keep]] = values[votes.label_index[keep]]
    return krippendorff.alpha(reliability_data=mat, level_of_measurement=level,
                              value_domain=list(values))


@pytest.mark.parametrize("scale", ["nominal", "ordinal", "interval", "ratio"],
                         ids=lambda s: f"krippendorff_pkg_recomputed_{s}")
@pytest.mark.parametrize("seed", [0, 1])
def test_influence_equals_alpha_recomputed_without_each_annotator(seed, scale):
    votes = _random_votes(seed, scale)
    inf = alpha_influence(votes)
    for pos, name in enumerate(np.asarray(votes.annotator_ids).astype(str)):
        assert inf.loc[name, "alpha_without"] == pytest.approx(
            _alpha_without(votes, pos, scale), abs=1e-10), name
    full = pytest.importorskip("krippendorff").alpha(
        reliability_data=_matrix(votes),
        level_of_measurement=scale, value_domain=list(_values(votes, scale)))
    np.testing.assert_allclose(inf["alpha_change"], inf["alpha_without"] - full, atol=1e-10)


def _values(votes: Votes, level: str) -> np.ndarray:
    return np.asarray(votes.labels.values, dtype=float) if level in ("interval", "ratio") \
        else np.arange(len(votes.labels), dtype=float)


def _matrix(votes: Votes) -> np.ndarray:
    mat = np.full((len(votes.annotator_ids), votes.n_items), np.nan)
    mat[votes.annotator_index, votes.item_index] = _values(votes, votes.labels.scale)[
        votes.label_index]
    return mat


def test_influence_on_dog_equals_recomputed_alpha(shared_data):
    """Dog (109 annotators, Zhou et al. 2012): three annotators checked against krippendorff."""
    votes = read_votes(shared_data("dog", "answer.csv"))
    inf = alpha_influence(votes)
    assert inf["n_votes"].sum() == votes.n_votes
    for pos in (0, 5, 50):
        name = str(votes.annotator_ids[pos])
        assert inf.loc[name, "alpha_without"] == pytest.approx(
            _alpha_without(votes, pos, "nominal"), abs=1e-10)


@pytest.mark.parametrize("scale, weights", [("nominal", None), ("ordinal", "linear"),
                                            ("interval", "quadratic")],
                         ids=["cohen1960_nominal", "cohen1968_linear", "cohen1968_quadratic"])
def test_pairs_equal_cohen_kappa_on_shared_items(scale, weights):
    votes = _random_votes(3, scale, n_items=40)
    pairs = annotator_pairs(votes, min_shared=5)
    assert len(pairs) and (pairs["n_shared"] >= 5).all()
    assert set(pairs["weights"]) == {"none" if weights is None else weights}
    for row in pairs.itertuples(index=False):
        ref = annotator_kappa(votes, row.annotator_1, row.annotator_2, weights=weights)
        assert row.kappa == pytest.approx(ref.value, abs=1e-12)
        assert ref.n_items == row.n_shared
    n_pairs = len(annotator_pairs(votes, min_shared=1))
    assert n_pairs == len(pairs) + pairs.attrs["n_left_out"]


def test_pair_tables_add_over_disjoint_items():
    """Sums over items: the tables of two halves of the items merge to those of all."""
    votes = _random_votes(4, "nominal", n_items=30)
    args = (votes.item_index, votes.annotator_index, votes.label_index)
    r, k = len(votes.annotator_ids), len(votes.labels)
    half = votes.item_index < 15
    whole = pair_tables(*args, r, k)
    merged = merge_pair_tables([pair_tables(*(a[half] for a in args), r, k),
                                pair_tables(*(a[~half] for a in args), r, k)])
    np.testing.assert_array_equal(whole[0], merged[0])
    np.testing.assert_array_equal(whole[1], merged[1])
    pd.testing.assert_frame_equal(pairs_frame(whole, votes.annotator_ids, "nominal", min_shared=2),
                                  annotator_pairs(votes, min_shared=2))


@pytest.mark.parametrize("seed", range(4))
def test_pair_tables_equal_a_loop_over_the_pairs_of_votes(seed):
    """The compiled pass against the definition: every two votes on one item by annotators
    g < h add one to cell (g's label, h's label); repeated votes of one annotator are not a
    pair (items as 64-bit keys, as the Dask partitions hand them)."""
    rng = np.random.default_rng(seed)
    n, r, k = 300, 7, 3
    item = rng.integers(0, 30, n).astype(np.uint64) * np.uint64(2**40)
    who, label = rng.integers(0, r, n), rng.integers(0, k, n)
    want: dict[int, np.ndarray] = {}
    for a in range(n):
        for b in range(n):
            if item[a] == item[b] and who[a] < who[b]:
                table = want.setdefault(int(who[a] * r + who[b]), np.zeros((k, k), np.int64))
                table[label[a], label[b]] += 1
    keys, tables = pair_tables(item, who, label, r, k)
    assert keys.tolist() == sorted(want)
    np.testing.assert_array_equal(tables, np.array([want[key] for key in sorted(want)]))


def test_pair_matrix_puts_agreeing_groups_together():
    """Two groups that agree within and disagree across end up in two blocks."""
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 2, 60)
    rows = []
    for a in range(6):
        flip = a % 2  # annotators 0, 2, 4 follow the truth; 1, 3, 5 its opposite
        for i in range(60):
            label = truth[i] ^ flip if rng.random() < 0.9 else rng.integers(0, 2)
            rows.append((i, f"a{a}", str(label)))
    votes = Votes.from_long(pd.DataFrame(rows, columns=["item", "annotator", "label"]))
    mat = pair_matrix(annotator_pairs(votes))
    order = list(mat.index)
    groups = [int(name[1]) % 2 for name in order]
    assert groups in ([0, 0, 0, 1, 1, 1], [1, 1, 1, 0, 0, 0])
    assert np.allclose(np.diag(mat.to_numpy()), 1.0) and np.allclose(mat, mat.T, equal_nan=True)


def test_errors():
    counts_only = Votes.from_counts([[2, 1]], labels=["a", "b"])
    with pytest.raises(SchemaError, match="alpha_influence needs annotator ids"):
        alpha_influence(counts_only)
    with pytest.raises(SchemaError, match="annotator pairs needs annotator ids"):
        annotator_pairs(counts_only)
    with pytest.raises(Exception, match="min_shared"):
        annotator_pairs(_random_votes(0, "nominal"), min_shared=0)
