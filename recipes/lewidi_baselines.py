"""Two simple baselines on the LeWiDi sets, scored in the official scorers' units.

    python recipes/lewidi_baselines.py [--data DIR] [--lewidi2025 DIR]

Datasets: every LeWiDi 2023 set under ``DIR/lewidi2023`` (default ``DIR`` is
``$ANNOKIT_TEST_DATA`` or ``../shared/data``: ArMIS and HS-Brexit there; ConvAbuse and
MD-Agreement when present), and every LeWiDi 2025 set under the folder passed with
``--lewidi2025`` (CSC, MP, Paraphrase, VariErrNLI). Files are found as
``<Dataset>_<split>.json`` anywhere below those folders and read with
:func:`annokit.io.lewidi.read_lewidi`; disagreements between a file's own soft/hard labels
and its votes are printed.

Baselines, scored on every split other than train that has annotations (dev; test when
labelled):

* ``train-dist``: the training split's label distribution (the fraction of all training
  votes per label; for VariErrNLI, of training responses ticking each label), the same
  prediction for every item; its hard / per-annotator prediction is that distribution's
  most frequent label (first in label order on a tie; VariErrNLI: every label ticked by
  more than half of the training responses).
* ``majority``: the one-hot of each item's own majority vote (ties: the first tied label
  in label order, annokit's declared policy; VariErrNLI: the per-label majority,
  :func:`annokit.core.multilabel.multilabel_majority`, ties left out), every annotator
  predicted to give that label. It sees the labels it is scored on: a reference point,
  not a model.

Scores, as the official scorers compute them (no annokit metric registers these units
yet, so they are implemented below from the official definitions):

* 2023 (SemEval-2023 Task 11 starting kit, "snippet 4" and "snippet 5"): cross-entropy
  ``-sum(t * ln(clip(p, 1e-12, 1 - 1e-12) + 1e-9)) / N`` against the file's ``soft_label``
  (natural log, summed over labels and items, divided by the number of items), and
  ``f1_score(hard_label, prediction, average="micro")`` (scikit-learn's micro-F1 over all
  items: for one label per item this is the fraction of items whose predicted label is
  the file's ``hard_label``).
* 2025 (``LeWiDi_3-2025/Evaluation_LeWiDi_2025_Metrics.ipynb``): soft evaluation, the
  Manhattan distance ``sum_k |p_k - t_k|`` per item rounded to 5 decimals, averaged over
  items and rounded to 5 (VariErrNLI: per label, over its binary [not ticked, ticked]
  distribution, each rounded, averaged over the labels and rounded, then over items);
  for the ordinal sets also the Wasserstein-1 distance with cost ``|h - k|`` between bin
  positions (the scale points in order), averaged over items and rounded to 5.
  Perspectivist evaluation: the error rate ``|t - p|`` summed over the item's annotators
  over their number, rounded to 5 per item, averaged (MP; VariErrNLI per label, averaged
  over labels, then items), and for CSC and Paraphrase the absolute distance between
  each annotator's rating and the prediction, averaged over the item's annotators and
  divided by the number of scale points (6 for CSC, 11 for Paraphrase), averaged over
  items.
"""

from __future__ import annotations

import argparse
import os
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from annokit.core.multilabel import multilabel_majority, n_responses
from annokit.core.soft_labels import majority
from annokit.errors import DataFormatError, DegenerateInputWarning
from annokit.io.lewidi import read_lewidi

ROOT = Path(__file__).resolve().parents[1]
SPLIT_FILE = re.compile(r"^(?P<dataset>.+?)_(?P<split>train|dev|test)\.json$")
DATASETS_2023 = ("ArMIS", "HS-Brexit", "ConvAbuse", "MD-Agreement")
DATASETS_2025 = ("CSC", "MP", "Paraphrase", "VariErrNLI")
#: Number of scale points dividing the perspectivist absolute distance (official notebook).
SCALE_POINTS = {"CSC": 6, "Paraphrase": 11}
BASELINES = ("train-dist", "majority")


# -- the official formulas ---------------------------------------------------------------

