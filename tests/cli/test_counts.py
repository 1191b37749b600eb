"""Datasets published as counts (CIFAR-10H's layout) through the CLI, with synthetic data."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from annokit.cli import main

LABELS = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
          "truck"]
LABEL_OPTION = ",".join(LABELS)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def cifar(tmp_path_factory):
    """Synthetic counts shaped like CIFAR-10H's cifar10h-counts.npy (10,000 x 10, 47-63 votes
    per item), its normalised array, a model's predictions by row and the same votes written
    one row per vote."""
    root = tmp_path_factory.mktemp("cifar")
    rng = np.random.default_rng(2019)
    n = rng.integers(47, 64, size=10_000)
    counts = rng.multinomial(n, rng.dirichlet(np.full(10, 0.1), size=10_000))
    np.save(root / "counts.npy", counts)
    np.save(root / "probs.npy", counts / counts.sum(axis=1, keepdims=True))
    np.save(root / "preds.npy", rng.dirichlet(np.ones(10), size=10_000))
    item, label = np.nonzero(counts)
    reps = counts[item, label]
    pd.DataFrame({"item": np.repeat(item, reps).astype(str),
                  "label": np.asarray(LABELS)[np.repeat(label, reps)]}).to_csv(
        root / "long.csv", index=False)
    return root, counts


def test_stats_of_a_count_array_equal_numpy(cifar):
    root, counts = cifar
    result = run("stats", "--votes", root / "counts.npy", "--labels", LABEL_OPTION, "--n-boot",
                 "0", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    per_item = counts.sum(axis=1)
    p = counts / per_item[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.where(p > 0, p * np.log(p), 0.0).sum(axis=1)  # oracle: entropy in nats
    assert out["n_items"] == 10_000 and out["n_votes"] == int(counts.sum())
    assert out["n_annotators"] is None
    assert (out["votes_per_item"]["min"], out["votes_per_item"]["max"]) == (47, 63)
    unanimous = (counts.max(axis=1) == per_item)
    assert out["agreement"]["n_unanimous"] == int(unanimous.sum())
    assert out["agreement"]["unanimous_share"] == pytest.approx(unanimous.mean(), abs=1e-15)
    assert out["entropy"]["unit"] == "nats"
    assert out["entropy"]["mean"] == pytest.approx(ent.mean(), rel=1e-12)
    assert out["read_as"].startswith("counts.npy: counts array (10000 items x 10 labels); item "
                                     "ids: the row positions 0-9999 (0-based")
    table = run("stats", root / "counts.npy", "--labels", LABEL_OPTION, "--n-boot", "0")
    assert f"unanimous items                      {int(unanimous.sum()):,} " in table.output


def test_evaluate_array_equals_long_table(cifar):
    """A predictions array joined by row position to the counts array gives the metrics of the
    same votes read one row per vote with the predictions' ids written out."""
    root, _ = cifar
    by_array = run("evaluate", "--votes", root / "counts.npy", "--labels", LABEL_OPTION,
                   "--predictions", root / "preds.npy", "--pred-labels", LABEL_OPTION,
                   "--metrics", "all", "--json")
    assert by_array.exit_code == 0, by_array.output
    ids = root / "long_preds.npy"  # the same probabilities, ids in the sidecar file
    np.save(ids, np.load(root / "preds.npy"))
    (root / "long_preds.ids.txt").write_text("\n".join(map(str, range(10_000))) + "\n")
    by_long = run("evaluate", "--votes", root / "long.csv", "--predictions", ids,
                  "--pred-labels", LABEL_OPTION, "--labels", LABEL_OPTION, "--metrics", "all",
                  "--json")
    assert by_long.exit_code == 0, by_long.output
    a, b = json.loads(by_array.stdout), json.loads(by_long.stdout)
    assert a["n_items"] == b["n_items"] == 10_000 and a["metrics"].keys() == b["metrics"].keys()
    for name, value in a["metrics"].items():
        assert value == pytest.approx(b["metrics"][name], rel=1e-12, abs=1e-12), name
    for kind in ("chance", "oracle"):
        for name, value in a["baselines"][kind].items():
            assert value == pytest.approx(b["baselines"][kind][name], rel=1e-12, abs=1e-12)


def test_report_says_the_votes_came_as_counts(cifar, tmp_path):
    root, _ = cifar
    small = np.load(root / "counts.npy")[:300]
    np.save(tmp_path / "c.npy", small)
    np.save(tmp_path / "p.npy", np.load(root / "preds.npy")[:300])
    result = run("report", "--votes", tmp_path / "c.npy", "--labels", LABEL_OPTION, "--model",
                 f"m={tmp_path / 'p.npy'}", "--pred-labels", LABEL_OPTION, "--out",
                 tmp_path / "out", "--n-boot", "0", "--quiet")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "out" / "report.md").read_text()
    assert "The votes came as counts (annotator ids unknown): c.npy: counts array (300 items" \
        in text


@pytest.mark.parametrize("array, message", [
    (np.array([[1, -2]]), "Error: c.npy, row 0, column 1: negative count -2; counts are whole "
                          "numbers >= 0"),
    (np.array([[1.0, 0.5]]), "Error: c.npy, row 0, column 1: 0.5 is not a whole count; "
                             "probabilities are read with --format soft"),
    (np.array([1, 2]), "Error: c.npy: 1-D array of shape (2,); --format counts reads a 2-D "
                       "array of shape (items, labels)"),
    (np.array([[1, 2, 3]]), "Error: c.npy: --labels names 2 labels for 3 columns; give one name "
                            "per column, in column order"),
])
def test_one_line_errors(tmp_path, array, message):
    np.save(tmp_path / "c.npy", array)
    result = run("stats", tmp_path / "c.npy", "--labels", "a,b")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output.strip().splitlines() == [message]


