"""The report workflow: votes and models' prediction files to a :class:`~annokit.report.model.Report`.

``annokit report`` is more than :func:`annokit.report.build_report`: it resolves the metrics
against the votes' scale, reads and aligns every model's prediction files (with temperature-scaled
copies, :func:`~annokit.report.inputs.load_models`), reads the predictions per (item, annotator),
computes the "how many annotations" curve, builds the report, and adds the plan section.
:func:`run_report` holds that workflow once, with its options in one frozen object
(:class:`~annokit.report.options.ReportOptions`); the command line parses its options into that
object, reads the votes, calls :func:`run_report`, and writes and prints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from annokit.core.votes import Votes
from annokit.report.build import build
from annokit.report.inputs import (
    PathLike,
    load_annotator_predictions,
    load_models,
    plan_section,
    subsampling_rows,
)
from annokit.report.model import Report
from annokit.report.options import ReportOptions

__all__ = ["ReportOptions", "run_report"]


def run_report(votes: Votes, models: Mapping[str, PathLike | Sequence[PathLike]],
               options: ReportOptions | None = None, *,
               progress: Callable[[str], None] | None = None) -> Report:
    """The report of the models' prediction files on ``votes``, as ``annokit report`` builds it.

    Parameters
    ----------
    votes : Votes
        The human votes (all of them: ``on_missing="drop"`` leaves out the items some model
        does not predict, the plan section plans on all).
    models : mapping of str to path or sequence of paths
        Model name -> its prediction file(s) (:func:`annokit.report.inputs.load_models`).
    options : ReportOptions, optional
        Default ``ReportOptions()``.
    progress : callable, optional
        Called with a short stage name after each stage (for progress bars).

    Returns
    -------
    Report
        Its notes: the models' (dropped items, fitted temperatures), then the annotator
        predictions' and the curve's, then the build's.

    Raises
    ------
    InputError
        The metrics, readers', join's and build's errors.
    """
    from annokit.metrics.workflow import resolve_metrics

    options = ReportOptions() if options is None else options
    step = progress or (lambda _name: None)
    metrics = resolve_metrics(options.metrics, scale=votes.labels.scale,
                              n_labels=votes.n_labels)
    step("votes")
    loaded = load_models(votes, models, pred_labels=options.pred_labels,
                         id_field=options.id_field, on_missing=options.on_missing,
                         temperatures=options.temperatures,
                         fit_temperature_on=options.fit_temperature_on, progress=step)
    notes: list[str] = []
    per_annotator = None
    if options.annotator_predictions is not None:
        per_annotator = load_annotator_predictions(options.annotator_predictions, votes,
                                                   loaded.votes, notes=notes)
    curve = None
    if options.subsample is not None:
        ks = None if isinstance(options.subsample, str) else list(options.subsample)
        curve = subsampling_rows(loaded.votes, ks, reps=options.subsample_reps,
                                 rng=options.seed, notes=notes, epsilon=options.epsilon,
                                 target=options.subsample_target)
    rep = build(loaded.votes, loaded.models, replace(options, metrics=metrics),
                subsampling=curve, annotator_predictions=per_annotator, progress=step)
    rep.notes = loaded.notes + notes + rep.notes
    if options.plan_budget is not None:
        rep.plan = plan_section(votes, budget=options.plan_budget, goal=options.plan_goal,
                                seed=options.seed)
    return rep
