"""``annokit stats`` on ordered scales: alpha at the labels' level, rating summaries."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from annokit.cli import main

from _shared import data_path

krippendorff = pytest.importorskip("krippendorff", reason="the krippendorff package (test extra)")


def run(*args):
    return CliRunner().invoke(main, ["stats", *map(str, args)])


@pytest.fixture
def likert(tmp_path):
    """Seeded 1-7 ratings, six annotators, some ratings missing."""
    rng = np.random.default_rng(11)
    rows = [(f"i{i}", f"a{j}", int(np.clip(c + rng.integers(-2, 3), 1, 7)))
            for i, c in enumerate(rng.integers(1, 8, size=60)) for j in range(6)
            if rng.random() > 0.15]
    path = tmp_path / "likert.csv"
    frame = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    frame.to_csv(path, index=False)
    return path, frame


@pytest.mark.parametrize("scale", ["ordinal", "interval", "ratio"])
def test_alpha_at_the_scale_level_equals_the_krippendorff_package(likert, scale):
    path, frame = likert
    out = json.loads(run(path, "--scale", scale, "--json", "--n-boot", "0").stdout)
    matrix = frame.pivot(index="annotator", columns="item", values="label").to_numpy(float)
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement=scale)
    assert out["scale"] == scale and out["krippendorff_alpha"]["level"] == scale
    assert out["krippendorff_alpha"]["value"] == pytest.approx(expected, abs=1e-9)


def test_rating_summary_equals_pandas(likert):
    path, frame = likert
    out = json.loads(run(path, "--scale", "ordinal", "--json", "--n-boot", "0").stdout)
    by_item = frame.groupby("item")["label"]
    assert out["ratings"]["item_mean"]["mean"] == pytest.approx(by_item.mean().mean(), abs=1e-12)
    assert out["ratings"]["item_sd"]["median"] == pytest.approx(by_item.std().median(), abs=1e-12)
    assert out["ratings"]["bimodality"]["threshold"] == pytest.approx(5 / 9)
    table = run(path, "--scale", "ordinal", "--n-boot", "0").stdout
    assert "Krippendorff's alpha (ordinal)" in table and "(ordinal)" in table


def test_nominal_default_keeps_nominal_alpha_and_no_ratings(likert):
    path, _ = likert
    out = json.loads(run(path, "--json", "--n-boot", "0").stdout)
    assert out["scale"] == "nominal" and out["ratings"] is None
    assert out["krippendorff_alpha"]["level"] == "nominal"


def test_multilabel_stats_alpha_per_label_equals_the_krippendorff_package(tmp_path):
    """Each label's yes/no answers (ticked or not, per response) against the package."""
    rng = np.random.default_rng(8)
    rows = []
    for i in range(40):
        rate = rng.random(3)
        for a in range(6):
            if rng.random() < 0.2:
                continue  # annotator a did not answer item i
            ticked = [lab for j, lab in enumerate("xyz") if rng.random() < rate[j]] or ["x"]
            rows += [(f"i{i}", f"a{a}", lab) for lab in ticked]
    frame = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    path = tmp_path / "ml.csv"
    frame.to_csv(path, index=False)
    result = run(path, "--multilabel", "--json", "--n-boot", "0")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    responses = frame[["item", "annotator"]].drop_duplicates()
    assert out["task"] == "multilabel" and out["n_responses"] == len(responses)
    for label in "xyz":
        ticks = frame[frame.label == label].assign(v=1.0)[["item", "annotator", "v"]]
        answers = responses.merge(ticks, how="left").fillna({"v": 0.0})
        matrix = answers.pivot(index="annotator", columns="item", values="v").to_numpy(float)
        expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
        got = out["per_label"][label]
        assert got["krippendorff_alpha"]["value"] == pytest.approx(expected, abs=1e-9)
        assert got["tick_rate"] == pytest.approx((frame.label == label).sum() / len(responses))
    text = run(path, "--multilabel", "--n-boot", "0").stdout
    assert "labels (multi-label)" in text and "label z: tick rate" in text


# -- numbers as labels ------------------------------------------------------------------

@pytest.fixture
def slider(tmp_path):
    """Seeded 0-100 slider ratings, five annotators; every seventh written with '.0'."""
    rng = np.random.default_rng(0)
    rows = [(f"i{i}", f"a{a}", int(np.clip(round(c + rng.normal(0, 15)), 0, 100)))
            for i, c in enumerate(rng.integers(0, 101, size=80)) for a in range(5)]
    frame = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    plain = tmp_path / "slider.csv"
    frame.to_csv(plain, index=False)
    spelled = frame.assign(label=[f"{v}.0" if j % 7 == 0 else f" {v}" if j % 11 == 0 else str(v)
                                  for j, v in enumerate(frame.label)])
    mixed = tmp_path / "slider_mixed.csv"
    spelled.to_csv(mixed, index=False)
    return plain, mixed, frame


def test_a_number_is_one_label_however_it_is_written(slider):
    plain, mixed, frame = slider
    a = json.loads(run(plain, "--scale", "interval", "--json", "--n-boot", "0").stdout)
    b = json.loads(run(mixed, "--scale", "interval", "--json", "--n-boot", "0").stdout)
    for stats in (a, b):
        stats.pop("source"), stats.pop("read_as")
    assert a == b
    assert a["labels"] == [str(v) for v in sorted(frame.label.unique())]
    nominal = json.loads(run(mixed, "--json", "--n-boot", "0").stdout)
    assert len(nominal["labels"]) > len(a["labels"])  # nominal labels are text as written


