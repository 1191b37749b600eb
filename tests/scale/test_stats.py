"""Dataset statistics on Dask (annokit.scale.stats) against annokit.quality.dataset_stats."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask.dataframe", reason="the Dask engine needs annokit[dask]")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from annokit.core.votes import Votes  # noqa: E402
from annokit.errors import DegenerateInputWarning, InvalidValueError  # noqa: E402
from annokit.io import read_votes  # noqa: E402
from annokit.quality.dataset_stats import dataset_stats  # noqa: E402
from annokit.scale.stats import dataset_stats_dask  # noqa: E402
from annokit.scale.votes import from_votes, read_votes_dask  # noqa: E402

from _shared import data_path  # noqa: E402

EXACT = ("n_items", "n_votes", "n_annotators", "labels", "votes_per_item", "entropy", "agreement",
         "ties", "tie_policy", "label_counts", "majority_counts", "gold")


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        return fn(*args, **kwargs)


def _compare(mem, got):
    for key in EXACT:  # identical, not close
        assert got[key] == mem[key], key
    for key in ("krippendorff_alpha", "fleiss_kappa", "percent_agreement", "gwet_ac1",
                "brennan_prediger", "conger_kappa"):  # the same figures on Dask
        if mem[key] is None:
            assert got[key] is None
            continue
        for field, value in mem[key].items():
            if isinstance(value, float) and np.isfinite(value):
                assert got[key][field] == pytest.approx(value, rel=1e-12, abs=1e-14), (key, field)
            else:
                assert got[key][field] == value or (np.isnan(value) and np.isnan(got[key][field]))


def _random_votes(n, k, seed, one_label=False, gold=False):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        m = int(rng.integers(1, 7))
        for a in rng.choice(12, size=m, replace=False):
            lab = 0 if one_label else int(rng.integers(0, k))
            rows.append((f"i{i}", f"w{a}", f"l{lab}", f"l{i % k}" if gold and i % 3 else None))
    df = pd.DataFrame(rows, columns=["item", "annotator", "label", "gold"])
    return Votes.from_long(df, gold="gold" if gold else None,
                           labels=[f"l{j}" for j in range(k)])


@pytest.mark.parametrize("npartitions", [1, 3, 17])
@pytest.mark.parametrize("n_boot", [0, 50])
def test_identical_to_in_memory(dask_client, npartitions, n_boot):
    votes = _random_votes(80, 3, seed=npartitions, gold=True)
    mem = _quiet(dataset_stats, votes, n_boot=n_boot, rng=3)
    got = _quiet(dataset_stats_dask, from_votes(votes, npartitions=npartitions, client=dask_client),
                 n_boot=n_boot, rng=3)
    _compare(mem, got)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 30), k=st.integers(2, 4), npart=st.integers(1, 40),
       seed=st.integers(0, 1000), one_label=st.booleans())
def test_any_partitioning(n, k, npart, seed, one_label):
    """Empty partitions, one-item partitions, one label only: the same statistics."""
    import dask

    votes = _random_votes(n, k, seed, one_label=one_label)
    mem = _quiet(dataset_stats, votes, n_boot=20, rng=seed)
    with dask.config.set(scheduler="synchronous"):
        got = _quiet(dataset_stats_dask, from_votes(votes, npartitions=npart), n_boot=20, rng=seed)
    _compare(mem, got)


def test_chaosnli_and_rte_equal_in_memory(dask_client, tmp_path):
    path = data_path("chaosnli", "chaosNLI_snli.jsonl")
    rte = data_path("snow2008_rte", "rte.standardized.tsv")
    for votes in (read_votes(path), read_votes(rte)):
        # long tables carry no per-item metadata (ChaosNLI's published majority, old labels)
        votes.item_metadata = pd.DataFrame(index=pd.RangeIndex(votes.n_items))
        mem = _quiet(dataset_stats, votes, n_boot=100, rng=0)
        got = _quiet(dataset_stats_dask, from_votes(votes, npartitions=5, client=dask_client),
                     n_boot=100, rng=0)
        mem["majority_change"] = None  # original labels are not carried by long tables
        _compare(mem, got)


def test_from_parquet_files_and_options(dask_client, tmp_path):
    votes = _random_votes(50, 3, seed=9)
    long = votes.to_long()
    for j, part in enumerate(np.array_split(np.arange(len(long)), 4)):
        long.iloc[part].to_parquet(tmp_path / f"p{j}.parquet", index=False)
    got = _quiet(dataset_stats_dask, read_votes_dask(tmp_path, client=dask_client), n_boot=0)
    _compare(_quiet(dataset_stats, votes, n_boot=0), got)
    with pytest.raises(InvalidValueError):
        dataset_stats_dask(read_votes_dask(tmp_path, client=dask_client), ties="random")


def test_partition_counts_whatever_the_order_of_items():
    """Counts land on the right item even when a partition's items are not sorted by key."""
    from annokit.scale.stats import _part_counts

    frame = pd.DataFrame({"item": np.array([9, 1, 1, 5], dtype=np.int64),
                          "label": np.array([0, 1, 1, 1], dtype=np.int16)})
    items = pd.DataFrame({"item": np.array([5, 9, 1], dtype=np.int64)})
    counts, _ = _part_counts(frame, items, 2)
    assert counts.tolist() == [[0, 1], [1, 0], [0, 2]]


