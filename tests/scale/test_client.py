"""Which client the Dask engine runs on, and which it closes (:mod:`annokit.scale.client`)."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

distributed = pytest.importorskip("distributed", reason="the Dask engine needs annokit[dask]")

from annokit.scale.client import get_client, shutdown  # noqa: E402


def test_a_client_annokit_made_is_closed_and_the_callers_left_open(dask_client):
    """A client annokit connected itself (``scheduler=``) is closed by ``shutdown``; one the
    caller passed is the caller's and stays open."""
    made = get_client(scheduler=dask_client.scheduler.address)
    assert made is not dask_client
    shutdown(made)
    assert made.status == "closed"
    assert dask_client.status == "running"  # the cluster itself is not annokit's
    passed = get_client(dask_client)
    assert passed is dask_client
    shutdown(passed)
    assert dask_client.status == "running"


@pytest.mark.parametrize("bad", [False, True], ids=["read", "read-error"])
def test_cli_starts_its_own_cluster_and_closes_it(tmp_path, bad):
    """``--engine dask`` with no cluster running (a fresh interpreter): the command starts a
    LocalCluster of worker processes, runs on it and closes it, also when the votes cannot be
    read (a blank label: the error, exit 1, and no cluster left running)."""
    frame = pd.DataFrame({"item": ["a", "a", "b", "b"], "annotator": ["x", "y", "x", "y"],
                          "label": ["p", "p", "p", None if bad else "n"]})
    frame.to_parquet(tmp_path / "v.parquet")
    code = ("import sys, distributed; from annokit.cli import main; "
            "sys.argv = ['annokit'] + sys.argv[1:]\n"
            "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
            "try:\n    distributed.get_client(); left = 'open'\n"
            "except ValueError:\n    left = 'closed'\n"
            "print(left, file=sys.stderr); sys.exit(code)")
    res = subprocess.run([sys.executable, "-c", code, "stats", str(tmp_path / "v.parquet"),
                          "--engine", "dask", "--n-boot", "0", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert res.stderr.strip().splitlines()[-1] == "closed"
    if bad:
        assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    else:
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout)["n_items"] == 2
