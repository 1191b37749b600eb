"""A real cluster: an external ``dask scheduler`` and two ``dask worker`` processes on
127.0.0.1, one of them killed (SIGKILL) while ``annokit aggregate --method ds`` runs its EM.

The lost worker held per-partition EM state (the partitions' vote matrices and posteriors);
the scheduler recomputes it on the other worker from the task graph, and the result is the
in-memory engine's: the same labels, posteriors within 1e-9.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

distributed = pytest.importorskip("distributed", reason="the Dask engine needs annokit[dask]")

import annokit  # noqa: E402
from annokit.cli import main  # noqa: E402

#: The task the EM runs once per iteration on every group (the partitions a worker holds;
#: annokit.scale.em): its keys on the scheduler are ``_ds_pass-<uuid>``; each partition's
#: vote block is ``_block-<uuid>``.
EM_TASK, STATE_TASK = "_ds_pass", "_block"
N_PARTS = 8
LABELS = np.array(["neg", "neu", "pos"], dtype=object)
#: Seconds to wait for the cluster to come up and for the command to finish.
START_TIMEOUT, RUN_TIMEOUT = 60, 180


def _dask_cli() -> list[str]:
    """The ``dask`` command of this interpreter's environment (its console script, else
    ``python -m dask``, the same click program)."""
    script = Path(sys.executable).with_name("dask")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "dask"]


def _env() -> dict[str, str]:
    """The environment of every process: the annokit this test imports first on the path
    (the workers unpickle its functions)."""
    root = str(Path(annokit.__file__).resolve().parent.parent)
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=root if not path else os.pathsep.join([root, path]))


def _start(args: list[str], log: Path) -> subprocess.Popen:
    # a session of its own: killing the group ends the nanny, its worker process and
    # multiprocessing's helpers together
    with open(log, "wb") as out:
        return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=_env(),
                                start_new_session=True)


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:  # pragma: no cover - a zombie the OS will reap
        pass


@pytest.fixture
def cluster(tmp_path):
    """An external scheduler (port 0, address in a scheduler file, no dashboard) and two
    single-threaded workers with 1 GB each; every process is killed at the end, whatever
    happened. Yields (client, {worker name: process}, started processes)."""
    procs: list[subprocess.Popen] = []
    client = None
    sched_file = tmp_path / "scheduler.json"
    try:
        procs.append(_start([*_dask_cli(), "scheduler", "--host", "127.0.0.1", "--port", "0",
                             "--no-dashboard", "--scheduler-file", str(sched_file)],
                            tmp_path / "scheduler.log"))
        deadline = time.monotonic() + START_TIMEOUT
        while not sched_file.is_file() or not sched_file.read_text().strip():
            assert procs[0].poll() is None, (tmp_path / "scheduler.log").read_text()
            assert time.monotonic() < deadline, "the scheduler wrote no scheduler file"
            time.sleep(0.1)
        workers = {}
        for name in ("w0", "w1"):
            workers[name] = _start([*_dask_cli(), "worker", "--scheduler-file", str(sched_file),
                                    "--host", "127.0.0.1", "--no-dashboard", "--name", name,
                                    "--nworkers", "1", "--nthreads", "1", "--memory-limit", "1GB",
                                    "--local-directory", str(tmp_path / name)],
                                   tmp_path / f"{name}.log")
            procs.append(workers[name])
        client = distributed.Client(scheduler_file=str(sched_file), timeout=f"{START_TIMEOUT}s")
        client.wait_for_workers(2, timeout=START_TIMEOUT)
        yield client, workers, procs
    finally:
        if client is not None:
            client.close()
        for proc in reversed(procs):
            _kill(proc)


@pytest.fixture
def data(tmp_path):
    """Seeded votes as Parquet partitions (and the same votes as one file for the memory
    engine) and a gold file for every fifth item, as an annotation tool exports them.
    Annotators near chance make the EM take about 20 iterations."""
    rng = np.random.default_rng(25)
    n_items, per_item, n_annotators = 10_000, 6, 200
    skill = rng.uniform(0.3, 0.7, n_annotators)
    truth = rng.choice(3, size=n_items, p=[0.5, 0.3, 0.2])
    who = np.argsort(rng.random((n_items, n_annotators)), axis=1)[:, :per_item].ravel()
    true = np.repeat(truth, per_item)
    right = rng.random(true.size) < skill[who]
    label = np.where(right, true, (true + rng.integers(1, 3, true.size)) % 3)
    items = np.array([f"doc{i:05d}" for i in range(n_items)], dtype=object)
    votes = pd.DataFrame({"item": np.repeat(items, per_item),
                          "annotator": np.array([f"ann{a:03d}" for a in range(n_annotators)],
                                                dtype=object)[who],
                          "label": LABELS[label]}).sample(frac=1, random_state=0)
    (tmp_path / "votes").mkdir()
    for j, rows in enumerate(np.array_split(np.arange(len(votes)), N_PARTS)):
        votes.iloc[rows].to_parquet(tmp_path / "votes" / f"part-{j:03d}.parquet", index=False)
    votes.to_parquet(tmp_path / "votes.parquet", index=False)
    pd.DataFrame({"item": items[::5], "gold": LABELS[truth[::5]]}).to_csv(tmp_path / "gold.csv",
                                                                         index=False)
    return tmp_path


def _em_tasks(client) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Per worker address: the EM step keys it holds or processes, and the partitions' EM
    state keys it holds."""
    held, busy = client.has_what(), client.processing()
    steps = {w: {str(k) for k in [*keys, *busy.get(w, ())] if str(k).startswith(EM_TASK)}
             for w, keys in held.items()}
    state = {w: {str(k) for k in keys if str(k).startswith(STATE_TASK)}
             for w, keys in held.items()}
    return steps, state


