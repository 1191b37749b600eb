"""Progress bars for Dask work, under the rules of :mod:`annokit.core.progress`.

:func:`compute` and :func:`persist` are what the :mod:`annokit.scale` modules call
instead of ``client.compute`` / ``client.persist`` (or ``dask.compute`` /
``dask.persist`` on a local scheduler). While they run, the finished tasks of the
graph are counted into the bar of :func:`annokit.core.progress.progress`, so the
bar follows the same rules as every other: drawn on stderr only when progress is
enabled (:func:`~annokit.core.progress.set_progress`, the CLI's ``--quiet``) and
stderr is a terminal, and only once the work has run for
:data:`~annokit.core.progress.DEFAULT_DELAY` seconds; never on stdout, so ``--json``
output is untouched. With bars off nothing is added: the calls are the plain
Dask ones.

The tasks are counted by Dask's own diagnostics:

* on a ``distributed`` cluster, the scheduler's progress plugin
  (:class:`distributed.diagnostics.progressbar.ProgressBar`, the one behind
  ``distributed.progress``) streams the numbers of all and remaining tasks;
* on a local scheduler (``dask.config.set(scheduler="synchronous")``), a
  :class:`dask.callbacks.Callback` counts the tasks as they finish (as
  :class:`dask.diagnostics.ProgressBar` does).

A bar is a side channel: a failure to draw it never changes or stops the work.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterator, Sequence
from typing import Any

from annokit.core.progress import progress, progress_enabled

__all__ = ["compute", "persist"]

#: Seconds between the scheduler's reports.
_INTERVAL = 0.1
#: Seconds to wait for the scheduler's last report once the work is done.
_LAST_REPORT = 2.0

logger = logging.getLogger(__name__)


def compute(client: Any, nodes: Sequence[Any], *, desc: str) -> list[Any]:
    """Compute Dask collections or delayed objects: their results, in order.

    Parameters
    ----------
    client : distributed.Client or None
        None computes with dask's configured (local) scheduler.
    nodes : sequence of dask collections or delayed objects
    desc : str
        Label of the progress bar.

    Returns
    -------
    list
        One result per node.
    """
    import dask

    def on_cluster(bar: Any) -> list[Any]:
        futures = client.compute(list(nodes))
        with _cluster_tasks(client, futures, bar) if bar is not None else \
                contextlib.nullcontext():
            return list(client.gather(futures))

    return _run(client, lambda: list(dask.compute(*nodes)), on_cluster, desc)


def persist(client: Any, nodes: Sequence[Any], *, desc: str) -> list[Any]:
    """Persist Dask collections or delayed objects: on the workers, or in this process.

    With a bar drawn on a cluster, returns once the persisted tasks have finished
    (without one, right away, as ``client.persist``). Parameters and result as
    :func:`compute`, the persisted collections in order.
    """
    import dask

    def on_cluster(bar: Any) -> list[Any]:
        out = list(client.persist(list(nodes)))
        if bar is None:
            return out
        from distributed import as_completed, futures_of

        futures = futures_of(out)
        with _cluster_tasks(client, futures, bar):
            for _ in as_completed(futures, loop=client.loop):  # errors: raised where used
                pass
        return out

    def local() -> list[Any]:
        from dask.delayed import Delayed

        if not all(isinstance(n, Delayed) for n in nodes):
            return list(dask.persist(*nodes))
        # delayed values: computed, each under a new key of its own. (dask.persist's
        # delayed results keep the old keys over literal values; a graph built on them
        # later lost those keys in some runs: "Missing dependency finish_part-...".)
        return [dask.delayed(v, pure=False, traverse=False) for v in dask.compute(*nodes)]

    return _run(client, local, on_cluster, desc)


def _run(client: Any, local: Any, on_cluster: Any, desc: str) -> list[Any]:
    """``local()`` or ``on_cluster(bar)``, with the finished tasks counted into a bar when shown
    (``bar`` is None on a cluster without one)."""
    if not progress_enabled():
        return local() if client is None else on_cluster(None)
    with progress(desc=desc, unit="task") as bar:
        if client is None:
            with _local_tasks(bar):
                return local()
        return on_cluster(bar)


def _local_tasks(bar: Any) -> Any:
    """A :class:`dask.callbacks.Callback` counting a local-scheduler run's tasks into ``bar``."""
    from dask.callbacks import Callback

    class LocalTasks(Callback):
        def _start_state(self, dsk: Any, state: dict[str, Any]) -> None:
            n = sum(len(state[k]) for k in ("ready", "waiting", "running", "finished"))
            bar.total = (bar.total or 0) + n
            bar.refresh()

        def _posttask(self, key: Any, result: Any, dsk: Any, state: Any, worker_id: Any) -> None:
            bar.update(1)

    return LocalTasks()


@contextlib.contextmanager
def _cluster_tasks(client: Any, futures: Sequence[Any], bar: Any) -> Iterator[None]:
    """Feed ``bar`` from the scheduler's progress plugin while the block runs."""
    listener = None
    try:
        from distributed.diagnostics.progressbar import ProgressBar

        class SchedulerTasks(ProgressBar):
            def _draw_bar(self, remaining: int, all: int, **kwargs: Any) -> None:  # noqa: A002
                bar.total = all
                bar.update(all - remaining - bar.n)

        reporter = SchedulerTasks(list(futures), scheduler=client.scheduler.address,
                                  interval=_INTERVAL)
        listener = asyncio.run_coroutine_threadsafe(reporter.listen(),
                                                    client.loop.asyncio_loop)
    except Exception as exc:  # a bar is a side channel: never fail the work for it
        logger.debug("no Dask progress: %s", exc)
    try:
        yield
    finally:
        if listener is not None:
            try:
                listener.result(timeout=_LAST_REPORT)
            except Exception as exc:  # timed out, or the comm closed: drop the listener
                logger.debug("Dask progress stopped: %s", exc)
                listener.cancel()
            # the scheduler's side of the feed ends at its next write to the closed comm,
            # an interval later; a cluster closed before that logs the cancelled feed as
            # an error on stderr (distributed.Scheduler.feed)
            time.sleep(3 * _INTERVAL)
