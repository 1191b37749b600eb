"""What a reader of :mod:`annokit.io` found beside the votes: one :class:`ReadInfo` per read,
carried by :class:`annokit.core.votes.Votes` as ``read_details``.

The per-reader attributes of earlier releases (``hf_info``, ``labelstudio_info``,
``mturk_info``, ``toloka_info``, ``prodigy_info``, ``argilla_info``, ``lewidi_info``) are
deprecated read-only aliases of ``read_details.details`` (:func:`reader_details`), kept for one
release.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ReadInfo", "reader_details"]


@dataclass(frozen=True)
class ReadInfo:
    """What a reader of :mod:`annokit.io` found beside the votes, set once by the reader.

    Attributes
    ----------
    format : str
        The reader: ``"mturk"``, ``"toloka"``, ``"labelstudio"``, ``"prodigy"``,
        ``"argilla"``, ``"lewidi"`` or ``"hf"`` (Hugging Face responses).
    details : mapping
        The reader's own account (its docstring lists the keys): the columns or fields used,
        what was excluded and why, the checks of a LeWiDi split, ...

    Examples
    --------
    >>> info = ReadInfo("mturk", {"excluded": {"Rejected": 1}})
    >>> info.format, info.details["excluded"]
    ('mturk', {'Rejected': 1})
    """

    format: str
    details: Mapping[str, Any] = field(default_factory=dict)


def reader_details(fmt: str) -> property:
    """A read-only alias of ``read_details.details`` for votes read as ``fmt`` (None for
    others), under the attribute name the reader used before :class:`ReadInfo`."""

    def details(self: Any) -> Any:
        info = self.read_details
        return info.details if info is not None and info.format == fmt else None

    return property(details, doc=f"Deprecated: ``read_details.details`` of votes read as "
                                 f"{fmt!r} (None otherwise); kept as a read-only alias for one "
                                 "release.")
