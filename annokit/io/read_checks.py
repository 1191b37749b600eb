"""Checks of what :func:`annokit.io.read_votes` read, run once per read: label variants that
look like spellings of one label (:func:`annokit.core.labels.label_variants_message`), the size
of the count matrix (:func:`check_count_size`) and what was done with repeated votes
(:func:`duplicates_note`)."""

from __future__ import annotations

import contextvars
import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.labels import label_variants_message
from annokit.core.soft_votes import is_soft_only
from annokit.core.votes import DuplicatePolicy, Votes
from annokit.errors import DegenerateInputWarning, InvalidValueError, Option

__all__ = ["MAX_COUNT_BYTES", "check_count_size", "checked_labels", "duplicates_note"]

#: Largest dense item x label count matrix (bytes of int64) a read accepts; see ``read_votes``.
MAX_COUNT_BYTES = 2 * 1024**3

_DEPTH = contextvars.ContextVar("annokit_read_depth", default=0)


def checked_labels(read: Callable[..., Votes]) -> Callable[..., Votes]:
    """``read`` (:func:`read_votes`), warning about label variants in the votes it returns
    (:func:`annokit.core.labels.label_variants_message`) when the labels were read from the data
    rather than given; only the outermost call checks (the reader calls itself)."""

    @functools.wraps(read)
    def checked(*args: Any, **kwargs: Any) -> Votes:
        token = _DEPTH.set(_DEPTH.get() + 1)
        try:
            votes = read(*args, **kwargs)
        finally:
            _DEPTH.reset(token)
        if (_DEPTH.get() == 0 and kwargs.get("labels") is None and not votes.labels.numeric
                and not is_soft_only(votes)):
            counts = np.bincount(votes.label_index, minlength=votes.n_labels).tolist()
            message = label_variants_message(votes.labels.names, counts, votes.source)
            if message is not None:
                warnings.warn(message, DegenerateInputWarning, stacklevel=2)
        return votes

    return checked


def duplicates_note(votes: Votes, duplicates: DuplicatePolicy) -> str:
    """What was done with repeated (item, annotator) votes, for ``read_info`` ("" when the
    default refused none); warns when votes were left out, and sets
    ``votes.duplicates_info`` (``policy``, ``repeated_pairs``, ``votes_removed``; None for
    the default, which refuses them).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": ["q", "q", "r"], "annotator": ["a", "a", "a"],
    ...                    "label": ["x", "y", "x"]})
    >>> duplicates_note(Votes.from_long(df, duplicates="keep"), "keep")
    '; repeated (item, annotator) pairs: 1, all votes kept (--duplicates keep: multi-label)'
    """
    votes.duplicates_info = None
    if duplicates == "error":
        return ""
    if votes.annotator_index is None:
        votes.duplicates_info = {"policy": duplicates, "repeated_pairs": None, "votes_removed": 0}
        return f"; --duplicates {duplicates}: annotators unknown, no (item, annotator) pairs"
    if duplicates == "keep":
        n_pairs = 0
        if votes.has_duplicate_pairs():
            key = pd.Series(votes.pair_keys())
            n_pairs = int(key[key.duplicated(keep=False)].nunique())
        votes.duplicates_info = {"policy": "keep", "repeated_pairs": n_pairs, "votes_removed": 0}
        return (f"; repeated (item, annotator) pairs: {n_pairs}, all votes kept "
                "(--duplicates keep: multi-label)")
    n_pairs = int(getattr(votes, "n_duplicate_pairs", 0))
    removed = int(getattr(votes, "n_duplicates_removed", 0))
    votes.duplicates_info = {"policy": duplicates, "repeated_pairs": n_pairs,
                             "votes_removed": removed}
    if removed:
        warnings.warn(f"{votes.source}: {n_pairs} repeated (item, annotator) pair(s); the "
                      f"{duplicates} vote of each kept, {removed} vote(s) left out "
                      f"(--duplicates {duplicates})", DegenerateInputWarning, stacklevel=3)
    return (f"; repeated (item, annotator) pairs: {n_pairs}, the {duplicates} vote of each kept, "
            f"{removed} vote(s) left out (--duplicates {duplicates})")


def check_count_size(n_items: int, n_labels: int, name: str, *, limit: int = MAX_COUNT_BYTES) -> None:
    """Refuse an item x label count matrix larger than ``limit`` bytes, with the estimate.

    Raises
    ------
    InvalidValueError
        ``n_items * n_labels * 8`` over ``limit``.
    """
    need = int(n_items) * int(n_labels) * 8
    if need > limit:
        label, allow = Option("columns", role="label"), Option("max_count_bytes")
        raise InvalidValueError(
            f"{name}: {n_items} items x {n_labels} distinct labels need a {need / 1024**3:.1f} GiB "
            f"count matrix (limit {limit / 1024**3:.1f} GiB); check the label column (is it a "
            f"free-text or id column? {label} names the right one; {allow} allows more)",
            options=[label, allow])
