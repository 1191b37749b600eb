"""annokit: datasets with many annotators per item.

Load per-annotator votes, build soft labels, find spammers, evaluate models
against the distribution of human judgements, and decide how many
annotations are enough. Every public name is re-exported lazily (PEP 562):
``import annokit`` imports none of numpy's heavy companions (pandas, pyarrow,
scipy, numba, matplotlib, dask), so the command line starts fast.
"""

from __future__ import annotations

import importlib
from typing import Any

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
    "Votes": "annokit.core.votes", "LabelSet": "annokit.core.votes",
    "CHAOSNLI_NLI_LABELS": "annokit.core.votes",
    "read_votes": "annokit.io", "load_dataset": "annokit.io", "write_votes": "annokit.io",
    "distributions": "annokit.core.soft_labels", "entropy": "annokit.core.soft_labels",
    "majority": "annokit.core.soft_labels", "majority_change": "annokit.core.soft_labels",
    "dataset_stats": "annokit.quality.dataset_stats",
    "subsampling_curve": "annokit.subsample", "recommend_k": "annokit.subsample",
    "split_half": "annokit.subsample", "plan": "annokit.subsample.plan",
    "align": "annokit.metrics.records", "AlignedRecords": "annokit.metrics.records",
    "read_predictions": "annokit.metrics.records",
    "evaluate": "annokit.metrics.engine",
    "EvaluateOptions": "annokit.metrics.workflow", "evaluate_files": "annokit.scale.workflow",
    "filter_annotators": "annokit.quality", "DawidSkene": "annokit.quality", "MACE": "annokit.quality",
    "MajorityVote": "annokit.quality", "GLAD": "annokit.quality", "Wawa": "annokit.quality",
    "ZeroBasedSkill": "annokit.quality", "CrowdLab": "annokit.quality",
    "build_report": "annokit.report", "write_report": "annokit.report",
}

#: Eager names plus every lazy one (tests/test_public_api.py checks they agree).
__all__ = [
    "CHAOSNLI_NLI_LABELS",
    "MACE",
    "AlignedRecords",
    "AlignmentError",
    "AnnokitError",
    "CrowdLab",
    "DataFormatError",
    "DawidSkene",
    "EvaluateOptions",
    "GLAD",
    "InputError",
    "InvalidValueError",
    "LabelSet",
    "MajorityVote",
    "SchemaError",
    "VoteSchemaError",
    "Votes",
    "Wawa",
    "ZeroBasedSkill",
    "__version__",
    "align",
    "build_report",
    "dataset_stats",
    "distributions",
    "entropy",
    "evaluate",
    "evaluate_files",
    "filter_annotators",
    "load_dataset",
    "majority",
    "majority_change",
    "plan",
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
