"""recipes/lewidi_baselines.py against the official formulas, recomputed here from the raw JSON.

2023: SemEval-2023 Task 11 starting kit (cross-entropy: clip to [1e-12, 1 - 1e-12], natural log
of p + 1e-9, summed over labels and items, divided by the number of items; scikit-learn's
micro-F1 against ``hard_label``, which for one label per item is accuracy). 2025:
``LeWiDi_3-2025/Evaluation_LeWiDi_2025_Metrics.ipynb`` (Manhattan distance rounded to 5 per item
and on average; Wasserstein-1 between scale positions; error rate rounded to 5 per item;
absolute distance over the number of scale points). The Wasserstein reference is
``scipy.stats.wasserstein_distance``, not the recipe's cumulative-sum formula.
"""

from __future__ import annotations

import importlib.util
import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import wasserstein_distance

ROOT = Path(__file__).resolve().parents[2]


def _recipe():
    spec = importlib.util.spec_from_file_location("lewidi_baselines",
                                                  ROOT / "recipes" / "lewidi_baselines.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


# -- 2023, the shared data ---------------------------------------------------------------

def _official_ce(targets, preds):
    total = 0.0
    for t, p in zip(targets, preds, strict=True):
        for tj, pj in zip(t, p, strict=True):
            total += tj * math.log(min(max(pj, 1e-12), 1 - 1e-12) + 1e-9)
    return -total / len(targets)


def _expected_2023(folder, dataset, split):
    train = _load(folder / f"{dataset}_train.json")
    votes = Counter(v for r in train.values() for v in r["annotations"].split(","))
    dist = [votes["0"] / sum(votes.values()), votes["1"] / sum(votes.values())]
    doc = _load(folder / f"{dataset}_{split}.json")
    targets = [[r["soft_label"]["0"], r["soft_label"]["1"]] for r in doc.values()]
    hard = [r["hard_label"] for r in doc.values()]
    train_hard = "0" if dist[0] >= dist[1] else "1"
    maj = []
    for r in doc.values():
        c = Counter(r["annotations"].split(","))
        maj.append("1" if c["1"] > c["0"] else "0")  # a tie goes to the first label, "0"
    one_hot = [[1.0, 0.0] if m == "0" else [0.0, 1.0] for m in maj]
    return {
        "train-dist": {"cross_entropy": _official_ce(targets, [dist] * len(targets)),
                       "micro_f1": sum(h == train_hard for h in hard) / len(hard)},
        "majority": {"cross_entropy": _official_ce(targets, one_hot),
                     "micro_f1": sum(h == m for h, m in zip(hard, maj, strict=True)) / len(hard)},
    }


@pytest.mark.parametrize("dataset", ["ArMIS", "HS-Brexit"])
def test_2023_baselines_match_the_official_formulas(shared_data, dataset):
    folder = shared_data("lewidi2023", dataset)
    rows, _ = _recipe().score_all(folder.parent, None)
    got = {(r["split"], r["baseline"]): r for r in rows if r["dataset"] == dataset}
    assert set(got) == {(s, b) for s in ("dev", "test") for b in ("train-dist", "majority")}
    for split in ("dev", "test"):
        for baseline, scores in _expected_2023(folder, dataset, split).items():
            for metric, value in scores.items():
                assert got[split, baseline][metric] == pytest.approx(value, rel=1e-12, abs=1e-12), (
                    split, baseline, metric)


def test_recipe_prints_a_table(shared_data, capsys):
    root = shared_data("lewidi2023").parent
    assert _recipe().main(["--data", str(root)]) == 0
    out = capsys.readouterr().out
    assert "ArMIS" in out and "cross_entropy" in out and "micro_f1" in out


# -- 2025, synthetic files in the published layout ---------------------------------------

SCALES = {"CSC": [str(v) for v in range(1, 7)], "Paraphrase": [str(v) for v in range(-5, 6)],
          "MP": ["0", "1"]}
NLI = ["contradiction", "entailment", "neutral"]


def _write_2025(folder, rng):
    folder.mkdir()
    for dataset, scale in SCALES.items():
        for split in ("train", "dev", "test"):
            if dataset == "MP" and split == "train":
                continue  # no training file: no train-dist baseline
            doc = {}
            for i in range(int(rng.integers(5, 12))):
                n = int(rng.integers(2, 7))
                anns = {f"Ann{a}": str(rng.choice(scale[:4] if i % 3 == 0 else scale))
                        for a in rng.choice(40, n, replace=False)}
                c = Counter(anns.values())
                key = (lambda v: f"{float(v)}") if dataset == "MP" else (lambda v: v)
                doc[f"{split}{i}"] = {"annotators": ",".join(anns), "annotations": anns,
                                      "number of annotations": n, "split": split,
                                      "soft_label": {key(v): c[v] / n for v in scale}}
            if dataset == "CSC" and split == "test":
                doc = {k: {"annotators": r["annotators"], "split": "test"} for k, r in doc.items()}
            (folder / f"{dataset}_{split}.json").write_text(json.dumps(doc), encoding="utf-8")
    for split in ("train", "dev"):
        doc = {}
        for i in range(int(rng.integers(5, 12))):
            n = int(rng.integers(2, 6))
            anns = {}
            for a in range(n):
                ticked = [lab for lab in NLI if rng.random() < 0.4] or [str(rng.choice(NLI))]
                anns[f"Ann{a + 1}"] = ",".join(ticked)
            ticks = Counter(lab for v in anns.values() for lab in v.split(","))
            doc[str(1000 + i)] = {
                "annotators": ",".join(anns), "annotations": anns, "split": split,
                "soft_label": {lab: {"0": round(1 - ticks[lab] / n, 3), "1": round(ticks[lab] / n, 3)}
                               for lab in NLI}}
        (folder / f"VariErrNLI_{split}.json").write_text(json.dumps(doc), encoding="utf-8")


def _md(t, p):
    return round(sum(abs(a - b) for a, b in zip(t, p, strict=True)), 5)


def _expected_2025(folder, dataset):
    doc = _load(folder / f"{dataset}_dev.json")
    train_path = folder / f"{dataset}_train.json"
    out = {}
    if dataset == "VariErrNLI":
        train = _load(train_path)
        n_resp = sum(len(r["annotations"]) for r in train.values())
        q = [sum(lab in v.split(",") for r in train.values() for v in r["annotations"].values()) / n_resp
             for lab in NLI]
        for baseline in ("train-dist", "majority"):
            mds, ers = [], []
            for r in doc.values():
                anns = r["annotations"]
                ticks = {lab: [1.0 if lab in v.split(",") else 0.0 for v in anns.values()] for lab in NLI}
                if baseline == "train-dist":
                    prob = q
                    chosen = [x > 0.5 for x in q]
                else:
                    chosen = [2 * sum(ticks[lab]) > len(anns) for lab in NLI]
                    prob = [float(c) for c in chosen]
                per_label = [_md([r["soft_label"][lab]["0"], r["soft_label"][lab]["1"]],
                                 [1 - prob[j], prob[j]]) for j, lab in enumerate(NLI)]
                mds.append(round(sum(per_label) / len(per_label), 5))
                ers.append(np.mean([round(sum(abs(t - float(chosen[j])) for t in ticks[lab]) / len(anns), 5)
                                    for j, lab in enumerate(NLI)]))
            out[baseline] = {"manhattan": round(sum(mds) / len(mds), 5), "error_rate": float(np.mean(ers))}
        return out
    scale = SCALES[dataset]
    values = [float(v) for v in scale]

    def soft(r):
        return [r["soft_label"][f"{float(v)}" if dataset == "MP" else v] for v in scale]

    dists = {}
    if train_path.exists():
        c = Counter(v for r in _load(train_path).values() for v in r["annotations"].values())
        total = sum(c.values())
        dists["train-dist"] = None, [c[v] / total for v in scale]
    dists["majority"] = None, None
    for baseline, (_, dist) in dists.items():
        mds, wss, per = [], [], []
        for r in doc.values():
            votes = list(r["annotations"].values())
            if baseline == "majority":
                c = Counter(votes)
                best = max(c.values())
                label = next(v for v in scale if c[v] == best)  # first in scale order on a tie
                pred = [1.0 if v == label else 0.0 for v in scale]
            else:
                pred = dist
                label = scale[int(np.argmax(dist))]
            t = soft(r)
            mds.append(_md(t, pred))
            wss.append(wasserstein_distance(range(len(scale)), range(len(scale)), t, pred))
            errs = [abs(float(v) - float(label)) for v in votes]
            per.append(errs)
        scores = {"manhattan": round(sum(mds) / len(mds), 5)}
        if dataset in ("CSC", "Paraphrase"):
            scores["wasserstein"] = round(sum(wss) / len(wss), 5)
            scores["abs_distance"] = float(np.mean([np.mean(e) / len(values) for e in per]))
        else:
            scores["error_rate"] = float(np.mean([round(1 - (len(e) - sum(e)) / len(e), 5) for e in per]))
        out[baseline] = scores
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_2025_baselines_match_the_official_formulas(tmp_path, seed):
    folder = tmp_path / "lewidi2025"
    _write_2025(folder, np.random.default_rng(seed))
    rows, notes = _recipe().score_all(None, folder)
    got = {(r["dataset"], r["baseline"]): r for r in rows if r["split"] == "dev"}
    assert not any(r["dataset"] == "CSC" and r["split"] == "test" for r in rows)
    assert any("CSC test: not scored" in n for n in notes)
    assert any("MP: no train split" in n for n in notes)
    assert ("MP", "train-dist") not in got
    for dataset in ("CSC", "Paraphrase", "MP", "VariErrNLI"):
        for baseline, scores in _expected_2025(folder, dataset).items():
            for metric, value in scores.items():
                assert got[dataset, baseline][metric] == pytest.approx(value, abs=1.1e-5), (
                    dataset, baseline, metric)
