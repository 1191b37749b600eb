"""Statistics of numeric labels (ordinal numbers, interval and ratio scales) for ``annokit stats``.

On a numeric scale a label is a number, not a category: a 0-100 slider has 101 possible
labels and listing votes or majorities per label, or a nominal agreement coefficient over
101 categories, says little. :func:`rating_summary` describes the numbers instead: the
distribution of all votes (mean, sd, quantiles and a histogram on round bin edges, from the
label totals) and of the items (mean, sd and Sarle's bimodality coefficient per item).
:func:`by_scale` then keeps only the figures that mean something on the scale
(:data:`NOMINAL_ONLY`, :data:`CATEGORY_ONLY`); both the in-memory and the Dask statistics
call it, so they print the same keys.
"""

from __future__ import annotations

import math
from itertools import pairwise
from typing import Any

import numpy as np

from annokit.core.scales import NUMERIC_SCALES

__all__ = ["BIMODAL", "CATEGORY_ONLY", "LIST_LEVELS", "NOMINAL_ONLY", "QUANTILES", "by_scale",
           "nice_edges", "rating_rows", "rating_summary", "vote_values"]

#: Sarle's bimodality coefficient above 5/9 (its value for a uniform distribution)
#: suggests a bimodal item (Pfister et al. 2013, DOI:10.3389/fpsyg.2013.00700).
BIMODAL = 5 / 9
#: Figures of unordered categories only: ``null`` in ``stats --json`` on ordered scales.
NOMINAL_ONLY = ("majority_counts", "fleiss_kappa")
#: Figures of categories (an exact value is a category): ``null`` on interval and ratio scales,
#: where two ratings of 50 and 51 would count as a disagreement.
CATEGORY_ONLY = ("entropy", "agreement", "ties")
#: Quantiles of the votes' values reported on numeric scales.
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
#: At most this many labels are listed one by one (with their vote counts); a numeric scale
#: with more distinct values is shown as a histogram.
LIST_LEVELS = 12
#: Bins a histogram aims at (:func:`nice_edges`).
TARGET_BINS = 10


def nice_edges(low: float, high: float, *, integers: bool, target: int = TARGET_BINS
               ) -> np.ndarray:
    """Round bin edges covering ``[low, high]``: at most ``target + 2`` bins of width 1, 2, 2.5
    or 5 times a power of ten (the narrowest such), starting at a multiple of the width.

    Bins are ``[e_j, e_{j+1})``; the last edge is above ``high``, so a bin never mixes the top
    value with others by a closed last bin (a slider's 100 is a bin of its own, as its
    extremes are often where ratings pile up). Integer data get integer widths.

    Examples
    --------
    >>> nice_edges(0, 100, integers=True).tolist()[::5]
    [0.0, 50.0, 100.0]
    >>> nice_edges(1, 6, integers=True).tolist()
    [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    >>> nice_edges(-0.3, 0.9, integers=False).tolist()[:3]
    [-0.4, -0.2, 0.0]
    >>> nice_edges(-50.0003, 50.0003, integers=False)[[0, -1]].tolist()
    [-60.0, 60.0]
    """
    span = float(high) - float(low)
    ratio = span / target
    power = 10.0 ** math.floor(math.log10(ratio)) if ratio > 0 else 1.0
    if power == 0.0 or not math.isfinite(power):  # a span of subnormals: one bin, as for equal values
        power = 1.0
    for m in (1, 2, 2.5, 5, 10, 20):  # the narrowest round width giving at most target + 2 bins
        width = m * power
        if integers:
            width = max(1.0, float(math.ceil(width)))
        start = math.floor(low / width) * width
        if start > low:  # low / width underflowed to -0.0
            start -= width
        n = math.floor((high - start) / width + 1e-9) + 1
        if n <= target + 2:
            break
    edges = start + width * np.arange(n + 1, dtype=np.float64)
    rounded = np.asarray([float(f"{e:.12g}") for e in edges])  # 0.3, not 0.30000000000000004
    if (np.diff(rounded) > 0).all() and rounded[0] <= low and high < rounded[-1]:
        return rounded
    return edges  # widths below 12 significant digits of the values: the exact edges