def test_slider_stats_show_ratings_not_lists_per_label(slider):
    plain, _, frame = slider
    out = json.loads(run(plain, "--scale", "interval", "--json", "--n-boot", "0").stdout)
    for key in ("majority_counts", "fleiss_kappa", "entropy", "agreement", "ties"):
        assert out[key] is None, key
    votes = out["ratings"]["votes"]
    x = frame.label.to_numpy(float)
    assert votes["mean"] == pytest.approx(x.mean(), abs=1e-12)
    assert votes["sd"] == pytest.approx(x.std(ddof=1), abs=1e-9)
    assert votes["quantiles"] == pytest.approx(
        {f"{q}%": np.quantile(x, q / 100) for q in (5, 25, 50, 75, 95)}, abs=1e-12)
    hist = votes["histogram"]
    assert hist["counts"] == np.histogram(x, bins=hist["edges"])[0].tolist()[:-1] + [
        int((x >= hist["edges"][-2]).sum())]
    assert sum(hist["counts"]) == len(x) and len(hist["counts"]) <= 12
    table = run(plain, "--scale", "interval", "--n-boot", "0").stdout
    assert "distinct values from" in table and "ratings histogram (" in table
    assert "Fleiss" not in table and "majority label counts" not in table
    assert "votes per label" not in table and "entropy" not in table
    assert "Krippendorff's alpha (interval)" in table
    assert len(table.splitlines()) < 30


def test_likert_keeps_its_levels_and_drops_nominal_figures(likert):
    path, frame = likert
    out = json.loads(run(path, "--scale", "ordinal", "--json", "--n-boot", "0").stdout)
    assert out["majority_counts"] is None and out["fleiss_kappa"] is None
    assert out["entropy"] is not None and out["ties"] is not None
    assert out["label_counts"] == {str(k): int(v) for k, v in
                                   frame.label.value_counts().sort_index().items()}
    table = run(path, "--scale", "ordinal", "--n-boot", "0").stdout
    assert "votes per label" in table and "ratings histogram" not in table
    assert "Fleiss" not in table and "majority label counts" not in table
    nominal = run(path, "--n-boot", "0").stdout
    assert "Fleiss' kappa" in nominal and "majority label counts" in nominal


def test_a_value_that_is_not_a_number_is_one_line_naming_the_option(tmp_path):
    path = tmp_path / "slider.csv"
    path.write_text("item,annotator,label\na,x,10\na,y,1,5\nb,x,20\n".replace("1,5", '"1,5"'))
    result = run(path, "--scale", "interval")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output == (
        "Error: slider.csv: the vote on item 'a' by annotator 'y': '1,5' is not a number (a "
        "decimal comma? write 1.5) and labels on the interval scale are numbers; read the labels "
        "as categories with --scale nominal\n")
    assert run(path, "--scale", "nominal", "--n-boot", "0").exit_code == 0


def test_declared_numeric_labels_match_any_spelling(tmp_path):
    path = tmp_path / "likert.csv"
    path.write_text("item,annotator,label\na,x,1.0\na,y,2\nb,x,+3\nb,y,3\n")
    from annokit.io import read_votes

    votes = read_votes(path, scale="ordinal", labels=["3", "2", "1.0"])
    assert votes.labels.names == ("3", "2", "1") and votes.labels.scale == "ordinal"
    assert votes.counts().tolist() == [[0, 1, 1], [2, 0, 0]]


def test_labels_option_declares_the_order_of_word_labels(tmp_path):
    """--labels declares the label set and its order: word labels on an ordinal scale, a label
    no vote uses kept with no votes, a vote outside the set refused naming the option."""
    path = tmp_path / "likert.csv"
    path.write_text("item,annotator,label\n1,a,Likely\n1,b,Unlikely\n2,a,Neutral\n2,b,Neutral\n")
    runner = CliRunner()
    res = runner.invoke(main, ["stats", str(path), "--scale", "ordinal", "--n-boot", "0"])
    assert res.exit_code == 1
    assert res.output.splitlines()[-1] == (
        "Error: the order of ordinal labels ['Likely', 'Neutral', 'Unlikely'] cannot be inferred "
        "from non-numeric names; declare it in order with --labels NAME,NAME,... (Python: "
        "labels=[...]), or read them unordered with --scale nominal")
    res = runner.invoke(main, ["stats", str(path), "--scale", "ordinal", "--n-boot", "0",
                               "--labels", "Unlikely, Neutral,Likely,Certain", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["labels"] == ["Unlikely", "Neutral", "Likely", "Certain"]
    assert doc["label_counts"] == {"Unlikely": 1, "Neutral": 2, "Likely": 1, "Certain": 0}
    res = runner.invoke(main, ["stats", str(path), "--labels", "Unlikely,Neutral"])
    assert res.exit_code == 1
    assert "unknown label 'Likely'; expected one of ['Unlikely', 'Neutral']" in res.output
    res = runner.invoke(main, ["stats", str(path), "--labels", "a,,b"])
    assert res.exit_code == 2
    assert "expected distinct comma-separated label names" in res.output


@pytest.mark.parametrize("path, fmt", [
    ("lewidi2025/CSC/CSC_dev.json", "lewidi"),
    ("chaosnli/chaosNLI_snli.jsonl", "chaosnli"),
    ("pavlick2019_nli_variation/sentence-pair-analysis/preprocessed-data.jsonl", "lists"),
])
def test_labels_option_is_refused_where_the_file_fixes_the_labels(path, fmt):
    """--labels is never silently ignored: formats whose files fix their labels refuse it."""
    full = data_path(*path.split("/"))
    res = CliRunner().invoke(main, ["stats", str(full), "--labels", "a,b"])
    assert res.exit_code == 1
    assert res.output.splitlines()[-1] == (
        f"Error: {full.name}: --labels applies to tables and tool exports (long, wide, mturk, "
        f"toloka, labelstudio, prodigy, argilla); a {fmt} file's labels are read from the file")
