"""The per-item tables of an evaluation (``EvaluationResult.per_item``), both engines: each
per-item metric's value on every item, the registry's own row functions
(:func:`annokit.metrics.kernels.item_values`, the order-aware and multi-label states'
``item_values``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.soft_labels import Majority
from annokit.metrics import kernels
from annokit.metrics.multilabel_records import MultilabelRecords
from annokit.metrics.records import AlignedRecords
from annokit.metrics.registry import REGISTRY
from annokit.metrics.states_ext import RowMeanState

__all__ = ["multilabel_item_frame", "per_item_frame"]


def per_item_frame(rec: AlignedRecords, maj: Majority, names: Sequence[str],
                    options: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The per-item values of ``names`` (``EvaluationResult.per_item``), both engines."""
    cols = [name for name in names if REGISTRY[name].per_item is not None]
    values = kernels.item_values(rec.probs, rec.human, maj.labels,
                              tuple(REGISTRY[name].per_item for name in cols))
    frame = pd.DataFrame({"item": rec.item_ids,
                          "majority": np.asarray(rec.labels.names, dtype=object)[maj.labels],
                          "is_tied": maj.is_tied})
    for j, name in enumerate(cols):
        frame[name] = values[:, j]
    for name in names:  # the order-aware means: one value per item too
        spec = REGISTRY[name]
        state = spec.state(**options[name]) if spec.per_item is None else None
        if isinstance(state, RowMeanState):
            frame[name] = state.item_values(rec.probs, rec.human, maj.labels)
    return frame


def multilabel_item_frame(rec: MultilabelRecords, names: Sequence[str],
                          options: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """Per item: responses, tied labels, and each per-label mean metric averaged over labels
    (``EvaluationResult.per_item`` of multi-label records, both engines)."""
    frame = pd.DataFrame({"item": rec.item_ids, "n_responses": rec.n_responses,
                          "n_tied_labels": rec.is_tied.sum(axis=1)})
    for name in names:
        state = REGISTRY[name].state(**options[name])
        if isinstance(state, RowMeanState):
            values = state.item_values(rec.probs, rec.soft, rec.hard)
            frame[name] = values.mean(axis=1) if values.ndim == 2 else values
    return frame
