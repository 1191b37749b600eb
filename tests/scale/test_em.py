"""EM on Dask (annokit.scale.em) against the in-memory estimators."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask.dataframe", reason="the Dask engine needs annokit[dask]")

import dask  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from annokit.errors import InvalidValueError  # noqa: E402
from annokit.io import read_votes  # noqa: E402
from annokit.quality import MACE, DawidSkene, OneCoinDawidSkene  # noqa: E402
from annokit.scale.em import fit_dask  # noqa: E402
from annokit.scale.votes import from_votes  # noqa: E402

from _shared import data_path  # noqa: E402
from _vote_sets import synthetic_annotators as _synthetic  # noqa: E402

ESTIMATORS = {"ds": DawidSkene, "onecoin": OneCoinDawidSkene, "mace": MACE}


def _compare(votes, method, dv, options=None, clamp_gold=False, rng=0):
    options = dict(options or {})
    kw = {"rng": rng} if method == "mace" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mem = ESTIMATORS[method](clamp_gold=clamp_gold, **kw, **options).fit(votes)
        got = fit_dask(dv, method, clamp_gold=clamp_gold, **kw, **options)
        post = dv.compute(got.posteriors)[0].set_index("item").loc[
            np.asarray(votes.item_ids, dtype=object)]
    cols = [f"p_{n}" for n in votes.labels.names]
    np.testing.assert_allclose(post[cols].to_numpy(), mem.posteriors_, rtol=0, atol=1e-9)
    assert post["label"].tolist() == list(mem.labels_)
    assert (got.n_iter_, got.converged_) == (mem.n_iter_, mem.converged_)
    assert got.log_likelihood_ == pytest.approx(mem.log_likelihood_, rel=1e-9)
    # annotator parameters: Dask annotator codes are first-seen over partitions
    order = pd.Index(dv.annotator_ids).get_indexer(votes.annotator_ids)
    for name in ("priors_", "confusions_", "skills_", "competence_", "strategies_"):
        if hasattr(mem, name):
            value = getattr(got, name)
            value = value if name == "priors_" else value[order]
            np.testing.assert_allclose(value, getattr(mem, name), rtol=0, atol=1e-9, err_msg=name)


def test_mace_needs_a_restart():
    dv = from_votes(_synthetic(n_items=10, n_ann=6, seed=0), npartitions=1)
    with pytest.raises(InvalidValueError, match="^n_restarts must be a positive integer; got 0$"):
        fit_dask(dv, "mace", n_restarts=0)


@pytest.mark.parametrize("method", ["ds", "onecoin", "mace"])
@pytest.mark.parametrize("clamp_gold", [False, True])
def test_equal_to_in_memory_on_a_cluster(dask_client, method, clamp_gold):
    votes = _synthetic(seed=3, gold=True)
    dv = from_votes(votes, npartitions=6, client=dask_client)
    options = {"n_restarts": 3} if method == "mace" else {}
    _compare(votes, method, dv, options, clamp_gold)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 40), npart=st.integers(1, 30), k=st.integers(2, 4),
       seed=st.integers(0, 999), method=st.sampled_from(["ds", "onecoin", "mace"]))
def test_any_partitioning_in_process(n, npart, k, seed, method):
    """Empty partitions, one-item partitions, partitions with one label only."""
    votes = _synthetic(n_items=n, n_ann=6, k=k, seed=seed)
    with dask.config.set(scheduler="synchronous"):
        dv = from_votes(votes, npartitions=npart)
        _compare(votes, method, dv, {"n_restarts": 2, "max_iter": 20} if method == "mace" else
                 {"max_iter": 30})


@pytest.mark.parametrize("name", ["snow2008_rte/rte.standardized.tsv", "dog", "bluebirds"])
def test_real_data_equal_to_in_memory(dask_client, name):
    folder = data_path(*name.split("/"))
    path = folder if folder.is_file() else next(p for p in sorted(folder.iterdir())
                                               if p.suffix in (".tsv", ".csv"))
    votes = read_votes(path)
    votes.item_metadata = pd.DataFrame(index=pd.RangeIndex(votes.n_items))
    dv = from_votes(votes, npartitions=4, client=dask_client)
    for method in ("ds", "onecoin"):
        _compare(votes, method, dv)


def test_one_pass_task_per_worker_and_iteration(dask_client):
    """12 partitions on 2 workers: each iteration runs one pass task per worker, not one per
    partition (the partitions a worker holds are passed by that task)."""
    from distributed import futures_of, get_task_stream

    votes = _synthetic(n_items=120, seed=4)
    dv = from_votes(votes, npartitions=12, client=dask_client)
    with get_task_stream(dask_client) as ts:
        got = fit_dask(dv, "ds")
    passes = [t for t in ts.data if str(t["key"]).startswith("_ds_pass")]
    # the first pass (from the vote distributions) and one per iteration, per worker holding
    # partitions
    holders = {w for ws in dask_client.who_has(futures_of(dv.frame)).values() for w in ws}
    assert len(holders) == 2
    assert len(passes) == (got.n_iter_ + 1) * len(holders)
    _compare(votes, "ds", dv)


@pytest.mark.parametrize("method", ["ds", "mace"])
def test_a_worker_lost_mid_fit_gives_the_same_result(monkeypatch, method):
    """A worker closed after the second round trip: its share is rebuilt from the graph on
    the other worker, and the posteriors still equal memory's."""
    import distributed

    from annokit.scale import em

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       memory_limit=0, dashboard_address=None)
    client = distributed.Client(cluster, set_as_default=False)
    try:
        votes = _synthetic(n_items=150, seed=8)
        dv = from_votes(votes, npartitions=6, client=client)
        gather, calls = em._Exec.gather, []

        def lossy(self, *args, **kwargs):
            calls.append(1)
            if len(calls) == 2:
                victim = next(iter(client.who_has(self.groups[0][:1]).values()))[0]
                client.sync(cluster.scheduler.remove_worker, victim, stimulus_id="test-kill",
                            close=True)
            return gather(self, *args, **kwargs)

        monkeypatch.setattr(em._Exec, "gather", lossy)
        options = {"n_restarts": 2} if method == "mace" else {}
        _compare(votes, method, dv, options)
        assert len(client.scheduler_info()["workers"]) == 1
    finally:
        client.close()
        cluster.close()
