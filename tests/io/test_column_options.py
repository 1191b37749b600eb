"""Column and header options on every command that reads votes."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from annokit.cli import main

READING_COMMANDS = ["stats", "annotators", "filter", "aggregate", "evaluate", "report", "subsample"]
OPTIONS = ["--item-col", "--annotator-col", "--label-col", "--gold-col", "--no-header", "--missing",
           "--sep", "--flags"]


def run(*args):
    return CliRunner().invoke(main, list(args))


def _votes_args(command, path):
    """``--votes PATH`` where the command has it, else the positional PATH."""
    return ["--votes", str(path)] if "--votes" in run(command, "--help").output else [str(path)]


@pytest.mark.parametrize("command", READING_COMMANDS)
def test_every_reading_command_has_the_column_options(command):
    result = run(command, "--help")
    assert result.exit_code == 0
    for option in OPTIONS:
        assert option in result.output, (command, option)


@pytest.fixture
def odd_file(tmp_path):
    f = tmp_path / "v.csv"
    f.write_text("q,who,resp,truth\n1,a,x,x\n1,b,y,\n2,a,y,y\n2,b,y,\n3,a,x,\n3,b,x,\n")
    return f


@pytest.mark.parametrize("command, extra", [
    ("stats", ["--n-boot", "0"]),
    ("annotators", []),
    ("aggregate", []),
    ("subsample", ["--k", "1", "--reps", "2"]),
])
def test_columns_named_on_the_command_line(odd_file, command, extra):
    args = [command, *_votes_args(command, odd_file), *extra]
    result = run(*args)
    assert result.exit_code == 1
    assert "cannot tell the format from columns ['q', 'who', 'resp', 'truth']" in result.output
    assert "--item-col, --annotator-col, --label-col, --gold-col, --no-header" in result.output
    result = run(*args, "--item-col", "q", "--annotator-col", "who", "--label-col", "resp",
                 "--gold-col", "truth")
    assert result.exit_code == 0, result.output


def test_stats_uses_the_gold_column_and_blank_gold(odd_file):
    args = ["stats", *_votes_args("stats", odd_file), "--n-boot", "0", "--json"]
    result = run(*args, "--item-col", "q", "--annotator-col", "who", "--label-col", "resp",
                 "--gold-col", "truth")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["gold"]["n_items"] == 2  # items 1 and 2; item 3's cells blank


def test_no_header_and_missing_on_the_command_line(tmp_path):
    f = tmp_path / "v.csv"
    f.write_text("1,a,x\n1,b,NA\n2,a,y\n2,b,y\n")
    args = ["stats", *_votes_args("stats", f), "--n-boot", "0"]
    result = run(*args, "--no-header")
    assert result.exit_code == 0, result.output
    assert "NA" in result.output
    result = run(*args, "--no-header", "--missing", "NA")
    assert result.exit_code == 0, result.output
    assert "votes                                3" in result.output
    result = run(*args, "--missing", " ,")
    assert result.exit_code == 2 and "expected comma-separated non-blank words" in result.output
    result = run(*args, "--item-col", " ")
    assert result.exit_code == 2 and "expected a column name; got an empty one" in result.output


def test_column_options_refused_for_chaosnli(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text('{"uid": "u", "label_counter": {"e": 3, "n": 1}}\n')
    result = run("stats", *_votes_args("stats", f), "--n-boot", "0", "--item-col", "uid")
    assert result.exit_code == 1
    assert result.output.endswith("Error: c.jsonl: --item-col names a column of a table; this is "
                                  "read as chaosnli\n")
