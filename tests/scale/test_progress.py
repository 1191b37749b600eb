"""Progress bars of Dask work (annokit/scale/progress.py): the rules of annokit.core.progress."""

from __future__ import annotations

import contextlib
import io
import sys
import types

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
pytest.importorskip("distributed")

import annokit.core.progress as core_progress  # noqa: E402
from annokit.core.progress import set_progress  # noqa: E402
from annokit.core.votes import Votes  # noqa: E402
from annokit.metrics.workflow import EvaluateOptions  # noqa: E402
from annokit.scale import progress as scale_progress  # noqa: E402
from annokit.scale.evaluate import evaluate_dask  # noqa: E402
from annokit.scale.progress import compute, persist  # noqa: E402
from annokit.scale.votes import from_votes  # noqa: E402


class _Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def terminal(monkeypatch):
    """A function that replaces stderr by a terminal and draws bars at once (no delay).

    Called in the test body: pytest's capture takes ``sys.stderr`` back when the test starts.
    """
    def replace() -> _Terminal:
        stream = _Terminal()
        monkeypatch.setattr(sys, "stderr", stream)
        monkeypatch.setattr(core_progress, "DEFAULT_DELAY", 0.0)
        return stream

    return replace


@pytest.fixture
def setting():
    """set_progress within a test, reset afterwards."""
    tokens = []
    yield lambda value: tokens.append(set_progress(value))
    for token in reversed(tokens):
        core_progress._ENABLED.reset(token)


def _work(n=12):
    nodes = [dask.delayed(lambda i: i * i)(i) for i in range(n)]
    return nodes, dask.delayed(sum)(nodes)


def _evaluate(client):
    votes = Votes.from_counts(np.random.default_rng(0).integers(0, 4, size=(30, 2)) + [1, 0],
                              labels=["no", "yes"], item_ids=[f"i{j}" for j in range(30)])
    p = np.random.default_rng(1).random(30)
    preds = pd.DataFrame({"item": votes.item_ids, "prob_no": 1 - p, "prob_yes": p})
    return evaluate_dask(from_votes(votes, npartitions=3, client=client or False), preds,
                         EvaluateOptions(n_boot=10), client=client)


class _Recorder:
    """Stands in for annokit.core.progress.progress: keeps each bar's final count and total."""

    def __init__(self):
        self.bars = {}

    @contextlib.contextmanager
    def __call__(self, total=None, *, desc="", unit="it", **kwargs):
        bar = types.SimpleNamespace(n=0, total=total, refresh=lambda: None)
        bar.update = lambda k=1: setattr(bar, "n", bar.n + k)
        yield bar
        self.bars[desc] = (bar.n, bar.total)


@pytest.mark.parametrize("where", ["local", "cluster"])
def test_every_task_is_counted(where, dask_client, setting, monkeypatch):
    client = dask_client if where == "cluster" else None
    recorder = _Recorder()
    monkeypatch.setattr(scale_progress, "progress", recorder)
    setting(True)
    nodes, total = _work()
    with dask.config.set(scheduler="synchronous"):
        assert compute(client, [total], desc="squares") == [sum(i * i for i in range(12))]
        kept = persist(client, nodes, desc="kept")
        assert compute(client, [dask.delayed(sum)(kept)], desc="again") == [506]
    assert recorder.bars["squares"] == (13, 13)  # 12 squares and their sum
    assert recorder.bars["kept"] == (12, 12)
    n, of = recorder.bars["again"]  # the sum (and, on a cluster, the persisted squares)
    assert n == of >= 1


@pytest.mark.parametrize("where", ["local", "cluster"])
def test_bar_drawn_on_a_terminal_never_on_stdout(where, dask_client, terminal, capfd):
    client = dask_client if where == "cluster" else None
    stream = terminal()
    with dask.config.set(scheduler="synchronous"):
        assert compute(client, [_work()[1]], desc="squares") == [506]
    assert "squares" in stream.getvalue() and "task" in stream.getvalue()
    assert capfd.readouterr().out == ""


@pytest.mark.filterwarnings("ignore::annokit.errors.DegenerateInputWarning")
@pytest.mark.parametrize("where", ["local", "cluster"])
def test_nothing_drawn_when_quiet_or_not_a_terminal(where, dask_client, terminal, setting,
                                                     monkeypatch, capfd):
    client = dask_client if where == "cluster" else None
    stream = terminal()
    with dask.config.set(scheduler="synchronous"):
        setting(True)
        shown = _evaluate(client)
        assert "evaluate" in stream.getvalue()
        stream.seek(0)
        stream.truncate(0)
        setting(False)  # --quiet
        quiet = _evaluate(client)
        assert stream.getvalue() == ""
        setting(None)  # automatic: stderr is not a terminal
        monkeypatch.setattr(sys, "stderr", io.StringIO())
        piped = _evaluate(client)
        assert sys.stderr.getvalue() == ""
    assert capfd.readouterr().err == ""
    assert shown.to_dict() == quiet.to_dict() == piped.to_dict()
