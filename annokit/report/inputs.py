"""What a report is built from: models' predictions aligned with the votes, and the subsampling curve.

:func:`load_models` reads several models' prediction files, joins them to the
votes by item id and label name (:func:`annokit.metrics.records.align`) and
adds temperature-scaled copies (fixed or fitted on other files); it is what
``annokit report --model ... --temperature ... --fit-temperature-on ...``
runs. :func:`subsampling_rows` computes the "how many annotations are enough"
curve the report shows; :func:`load_annotator_predictions` reads the predictions
per (item, annotator) of ``--annotator-predictions``. None computes a metric.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import numpy as np

from annokit.core.votes import Votes
from annokit.errors import DegenerateInputWarning, InputError, InvalidValueError
from annokit.subsample.defaults import EPSILON, REPS, TARGET

__all__ = ["LoadedModels", "ModelPredictions", "SubsamplingRows", "load_annotator_predictions",
           "load_models", "plan_section", "subsampling_rows"]

PathLike = Union[str, "os.PathLike[str]"]


@dataclass
class ModelPredictions:
    """One model's predicted distributions, aligned with the votes' items and labels.

    Parameters
    ----------
    name : str
        Display name (the user's ``--model NAME=...``).
    probs : ndarray of shape (n_items, n_labels)
        Row ``i`` is the prediction for ``votes.item_ids[i]``, columns in
        ``votes.labels`` order.
    sources : sequence of str
        File names the predictions came from (directories are not reported).
    temperature : float, optional
        Temperature already applied to ``probs``, if any.
    temperature_note : str, optional
        How the temperature was chosen (fixed, fitted on which file, ...).
    """

    name: str
    probs: np.ndarray
    sources: Sequence[str] = field(default_factory=tuple)
    temperature: float | None = None
    temperature_note: str | None = None


@dataclass
class LoadedModels:
    """The result of :func:`load_models`.

    Attributes
    ----------
    votes : Votes
        The votes, restricted to the items every model predicts when
        ``on_missing="drop"`` left some out.
    models : list of ModelPredictions
        The models in the order given, then the fixed-temperature copies, then
        the fitted ones.
    notes : list of str
        What a reader of the report should know (dropped items, ignored
        prediction rows, where a temperature was fitted).
    """

    votes: Votes
    models: list[ModelPredictions]
    notes: list[str]


def _as_paths(value: PathLike | Sequence[PathLike]) -> list[Path]:
    if isinstance(value, (str, os.PathLike)):
        return [Path(value)]
    return [Path(p) for p in value]


def load_models(votes: Votes, models: Mapping[str, PathLike | Sequence[PathLike]], *,
                pred_labels: Sequence[str] | str | None = None, id_field: str | None = None,
                on_missing: str = "error",
                temperatures: Sequence[tuple[str, float]] = (),
                fit_temperature_on: Sequence[tuple[str, PathLike | Sequence[PathLike]]] = (),
                progress: Callable[[str], None] | None = None) -> LoadedModels:
    """Read and align several models' predictions; add temperature-scaled copies.

    Parameters
    ----------
    votes : Votes
    models : mapping of str to path or sequence of paths
        Model name -> its prediction file(s); several files (dev and test
        halves) are concatenated (:func:`annokit.io.predictions.read_predictions`).
    pred_labels : sequence of str or str, optional
        Class of each prediction column, by label name or alias (as for
        :func:`annokit.metrics.records.align`).
    id_field : str, optional
        Item id field of the prediction files.
    on_missing : {"error", "drop"}, default "error"
        Vote items without a prediction from some model: raise, or leave them
        out of every model (warned and noted).
    temperatures : sequence of (str, float)
        ``(name, T)``: add model ``"name T=T"``, model ``name`` scaled with T.
    fit_temperature_on : sequence of (str, path or paths)
        ``(name, files)``: add model ``"name TS"``, model ``name`` scaled with a
        temperature fitted (NLL of the majority) on the items of ``files`` that
        have votes (:func:`annokit.metrics.temperature.temperature_scale`). The
        files are joined to all of ``votes``, also to items that
        ``on_missing="drop"`` leaves out of the evaluation.
    progress : callable, optional
        Called with a short stage name after each model is read.

    Returns
    -------
    LoadedModels

    Raises
    ------
    InputError
        No model, a temperature for an unknown model, or any reading and
        alignment error (missing predictions with ``on_missing="error"``, label
        mismatch, ...).
    """
    from annokit.metrics.records import read_predictions

    step = progress or (lambda _name: None)
    _check_model_names(models, temperatures, fit_temperature_on)
    notes: list[str] = []
    kind = getattr(votes, "input_kind", None)
    if kind is not None:  # one sentence: the votes were published already counted
        notes.append(f"The votes came as {kind} (annotator ids unknown): "
                     f"{getattr(votes, 'read_info', None) or votes.source}.")
    row_ids = bool(getattr(votes, "row_ids", False))  # array rows meet array rows
    preds = {}
    for name, value in models.items():
        paths = _as_paths(value)
        preds[name] = (read_predictions(paths, id_field=id_field, row_ids=row_ids),
                       [p.name for p in paths])
        step(f"read {name}")
    all_votes = votes  # dev files for a fitted temperature are joined to every vote item
    if on_missing == "drop":
        votes = _common_items(votes, [p for p, _ in preds.values()], notes)
    records, out = _aligned(votes, preds, pred_labels, notes)
    out += _fixed_temperatures(records, temperatures, {m.name: m.sources for m in out})
    out += _fitted_temperatures(records, all_votes, fit_temperature_on, id_field=id_field,
                                pred_labels=pred_labels, notes=notes)
    return LoadedModels(votes=votes, models=out, notes=notes)


def _check_model_names(models: Mapping[str, Any], temperatures: Sequence[tuple[str, Any]],
                       fit_temperature_on: Sequence[tuple[str, Any]]) -> None:
    """At least one model, and temperatures only for models given."""
    names = [str(n) for n in models]
    if not names:
        raise InputError("a report needs at least one model")
    for what, pairs in (("temperatures", temperatures), ("fit_temperature_on", fit_temperature_on)):
        unknown = [n for n, _ in pairs if n not in models]
        if unknown:
            raise InputError(f"{what} names model(s) {unknown} that are not among the models "
                             f"{names}")


def _common_items(votes: Votes, predictions: Sequence[Any], notes: list[str]) -> Votes:
    """The votes of the items every model predicts; the others are warned about and noted."""
    keep = np.ones(votes.n_items, dtype=bool)
    for p in predictions:
        keep &= np.isin(votes.item_ids, np.asarray(p.item_ids, dtype=object))
    if keep.all():
        return votes
    dropped = votes.item_ids[~keep]
    msg = (f"{dropped.size} of {votes.n_items} vote items have no prediction from at "
           f"least one model and are left out, e.g. {list(dropped[:5])}")
    warnings.warn(msg, DegenerateInputWarning, stacklevel=3)
    notes.append(msg)
    return votes.select_items(keep)


def _aligned(votes: Votes, preds: Mapping[str, tuple[Any, list[str]]], pred_labels: Any,
             notes: list[str]) -> tuple[dict[str, Any], list[ModelPredictions]]:
    """Each model's predictions joined to the votes (every vote item must have one)."""
    from annokit.metrics.records import align

    records = {}
    out: list[ModelPredictions] = []
    for name, (p, sources) in preds.items():
        rec = align(votes, p, pred_labels=pred_labels, on_missing="error")
        records[name] = rec
        if rec.n_unmatched_predictions:
            notes.append(f"model {name}: {rec.n_unmatched_predictions} prediction rows for items "
                         "not in the votes were ignored")
        out.append(ModelPredictions(name=name, probs=rec.probs, sources=sources))
    return records, out


def _fixed_temperatures(records: Mapping[str, Any], temperatures: Sequence[tuple[str, float]],
                        sources_of: Mapping[str, Sequence[str]]) -> list[ModelPredictions]:
    """The copies ``"name T=T"`` scaled with a given temperature."""
    from annokit.metrics.temperature import temperature_scale

    out = []
    for name, t in temperatures:
        scaled, info = temperature_scale(records[name], temperature=t)
        out.append(ModelPredictions(name=f"{name} T={info['value']:g}", probs=scaled.probs,
                                    sources=sources_of[name], temperature=info["value"],
                                    temperature_note="fixed temperature"))
    return out


def _fitted_temperatures(records: Mapping[str, Any], all_votes: Votes,
                         fit_temperature_on: Sequence[tuple[str, Any]], *, id_field: str | None,
                         pred_labels: Any, notes: list[str]) -> list[ModelPredictions]:
    """The copies ``"name TS"`` with a temperature fitted on other prediction files' items that
    have votes (joined to all the votes read)."""
    from annokit.metrics.records import align, read_predictions
    from annokit.metrics.temperature import temperature_scale

    out = []
    for name, value in fit_temperature_on:
        paths = _as_paths(value)
        with warnings.catch_warnings():  # dev files cover other items than the votes: expected
            warnings.simplefilter("ignore", DegenerateInputWarning)
            dev = align(all_votes, read_predictions(paths, id_field=id_field),
                        pred_labels=pred_labels, on_missing="drop")
        scaled, info = temperature_scale(records[name], fit_on=dev)
        note = (f"T fitted on {', '.join(p.name for p in paths)} ({info['n_fit_items']} "
                f"items with votes, objective {info['objective']}); {info['n_overlap_items']} of "
                "them are also evaluated")
        notes.append(f"model {name} TS: {note}")
        out.append(ModelPredictions(name=f"{name} TS", probs=scaled.probs,
                                    sources=[p.name for p in paths],
                                    temperature=info["value"], temperature_note=note))
    return out


class SubsamplingRows(list):
    """Rows of the subsampling curve (a list of dicts) with the recommended k.

    ``recommendation`` is :meth:`annokit.subsample.Recommendation.to_dict` of the
    curve, or None; :func:`annokit.report.build_report` reports it.
    """

    recommendation: dict[str, Any] | None = None


def subsampling_rows(votes: Votes, ks: Sequence[int] | None = None, *, reps: int = REPS,
                     rng: np.random.Generator | int | None = 0,
                     notes: list[str] | None = None,
                     epsilon: float | None = EPSILON, target: str = TARGET) -> SubsamplingRows:
    """The "how many annotations" curve and recommended k of :func:`annokit.subsample.how_many` as rows.

    The same computation, with the same defaults, as ``annokit subsample``: items
    with fewer than k votes are skipped at that k (``short="skip"``), and the
    warnings saying how many are appended to ``notes``. Pass the rows to
    :func:`annokit.report.build_report` as ``subsampling``. With ``epsilon``, the
    rows carry :func:`annokit.subsample.recommend_k`'s recommendation for that
    tolerance and ``target`` as ``rows.recommendation``.

    Raises
    ------
    InvalidValueError
        If ``ks`` is not a sequence of integers (the curve checks the rest).

    Examples
    --------
    >>> votes = Votes.from_counts([[3, 1], [2, 2], [0, 4]], labels=["a", "b"])
    >>> [row["k"] for row in subsampling_rows(votes, [1, 4], reps=5)]
    [1, 4]
    """
    from annokit.subsample import how_many, subsampling_curve

    if ks is not None and (isinstance(ks, (str, bytes)) or not all(
            isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in ks)):
        raise InvalidValueError(f"ks must be a sequence of integers; got {ks!r}")
    ks = None if ks is None else list(ks)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DegenerateInputWarning)
        if epsilon is None:
            curve, rec = subsampling_curve(votes, ks, reps=reps, rng=rng, short="skip"), None
        else:
            curve, rec = how_many(votes, ks, reps=reps, rng=rng, short="skip", epsilon=epsilon,
                                  target=target)
    if notes is not None:
        notes += [f"subsampling: {m}" for m in dict.fromkeys(
            str(w.message) for w in caught if issubclass(w.category, DegenerateInputWarning))]
    rows = SubsamplingRows(curve.to_records())
    rows.recommendation = None if rec is None else rec.to_dict()
    return rows