def test_count_columns_never_read_as_annotators(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("item,cat,dog\nx1,3,0\nx2,1,2\n")
    out = json.loads(run("stats", path, "--labels", "cat,dog", "--n-boot", "0", "--json").output)
    assert out["n_annotators"] is None and out["n_votes"] == 6
    assert out["label_counts"] == {"cat": 4, "dog": 2}
    result = run("stats", path, "--labels", "cat,dog", "--format", "wide")
    assert result.exit_code == 1
    assert result.output.strip() == ("Error: t.csv: the columns besides 'item' are the labels "
                                     "given with --labels: a table of counts per label, not of "
                                     "annotators; read it with --format counts")


def test_item_ids_option(tmp_path):
    np.save(tmp_path / "c.npy", np.array([[2, 1], [0, 3]]))
    (tmp_path / "ids.txt").write_text("img1\nimg2\n")
    out = json.loads(run("stats", tmp_path / "c.npy", "--item-ids", tmp_path / "ids.txt",
                         "--n-boot", "0", "--json").output)
    assert "item ids from ids.txt" in out["read_as"]


def test_soft_labels_give_the_same_distributions(cifar):
    root, counts = cifar
    args = ("--labels", LABEL_OPTION, "--n-boot", "0", "--json")
    by_counts = json.loads(run("stats", root / "counts.npy", *args).output)
    result = run("stats", root / "probs.npy", "--format", "soft", *args)
    assert result.exit_code == 0, result.output
    soft = json.loads(result.output)
    assert soft["soft_only"] is True and soft["n_votes"] is None and soft["n_items"] == 10_000
    assert soft["entropy"]["mean"] == pytest.approx(by_counts["entropy"]["mean"], rel=1e-12)
    assert soft["agreement"]["n_unanimous"] == by_counts["agreement"]["n_unanimous"]
    assert soft["majority_counts"] == by_counts["majority_counts"]
    assert soft["ties"] == by_counts["ties"]
    assert soft["krippendorff_alpha"] is None


def test_evaluate_soft_labels_equals_counts(cifar):
    root, _ = cifar
    common = ("--labels", LABEL_OPTION, "--predictions", root / "preds.npy", "--pred-labels",
              LABEL_OPTION, "--metrics", "all", "--json")
    a = json.loads(run("evaluate", "--votes", root / "counts.npy", *common).stdout)
    b = run("evaluate", "--votes", root / "probs.npy", "--format", "soft", *common)
    assert b.exit_code == 0, b.output
    b = json.loads(b.stdout)
    for name, value in a["metrics"].items():
        assert value == pytest.approx(b["metrics"][name], rel=1e-12, abs=1e-12), name


@pytest.mark.parametrize("command", [["subsample"], ["annotators"], ["aggregate"],
                                     ["filter", "--method", "agreement", "--out", "kept.csv",
                                      "--audit", "audit.csv"]])
def test_what_needs_votes_is_refused_on_soft_labels(tmp_path, command):
    np.save(tmp_path / "p.npy", np.array([[0.25, 0.75], [1.0, 0.0]]))
    command = [c if not c.endswith(".csv") else tmp_path / c for c in command]
    result = run(*command, tmp_path / "p.npy", "--format", "soft")
    assert result.exit_code == 1
    assert result.output.strip() == (f"Error: p.npy has soft labels only (no votes): "
                                     f"{command[0]} needs votes; give the per-annotator votes "
                                     "or counts")


def test_report_on_soft_labels_has_the_agreement_bins_of_the_counts(cifar, tmp_path):
    root, _ = cifar
    np.save(tmp_path / "c.npy", np.load(root / "counts.npy")[:400])
    probs = np.load(root / "probs.npy")[:400]
    np.save(tmp_path / "s.npy", probs)
    np.save(tmp_path / "p.npy", np.load(root / "preds.npy")[:400])
    docs = {}
    for name, extra in (("c", ()), ("s", ("--format", "soft"))):
        result = run("report", "--votes", tmp_path / f"{name}.npy", *extra, "--labels",
                     LABEL_OPTION, "--model", f"m={tmp_path / 'p.npy'}", "--pred-labels",
                     LABEL_OPTION, "--out", tmp_path / name, "--n-boot", "0", "--quiet")
        assert result.exit_code == 0, result.output
        docs[name] = json.loads((tmp_path / name / "report.json").read_text())
    c, s = docs["c"], docs["s"]
    assert s["binning"] == c["binning"]
    assert s["models"][0]["metrics"] == c["models"][0]["metrics"]  # as printed (rounded)
    assert s["models"][0]["per_bin"] == c["models"][0]["per_bin"]
    assert s["human_ceiling"] is None
    assert "no human ceiling: soft labels only (no votes to split into halves)" in s["notes"]
    assert any(n.startswith("The votes came as soft labels (annotator ids unknown): s.npy: soft "
                            "labels array (400 items") for n in s["notes"])
    refused = run("report", "--votes", tmp_path / "s.npy", "--format", "soft", "--labels",
                  LABEL_OPTION, "--model", f"m={tmp_path / 'p.npy'}", "--pred-labels",
                  LABEL_OPTION, "--out", tmp_path / "x", "--subsample", "default", "--quiet")
    assert refused.exit_code == 1
    assert refused.output.strip() == ("Error: s.npy has soft labels only (no votes): report "
                                      "--subsample needs votes; give the per-annotator votes or "
                                      "counts")
