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
from typing import TYPE_CHECKING, Any, Literal

import matplotlib

matplotlib.use("Agg", force=False)

import matplotlib.colors
import matplotlib.patches
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from annokit.core.soft_labels import ENTROPY_UNIT
from annokit.errors import DataFormatError, InvalidValueError
from annokit.io.atomic import write_bytes_atomic

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

__all__ = [
    "HUMAN_COLOR",
    "IMAGE_FORMATS",
    "OKABE_ITO",
    "entropy_histograms",
    "error_histograms",
    "image_format",
    "mpl_text",
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
IMAGE_FORMATS: tuple[Format, ...] = ("svg", "png", "pdf")

_RC: dict[RcKeyType, Any] = {
    "svg.hashsalt": "annokit",
    "svg.fonttype": "none",  # <text> in the local sans-serif font: no font files needed
    "pdf.compression": 6,
    "font.size": 9,
    "font.family": "sans-serif",
    "axes.titlesize": 9.5,
    "axes.labelsize": 8.5,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 100,
}


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")

#: Bins with fewer items than this are hatched in the reliability diagrams.
TINY_BIN = 10


def mpl_text(text: object) -> str:
    r"""Text from the data as matplotlib draws it literally: ``$`` escaped (no mathtext),
    control characters as spaces, and a leading ``_`` kept (a legend would drop the entry).

    Examples
    --------
    >>> mpl_text("_a$b\nc") == "\u200b_a\\$b c"
    True
    """
    text = _CONTROL.sub(" ", str(text)).replace("$", "\\$")
    return "\u200b" + text if text.startswith("_") else text


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
                            metadata={"CreationDate": None, "ModDate": None, "Producer": None,
                                      "Creator": None})
                return buf.getvalue()
            fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    finally:
        plt.close(fig)
    text = buf.getvalue().decode("utf-8")
    if standalone:
        return text
    text = text[text.index("<svg"):]
    # scale with the page up to the drawn size (1 pt = 4/3 CSS px), so text stays at its
    # point size on a wide screen: keep the viewBox, let CSS decide the size
    width = re.search(r'<svg[^>]*? width="([0-9.]+)pt"', text)
    style = f' style="max-width: {float(width.group(1)) * 4 / 3:.0f}px"' if width else ""
    text = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1' + style, text,
                  count=1)
    return text


def write_figure(figure: str | bytes, path: str | Path) -> Path:
    """Write rendered figure data to ``path`` atomically (SVG text as UTF-8)."""
    data = figure.encode("utf-8") if isinstance(figure, str) else figure
    return write_bytes_atomic(path, data)


def image_format(path: str | Path) -> Format:
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
    fmt = next((f for f in IMAGE_FORMATS if f == suffix), None)
    if fmt is None:
        raise DataFormatError(f"{path}: unsupported image type {suffix!r}; "
                              "use .png, .svg or .pdf")
    directory = out.parent if str(out.parent) else Path(".")
    if not directory.is_dir():
        raise InvalidValueError(f"{path}: directory {directory} does not exist")
    return fmt


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


def _panel_grid(n: int, max_cols: int, *, width: Any, height: float) -> tuple:
    """A grid for ``n`` panels, at most ``max_cols`` wide, the unused axes hidden.

    ``width`` is inches, or a function of the number of columns. Returns ``(fig, axes,
    used, ncols, nrows)`` with ``used`` the first ``n`` axes in reading order.
    """
    ncols = max(1, min(max_cols, n))
    nrows = max(1, int(np.ceil(n / ncols)))
    fig, axes = _figure(ncols, nrows, width=width(ncols) if callable(width) else width,
                        height=height)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes, axes.ravel()[:n], ncols, nrows