def load_annotator_predictions(path: PathLike, votes: Votes, kept: Votes | None = None, *,
                               notes: list[str] | None = None) -> Any:
    """Predictions per (item, annotator) for the report's items, as a long table.

    Parameters
    ----------
    path : path
        A long table (:func:`annokit.metrics.perspectivist.read_annotator_predictions`).
    votes : Votes
        All votes read.
    kept : Votes, optional
        The votes the report is built on when items were left out (``--on-missing
        drop``); rows of the left-out items are removed and counted in ``notes``.
        Rows naming items the votes do not have at all stay, for
        :func:`~annokit.report.build.build_report` to refuse.

    Returns
    -------
    DataFrame
        With ``attrs["source"]``, the file name (shown in the report).
    """
    from annokit.metrics.perspectivist import read_annotator_predictions

    frame = read_annotator_predictions(path)
    name = Path(path).name
    if kept is not None and kept.n_items < votes.n_items:
        left_out = set(map(str, votes.item_ids)) - set(map(str, kept.item_ids))
        drop = frame["item"].isin(left_out).to_numpy()
        if drop.any():
            frame = frame.loc[~drop].reset_index(drop=True)
            if notes is not None:
                notes.append(f"annotator predictions {name}: {int(drop.sum())} row(s) of items "
                             "left out of the report (no model prediction) are not scored")
    frame.attrs["source"] = name
    return frame


#: Items listed in the report's plan table (most votes first).
PLAN_ITEMS_SHOWN = 20


def plan_section(votes: Votes, *, budget: int, goal: str = "majority", seed: int = 0) -> Any:
    """The report's "Where the next votes would go" (:func:`annokit.subsample.plan.plan` with
    its defaults): the plan's summary and the items that get the most votes."""
    from annokit.report.model import PlanItem, PlanSection
    from annokit.subsample.plan import plan

    result = plan(votes, budget=budget, goal=goal, seed=seed)  # type: ignore[arg-type]
    table = result.to_frame()
    state = "p_leading" if goal == "majority" else "expected_tvd"
    top = table[table["extra_votes"] > 0].sort_values("extra_votes", ascending=False,
                                                      kind="stable").head(PLAN_ITEMS_SHOWN)
    items = [PlanItem(item=str(row.item), n_votes=int(row.n_votes),
                      leading_label=None if row.leading_label is None else str(row.leading_label),
                      state=float(getattr(row, state)), extra_votes=int(row.extra_votes))
             for row in top.itertuples()]
    return PlanSection(summary=result.summary(), items=items)
