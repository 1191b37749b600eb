"""Report figures drawn with matplotlib's Agg backend, from plain arrays.

Every function returns SVG text (for inline embedding) or PNG bytes when
``fmt="png"``. Colours follow the Okabe-Ito palette, which stays distinct
under the common colour-vision deficiencies; every axis is labelled. SVG
output is deterministic (fixed hash salt, no date metadata); text stays
``<text>`` in a generic sans-serif family, so the page needs no font files.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import matplotlib

matplotlib.use("Agg", force=False)

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from annokit.errors import DataFormatError, InvalidValueError
from annokit.io.atomic import write_bytes_atomic

__all__ = [
    "HUMAN_COLOR",
    "IMAGE_FORMATS",
    "OKABE_ITO",
    "entropy_histograms",
    "error_histograms",
    "image_format",
    "per_bin_bars",
    "reliability_diagrams",
    "render",
    "subsampling_curve",
    "subsampling_figure",
    "write_figure",
]

#: Okabe & Ito (2008) colour-blind-safe palette, black left for the human reference.
OKABE_ITO: tuple[str, ...] = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7",
                              "#56B4E9", "#F0E442")
HUMAN_COLOR = "#000000"
_HATCHES = ("", "//", "..", "xx", "\\\\", "++", "oo")
_LINESTYLES = ("-", "--", ":", "-.", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)), (0, (1, 3)))

Format = Literal["svg", "png", "pdf"]

#: Image formats :func:`render` writes.
IMAGE_FORMATS = ("svg", "png", "pdf")

_RC = {
    "svg.hashsalt": "annokit",
    "svg.fonttype": "none",  # <text> in the local sans-serif font: no font files needed
    "font.size": 9,
    "font.family": "sans-serif",
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 100,
}


def color(i: int) -> str:
    """The i-th model colour (cycles after seven models)."""
    return OKABE_ITO[i % len(OKABE_ITO)]


def render(fig: Figure, fmt: str = "svg", *, standalone: bool = False) -> str | bytes:
    """Serialise and close a figure, the same bytes on every run.

    Parameters
    ----------
    fig : Figure
    fmt : {"svg", "png", "pdf"}, default="svg"
    standalone : bool, default=False
        SVG only: the whole file (XML prolog, fixed width and height) instead of
        the ``<svg>`` element sized by the page, for inline embedding.

    Returns
    -------
    str or bytes
        SVG text, or PNG / PDF bytes.

    Notes
    -----
    Output is deterministic: SVG ids come from a fixed hash salt
    (``svg.hashsalt``) and no file carries a date or software version
    (``metadata`` ``Date``, ``CreationDate`` and ``Software`` set to None).
    """
    if fmt not in IMAGE_FORMATS:
        raise InvalidValueError(f"fmt must be one of {IMAGE_FORMATS}; got {fmt!r}")
    buf = io.BytesIO()
    try:
        with matplotlib.rc_context(_RC):
            if fmt == "png":
                fig.savefig(buf, format="png", dpi=150, metadata={"Software": None})
                return buf.getvalue()
            if fmt == "pdf":
                fig.savefig(buf, format="pdf",
                            metadata={"CreationDate": None, "ModDate": None, "Producer": None})
                return buf.getvalue()
            fig.savefig(buf, format="svg", metadata={"Date": None})
    finally:
        plt.close(fig)
    text = buf.getvalue().decode("utf-8")
    if standalone:
        return text
    text = text[text.index("<svg"):]
    # scale with the page: keep the viewBox, let CSS decide the size
    text = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1', text, count=1)
    return text


def write_figure(figure: str | bytes, path: str | Path) -> Path:
    """Write rendered figure data to ``path`` atomically (SVG text as UTF-8)."""
    data = figure.encode("utf-8") if isinstance(figure, str) else figure
    return write_bytes_atomic(path, data)


def image_format(path: str | Path) -> str:
    """The image format of a target path from its extension, checked before any work.

    Raises
    ------
    DataFormatError
        An extension other than .png, .svg or .pdf.
    InvalidValueError
        The target's directory does not exist.

    Examples
    --------
    >>> image_format("curve.SVG")
    'svg'
    """
    out = Path(path)
    suffix = out.suffix.lower().lstrip(".") or "png"
    if suffix not in IMAGE_FORMATS:
        raise DataFormatError(f"{path}: unsupported image type {suffix!r}; "
                              "use .png, .svg or .pdf")
    directory = out.parent if str(out.parent) else Path(".")
    if not directory.is_dir():
        raise InvalidValueError(f"{path}: directory {directory} does not exist")
    return suffix


def _adjust(fig: Figure, ncols: int, nrows: int, *, left: float = 0.7, right: float = 0.15,
            bottom: float = 0.65, top: float = 0.4, wspace: float = 0.75,
            hspace: float = 1.0) -> None:
    """Fixed margins in inches (cheaper than a layout engine, which costs an extra draw)."""
    w, h = fig.get_size_inches()
    ax_w = max(0.5, (w - left - right - (ncols - 1) * wspace) / ncols)
    ax_h = max(0.5, (h - bottom - top - (nrows - 1) * hspace) / nrows)
    fig.subplots_adjust(left=left / w, right=1 - right / w, bottom=bottom / h, top=1 - top / h,
                        wspace=wspace / ax_w, hspace=hspace / ax_h)


def _figure(ncols: int, nrows: int = 1, *, width: float = 10.0, height: float = 3.4) -> tuple:
    with matplotlib.rc_context(_RC):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width, height * nrows), squeeze=False)
    return fig, axes


def reliability_diagrams(bins: Mapping[str, Any], *, title: str = "", fmt: Format = "svg"):
    """Hard (against the majority) and soft (against mean human probability) reliability diagrams.

    Parameters
    ----------
    bins : mapping
        Arrays of equal length, one entry per confidence bin: ``"edges"``
        (n_bins + 1), ``"count"``, ``"confidence"`` (mean top-label probability),
        ``"accuracy"`` (share whose top label is the majority) and ``"soft_target"``
        (mean human probability of the predicted label). Empty bins hold NaN.
    title : str
        Model name shown above the panels.
    """
    edges = np.asarray(bins["edges"], dtype=float)
    count = np.asarray(bins["count"], dtype=float)
    conf = np.asarray(bins["confidence"], dtype=float)
    width = np.diff(edges)
    centers = edges[:-1] + width / 2
    with matplotlib.rc_context(_RC):
        fig, axes = _figure(2, width=10.0, height=3.8)
        for ax, key, name in ((axes[0, 0], "accuracy", "Hard: accuracy vs majority"),
                              (axes[0, 1], "soft_target", "Soft: mean human probability")):
            target = np.asarray(bins[key], dtype=float)
            ok = count > 0
            ax.bar(centers[ok], target[ok], width=width[ok] * 0.95, color=OKABE_ITO[0],
                   edgecolor="white", label="observed")
            gap_low = np.minimum(target, conf)
            ax.bar(centers[ok], np.abs(conf - target)[ok], bottom=gap_low[ok],
                   width=width[ok] * 0.95, color=OKABE_ITO[3], alpha=0.35, hatch="//",
                   edgecolor=OKABE_ITO[3], linewidth=0.0, label="gap to confidence")
            ax.plot([0, 1], [0, 1], linestyle="--", color="#555555", linewidth=1,
                    label="perfect calibration")
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1.12)
            ax.set_xlabel("model confidence (top-label probability)")
            ax.set_ylabel("accuracy vs majority" if key == "accuracy"
                          else "mean human probability of predicted label")
            ax.set_title(f"{title}: {name}" if title else name)
            for c, n in zip(centers[ok], count[ok]):
                ax.text(c, 1.03, f"{int(n)}", ha="center", va="bottom", fontsize=6,
                        rotation=90 if len(centers) > 10 else 0)
            ax.legend(loc="upper left", frameon=False, bbox_to_anchor=(0.0, 0.93))
        fig.text(0.5, 0.01, "numbers above the bars: items per confidence bin", ha="center",
                 fontsize=7)
        _adjust(fig, 2, 1, bottom=0.75, wspace=0.9)
    return render(fig, fmt)


def _stairs(ax, hist: Mapping[str, Sequence[float]], *, i: int, label: str) -> None:
    ax.stairs(np.asarray(hist["counts"], dtype=float), np.asarray(hist["edges"], dtype=float),
              color=color(i), linewidth=1.6, label=label,
              linestyle=_LINESTYLES[i % len(_LINESTYLES)])


def error_histograms(hists: Mapping[str, Mapping[str, Mapping[str, Sequence[float]]]], *,
                     labels: Mapping[str, str] | None = None, fmt: Format = "svg"):
    """Histograms of per-item errors, one panel per quantity, one outline per model.

    Parameters
    ----------
    hists : mapping quantity -> (mapping model -> histogram ``{"edges", "counts"}``)
        E.g. per-item DistCE = TVD(model, human) and EntCE = H(model) - H(human)
        (Baan et al. 2022, Fig. 1); the models of one quantity share edges.
    labels : mapping quantity -> x-axis label, optional
    """
    keys = list(hists)
    labels = dict(labels or {})
    ncols = max(1, min(3, len(keys)))
    nrows = max(1, int(np.ceil(len(keys) / ncols)))
    with matplotlib.rc_context(_RC):
        fig, axes = _figure(ncols, nrows, width=12.0, height=3.4)
        for j, ax in enumerate(axes.ravel()):
            if j >= len(keys):
                ax.set_visible(False)
                continue
            key = keys[j]
            for i, name in enumerate(hists[key]):
                _stairs(ax, hists[key][name], i=i, label=name)
            ax.set_xlabel(labels.get(key, key))
            ax.set_ylabel("items")
            ax.set_title(f"Per-item {key}")
        if keys:
            axes[0, 0].legend(frameon=False)
        _adjust(fig, ncols, nrows)
    return render(fig, fmt)


def entropy_histograms(human: Mapping[str, Sequence[float]],
                       models: Mapping[str, Mapping[str, Sequence[float]]], *,
                       fmt: Format = "svg"):
    """Human entropy against each model's predictive entropy (nats), one panel per model.

    ``human`` and each value of ``models`` are histograms ``{"edges", "counts"}`` on the same edges.
    """
    names = list(models)
    ncols = max(1, min(3, len(names)))
    nrows = max(1, int(np.ceil(len(names) / ncols)))
    h_edges = np.asarray(human["edges"], dtype=float)
    h_counts = np.asarray(human["counts"], dtype=float)
    with matplotlib.rc_context(_RC):
        fig, axes = _figure(ncols, nrows, width=4.0 * ncols, height=3.2)
        for j, ax in enumerate(axes.ravel()):
            if j >= len(names):
                ax.set_visible(False)
                continue
            name = names[j]
            ax.stairs(h_counts, h_edges, fill=True, color="#BBBBBB", label="human")
            _stairs(ax, models[name], i=j, label=name)
            ax.set_xlabel("entropy [nats]")
            ax.set_ylabel("items")
            ax.set_title(f"Entropy: human vs {name}")
            ax.legend(frameon=False)
        _adjust(fig, ncols, nrows, hspace=0.95)
    return render(fig, fmt)


def per_bin_bars(bin_labels: Sequence[str], values: Mapping[str, Mapping[str, Sequence[float]]],
                 *, ceiling: Mapping[str, Sequence[float]] | None = None,
                 metric_labels: Mapping[str, str] | None = None, fmt: Format = "svg"):
    """Grouped bars: one panel per metric, agreement bins on x, one bar per model.

    Parameters
    ----------
    bin_labels : sequence of str
        Label of each agreement bin (lowest human entropy first).
    values : mapping metric -> (mapping model -> per-bin values)
    ceiling : mapping metric -> per-bin values, optional
        Split-half human ceiling drawn as a black line with markers.
    metric_labels : mapping metric -> axis label, optional
    """
    metrics = list(values)
    metric_labels = dict(metric_labels or {})
    ncols = min(3, len(metrics))
    nrows = int(np.ceil(len(metrics) / ncols))
    x = np.arange(len(bin_labels))
    with matplotlib.rc_context(_RC):
        fig, axes = _figure(ncols, nrows, width=12.0, height=3.3)
        for j, ax in enumerate(axes.ravel()):
            if j >= len(metrics):
                ax.set_visible(False)
                continue
            metric = metrics[j]
            models = list(values[metric])
            w = 0.8 / max(1, len(models))
            for i, name in enumerate(models):
                vals = np.asarray(values[metric][name], dtype=float)
                ax.bar(x - 0.4 + w * (i + 0.5), np.nan_to_num(vals), width=w, color=color(i),
                       hatch=_HATCHES[i % len(_HATCHES)], edgecolor="white", linewidth=0.3,
                       label=name)
            if ceiling and metric in ceiling:
                ax.plot(x, np.asarray(ceiling[metric], dtype=float), color=HUMAN_COLOR,
                        marker="o", linewidth=1.2, label="human split-half")
            ax.set_xticks(x)
            ax.set_xticklabels(bin_labels, rotation=20, ha="right", fontsize=7)
            ax.set_xlabel("agreement bin (human entropy, bits)")
            ax.set_ylabel(metric_labels.get(metric, metric))
            ax.set_title(metric_labels.get(metric, metric))
        handles, labels = axes[0, 0].get_legend_handles_labels()
        for ax in axes.ravel()[1:]:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
        fig.legend(handles, labels, loc="upper center", ncol=min(6, len(labels)), frameon=False,
                   bbox_to_anchor=(0.5, 1.0))
        _adjust(fig, ncols, nrows, bottom=0.95, top=0.75, hspace=1.25)
    return render(fig, fmt)


def subsampling_curve(k: Sequence[int], mean: Sequence[float], low: Sequence[float],
                      high: Sequence[float], *, jsd: Sequence[float] | None = None,
                      majority_agreement: Sequence[float] | None = None,
                      epsilon: float | None = None, recommended_k: int | None = None,
                      interval: float | None = None, title: str = "How many annotations are enough",
                      fmt: Format = "svg", standalone: bool = False):
    """Mean TVD between a k-vote estimate and all votes, with its percentile band.

    The one subsampling figure of annokit (the report and ``annokit subsample --plot``).

    Parameters
    ----------
    k : sequence of int
        Votes per item.
    mean, low, high : sequence of float
        Mean TVD over repetitions and its percentile interval, one per k.
    jsd : sequence of float, optional
        Mean Jensen-Shannon distance, drawn on the same axes.
    majority_agreement : sequence of float, optional
        Share of items whose k-vote majority is the full majority: a second panel.
    epsilon : float, optional
        The target TVD, drawn as a dashed line.
    recommended_k : int, optional
        Drawn as a dotted vertical line.
    interval : float, optional
        Coverage of the band, for its legend entry (0.95 -> "95% interval").
    title : str
    fmt : {"svg", "png", "pdf"}, default="svg"
    standalone : bool, default=False
        See :func:`render`.

    Returns
    -------
    str or bytes
        As :func:`render`.
    """
    k = np.asarray(k, dtype=float)
    ncols = 1 if majority_agreement is None else 2
    band = ("interval over repetitions" if interval is None
            else f"TVD {100 * interval:g}% interval over repetitions")
    with matplotlib.rc_context(_RC):
        fig, axes = _figure(ncols, width=6.0 if ncols == 1 else 10.0, height=3.4)
        ax = axes[0, 0]
        ax.fill_between(k, np.asarray(low, float), np.asarray(high, float), color=OKABE_ITO[5],
                        alpha=0.35, label=band)
        ax.plot(k, np.asarray(mean, float), marker="o", color=OKABE_ITO[0],
                label="mean" if jsd is None else "TVD (mean)")
        if jsd is not None:
            ax.plot(k, np.asarray(jsd, float), marker="s", color=OKABE_ITO[1],
                    linestyle="--", label="Jensen-Shannon distance (mean)")
        if epsilon is not None:
            ax.axhline(epsilon, color="grey", linestyle="--", label=f"epsilon = {epsilon:g}")
        if recommended_k is not None:
            ax.axvline(recommended_k, color=HUMAN_COLOR, linestyle=":",
                       label=f"recommended k = {recommended_k}")
        ax.set_ylabel("TVD to all-votes distribution" if jsd is None
                      else "distance to all votes")
        ax.set_title(title)
        ax.legend(frameon=False)
        if majority_agreement is not None:
            ax2 = axes[0, 1]
            ax2.plot(k, np.asarray(majority_agreement, float), marker="o", color=OKABE_ITO[2])
            ax2.set_ylabel("k-vote majority = full majority")
            ax2.set_title("Majority agreement")
        for a in axes[0]:
            a.set_xlabel("votes per item (k)")
            if ncols == 2:  # log k with the k values as ticks
                a.set_xscale("log")
                a.set_xticks(k.tolist())
                a.set_xticklabels([str(int(v)) for v in k])
                a.minorticks_off()
        _adjust(fig, ncols, 1)
    return render(fig, fmt, standalone=standalone)


def subsampling_figure(curve: Any, recommendation: Any = None, *, fmt: Format = "svg",
                       standalone: bool = True):
    """:func:`subsampling_curve` of a :class:`~annokit.subsample.SubsampleCurve` and its
    :class:`~annokit.subsample.Recommendation`: TVD band, JSD, epsilon, the recommended k
    (when read off the observed curve) and the majority-agreement panel.
    """
    frame = curve.to_frame()
    rec_k = None
    epsilon = None
    if recommendation is not None:
        epsilon = recommendation.epsilon
        if recommendation.k is not None and recommendation.source == "observed":
            rec_k = recommendation.k
    return subsampling_curve(
        frame.k.tolist(), frame.tvd_mean, frame.tvd_low, frame.tvd_high, jsd=frame.jsd_mean,
        majority_agreement=frame.majority_agreement, epsilon=epsilon, recommended_k=rec_k,
        interval=curve.interval,
        title=f"{curve.n_items} items, {curve.reps} repetitions per k", fmt=fmt,
        standalone=standalone)


def report_figures(report: Any, *, fmt: Format = "svg") -> dict[str, Any]:
    """Every figure of a :class:`~annokit.report.model.Report`, keyed by a stable id.

    Keys: ``reliability-<i>`` (one per model, in report order), ``error-histograms``,
    ``entropy-histograms``, ``per-bin``, and ``subsampling`` when the report has a curve.
    """
    figs: dict[str, Any] = {}
    for i, m in enumerate(report.models):
        rel = m.reliability
        nan = float("nan")
        figs[f"reliability-{i}"] = reliability_diagrams(
            {"edges": rel.edges, "count": rel.count,
             "confidence": [nan if v is None else v for v in rel.confidence],
             "accuracy": [nan if v is None else v for v in rel.accuracy],
             "soft_target": [nan if v is None else v for v in rel.soft_target]},
            title=m.name, fmt=fmt)

    units = {info.name: info.unit for info in report.metrics}
    labels = {k: f"{k} [{u}]" for k, u in units.items()}
    keys = list(report.models[0].histograms) if report.models else []
    figs["error-histograms"] = error_histograms(
        {k: {m.name: m.histograms[k].model_dump() for m in report.models} for k in keys},
        labels={k: f"per-item {labels[k]}" for k in keys}, fmt=fmt)
    figs["entropy-histograms"] = entropy_histograms(
        report.human_entropy.model_dump(), {m.name: m.entropy.model_dump() for m in report.models},
        fmt=fmt)

    def bar(value: Any) -> float:
        return nan if value is None else value

    values = {k: {m.name: [bar(b.metrics[k].estimate) for b in m.per_bin] for m in report.models}
              for k in units}
    ceiling = None
    if report.human_ceiling is not None:
        ceiling = {k: [bar(c.vs_reference.get(k)) for c in report.human_ceiling.per_bin]
                   for k in units}
    figs["per-bin"] = per_bin_bars(report.binning.labels, values, ceiling=ceiling,
                                   metric_labels=labels, fmt=fmt)
    if report.subsampling:
        pts = report.subsampling
        figs["subsampling"] = subsampling_curve([p.k for p in pts], [p.tvd_mean for p in pts],
                                                [p.tvd_low for p in pts],
                                                [p.tvd_high for p in pts], fmt=fmt)
    return figs
