"""Report figures that depend on the label scale or on annotator predictions.

Drawn like :mod:`annokit.report.plots` (Agg backend, Okabe-Ito colours, every
axis labelled, deterministic SVG), from plain lists:

* :func:`label_distribution_bars`: mean human and model label distributions as
  grouped bars with the categories on the x axis in scale order (ordered scales);
* :func:`binary_reliability_diagrams`: positive-class reliability, p(positive)
  bins against the positive frequency (two labels);
* :func:`annotator_histograms`: per-annotator error rate (and distance) over
  annotators, with the pooled and per-annotator scores marked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib
import matplotlib.colors
import matplotlib.patches
import numpy as np

from annokit.report import plots
from annokit.report.plots import (
    _HATCHES,
    _RC,
    HUMAN_COLOR,
    OKABE_ITO,
    TINY_BIN,
    Format,
    _adjust,
    _figure,
    _panel_grid,
    color,
    mpl_text,
)
from annokit.report.tables import fmt_number

__all__ = ["annotator_histograms", "binary_reliability_diagrams", "label_distribution_bars"]

_HUMAN_FILL = "#BBBBBB"
_LEGEND_GREY = "#8C8C8C"  # legend swatches of bars drawn in each model's colour


def _nan(values: Sequence[Any]) -> np.ndarray:
    return np.asarray([np.nan if v is None else v for v in values], dtype=float)


def _legend(fig, axes, ncol: int) -> None:
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=max(1, min(6, ncol)), frameon=False,
               bbox_to_anchor=(0.5, 1.0))


def label_distribution_bars(labels: Sequence[str],
                            panels: Mapping[str, tuple[Sequence[Any], Mapping[str, Sequence[Any]]]],
                            *, fmt: Format = "svg"):
    """Human against model label distributions: categories on x in scale order, grouped bars.

    Parameters
    ----------
    labels : sequence of str
        The categories in scale order (left to right).
    panels : mapping title -> (human shares, mapping model -> shares)
        One panel each (e.g. all items, then each agreement bin); shares in
        ``labels`` order, None for an empty panel.
    """
    titles = list(panels)
    x = np.arange(len(labels))
    with matplotlib.rc_context(_RC):
        fig, axes, used, ncols, nrows = _panel_grid(len(titles), 3, width=12.0, height=3.2)
        for j, ax in enumerate(used):
            human, models = panels[titles[j]]
            w = 0.8 / (1 + len(models))
            ax.bar(x - 0.4 + w / 2, np.nan_to_num(_nan(human)), width=w, color=_HUMAN_FILL,
                   edgecolor=HUMAN_COLOR, linewidth=0.6, label="human votes")
            for i, name in enumerate(models):
                ax.bar(x - 0.4 + w * (i + 1.5), np.nan_to_num(_nan(models[name])), width=w,
                       color=color(i), hatch=_HATCHES[i % len(_HATCHES)], edgecolor="white",
                       linewidth=0.3, label=mpl_text(name))
            ax.set_xticks(x)
            ax.set_xticklabels([mpl_text(lab) for lab in labels],
                               rotation=30 if len(labels) > 8 else 0, fontsize=7)
            ax.set_xlabel("label, in scale order [category]")
            ax.set_ylabel("mean share [probability]")
            ax.set_title(mpl_text(titles[j]))
        _legend(fig, axes, 1 + len(panels[titles[0]][1]) if titles else 1)
        _adjust(fig, ncols, nrows, bottom=0.6, top=0.7, hspace=1.0)
    return plots.render(fig, fmt)  # looked up at call time (tests patch it)


def binary_reliability_diagrams(models: Mapping[str, Mapping[str, Sequence[Any]]], *,
                                positive_label: str, fmt: Format = "svg"):
    """Positive-class reliability diagrams, one panel per model.

    Each non-empty bin of p(positive) is a bar at the observed frequency of the
    positive class (more opaque the more items; hatched below :data:`TINY_BIN`),
    with a black tick at the bin's mean p(positive); dashed diagonal: perfect
    calibration; items per bin above the bars.

    Parameters
    ----------
    models : mapping model -> bins
        ``edges`` (n_bins + 1), ``count``, ``mean_probability``, ``frequency``
        (None or NaN for empty bins).
    positive_label : str
        The positive class, for the axis labels.
    """
    names = list(models)
    pos = mpl_text(positive_label)
    with matplotlib.rc_context(_RC):
        fig, axes, used, ncols, nrows = _panel_grid(
            len(names), 3, width=lambda c: max(5.0, 4.0 * c), height=3.6)
        for j, ax in enumerate(used):
            b = models[names[j]]
            edges = np.asarray(b["edges"], dtype=float)
            count = np.asarray(b["count"], dtype=float)
            freq, mean_p = _nan(b["frequency"]), _nan(b["mean_probability"])
            width = np.diff(edges)
            centers = edges[:-1] + width / 2
            ok = count > 0
            tiny = ok & (count < TINY_BIN)
            alpha = np.where(ok, 0.25 + 0.75 * count / max(1.0, count.max()), 0.0)
            ax.plot([0, 1], [0, 1], linestyle="--", color="#777777", linewidth=0.9,
                    label="perfect calibration", zorder=1)
            for k in np.flatnonzero(ok):
                ax.bar(centers[k], freq[k], width=width[k] * 0.9, zorder=2,
                       color="none" if tiny[k] else matplotlib.colors.to_rgba(color(j), alpha[k]),
                       edgecolor=color(j), linewidth=0.6, hatch="////" if tiny[k] else "")
            ax.hlines(mean_p[ok], centers[ok] - width[ok] * 0.45, centers[ok] + width[ok] * 0.45,
                      color=HUMAN_COLOR, linewidth=1.4, zorder=4, label="mean p(positive)")
            for c, n, t in zip(centers, count, tiny, strict=True):
                ax.text(c, 1.03, "" if n == 0 else f"{int(n)}", ha="center", va="bottom",
                        fontsize=6, color=OKABE_ITO[3] if t else "#333333")
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1.12)
            ax.set_xlabel(f"p({pos}) [probability]")
            ax.set_ylabel(f"majority is {pos} [rate]")
            ax.set_title(f"{mpl_text(names[j])} (positive: {pos})", pad=12)
        handles, texts = axes[0, 0].get_legend_handles_labels()
        handles += [matplotlib.patches.Patch(facecolor=_LEGEND_GREY, edgecolor=_LEGEND_GREY),
                    matplotlib.patches.Patch(facecolor="white", edgecolor=_LEGEND_GREY,
                                             hatch="////")]
        texts += [f"share with majority {pos} (bars in the model's colour)",
                  f"the same, fewer than {TINY_BIN} items"]
        fig.legend(handles, texts, loc="upper center", ncol=2, frameon=False,
                   bbox_to_anchor=(0.5, 1.0))
        _adjust(fig, ncols, nrows, top=0.95, hspace=1.35)
    return plots.render(fig, fmt)  # looked up at call time (tests patch it)


def annotator_histograms(hists: Mapping[str, Mapping[str, Sequence[float]]], *,
                         markers: Mapping[str, Mapping[str, float]] | None = None,
                         labels: Mapping[str, str] | None = None, fmt: Format = "svg"):
    """Per-annotator values over annotators: one histogram panel per metric.

    Parameters
    ----------
    hists : mapping metric -> histogram ``{"edges", "counts"}`` (annotators per bin)
    markers : mapping metric -> (mapping description -> value), optional
        Vertical lines, e.g. the pooled score and the per-annotator score.
    labels : mapping metric -> x-axis label, optional
    """
    keys = list(hists)
    markers = dict(markers or {})
    labels = dict(labels or {})
    styles = ("-", "--", ":", "-.")
    ncols = max(1, len(keys))
    with matplotlib.rc_context(_RC):
        fig, axes = _figure(ncols, width=max(5.0, 5.0 * ncols), height=3.4)
        for j, ax in enumerate(axes.ravel()):
            key = keys[j]
            ax.stairs(np.asarray(hists[key]["counts"], dtype=float),
                      np.asarray(hists[key]["edges"], dtype=float), fill=True, color=_HUMAN_FILL,
                      label="annotators")
            for i, (what, value) in enumerate(markers.get(key, {}).items()):
                if value is not None and np.isfinite(value):
                    ax.axvline(value, color=OKABE_ITO[i % len(OKABE_ITO)],
                               linestyle=styles[i % len(styles)], linewidth=1.4,
                               label=mpl_text(f"{what} {fmt_number(float(value))}"))
            ax.set_xlabel(labels.get(key, key))
            ax.set_ylabel("annotators [count]")
            ax.set_title(f"Per-annotator {key}")
            ax.legend(frameon=False, fontsize=7)
        _adjust(fig, ncols, 1, top=0.45)
    return plots.render(fig, fmt)  # looked up at call time (tests patch it)
