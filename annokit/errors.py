"""Exceptions and warnings raised by annokit.

Every error a user can cause is an :class:`AnnokitError`. Problems with the
shape or content of input data are :class:`VoteSchemaError`, which is also a
:class:`ValueError` so that ``except ValueError`` keeps working. The CLI
catches :class:`AnnokitError` once and prints its message on one line.
"""

from __future__ import annotations

__all__ = [
    "AnnokitError",
    "AnnokitWarning",
    "ConvergenceWarning",
    "DataFormatError",
    "DatasetNotFoundError",
    "DegenerateInputWarning",
    "VoteSchemaError",
]


class AnnokitError(Exception):
    """Base class for every error annokit raises on purpose."""


class VoteSchemaError(AnnokitError, ValueError):
    """Input data does not have the expected shape, columns, labels or values."""


class DataFormatError(VoteSchemaError):
    """A file could not be parsed; the message names the file and line or column."""


class DatasetNotFoundError(AnnokitError, LookupError):
    """A registered dataset is neither cached nor downloadable."""


class AnnokitWarning(UserWarning):
    """Base class for annokit warnings."""


class DegenerateInputWarning(AnnokitWarning):
    """Legal but degenerate input: a single vote on an item, an empty bin, a tie."""


class ConvergenceWarning(AnnokitWarning):
    """An iterative estimator (EM, optimisation) stopped before meeting its tolerance."""
