"""ChaosNLI statistics against the paper (Nie, Zhou and Bansal 2020, Tables 2 and 7)."""

from __future__ import annotations

import numpy as np
import pytest

from annokit.core.soft_labels import distributions, entropy
from annokit.io import read_chaosnli, read_votes
from annokit.quality.dataset_stats import dataset_stats

FILES = {"snli": "chaosNLI_snli.jsonl", "mnli": "chaosNLI_mnli_m.jsonl",
         "alphanli": "chaosNLI_alphanli.jsonl"}


@pytest.mark.parametrize(
    ("subset", "n_items", "rate", "n_changed"),
    [
        pytest.param("snli", 1514, 0.2497, 378, id="nie2020_table2_snli"),
        pytest.param("mnli", 1599, 0.3177, 508, id="nie2020_table2_mnli"),
        pytest.param("alphanli", 1532, 0.1064, 163, id="nie2020_table2_alphanli"),
    ],
)
def test_items_and_majority_change(shared_data, subset, n_items, rate, n_changed):
    votes = read_chaosnli(shared_data("chaosnli", FILES[subset]))
    stats = dataset_stats(votes, n_boot=0)
    assert stats["n_items"] == n_items
    assert stats["n_votes"] == 100 * n_items
    assert stats["votes_per_item"] == {"min": 100, "median": 100.0, "max": 100}
    assert stats["n_annotators"] is None
    mc = stats["majority_change"]
    assert mc["n_compared"] == n_items
    assert mc["n_changed"] == n_changed
    assert round(100 * mc["rate"], 2) == pytest.approx(100 * rate)


@pytest.mark.parametrize(
    ("subset", "ties"),
    # counted from label_counter in SOURCE.md of the data folder (argmax not unique)
    [pytest.param("snli", 14, id="source_md_ties_snli"),
     pytest.param("mnli", 14, id="source_md_ties_mnli"),
     pytest.param("alphanli", 8, id="source_md_ties_alphanli")],
)
def test_tie_counts(shared_data, subset, ties):
    stats = dataset_stats(read_chaosnli(shared_data("chaosnli", FILES[subset])), n_boot=0)
    assert stats["ties"] == ties
    assert stats["majority_change"]["n_tied"] == ties


def test_mean_entropy_snli_bits(shared_data):
    # Nie et al. 2020 report a mean entropy of 0.80 on ChaosNLI-S (bits)
    votes = read_chaosnli(shared_data("chaosnli", FILES["snli"]))
    ent = entropy(distributions(votes.counts()), base=2)
    assert round(float(ent.mean()), 2) == 0.80
    # and our entropy equals the value stored in the file for every item
    np.testing.assert_allclose(ent, votes.item_metadata["entropy"].to_numpy(), atol=1e-12)


@pytest.mark.parametrize(
    ("subset", "old", "new", "raw"),
    [
        pytest.param("snli", [486, 677, 351], [421, 813, 280], [2470, 3420, 1673],
                     id="nie2020_table7_snli"),
        pytest.param("mnli", [513, 721, 365], [741, 583, 275], [2483, 3602, 1910],
                     id="nie2020_table7_mnli"),
    ],
)
def test_label_statistics(shared_data, subset, old, new, raw):
    stats = dataset_stats(read_votes(shared_data("chaosnli", FILES[subset])), n_boot=0)
    order = ["entailment", "neutral", "contradiction"]
    assert [stats["old_majority_counts"][k] for k in order] == old
    assert [stats["majority_counts"][k] for k in order] == new
    assert [stats["original_label_counts"][k] for k in order] == raw


def test_alphanli_labels_and_metadata(shared_data):
    votes = read_chaosnli(shared_data("chaosnli", FILES["alphanli"]))
    assert votes.labels.names == ("1", "2")
    assert "old_labels" not in votes.item_metadata.columns
    assert set(votes.item_metadata["old_label"]) == {"1", "2"}
    assert {"obs1", "obs2", "hyp1", "hyp2"} <= set(votes.item_metadata.columns)


def test_label_counts_agree_with_label_count_field(shared_data):
    import json

    path = shared_data("chaosnli", FILES["mnli"])
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    votes = read_chaosnli(path)
    np.testing.assert_array_equal(votes.counts(), np.array([r["label_count"] for r in rows]))
    assert votes.item_ids.tolist() == [r["uid"] for r in rows]