def test_worker_killed_during_dawid_skene_same_result_as_memory(cluster, data):
    """An external scheduler, two worker processes, one SIGKILLed while
    the EM runs (after two iterations, while it holds partitions' EM state); exit 0 and
    labels.csv equal to the memory engine's."""
    client, workers, procs = cluster
    out = data / "labels.csv"
    stdout, stderr = data / "stdout.txt", data / "stderr.txt"
    with open(stdout, "wb") as so, open(stderr, "wb") as se:  # files: no pipe to fill
        run = subprocess.Popen(
            [sys.executable, "-m", "annokit.cli", "aggregate", str(data / "votes"), "--engine",
             "dask", "--scheduler", client.scheduler.address, "--method", "ds", "--gold",
             str(data / "gold.csv"), "--soft", "--out", str(out)],
            stdout=so, stderr=se, env=_env(), start_new_session=True)
    procs.append(run)  # killed by the fixture if anything below fails
    seen: set[str] = set()
    while True:  # wait until the EM has run two iterations' passes (one per group each)
        assert run.poll() is None, (f"the command ended before its EM ({EM_TASK} tasks) was "
                                    f"seen on the scheduler: {stderr.read_text()}")
        steps, state = _em_tasks(client)
        seen.update(*steps.values())
        n_groups = sum(1 for held in state.values() if held)
        if n_groups and len(seen) >= 2 * n_groups:
            break
        time.sleep(0.01)
    victim = max(state, key=lambda w: len(state[w]))
    name = client.scheduler_info()["workers"][victim]["name"]
    lost_state = len(state[victim])
    os.killpg(workers[name].pid, signal.SIGKILL)
    running_at_kill = run.poll() is None
    run.wait(timeout=RUN_TIMEOUT)
    stdout, stderr = stdout.read_text(), stderr.read_text()
    assert running_at_kill, "the worker was killed after the command had ended"
    assert lost_state > 0
    assert workers[name].wait(timeout=30) == -signal.SIGKILL
    assert [w["name"] for w in client.scheduler_info()["workers"].values()] == \
        [n for n in workers if n != name]
    assert run.returncode == 0, stderr
    assert "Traceback" not in stderr

    mem = CliRunner().invoke(main, ["aggregate", str(data / "votes.parquet"), "--method", "ds",
                                    "--gold", str(data / "gold.csv"), "--soft", "--out",
                                    str(data / "memory.csv")])
    assert mem.exit_code == 0, mem.output
    # the same summary (iterations, convergence, accuracy on gold); Dask counts the rows
    summary = mem.output.strip().split("; wrote")[0]
    assert stdout.strip() == f"{summary}; wrote {out} (CSV, 10,000 rows)"
    got = pd.read_csv(out, dtype={"item": str})
    want = pd.read_csv(data / "memory.csv", dtype={"item": str})
    assert list(got.columns) == list(want.columns) == ["item", "label", "p_neg", "p_neu",
                                                       "p_pos"]
    assert got["item"].tolist() == want["item"].tolist()
    assert got["label"].tolist() == want["label"].tolist()
    np.testing.assert_allclose(got.iloc[:, 2:].to_numpy(), want.iloc[:, 2:].to_numpy(), rtol=0,
                               atol=1e-9)


def test_em_parameters_sent_as_tasks_without_a_large_graph_warning(dask_client):
    """Each iteration's parameters are a task's result (recomputable when a worker is lost):
    Dask's "Sending large graph" warning, which a large confusion array would raise at every
    iteration, does not reach the user."""
    import dask

    from annokit.core.votes import Votes
    from annokit.scale.em import fit_dask
    from annokit.scale.votes import from_votes

    rng = np.random.default_rng(4)
    n_items, n_annotators = 1500, 3000  # confusions: 3000 x 3 x 3 floats, 216 kB a copy
    votes = pd.DataFrame({"item": np.repeat([f"q{i}" for i in range(n_items)], 3),
                          "annotator": [f"w{a}" for a in rng.permutation(3 * n_items)
                                        % n_annotators],
                          "label": LABELS[rng.integers(0, 3, 3 * n_items)]})
    votes = Votes.from_long(votes.drop_duplicates(["item", "annotator"]))
    dv = from_votes(votes, npartitions=3, client=dask_client)
    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "50kB"}), \
            warnings.catch_warnings():
        warnings.filterwarnings("error", message="Sending large graph")
        fit = fit_dask(dv, "ds", max_iter=3, tol=0)
    assert fit.n_iter_ == 3
    assert fit.confusions_.shape == (n_annotators, 3, 3)
    assert len(dask_client.compute(fit.posteriors).result()) == n_items
