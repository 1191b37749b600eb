"""Progress bars on stderr for long runs, and the switch that turns them off.

Every long loop in annokit (reading, EM iterations, bootstrap chunks, subsampling
draws, Dask tasks) reports through :func:`progress`::

    with progress(total=n_iter, desc="Dawid-Skene EM", unit="iter") as bar:
        for ...:
            bar.update(1)

A bar appears only when progress is enabled, stderr is a terminal and the work has
run for ``delay`` seconds (2 by default), so short runs, pipes, CI logs and tests
print nothing. It never writes to stdout, so ``--json`` output is untouched.
:func:`set_progress` is the one switch (the CLI's ``--quiet`` calls
``set_progress(False)``); the setting lives in a context variable, so it does not
leak between threads or tasks.

Examples
--------
>>> with progress(total=3, desc="demo") as bar:   # stderr is not a terminal here: no output
...     for _ in range(3):
...         bar.update(1)
"""

from __future__ import annotations

import contextvars
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

__all__ = ["DEFAULT_DELAY", "notice_if_slow", "progress", "progress_enabled", "reset_progress",
           "set_progress"]

#: Seconds of work before a bar first appears (short runs print nothing).
DEFAULT_DELAY = 2.0

# None: automatic (on when stderr is a terminal); True/False: forced
_ENABLED: contextvars.ContextVar[bool | None] = contextvars.ContextVar("annokit_progress",
                                                                       default=None)


def set_progress(enabled: bool | None) -> contextvars.Token:
    """Turn progress bars on (True), off (False) or back to automatic (None).

    Returns the token for ``contextvars.ContextVar.reset``.
    """
    if enabled is not None and not isinstance(enabled, bool):
        raise TypeError(f"set_progress expects True, False or None; got {enabled!r}")
    return _ENABLED.set(enabled)


def reset_progress(token: contextvars.Token) -> None:
    """Undo the :func:`set_progress` call that returned ``token``."""
    _ENABLED.reset(token)


def progress_enabled(stream: TextIO | None = None) -> bool:
    """Whether a bar would be drawn now: forced on, or automatic and ``stream`` is a terminal."""
    setting = _ENABLED.get()
    if setting is not None:
        return setting
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or replaced stream
        return False


class _NullBar:
    """What :func:`progress` yields when bars are off: every call does nothing."""

    n = 0

    def update(self, n: int = 1) -> None:
        pass

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        pass

    def set_description_str(self, desc: str | None = None, refresh: bool = True) -> None:
        pass

    def reset(self, total: int | None = None) -> None:
        pass


@contextmanager
def progress(total: int | None = None, *, desc: str = "", unit: str = "it",
             delay: float | None = None, leave: bool = False) -> Iterator[Any]:
    """A progress bar on stderr (tqdm), or a do-nothing stand-in when bars are off.

    Parameters
    ----------
    total : int, optional
        Steps expected; None for an open-ended count.
    desc, unit : str
        Label and step unit shown on the bar.
    delay : float, optional
        Seconds of work before the bar first appears; default :data:`DEFAULT_DELAY`.
    leave : bool, default=False
        Keep the finished bar on screen.

    Yields
    ------
    an object with ``update(n)``, ``set_postfix_str(s)``, ``set_description_str(s)``.
    """
    if not progress_enabled():
        yield _NullBar()
        return
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm is a dependency; a broken install only loses the bar
        yield _NullBar()
        return
    bar = tqdm(total=total, desc=desc, unit=unit, leave=leave, file=sys.stderr,
               delay=DEFAULT_DELAY if delay is None else delay,
               dynamic_ncols=True)
    try:
        yield bar
    finally:
        bar.close()


@contextmanager
def notice_if_slow(message: str, *, delay: float | None = None) -> Iterator[None]:
    """Write ``message`` (one line) to stderr if the block is still running after ``delay``.

    Under the rules of :func:`progress`: only when progress is enabled (stderr a
    terminal, no ``--quiet``), after ``delay`` seconds (default :data:`DEFAULT_DELAY`),
    never on stdout. For one-off waits with no steps to count, such as compiling the
    metric kernels on a first call.
    """
    if not progress_enabled():
        yield
        return
    stream = sys.stderr

    def say() -> None:
        try:
            stream.write(message + "\n")
            stream.flush()
        except (OSError, ValueError):  # closed stream: the notice is not worth an error
            pass

    timer = threading.Timer(DEFAULT_DELAY if delay is None else delay, say)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
