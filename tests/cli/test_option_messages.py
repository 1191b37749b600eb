"""Messages that name the problem and the option.

Each case once: the exact line, the exit status, no traceback.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import annokit.scale.workflow
from annokit.cli import main

EXAMPLES = "docs/examples"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def last_line(result) -> str:
    return result.output.strip().splitlines()[-1]


def test_chaosnli_counts_all_zero_name_the_line_and_field(tmp_path):
    path = tmp_path / "zero.jsonl"
    rows = [{"uid": "a", "label_counter": {"e": 0, "n": 0, "c": 0},
             "label_dist": [0.333, 0.333, 0.333]},
            {"uid": "b", "label_counter": {"e": 1}}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run("stats", path)
    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: line 1 of zero.jsonl, field label_counter: item 'a' has no votes (every count is "
        "0); each line needs at least one vote: correct its label_counter or remove the line")
    assert "Traceback" not in result.output


def test_evaluate_out_of_memory_names_n_bins(monkeypatch):
    def exhausted(*args, **kwargs):  # what numpy raises when the binned sums do not fit
        raise MemoryError

    monkeypatch.setattr(annokit.scale.workflow, "evaluate_files", exhausted)
    result = run("evaluate", f"{EXAMPLES}/votes_long.csv", "--predictions",
                 f"{EXAMPLES}/predictions.csv", "--n-bins", "10000000")
    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: out of memory with --n-bins 10000000: the memory they need grows with their value "
        "(and with the items, labels and models); choose a smaller --n-bins (default 10)")


def test_evaluate_out_of_memory_with_default_options_stays_generic(monkeypatch):
    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(annokit.scale.workflow, "evaluate_files", exhausted)
    result = run("evaluate", f"{EXAMPLES}/votes_long.csv", "--predictions",
                 f"{EXAMPLES}/predictions.csv")
    assert result.exit_code == 1
    assert last_line(result) == "Error: out of memory; use a smaller input or smaller option values"


@pytest.mark.parametrize("bins", ["1e9", "1000000000"])
def test_report_bins_too_many_names_bins_not_n_boot(bins, tmp_path):
    result = run("report", f"{EXAMPLES}/votes_long.csv", "--model",
                 f"m={EXAMPLES}/predictions.csv", "--bins", bins, "--out", tmp_path / "r")
    assert result.exit_code == 2  # a refused option value is a usage error, before any work
    assert last_line(result) == (
        f"Error: Invalid value for '--bins': {bins} would need about 232.8 TiB (replicate values "
        "of every metric in 1,000,000,000 agreement bins), above the limit of 2.0 GiB; choose a "
        "smaller value")


def test_report_bins_fraction_is_neither_count_nor_edges(tmp_path):
    result = run("report", f"{EXAMPLES}/votes_long.csv", "--model",
                 f"m={EXAMPLES}/predictions.csv", "--bins", "0.5", "--out", tmp_path / "r")
    assert result.exit_code == 2
    assert last_line(result) == (
        "Error: Invalid value for '--bins': one value is a number of bins, a whole number (edges "
        "are two or more comma-separated numbers); got '0.5'")


@pytest.mark.parametrize("command, value, line", [
    ("filter", "inf", "'inf' would remove every annotator (every score is below it); give a "
                      "finite threshold, or --top-fraction F to remove the lowest-scoring fraction"),
    ("filter", "-inf", "'-inf' would remove no annotator (no score is below it); give a finite "
                       "threshold, or --top-fraction F to remove the lowest-scoring fraction"),
    ("annotators", "inf", "'inf' would flag every annotator (every score is below it); give a "
                          "finite threshold"),
])
def test_infinite_threshold_says_what_it_would_do(command, value, line, tmp_path):
    extra = (["--method", "agreement", "--out", tmp_path / "k.csv", "--audit", tmp_path / "a.json"]
             if command == "filter" else [])
    result = run(command, f"{EXAMPLES}/votes_long.csv", *extra, "--threshold", value)
    assert result.exit_code == 2
    assert last_line(result) == f"Error: Invalid value for '--threshold': {line}"
