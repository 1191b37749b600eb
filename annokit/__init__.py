"""annokit: datasets with many annotators per item.

Load per-annotator votes, build soft labels, find spammers, evaluate models
against the distribution of human judgements, and decide how many
annotations are enough. The vote model is imported eagerly; everything else
is re-exported lazily (PEP 562) so that the command line starts fast.
"""

from __future__ import annotations

import importlib
from typing import Any

from annokit.core.votes import CHAOSNLI_NLI_LABELS, LabelSet, Votes
from annokit.errors import (
    AlignmentError,
    AnnokitError,
    DataFormatError,
    InputError,
    InvalidValueError,
    SchemaError,
    VoteSchemaError,
)

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    "read_votes": "annokit.io", "load_dataset": "annokit.io", "write_votes": "annokit.io",
    "distributions": "annokit.core.soft_labels", "entropy": "annokit.core.soft_labels",
    "majority": "annokit.core.soft_labels", "majority_change": "annokit.core.soft_labels",
    "dataset_stats": "annokit.quality.dataset_stats",
    "subsampling_curve": "annokit.subsample", "recommend_k": "annokit.subsample",
    "split_half": "annokit.subsample",
    "align": "annokit.metrics.records", "AlignedRecords": "annokit.metrics.records",
    "read_predictions": "annokit.metrics.records",
    "evaluate": "annokit.metrics.engine",
    "filter_annotators": "annokit.quality", "DawidSkene": "annokit.quality", "MACE": "annokit.quality",
    "MajorityVote": "annokit.quality",
    "build_report": "annokit.report", "write_report": "annokit.report",
}

#: Eager names plus every lazy one (tests/test_public_api.py checks they agree).
__all__ = [
    "CHAOSNLI_NLI_LABELS",
    "MACE",
    "AlignedRecords",
    "AlignmentError",
    "AnnokitError",
    "DataFormatError",
    "DawidSkene",
    "InputError",
    "InvalidValueError",
    "LabelSet",
    "MajorityVote",
    "SchemaError",
    "VoteSchemaError",
    "Votes",
    "__version__",
    "align",
    "build_report",
    "dataset_stats",
    "distributions",
    "entropy",
    "evaluate",
    "filter_annotators",
    "load_dataset",
    "majority",
    "majority_change",
    "read_predictions",
    "read_votes",
    "recommend_k",
    "split_half",
    "subsampling_curve",
    "write_report",
    "write_votes",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'annokit' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
