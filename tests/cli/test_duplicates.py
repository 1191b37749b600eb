"""``--duplicates error|first|last|keep`` on every command that reads votes."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from annokit.cli import main

#: v.csv: q1 holds two votes of annotator a (x then y); 3 items, 3 annotators.
VOTES = "item,annotator,label\nq1,a,x\nq1,b,x\nq1,a,y\nq2,a,x\nq2,b,y\nq2,c,y\nq3,a,y\nq3,c,y\n"
REFUSED = ("Error: v.csv: 1 (item, annotator) pair(s) have more than one vote, e.g. [('q1', 'a')]; "
           "keep one vote of each with --duplicates first|last, or all as multi-label votes with "
           "--duplicates keep (Python: duplicates='first', 'last' or 'keep')\n")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def files(tmp_path):
    (tmp_path / "v.csv").write_text(VOTES)
    (tmp_path / "p.csv").write_text("item,x,y\nq1,0.6,0.4\nq2,0.3,0.7\nq3,0.2,0.8\n")
    return tmp_path


def _command(name, d):
    v = d / "v.csv"
    return {
        "stats": ["stats", v, "--n-boot", "0"],
        "annotators": ["annotators", v],
        "filter": ["filter", v, "--method", "agreement", "--out", d / "kept.csv", "--audit",
                   d / "audit.json", "--threshold", "-1"],
        "aggregate": ["aggregate", v],
        "evaluate": ["evaluate", "--votes", v, "--predictions", d / "p.csv", "--n-boot", "0"],
        "subsample": ["subsample", v, "--k", "1,2", "--reps", "2"],
        "report": ["report", v, "--model", f"m={d / 'p.csv'}", "--out", d / "rep", "--n-boot", "0",
                   "--no-ceiling"],
    }[name]


COMMANDS = ["stats", "annotators", "filter", "aggregate", "evaluate", "subsample", "report"]


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_reading_votes_has_the_option(name):
    result = run(name, "--help")
    assert result.exit_code == 0 and "--duplicates [error|first|last|keep]" in result.output


@pytest.mark.parametrize("name", COMMANDS)
def test_repeated_pair_refused_by_default_naming_the_option(files, name):
    result = run(*_command(name, files))
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] + "\n" == REFUSED and "Traceback" not in result.output


@pytest.mark.parametrize("name", COMMANDS)
@pytest.mark.parametrize("policy", ["first", "last"])
def test_first_and_last_are_accepted_and_stated(files, name, policy):
    result = run(*_command(name, files), "--duplicates", policy)
    assert result.exit_code == 0, result.output
    assert (f"Warning: v.csv: 1 repeated (item, annotator) pair(s); the {policy} vote of each "
            f"kept, 1 vote(s) left out (--duplicates {policy})") in result.stderr


@pytest.mark.parametrize("name", ["stats", "annotators", "filter", "aggregate", "evaluate",
                                  "subsample"])
def test_json_states_the_repeated_pairs(files, name):
    result = run(*_command(name, files), "--duplicates", "last", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["duplicates"] == {"policy": "last", "repeated_pairs": 1, "votes_removed": 1}


def test_stats_read_as_line_and_the_vote_kept(files):
    out = json.loads(run(*_command("stats", files), "--duplicates", "last", "--json").stdout)
    assert out["read_as"] == (
        "v.csv: long table (csv); columns item='item', annotator='annotator', label='label'; "
        "repeated (item, annotator) pairs: 1, the last vote of each kept, 1 vote(s) left out "
        "(--duplicates last)")
    assert out["n_votes"] == 7 and out["label_counts"] == {"x": 2, "y": 5}
    first = json.loads(run(*_command("stats", files), "--duplicates", "first", "--json").stdout)
    assert first["label_counts"] == {"x": 3, "y": 4}


def test_no_key_without_the_option(files):
    (files / "ok.csv").write_text("item,annotator,label\nq1,a,x\nq1,b,y\n")
    out = json.loads(run("stats", files / "ok.csv", "--n-boot", "0", "--json").stdout)
    assert "duplicates" not in out


def test_keep_reads_multi_label_votes(files):
    result = run(*_command("stats", files), "--duplicates", "keep", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["task"] == "multilabel" and out["duplicates"] == {
        "policy": "keep", "repeated_pairs": 1, "votes_removed": 0}
    assert out["read_as"].endswith("repeated (item, annotator) pairs: 1, all votes kept "
                                   "(--duplicates keep: multi-label)")


def test_keep_on_a_single_label_command_is_a_usage_error(files):
    result = run(*_command("aggregate", files), "--duplicates", "keep")
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        "Error: aggregate takes single-label votes; these are multi-label (an annotator gave "
        "several labels to an item): use stats or evaluate --multilabel, or keep one vote of "
        "each with --duplicates first|last")


def test_multilabel_conflicts_with_first_and_last(files):
    result = run(*_command("stats", files), "--multilabel", "--duplicates", "first")
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        "Error: --multilabel keeps every label an annotator gave an item; --duplicates first "
        "conflicts with it")
    assert run(*_command("stats", files), "--multilabel", "--duplicates", "keep").exit_code == 0


@pytest.mark.parametrize("policy", ["first", "last", "keep"])
def test_dask_engine_refuses_the_option_in_one_line(files, policy):
    result = run("stats", files, "--engine", "dask", "--duplicates", policy)
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        f"Error: --duplicates {policy} does not apply with --engine dask: repeated (item, "
        "annotator) votes are refused there (which vote comes first is not defined across "
        "files); use --engine memory, or --multilabel (stats, evaluate) to keep every label "
        "of multi-label votes")


def test_annotators_unknown(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text('{"uid": "1", "label_counter": {"e": 3, "n": 1}}\n'
                 '{"uid": "2", "label_counter": {"e": 2}}\n')
    out = json.loads(run("stats", f, "--n-boot", "0", "--duplicates", "first", "--json").stdout)
    assert out["read_as"] == ("c.jsonl: ChaosNLI JSON Lines; --duplicates first: annotators "
                              "unknown, no (item, annotator) pairs")


def test_lewidi_2023_file_with_a_repeated_annotator(tmp_path):
    item = {"annotators": "Ann1,Ann2,Ann2,Ann4", "annotations": "1,1,0,0", "hard_label": "1",
            "soft_label": {"0": 0.5, "1": 0.5}, "number of annotations": 4}
    f = tmp_path / "ConvAbuse_test.json"
    f.write_text(json.dumps({"2": item, "3": {**item, "annotators": "Ann1,Ann2,Ann3,Ann4"}}))
    refused = run("stats", "--votes", f)
    assert refused.exit_code == 1 and refused.output == (
        "Error: ConvAbuse_test.json: 1 (item, annotator) pair(s) have more than one vote, e.g. "
        "[('2', 'Ann2')]; keep one vote of each with --duplicates first|last, or all as "
        "multi-label votes with --duplicates keep (Python: duplicates='first', 'last' or 'keep')\n")
    result = run("stats", "--votes", f, "--duplicates", "first", "--json", "--n-boot", "0")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["n_votes"] == 7 and out["duplicates"] == {
        "policy": "first", "repeated_pairs": 1, "votes_removed": 1}
    assert "repeated (item, annotator) pairs: 1 (e.g. [('2', 'Ann2')]), the first vote of each " \
           "kept, 1 vote(s) left out (--duplicates first)" in out["read_as"]
    assert "stated vote counts wrong" not in out["read_as"]  # checked against the file as written
    assert ("Warning: ConvAbuse_test.json: 1 repeated (item, annotator) pair(s); the first vote of "
            "each kept, 1 vote(s) left out (--duplicates first)") in result.stderr
