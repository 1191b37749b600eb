"""Every consumer of one formula, with that formula optionally replaced by a wrong one.

Run by ``tests/metrics/test_mutation.py`` as a script in a fresh process:

    python mutation_probe.py --mutate

replaces the one implementation of each formula of :data:`FORMULAS` by a wrong one
(:func:`_mutate`) *before* any consumer is imported, so that every module that binds
or compiles it gets the wrong one, then prints a JSON object: formula -> consumer ->
value (:func:`consumers`). The numba formulas need a process whose
``NUMBA_CACHE_DIR`` is empty (the test gives one), or the kernels compiled with the
right formula would be loaded from the cache.
"""

from __future__ import annotations

import json
import sys
import warnings

import numpy as np

#: One formula of each kind: a divergence (Jensen-Shannon, per item), a per-item calibration
#: quantity (the entropy gap of EntCE), an order-aware one (Wasserstein-1), a binning
#: reduction (ECE). Each consumer value below reads exactly one of them.
FORMULAS = ("jsd", "entropy_gap", "wasserstein", "ece")


def _mutate(formula: str) -> None:
    """Replace the one implementation of ``formula`` by a wrong one."""
    import numba

    from annokit.core import divergence_rows
    from annokit.metrics import _binning

    if formula == "jsd":  # drops the q side of the Jensen-Shannon term
        @numba.njit
        def js_term(p, q, lp, lq, lm):
            return p * (lp - lm) + q * 0.0

        divergence_rows.js_term = js_term
    elif formula == "entropy_gap":  # H(model) + H(reference) instead of the difference
        @numba.njit
        def entropy_gap(s_model, s_ref):
            return -s_ref - s_model

        divergence_rows.entropy_gap = entropy_gap
    elif formula == "wasserstein":  # squared cumulative gaps (an RPS, not W1)
        @numba.njit
        def wasserstein_term(c, v_lo, v_hi):
            return c * c * (v_hi - v_lo)

        divergence_rows.wasserstein_term = wasserstein_term
    elif formula == "ece":  # the mean of the bins' gaps, not weighted by their share of items
        def reduce_bins(count, conf, target, weight, *, reduce="ece"):
            with np.errstate(invalid="ignore", divide="ignore"):
                out = np.nanmean(np.abs(conf - target) / count, axis=-1)
            return float(out) if np.ndim(out) == 0 else out

        _binning.reduce_bins = reduce_bins
    else:
        raise SystemExit(f"unknown formula {formula!r}")


def _data():
    import pandas as pd

    from annokit.core.labels import LabelSet
    from annokit.core.votes import Votes

    rng = np.random.default_rng(7)
    n_items, n_annotators, names = 40, 12, ["1", "2", "3", "4"]
    labels = rng.choice(names, p=[0.1, 0.4, 0.3, 0.2], size=(n_items, n_annotators))
    long = pd.DataFrame({"item": np.repeat([f"i{i}" for i in range(n_items)], n_annotators),
                         "annotator": np.tile([f"a{a}" for a in range(n_annotators)], n_items),
                         "label": labels.ravel()})
    votes = Votes.from_long(long, labels=LabelSet(names, scale="ordinal"))
    counts = votes.counts()
    probs = rng.dirichlet(np.full(len(names), 0.8), size=n_items)
    soft = counts / counts.sum(axis=1, keepdims=True)
    return votes, long, probs, soft, soft.argmax(axis=1)


def consumers(formula: str) -> dict[str, float]:
    """The named function, the registry state, the subsampling curve, the human ceiling
    and the report's value of ``formula`` (those that compute it)."""
    from annokit.metrics import compute
    from annokit.metrics.ceiling import split_half_ceiling
    from annokit.report.build import build_report
    from annokit.subsample import subsampling_curve

    votes, long, probs, soft, hard = _data()
    metric = {"jsd": "jsd", "entropy_gap": "ent_ce_signed", "wasserstein": "wasserstein",
              "ece": "ece"}[formula]
    curve_metric = {"jsd": "jsd", "entropy_gap": "entropy_bias",
                    "wasserstein": "wasserstein"}.get(formula)
    out: dict[str, float] = {}
    if formula == "jsd":
        from annokit.core.divergence import jensen_shannon_distance
        out["named"] = float(jensen_shannon_distance(soft, probs).mean())
    elif formula == "entropy_gap":
        from annokit.metrics.human_calibration import entropy_calibration_error
        out["named"] = float(entropy_calibration_error(probs, soft).mean())
    elif formula == "wasserstein":
        from annokit.metrics.ordinal import ordinal_score
        from annokit.metrics.perspectivist import evaluate_annotators
        out["named"] = float(ordinal_score("emd", probs, soft))
        preds = long[["item", "annotator"]].assign(label=long["label"].to_numpy()[::-1])
        out["perspectivist"] = evaluate_annotators(votes, preds, scale="ordinal"
                                                   ).pooled["wasserstein"]
    else:
        from annokit.metrics.calibration import expected_calibration_error
        out["named"] = float(expected_calibration_error(probs, hard))
    out["state"] = float(compute(metric, probs, soft, hard))
    if curve_metric is not None:
        curve = subsampling_curve(votes, [3, 6], reps=4, rng=0)
        out["curve"] = float(curve.values[curve_metric].mean())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ceiling = split_half_ceiling(votes, 5, metrics=[metric], rng=0)
        report = build_report(votes, {"m": probs}, metrics=[metric], n_boot=0, ceiling=False,
                              quality_methods=())
    out["ceiling"] = float(ceiling.vs_reference.metrics[metric])
    out["report"] = float(report.models[0].metrics[metric].estimate)
    return out


if __name__ == "__main__":
    if "--mutate" in sys.argv[1:]:
        for name in FORMULAS:
            _mutate(name)
    print(json.dumps({name: consumers(name) for name in FORMULAS}))
