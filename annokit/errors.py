"""Exceptions and warnings raised by annokit.

Every error a user can cause is an :class:`AnnokitError`. Problems with what
the user passed are an :class:`InputError` (also a :class:`ValueError`, so that
``except ValueError`` keeps working), raised as the most specific of:

=========================  ====================================================
:class:`DataFormatError`   a file cannot be read as its format (names the file,
                           line or row, and column)
:class:`SchemaError`       data has the wrong shape, columns, dtypes or ids
:class:`AlignmentError`    predictions and votes do not line up (item ids,
                           label names, label order)
:class:`InvalidValueError` a value is outside its domain: a probability row off
                           the simplex, a negative count, an option out of range
=========================  ====================================================

:class:`VoteSchemaError` is the old name of :class:`InputError`, kept so that
``except VoteSchemaError`` still catches every input problem. The CLI catches
:class:`AnnokitError` once and prints its message on one line.
"""

from __future__ import annotations

__all__ = [
    "AlignmentError",
    "AnnokitError",
    "AnnokitWarning",
    "ConvergenceWarning",
    "DataFormatError",
    "DatasetNotFoundError",
    "DegenerateInputWarning",
    "InputError",
    "InvalidValueError",
    "OptionConflictError",
    "OutputError",
    "SchemaError",
    "VoteSchemaError",
]


class AnnokitError(Exception):
    """Base class for every error annokit raises on purpose."""


class InputError(AnnokitError, ValueError):
    """Something the user passed (a file, an array, an option) cannot be used as it is."""


#: The old name of :class:`InputError` (every input problem), kept for ``except`` clauses.
VoteSchemaError = InputError


class DataFormatError(InputError):
    """A file could not be parsed; the message names the file and line or column."""


class SchemaError(InputError):
    """Data has the wrong shape, columns, dtypes or ids for what was asked."""


class AlignmentError(InputError):
    """Predictions and votes do not line up: item ids, label names or label order."""


class InvalidValueError(InputError):
    """A value is outside its domain: a probability off the simplex, an option out of range."""


class OptionConflictError(InvalidValueError):
    """Options that do not go together, or an option the input does not allow (an engine
    that cannot honour it, a flag the votes' kind does not take): the command line reports it
    as a usage error (exit status 2)."""


class DatasetNotFoundError(AnnokitError, LookupError):
    """A registered dataset is neither cached nor downloadable."""


class AnnokitWarning(UserWarning):
    """Base class for annokit warnings."""


class DegenerateInputWarning(AnnokitWarning):
    """Legal but degenerate input: a single vote on an item, an empty bin, a tie."""


class ConvergenceWarning(AnnokitWarning):
    """An iterative estimator (EM, optimisation) stopped before meeting its tolerance."""


class OutputError(AnnokitError):
    """An output cannot be written: it names an input, its directory is missing or
    read-only, or the disk is full. Nothing is left half-written."""
