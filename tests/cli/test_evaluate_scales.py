"""``annokit evaluate`` beyond nominal labels: scales, the binary positive class and
the perspectivist view through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy.stats import wasserstein_distance

from annokit.cli import main
from annokit.io import read_votes
from annokit.metrics import compute
from annokit.metrics.perspectivist import evaluate_annotators
from annokit.metrics.registry import available

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def run(*args):
    return CliRunner().invoke(main, ["evaluate", *map(str, args)])


def _rated(tmp_path, labels, n_items=40, n_votes=7, seed=0):
    """Seeded votes on numeric labels and one model's distribution per item."""
    rng = np.random.default_rng(seed)
    k = len(labels)
    centre = rng.integers(0, k, size=n_items)
    rows = []
    for i in range(n_items):
        picks = np.clip(centre[i] + rng.integers(-1, 2, size=n_votes), 0, k - 1)
        rows += [(f"i{i}", f"a{j}", labels[c]) for j, c in enumerate(picks)]
    votes = tmp_path / "votes.csv"
    pd.DataFrame(rows, columns=["item", "annotator", "label"]).to_csv(votes, index=False)
    probs = rng.dirichlet(np.ones(k), size=n_items)
    preds = tmp_path / "preds.csv"
    frame = pd.DataFrame({"item": [f"i{i}" for i in range(n_items)]})
    for j, name in enumerate(labels):
        frame[f"prob_{name}"] = probs[:, j]
    frame.to_csv(preds, index=False)
    return votes, preds, probs


def _human(votes_path, scale):
    votes = read_votes(votes_path, scale=scale)
    counts = votes.counts()
    order = np.argsort([f"i{i}" for i in range(votes.n_items)])  # item order of the file
    return votes, counts / counts.sum(axis=1, keepdims=True), order


@pytest.mark.parametrize("scale, values", [("ordinal", [0, 1, 2, 3, 4]),
                                           ("interval", [1, 2, 4, 8, 9])])
def test_ordered_scales_add_order_aware_metrics_equal_to_scipy_wasserstein(tmp_path, scale,
                                                                           values):
    labels = [str(v) for v in ([1, 2, 3, 4, 5] if scale == "ordinal" else values)]
    votes_path, preds, probs = _rated(tmp_path, labels)
    per_item = tmp_path / "per_item.csv"
    result = run(votes_path, "--predictions", preds, "--scale", scale, "--json",
                 "--per-item", per_item)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["scale"] == scale and out["positive_label"] is None
    assert list(out["metrics"]) == list(available(True, True, scale=scale, n_labels=5))
    votes, soft, _ = _human(votes_path, scale)
    p = pd.read_csv(preds).set_index("item").loc[votes.item_ids.astype(str)].to_numpy()
    # ordinal: unit spacing of the ranks; interval: the labels' numbers (scipy, independent)
    ref = [wasserstein_distance(values, values, p[i], soft[i]) for i in range(len(p))]
    assert out["metrics"]["wasserstein"] == pytest.approx(np.mean(ref), abs=1e-12)
    column = pd.read_csv(per_item).set_index("item").loc[votes.item_ids.astype(str),
                                                          "wasserstein"]
    assert column.to_numpy() == pytest.approx(ref, abs=1e-12)
    assert out["metrics"]["manhattan"] == pytest.approx(np.abs(p - soft).sum(axis=1).mean())


def test_nominal_default_has_no_order_aware_metric(tmp_path):
    votes_path, preds, _ = _rated(tmp_path, ["1", "2", "3"])
    out = json.loads(run(votes_path, "--predictions", preds, "--json").stdout)
    assert out["scale"] == "nominal" and "wasserstein" not in out["metrics"]
    table = run(votes_path, "--predictions", preds, "--scale", "ordinal").stdout
    assert "(ordinal)" in table and "wasserstein" in table


