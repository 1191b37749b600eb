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

An error that names an option to fix it carries the option's key (an :class:`Option`:
``no_header``, ``duplicates``, a column role of ``columns``) rather than one spelling of it:
``str(error)`` spells it as a Python argument (``no_header=True``), and the command line
renders the same error with its own spelling (``--no-header``) through
:meth:`AnnokitError.render`.

Examples
--------
>>> opt = Option("no_header", True)
>>> err = InvalidValueError(f"votes.csv: {opt} reads long tables", options=[opt])
>>> str(err)
'votes.csv: no_header=True reads long tables'
>>> err.render(lambda o: "--" + o.key.replace("_", "-"))
'votes.csv: --no-header reads long tables'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

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
    "Option",
    "OptionConflictError",
    "OutputError",
    "SchemaError",
    "VoteSchemaError",
]


@dataclass(frozen=True)
class Option:
    """An option a message names: the keyword of the Python function, and what to set it to.

    Placed in an f-string it writes its slot (``{no_header}``), which the error replaces with
    one spelling: :meth:`python` for ``str(error)``, the command line's own for the CLI.

    Parameters
    ----------
    key : str
        The keyword argument: ``"no_header"``, ``"duplicates"``, ``"columns"``, ...
    value : object, optional
        The value to name (``True``, ``"first"``), a tuple of values to choose from, or None to
        name the option alone.
    role : str, optional
        For ``key="columns"``: the column role (``"item"``, ``"label"``, ...).
    aside : bool, default=False
        A reminder of the Python spelling for readers of the command line's message: the
        command line writes it (`` (Python: duplicates='first', 'last' or 'keep')``), while
        ``str(error)``, already in Python terms, leaves it out.
    """

    key: str
    value: Any = None
    role: str | None = None
    aside: bool = False

    @property
    def slot(self) -> str:
        """The placeholder this option writes into a message template."""
        role = f"[{self.role}]" if self.role else ""
        value = "" if self.value is None else f"={self.value}"
        return "{" + f"{self.key}{role}{value}{'?' if self.aside else ''}" + "}"

    def __str__(self) -> str:
        return self.slot

    def __format__(self, spec: str) -> str:
        return self.slot

    def python(self) -> str:
        """The option as a Python argument: ``no_header=True``, ``columns={'item': ...}``,
        ``duplicates='first', 'last' or 'keep'``, ``max_count_bytes=``."""
        if self.role is not None:
            return f"{self.key}={{{self.role!r}: ...}}"
        if self.value is None:
            return f"{self.key}="
        if isinstance(self.value, tuple):
            *first, last = (repr(v) for v in self.value)
            return f"{self.key}=" + (f"{', '.join(first)} or {last}" if first else last)
        return f"{self.key}={self.value!r}"


def _spelled(template: str, options: Sequence[Option], spell: Callable[[Option], str]) -> str:
    for option in options:
        template = template.replace(option.slot, spell(option))
    return template


def _python(option: Option) -> str:
    return "" if option.aside else option.python()


class AnnokitError(Exception):
    """Base class for every error annokit raises on purpose.

    Parameters
    ----------
    message : str
        The message; with ``options``, a template holding each option's slot (an
        :class:`Option` placed in an f-string writes it).
    options : sequence of Option
        The options the message names; ``str(error)`` spells them as Python arguments.
    """

    def __init__(self, message: Any = "", *args: Any, options: Sequence[Option] = ()):
        self.options = tuple(options)
        self.template = str(message)
        super().__init__(_spelled(self.template, self.options, _python) if self.options
                         else message, *args)

    def render(self, spell: Callable[[Option], str]) -> str:
        """The message with each option spelled by ``spell`` (the command line's spelling)."""
        return _spelled(self.template, self.options, spell) if self.options else str(self)

    def retold(self: _E, transform: Callable[[str], str]) -> _E:
        """The same error (same class and options) with ``transform`` applied to its message,
        e.g. a row number turned into a file line."""
        return type(self)(transform(self.template), options=self.options)

    def __reduce__(self) -> Any:  # options survive pickling (errors raised on Dask workers)
        if not self.options:
            return super().__reduce__()
        return (_rebuild, (type(self), self.template, self.options), self.__dict__)


_E = TypeVar("_E", bound=AnnokitError)


def _rebuild(cls: type[AnnokitError], template: str, options: tuple[Option, ...]) -> AnnokitError:
    return cls(template, options=options)


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