@pytest.mark.parametrize("scale", ["ordinal", "interval", "ratio"])
@pytest.mark.parametrize("npartitions", [1, 4, 23])
def test_ordered_scales_equal_in_memory(scale, npartitions):
    """Alpha at the labels' level (pair weights and totals merged over partitions), its
    bootstrap interval, and the rating summaries, as in memory."""
    from annokit.core.labels import LabelSet

    rng = np.random.default_rng(npartitions)
    counts = rng.integers(0, 4, size=(60, 4))
    counts[counts.sum(axis=1) == 0, 0] = 2
    counts[3] = [0, 0, 1, 0]  # one item with a single vote
    votes = Votes.from_counts(counts, labels=LabelSet(["1", "2", "4", "7"], scale=scale))
    mem = _quiet(dataset_stats, votes, n_boot=40, rng=5)
    import dask

    with dask.config.set(scheduler="synchronous"):
        got = _quiet(dataset_stats_dask, from_votes(votes, npartitions=npartitions), n_boot=40,
                     rng=5)
    _compare(mem, got)
    assert got["scale"] == scale and got["krippendorff_alpha"]["level"] == scale
    for key in ("item_mean", "item_sd", "bimodality"):
        for field, value in mem["ratings"][key].items():
            assert got["ratings"][key][field] == pytest.approx(value, rel=1e-12), (key, field)


@pytest.mark.parametrize("scale", ["nominal", "ordinal"])
def test_influence_and_pairs_equal_in_memory(scale):
    """Alpha without each annotator and the pair table on Dask: partition sums added."""
    import dask

    from annokit.core.annotator_agreement import alpha_influence, annotator_pairs
    from annokit.core.labels import LabelSet
    from annokit.scale.stats import alpha_influence_dask, annotator_pairs_dask

    votes = _random_votes(60, 3, 5)
    if scale == "ordinal":
        votes = Votes(votes.item_index, votes.label_index, item_ids=votes.item_ids,
                      labels=LabelSet(list(votes.labels.names), scale="ordinal"),
                      annotator_index=votes.annotator_index, annotator_ids=votes.annotator_ids)
    with dask.config.set(scheduler="synchronous"):
        dv = from_votes(votes, npartitions=3)
        influence = alpha_influence_dask(dv)
        pairs = annotator_pairs_dask(dv, min_shared=3)
    pd.testing.assert_frame_equal(influence, alpha_influence(votes), rtol=1e-12)
    pd.testing.assert_frame_equal(pairs, annotator_pairs(votes, min_shared=3), rtol=1e-12)
