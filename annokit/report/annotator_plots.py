"""The report's figure of agreement between pairs of annotators (a clustered kappa heatmap)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib
import numpy as np

from annokit.report.plots import _RC, Format, _adjust, _figure, mpl_text, render

__all__ = ["pair_heatmap"]


def pair_heatmap(annotators: Sequence[str], kappa: Sequence[Sequence[float | None]], *,
                 fmt: Format = "svg"):
    """Cohen's kappa of each pair (rows and columns in the given, clustered, order); pairs
    without enough shared items are left blank. Colours from -1 (disagreement) to 1."""
    mat = np.array([[np.nan if x is None else x for x in row] for row in kappa], dtype=float)
    n = len(annotators)
    size = min(9.0, 2.5 + 0.16 * n)
    with matplotlib.rc_context(_RC):
        fig, axes = _figure(1, 1, width=size + 1.4, height=size)
        ax = np.atleast_1d(axes).ravel()[0]
        image = ax.imshow(np.ma.masked_invalid(mat), cmap="RdBu", vmin=-1, vmax=1,
                          interpolation="nearest")
        ticks = np.arange(n)
        show = n <= 40
        ax.set_xticks(ticks if show else [])
        ax.set_yticks(ticks if show else [])
        if show:
            ax.set_xticklabels([mpl_text(a) for a in annotators], rotation=90, fontsize=7)
            ax.set_yticklabels([mpl_text(a) for a in annotators], fontsize=7)
        ax.set_xlabel("annotator" + ("" if show else f" ({n}, clustered order)"))
        ax.set_ylabel("annotator")
        fig.colorbar(image, ax=ax, label="Cohen's kappa [-1, 1]", shrink=0.8)
        _adjust(fig, 1, 1, left=0.9, right=0.4, top=0.3, bottom=0.9)
    return render(fig, fmt)