def _quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """``numpy.quantile`` (linear) of ``values`` repeated ``weights`` times, without repeating."""
    order = np.argsort(values, kind="stable")
    v, c = values[order], np.cumsum(weights[order])
    h = (c[-1] - 1) * q
    lo, hi = math.floor(h), math.ceil(h)
    a = v[np.searchsorted(c, lo, side="right")]
    b = v[np.searchsorted(c, hi, side="right")]
    return float(a + (b - a) * (h - lo))


def vote_values(values: np.ndarray, totals: np.ndarray) -> dict[str, Any]:
    """The distribution of all votes on numeric labels, from the votes per label.

    Parameters
    ----------
    values : ndarray of shape (n_labels,)
        Each label's number.
    totals : ndarray of shape (n_labels,)
        Votes per label.

    Returns
    -------
    dict
        ``n_distinct`` (labels with a vote), ``min``, ``max``, ``mean``, ``sd`` (sample sd of
        the votes), ``quantiles`` {"5%": ..., "95%": ...} (as ``numpy.quantile`` of every
        vote) and ``histogram`` {``edges``, ``counts``, ``bins``: a name per bin, ``"0..9"`` for
        integers, ``"[0.2, 0.4)"`` otherwise} on :func:`nice_edges`.

    Examples
    --------
    >>> s = vote_values(np.array([1.0, 2.0, 5.0]), np.array([2, 0, 2]))
    >>> s["mean"], s["quantiles"]["50%"], s["histogram"]["counts"][:2]
    (3.0, 3.0, [2, 0])
    """
    totals = np.asarray(totals, dtype=np.int64)
    used = totals > 0
    v, w = np.asarray(values, dtype=np.float64)[used], totals[used]
    n = int(w.sum())
    mean = math.fsum(v * w) / n
    var = math.fsum(w * (v - mean) ** 2) / (n - 1) if n > 1 else float("nan")
    integers = bool(np.all(v == np.round(v)))
    edges = nice_edges(v.min(), v.max(), integers=integers)
    counts = np.bincount(np.searchsorted(edges, v, side="right") - 1, weights=w,
                         minlength=edges.size - 1).astype(np.int64)
    return {
        "n_distinct": int(used.sum()), "min": float(v.min()), "max": float(v.max()),
        "mean": mean, "sd": math.sqrt(var) if n > 1 else None,
        "quantiles": {f"{100 * q:g}%": _quantile(v, w, q) for q in QUANTILES},
        "histogram": {"edges": edges.tolist(), "counts": counts.tolist(),
                      "bins": _bin_names(edges, integers, float(v.max()))},
    }


def _num(x: float) -> str:
    return f"{x:g}" if abs(x) < 1e15 else f"{x:.6g}"


def _bin_names(edges: np.ndarray, integers: bool, high: float) -> list[str]:
    if integers:  # the integers in each bin: "0..9", ..., and "100" for a last bin of one value
        tops = np.minimum(edges[1:] - 1, high)
        return [_num(a) if t == a else f"{_num(a)}..{_num(t)}" for a, t in zip(edges[:-1], tops, strict=True)]
    return [f"[{_num(a)}, {_num(b)})" for a, b in pairwise(edges)]


