"""``annokit report`` / ``annokit demo`` through CliRunner, the renderers and the atomic writer."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from annokit.cli import main
from annokit.core.votes import Votes
from annokit.errors import AnnokitError, InvalidValueError
from annokit.metrics.registry import available
from annokit.report import build_report, write_report
from annokit.report import write as write_module
from annokit.report.figures import report_figures
from annokit.report.plots import render
from annokit.report.render_html import render_html
from annokit.report.render_md import render_markdown


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


#: ``annokit report`` without the population-target figures, which the few votes of these
#: files would add (``--population auto``); they cost a prior fit per model and are tested by
#: test_report_adds_the_population_figures_below_20_votes_per_item and in
#: tests/report/test_population_figures.py.
REPORT = ("report", "--population", "never")


@pytest.fixture
def files(tmp_path):
    """Long votes (item, annotator, label) and two models' JSONL predictions in [b, a] order."""
    rng = np.random.default_rng(0)
    n = 40
    truth = rng.dirichlet([1, 1], n)
    rows = []
    for i in range(n):
        for a in range(6):
            rows.append({"item": f"q{i}", "annotator": f"w{a}",
                         "label": "a" if rng.random() < truth[i, 0] else "b"})
    votes = tmp_path / "votes.csv"
    pd.DataFrame(rows).to_csv(votes, index=False)
    paths = {}
    for name, sharp in (("good", 1.0), ("sharp", 4.0)):
        p = truth ** sharp
        p /= p.sum(axis=1, keepdims=True)
        for half, sl in (("dev", slice(0, 20)), ("test", slice(20, n))):
            path = tmp_path / f"{name}_{half}.jsonl"
            with path.open("w") as fh:
                for i in range(n)[sl]:
                    fh.write(json.dumps({"uid": f"q{i}", "probs": [p[i, 1], p[i, 0]]}) + "\n")
            paths[(name, half)] = path
    return votes, paths


