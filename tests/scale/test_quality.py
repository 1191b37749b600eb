"""Aggregation and annotator scores on Dask (annokit.scale.quality) against memory."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask.dataframe", reason="the Dask engine needs annokit[dask]")

from annokit.core.votes import Votes  # noqa: E402
from annokit.errors import InvalidValueError, SchemaError  # noqa: E402
from annokit.io import read_votes  # noqa: E402
from annokit.quality import aggregate, annotator_scores  # noqa: E402
from annokit.scale.quality import aggregate_dask, annotator_scores_dask  # noqa: E402
from annokit.scale.votes import from_votes  # noqa: E402

from _shared import data_path  # noqa: E402
from _vote_sets import synthetic_annotators as _synthetic  # noqa: E402


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


@pytest.mark.parametrize("method", ["mv", "ds", "onecoin", "mace"])
@pytest.mark.parametrize("soft", [False, True])
def test_aggregate_equals_in_memory(dask_client, tmp_path, method, soft):
    votes = _synthetic(n_items=90, seed=7, gold=True)
    dv = from_votes(votes, npartitions=5, client=dask_client)
    mem = _quiet(aggregate, votes, method, soft=soft, rng=0)
    got = _quiet(aggregate_dask, dv, method, soft=soft, rng=0, out=tmp_path / "labels")
    assert got.summary() == mem.summary()
    table = pd.read_parquet(tmp_path / "labels").set_index("item").loc[mem.table["item"]]
    assert got.rows_written == votes.n_items
    assert list(table.reset_index().columns) == list(mem.table.columns)
    assert table["label"].tolist() == mem.table["label"].tolist()
    for col in [c for c in mem.table.columns if c.startswith("p_")]:
        np.testing.assert_allclose(table[col].to_numpy(), mem.table[col].to_numpy(), atol=1e-9)
    if method == "mv":
        assert table["tied"].tolist() == mem.table["tied"].tolist()


@pytest.mark.parametrize("method", ["ds", "onecoin", "mace", "agreement", "gold", "entropy"])
def test_annotator_scores_equal_in_memory(dask_client, method):
    votes = _synthetic(n_items=100, n_ann=12, seed=11, gold=True)
    dv = from_votes(votes, npartitions=4, client=dask_client)
    mem = _quiet(annotator_scores, votes, method, rng=0)
    got = _quiet(annotator_scores_dask, dv, method, rng=0).set_index("annotator").loc[
        votes.annotator_ids.astype(object)]
    np.testing.assert_allclose(got["score"].to_numpy(), mem, rtol=1e-9, atol=1e-12)


def test_rte_accuracy_and_errors(dask_client):
    votes = read_votes(data_path("snow2008_rte", "rte.standardized.tsv"))
    votes.item_metadata = pd.DataFrame(index=pd.RangeIndex(votes.n_items))
    dv = from_votes(votes, npartitions=3, client=dask_client)
    for method in ("mv", "ds"):
        assert _quiet(aggregate_dask, dv, method).summary() == _quiet(aggregate, votes,
                                                                      method).summary()
    with pytest.raises(InvalidValueError):
        aggregate_dask(dv, "mv", ties="random")
    with pytest.raises(InvalidValueError):
        aggregate_dask(dv, "wmv")


@pytest.mark.parametrize("method, kwargs", [("agreement", {"threshold": 0.3}),
                                            ("agreement", {"threshold": 0.3, "max_rounds": 1}),
                                            ("onecoin", {}), ("entropy", {"top_fraction": 0.2})])
def test_filter_equals_in_memory(dask_client, tmp_path, method, kwargs):
    from annokit.quality import filter_annotators
    from annokit.scale.filter import filter_annotators_dask

    votes = _synthetic(n_items=80, n_ann=14, seed=5)
    dv = from_votes(votes, npartitions=4, client=dask_client)
    kept, mem = _quiet(filter_annotators, votes, method=method, **kwargs)
    got_votes, got = _quiet(filter_annotators_dask, dv, method=method, **kwargs,
                            out=tmp_path / "kept", audit_path=tmp_path / "audit.json")
    s_mem, s_got = mem.summary(), got.summary()
    for key, value in s_mem.items():
        if isinstance(value, float):
            assert s_got[key] == pytest.approx(value, rel=1e-12), key
        else:
            assert s_got[key] == value, key
    assert got.removed_annotators == mem.removed_annotators
    assert got.notes == mem.notes
    pd.testing.assert_frame_equal(got.annotators.reset_index(drop=True),
                                  mem.annotators.reset_index(drop=True))
    assert sorted(got.items_affected) == sorted(mem.items_affected)
    assert sorted(got.items_too_few_votes) == sorted(mem.items_too_few_votes)
    written = pd.read_parquet(tmp_path / "kept")
    assert len(written) == kept.n_votes == got_votes.n_votes
    assert (tmp_path / "audit.json").exists()


def test_filter_without_annotator_ids_is_refused():
    from annokit.scale.filter import filter_annotators_dask

    dv = from_votes(Votes.from_counts(np.array([[2, 1], [0, 3]]), labels=["a", "b"]),
                    npartitions=1, client=False)  # in process: no LocalCluster started
    with pytest.raises(SchemaError,
                       match="^filtering annotators needs annotator ids; votes has none$"):
        filter_annotators_dask(dv, method="agreement", threshold=0.3)


def test_aggregate_in_process_keeps_partitions_aligned():
    """Synchronous scheduler: posteriors stay one partition per votes partition (gold joins)."""
    import dask

    votes = _synthetic(n_items=40, seed=2, gold=True)
    with dask.config.set(scheduler="synchronous"):
        got = _quiet(aggregate_dask, from_votes(votes, npartitions=7), "ds")
    assert got.summary() == _quiet(aggregate, votes, "ds").summary()