def ce_2023(targets: np.ndarray, predictions: np.ndarray, epsilon: float = 1e-12) -> float:
    """SemEval-2023 Task 11 cross-entropy: natural log, clipping, sum over labels, mean over items."""
    p = np.clip(np.asarray(predictions, dtype=float), epsilon, 1.0 - epsilon)
    t = np.asarray(targets, dtype=float)
    return float(-np.sum(t * np.log(p + 1e-9)) / p.shape[0])


def micro_f1_2023(gold: list[str], predicted: list[str]) -> float:
    """scikit-learn ``f1_score(..., average="micro")`` for one label per item: the share of
    items whose predicted label equals the reference (micro precision = recall = F1)."""
    gold_arr, pred_arr = np.asarray(gold, dtype=object), np.asarray(predicted, dtype=object)
    return float(np.mean(gold_arr == pred_arr))


def manhattan_2025(targets: np.ndarray, predictions: np.ndarray) -> float:
    """Official average MD: per-item sum of absolute differences rounded to 5, mean rounded to 5."""
    per_item = [round(float(np.sum(np.abs(np.asarray(p) - np.asarray(t)))), 5)
                for t, p in zip(targets, predictions, strict=True)]
    return round(sum(per_item) / len(per_item), 5) if per_item else 0.0


def multilabel_manhattan_2025(targets: list[np.ndarray], predictions: list[np.ndarray]) -> float:
    """Official multi-label MD: :func:`manhattan_2025` over each item's per-label binary
    distributions, then the mean of those over items, rounded to 5."""
    scores = [manhattan_2025(t, p) for t, p in zip(targets, predictions, strict=True)]
    return round(sum(scores) / len(scores), 5)


def wasserstein_2025(targets: np.ndarray, predictions: np.ndarray) -> float:
    """Official average Wasserstein distance, cost ``|h - k|`` between bin positions.

    On a line the optimal transport cost between two distributions of equal mass is the
    L1 distance between their cumulative sums (the value POT's ``ot.emd2`` returns for
    this cost matrix); the mean over items is rounded to 5 decimals.
    """
    t = np.cumsum(np.asarray(targets, dtype=float), axis=1)[:, :-1]
    p = np.cumsum(np.asarray(predictions, dtype=float), axis=1)[:, :-1]
    distances = np.abs(t - p).sum(axis=1)
    return round(float(distances.sum() / len(distances)), 5)


def error_rate_2025(targets: list[np.ndarray], predictions: list[np.ndarray]) -> float:
    """Official perspectivist error rate: per item ``1 - (a - sum|t - p|) / a`` rounded to 5, mean."""
    scores = []
    for t, p in zip(targets, predictions, strict=True):
        a = len(t)
        errors = float(np.sum(np.abs(np.asarray(t, dtype=float) - np.asarray(p, dtype=float))))
        scores.append(round(1 - ((a - errors) / a), 5))
    return float(np.mean(scores))


def multilabel_error_rate_2025(targets: list[list[np.ndarray]],
                               predictions: list[list[np.ndarray]]) -> float:
    """Official multi-label error rate: :func:`error_rate_2025` over the per-label annotator
    vectors of each item, then the mean over items."""
    return float(np.mean([error_rate_2025(t, p)
                          for t, p in zip(targets, predictions, strict=True)]))


def absolute_distance_2025(targets: list[np.ndarray], predictions: list[np.ndarray],
                           scale_points: int) -> float:
    """Official perspectivist distance for Likert sets: per item the mean ``|t - p|`` over its
    annotators divided by the number of scale points; mean over items (no rounding)."""
    return float(np.mean([np.mean(np.abs(np.asarray(t, dtype=float) - np.asarray(p, dtype=float)))
                          / scale_points for t, p in zip(targets, predictions, strict=True)]))


# -- data --------------------------------------------------------------------------------

