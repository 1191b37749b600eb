"""Bias and coverage of ``evaluate(target="population")`` against the items' population distributions.

    python recipes/population_target.py simulate [--samples 100] [--items 1000] [--votes 3,5,10,20]
    python recipes/population_target.py chaosnli [--data DIR] [--seeds 10] [--votes 5]
    python recipes/population_target.py figure [--samples 40] [--out docs/img/population_bias.png]

``simulate``: three labels; each item's population distribution ``p_i`` is drawn from a
known population (``dirichlet``: Dirichlet(1.2, 0.6, 0.4); ``mixture``: 55% near-unanimous
items, Dirichlet(12, 0.3, 0.3) on a random label, 45% split items, Dirichlet(3, 3, 3);
``chaosnli``: the 100-vote distributions of ChaosNLI-S and -M, resampled), the model
``q_i`` is the softmax of ``log p_i`` plus N(0, 1) noise (``calibrated``), or of twice that
(``overconfident``), and each item gets ``n`` votes from ``Multinomial(n, p_i)``. For every
metric, the printed bias is the mean over samples of ``estimate / truth - 1``, where the
truth is the metric computed against the same items' ``p_i``; the coverage is the share of
samples whose 95% interval (200 Poisson-bootstrap replicates) contains that truth. Both
targets are printed: ``votes`` (the plug-in) and ``population``.

``chaosnli``: ChaosNLI-S and -M (100 votes per item) with Baan et al.'s RoBERTa predictions
(seed 0, dev and test halves joined), evaluated on every item's 100 votes (the reference),
and on seeded subsamples of 5 votes per item with both targets.

``figure``: the bias of both targets against votes per item (3 to 20), one panel per
metric, saved as a PNG for docs/guides/trust.md.
"""

from __future__ import annotations

import argparse
import json
import os
import warnings
from pathlib import Path

import numpy as np

from annokit.errors import DegenerateInputWarning
from annokit.metrics.engine import evaluate
from annokit.metrics.records import AlignedRecords

ROOT = Path(__file__).resolve().parents[1]
METRICS = ("jsd", "kl", "brier_soft", "dist_ce", "ent_ce", "rank_cs", "accuracy", "nll")
CHAOS_ORDER = ("entailment", "neutral", "contradiction")  # ChaosNLI's label_count order
PRED_ORDER = (0, 2, 1)  # Baan et al.'s probs are [e, c, n]: take e, n, c


def chaos_distributions(data: Path) -> np.ndarray:
    """The ChaosNLI-S and -M 100-vote distributions (rows of label_count / 100)."""
    rows = []
    for name in ("chaosNLI_snli.jsonl", "chaosNLI_mnli_m.jsonl"):
        with open(data / "chaosnli" / name) as f:
            rows += [json.loads(line)["label_count"] for line in f]
    counts = np.array(rows, dtype=np.float64)
    return counts / counts.sum(axis=1, keepdims=True)


def draw_population(kind: str, n: int, rng: np.random.Generator,
                    chaos: np.ndarray | None) -> np.ndarray:
    if kind == "dirichlet":
        return rng.dirichlet([1.2, 0.6, 0.4], n)
    if kind == "mixture":
        split = rng.random(n) >= 0.55
        alpha = np.full((n, 3), 0.3)
        alpha[np.arange(n), rng.integers(0, 3, n)] = 12.0
        alpha[split] = 3.0
        g = rng.standard_gamma(alpha)
        return g / g.sum(axis=1, keepdims=True)
    if chaos is None:
        raise SystemExit("the chaosnli population needs --data with chaosnli/")
    return chaos[rng.integers(0, len(chaos), n)]


