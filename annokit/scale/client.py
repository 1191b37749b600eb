"""The Dask client the engine runs on, and the error when Dask is not installed.

The engine is optional (``pip install 'annokit[dask]'``): nothing outside
:mod:`annokit.scale` imports Dask, and :func:`require_dask` turns a missing install into
one clear line.
"""

from __future__ import annotations

import os
from typing import Any

from annokit.errors import AnnokitError

__all__ = ["LOCAL_SCHEDULERS", "engine_client", "get_client", "require_dask", "shuffle_method",
           "shutdown"]

#: Clients this module started, with their LocalCluster or None (closed by :func:`shutdown`;
#: a client the caller made, or found current, is the caller's to close).
_STARTED: dict[int, Any] = {}

#: ``dask.config`` scheduler names that mean "compute in this process, no cluster".
LOCAL_SCHEDULERS = ("sync", "synchronous", "single-threaded", "threads", "threading",
                    "processes", "multiprocessing")

_INSTALL = "pip install 'annokit[dask]'"


def require_dask() -> None:
    """Raise :class:`~annokit.errors.AnnokitError` naming the install command when Dask
    (with ``distributed`` and ``dask.dataframe``) cannot be imported."""
    try:
        import dask.dataframe  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as exc:
        raise AnnokitError(f"the Dask engine needs the optional Dask packages ({exc.name} is "
                           f"missing): {_INSTALL}") from None


def _machine() -> tuple[int, int]:
    """(cores, bytes of memory) of this machine."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        memory = 4 * 1024**3
    return max(int(cores or 1), 1), int(memory)


def get_client(client: Any = None, *, scheduler: str | None = None) -> Any:
    """The ``distributed.Client`` the engine runs on.

    Parameters
    ----------
    client : distributed.Client, optional
        Used as is.
    scheduler : str, optional
        Address of a running scheduler (``tcp://host:8786``) to connect to.

    Returns
    -------
    distributed.Client
        ``client``; else a client on ``scheduler``; else the current client
        (``distributed.get_client()``); else a new ``LocalCluster`` sized to the machine
        (one single-threaded worker process per core, the memory shared among them).

    Raises
    ------
    AnnokitError
        Dask is not installed, or the scheduler cannot be reached.
    """
    require_dask()
    import distributed

    if client is not None:
        return client
    if scheduler is not None:
        try:
            remote = distributed.Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as exc:
            raise AnnokitError(f"cannot connect to the Dask scheduler at {scheduler}: "
                               f"{' '.join(str(exc).split())}") from None
        _STARTED[id(remote)] = None
        return remote
    try:
        return distributed.get_client()
    except ValueError:  # no current client
        pass
    import logging

    cores, memory = _machine()
    # no dashboard; the scheduler's own HTTP server (health, metrics) on a free local port,
    # not on 8787 (which another cluster may hold: "Port 8787 is already in use")
    cluster = distributed.LocalCluster(n_workers=cores, threads_per_worker=1, processes=True,
                                       memory_limit=memory // cores, dashboard_address=None,
                                       scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                                       silence_logs=logging.CRITICAL)
    client = distributed.Client(cluster)
    _STARTED[id(client)] = cluster
    return client


def shutdown(client: Any) -> None:
    """Close ``client`` and its LocalCluster if :func:`get_client` started them; a client
    passed in or found current (``distributed.get_client()``) is left open for its owner."""
    if client is None or id(client) not in _STARTED:
        return
    cluster = _STARTED.pop(id(client))
    client.close()
    if cluster is not None:
        cluster.close()


def engine_client(client: Any = None, *, scheduler: str | None = None) -> Any:
    """The client to run on, or None to compute in this process: ``client=False``, or a local
    scheduler set with ``dask.config.set(scheduler="synchronous")`` (tests, doctests)."""
    require_dask()
    import dask

    if client is False:
        return None
    if client is None and scheduler is None and \
            dask.config.get("scheduler", None) in LOCAL_SCHEDULERS:
        return None
    return get_client(client, scheduler=scheduler)


def shuffle_method(client: Any) -> str:
    """``"p2p"`` on a cluster (memory bounded, spills to disk), ``"tasks"`` in-process."""
    return "tasks" if client is None else "p2p"
