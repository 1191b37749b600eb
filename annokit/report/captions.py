"""Numbered titles and captions of the report's figures, shared by the HTML and Markdown pages.

Figure ids are those of :func:`annokit.report.figures.report_figures`; the
numbers follow :func:`figure_order`, the order both pages show them in. Which
metrics the figures show comes from the registry field ``headline``
(:attr:`annokit.metrics.registry.MetricSpec.headline`, copied into
:attr:`annokit.report.model.MetricInfo.headline`), never from names written here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from annokit.core.soft_labels import ENTROPY_UNIT
from annokit.report.model import MetricInfo, Report

__all__ = ["TINY_BIN", "FigureText", "figure_order", "figure_texts", "headline_metrics"]

#: Confidence bins with fewer items than this are drawn hatched and marked in the
#: reliability diagrams: their observed accuracy is mostly noise.
TINY_BIN = 10

_MAX_PANELS = 6


@dataclass(frozen=True)
class FigureText:
    """One figure's number, title and caption (plain text; renderers escape it)."""

    key: str
    number: int
    title: str
    caption: str

    @property
    def label(self) -> str:
        """``Figure 3. Title``."""
        return f"Figure {self.number}. {self.title}"


def headline_metrics(report: Report) -> list[MetricInfo]:
    """The reported metrics the figures show: those the registry marks ``headline``; when
    none of the reported metrics is one, the first six reported."""
    marked = [i for i in report.metrics if i.headline]
    return marked or list(report.metrics[:_MAX_PANELS])


def figure_order(keys: Iterable[str]) -> list[str]:
    """Page order: per-bin first, the reliability diagrams by model, the positive-class
    reliability, histograms, label distributions, subsampling, per-annotator errors."""
    rank = {"per-bin": 0, "binary-reliability": 2, "error-histograms": 3,
            "entropy-histograms": 4, "label-distributions": 5, "subsampling": 6,
            "annotator-errors": 7, "annotator-pairs": 7}

    def key(k: str) -> tuple[int, int]:
        if k.startswith("reliability-"):
            return 1, int(k.split("-", 1)[1])
        return rank.get(k, 8), 0

    return sorted(keys, key=key)


def _names(infos: list[MetricInfo]) -> str:
    return ", ".join(f"{i.name} ({i.unit})" for i in infos)


def _texts(report: Report, key: str, numbers: dict[str, int]) -> tuple[str, str]:
    """A figure's title and caption: the function of its kind of figure."""
    write = _reliability if key.startswith("reliability-") else _CAPTIONS.get(key)
    return (key, "") if write is None else write(report, key, numbers)


def _per_bin(report: Report, key: str, numbers: dict[str, int]) -> tuple[str, str]:
    heads = headline_metrics(report)
    ceiling = ("; black line and dots: the split-half human ceiling (H1 against all votes)"
               if report.human_ceiling is not None else "")
    return ("Headline metrics across agreement bins (Nie et al. 2020, Figs. 4-5)",
            (f"One panel per headline metric of the registry: {_names(heads)}. Bars: models"
             f"{ceiling}. Agreement bins from high agreement (low human entropy, left) to low "
             f"agreement (right), human entropy in {ENTROPY_UNIT}. Every registered metric, "
             "per bin, is "
             "in the per-bin tables."))


def _reliability(report: Report, key: str, numbers: dict[str, int]) -> tuple[str, str]:
    index = int(key.split("-", 1)[1])
    name = report.models[index].name
    if index > 0 and "reliability-0" in numbers:
        return (f"Reliability diagrams: {name}",
                f"As Figure {numbers['reliability-0']}, for {name}.")
    n_bins = report.settings.n_bins
    return (f"Reliability diagrams: {name}",
            (f"Left: hard labels, accuracy against the majority; right: soft labels, mean "
             f"human probability of the predicted label; {n_bins} equal-width bins of the "
             "model's confidence (top-label probability). Bar: observed value, more opaque "
             "the more items the bin holds; black tick: mean confidence; red line: the gap "
             "between them (calibration error of the bin); dashed diagonal: perfect "
             "calibration. Numbers above the bars: items per bin; 'empty': no item; hatched "
             f"bar and red number: fewer than {TINY_BIN} items."))


def _error_histograms(report: Report, key: str, numbers: dict[str, int]) -> tuple[str, str]:
    heads = headline_metrics(report)
    per_item = [i for i in heads if i.name in report.models[0].histograms] \
        if report.models else []
    return ("Per-item values of the headline metrics (Baan et al. 2022, Fig. 1)",
            (f"Histograms of the per-item values whose mean is the metric: {_names(per_item)}; "
             "one outline per model on shared edges. All per-item values: annokit evaluate "
             "--per-item."))