def find_sets(root: Path | None) -> dict[str, dict[str, Path]]:
    """``{dataset: {split: file}}`` for the ``<Dataset>_<split>.json`` files below ``root``."""
    found: dict[str, dict[str, Path]] = {}
    if root is None or not root.exists():
        return found
    for path in sorted(root.rglob("*.json")):
        m = SPLIT_FILE.match(path.name)
        if m:
            found.setdefault(m["dataset"], {})[m["split"]] = path
    return found


def _read(path: Path, notes: list[str]):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DegenerateInputWarning)
        votes = read_lewidi(path)
    notes.extend(str(w.message) for w in caught)
    return votes


def _align(dist: dict[str, float], names: tuple[str, ...]) -> np.ndarray:
    return np.array([dist.get(n, 0.0) for n in names])


def _numeric(names: tuple[str, ...]) -> np.ndarray | None:
    try:
        return np.array([float(n) for n in names])
    except ValueError:
        return None


def _responses(votes) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per item: the annotator codes (file order) and the label code of each vote."""
    bounds = np.flatnonzero(np.diff(votes.item_index)) + 1
    return list(zip(np.split(votes.annotator_index, bounds), np.split(votes.label_index, bounds),
                    strict=True))


def _train_distribution(train) -> tuple[dict[str, float], bool]:
    multilabel = train.read_details.details["multilabel"]
    counts = train.counts().sum(axis=0).astype(float)
    total = n_responses(train).sum() if multilabel else counts.sum()
    return dict(zip(train.labels.names, counts / total, strict=True)), multilabel


def score_set(dataset: str, files: dict[str, Path], notes: list[str]) -> list[dict[str, Any]]:
    """Rows ``{edition, dataset, split, baseline, n_items, <metric>: value}`` for one dataset."""
    rows = []
    train = _read(files["train"], notes) if "train" in files else None
    train_dist = _train_distribution(train) if train is not None else None
    for split in ("dev", "test"):
        if split not in files:
            continue
        try:
            votes = _read(files[split], notes)
        except DataFormatError as exc:  # a test split released without annotations
            notes.append(f"{dataset} {split}: not scored ({exc})")
            continue
        for baseline in BASELINES:
            if baseline == "train-dist" and train_dist is None:
                notes.append(f"{dataset}: no train split, so no train-dist baseline")
                continue
            scores = _score(votes, baseline, train_dist)
            rows.append({"edition": votes.read_details.details["edition"], "dataset": dataset,
                         "split": split, "baseline": baseline, "n_items": votes.n_items, **scores})
    return rows


def _score(votes, baseline: str, train_dist) -> dict[str, float]:
    info = votes.read_details.details
    names = votes.labels.names
    n, k = votes.n_items, votes.n_labels
    meta = votes.item_metadata
    if info["multilabel"]:
        return _score_multilabel(votes, baseline, train_dist)
    if baseline == "train-dist":
        dist = _align(train_dist[0], names)
        soft = np.tile(dist, (n, 1))
        hard = np.full(n, int(np.argmax(dist)))  # first in label order on a tie
    else:
        hard = majority(votes.counts(), ties="first").labels
        soft = np.eye(k)[hard]
    targets = np.array([[float(s.get(name, 0.0)) for name in names] for s in _soft_by_name(votes)])
    if info["edition"] == 2023:
        return {"cross_entropy": ce_2023(targets, soft),
                "micro_f1": micro_f1_2023(meta["hard_label"].astype(str).tolist(),
                                          [names[h] for h in hard])}
    out = {"manhattan": manhattan_2025(targets, soft)}
    values = _numeric(names)
    if info["scale"] == "ordinal":
        out["wasserstein"] = wasserstein_2025(targets, soft)
    per_item = _responses(votes)
    t = [values[labs] for _, labs in per_item]
    p = [np.full(len(labs), values[hard[i]]) for i, (_, labs) in enumerate(per_item)]
    if info["dataset"] in SCALE_POINTS:
        out["abs_distance"] = absolute_distance_2025(t, p, SCALE_POINTS[info["dataset"]])
    else:
        out["error_rate"] = error_rate_2025(t, p)
    return out


def _soft_by_name(votes) -> list[dict[str, float]]:
    """Each item's file soft label keyed by the votes' label names ("1.0" -> "1")."""
    out = []
    for soft in votes.item_metadata["soft_label"]:
        out.append({_name(votes, key): value for key, value in (soft or {}).items()})
    return out


def _name(votes, key: str) -> str:
    if key in votes.labels.names:
        return key
    try:
        x = float(key)
    except ValueError:
        return key
    return str(int(x)) if x.is_integer() else str(x)


def _score_multilabel(votes, baseline: str, train_dist) -> dict[str, float]:
    names, n = votes.labels.names, votes.n_items
    if baseline == "train-dist":
        q = _align(train_dist[0], names)
        ticked = np.tile(q, (n, 1))
        chosen = np.tile(q > 0.5, (n, 1))
    else:
        chosen = multilabel_majority(votes, ties="exclude").labels
        ticked = chosen.astype(float)
    soft_pred = [np.stack([1 - ticked[i], ticked[i]], axis=1) for i in range(n)]
    targets = []
    for soft in _soft_by_name(votes):
        targets.append(np.array([[float(soft[name]["0"]), float(soft[name]["1"])] for name in names]))
    # perspectivist: per label, each annotator's 0/1 tick
    per_item = _responses(votes)
    t_vectors, p_vectors = [], []
    for i, (anns, labs) in enumerate(per_item):
        order = list(dict.fromkeys(anns.tolist()))
        grid = np.zeros((len(names), len(order)))
        pos = {a: c for c, a in enumerate(order)}
        for a, lab in zip(anns.tolist(), labs.tolist(), strict=True):
            grid[lab, pos[a]] = 1.0
        t_vectors.append(list(grid))
        p_vectors.append([np.full(len(order), float(chosen[i, j])) for j in range(len(names))])
    return {"manhattan": multilabel_manhattan_2025(targets, soft_pred),
            "error_rate": multilabel_error_rate_2025(t_vectors, p_vectors)}


def score_all(data2023: Path | None, data2025: Path | None) -> tuple[list[dict[str, Any]], list[str]]:
    """Scores of both baselines on every supported set found, and the reader's notes."""
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    for root, supported in ((data2023, DATASETS_2023), (data2025, DATASETS_2025)):
        for dataset, files in find_sets(root).items():
            if dataset in supported:
                rows.extend(score_set(dataset, files, notes))
    return rows, list(dict.fromkeys(notes))


