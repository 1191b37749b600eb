"""Temperatures on the Dask engine (:func:`annokit.scale.evaluate.evaluate_dask`).

A fixed temperature, or one fitted on dev prediction files, is applied to each partition of
prediction rows with :func:`annokit.metrics.temperature.scaled_probabilities`, the formula of
the in-memory :func:`~annokit.metrics.temperature.apply_temperature`. A fit reads the dev files
in memory (one row per item), gathers the votes of the dev items from the partitions (their
counts, in the votes' first-seen order) and joins them with
:func:`annokit.metrics.workflow.dev_records`, as memory does: the objective is minimised on the
same rows in the same order, so the temperature is the in-memory one.

The workers scale the probabilities each prediction partition holds (the Dask reader keeps
probabilities, not logits): ``log(softmax(z)) = z - logsumexp(z)`` differs from the logits ``z``
by a constant per row, which the softmax removes, so the result is memory's up to rounding
(tested to 1e-12 with logit files), except where a probability read from logits has underflowed
to 0 (logit gaps over about 745), which stays 0 at every temperature.

The oracle temperature (fitted on the evaluated items themselves) is not here: its search reads
every evaluated item at each step (:func:`annokit.scale.evaluate.dask_refusal`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from annokit.core.votes import Votes
from annokit.errors import AlignmentError
from annokit.metrics.temperature import fit_info, fit_temperature, scaled_probabilities
from annokit.metrics.workflow import (
    EvaluateOptions,
    dev_records,
    objective_of,
    read_model_predictions,
)
from annokit.scale.eval_partition import counts_part
from annokit.scale.progress import compute

__all__ = ["dev_part", "dev_votes", "temper_part", "temperature_for"]


def temperature_for(votes: Any, options: EvaluateOptions, cl: Any
                    ) -> tuple[float | None, dict[str, Any] | None, np.ndarray | None]:
    """The temperature to apply, what :func:`annokit.metrics.temperature.temperature_scale`
    reports about it (the overlap with the evaluated items still to count), and the ids of
    the items it was fitted on (None unless fitted).

    A fit reads the dev files in memory, gathers the votes of their items from the
    partitions (counts per item, in the votes' first-seen order) and joins them as
    :func:`annokit.metrics.workflow.dev_records` does in memory; the same objective is
    minimised on the same rows, so the temperature is the in-memory one.
    """
    mode = options.temperature_mode
    if mode is None:
        return None, None, None
    if mode == "fixed":
        t = float(options.temperature or 0)  # set: the mode is "fixed"
        return t, {"value": t, "mode": "fixed"}, None
    dev = read_model_predictions(options.fit_temperature_on, options)
    fit_on = dev_records(dev_votes(votes, np.asarray(dev.item_ids, dtype=object), cl),
                         options, dev)
    objective = objective_of(options)
    t = fit_temperature(fit_on, objective=objective, n_bins=options.n_bins)
    info = fit_info(t, oracle=False, objective=objective, n_fit_items=fit_on.n_items,
                    n_overlap_items=0)
    return t, info, np.asarray(fit_on.item_ids, dtype=object)


def dev_votes(votes: Any, ids: np.ndarray, cl: Any) -> Any:
    """In-memory votes of the items named by ``ids`` (as counts, in first-seen order)."""
    from dask import delayed

    k = len(votes.labels)
    wanted = delayed(pd.Index(ids.astype(str)).unique(), pure=True)
    parts = compute(cl, [delayed(dev_part)(f, i, wanted, k) for f, i in
                          zip(votes.frame.to_delayed(), votes.items.to_delayed(), strict=True)],
                    desc="dev votes")
    rows = pd.concat(parts, ignore_index=True).sort_values("_first", kind="stable")
    if not len(rows):
        raise AlignmentError(f"--fit-temperature-on: none of the {ids.size} dev prediction "
                             f"rows names an item of the votes ({votes.source}; e.g. dev ids "
                             f"{[str(v) for v in ids[:3]]}); give the dev predictions of these "
                             "votes' items")
    return Votes.from_counts(rows[[f"c{j}" for j in range(k)]].to_numpy(dtype=np.int64),
                             labels=votes.labels, item_ids=rows["item_id"].to_numpy(dtype=object),
                             source=votes.source)


def dev_part(frame: Any, items: Any, wanted: Any, k: int) -> Any:
    """Counts of the wanted items of one votes partition (the rows of
    :func:`annokit.scale.eval_partition.counts_part`)."""
    items = items[items["item_id"].astype(str).isin(wanted)]
    frame = frame[frame["item"].isin(items["item"])]
    return counts_part(frame, items, k)


def temper_part(df: Any, temperature: float, width: int) -> Any:
    """One partition of prediction rows with ``softmax(log(p) / T)`` in place of ``p``."""
    if not len(df):
        return df
    cols = [f"p{j}" for j in range(width)]
    probs, _ = scaled_probabilities(df[cols].to_numpy(dtype=np.float64), temperature)
    out = df.copy()
    out[cols] = probs
    return out
