"""Foundation recipes: data cards agree with the data; crowd majority accuracies match SOURCE.md."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from _shared import DATA_ROOT

ROOT = Path(__file__).resolve().parents[2]


def _recipe(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "recipes" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _need_data():
    if not DATA_ROOT.exists():
        pytest.skip(f"shared data not found at {DATA_ROOT}")


CARDS = sorted(_recipe("data_cards").SOURCES)


@pytest.mark.parametrize("card", CARDS)
def test_data_card_statistics_agree_with_annokit(card):
    _need_data()
    module = _recipe("data_cards")
    path = ROOT / "data_cards" / card
    assert path.read_text(encoding="utf-8") == module.expected_card(path, DATA_ROOT), (
        f"{card} is out of date: run python recipes/data_cards.py")


@pytest.mark.parametrize("card", CARDS)
def test_data_cards_have_the_hugging_face_header_and_sections(card):
    text = (ROOT / "data_cards" / card).read_text(encoding="utf-8")
    header = text.split("---")[1]
    for field in ("license:", "task_categories:", "annotations_creators:", "size_categories:",
                  "source_datasets:"):
        assert field in header
    for section in ("## Source and citation", "## Annotation process and quality control",
                    "## Label set and label order", "## Statistics", "## Known pitfalls"):
        assert section in text


@pytest.mark.parametrize("dataset", ["snow2008_rte", "bluebirds", "dog", "face"],
                         ids=lambda d: f"{d}_source_md")
def test_crowd_majority_accuracy_matches_source_md(dataset):
    _need_data()
    rows = {r["dataset"]: r for r in _recipe("crowd_majority_accuracy").majority_accuracies(DATA_ROOT)}
    r = rows[dataset]
    # SOURCE.md rounds to 3 or 4 decimals
    assert r["accuracy_first_seen"] == pytest.approx(r["source_md"], abs=5e-4)


def test_crowd_recipe_prints_a_table(capsys):
    _need_data()
    assert _recipe("crowd_majority_accuracy").main(["--data", str(DATA_ROOT)]) == 0
    out = capsys.readouterr().out
    assert "snow2008_rte" in out and "0.9025" in out
