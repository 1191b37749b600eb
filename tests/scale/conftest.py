"""A shared two-worker LocalCluster for the Dask engine's tests (skipped without Dask)."""

from __future__ import annotations

import pytest

distributed = pytest.importorskip("distributed", reason="the Dask engine needs annokit[dask]")


@pytest.fixture(scope="session")
def dask_client():
    """Two in-process single-threaded workers with a small memory limit each."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       memory_limit="1GB", dashboard_address=None)
    client = distributed.Client(cluster, set_as_default=False)
    yield client
    client.close()
    cluster.close()