METRICS = ("cross_entropy", "micro_f1", "manhattan", "wasserstein", "error_rate", "abs_distance")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(
        os.environ.get("ANNOKIT_TEST_DATA", ROOT.parent / "shared" / "data")),
        help="folder holding lewidi2023/ (default $ANNOKIT_TEST_DATA or ../shared/data)")
    parser.add_argument("--lewidi2025", type=Path, default=None,
                        help="folder holding the LeWiDi 2025 sets (CSC/, MP/, Paraphrase/, VariErrNLI/)")
    args = parser.parse_args(argv)
    rows, notes = score_all(args.data / "lewidi2023", args.lewidi2025)
    if not rows:
        print(f"no LeWiDi set found under {args.data / 'lewidi2023'}"
              + (f" or {args.lewidi2025}" if args.lewidi2025 else ""))
        return 1
    print(f"{'edition':<8}{'dataset':<13}{'split':<6}{'baseline':<11}{'items':>6}"
          + "".join(f"{m:>14}" for m in METRICS))
    for r in rows:
        cells = "".join(f"{r[m]:>14.5f}" if m in r else f"{'-':>14}" for m in METRICS)
        print(f"{r['edition']:<8}{r['dataset']:<13}{r['split']:<6}{r['baseline']:<11}"
              f"{r['n_items']:>6}{cells}")
    print("\n2023: cross_entropy (natural log, clip 1e-12, +1e-9, sum / items) vs the file's soft_label;"
          " micro_f1 vs its hard_label. 2025: manhattan, wasserstein (ordinal sets), error_rate /"
          " abs_distance (perspectivist), as the official notebook computes them.")
    for note in notes:
        print(f"note: {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
