"""Which client the Dask engine runs on, and which it closes (:mod:`annokit.scale.client`)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

distributed = pytest.importorskip("distributed", reason="the Dask engine needs annokit[dask]")

from annokit.cli import main  # noqa: E402
from annokit.scale.client import get_client, shutdown  # noqa: E402


def _no_current_client() -> bool:
    try:
        distributed.get_client()
    except ValueError:
        return True
    return False


def test_a_started_cluster_is_closed_and_a_found_client_left_open(dask_client):
    assert _no_current_client()
    started = get_client()  # no current client: a LocalCluster of worker processes
    cluster = started.cluster
    assert len(cluster.workers) >= 1
    shutdown(started)
    assert started.status == "closed" and cluster.status.name == "closed"
    with dask_client.as_current():
        found = get_client()
        assert found is dask_client
        shutdown(found)  # the caller's client: left open
    assert dask_client.status == "running"
    shutdown(dask_client)
    assert dask_client.status == "running"


def test_cli_starts_its_own_cluster_and_closes_it(tmp_path):
    """``--engine dask`` with no cluster running: the command starts one and closes it."""
    assert _no_current_client()
    pd.DataFrame({"item": ["a", "a", "b", "b"], "annotator": ["x", "y", "x", "y"],
                  "label": ["p", "p", "p", "n"]}).to_parquet(tmp_path / "v.parquet")
    res = CliRunner().invoke(main, ["stats", str(tmp_path / "v.parquet"), "--engine", "dask",
                                    "--n-boot", "0", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["n_items"] == 2
    assert _no_current_client()
