"""The report's figures as intervals, and the notes that replace them: a figure with the
interval its registry entry names (:func:`as_interval`), a note instead of a binned calibration
figure on a bin too small for it (:func:`bin_interval`), and the degenerate-input warnings of a
step turned into report notes (:func:`noted`)."""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from typing import Any

from annokit.errors import DegenerateInputWarning
from annokit.metrics.registry import REGISTRY
from annokit.report.model import Interval

__all__ = ["MIN_ITEMS_FOR_INTERVAL", "MIN_ITEMS_PER_CONFIDENCE_BIN", "as_interval", "bin_interval",
           "noted"]

#: An agreement bin with fewer items than this per confidence bin (``n < 20 n_bins``) shows a
#: note instead of its binned calibration figures: their plug-in is mostly bias there
#: (docs/guides/trust.md).
MIN_ITEMS_PER_CONFIDENCE_BIN = 20
#: An agreement bin with fewer items than this shows its figures without an interval, and says
#: why: the bootstrap standard error of a mean of n values is their standard deviation over
#: sqrt(n), itself noisy, and estimate -/+ 1.96 of it covers a normal mean with probability
#: P(|t_(n-1)| < 1.96 sqrt((n-1)/n)): 0.85 at 5 items, 0.90 at 10, 0.93 at 20.
MIN_ITEMS_FOR_INTERVAL = 20


@contextmanager
def noted(notes: list[str], prefix: str = ""):
    """Turn the DegenerateInputWarnings raised inside into report notes (each message once:
    one already noted without ``prefix`` is not repeated with it, and a message that starts
    with ``prefix`` does not get it twice)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DegenerateInputWarning)
        yield
    for w in caught:
        if issubclass(w.category, DegenerateInputWarning):
            text = str(w.message)
            msg = text if text.startswith(prefix) else f"{prefix}{text}"
            if msg not in notes and text not in notes:
                notes.append(msg)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def bin_interval(name: str, n_items: int, n_bins: int, estimate: float, ci: Any) -> Interval:
    """An agreement bin's figure, or a note for a binned metric on too few items; on fewer than
    :data:`MIN_ITEMS_FOR_INTERVAL` items the figure without its interval, with a note."""
    if "n_bins" in REGISTRY[name].options and 0 < n_items < MIN_ITEMS_PER_CONFIDENCE_BIN * n_bins:
        return Interval(estimate=None, method=None if ci is None else ci.method,
                        note=f"not shown: {n_items} items in {n_bins} confidence bins, fewer "
                             f"than {MIN_ITEMS_PER_CONFIDENCE_BIN} per bin; the plug-in "
                             "estimate would be mostly its upward bias")
    if ci is not None and 0 < n_items < MIN_ITEMS_FOR_INTERVAL and ci.method != "none":
        return Interval(estimate=estimate, method=ci.method,
                        note=f"no interval: {n_items} items, fewer than {MIN_ITEMS_FOR_INTERVAL}; "
                             "a bootstrap interval on so few items is too narrow")
    return as_interval(estimate, ci)


def as_interval(estimate: float, ci: Any = None) -> Interval:
    if ci is None:
        return Interval(estimate=estimate)
    return Interval(estimate=estimate, low=ci.low, high=ci.high, method=ci.method,
                    note=ci.reason or None)
