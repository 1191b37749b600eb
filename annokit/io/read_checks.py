"""Checks of what :func:`annokit.io.read_votes` read, run once per read: label variants that
look like spellings of one label (:func:`annokit.core.labels.label_variants_message`)."""

from __future__ import annotations

import contextvars
import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from annokit.core.labels import label_variants_message
from annokit.core.soft_votes import is_soft_only
from annokit.core.votes import Votes
from annokit.errors import DegenerateInputWarning

__all__ = ["checked_labels"]

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


