"""The report's figures from a :class:`~annokit.report.model.Report`, keyed by a stable id.

Which metrics get a panel is read from the report (registry field ``headline``,
:func:`annokit.report.captions.headline_metrics`); every other metric is in the
tables. Titles and captions: :mod:`annokit.report.captions`.
"""

from __future__ import annotations

from typing import Any

from annokit.core.soft_labels import ENTROPY_UNIT
from annokit.report.captions import figure_order, headline_metrics
from annokit.report.plots import (
    Format,
    entropy_histograms,
    error_histograms,
    mpl_text,
    per_bin_bars,
    reliability_diagrams,
    subsampling_curve,
)
from annokit.report.scale_plots import (
    annotator_histograms,
    binary_reliability_diagrams,
    label_distribution_bars,
)
from annokit.report.tables import direction

__all__ = ["report_figures"]

_NAN = float("nan")


def _nan(value: Any) -> float:
    return _NAN if value is None else value


def report_figures(report: Any, *, fmt: Format = "svg") -> dict[str, Any]:
    """Every figure of a report, in page order (:func:`~annokit.report.captions.figure_order`).

    Keys: ``per-bin`` (headline metrics per agreement bin), ``reliability-<i>`` (one
    per model, in report order), ``error-histograms`` (per-item values of the headline
    metrics that have them, rates left out), ``entropy-histograms`` (nats),
    ``binary-reliability`` (two labels: p(positive) against the positive frequency),
    ``label-distributions`` (ordered scales: mean human and model distributions in
    scale order, all items and per agreement bin), ``subsampling`` when the report has
    a curve and ``annotator-errors`` with a per-annotator evaluation.

    Returns
    -------
    dict of str to str or bytes
        As :func:`annokit.report.plots.render` for ``fmt``.
    """
    figs: dict[str, Any] = {}
    heads = headline_metrics(report)
    axis = {i.name: f"{i.name} [{i.unit}]" for i in heads}
    titles = {i.name: f"{i.name} {direction(i)}" for i in heads}

    values = {i.name: {m.name: [_nan(b.metrics[i.name].estimate) for b in m.per_bin]
                       for m in report.models} for i in heads}
    ceiling = None
    if report.human_ceiling is not None:
        ceiling = {i.name: [_nan(c.vs_reference.get(i.name))
                            for c in report.human_ceiling.per_bin] for i in heads}
    figs["per-bin"] = per_bin_bars(report.binning.labels, values, ceiling=ceiling,
                                   metric_labels=axis, metric_titles=titles, fmt=fmt)
    for i, m in enumerate(report.models):
        rel = m.reliability
        figs[f"reliability-{i}"] = reliability_diagrams(
            {"edges": rel.edges, "count": rel.count,
             "confidence": [_nan(v) for v in rel.confidence],
             "accuracy": [_nan(v) for v in rel.accuracy],
             "soft_target": [_nan(v) for v in rel.soft_target]},
            title=m.name, fmt=fmt)
    keys = [i.name for i in heads if report.models and i.name in report.models[0].histograms]
    if keys:
        figs["error-histograms"] = error_histograms(
            {k: {m.name: m.histograms[k].model_dump() for m in report.models} for k in keys},
            labels={k: f"per-item {axis[k]}" for k in keys}, fmt=fmt)
    figs["entropy-histograms"] = entropy_histograms(
        report.human_entropy.model_dump(), {m.name: m.entropy.model_dump() for m in report.models},
        fmt=fmt)
    binary = {m.name: m.binary_reliability.model_dump() for m in report.models
              if m.binary_reliability is not None}
    if binary and report.positive_label is not None:
        figs["binary-reliability"] = binary_reliability_diagrams(
            binary, positive_label=report.positive_label, fmt=fmt)
    if report.human_distribution is not None:
        figs["label-distributions"] = _label_distributions(report, fmt)
    if report.perspectivist is not None:
        figs["annotator-errors"] = _annotator_errors(report.perspectivist, fmt)
    aq = report.annotator_quality
    if aq is not None and aq.pairs is not None and len(aq.pairs.annotators) >= 2:
        from annokit.report.annotator_plots import pair_heatmap

        figs["annotator-pairs"] = pair_heatmap(aq.pairs.annotators, aq.pairs.kappa, fmt=fmt)
    if report.subsampling:
        pts = report.subsampling
        rec = report.subsampling_recommendation
        observed = rec is not None and rec.k is not None and rec.source == "observed"
        jsd = [_nan(p.jsd_mean) for p in pts]
        agree = [_nan(p.majority_agreement) for p in pts]
        figs["subsampling"] = subsampling_curve(
            [p.k for p in pts], [p.tvd_mean for p in pts], [p.tvd_low for p in pts],
            [p.tvd_high for p in pts],
            jsd=None if all(p.jsd_mean is None for p in pts) else jsd,
            majority_agreement=None if all(p.majority_agreement is None for p in pts) else agree,
            epsilon=None if rec is None else rec.epsilon,
            recommended_k=rec.k if observed else None,
            k_interval=(rec.k_low, rec.k_high) if observed else None,
            title=_subsampling_title(report), fmt=fmt)
    return {k: figs[k] for k in figure_order(figs)}


def _subsampling_title(report: Any) -> str:
    """``600 items``; with a recommendation read off beyond the curve, that k in words."""
    title = f"{report.dataset.get('n_items', '?')} items"
    rec = report.subsampling_recommendation
    if rec is not None and rec.k is not None and rec.source != "observed":
        title += f"; recommended k = {rec.k} ({rec.interval_text()}), {rec.source}"
    return mpl_text(title)


def _label_distributions(report: Any, fmt: Format) -> Any:
    """All items, then one panel per agreement bin; the models with a distribution."""
    hd = report.human_distribution
    models = [m for m in report.models if m.label_distribution is not None]
    panels = {f"all items (n={sum(report.binning.counts)})":
              (hd.overall, {m.name: m.label_distribution.overall for m in models})}
    for b, (lab, n) in enumerate(zip(report.binning.labels, report.binning.counts,
                                     strict=True)):
        panels[f"agreement bin {lab} {ENTROPY_UNIT} (n={n})"] = (
            hd.per_bin[b], {m.name: m.label_distribution.per_bin[b] for m in models})
    return label_distribution_bars(report.labels, panels, fmt=fmt)


def _annotator_errors(p: Any, fmt: Format) -> Any:
    """Per-annotator error rate (and distance): the LeWiDi score, the median and the pooled score."""
    markers = {"error_rate": {"per-annotator (LeWiDi ER)": p.scores.get("lewidi_error_rate"),
                              "median over annotators":
                                  p.over_annotators.get("error_rate", {}).get("median"),
                              "pooled (TVD)": p.pooled.get("tvd")}}
    labels = {"error_rate": "error rate against the annotator [rate]"}
    if "mean_distance" in p.histograms:
        markers["mean_distance"] = {
            "per-annotator (LeWiDi AD)": p.scores.get("lewidi_absolute_distance"),
            "median over annotators": p.over_annotators.get("mean_distance", {}).get("median"),
            "pooled (Wasserstein / s)": p.pooled.get("wasserstein")}
        labels["mean_distance"] = f"|v_pred - v_actual| / {p.normalizer:g} [normalised distance]"
    return annotator_histograms({k: h.model_dump() for k, h in p.histograms.items()},
                                markers=markers, labels=labels, fmt=fmt)