def test_two_labels_give_positive_class_calibration_and_positive_flips_it(tmp_path):
    votes_path, preds, _ = _rated(tmp_path, ["no", "yes"], n_items=60)
    default = json.loads(run(votes_path, "--predictions", preds, "--json").stdout)
    flipped = json.loads(run(votes_path, "--predictions", preds, "--json", "--positive",
                             "no").stdout)
    assert default["positive_label"] == "yes" and flipped["positive_label"] == "no"
    votes, soft, _ = _human(votes_path, None)
    p = pd.read_csv(preds).set_index("item").loc[votes.item_ids.astype(str)][
        ["prob_no", "prob_yes"]].to_numpy()
    hard = votes.counts().argmax(axis=1)  # 7 votes on two labels: no ties
    for out, positive in ((default, 1), (flipped, 0)):
        for name in ("ece_binary", "mce_binary"):
            assert out["metrics"][name] == pytest.approx(
                compute(name, p, hard=hard, positive=positive), abs=1e-12)
    assert "positive class: yes" in run(votes_path, "--predictions", preds).stdout


@pytest.mark.parametrize("labels, value, message", [
    (["no", "yes"], "maybe", "'maybe' is not one of the labels ['no', 'yes']"),
    (["a", "b", "c"], "a", "applies to two labels; the votes have 3 (a, b, c)"),
])
def test_bad_positive_is_one_line_usage_error(tmp_path, labels, value, message):
    votes_path, preds, _ = _rated(tmp_path, labels)
    result = run(votes_path, "--predictions", preds, "--positive", value)
    assert result.exit_code == 2 and message in result.stderr
    assert "Traceback" not in result.output


def test_annotator_predictions_add_the_perspectivist_view(tmp_path):
    votes_path, preds, _ = _rated(tmp_path, ["1", "2", "3", "4", "5"], n_items=30)
    votes = read_votes(votes_path, scale="ordinal")
    frame = votes.to_frame()
    rng = np.random.default_rng(5)
    frame["label"] = np.where(rng.random(len(frame)) < 0.6, frame["label"],
                              rng.choice(["1", "2", "3", "4", "5"], len(frame)))
    pairs = tmp_path / "pairs.csv"
    frame.to_csv(pairs, index=False)
    expected = evaluate_annotators(votes, pairs, scale="ordinal").to_dict()
    both = json.loads(run(votes_path, "--predictions", preds, "--annotator-predictions", pairs,
                          "--scale", "ordinal", "--json").stdout)
    alone = json.loads(run(votes_path, "--annotator-predictions", pairs, "--scale", "ordinal",
                           "--json").stdout)
    assert both["annotators"] == expected == alone["annotators"]
    assert list(alone) == ["annotators"] and "wasserstein" in both["metrics"]
    assert expected["gap"]["error_rate"] >= 0 and "absolute_distance" in expected["gap"]
    table = run(votes_path, "--annotator-predictions", pairs, "--scale", "ordinal").stdout
    assert "per annotator (ordinal scale): 210 (item, annotator) pairs" in table


@pytest.mark.parametrize("args, message", [
    ([], "Missing option '--predictions' (or --annotator-predictions)."),
    (["--annotator-predictions", "PAIRS", "--n-boot", "10"], "need --predictions"),
    (["--annotator-predictions", "PAIRS", "--n-boot", "10", "--engine", "dask"],
     "need --predictions"),  # Dask evaluates annotator predictions too, with the same checks
])
def test_annotator_prediction_options_refused_where_they_do_not_apply(tmp_path, args, message):
    votes_path, preds, _ = _rated(tmp_path, ["a", "b"])
    pairs = tmp_path / "pairs.csv"
    read_votes(votes_path).to_frame().to_csv(pairs, index=False)
    args = [{"PAIRS": pairs, "PREDS": preds}.get(a, a) for a in args]
    result = run(votes_path, *args)
    assert result.exit_code == 2 and message in result.stderr, result.output