def test_report_adds_the_population_figures_below_20_votes_per_item(files, tmp_path):
    votes, paths = files
    result = run("report", "--votes", votes, "--model", f"good={paths['good', 'dev']},"
                 f"{paths['good', 'test']}", "--pred-labels", "b,a", "--bins", "2", "--n-boot", "0",
                 "--no-ceiling", "--bin-on", "population", "--out", tmp_path / "rep", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["population"]["median_votes"] == 6.0 and "below 20" in data["population"]["reason"]
    assert [m["name"] for m in data["population"]["models"]] == ["good"]
    assert "jsd" in data["population"]["metrics"] and "ece" in data["population"]["not_computed"]
    assert data["binning"]["cut_on"] == "population"
    page = (tmp_path / "rep" / "report.md").read_text()
    assert "Against the votes and against the population" in page
    assert "cut on the posterior mean of each item's population entropy" in page


def test_report_writes_all_files_and_json_on_request(files, tmp_path):
    votes, paths = files
    out = tmp_path / "rep"
    result = run(*REPORT, "--votes", votes,
                 "--model", f"good={paths['good', 'dev']},{paths['good', 'test']}",
                 "--model", f"sharp={paths['sharp', 'dev']},{paths['sharp', 'test']}",
                 "--pred-labels", "b,a", "--bins", "3", "--n-boot", "40",
                 "--temperature", "sharp=4", "--fit-temperature-on", f"sharp={paths['sharp', 'dev']}",
                 "--subsample", "1,3,6", "--subsample-reps", "20",
                 "--out", out, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [m["name"] for m in data["models"]] == ["good", "sharp", "sharp T=4", "sharp TS"]
    assert data["models"][0]["sources"] == ["good_dev.jsonl", "good_test.jsonl"]
    assert data["models"][2]["temperature"] == 4.0
    assert "20 items with votes" in data["models"][3]["temperature_note"]
    assert len(data["binning"]["counts"]) == 3 and sum(data["binning"]["counts"]) == 40
    curve = data["subsampling"]
    assert [p["k"] for p in curve] == [1, 3, 6] and curve[-1]["tvd_mean"] == 0.0  # all 6 votes
    assert curve[0]["tvd_mean"] > curve[1]["tvd_mean"] > 0
    assert f"report written to {out / 'report.html'}" in result.stderr
    assert "annokit report" not in result.stderr  # no progress bar: stderr is not a terminal
    for name in ("report.html", "report.md", "report.json", "figures/per-bin.svg",
                 "figures/reliability-3.svg"):
        assert (out / name).is_file(), name
    assert json.loads((out / "report.json").read_text()) == data
    # the report reads the registry
    assert [m["name"] for m in data["metrics"]] == list(available(True, True, n_labels=2))
    assert {(c["model_a"], c["model_b"]) for c in data["comparisons"]} == {
        ("sharp", "good"), ("sharp T=4", "good"), ("sharp TS", "good")}
    assert str(tmp_path) not in (out / "report.json").read_text()  # no absolute paths


@pytest.mark.parametrize("args, message", [
    (["--model", "predictions.csv"],
     ("Error: Invalid value for '--model': expects NAME=PATH[,PATH], e.g. "
     "predictions=predictions.csv; got 'predictions.csv'\n")),
    (["--model", "m="], "Error: Invalid value for '--model': expects NAME=PATH[,PATH]; got 'm='\n"),
    (["--model", "m={good}", "--temperature", "x=2"],
     "Error: Invalid value for '--temperature': 'x=2': no --model named 'x'; models are ['m']\n"),
    (["--model", "m={good}", "--model", "k={good}", "--fit-temperature-on", "{good}"],
     ("Error: Invalid value for '--fit-temperature-on': '{good}': with several models write "
      "NAME=PATH[,PATH] to say whose temperature to fit\n")),
    (["--model", "m={good}", "--model", "m={good}"],
     "Error: Invalid value for '--model': names must be unique; got ['m', 'm']\n"),
])
def test_report_model_specs_are_usage_errors(files, tmp_path, args, message):
    votes, paths = files
    good = f"{paths['good', 'dev']},{paths['good', 'test']}"
    args = [a.format(good=good) for a in args]
    result = run(*REPORT, "--votes", votes, "--pred-labels", "b,a", "--quiet",
                 "--out", tmp_path / "o", *args)
    assert result.exit_code == 2
    assert result.stderr.endswith(message.format(good=good))
    assert "Traceback" not in result.output
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("args, message", [
    (["--temperature", "m=hot"], "Invalid value for '--temperature': 'm=hot': 'hot' is not a number"),
    (["--temperature", "m=nan"],
     "Invalid value for '--temperature': 'm=nan': the temperature must be a finite number > 0"),
    (["--bins", "1,x"], "Invalid value for '--bins': expected comma-separated numbers; got '1,x'"),
    (["--bins", "0,nan,1"], "Invalid value for '--bins': 'nan' in '0,nan,1' is not a finite number"),
    (["--bins", "0"], "Invalid value for '--bins': the number of bins must be >= 1; got 0"),
    (["--subsample", "1,two"],
     ("Invalid value for '--subsample': expected comma-separated positive integers, e.g. "
      "1,2,5,10; got '1,two'")),
    (["--subsample", "1,,2"],
     ("Invalid value for '--subsample': empty element in '1,,2'; expected comma-separated "
      "positive integers, e.g. 1,2,5,10")),
    (["--seed", "-1"], "Invalid value for '--seed': -1 is not in the range x>=0."),
    (["--n-bins", "1000000000"],
     "Invalid value for '--n-bins': 1000000000 would need about 261.9 TiB"),
    (["--subsample", "5", "--subsample-reps", "100000000"],
     ("Invalid value for '--subsample-reps': 100000000 would need about 47.7 GiB (results of "
      "100000000 repetitions x 1 values of k), above the limit of 2.0 GiB; choose a smaller "
      "value")),
])
def test_report_option_values_are_usage_errors(files, tmp_path, args, message):
    votes, paths = files
    good = f"{paths['good', 'dev']},{paths['good', 'test']}"
    result = run(*REPORT, "--votes", votes, "--pred-labels", "b,a", "--quiet", "--model",
                 f"m={good}", "--out", tmp_path / "o", *args)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert not (tmp_path / "o").exists()


def test_report_missing_predictions_error_or_drop(files, tmp_path):
    votes, paths = files
    result = run(*REPORT, "--votes", votes, "--model", f"m={paths['good', 'dev']}",
                 "--pred-labels", "b,a", "--quiet", "--out", tmp_path / "o")
    assert result.exit_code == 1
    assert result.output.startswith("Error: 20 of 40 vote items have no prediction")
    result = run(*REPORT, "--votes", votes, "--model", f"m={paths['good', 'dev']}",
                 "--pred-labels", "b,a", "--quiet", "--on-missing", "drop", "--bins", "2",
                 "--n-boot", "0", "--png", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "o" / "figures" / "per-bin.png").read_bytes().startswith(b"\x89PNG")
    assert "(<figures/per-bin.png>)" in (tmp_path / "o" / "report.md").read_text()
    rep = json.loads((tmp_path / "o" / "report.json").read_text())
    assert rep["models"][0]["n_items"] == 20
    assert rep["notes"][0].startswith("20 of 40 vote items have no prediction from at least one")


def test_demo_writes_the_report(tmp_path):
    out = tmp_path / "a"
    result = run("demo", "--out", out, "--n-boot", "30")
    assert result.exit_code == 0, result.output
    assert "annokit demo: synthetic dataset (seed 0)" in result.output
    assert f"report written to {out / 'report.html'}" in result.output
    names = [m["name"] for m in json.loads((out / "report.json").read_text())["models"]]
    assert names == ["posterior-matching", "overconfident", "underconfident",
                     "temperature-scaled"]


def test_demo_report_json_is_byte_identical_for_a_seed():
    from annokit.io.synthetic import make_votes
    from annokit.report import dump_json
    from annokit.report.demo import demo_report

    def once(seed):
        return dump_json(demo_report(make_votes(rng=seed), seed=seed, n_boot=30))

    first = once(0)
    assert first == once(0) != once(1)
    assert '"demo truth: 9 injected spammers; ds flags' in first


def test_demo_json_without_out_writes_no_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("demo", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["n_items"] == 600
    assert list(tmp_path.iterdir()) == []
    assert run("demo", "--json").output == result.output  # the same statistics every run


# --- renderers and writer ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def small_report():
    votes = Votes.from_counts([[9, 1, 0], [5, 4, 1], [3, 3, 4], [1, 1, 8], [6, 2, 2], [2, 7, 1]],
                              labels=["x", "y", "z"])
    probs = np.array([[0.8, 0.1, 0.1], [0.5, 0.4, 0.1], [0.3, 0.3, 0.4], [0.1, 0.1, 0.8],
                      [0.6, 0.2, 0.2], [0.2, 0.7, 0.1]])
    return build_report(votes, {"m<1>": probs, "flat": np.full((6, 3), 1 / 3)}, bins=2,
                        n_boot=20, subsampling=[
                            {"k": 1, "tvd_mean": 0.4, "tvd_low": 0.2, "tvd_high": 0.6},
                            {"k": 5, "tvd_mean": 0.1, "tvd_low": 0.05, "tvd_high": 0.2}])


def test_html_is_self_contained_and_escapes_names(small_report):
    figs = report_figures(small_report)
    assert set(figs) == {"reliability-0", "reliability-1", "error-histograms",
                         "entropy-histograms", "per-bin", "subsampling"}
    page = render_html(small_report, figs)
    assert "<script" not in page and "<link" not in page and "@import" not in page
    assert not re.search(r"""(src|href)=["'](https?:|//)""", page)
    assert "url(http" not in page and "xlink:href=\"http" not in page
    assert "m&lt;1&gt;" in page and "m<1>" not in page.split("<svg")[0]
    assert page.count('class="report-figure"') == 6 and page.count("<svg") >= 6
    assert 'id="table-subsampling"' in page


def test_markdown_has_every_table(small_report):
    md = render_markdown(small_report, figures={"per-bin": "figures/per-bin.svg"})
    for title in ("### Global metrics", "### Agreement bins", "### Per agreement bin: m&lt;1&gt;",
                  "### Human ceiling (split-half)", "### Differences from the first model",
                  "### Metrics", "| ece ↓ | probability |",
                  "### How many annotations are enough", "(<figures/per-bin.svg>)",
                  "### Figure 1. Headline metrics"):
        assert title in md


def test_svg_output_is_deterministic_and_png_on_request():
    from annokit.report.plots import per_bin_bars, subsampling_curve

    args = (["low", "high"], {"accuracy": {"m": [0.9, 0.5], "k": [0.8, np.nan]}})
    assert per_bin_bars(*args) == per_bin_bars(*args)
    assert subsampling_curve([1, 5], [0.4, 0.1], [0.2, 0.05], [0.6, 0.2],
                             fmt="png").startswith(b"\x89PNG")
    import matplotlib.pyplot as plt

    with pytest.raises(InvalidValueError, match=r"fmt must be one of \('svg', 'png', 'pdf'\); got 'gif'"):
        render(plt.figure(), "gif")
    assert render(plt.figure(), "pdf").startswith(b"%PDF")


def test_writer_is_atomic(small_report, tmp_path, monkeypatch):
    out = tmp_path / "rep"
    write_report(small_report, out)
    before = (out / "report.json").read_bytes()

    def boom(*_a, **_k):
        raise RuntimeError("renderer failed")

    monkeypatch.setattr(write_module, "render_html", boom)
    monkeypatch.setattr(write_module, "report_figures", lambda *_a, **_k: {"x": "<svg></svg>"})
    with pytest.raises(RuntimeError, match="renderer failed"):
        write_report(small_report, out)
    assert (out / "report.json").read_bytes() == before  # the old report is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]  # no temp dirs left
    with pytest.raises(RuntimeError, match="renderer failed"):
        write_report(small_report, tmp_path / "new")
    assert not (tmp_path / "new").exists()


def test_writer_refuses_foreign_directories_and_files(small_report, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(AnnokitError, match="non-empty directory without report.json"):
        write_report(small_report, other)
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(AnnokitError, match="exists and is not a directory"):
        write_report(small_report, f)


def test_report_json_is_byte_identical_across_runs_and_user_edges_are_kept(files, tmp_path):
    votes, paths = files
    model = f"good={paths['good', 'dev']},{paths['good', 'test']}"
    args = ["report", "--votes", votes, "--model", model, "--pred-labels", "b,a",
            "--bins", "0,0.5,1", "--n-boot", "25", "--seed", "3", "--quiet"]
    assert run(*args, "--out", tmp_path / "one").exit_code == 0
    assert run(*args, "--out", tmp_path / "two").exit_code == 0
    one = (tmp_path / "one" / "report.json").read_bytes()
    assert one == (tmp_path / "two" / "report.json").read_bytes()
    data = json.loads(one)
    assert data["binning"]["method"] == "edges" and data["binning"]["edges"] == [0.0, 0.5, 1.0]
    assert data["settings"]["seed"] == 3


def test_report_helpers_raise_specific_types(tmp_path):
    from annokit.errors import DataFormatError, SchemaError
    from annokit.io.synthetic import make_votes
    from annokit.report.demo import make_models
    from annokit.report.plots import image_format

    data = make_votes(n_items=20, n_annotators=8, votes_per_item=4, rng=0)
    with pytest.raises(SchemaError, match=r"true_probs has shape \(2, 3\); the votes need"):
        make_models(data.votes, np.full((2, 3), 1 / 3))
    with pytest.raises(InvalidValueError, match="noise must be a finite number >= 0"):
        make_models(data.votes, data.true_probs, noise=-1.0)
    with pytest.raises(DataFormatError, match="unsupported image type 'gif'"):
        image_format(tmp_path / "c.gif")
    with pytest.raises(InvalidValueError, match="does not exist"):
        image_format(tmp_path / "no" / "c.svg")


def test_report_fit_temperature_on_with_on_missing_drop(files, tmp_path):
    """--fit-temperature-on DEV with --on-missing drop: the dev predictions are joined to all
    the votes, not to the votes already restricted to the test items."""
    votes, paths = files
    result = run(*REPORT, "--votes", votes, "--model", f"m={paths['sharp', 'test']}",
                 "--on-missing", "drop", "--fit-temperature-on", str(paths["sharp", "dev"]),
                 "--pred-labels", "b,a", "--n-boot", "0", "--no-ceiling", "--quiet",
                 "--out", tmp_path / "o", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [m["name"] for m in data["models"]] == ["m", "m TS"]


def test_report_subsample_carries_tolerance_and_recommended_k(files, tmp_path):
    votes, paths = files
    result = run(*REPORT, "--votes", votes, "--model", f"m={paths['good', 'dev']},"
                 f"{paths['good', 'test']}", "--pred-labels", "b,a", "--quiet", "--bins", "2",
                 "--n-boot", "0", "--no-ceiling", "--subsample", "1,2,3",
                 "--subsample-reps", "10", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    rec = json.loads((tmp_path / "o" / "report.json").read_text())["subsampling_recommendation"]
    assert rec["epsilon"] == 0.05 and rec["source"] in {"observed", "extrapolated", "not reached"}
    page = (tmp_path / "o" / "report.html").read_text()
    assert 'id="table-recommendation"' in page and "tolerance (expected TVD below)" in page


# --- scale, positive class and per-annotator predictions ---------------------------------------

@pytest.fixture
def ordinal_files(tmp_path):
    """Votes on 1..5 (each item's votes within one step of a centre), a model, pair predictions."""
    rng = np.random.default_rng(3)
    rows = []
    for i in range(30):
        centre = rng.integers(1, 6)
        rows += [{"item": f"i{i}", "annotator": f"w{a}",
                  "label": int(np.clip(centre + rng.integers(-1, 2), 1, 5))} for a in range(5)]
    votes = tmp_path / "votes.csv"
    pd.DataFrame(rows).to_csv(votes, index=False)
    model = tmp_path / "m.jsonl"
    with model.open("w") as fh:
        for i in range(30):
            fh.write(json.dumps({"item": f"i{i}",
                                 "probs": rng.dirichlet(np.ones(5)).tolist()}) + "\n")
    pairs = pd.DataFrame(rows)[["item", "annotator"]]
    pairs["label"] = rng.integers(1, 6, len(pairs))
    pred = tmp_path / "pairs.csv"
    pairs.to_csv(pred, index=False)
    return votes, model, pred


def test_report_ordinal_scale_and_annotator_predictions(ordinal_files, tmp_path):
    from annokit.io import read_votes
    from annokit.metrics.perspectivist import evaluate_annotators, read_annotator_predictions

    votes, model, pred = ordinal_files
    out = tmp_path / "rep"
    result = run(*REPORT, "--votes", votes, "--scale", "ordinal", "--model", f"m={model}",
                 "--pred-labels", "1,2,3,4,5", "--annotator-predictions", pred, "--bins", "2",
                 "--n-boot", "0", "--quiet", "--out", out)
    assert result.exit_code == 0, result.output
    data = json.loads((out / "report.json").read_text())
    assert data["scale"] == "ordinal" and data["positive_label"] is None
    assert data["labels"] == ["1", "2", "3", "4", "5"]
    names = [m["name"] for m in data["metrics"]]
    assert names == list(available(True, True, scale="ordinal", n_labels=5))
    assert len(data["human_distribution"]["overall"]) == 5
    assert (out / "figures" / "label-distributions.svg").is_file()
    assert (out / "figures" / "annotator-errors.svg").is_file()
    res = evaluate_annotators(read_votes(votes, scale="ordinal"),
                              read_annotator_predictions(pred), scale="ordinal")
    p = data["perspectivist"]
    assert p["source"] == "pairs.csv" and p["n_pairs"] == res.n_pairs == 150
    assert p["scores"] == pytest.approx(res.scores) and p["gap"] == pytest.approx(res.gap)
    assert p["pooled"] == pytest.approx(res.pooled)
    md = (out / "report.md").read_text()
    assert "scale: ordinal" in md and "### Per-annotator against pooled scores" in md
    assert "### Distribution over annotators" in md and "### Worst annotators" in md


def test_report_positive_label_defaults_to_the_second_and_flips(files, tmp_path):
    from annokit.core.soft_labels import majority
    from annokit.io import read_votes
    from annokit.metrics.binary import binary_reliability
    from annokit.report import load_models

    votes, paths = files
    good = [paths["good", "dev"], paths["good", "test"]]
    loaded = load_models(read_votes(votes), {"good": good}, pred_labels="b,a")
    probs = loaded.models[0].probs
    hard = majority(loaded.votes.counts()).labels
    for extra, positive in (([], "b"), (["--positive", "a"], "a")):
        out = tmp_path / f"rep-{positive}"
        result = run(*REPORT, "--votes", votes, "--model", f"good={good[0]},{good[1]}",
                     "--pred-labels", "b,a", "--bins", "2", "--n-boot", "0", "--quiet",
                     "--out", out, *extra)
        assert result.exit_code == 0, result.output
        data = json.loads((out / "report.json").read_text())
        assert data["positive_label"] == positive
        expected = binary_reliability(probs, hard, positive=["a", "b"].index(positive),
                                      n_bins=10, labels=["a", "b"])
        got = data["models"][0]["binary_reliability"]
        assert got["positive_label"] == positive
        assert got["count"] == [int(w) for w in expected.bins["weight"]]
        assert np.array(got["mean_probability"], dtype=float) == pytest.approx(
            np.array(expected.bins["mean_probability"]), nan_ok=True)
        assert np.array(got["frequency"], dtype=float) == pytest.approx(
            np.array(expected.bins["frequency"]), nan_ok=True)
        assert got["ece"] == pytest.approx(expected.ece)
        assert data["models"][0]["metrics"]["ece_binary"]["estimate"] == pytest.approx(expected.ece)
        assert data["models"][0]["metrics"]["mce_binary"]["estimate"] == pytest.approx(expected.mce)
        assert f"p({positive}) [probability]" in (out / "figures" /
                                                  "binary-reliability.svg").read_text()
        assert f"positive label: {positive}" in (out / "report.html").read_text()


@pytest.mark.parametrize("edit, message", [
    (None, "Error: --positive 'zz' is not a label; the labels are ['a', 'b']\n"),
    (("item", "ghost-item"), "Error: pairs.csv: 1 item(s) not in the votes: ['ghost-item']\n"),
    (("annotator", "ghost"), "Error: pairs.csv: 1 annotator(s) not in the votes: ['ghost']\n"),
])
def test_report_bad_positive_or_annotator_predictions_are_one_line(files, tmp_path, edit,
                                                                   message):
    votes, paths = files
    args = ["--positive", "zz"]
    if edit is not None:
        pairs = pd.read_csv(votes)[["item", "annotator", "label"]]
        pairs.loc[0, edit[0]] = edit[1]
        pairs.to_csv(tmp_path / "pairs.csv", index=False)
        args = ["--annotator-predictions", tmp_path / "pairs.csv"]
    result = run(*REPORT, "--votes", votes, "--model",
                 f"m={paths['good', 'dev']},{paths['good', 'test']}", "--pred-labels", "b,a",
                 "--bins", "1", "--n-boot", "0", "--quiet", "--out", tmp_path / "o", *args)
    assert result.exit_code == 1
    assert result.output == message
    assert not (tmp_path / "o").exists()


def test_report_annotator_predictions_of_dropped_items_are_noted(files, tmp_path):
    votes, paths = files
    pairs = pd.read_csv(votes)[["item", "annotator", "label"]]
    pairs.to_csv(tmp_path / "pairs.csv", index=False)
    result = run(*REPORT, "--votes", votes, "--model", f"m={paths['good', 'dev']}",
                 "--pred-labels", "b,a", "--on-missing", "drop", "--bins", "1", "--n-boot", "0",
                 "--quiet", "--annotator-predictions", tmp_path / "pairs.csv",
                 "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "o" / "report.json").read_text())
    assert ("annotator predictions pairs.csv: 120 row(s) of items left out of the report (no "
            "model prediction) are not scored") in data["notes"]
    p = data["perspectivist"]
    assert p["n_pairs"] == 120 and p["scores"]["accuracy"] == 1.0 and p["gap"]["error_rate"] == 0


# --- options that cannot make sense for the data; aggregated warnings; progress when piped ------

@pytest.mark.parametrize("bins, message", [
    ("100000", ("Invalid value for '--bins': 100,000 agreement bins for 40 items; choose at most 40 "
               "bins (the default is 5)")),
    (",".join(str(i / 100) for i in range(60)),
     ("Invalid value for '--bins': 60 edges (59 agreement bins) for 40 items; choose at most 40 "
     "bins (the default is 5)")),
])
def test_report_refuses_more_bins_than_items(files, tmp_path, bins, message):
    votes, paths = files
    result = run(*REPORT, "--votes", votes, "--model", f"m={paths['good', 'dev']},"
                 f"{paths['good', 'test']}", "--pred-labels", "b,a", "--n-boot", "0", "--bins",
                 bins, "--out", tmp_path / "o")
    assert result.exit_code == 2
    assert result.stderr.endswith(f"Error: {message}\n")
    assert not (tmp_path / "o").exists()


def test_report_default_bins_on_fewer_items_is_one_bin_per_item(tmp_path):
    """The default --bins (5) on 3 items: one bin per item, said in one warning; no refusal."""
    votes = tmp_path / "v.csv"
    votes.write_text("item,annotator,label\nq1,a,x\nq1,b,y\nq2,a,x\nq2,b,x\nq3,a,y\nq3,b,y\n")
    preds = tmp_path / "p.csv"
    preds.write_text("item,x,y\nq1,0.5,0.5\nq2,0.9,0.1\nq3,0.2,0.8\n")
    result = run(*REPORT, "--votes", votes, "--model", f"m={preds}", "--n-boot", "0",
                 "--no-ceiling", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    assert "Warning: 3 item(s): 3 agreement bin(s) instead of the default 5 (--bins)\n" in \
        result.stderr
    assert (tmp_path / "o" / "report.json").exists()


def test_report_empty_agreement_bins_are_one_warning(files, tmp_path):
    votes, paths = files
    edges = ",".join(str(round(i * 0.02, 2)) for i in range(36))  # 0 .. 0.7 nats, 35 bins
    result = run(*REPORT, "--votes", votes, "--model", f"m={paths['good', 'dev']},"
                 f"{paths['good', 'test']}", "--pred-labels", "b,a", "--n-boot", "0",
                 "--no-ceiling", "--bins", edges, "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    warning = [line for line in result.stderr.splitlines() if "agreement bins are empty" in line]
    assert len(warning) == 1
    assert re.fullmatch(r"Warning: \d+ of 35 agreement bins are empty \(bins \d+, \d+, \d+, \d+, "
                        r"\d+ and \d+ more\)", warning[0])
    assert "agreement bin 3 is empty" not in result.stderr


def test_demo_n_boot_reaches_the_statistics_and_png_needs_the_report(tmp_path):
    result = run("demo", "--n-boot", "200", "--no-report")
    assert result.exit_code == 0, result.output
    assert "(95% bootstrap, 200 reps" in result.stdout and "1000 reps" not in result.stdout
    for args, given in ((["--png"], "--png applies"), (["--out", tmp_path / "d"], "--out applies"),
                        (["--png", "--out", tmp_path / "d"], "--png and --out apply")):
        result = run("demo", "--no-report", *args)
        assert result.exit_code == 2
        assert result.stderr.endswith(f"Error: {given} to the report, which --no-report skips: "
                                      "drop one of them\n")
    assert not (tmp_path / "d").exists()


def test_report_metrics_by_name(files, tmp_path):
    votes, paths = files
    args = ("report", "--votes", votes, "--model", (f"m={paths['good', 'dev']},"
            f"{paths['good', 'test']}"), "--pred-labels", "b,a", "--n-boot", "0", "--no-ceiling")
    result = run(*args, "--metrics", "lewidi_ce,manhattan", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    rep = json.loads((tmp_path / "o" / "report.json").read_text())
    assert [m["name"] for m in rep["metrics"]] == ["manhattan", "lewidi_ce"]
    result = run(*args, "--metrics", "rps", "--out", tmp_path / "p")
    assert result.exit_code == 1
    assert result.stderr == ("Error: --metrics: metric 'rps' applies to ordinal, interval, ratio "
                             "single-label data; the data are nominal single-label with 2 labels "
                             "(leave it out of --metrics, or declare the labels' scale with "
                             "--scale)\n")
    result = run(*args, "--metrics", "ecee", "--out", tmp_path / "p")
    assert result.exit_code == 2 and "did you mean ece, smece, ece_sweep?" in result.stderr