def _reliability_panel(ax, target: np.ndarray, *, edges: np.ndarray, count: np.ndarray,
                       conf: np.ndarray, alpha: np.ndarray) -> None:
    """One reliability panel: bars at the observed ``target`` (hatched below :data:`TINY_BIN`
    items), the gap to the mean confidence, and the items per bin above."""
    width = np.diff(edges)
    centers = edges[:-1] + width / 2
    ok = count > 0
    tiny = ok & (count < TINY_BIN)
    small = len(centers) > 12
    ax.plot([0, 1], [0, 1], linestyle="--", color="#777777", linewidth=0.9,
            label="perfect calibration", zorder=1)
    for j in np.flatnonzero(ok & ~tiny):
        ax.bar(centers[j], target[j], width=width[j] * 0.9, zorder=2,
               color=matplotlib.colors.to_rgba(OKABE_ITO[0], alpha[j]),
               edgecolor=OKABE_ITO[0], linewidth=0.6,
               label="observed" if j == np.flatnonzero(ok & ~tiny)[0] else None)
    for j in np.flatnonzero(tiny):  # hollow and hatched, a dot at the value (even at 0)
        ax.bar(centers[j], target[j], width=width[j] * 0.9, zorder=2, color="none",
               edgecolor=OKABE_ITO[0], linewidth=0.6, hatch="////")
        ax.plot(centers[j], target[j], marker="o", markersize=4, color=OKABE_ITO[0],
                markerfacecolor="white", zorder=5, clip_on=False)
    # the gap: a segment at the bin's right quarter, from the bar top to the mean
    # confidence, so it never covers the bar and the bars never hide it
    xg = centers[ok] + width[ok] * 0.3
    ax.vlines(xg, target[ok], conf[ok], color=OKABE_ITO[3], linewidth=2.0, zorder=3,
              label="gap to confidence")
    ax.hlines(conf[ok], centers[ok] - width[ok] * 0.45, centers[ok] + width[ok] * 0.45,
              color=HUMAN_COLOR, linewidth=1.4, zorder=4, label="mean confidence")
    for b, (c, n) in enumerate(zip(centers, count, strict=True)):
        text, col = (("empty", "#888888") if n == 0 else
                     (f"{int(n)}", OKABE_ITO[3] if tiny[b] else "#333333"))
        ax.text(c, 1.03, text, ha="center", va="bottom", color=col,
                fontsize=6 if small or n == 0 else 7,
                rotation=90 if small or n == 0 else 0)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.16)
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_xlabel("model confidence, top-label probability [probability]")


def _reliability_legend(fig, ax, tiny: bool) -> None:
    """One legend below both panels, "observed" first (and the hatch of the tiny bins)."""
    handles, labels = ax.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda i: labels[i] != "observed")
    handles, labels = [handles[i] for i in order], [labels[i] for i in order]
    if tiny:
        handles.append(matplotlib.patches.Patch(facecolor="white", edgecolor=OKABE_ITO[0],
                                                hatch="////"))
        labels.append(f"fewer than {TINY_BIN} items")
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False,
               bbox_to_anchor=(0.5, 0.0))


