"""The whole calibration suite on aligned records, with baselines and bootstrap intervals.

:func:`evaluate` computes, on the same :class:`~annokit.metrics.records.AlignedRecords`,
the majority-label view (accuracy, ECE, MCE, adaptive and classwise ECE, Brier,
NLL) next to the human-distribution view (SMECE, RankCS, EntCE, DistCE,
Jensen-Shannon distance, KL, soft Brier, cross-entropy), plus the same numbers
for two reference predictors on the same items:

* ``chance``: the uniform distribution (ChaosNLI's chance baseline, Nie et al.
  2020, Table 5);
* ``oracle``: the human distribution itself (Baan et al. 2022, section 3): its
  EntCE, DistCE, JSD and KL are exactly 0 while its ECE is not.

Metric keys (all scalars; units in :data:`UNITS`):

========================  =====================================================
``accuracy``              argmax vs the human majority (tie policy reported)
``ece``                   top-label ECE vs the majority, equal-width bins
``ece_adaptive``          the same with equal-mass (quantile) bins
``mce``                   maximum calibration error
``classwise_ece``         classwise ECE (Nixon et al. 2019)
``smece``                 SMECE, top-label (Leznik 2026)
``smece_classwise``       SMECE, classwise
``rank_cs``               RankCS, Baan et al.'s exact-argsort definition
``rank_cs_tie_aware``     RankCS counting any order of tied human classes
``ent_ce``                mean |EntCE|, nats
``ent_ce_signed``         mean signed EntCE, nats (> 0: model less certain)
``dist_ce``               mean DistCE (TVD)
``jsd``                   mean Jensen-Shannon distance (scipy convention)
``kl``                    mean KL(human || model), model clipped at 1e-15
``brier``                 Brier score vs the majority one-hot
``brier_soft``            Brier score vs the human distribution
``nll``                   cross-entropy vs the human distribution, nats
``nll_majority``          NLL of the majority label, nats
``temperature``           only when the records were temperature scaled
========================  =====================================================
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.checks import check_rng
from annokit.core.divergence import jensen_shannon_distance, kl_divergence
from annokit.core.soft_labels import majority
from annokit.errors import DegenerateInputWarning, VoteSchemaError
from annokit.metrics import _binning
from annokit.metrics.bootstrap import BootstrapResult, bootstrap_ci
from annokit.metrics.calibration import (
    classwise_calibration_error,
    expected_calibration_error,
    max_calibration_error,
    soft_calibration_error,
)
from annokit.metrics.human import (
    brier_score,
    distribution_calibration_error,
    entropy_calibration_error,
    negative_log_likelihood,
    rank_calibration_score,
)
from annokit.metrics.records import AlignedRecords

__all__ = ["METRICS", "UNITS", "EvaluationResult", "baseline_records", "evaluate"]

#: Scalar metric keys in output order.
METRICS = ("accuracy", "ece", "ece_adaptive", "mce", "classwise_ece", "smece", "smece_classwise",
           "rank_cs", "rank_cs_tie_aware", "ent_ce", "ent_ce_signed", "dist_ce", "jsd", "kl",
           "brier", "brier_soft", "nll", "nll_majority")

#: Units of the metrics that have one (the others are probabilities or rates in [0, 1]).
UNITS = {"ent_ce": "nats", "ent_ce_signed": "nats", "kl": "nats", "nll": "nats",
         "nll_majority": "nats",
         "jsd": "sqrt of the JS divergence in nats (scipy.spatial.distance.jensenshannon)"}

# per-item metrics: name -> f(probs, human, majority labels) -> (n_items,)
_PER_ITEM: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]] = {
    "accuracy": lambda p, h, y: (p.argmax(axis=1) == y).astype(np.float64),
    "rank_cs": lambda p, h, y: rank_calibration_score(p, h).astype(np.float64),
    "rank_cs_tie_aware": lambda p, h, y: rank_calibration_score(p, h, tie_aware=True
                                                                ).astype(np.float64),
    "ent_ce_signed": lambda p, h, y: entropy_calibration_error(p, h),
    "dist_ce": lambda p, h, y: distribution_calibration_error(p, h),
    "jsd": lambda p, h, y: jensen_shannon_distance(h, p),
    "kl": lambda p, h, y: kl_divergence(h, p),
    "brier": lambda p, h, y: brier_score(p, y, reduction="none"),
    "brier_soft": lambda p, h, y: brier_score(p, h, reduction="none"),
    "nll": lambda p, h, y: negative_log_likelihood(p, h, reduction="none"),
    "nll_majority": lambda p, h, y: negative_log_likelihood(p, y, reduction="none"),
}


def _binned(n_bins: int) -> dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], float]]:
    return {
        "ece": lambda p, h, y: expected_calibration_error(p, y, n_bins=n_bins),
        "ece_adaptive": lambda p, h, y: expected_calibration_error(p, y, n_bins=n_bins,
                                                                   strategy="quantile"),
        "mce": lambda p, h, y: max_calibration_error(p, y, n_bins=n_bins),
        "classwise_ece": lambda p, h, y: classwise_calibration_error(p, y, n_bins=n_bins),
        "smece": lambda p, h, y: soft_calibration_error(p, h, n_bins=n_bins),
        "smece_classwise": lambda p, h, y: soft_calibration_error(p, h, n_bins=n_bins,
                                                                  mode="classwise"),
    }


@dataclass
class EvaluationResult:
    """Everything :func:`evaluate` computed.

    Attributes
    ----------
    metrics : dict of str to float
        The scalar metrics (keys in :data:`METRICS`, plus ``temperature``).
    per_item : DataFrame
        One row per item: ``item``, ``majority``, ``is_tied`` and the per-item
        values (``correct``, ``rank_cs``, ``rank_cs_tie_aware``, ``ent_ce``
        signed, ``dist_ce``, ``jsd``, ``kl``, ``brier``, ``brier_soft``, ``nll``,
        ``nll_majority``).
    intervals : dict of str to BootstrapResult
        Percentile bootstrap intervals per metric (empty when ``n_boot=0``).
    baselines : dict
        ``{"chance": {...}, "oracle": {...}}``, metrics of the uniform and of
        the human-distribution predictor on the same items.
    """

    n_items: int
    n_unmatched_predictions: int
    n_dropped_items: int
    dropped_item_ids: list[str]
    labels: tuple[str, ...]
    n_bins: int
    tie_policy: str
    n_ties: int
    metrics: dict[str, float]
    per_item: pd.DataFrame
    baselines: dict[str, dict[str, float]]
    intervals: dict[str, BootstrapResult] = field(default_factory=dict)
    n_boot: int = 0
    confidence: float = 0.95
    seed: int | None = None
    temperature: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON document printed by ``annokit evaluate --json`` (keys documented in README.md)."""
        out: dict[str, Any] = {
            "n_items": self.n_items,
            "n_unmatched_predictions": self.n_unmatched_predictions,
            "n_dropped_items": self.n_dropped_items,
            "dropped_item_ids": list(self.dropped_item_ids),
            "labels": list(self.labels),
            "n_bins": self.n_bins,
            "tie_policy": self.tie_policy,
            "n_ties": self.n_ties,
            "units": dict(UNITS),
            "metrics": {k: _num(v) for k, v in self.metrics.items()},
        }
        if self.temperature is not None:
            out["temperature"] = {k: _num(v) for k, v in self.temperature.items()}
        if self.intervals:
            out["ci"] = {k: {"low": _num(r.low), "high": _num(r.high)}
                         for k, r in self.intervals.items()}
            out["bootstrap"] = {"n_boot": self.n_boot, "confidence": self.confidence,
                                "seed": self.seed}
        out["baselines"] = {name: {k: _num(v) for k, v in vals.items()}
                            for name, vals in self.baselines.items()}
        return out


