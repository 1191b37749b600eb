"""``annokit stats`` and ``annokit demo`` through click's CliRunner."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from annokit.cli import main

STATS_KEYS = {"n_items", "n_votes", "n_annotators", "labels", "votes_per_item", "entropy", "ties",
              "majority_change", "label_counts", "krippendorff_alpha", "fleiss_kappa"}


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_stats_json_on_chaosnli(shared_data):
    result = run("stats", str(shared_data("chaosnli", "chaosNLI_snli.jsonl")), "--json",
                 "--n-boot", "50")
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert STATS_KEYS <= set(out)
    assert out["n_annotators"] is None and out["ties"] == 14
    assert out["majority_change"] == {"rate": 378 / 1514, "n_changed": 378, "n_compared": 1514,
                                      "n_tied": 14}
    assert out["votes_per_item"] == {"min": 100, "median": 100.0, "max": 100}
    assert out["entropy"]["base"] == pytest.approx(np.e) and out["entropy"]["unit"] == "nats"
    bits = json.loads(run("stats", str(shared_data("chaosnli", "chaosNLI_snli.jsonl")), "--json",
                          "--n-boot", "0", "--base", "2").output)["entropy"]
    assert bits["unit"] == "bits"
    assert bits["mean"] == pytest.approx(out["entropy"]["mean"] / np.log(2))  # ChaosNLI's unit


def test_stats_is_deterministic_and_seeded(shared_data):
    path = str(shared_data("dog", "answer.csv"))
    a = run("stats", path, "--json", "--seed", "3").output
    assert a == run("stats", path, "--json", "--seed", "3").output
    assert a != run("stats", path, "--json", "--seed", "4").output


def test_stats_table_and_card(tmp_path):
    f = tmp_path / "v.csv"
    f.write_text("item,annotator,label\nq1,a,x\nq1,b,y\nq2,a,y\nq2,b,y\n")
    table = run("stats", str(f))
    assert table.exit_code == 0 and "items with a tied top label" in table.output
    card = run("stats", str(f), "--card", "--n-boot", "0")
    assert card.output.startswith("| statistic | value |")
    out = json.loads(run("stats", str(f), "--json", "--n-boot", "0").output)
    assert out["majority_change"] is None and out["n_annotators"] == 2
    assert out["krippendorff_alpha"]["ci_low"] is None
    assert out["tie_policy"] == "first"
    assert "first (first tied label in label order)" in table.output


def test_stats_tie_policy_changes_the_gold_accuracy_and_says_so(tmp_path):
    # q1 is tied between x and y, and y is voted first; gold is y
    f = tmp_path / "v.csv"
    f.write_text("item,annotator,label,gold\nq1,a,y,y\nq1,b,x,y\nq2,a,y,y\nq2,b,y,y\n")
    for ties, accuracy in (("first", 0.5), ("first_seen", 1.0)):
        out = json.loads(run("stats", str(f), "--json", "--n-boot", "0", "--ties", ties).output)
        assert out["gold"] == {"n_items": 2, "majority_accuracy": accuracy, "n_tied": 1,
                               "tie_policy": ties, "n_unknown_label": 0}
        text = run("stats", str(f), "--n-boot", "0", "--ties", ties).output
        assert f"{accuracy:.4f} on 2 gold items (1 tied, ties: {ties})" in text


@pytest.mark.parametrize("content, message", [
    ("item,annotator,label\nq1,a,x\nq1,,y\n",
     "Error: line 3 of v.csv, column 'annotator': empty annotator id\n"),
    ("item,annotator,label\nq1,a,x\nq1,a,y\n",
     ("Error: v.csv: 1 (item, annotator) pair(s) have more than one vote, e.g. [('q1', 'a')]; "
      "keep one vote of each with --duplicates first|last, or all as multi-label votes with "
      "--duplicates keep (Python: duplicates='first', 'last' or 'keep')\n")),
])
def test_stats_bad_input_is_one_line_exit_1(tmp_path, content, message):
    f = tmp_path / "v.csv"
    f.write_text(content)
    result = run("stats", str(f))
    assert result.exit_code == 1
    assert result.output == message
    assert "Traceback" not in result.output


def test_stats_missing_file_and_bad_option(tmp_path):
    result = run("stats", str(tmp_path / "nope.csv"))
    assert result.exit_code == 1 and result.output == f"Error: {tmp_path / 'nope.csv'}: no such file\n"
    result = run("stats", str(tmp_path / "nope.csv"), "--format", "xml")
    assert result.exit_code == 2 and "Invalid value for '--format'" in result.output


def test_demo_spells_n_boot_and_hides_the_old_alias():
    result = run("demo", "--help")
    assert "--n-boot" in result.output and "--bootstrap" not in result.output


def test_stats_with_one_vote_per_item_has_null_agreement(tmp_path):
    f = tmp_path / "v.csv"
    f.write_text("item,annotator,label\nq1,a,x\nq2,a,y\n")
    out = json.loads(run("stats", str(f), "--json").output)
    assert out["krippendorff_alpha"] is None and out["fleiss_kappa"] is None
    assert "n/a (no item has two votes)" in run("stats", str(f)).output


def test_stats_states_the_format_and_columns_it_chose(tmp_path):
    """The reader sniffs, then states the format it chose (text and --json)."""
    votes = tmp_path / "v.csv"
    votes.write_text("question,worker,answer\nq1,w1,a\nq1,w2,b\n")
    from click.testing import CliRunner

    from annokit.cli import main

    res = CliRunner().invoke(main, ["stats", str(votes), "--n-boot", "0", "--json"])
    assert res.exit_code == 0, res.output
    import json

    assert json.loads(res.stdout)["read_as"] == (
        "v.csv: long table (csv); columns item='question', annotator='worker', label='answer'")
    text = CliRunner().invoke(main, ["stats", str(votes), "--n-boot", "0"]).stdout
    assert text.splitlines()[0].startswith("read as") and "label='answer'" in text.splitlines()[0]


def test_undefined_bootstrap_replicates_are_explained():
    """4 items: some replicates draw votes of one label only, where alpha and kappa are undefined."""
    votes = Path(__file__).resolve().parents[2] / "docs" / "examples" / "votes_long.csv"
    text = run("stats", str(votes)).output
    line = next(x for x in text.splitlines() if x.startswith("Krippendorff"))
    assert re.search(r"1000 reps; \d+ left out: undefined where all resampled votes carry the "
                     r"same label\)$", line)


def test_format_detection_error_names_every_format(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1,2\n")
    result = run("stats", str(path))
    assert result.exit_code == 1
    assert ("pass --format (chaosnli, long, wide, mturk, toloka, labelstudio, prodigy, argilla, "
            "lewidi or lists) and name the columns") in " ".join(result.output.split())
def test_stats_gold_in_another_case_is_counted_not_added(tmp_path):
    (tmp_path / "v.csv").write_text("item,annotator,label\nq1,a,cat\nq1,b,dog\nq2,a,dog\nq2,b,dog\n"
                                    "q3,a,cat\nq3,b,cat\n")
    (tmp_path / "g.csv").write_text("item,gold\nq1,Cat\nq2, Dog\nq3,cat\nq9,fish\n")
    res = run("stats", str(tmp_path / "v.csv"), "--gold", str(tmp_path / "g.csv"), "--n-boot", "0")
    assert res.exit_code == 0
    assert "labels                               cat, dog\n" in res.stdout
    assert ("majority-vote accuracy vs gold       1.0000 on 1 of 3 gold items (2 gold labels not "
            "among the votes' labels; 0 tied, ties: first)\n") in res.stdout
    assert res.stderr.count("Warning: ") == 2
    out = json.loads(run("stats", str(tmp_path / "v.csv"), "--gold", str(tmp_path / "g.csv"),
                         "--n-boot", "0", "--json").stdout)
    assert out["labels"] == ["cat", "dog"] and out["gold"]["n_unknown_label"] == 2


def test_numeric_labels_read_unambiguously(tmp_path):
    """Counts per numeric label are separated by ';' ('0 1,900, 1 1,699' read as four numbers)."""
    path = tmp_path / "v.csv"
    path.write_text("item,annotator,label\n" + "".join(
        f"i{i},a{a},{(i + a) % 2}\n" for i in range(700) for a in range(3)))
    out = CliRunner().invoke(main, ["stats", str(path)]).stdout.splitlines()
    rows = {line[:37].strip(): line[37:].strip() for line in out}
    assert rows["votes per label"].strip() == "0: 1,050; 1: 1,050"
    assert rows["majority label counts"].strip() == "0: 350; 1: 350"


def test_a_path_typo_suggests_near_files(tmp_path):
    """chaosNLI_snli.json for .jsonl: the message suggests the file that exists, as options do."""
    (tmp_path / "chaosNLI_snli.jsonl").write_text("")
    (tmp_path / "other.csv").write_text("item,annotator,label\ni,a,x\n")
    result = CliRunner().invoke(main, ["stats", str(tmp_path / "chaosNLI_snli.json")])
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {tmp_path / 'chaosNLI_snli.json'}: no such file; did you "
                             "mean chaosNLI_snli.jsonl?\n")
    predictions = CliRunner().invoke(main, ["evaluate", str(tmp_path / "other.csv"),
                                            "--predictions", str(tmp_path / "othr.csv")])
    assert predictions.stderr.splitlines()[-1] == (
        f"Error: prediction file not found: {tmp_path / 'othr.csv'}; did you mean other.csv?")