def test_annotator_predictions_with_unknown_pairs_fail_in_one_line(tmp_path):
    votes_path, _, _ = _rated(tmp_path, ["a", "b"])
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("item,annotator,label\nnope,a0,a\n")
    result = run(votes_path, "--annotator-predictions", pairs)
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


@pytest.mark.parametrize("command", [["subsample", "--k", "1,2", "--reps", "3"],
                                     ["aggregate"], ["annotators"]])
def test_single_label_commands_refuse_multilabel_votes_in_one_line(tmp_path, command):
    """A Label Studio export with several choices ticked reads as multi-label votes."""
    tasks = [{"id": i, "data": {"text": f"t{i}"}, "annotations": [
        {"completed_by": a, "result": [{"from_name": "label", "to_name": "text",
                                        "type": "choices",
                                        "value": {"choices": ["x", "y"] if a == 1 else ["x"]}}]}
        for a in (1, 2, 3)]} for i in range(4)]
    path = tmp_path / "ls.json"
    path.write_text(json.dumps(tasks))
    result = CliRunner().invoke(main, [*command[:1], str(path), *command[1:]])
    assert result.exit_code == 2 and "takes single-label votes; these are multi-label" in \
        result.stderr, result.output
    stats = CliRunner().invoke(main, ["stats", str(path), "--json", "--n-boot", "0"])
    assert stats.exit_code == 0 and json.loads(stats.stdout)["task"] == "multilabel"


@pytest.mark.parametrize("content, message", [
    ("", "pairs.csv is empty: no header line"),
    ("item,annotator\ni0,a0\n", "pairs.csv needs a 'label' column or prob_<label> columns"),
    ("item,annotator,prob_a,prob_b\ni0,a0,nan,1\n",
     "line 2 of pairs.csv, column 'prob_a' (item 'i0', annotator 'a0'): 'nan' is not a finite"),
    ("item,annotator,prob_a,prob_b\ni0,a0,0.5,0.5\ni1,a1,x,1\n",
     "line 3 of pairs.csv, column 'prob_a' (item 'i1', annotator 'a1'): 'x' is not a finite"),
    ("item,annotator,label\ni0,,a\n", "line 2 of pairs.csv, column 'annotator'"),
    ("item,annotator,label\ni0,a0,a\ni0,a0,b\n", "pairs.csv repeats (item, annotator) pair(s)"),
    ("item,annotator,label\ni0,a0,zz\n", "pairs.csv: unknown label(s) ['zz']"),
])
def test_hostile_annotator_prediction_files_fail_in_one_line(tmp_path, content, message):
    votes_path, _, _ = _rated(tmp_path, ["a", "b"])
    pairs = tmp_path / "pairs.csv"
    pairs.write_text(content)
    result = run(votes_path, "--annotator-predictions", pairs)
    assert result.exit_code == 1 and message in result.stderr, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_gold_is_refused_with_multilabel_stats(tmp_path):
    result = CliRunner().invoke(main, ["stats", str(EXAMPLES / "topics.csv"), "--multilabel",
                                       "--gold", str(EXAMPLES / "gold.csv")])
    assert result.exit_code == 2 and "apply to single-label votes" in result.stderr


def test_positive_reaches_the_dask_engine(dask_cluster, tmp_path):
    pytest.importorskip("distributed")
    votes_path, preds, _ = _rated(tmp_path, ["no", "yes"], n_items=30)
    folder = tmp_path / "votes"
    folder.mkdir()
    pd.read_csv(votes_path, dtype=str).to_parquet(folder / "part.parquet")
    memory = json.loads(run(votes_path, "--predictions", preds, "--positive", "no",
                            "--json").stdout)
    dask_run = run(folder, "--engine", "dask", "--predictions", preds, "--positive", "no",
                   "--json")
    assert dask_run.exit_code == 0, dask_run.output
    got = json.loads(dask_run.stdout)
    assert got["positive_label"] == "no"
    assert got["metrics"]["ece_binary"] == pytest.approx(memory["metrics"]["ece_binary"],
                                                         abs=1e-12)
