"""A shared two-worker LocalCluster for the Dask engine's tests (skipped without Dask)."""

from __future__ import annotations

import pytest

distributed = pytest.importorskip("distributed", reason="the Dask engine needs annokit[dask]")


@pytest.fixture(scope="session")
def dask_client():
    """Two in-process single-threaded workers.

    No memory limit: in-process workers measure the RSS of the whole test process, which
    grows over a long test session, so a limit would pause them (and hang the tests) for
    memory they do not hold. Memory limits per worker are exercised by
    ``benchmarks/bench_scale.py`` on worker processes.
    """
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       memory_limit=0, dashboard_address=None)
    client = distributed.Client(cluster, set_as_default=False)
    yield client
    client.close()
    cluster.close()