def draw_model(p: np.ndarray, kind: str, rng: np.random.Generator) -> np.ndarray:
    logits = np.log(np.clip(p, 1e-3, 1.0)) + rng.normal(0.0, 1.0, p.shape)
    if kind == "overconfident":
        logits = 2.0 * logits
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def truth(q: np.ndarray, p: np.ndarray) -> dict[str, float]:
    """Each metric against the items' population distributions ``p`` (the hard label: the
    population majority, argmax p), by the metrics' own row functions."""
    from annokit.metrics import kernels
    from annokit.metrics.registry import REGISTRY

    values = kernels.item_values(q, p, p.argmax(axis=1),
                                 tuple(REGISTRY[k].per_item for k in METRICS))
    return dict(zip(METRICS, values.mean(axis=0).tolist(), strict=True))


def one_sample(pop: str, model: str, votes: int, items: int, seed: int, n_boot: int,
               chaos: np.ndarray | None) -> dict[str, dict[str, tuple[float, bool]]]:
    rng = np.random.default_rng([seed, votes])
    p = draw_population(pop, items, rng, chaos)
    q = draw_model(p, model, rng)
    x = rng.multinomial(votes, p)
    ref = truth(q, p)
    rec = AlignedRecords.from_arrays(q, x)
    out = {}
    for target in ("votes", "population"):
        res = evaluate(rec, metrics=list(METRICS), n_boot=n_boot, seed=seed, baselines=False,
                       target=target)
        out[target] = {k: (res.metrics[k] / ref[k] - 1, _covers(res, k, ref[k], n_boot))
                       for k in METRICS}
    return out


def _covers(res, name: str, value: float, n_boot: int) -> bool | None:
    """Whether the metric's interval contains ``value``; None without an interval."""
    ci = res.intervals.get(name)
    if not n_boot or ci is None or ci.method == "none":
        return None
    return bool(ci.low <= value <= ci.high)


def simulate(args: argparse.Namespace) -> None:
    chaos = chaos_distributions(Path(args.data)) if (Path(args.data) / "chaosnli").exists() \
        else None
    print(f"{args.samples} samples of {args.items} items, 3 labels, 95% intervals "
          f"({args.n_boot} replicates); bias = mean(estimate / truth - 1), coverage = "
          "share of intervals containing the truth (-: no interval is reported)")
    print("| population | model | votes | target | " + " | ".join(METRICS) + " |")
    print("|---" * (4 + len(METRICS)) + "|")
    for pop in args.populations.split(","):
        for model in args.models.split(","):
            for votes in (int(v) for v in args.votes.split(",")):
                runs = [one_sample(pop, model, votes, args.items, s, args.n_boot, chaos)
                        for s in range(args.samples)]
                for target in ("votes", "population"):
                    cells = []
                    for k in METRICS:
                        bias = np.mean([r[target][k][0] for r in runs])
                        hits = [r[target][k][1] for r in runs]
                        cover = "-" if None in hits else f"{np.mean(hits):.2f}"
                        cells.append(f"{100 * bias:+.1f}% / {cover}")
                    print(f"| {pop} | {model} | {votes} | {target} | " + " | ".join(cells)
                          + " |", flush=True)


