"""Votes + model predictions -> the :class:`~annokit.report.model.Report` model.

Nothing here draws or writes files: :func:`build_report` computes numbers,
the renderers read them. The steps:

1. human distributions ``pi`` from the vote counts, their majority (ties:
   first tied label in label order, reported) and entropy;
2. agreement bins of items by human entropy in bits: equal-count quantile cut
   points (Nie et al. 2020, Sec. 5.4) or user edges;
3. per model, per-item values from :mod:`annokit.metrics.human` and
   :mod:`annokit.core.divergence` and binned metrics from
   :mod:`annokit.metrics.calibration`, globally and per agreement bin;
4. percentile bootstrap over items, with *one* resampling matrix shared by all
   models, so pairwise differences are paired bootstraps on the same items;
5. a split-half human ceiling (:func:`annokit.subsample.split_half`): two
   disjoint random k-vote halves H1 and H2 of each item's votes (Baan et al.
   2022, Sec. 5, use 20 of 100); H1 is scored against all votes like a model.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

import annokit
from annokit.core.checks import check_probs, check_rng
from annokit.core.divergence import jensen_shannon_distance, kl_divergence, tvd
from annokit.core.soft_labels import distributions, entropy, majority
from annokit.core.votes import Votes
from annokit.errors import DegenerateInputWarning, VoteSchemaError
from annokit.metrics import calibration, human
from annokit.report.model import (
    METRIC_KEYS,
    AnnotatorQuality,
    AnnotatorRow,
    BinCeiling,
    BinMetrics,
    Binning,
    Histogram,
    HumanCeiling,
    Interval,
    ModelReport,
    PairwiseDifference,
    Reliability,
    Report,
    Settings,
    SubsamplingPoint,
)

__all__ = [
    "ModelPredictions",
    "agreement_bins",
    "build_report",
    "per_item_values",
    "subsampling_rows",
]

#: Metrics that are means of per-item values (these sum back, weighted by n, over bins).
ADDITIVE_METRICS = ("accuracy", "dist_ce", "ent_ce", "ent_ce_signed", "jsd", "kl", "rank_cs")

_HIST_BINS = 20


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


def agreement_bins(human_entropy: Any, bins: int | Sequence[float] = 5
                   ) -> tuple[np.ndarray, np.ndarray, str, list[str]]:
    """Group items by human-label entropy.

    Parameters
    ----------
    human_entropy : ndarray of shape (n_items,)
        Entropy of each item's human distribution (bits in the report).
    bins : int or sequence of float, default 5
        An int: cut points at the ``b / bins`` quantiles of the entropies (Nie et
        al. 2020: "entropy quantiles as the cut points ... bins with roughly
        equal numbers"). Repeated cut points (many tied entropies, e.g. unanimous
        items) are merged, with a :class:`DegenerateInputWarning`. A sequence:
        increasing edges that must cover every entropy.

    Returns
    -------
    edges : ndarray of shape (n_bins + 1,)
    index : ndarray of int, shape (n_items,)
        Bin of each item: ``edges[b] <= H < edges[b + 1]``, the last bin closed.
    method : {"quantile", "edges"}
    notes : list of str
        What was merged, for the report.

    Examples
    --------
    >>> edges, idx, method, _ = agreement_bins([0.0, 0.2, 0.5, 0.9], 2)
    >>> edges.tolist(), idx.tolist()
    ([0.0, 0.35, 0.9], [0, 0, 1, 1])
    """
    h = np.asarray(human_entropy, dtype=np.float64)
    if h.ndim != 1 or h.size == 0:
        raise VoteSchemaError(f"human entropy must be a non-empty 1-D array; got shape {h.shape}")
    notes: list[str] = []
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if bins < 1:
            raise VoteSchemaError(f"bins must be a positive integer or a list of edges; got {bins}")
        edges = np.quantile(h, np.linspace(0.0, 1.0, int(bins) + 1))
        unique = np.unique(edges)
        msg = None
        if unique.size == 1:  # every item has the same entropy: one bin [H, H]
            unique = np.array([unique[0], unique[0]])
            if bins > 1:
                msg = (f"every item has the same human entropy ({h[0]:.4g} bits): {int(bins)} "
                       "bins requested, 1 formed")
        elif unique.size < edges.size:
            msg = (f"{edges.size - unique.size} repeated entropy quantile(s) merged: "
                   f"{int(bins)} bins requested, {unique.size - 1} formed (many items share "
                   "one entropy value)")
        if msg:
            warnings.warn(msg, DegenerateInputWarning, stacklevel=3)
            notes.append(msg)
        edges = unique
        method = "quantile"
    else:
        edges = np.asarray(list(bins), dtype=np.float64)
        if edges.ndim != 1 or edges.size < 2 or not np.all(np.isfinite(edges)):
            raise VoteSchemaError(f"bin edges must be at least two finite numbers; got {list(bins)}")
        if np.any(np.diff(edges) <= 0):
            raise VoteSchemaError(f"bin edges must be strictly increasing; got {edges.tolist()}")
        outside = (h < edges[0]) | (h > edges[-1])
        if outside.any():
            raise VoteSchemaError(
                f"bin edges [{edges[0]}, {edges[-1]}] leave out {int(outside.sum())} item(s) "
                f"with human entropy {h[outside][:3].round(4).tolist()}...; widen the edges")
        method = "edges"
    index = np.clip(np.searchsorted(edges, h, side="right") - 1, 0, edges.size - 2)
    return edges, index, method, notes


def per_item_values(probs: np.ndarray, human_probs: np.ndarray, majority_labels: np.ndarray
                    ) -> dict[str, np.ndarray]:
    """Per-item metric values of one model (means of these are the additive metrics).

    Keys: ``accuracy`` (0/1 vs majority), ``dist_ce`` (TVD, Baan Eq. 7),
    ``ent_ce_signed`` (Baan Eq. 5, nats) and ``ent_ce`` (its absolute value),
    ``jsd`` (Jensen-Shannon distance, scipy convention), ``kl`` (KL(human ||
    model), model clipped at 1e-15), ``rank_cs`` (0/1, Baan Eq. 6), plus
    ``entropy`` (model entropy, nats).
    """
    signed = human.entropy_calibration_error(probs, human_probs)
    return {
        "accuracy": human.accuracy(probs, majority_labels, reduction="none"),
        "dist_ce": human.distribution_calibration_error(probs, human_probs),
        "ent_ce_signed": signed,
        "ent_ce": np.abs(signed),
        "jsd": jensen_shannon_distance(human_probs, probs),
        "kl": kl_divergence(human_probs, probs),
        "rank_cs": human.rank_calibration_score(probs, human_probs).astype(np.float64),
        "entropy": entropy(probs, base=None),
    }


def subsampling_rows(votes: Votes, ks: Sequence[int], *, reps: int = 200,
                     rng: np.random.Generator | int | None = 0,
                     notes: list[str] | None = None) -> list[dict[str, Any]]:
    """The "how many annotations" curve of :func:`annokit.subsample.subsampling_curve` as rows.

    Items with fewer than k votes are skipped at that k (``short="skip"``); the
    warnings saying how many are appended to ``notes``. Pass the rows to
    :func:`build_report` as ``subsampling``.
    """
    from annokit.subsample import subsampling_curve

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DegenerateInputWarning)
        curve = subsampling_curve(votes, ks, reps=reps, rng=rng, short="skip", grid=False)
    if notes is not None:
        notes += [f"subsampling: {w.message}" for w in caught
                  if issubclass(w.category, DegenerateInputWarning)]
    return curve.to_records()


def _as_predictions(name: str, value: Any, votes: Votes) -> ModelPredictions:
    """A probability matrix or :class:`~annokit.metrics.records.AlignedRecords` as ModelPredictions."""
    if isinstance(value, ModelPredictions):
        return value
    if hasattr(value, "probs") and hasattr(value, "item_ids"):  # AlignedRecords
        ids = np.asarray(value.item_ids, dtype=object)
        if ids.shape != votes.item_ids.shape or not np.array_equal(ids, votes.item_ids):
            raise VoteSchemaError(
                f"records of model {name!r} cover {ids.size} items in another order than the "
                f"{votes.n_items} vote items; align them to the same votes (e.g. select the "
                "common items with votes.select_items) first")
        return ModelPredictions(name=name, probs=np.asarray(value.probs, dtype=np.float64),
                                temperature=getattr(value, "temperature", None))
    return ModelPredictions(name=name, probs=np.asarray(value, dtype=np.float64))


def _interval(estimate: float, reps: np.ndarray | None, confidence: float) -> Interval:
    if reps is None or reps.size == 0:
        return Interval(estimate=estimate)
    alpha = (1.0 - confidence) / 2.0
    finite = reps[np.isfinite(reps)]
    if finite.size == 0:
        return Interval(estimate=estimate)
    low, high = np.quantile(finite, [alpha, 1.0 - alpha])
    return Interval(estimate=estimate, low=float(low), high=float(high))


def _mean_or_none(values: np.ndarray) -> float | None:
    return float(values.mean()) if values.size else None


def _binned_metrics(probs: np.ndarray, human_probs: np.ndarray, labels: np.ndarray,
                    n_ece_bins: int) -> tuple[float, float]:
    ece = calibration.expected_calibration_error(probs, labels, n_bins=n_ece_bins)
    smece = calibration.soft_calibration_error(probs, human_probs, n_bins=n_ece_bins)
    return ece, smece


def _binned_replicates(probs: np.ndarray, human_probs: np.ndarray, labels: np.ndarray,
                       idx: np.ndarray, n_ece_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """ECE and SMECE on every bootstrap resample (rows of ``idx``), without a loop over items.

    An item's confidence bin does not depend on the resample, so the per-bin
    sufficient statistics of :mod:`annokit.metrics._binning` (count, sum of
    confidence, of correctness, of soft target) of all resamples come from one
    ``bincount`` over (resample, bin); the metric itself is still computed by
    ``_binning.compute_top`` on each resample's sums. A test checks that row
    ``arange(n)`` reproduces ``expected_calibration_error`` and
    ``soft_calibration_error`` exactly.
    """
    from annokit.metrics import _binning

    n_boot, n = idx.shape
    edges = _binning.uniform_edges(n_ece_bins)
    pred = probs.argmax(axis=1)
    rows = np.arange(n)
    conf = probs[rows, pred]
    item_bin = _binning.bin_index(conf, edges)
    flat = (np.arange(n_boot)[:, None] * n_ece_bins + item_bin[idx]).ravel()
    size = n_boot * n_ece_bins

    def sums(weights: np.ndarray | None) -> np.ndarray:
        w = None if weights is None else weights[idx].ravel()
        return np.bincount(flat, weights=w, minlength=size).reshape(n_boot, n_ece_bins)

    count = sums(None).astype(np.int64)
    sum_conf = sums(conf)
    sum_correct = sums((pred == labels).astype(np.float64))
    sum_soft = sums(human_probs[rows, pred])
    ece = np.empty(n_boot)
    smece = np.empty(n_boot)
    for r in range(n_boot):  # per resample: a handful of bins, not items
        stats = _binning.BinStats(n, count[r], sum_conf[r], sum_correct[r], sum_soft[r])
        ece[r] = _binning.compute_top(stats)
        smece[r] = _binning.compute_top(stats, soft=True)
    return ece, smece


def _histogram(values: np.ndarray, edges: np.ndarray) -> Histogram:
    counts, _ = np.histogram(np.clip(values, edges[0], edges[-1]), bins=edges)
    return Histogram(edges=edges.tolist(), counts=counts.astype(int).tolist())


def _none_list(a: np.ndarray | None, n: int) -> list[float | None]:
    if a is None:
        return [None] * n
    return [None if not np.isfinite(v) else float(v) for v in a]


def _dataset_summary(votes: Votes, *, n_boot: int, seed: int | None,
                     notes: list[str]) -> dict[str, Any]:
    """``annokit stats --json`` of the votes; a smaller summary where that cannot be computed."""
    from annokit.quality.dataset_stats import dataset_stats

    try:
        return dataset_stats(votes, n_boot=n_boot, rng=seed)
    except VoteSchemaError as exc:
        notes.append(f"dataset statistics reduced: {exc}")
    per_item = votes.votes_per_item()
    counts = votes.counts()
    h = entropy(distributions(counts), base=2)
    maj = majority(counts)
    return {
        "n_items": votes.n_items,
        "n_votes": votes.n_votes,
        "n_labels": votes.n_labels,
        "labels": list(votes.labels.names),
        "n_annotators": votes.n_annotators,
        "votes_per_item": {"min": int(per_item.min()), "mean": float(per_item.mean()),
                           "max": int(per_item.max())},
        "entropy_bits": {"mean": float(h.mean()), "median": float(np.median(h))},
        "n_majority_ties": maj.n_ties,
    }


def build_report(
    votes: Votes,
    models: Sequence[ModelPredictions] | Mapping[str, Any],
    *,
    bins: int | Sequence[float] = 5,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    n_ece_bins: int = 10,
    ceiling: bool = True,
    votes_per_half: int | None = None,
    subsampling: Sequence[Mapping[str, Any]] | None = None,
    title: str | None = None,
    quality_methods: Sequence[str] = ("ds", "agreement"),
    rng: np.random.Generator | int | None = 0,
    progress: Callable[[str], None] | None = None,
) -> Report:
    """Build the agreement-binned analysis report.

    Parameters
    ----------
    votes : Votes
        The human votes; defines the items and the label order.
    models : sequence of ModelPredictions, or mapping of name to probs
        Predictions aligned with ``votes`` (row i = ``votes.item_ids[i]``,
        columns in ``votes.labels`` order), e.g. ``AlignedRecords.probs``.
    bins : int or sequence of float, default 5
        Agreement bins: the number of equal-count human-entropy quantile bins,
        or explicit edges in bits. See :func:`agreement_bins`.
    n_bootstrap : int, default 1000
        Bootstrap resamples over items (0: no intervals, no pairwise intervals).
    confidence : float, default 0.95
        Coverage of the percentile intervals.
    n_ece_bins : int, default 10
        Equal-width confidence bins of ECE, SMECE and the reliability diagrams.
    ceiling : bool, default True
        Compute the split-half human ceiling (needs items with >= 2 votes).
    votes_per_half : int, optional
        Votes per half in the ceiling (default: half the median number of votes
        per item); items with fewer than twice that many votes are left out and counted.
    subsampling : sequence of mapping, optional
        A precomputed "how many annotations are enough" curve: rows with ``k``,
        ``tvd_mean``, ``tvd_low``, ``tvd_high`` and optionally ``jsd_mean``,
        ``kl_mean``, ``majority_agreement``, ``entropy_bias``
        (``SubsampleCurve.to_records()``, the "curve" of ``annokit subsample --json``).
    title : str, optional
    quality_methods : sequence of str, default ("ds", "agreement")
        Annotator-quality scores (:func:`annokit.quality.annotator_scores`)
        reported when the votes carry annotator ids; empty to skip.
    rng : numpy Generator or int seed, default 0
        Randomness of the bootstrap and the ceiling split. An int seed is
        recorded in the report; the same seed gives the same report.
    progress : callable, optional
        Called with a short stage name after each stage (for progress bars).

    Returns
    -------
    Report

    Raises
    ------
    VoteSchemaError
        If predictions do not match the votes' shape, or options are invalid.

    Examples
    --------
    >>> votes = Votes.from_counts([[9, 1], [5, 5], [1, 9], [7, 3]], labels=["a", "b"])
    >>> preds = {"m": [[0.8, 0.2], [0.6, 0.4], [0.3, 0.7], [0.6, 0.4]]}
    >>> rep = build_report(votes, preds, bins=2, n_bootstrap=20)
    >>> [b.n for b in rep.models[0].per_bin], rep.models[0].metrics["accuracy"].estimate
    ([2, 2], 1.0)
    """
    step = progress or (lambda _name: None)
    if isinstance(models, Mapping):
        models = [_as_predictions(str(k), v, votes) for k, v in models.items()]
    models = list(models)
    if not models:
        raise VoteSchemaError("a report needs at least one model")
    names = [m.name for m in models]
    if len(set(names)) != len(names):
        raise VoteSchemaError(f"model names must be unique; got {names}")
    if not isinstance(n_bootstrap, (int, np.integer)) or n_bootstrap < 0:
        raise VoteSchemaError(f"n_bootstrap must be an integer >= 0; got {n_bootstrap!r}")
    if not 0.0 < confidence < 1.0:
        raise VoteSchemaError(f"confidence must be in (0, 1); got {confidence!r}")
    seed = int(rng) if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) else None
    gen = check_rng(rng)
    # independent streams: adding a model does not change the ceiling split
    boot_gen, ceil_gen = (np.random.default_rng(s) for s in gen.bit_generator.seed_seq.spawn(2)) \
        if hasattr(gen.bit_generator, "seed_seq") else (gen, gen)

    counts = votes.counts()
    n_items, n_labels = counts.shape
    human_probs = distributions(counts)
    maj = majority(counts, ties="first")
    h_bits = entropy(human_probs, base=2)
    h_nats = entropy(human_probs, base=None)
    notes: list[str] = []
    if maj.n_ties:
        notes.append(f"{maj.n_ties} of {n_items} items have a tied majority; accuracy and ECE "
                     "use the first tied label in label order")
    edges, bin_idx, method, bin_notes = agreement_bins(h_bits, bins)
    notes += bin_notes
    n_bins = edges.size - 1
    bin_counts = np.bincount(bin_idx, minlength=n_bins)
    bin_masks = [bin_idx == b for b in range(n_bins)]
    for b in np.flatnonzero(bin_counts == 0):
        msg = f"agreement bin {b} is empty"
        warnings.warn(msg, DegenerateInputWarning, stacklevel=2)
        notes.append(msg)
    binning = Binning(
        method=method, requested_bins=int(bins) if method == "quantile" else n_bins,
        entropy_base=2.0, edges=edges.tolist(), counts=bin_counts.tolist(),
        mean_entropy=[_mean_or_none(h_bits[m]) for m in bin_masks],
        labels=[f"{edges[b]:.2f}-{edges[b + 1]:.2f}" for b in range(n_bins)],
    )
    step("binning")

    idx = boot_gen.integers(0, n_items, size=(n_bootstrap, n_items)) if n_bootstrap else None
    ln_k = float(np.log(n_labels))
    hist_edges = {
        "dist_ce": np.linspace(0.0, 1.0, _HIST_BINS + 1),
        "ent_ce_signed": np.linspace(-ln_k, ln_k, _HIST_BINS + 1),
        "ent_ce_abs": np.linspace(0.0, ln_k, _HIST_BINS + 1),
        "entropy": np.linspace(0.0, ln_k, _HIST_BINS + 1),
    }
    reports: list[ModelReport] = []
    replicates: dict[str, dict[str, np.ndarray]] = {}
    estimates: dict[str, dict[str, float]] = {}
    for model in models:
        probs = check_probs(model.probs, name=f"predictions of model {model.name!r}")
        if probs.shape != (n_items, n_labels):
            raise VoteSchemaError(
                f"predictions of model {model.name!r} have shape {probs.shape}; the votes "
                f"need ({n_items}, {n_labels}) (items x labels, in the votes' order)")
        values = per_item_values(probs, human_probs, maj.labels)
        ece, smece = _binned_metrics(probs, human_probs, maj.labels, n_ece_bins)
        est = {key: float(values[key].mean()) for key in METRIC_KEYS if key in values}
        est.update(ece=ece, smece=smece)
        reps: dict[str, np.ndarray] = {}
        if idx is not None:
            for key in METRIC_KEYS:
                if key in values:
                    reps[key] = values[key][idx].mean(axis=1)
            reps["ece"], reps["smece"] = _binned_replicates(probs, human_probs, maj.labels,
                                                            idx, n_ece_bins)
        metrics = {key: _interval(est[key], reps.get(key), confidence) for key in METRIC_KEYS}
        per_bin = []
        for b, mask in enumerate(bin_masks):
            n = int(mask.sum())
            if n == 0:
                per_bin.append(BinMetrics(bin=b, n=0, accuracy=None, ece=None, smece=None,
                                          dist_ce=None, ent_ce=None, ent_ce_signed=None,
                                          jsd=None, kl=None, rank_cs=None))
                continue
            b_ece, b_smece = _binned_metrics(probs[mask], human_probs[mask], maj.labels[mask],
                                             n_ece_bins)
            per_bin.append(BinMetrics(
                bin=b, n=n, ece=b_ece, smece=b_smece,
                **{key: float(values[key][mask].mean()) for key in ADDITIVE_METRICS}))
        rel = calibration.reliability_diagram(probs, maj.labels, human_probs, n_bins=n_ece_bins)
        reliability = Reliability(
            edges=np.asarray(rel.edges, dtype=float).tolist(),
            count=np.asarray(rel.count).astype(int).tolist(),
            confidence=_none_list(rel.mean_confidence, n_ece_bins),
            accuracy=_none_list(rel.accuracy, n_ece_bins),
            soft_target=_none_list(rel.mean_soft_target, n_ece_bins))
        histograms = {
            "dist_ce": _histogram(values["dist_ce"], hist_edges["dist_ce"]),
            "ent_ce_signed": _histogram(values["ent_ce_signed"], hist_edges["ent_ce_signed"]),
            "ent_ce_abs": _histogram(values["ent_ce"], hist_edges["ent_ce_abs"]),
            "entropy": _histogram(values["entropy"], hist_edges["entropy"]),
        }
        reports.append(ModelReport(
            name=model.name, sources=[str(s) for s in model.sources], n_items=n_items,
            temperature=model.temperature, temperature_note=model.temperature_note,
            metrics=metrics, per_bin=per_bin, reliability=reliability, histograms=histograms))
        replicates[model.name] = reps
        estimates[model.name] = est
        step(f"model {model.name}")

    comparisons: list[PairwiseDifference] = []
    for a, b in combinations(names, 2):
        for key in METRIC_KEYS:
            diff = estimates[a][key] - estimates[b][key]
            p_value = None
            reps_d = None
            if idx is not None:
                reps_d = replicates[a][key] - replicates[b][key]
                p_value = float(min(1.0, 2.0 * min(np.mean(reps_d <= 0), np.mean(reps_d >= 0))))
            comparisons.append(PairwiseDifference(
                model_a=a, model_b=b, metric=key,
                difference=_interval(diff, reps_d, confidence), p_value=p_value))
    step("comparisons")

    human_ceiling = None
    if ceiling:
        human_ceiling = _ceiling(votes, human_probs, maj.labels, bin_idx, n_bins,
                                 votes_per_half, ceil_gen, notes)
    step("ceiling")

    annotator_quality = None
    if quality_methods and votes.has_annotators:
        annotator_quality = _annotator_quality(votes, quality_methods, notes)
    step("annotators")
    dataset = _dataset_summary(votes, n_boot=min(int(n_bootstrap), 1000),
                               seed=0 if seed is None else seed, notes=notes)
    report = Report(
        annokit_version=annokit.__version__,
        title=title or "annokit agreement-binned report",
        labels=list(votes.labels.names),
        dataset=dataset,
        binning=binning,
        models=reports,
        comparisons=comparisons,
        human_entropy=_histogram(h_nats, hist_edges["entropy"]),
        human_ceiling=human_ceiling,
        annotator_quality=annotator_quality,
        subsampling=[SubsamplingPoint(**{k: row.get(k) for k in SubsamplingPoint.model_fields})
                     for row in subsampling] if subsampling else None,
        settings=Settings(seed=seed, n_bootstrap=int(n_bootstrap), confidence=confidence,
                          n_ece_bins=n_ece_bins, tie_policy="first"),
        notes=notes,
    )
    step("done")
    return report


def _annotator_quality(votes: Votes, methods: Sequence[str],
                       notes: list[str]) -> AnnotatorQuality:
    """Scores and flags of every annotator under each method (thresholds: the quality defaults)."""
    from annokit.quality import DEFAULT_THRESHOLDS, annotator_scores

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = {m: annotator_scores(votes, m, rng=0) for m in methods}
    notes += [f"annotator quality: {w.message}" for w in caught
              if issubclass(w.category, DegenerateInputWarning)]
    thresholds = {m: float(DEFAULT_THRESHOLDS[m]) for m in methods}
    flagged = {m: np.nan_to_num(scores[m], nan=np.inf) < thresholds[m] for m in methods}
    first = scores[methods[0]]
    order = np.lexsort((np.arange(first.size), np.nan_to_num(first, nan=np.inf)))
    per = votes.votes_per_annotator()
    rows = [AnnotatorRow(annotator=str(votes.annotator_ids[a]), n_votes=int(per[a]),
                         scores={m: float(scores[m][a]) for m in methods},
                         flagged={m: bool(flagged[m][a]) for m in methods}) for a in order]
    return AnnotatorQuality(methods=list(methods), thresholds=thresholds,
                            n_annotators=int(first.size),
                            n_flagged={m: int(flagged[m].sum()) for m in methods}, annotators=rows)


def _ceiling(votes: Votes, human_probs: np.ndarray, maj_labels: np.ndarray,
             bin_idx: np.ndarray, n_bins: int, votes_per_half: int | None,
             gen: np.random.Generator, notes: list[str]) -> HumanCeiling | None:
    """Split-half ceiling from :func:`annokit.subsample.split_half` (H1 scored against all votes)."""
    from annokit.subsample import split_half

    per_item = votes.votes_per_item()
    k = votes_per_half if votes_per_half is not None else int(np.median(per_item)) // 2
    if votes_per_half is not None and votes_per_half < 1:
        raise VoteSchemaError(f"votes_per_half must be >= 1; got {votes_per_half}")
    if k < 1 or not (per_item >= 2 * k).any():
        notes.append("no human ceiling: too few votes per item for two disjoint halves")
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)  # counted and noted below
        sh = split_half(votes, k, rng=gen, reference="full", short="skip")
    if sh.n_short:
        notes.append(f"human ceiling leaves out {sh.n_short} item(s) with fewer than {2 * k} "
                     f"votes (two halves of {k})")
    pos = sh.item_positions
    full = human_probs[pos]
    d1 = sh.distce_h1
    j1 = jensen_shannon_distance(full, sh.h1)
    acc = (majority(np.rint(sh.h1 * k), ties="first").labels == maj_labels[pos]).astype(float)
    d12 = tvd(sh.h1, sh.h2)
    b_u = bin_idx[pos]

    def cell(b: int, mask: np.ndarray) -> BinCeiling:
        return BinCeiling(bin=b, n=int(mask.sum()), dist_ce=_mean_or_none(d1[mask]),
                          jsd=_mean_or_none(j1[mask]), accuracy=_mean_or_none(acc[mask]),
                          half_vs_half_dist_ce=_mean_or_none(d12[mask]))

    return HumanCeiling(
        votes_per_half=k, n_items=int(pos.size), n_skipped=int(sh.n_short),
        method=(f"disjoint random halves H1, H2 of {k} votes per item "
                "(annokit.subsample.split_half; Baan et al. 2022 use 20 of 100); H1 scored "
                "against all votes; H1 majority ties resolved to the first label"),
        per_bin=[cell(b, b_u == b) for b in range(n_bins)],
        overall=cell(-1, np.ones(b_u.size, dtype=bool)),
    )
