"""How many annotations are enough: subsampling curves on ChaosNLI and Baan et al. (2022) Table 2.

1. Subsampling curves for the three ChaosNLI subsets (100 votes per item; Nie
   et al. 2020): for k = 1, 2, 5, 10, 20, 50, 100 votes per item, 200
   repetitions, the mean (and 95% percentile interval) over repetitions of the
   mean-over-items TVD, Jensen-Shannon distance, KL (k-vote estimate smoothed by
   +0.5 per label) to the 100-vote distribution, majority agreement (ties in
   the k-vote majority broken uniformly at random, in expectation) and entropy
   bias; the smallest k with expected TVD < 0.05; and a check of the
   Dirichlet-multinomial extrapolation: fit on one 5-vote subsample per item,
   predict the curve observed on all 100 votes.
2. Baan et al. (2022, "Stop Measuring Calibration When Humans Disagree",
   Section 5 "How Good is Good?", Table 2): two disjoint 20-vote "human
   classifiers" H1 and H2 per item, their DistCE (TVD to the human
   distribution), and the KL and TVD between the 30-bin histograms (on [0, 1])
   of H1's DistCE and H2's, RoBERTa-base's (seed 0) and RoBERTa-TS's (T = 2).
   H1 is evaluated like a model by the engine
   (:func:`annokit.metrics.ceiling.split_half_ceiling`).

Where our numbers differ from the paper
---------------------------------------
* The reference distribution. The paper says H1 and H2 are evaluated "against
  the 100 available annotations"; their released notebook evaluates them
  against the 60 votes in neither half (``remaining_annotations``). We print
  both (``reference="full"`` and ``"rest"``). Against all 100 votes our
  RoBERTa rows come within 0.02 of Table 2 (KL 0.669 / 0.594 vs 0.688 / 0.611,
  TVD 0.482 / 0.438 vs 0.500 / 0.454) and the mean DistCE of H1 is 0.0705 (the
  issue quotes ~0.072); against the 60 held-out votes the RoBERTa rows drop to
  KL 0.47 / 0.40 and H1's DistCE rises to 0.090. So Table 2 looks computed
  against all 100 votes, as the paper text says.
* KL(H1, H2) is one draw and is dominated by the sparse tail of the histogram
  (a handful of items with DistCE above 0.3): a bin that holds one item of H1
  and none of H2 makes KL infinite (``scipy.stats.entropy`` in their code) or,
  with our clip of empty bins at 1e-15, adds about 0.018 per bin. The paper's
  0.004 is a draw without such bins. We print our seed-1 draw, the median and
  range over 20 draws, and KL restricted to bins used by both histograms
  (~0.002-0.007, the paper's order of magnitude). TVD(H1, H2) between the
  histograms is 0.02-0.045 depending on the reference and the draw (paper
  0.022). Either way KL(H1, H2) is one to two orders of magnitude below
  KL(H1, RoBERTa), which is the paper's point.

Run: ``python recipes/how_many_annotations.py [--data DIR] [--reps N]`` (default
``../shared/data`` relative to the repository, or ``$ANNOKIT_TEST_DATA``).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from annokit.errors import AnnokitWarning
from annokit.io import read_votes
from annokit.metrics.ceiling import split_half_ceiling
from annokit.metrics.records import align
from annokit.metrics.temperature import apply_temperature
from annokit.subsample import (
    distce_histogram_divergence,
    extrapolation_check,
    recommend_k,
    split_half,
    subsampling_curve,
)

SUBSETS = {"ChaosNLI-SNLI": "chaosNLI_snli.jsonl", "ChaosNLI-MNLI": "chaosNLI_mnli_m.jsonl",
           "ChaosNLI-alphaNLI": "chaosNLI_alphanli.jsonl"}
KS = (1, 2, 5, 10, 20, 50, 100)
EPSILON = 0.05
#: Baan et al. (2022) Table 2: (KL(H1, .), TVD(H1, .)) between DistCE histograms.
PAPER_TABLE2 = {"H2": (0.004, 0.022), "RoBERTa": (0.688, 0.500), "RoBERTa-TS": (0.611, 0.454)}
#: Mean DistCE of the 20-vote human classifiers quoted from the notebook (issue 4).
PAPER_DISTCE_H = 0.072
PRED_LABELS = ("e", "c", "n")  # class order of the Baan et al. prediction files
TEMPERATURE = 2.0
BINS = 30


def default_data_dir() -> Path:
    env = os.environ.get("ANNOKIT_TEST_DATA")
    if env:
        return Path(env)
    return (Path(__file__).resolve().parents[1] / ".." / "shared" / "data").resolve()


def curves(data: Path, reps: int) -> dict:
    out = {}
    for name, file in SUBSETS.items():
        votes = read_votes(data / "chaosnli" / file, format="chaosnli")
        curve = subsampling_curve(votes, KS, reps=reps, rng=0)
        rec = recommend_k(curve, EPSILON, target="pool", counts=votes, rng=0)  # the 100 votes
        check = extrapolation_check(votes, n_fit=5, ks=KS[:-1], reps=min(reps, 50), rng=0)
        out[name] = {"curve": curve, "recommendation": rec, "check": check}
    return out


def _kl_common_support(hp: np.ndarray, hq: np.ndarray) -> float:
    both = (hp > 0) & (hq > 0)
    p, q = hp / hp.sum(), hq / hq.sum()
    return float((p[both] * np.log(p[both] / q[both])).sum())


def table2(data: Path, seeds: int = 20) -> dict:
    votes = read_votes(data / "chaosnli" / "chaosNLI_snli.jsonl", format="chaosnli")
    pred_dir = data / "chaosnli_predictions_baan2022"
    files = [pred_dir / f"SNLI_{half}_roberta-base_0.json" for half in ("dev", "test")]
    out: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AnnokitWarning)  # empty histogram bins, reported below
        records = align(votes, files, pred_labels=PRED_LABELS)
        scaled = apply_temperature(records, TEMPERATURE)
        for reference in ("rest", "full"):
            # H1 evaluated like a model by the engine; its per-item DistCE and their mean
            ceiling = split_half_ceiling(votes, 20, reference=reference, rng=1,
                                         metrics=["dist_ce"])
            sh = ceiling.split
            h1 = ceiling.vs_reference.per_item["dist_ce"].to_numpy()
            rows = {"H2": sh.distce_h2, "RoBERTa": sh.distce(records.probs),
                    "RoBERTa-TS": sh.distce(scaled.probs)}
            table = {}
            for row, errors in rows.items():
                d = distce_histogram_divergence(h1, errors, n_bins=BINS)
                table[row] = {"kl": d.kl, "tvd": d.tvd, "n_empty_q_bins": d.n_empty_q_bins,
                              "kl_common_support": _kl_common_support(d.hist_p, d.hist_q),
                              "mean_distce": float(errors.mean())}
            out[reference] = {"table": table,
                              "mean_distce_h1": ceiling.vs_reference.metrics["dist_ce"]}
        for reference in ("rest", "full"):
            draws = []
            for seed in range(seeds):
                sh = split_half(votes, 20, rng=100 + seed, reference=reference)
                d = distce_histogram_divergence(sh.distce_h1, sh.distce_h2, n_bins=BINS)
                draws.append((d.kl, d.tvd, _kl_common_support(d.hist_p, d.hist_q)))
            out[reference]["h2_draws"] = np.array(draws)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=None,
                        help="folder holding chaosnli/ and chaosnli_predictions_baan2022/")
    parser.add_argument("--reps", type=int, default=200, help="repetitions per k")
    args = parser.parse_args(argv)
    data = args.data if args.data is not None else default_data_dir()
    pd.set_option("display.width", 160)

    print(f"1. Subsampling curves: k votes of 100 per item, {args.reps} repetitions, seed 0")
    for name, res in curves(data, args.reps).items():
        curve, rec, check = res["curve"], res["recommendation"], res["check"]
        frame = curve.to_frame().drop(columns=["n_items", "n_short"])
        print(f"\n{name} ({curve.n_items} items)")
        print(frame.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        print(f"smallest k with expected TVD < {EPSILON}: {rec.k} "
              f"(interval {rec.k_low}-{rec.k_high}; {rec.source}, against the {rec.target})")
        by_bin = curve.by_bin().query("k == 20")
        print("k = 20 by full-data entropy quartile (nats): " + "; ".join(
            f"[{r.entropy_low:.2f}, {r.entropy_high:.2f}] TVD {r.tvd_mean:.3f}, "
            f"agreement {r.majority_agreement_mean:.3f}" for r in by_bin.itertuples()))
        print(f"extrapolation from 5 votes per item (Dirichlet alpha "
              f"{np.round(check.alpha, 3).tolist()}): max |predicted - observed| TVD "
              f"{check.max_abs_error:.4f} (max relative {check.max_rel_error:.1%})")
        print(check.table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))

    print("\n2. Baan et al. (2022) Table 2, ChaosNLI-SNLI, H1/H2 = 20 votes each (seed 1), "
          f"{BINS} bins on [0, 1]")
    t2 = table2(data)
    for reference, label in (("full", "reference: all 100 votes (their paper text)"),
                             ("rest", "reference: the 60 votes in neither half (their notebook)")):
        res = t2[reference]
        print(f"\n{label}; mean DistCE of H1 {res['mean_distce_h1']:.4f} "
              f"(notebook ~{PAPER_DISTCE_H})")
        print(f"{'':12} {'KL ours':>9} {'paper':>7} {'TVD ours':>9} {'paper':>7} "
              f"{'KL common bins':>15} {'empty bins':>11} {'mean DistCE':>12}")
        for row, vals in res["table"].items():
            kl_p, tvd_p = PAPER_TABLE2[row]
            print(f"{row:12} {vals['kl']:9.4f} {kl_p:7.3f} {vals['tvd']:9.4f} {tvd_p:7.3f} "
                  f"{vals['kl_common_support']:15.4f} {vals['n_empty_q_bins']:11d} "
                  f"{vals['mean_distce']:12.4f}")
        draws = res["h2_draws"]
        print(f"KL(H1, H2) over {len(draws)} draws: median {np.median(draws[:, 0]):.4f}, range "
              f"{draws[:, 0].min():.4f}-{draws[:, 0].max():.4f}; on common bins median "
              f"{np.median(draws[:, 2]):.4f}; TVD median {np.median(draws[:, 1]):.4f} "
              f"(paper: one draw, KL 0.004, TVD 0.022)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
