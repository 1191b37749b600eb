"""Each metric's constructor options in an evaluation, the same for both engines: the bins, the
order-aware metrics' category values and the binary metrics' positive class
(:func:`resolve_options`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from annokit.errors import InvalidValueError
from annokit.metrics.registry import REGISTRY

__all__ = ["resolve_options"]


def resolve_options(names: Sequence[str], labels: Any, scale: str, *, n_bins: int,
                    metric_options: Mapping[str, Any] | None = None
                    ) -> tuple[dict[str, dict[str, Any]], str | None]:
    """Each metric's constructor options, and the positive label of the binary metrics.

    :func:`evaluate` and the Dask engine (:func:`annokit.scale.evaluate.evaluate_dask`)
    give their states the same options: ``n_bins``, the order-aware metrics'
    ``values`` (the labels' numbers on interval and ratio scales), then
    ``metric_options``, each to the metrics that accept it; ``positive`` (default the
    second label) is resolved to a label index.

    Parameters
    ----------
    names : sequence of str
        Registry metrics.
    labels : LabelSet
    scale : str
        The checked scale (:func:`annokit.core.scales.check_scale`).
    n_bins : int
    metric_options : mapping, optional

    Returns
    -------
    options : dict of str to dict
        ``{name: {option: value}}``.
    positive_label : str or None
        None when no evaluated metric has a ``positive`` option.

    Raises
    ------
    InvalidValueError
        ``positive`` is neither a label name nor a label index.

    Examples
    --------
    >>> from annokit.core.labels import LabelSet
    >>> resolve_options(["ece_binary"], LabelSet(["no", "yes"]), "nominal", n_bins=5,
    ...                 metric_options={"positive": "no"})
    ({'ece_binary': {'n_bins': 5, 'positive': 0}}, 'no')
    """
    given = {"n_bins": n_bins, **_default_options(labels, scale), **(metric_options or {})}
    positive_label = None
    if any("positive" in REGISTRY[name].options for name in names):
        given["positive"] = _positive_index(given.get("positive", 1), labels.names)
        positive_label = labels.names[given["positive"]]
    options = {name: {k: v for k, v in given.items() if k in REGISTRY[name].options}
               for name in names}
    return options, positive_label


def _default_options(labels: Any, scale: str) -> dict[str, Any]:
    """Category values of the order-aware metrics: the labels' numbers on interval/ratio scales."""
    values = getattr(labels, "values", None)
    if scale in ("interval", "ratio") and values is not None:
        return {"values": tuple(float(v) for v in values)}
    return {}


def _positive_index(positive: Any, names: Sequence[str]) -> int:
    """The positive class of the binary metrics: an index (0 or 1) or a label name."""
    if isinstance(positive, (int, np.integer)) and not isinstance(positive, bool) \
            and 0 <= positive < len(names):
        return int(positive)
    if isinstance(positive, str) and positive in names:
        return list(names).index(positive)
    raise InvalidValueError(f"positive must be one of the labels {list(names)} or its index; "
                            f"got {positive!r}")