def rating_summary(counts: np.ndarray, labels: Any, mult: np.ndarray | None = None
                   ) -> dict[str, Any] | None:
    """``ratings`` of :func:`~annokit.quality.dataset_stats.dataset_stats`.

    ``counts`` holds one row of label counts per item, or (the Dask engine) one row per
    distinct count vector with ``mult`` items each. None unless the labels are numbers on
    an ordered scale (ordinal labels that are numbers, a 1-7 Likert scale, count as numbers).

    Returns
    -------
    dict or None
        ``item_mean``, ``item_sd`` (sample) and ``bimodality`` (Sarle's coefficient;
        ``n_bimodal`` items above ``threshold`` 5/9), each {mean, median, n_items} over items,
        and ``votes`` (:func:`vote_values`: the distribution of every vote's number).
    """
    if labels.scale == "nominal" or labels.values is None:
        return None
    from annokit.core.ratings import Ratings
    from annokit.core.votes import Votes

    mult = np.ones(len(counts), dtype=np.int64) if mult is None else np.asarray(mult)
    r = Ratings.from_votes(Votes.from_counts(counts, labels=labels),
                           scale="ratio" if labels.scale == "ratio" else "interval")
    mean, sd, bc = r.mean(), r.std(), r.bimodality(warn=False)

    def summary(x: np.ndarray) -> dict[str, Any]:
        ok = ~np.isnan(x)
        every = np.repeat(x[ok], mult[ok])  # one value per item
        return {"mean": math.fsum(every) / every.size if every.size else None,
                "median": float(np.median(every)) if every.size else None,
                "n_items": int(every.size)}

    totals = (np.asarray(counts, dtype=np.int64) * mult[:, None]).sum(axis=0)
    return {"item_mean": summary(mean), "item_sd": summary(sd),
            "bimodality": {**summary(bc), "n_bimodal": int(mult[bc > BIMODAL].sum()),
                           "threshold": BIMODAL},
            "votes": vote_values(labels.values, totals)}


def by_scale(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` (a ``stats --json`` object) with the figures its scale has no use for set
    to None: :data:`NOMINAL_ONLY` on ordered scales, and :data:`CATEGORY_ONLY` as well on
    interval and ratio scales. The keys stay (a documented interface).

    Examples
    --------
    >>> by_scale({"scale": "ordinal", "fleiss_kappa": {"value": 0.1}, "ties": 3})
    {'scale': 'ordinal', 'fleiss_kappa': None, 'ties': 3}
    """
    scale = result.get("scale", "nominal")
    drop = (() if scale == "nominal" else NOMINAL_ONLY) + (
        CATEGORY_ONLY if scale in NUMERIC_SCALES else ())
    for key in drop:
        if key in result:
            result[key] = None
    return result


def _fmt(x: Any) -> str:
    return "n/a" if x is None else f"{x:.4f}"


def rating_rows(stats: dict[str, Any], *, width: int = 30) -> list[tuple[str, str]]:
    """Table rows of the ``ratings`` of a ``stats`` object: the votes' mean, sd, quantiles and,
    with more than :data:`LIST_LEVELS` distinct values, their histogram (a row per bin, with
    a bar of ``#``), then the per-item mean, sd and bimodality.
    """
    rt = stats.get("ratings")
    if not rt:
        return []
    rows: list[tuple[str, str]] = []
    votes = rt.get("votes")
    if votes:
        rows.append(("ratings (mean / sd)", f"{_fmt(votes['mean'])} / {_fmt(votes['sd'])}"))
        q = votes["quantiles"]
        rows.append((f"ratings quantiles {'/'.join(k.rstrip('%') for k in q)}%",
                     " / ".join(f"{v:.6g}" for v in q.values())))
        if votes["n_distinct"] > LIST_LEVELS:
            h = votes["histogram"]
            top = max(h["counts"]) or 1
            pad = max(len(b) for b in h["bins"])
            digits = len(f"{top:,}")
            step = h["edges"][1] - h["edges"][0]
            title = f"ratings histogram ({len(h['counts'])} bins of {_num(step)})"
            for j, (name, c) in enumerate(zip(h["bins"], h["counts"], strict=True)):
                bar = "#" * round(width * c / top)
                rows.append((title if j == 0 else "",
                             f"{name.ljust(pad)}  {f'{c:,}'.rjust(digits)}  {bar}".rstrip()))
    rows += [("item mean rating (mean / median)",
              f"{_fmt(rt['item_mean']['mean'])} / {_fmt(rt['item_mean']['median'])}"),
             ("item rating sd (mean / median)",
              f"{_fmt(rt['item_sd']['mean'])} / {_fmt(rt['item_sd']['median'])}"),
             ("bimodality coefficient (median)",
              (f"{_fmt(rt['bimodality']['median'])} ({rt['bimodality']['n_bimodal']:,} of "
               f"{rt['bimodality']['n_items']:,} items above 5/9)"))]
    return rows