def _entropy_histograms(report: Report, key: str, numbers: dict[str, int]) -> tuple[str, str]:
    n = len(report.labels)
    return ("Human and model entropy",
            (f"Entropy in {ENTROPY_UNIT}, on [0, ln {n}] {ENTROPY_UNIT} (ChaosNLI reports bits: "
             "divide by ln 2). "
             "Grey: the human vote distribution of each item; outline: the model's "
             "predictive distribution."))


def _binary_reliability(report: Report, key: str, numbers: dict[str, int]) -> tuple[str, str]:
    pos = report.positive_label
    return (f"Positive-class reliability (positive label: {pos})",
            (f"Two labels: {report.settings.n_bins} equal-width bins of the model's "
             f"probability of the positive label {pos!r}, one panel per model. Bar: share of "
             f"the bin's items whose majority label is {pos!r}, more opaque the more items "
             f"the bin holds (hatched: fewer than {TINY_BIN}); black tick: the bin's mean "
             f"p({pos}); dashed diagonal: perfect calibration; numbers: items per bin. "
             "ECE and MCE on these bins: ece_binary and mce_binary in the tables "
             "(annokit.metrics.binary.binary_reliability; choose the positive label with "
             "--positive)."))


def _label_distributions(report: Report, key: str, numbers: dict[str, int]) -> tuple[str, str]:
    return (f"Label distributions in scale order ({report.scale} scale)",
            ("Mean human vote distribution (grey) and each model's mean predicted "
             "distribution (colours), labels along the x axis in scale order "
             f"({', '.join(report.labels)}); first panel: all items, then one per agreement "
             f"bin (human entropy, {ENTROPY_UNIT}). Order-aware metrics (Wasserstein, RPS, ...) "
             "are in "
             "the tables."))


def _annotator_errors(report: Report, key: str, numbers: dict[str, int]) -> tuple[str, str]:
    p = report.perspectivist
    text = ("Distribution over annotators of the model's per-annotator error rate (share of "
            "the annotator's items whose predicted label is not theirs)")
    if p is not None and "mean_distance" in p.histograms:
        text += (f" and mean normalised distance |v_pred - v_actual| / {p.normalizer:g} "
                 "(ordered scale)")
    text += (". Lines: the LeWiDi 2025 per-annotator score (mean over items of the "
             "item's mean error), the median over annotators, and the pooled score (the "
             "same predictions pooled per item against the pooled votes); their difference "
             "is the gap in the per-annotator tables "
             "(annokit.metrics.perspectivist.evaluate_annotators).")
    return "Per-annotator errors (perspectivist evaluation)", text


def _annotator_pairs(report: Report, key: str, numbers: dict[str, int]) -> tuple[str, str]:
    pairs = report.annotator_quality.pairs if report.annotator_quality else None
    if pairs is None:
        return key, ""
    return ("Agreement between pairs of annotators",
            f"Cohen's kappa (weights {pairs.weights}) of each pair of annotators on the items "
            f"both labelled, for the {pairs.n_pairs} pairs sharing at least "
            f"{pairs.min_shared} items (blank: the {pairs.n_left_out} pairs with fewer, and kappa "
            "undefined where an annotator used one label throughout); "
            f"{len(pairs.annotators)} annotators (at most the 60 with the most votes), "
            "ordered by average-linkage clustering of 1 - kappa so that annotators who "
            "agree stand together (annokit annotators --pairs gives every pair).")


def _subsampling(report: Report, key: str, numbers: dict[str, int]) -> tuple[str, str]:
    rec = report.subsampling_recommendation
    text = ("Mean total variation distance (TVD) between the vote distribution of k random "
            "votes and that of all votes of an item, with its interval over repetitions.")
    if rec is not None:
        text += f" Dashed: the tolerance, expected TVD {rec.epsilon:g}."
        if rec.k is not None:
            text += (f" Recommended k = {rec.k} (interval {rec.interval_text()}), "
                     f"{rec.source}, against the {rec.target}")
            text += ("; drawn as a dotted line and band." if rec.source == "observed" else
                     "; not drawn: the curve measures the distance to the votes collected "
                     "(0 once k is all of them), a different target, so k is not read off "
                     "it.")
        elif rec.note:
            text += f" No k is recommended: {rec.note}."
    return "How many annotations are enough", text


_CAPTIONS = {
    "per-bin": _per_bin,
    "error-histograms": _error_histograms,
    "entropy-histograms": _entropy_histograms,
    "binary-reliability": _binary_reliability,
    "label-distributions": _label_distributions,
    "annotator-errors": _annotator_errors,
    "annotator-pairs": _annotator_pairs,
    "subsampling": _subsampling,
}


def figure_texts(report: Report, keys: Iterable[str]) -> list[FigureText]:
    """Numbered title and caption of each figure id, in page order (:func:`figure_order`)."""
    numbers = {k: i + 1 for i, k in enumerate(figure_order(keys))}
    return [FigureText(k, n, *_texts(report, k, numbers)) for k, n in numbers.items()]
