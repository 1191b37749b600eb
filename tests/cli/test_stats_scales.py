"""``annokit stats`` on ordered scales (issue 14): alpha at the labels' level, rating summaries."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from annokit.cli import main

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