def reliability_diagrams(bins: Mapping[str, Any], *, title: str = "", fmt: Format = "svg"):
    """Hard (against the majority) and soft (against mean human probability) reliability diagrams.

    Each non-empty confidence bin is a bar at its observed value, more opaque the
    more items it holds (hatched below :data:`TINY_BIN` items); a black tick marks
    the bin's mean confidence and a red segment joins tick and bar top (the
    bin's gap), drawn beside each other rather than on top of the bar. Empty bins
    read "empty"; the number of items is written above each bin.

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
    ok = count > 0
    tiny = ok & (count < TINY_BIN)
    alpha = np.where(ok, 0.25 + 0.75 * count / max(1.0, count.max()), 0.0)
    with matplotlib.rc_context(_RC):
        fig, axes = _figure(2, width=9.6, height=3.8)
        for ax, key, name, ylabel in (
                (axes[0, 0], "accuracy", "hard labels: accuracy against the majority",
                 "accuracy [rate]"),
                (axes[0, 1], "soft_target",
                 "soft labels: human probability of the predicted label",
                 "mean human probability [probability]")):
            _reliability_panel(ax, np.asarray(bins[key], dtype=float), edges=edges, count=count,
                               conf=conf, alpha=alpha)
            ax.set_ylabel(ylabel)
            ax.set_title(name, pad=14, fontsize=8.5)
        _reliability_legend(fig, axes[0, 0], bool(tiny.any()))
        if title:
            fig.suptitle(mpl_text(title), fontsize=10, fontweight="bold", y=0.985)
        _adjust(fig, 2, 1, bottom=1.0, top=0.65, wspace=0.9)
    return render(fig, fmt)


def _stairs(ax, hist: Mapping[str, Sequence[float]], *, i: int, label: str) -> None:
    ax.stairs(np.asarray(hist["counts"], dtype=float), np.asarray(hist["edges"], dtype=float),
              color=color(i), linewidth=1.6, label=mpl_text(label),
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
    with matplotlib.rc_context(_RC):
        fig, axes, used, ncols, nrows = _panel_grid(len(keys), 3, width=12.0, height=3.4)
        for key, ax in zip(keys, used, strict=True):
            for i, name in enumerate(hists[key]):
                _stairs(ax, hists[key][name], i=i, label=name)
            ax.set_xlabel(labels.get(key, key))
            ax.set_ylabel("items [count]")
            ax.set_title(f"Per-item {key}")
        if keys:
            fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="upper center",
                       ncol=min(6, len(hists[keys[0]])), frameon=False, bbox_to_anchor=(0.5, 1.0))
        _adjust(fig, ncols, nrows, top=0.7)
    return render(fig, fmt)


def entropy_histograms(human: Mapping[str, Sequence[float]],
                       models: Mapping[str, Mapping[str, Sequence[float]]], *,
                       fmt: Format = "svg"):
    """Human entropy against each model's predictive entropy (nats), one panel per model.

    ``human`` and each value of ``models`` are histograms ``{"edges", "counts"}`` on the same edges.
    """
    names = list(models)
    h_edges = np.asarray(human["edges"], dtype=float)
    h_counts = np.asarray(human["counts"], dtype=float)
    with matplotlib.rc_context(_RC):
        fig, axes, used, ncols, nrows = _panel_grid(
            len(names), 4, width=lambda c: max(5.0, 2.9 * c), height=2.9)
        for j, (name, ax) in enumerate(zip(names, used, strict=True)):
            ax.stairs(h_counts, h_edges, fill=True, color="#BBBBBB", label="human votes")
            _stairs(ax, models[name], i=j, label="model (panel title)")
            ax.set_xlabel(f"entropy [{ENTROPY_UNIT}]")
            ax.set_ylabel("items [count]")
            ax.set_title(mpl_text(name))
        if names:
            fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="upper center", ncol=2,
                       frameon=False, bbox_to_anchor=(0.5, 1.0))
        _adjust(fig, ncols, nrows, left=0.65, top=0.65, wspace=0.6, hspace=0.95)
    return render(fig, fmt)


def per_bin_bars(bin_labels: Sequence[str], values: Mapping[str, Mapping[str, Sequence[float]]],
                 *, ceiling: Mapping[str, Sequence[float]] | None = None,
                 metric_labels: Mapping[str, str] | None = None,
                 metric_titles: Mapping[str, str] | None = None, fmt: Format = "svg"):
    """Grouped bars: one panel per metric, agreement bins on x, one bar per model.

    Parameters
    ----------
    bin_labels : sequence of str
        Label of each agreement bin (lowest human entropy first).
    values : mapping metric -> (mapping model -> per-bin values)
    ceiling : mapping metric -> per-bin values, optional
        Split-half human ceiling drawn as a black line with markers.
    metric_labels : mapping metric -> axis label, optional
    metric_titles : mapping metric -> panel title, optional
    """
    metrics = list(values)
    metric_labels = dict(metric_labels or {})
    metric_titles = dict(metric_titles or metric_labels)
    x = np.arange(len(bin_labels))
    with matplotlib.rc_context(_RC):
        fig, axes, used, ncols, nrows = _panel_grid(len(metrics), 3, width=12.0, height=3.6)
        for metric, ax in zip(metrics, used, strict=True):
            models = list(values[metric])
            w = 0.8 / max(1, len(models))
            for i, name in enumerate(models):
                vals = np.asarray(values[metric][name], dtype=float)
                ax.bar(x - 0.4 + w * (i + 0.5), np.nan_to_num(vals), width=w, color=color(i),
                       hatch=_HATCHES[i % len(_HATCHES)], edgecolor="white", linewidth=0.3,
                       label=mpl_text(name))
            if any(np.nanmin(np.asarray(v, dtype=float), initial=0.0) < 0
                   for v in values[metric].values()):  # a signed metric: its ideal, 0
                ax.axhline(0.0, color="#555555", linewidth=0.8, zorder=0)
            if ceiling and metric in ceiling:
                ax.plot(x, np.asarray(ceiling[metric], dtype=float), color=HUMAN_COLOR,
                        marker="o", linewidth=1.2, label="human split-half")
            ax.set_xticks(x)
            ax.set_xticklabels(bin_labels, rotation=20, ha="right", fontsize=7)
            ax.set_xlabel(f"agreement bin, human entropy [{ENTROPY_UNIT}]")
            ax.set_ylabel(metric_labels.get(metric, metric))
            ax.set_title(metric_titles.get(metric, metric))
        handles, labels = axes[0, 0].get_legend_handles_labels()
        for ax in axes.ravel()[1:]:
            for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
        fig.legend(handles, labels, loc="upper center", ncol=min(6, len(labels)), frameon=False,
                   bbox_to_anchor=(0.5, 1.0))
        _adjust(fig, ncols, nrows, bottom=0.95, top=0.75, hspace=1.25)
    return render(fig, fmt)


def _recommendation_marks(ax, x: np.ndarray, epsilon: float | None, recommended_k: int | None,
                          k_interval: tuple[int | None, int | None] | None) -> None:
    """The tolerance (dashed), the recommended k (dotted) and its interval (a band)."""
    if epsilon is not None:
        ax.axhline(epsilon, color="grey", linestyle="--",
                   label=f"tolerance ε = {epsilon:g} (TVD)")
    if recommended_k is not None:
        ax.axvline(recommended_k, color=HUMAN_COLOR, linestyle=":",
                   label=f"recommended k = {recommended_k}")
        if k_interval is not None and k_interval[0] is not None:
            hi = k_interval[1] if k_interval[1] is not None else float(x.max())
            ax.axvspan(k_interval[0], hi, color=HUMAN_COLOR, alpha=0.08, linewidth=0,
                       label=f"interval of k: {k_interval[0]} to {hi:g}")


def subsampling_curve(k: Sequence[int], mean: Sequence[float], low: Sequence[float],
                      high: Sequence[float], *, jsd: Sequence[float] | None = None,
                      majority_agreement: Sequence[float] | None = None,
                      epsilon: float | None = None, recommended_k: int | None = None,
                      k_interval: tuple[int | None, int | None] | None = None,
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
    k_interval : (int, int), optional
        The interval of the recommended k, drawn as a band (an open end: the largest k).
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
    x = np.asarray(k, dtype=float)
    ncols = 1 if majority_agreement is None else 2
    band = ("interval over repetitions" if interval is None
            else f"TVD {100 * interval:g}% interval over repetitions")
    with matplotlib.rc_context(_RC):
        fig, axes = _figure(ncols, width=6.0 if ncols == 1 else 10.0, height=3.8)
        ax = axes[0, 0]
        ax.fill_between(x, np.asarray(low, float), np.asarray(high, float), color=OKABE_ITO[5],
                        alpha=0.35, label=band)
        ax.plot(x, np.asarray(mean, float), marker="o", color=OKABE_ITO[0],
                label="mean" if jsd is None else "TVD (mean)")
        if jsd is not None:
            ax.plot(x, np.asarray(jsd, float), marker="s", color=OKABE_ITO[1],
                    linestyle="--", label="Jensen-Shannon distance (mean)")
        _recommendation_marks(ax, x, epsilon, recommended_k, k_interval)
        ax.set_ylabel("TVD to all votes [probability]" if jsd is None
                      else "TVD [probability], JSD [sqrt(nats)]")
        ax.set_title(title)
        ax.legend(frameon=False)
        if majority_agreement is not None:
            ax2 = axes[0, 1]
            ax2.plot(x, np.asarray(majority_agreement, float), marker="o", color=OKABE_ITO[2])
            ax2.set_ylabel("k-vote majority = all-vote majority [rate]")
            ax2.set_title("Majority agreement")
        for a in axes[0]:
            a.set_xlabel("votes per item, k [votes]")
            if ncols == 2:  # log k with the k values as ticks
                a.set_xscale("log")
                a.set_xticks(x.tolist())
                a.set_xticklabels([str(int(v)) for v in x])
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