def chaosnli(args: argparse.Namespace) -> None:
    from annokit.io import read_votes

    data = Path(args.data)
    for split, pred in (("snli", "SNLI"), ("mnli_m", "MNLI")):
        votes = read_votes(data / "chaosnli" / f"chaosNLI_{split}.jsonl")
        probs: dict[str, list[float]] = {}
        for half in ("dev", "test"):
            path = data / "chaosnli_predictions_baan2022" / f"{pred}_{half}_roberta-base_0.json"
            with open(path) as f:
                for line in f:
                    row = json.loads(line)
                    probs[str(row["uid"])] = [row["probs"][j] for j in PRED_ORDER]
        counts = votes.counts()
        ids = np.asarray(votes.item_ids).astype(str)
        keep = np.array([i in probs for i in ids])
        order = [list(votes.labels.names).index(c) for c in CHAOS_ORDER]
        x = np.asarray(counts)[keep][:, order]
        q = np.array([probs[i] for i in ids[keep]])
        everything = AlignedRecords.from_arrays(q, x, labels=list(CHAOS_ORDER))
        full = evaluate(everything, metrics=list(METRICS), baselines=False).metrics
        # the population target on every vote: the ~100 votes' own remaining noise removed
        full_pop = evaluate(everything, metrics=list(METRICS), baselines=False,
                            target="population").metrics
        print(f"\nChaosNLI-{split}: {int(keep.sum())} items, RoBERTa seed 0; full data = "
              f"every item's ~100 votes; {args.votes} votes per item over {args.seeds} seeds "
              "(mean, and the range over seeds, of estimate / full - 1)")
        print("| metric | full data | votes target | population target | full data, population "
              "target | population target against it |")
        print("|---|---|---|---|---|---|")
        rel: dict[str, dict[str, list[float]]] = {"votes": {}, "population": {}}
        for seed in range(args.seeds):
            rng = np.random.default_rng(seed)
            sub = np.array([rng.multivariate_hypergeometric(row, args.votes) for row in x])
            rec = AlignedRecords.from_arrays(q, sub, labels=list(CHAOS_ORDER))
            for target in ("votes", "population"):
                res = evaluate(rec, metrics=list(METRICS), baselines=False, target=target,
                               seed=seed)
                for k in METRICS:
                    rel[target].setdefault(k, []).append(res.metrics[k] / full[k] - 1)
                    if target == "population":
                        rel.setdefault("against", {}).setdefault(k, []).append(
                            res.metrics[k] / full_pop[k] - 1)
        for k in METRICS:
            cells = [f"{100 * np.mean(v[k]):+.1f}% ({100 * min(v[k]):+.1f}..{100 * max(v[k]):+.1f})"
                     for v in rel.values()]
            print(f"| {k} | {full[k]:.4f} | " + " | ".join(cells[:2])
                  + f" | {full_pop[k]:.4f} | {cells[2]} |")


def figure(args: argparse.Namespace) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    chaos = chaos_distributions(Path(args.data)) if (Path(args.data) / "chaosnli").exists() \
        else None
    votes = [3, 5, 10, 20]
    shown = ("jsd", "kl", "brier_soft", "dist_ce", "ent_ce", "rank_cs")
    fig, axes = plt.subplots(2, 3, figsize=(10, 5.5), sharex=True)
    for pop, style in (("mixture", "-"), ("chaosnli", "--")):
        bias: dict[str, dict[str, list[float]]] = {"votes": {}, "population": {}}
        for v in votes:
            runs = [one_sample(pop, "calibrated", v, args.items, s, 0, chaos)
                    for s in range(args.samples)]
            for target in bias:
                for k in shown:
                    bias[target].setdefault(k, []).append(
                        100 * np.mean([r[target][k][0] for r in runs]))
        for ax, k in zip(axes.flat, shown, strict=True):
            for target, color in (("votes", "tab:red"), ("population", "tab:blue")):
                ax.plot(votes, bias[target][k], style, color=color, marker="o",
                        label=f"{target} ({pop})")
            ax.set_title(k)
            ax.axhline(0, color="grey", lw=0.8)
    for ax in axes[1]:
        ax.set_xlabel("votes per item")
    for ax in axes[:, 0]:
        ax.set_ylabel("relative bias (%)")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"Bias against the population value, {args.samples} samples of "
                 f"{args.items} items, calibrated model")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["simulate", "chaosnli", "figure"])
    parser.add_argument("--data", default=os.environ.get("ANNOKIT_TEST_DATA",
                                                         str(ROOT.parent / "shared" / "data")))
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--votes", default="3,5,10,20")
    parser.add_argument("--n-boot", type=int, default=200)
    parser.add_argument("--populations", default="dirichlet,mixture,chaosnli")
    parser.add_argument("--models", default="calibrated,overconfident")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--out", default=str(ROOT / "docs" / "img" / "population_bias.png"))
    args = parser.parse_args()
    if args.what == "chaosnli":
        args.votes = 5 if "," in args.votes else int(args.votes)
    warnings.simplefilter("ignore", DegenerateInputWarning)
    {"simulate": simulate, "chaosnli": chaosnli, "figure": figure}[args.what](args)


if __name__ == "__main__":
    main()
