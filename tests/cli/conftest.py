"""One Dask cluster for the command line's ``--engine dask`` tests.

Without a current client every ``--engine dask`` command starts a ``LocalCluster`` of worker
processes and closes it when it ends (:func:`annokit.scale.client.get_client`), seconds each
time. The modules that run the Dask engine through the CLI use ``dask_cluster`` instead: one
two-process cluster per test process, made current around each test, which the commands find
and leave open (:func:`annokit.scale.client.shutdown` closes only what annokit started).
Starting a cluster per command stays tested in ``tests/scale/test_client.py``.
"""

from __future__ import annotations

import logging

import pytest


@pytest.fixture(scope="session")
def _shared_cluster():
    distributed = pytest.importorskip("distributed",
                                      reason="the Dask engine needs annokit[dask]")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       memory_limit=0, dashboard_address=None,
                                       scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                                       silence_logs=logging.CRITICAL)
    client = distributed.Client(cluster, set_as_default=False)
    yield client
    client.close()
    cluster.close()


@pytest.fixture
def dask_cluster(_shared_cluster):
    """The shared cluster's client, current for the test (the CLI's commands run on it)."""
    with _shared_cluster.as_current():
        yield _shared_cluster