def _num(v: Any) -> Any:
    if isinstance(v, (np.floating, float)):
        return float(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    return v


def baseline_records(records: AlignedRecords, kind: str) -> AlignedRecords:
    """The same items with the uniform (``"chance"``) or human (``"oracle"``) distribution
    as the prediction.

    Examples
    --------
    >>> rec = AlignedRecords.from_arrays([[0.9, 0.1]], [[3, 1]])
    >>> baseline_records(rec, "oracle").probs.tolist(), baseline_records(rec, "chance").probs.tolist()
    ([[0.75, 0.25]], [[0.5, 0.5]])
    """
    if kind == "chance":
        probs = np.full_like(records.probs, 1.0 / records.n_labels)
    elif kind == "oracle":
        probs = records.human.copy()
    else:
        raise VoteSchemaError(f"baseline must be 'chance' or 'oracle'; got {kind!r}")
    return dataclasses.replace(records, probs=probs, logits=None, temperature=None)


def _scalars(p: np.ndarray, h: np.ndarray, y: np.ndarray, n_bins: int
             ) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    per_item = {name: f(p, h, y) for name, f in _PER_ITEM.items()}
    binned = {name: f(p, h, y) for name, f in _binned(n_bins).items()}
    values: dict[str, float] = {}
    for name in METRICS:
        if name == "ent_ce":
            values[name] = float(np.abs(per_item["ent_ce_signed"]).mean())
        elif name in binned:
            values[name] = float(binned[name])
        else:
            values[name] = float(per_item[name].mean())
    return values, per_item


def evaluate(records: AlignedRecords, *, n_bins: int = 10, n_boot: int = 0,
             confidence: float = 0.95, rng: np.random.Generator | int | None = None,
             ties: str | None = None, baselines: bool = True) -> EvaluationResult:
    """Compute every calibration metric on aligned records.

    Parameters
    ----------
    records : AlignedRecords
        From :func:`annokit.metrics.records.align` (optionally temperature scaled).
    n_bins : int, default=10
        Bins of the binned metrics (ECE, MCE, classwise ECE, SMECE).
    n_boot : int, default=0
        Bootstrap replicates; 0 skips the intervals.
    confidence : float, default=0.95
        Level of the percentile intervals.
    rng : numpy Generator, int or None
        Seeds the bootstrap (every metric is resampled with the same item
        indices) and ``ties="random"``.
    ties : {"report", "first", "random"}, optional
        Re-resolve the human majority with this policy; by default the records'
        majority is used as is. Accuracy, ECE, MCE, classwise ECE and the
        majority Brier/NLL depend on it; the number of tied items is reported
        and warned about.
    baselines : bool, default=True
        Also compute the chance and oracle rows.

    Returns
    -------
    EvaluationResult

    Raises
    ------
    VoteSchemaError
        Invalid records or options (``n_bins``, ``n_boot``, ``confidence``).

    Examples
    --------
    >>> rec = AlignedRecords.from_arrays([[0.7, 0.3], [0.2, 0.8], [0.6, 0.4]],
    ...                                  [[8, 2], [1, 9], [5, 4]], labels=["yes", "no"])
    >>> res = evaluate(rec)
    >>> res.metrics["accuracy"], round(res.metrics["dist_ce"], 4), res.baselines["oracle"]["dist_ce"]
    (1.0, 0.0815, 0.0)
    """
    if not isinstance(records, AlignedRecords):
        raise VoteSchemaError(f"expected AlignedRecords (see annokit.metrics.records.align); got "
                              f"{type(records).__name__}")
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise VoteSchemaError(f"n_boot must be an integer >= 0; got {n_boot!r}")
    gen = None
    maj = records.majority
    if ties is not None:
        gen = check_rng(rng)
        maj = majority(records.counts, ties=ties, rng=gen)
    if maj.n_ties:
        warnings.warn(f"{maj.n_ties} of {records.n_items} items have a tied human majority; "
                      f"tie policy {maj.policy!r} "
                      + ("draws one tied label at random" if maj.policy == "random"
                         else "takes the first tied label in label order"),
                      DegenerateInputWarning, stacklevel=2)
    p, h, y = records.probs, records.human, maj.labels
    values, per_item = _scalars(p, h, y, n_bins)
    if records.temperature is not None:
        values["temperature"] = float(records.temperature)

    frame = pd.DataFrame({"item": records.item_ids,
                          "majority": np.asarray(records.labels.names, dtype=object)[y],
                          "is_tied": maj.is_tied, "correct": per_item["accuracy"].astype(bool)})
    for name in ("rank_cs", "rank_cs_tie_aware"):
        frame[name] = per_item[name].astype(bool)
    frame["ent_ce"] = per_item["ent_ce_signed"]
    for name in ("dist_ce", "jsd", "kl", "brier", "brier_soft", "nll", "nll_majority"):
        frame[name] = per_item[name]

    intervals: dict[str, BootstrapResult] = {}
    seed = None
    if n_boot > 0:
        if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
            seed = int(rng)
        else:
            seed = int((gen if gen is not None else check_rng(rng)).integers(2**63 - 1))
        intervals = _bootstrap(p, h, y, per_item, n_bins=n_bins, n_boot=int(n_boot),
                               confidence=confidence, seed=seed)

    base: dict[str, dict[str, float]] = {}
    if baselines:
        for kind in ("chance", "oracle"):
            b = baseline_records(records, kind)
            base[kind] = _scalars(b.probs, h, y, n_bins)[0]

    return EvaluationResult(
        n_items=records.n_items, n_unmatched_predictions=records.n_unmatched_predictions,
        n_dropped_items=records.n_dropped_items,
        dropped_item_ids=[str(i) for i in records.dropped_item_ids],
        labels=tuple(records.labels.names), n_bins=n_bins, tie_policy=maj.policy,
        n_ties=maj.n_ties, metrics=values, per_item=frame, baselines=base, intervals=intervals,
        n_boot=int(n_boot), confidence=confidence, seed=seed)


def _replicates(p: np.ndarray, h: np.ndarray, y: np.ndarray, n_bins: int
                ) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    """The equal-width binned metrics on every resample (rows of an index matrix) at once.

    An item's bin does not depend on the resample, so each resample's per-bin
    sums (count, confidence, correctness, soft target; the sufficient statistics
    of :mod:`annokit.metrics.calibration`) come from one ``bincount`` over
    (resample, bin), with the binning of :mod:`annokit.metrics._binning`.
    ``ece_adaptive`` recomputes each resample's quantile edges and bins with
    ``searchsorted(edges, c, "right") = #(edges <= c)``, counted edge by edge.
    Row ``arange(n)`` reproduces the metric functions (tested to 1e-12).
    """
    n, k = p.shape
    edges = _binning.uniform_edges(n_bins)
    rows = np.arange(n)
    pred = p.argmax(axis=1)
    conf = p[rows, pred]
    top_bin = _binning.bin_index(conf, edges)
    correct = (pred == y).astype(np.float64)
    soft_top = h[rows, pred]
    cls_bin = _binning.bin_index(p, edges)  # (n, k): class k binned on p[:, k]
    hit = (y[:, None] == np.arange(k)).astype(np.float64)

    def top_sums(idx: np.ndarray, weights: list[np.ndarray | None]) -> list[np.ndarray]:
        r = idx.shape[0]
        flat = (np.arange(r)[:, None] * n_bins + top_bin[idx]).ravel()
        return [np.bincount(flat, weights=None if w is None else w[idx].ravel(),
                            minlength=r * n_bins).reshape(r, n_bins) for w in weights]

    def cw_sums(idx: np.ndarray, target: np.ndarray) -> np.ndarray:
        r = idx.shape[0]
        cell = (np.arange(r)[:, None, None] * k + np.arange(k)) * n_bins + cls_bin[idx]
        flat = cell.ravel()
        gap = (p[idx] - target[idx]).ravel()  # sum_b |sum p_k - sum target_k| per class
        sums = np.bincount(flat, weights=gap, minlength=r * k * n_bins).reshape(r, k, n_bins)
        return np.abs(sums).sum(axis=2).mean(axis=1) / n

    def ece(idx: np.ndarray) -> np.ndarray:
        s_conf, s_hit = top_sums(idx, [conf, correct])
        return np.abs(s_conf - s_hit).sum(axis=1) / n

    def ece_adaptive(idx: np.ndarray) -> np.ndarray:
        r = idx.shape[0]
        c = conf[idx]
        q_edges = np.quantile(c, np.linspace(0.0, 1.0, n_bins + 1), axis=1).T  # (r, n_bins + 1)
        b = np.zeros(c.shape, dtype=np.int64)
        for j in range(n_bins + 1):  # a loop over edges, not items
            b += c >= q_edges[:, j:j + 1]
        b = np.clip(b - 1, 0, n_bins - 1)
        flat = (np.arange(r)[:, None] * n_bins + b).ravel()
        gap = (c - correct[idx]).ravel()
        sums = np.bincount(flat, weights=gap, minlength=r * n_bins).reshape(r, n_bins)
        return np.abs(sums).sum(axis=1) / n

    def smece(idx: np.ndarray) -> np.ndarray:
        s_conf, s_soft = top_sums(idx, [conf, soft_top])
        return np.abs(s_conf - s_soft).sum(axis=1) / n

    def mce(idx: np.ndarray) -> np.ndarray:
        count, s_conf, s_hit = top_sums(idx, [None, conf, correct])
        gaps = np.abs(s_conf - s_hit) / np.maximum(count, 1)
        return np.where(count > 0, gaps, 0.0).max(axis=1)

    return {"ece": ece, "ece_adaptive": ece_adaptive, "mce": mce, "smece": smece,
            "classwise_ece": lambda idx: cw_sums(idx, hit),
            "smece_classwise": lambda idx: cw_sums(idx, h)}


def _resampled(f: Callable[[np.ndarray, np.ndarray, np.ndarray], float], p: np.ndarray,
               h: np.ndarray, y: np.ndarray) -> Callable[[np.ndarray], float]:
    """A binned metric as a function of one resample's item indices."""
    return lambda idx: f(p[idx], h[idx], y[idx])


def _bootstrap(p: np.ndarray, h: np.ndarray, y: np.ndarray, per_item: dict[str, np.ndarray], *,
               n_bins: int, n_boot: int, confidence: float, seed: int
               ) -> dict[str, BootstrapResult]:
    """Percentile intervals; the same seed gives every metric the same resampled items."""
    n = p.shape[0]
    out: dict[str, BootstrapResult] = {}
    binned = _binned(n_bins)
    fast = _replicates(p, h, y, n_bins)
    for name in METRICS:
        vectorized = name in fast
        if name == "ent_ce":
            stat: Any = np.abs(per_item["ent_ce_signed"])
        elif vectorized:
            stat = fast[name]
        elif name in binned:
            stat = _resampled(binned[name], p, h, y)
        else:
            stat = per_item[name]
        out[name] = bootstrap_ci(stat, n_items=n if callable(stat) else None, n_boot=n_boot,
                                 confidence=confidence, rng=seed, vectorized=vectorized)
    return out
