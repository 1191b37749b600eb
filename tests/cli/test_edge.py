"""The CLI's edge: input naming, option ranges, error handling, warnings, terminal safety."""

from __future__ import annotations

import warnings

import pytest
from click.testing import CliRunner

from annokit.cli import COMMANDS, EXIT_CODES, main
from annokit.cli._common import term_safe
from annokit.errors import DegenerateInputWarning, SchemaError

VOTE_COMMANDS = ["stats", "evaluate", "subsample", "annotators", "filter", "aggregate", "report"]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def votes_csv(tmp_path):
    path = tmp_path / "votes.csv"
    path.write_text("item,annotator,label\n" + "".join(
        f"q{i},w{a},{'yes' if (i + a) % 3 else 'no'}\n" for i in range(6) for a in range(4)))
    return path


@pytest.mark.parametrize("command", VOTE_COMMANDS)
def test_every_votes_command_takes_votes_and_the_positional_shorthand(command):
    result = run(command, "--help")
    assert result.exit_code == 0
    assert f"Usage: main {command} [OPTIONS] [VOTES]" in result.output
    assert "--votes PATH" in result.output and "A positional VOTES path is the same." in " ".join(
        result.output.split())


@pytest.mark.parametrize("command", VOTE_COMMANDS)
def test_missing_votes_is_a_usage_error(command, tmp_path):
    extra = {"evaluate": ["--predictions", "p.jsonl"], "report": ["--model", "m=p", "--out",
                                                                    tmp_path / "o"],
             "filter": ["--method", "agreement", "--out", tmp_path / "f.csv", "--audit",
                        tmp_path / "a.json"]}.get(command, [])
    result = run(command, *extra)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == ("Error: Missing option '--votes' (or a positional "
                                              "VOTES path).")


@pytest.mark.parametrize("command", [*VOTE_COMMANDS, "demo"])
def test_negative_seed_refused_on_every_command(command):
    result = run(command, "--seed", "-1")
    assert result.exit_code == 2
    assert "Invalid value for '--seed': -1 is not in the range x>=0." in result.stderr


@pytest.mark.parametrize("args, message", [
    (["stats", "--base", "nan"], "Invalid value for '--base': 'nan' is not a finite number."),
    (["stats", "--base", "inf"], "Invalid value for '--base': 'inf' is not a finite number."),
    (["stats", "--base", "1"], "Invalid value for '--base': '1' is not allowed (excluded: 1)."),
    (["stats", "--base", "-2"], "Invalid value for '--base': -2.0 is not in the range x>0."),
    (["annotators", "--threshold", "nan"],
     "Invalid value for '--threshold': 'nan' is not a finite number."),
    (["filter", "--method", "agreement", "--out", "o.csv", "--audit", "a.json", "--top-fraction",
      "1.5"], "Invalid value for '--top-fraction': 1.5 is not in the range 0<x<1."),
    (["filter", "--method", "agreement", "--out", "o.csv", "--audit", "a.json", "--threshold",
      "0.5", "--top-fraction", "0.2"],
     "Error: --threshold and --top-fraction conflict: give one of them"),
    (["stats", "--json", "--card"], "Error: --json and --card conflict: give one of them"),
    (["aggregate", "--method", "mv", "--clamp-gold"],
     "Error: --clamp-gold applies to ds, onecoin and mace, not --method mv"),
    (["aggregate", "--method", "ds", "--ties", "first_seen"],
     "Error: --ties applies to mv, wmv, wawa and zbs, not --method ds"),
    (["subsample", "--jobs", "100000"],
     "Invalid value for '--jobs': 100000 is not in the range 1<=x<=256."),
    (["stats", "--n-boot", "10000000000"],
     ("Invalid value for '--n-boot': 10000000000 would need about 596.0 GiB (bootstrap "
      "replicates), above the limit of 2.0 GiB; choose a smaller value")),
])
def test_option_values_refused_before_reading(votes_csv, args, message):
    result = run(*args, "--votes", votes_csv)
    assert result.exit_code == 2
    assert message in result.stderr


def test_annokit_error_is_one_line_exit_1(tmp_path):
    result = run("stats", tmp_path / "missing.csv")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1


def test_unexpected_exception_is_short_with_debug_hint(votes_csv, monkeypatch):
    import annokit.io

    def boom(*args, **kwargs):
        raise RuntimeError("something\ninternal")

    monkeypatch.setattr(annokit.io, "read_votes", boom)
    result = run("stats", votes_csv)
    assert result.exit_code == 3
    assert result.stderr == ("Error: unexpected RuntimeError: something internal (rerun with "
                             "'annokit --debug ...' for the traceback)\n")
    debug = run("--debug", "stats", votes_csv)
    assert isinstance(debug.exception, RuntimeError)  # the traceback is not swallowed


def test_os_errors_are_one_line_exit_1(votes_csv, monkeypatch):
    import annokit.io

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device", "/tmp/out.csv")

    monkeypatch.setattr(annokit.io, "read_votes", full)
    result = run("stats", votes_csv)
    assert result.exit_code == 1
    assert result.stderr == "Error: No space left on device: /tmp/out.csv\n"


def test_library_warnings_are_one_line_without_source_paths(votes_csv, monkeypatch):
    import annokit.quality.dataset_stats as ds

    def warn(*args, **kwargs):
        warnings.warn("two\nlines \x1b[2J", DegenerateInputWarning, stacklevel=1)
        raise SchemaError("bad\x00 data")

    monkeypatch.setattr(ds, "dataset_stats", warn)
    result = run("stats", votes_csv)
    assert result.exit_code == 1
    assert result.stderr == "Warning: two lines \\x1b[2J\nError: bad\\x00 data\n"


def test_control_characters_in_ids_are_escaped(tmp_path):
    path = tmp_path / "votes.csv"
    path.write_text("item,annotator,label\n" + "".join(
        f"q{i},\"w\x1b[31m{a}\x07\",{'yes' if (i + a) % 2 else 'no'}\n"
        for i in range(4) for a in range(3)))
    result = run("annotators", path)
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "w\\x1b[31m0\\x07" in result.stdout


def test_term_safe_escapes_c0_c1_and_keeps_text():
    assert term_safe("a\tb\nc\x1b\x9b\x7f\x00é") == "a\tb\nc\\x1b\\x9b\\x7f\\x00é"
    assert term_safe("abc\u202edcba") == "abc\\u202edcba"  # right-to-left override
    assert term_safe("x\ny\r", keep_newlines=False) == "x\\ny\\r"


def test_exit_codes_are_documented_in_help():
    result = run("--help")
    text = " ".join(result.output.split())
    for code, meaning in EXIT_CODES.items():
        assert f"{code} {' '.join(meaning.split())}" in text
    assert "--debug" in text
    assert set(VOTE_COMMANDS) < set(COMMANDS)


@pytest.mark.parametrize("engine", ["memory", "dask"])
@pytest.mark.parametrize(("name", "text"), [
    ("v.csv", "item,annotator,label\na,x,1\n\nb,y,2\nc,z,zz\n"),
    ("w.csv", 'item,annotator,label\na,x,1\n"b\nc",y,2\nc,z,zz\n'),
    ("crlf.csv", 'item,annotator,label\r\na,x,1\r\n"b\r\nc",y,2\r\nc,z,zz\r\n'),
], ids=["blank_line", "quoted_lf", "quoted_crlf"])
def test_a_bad_row_is_named_at_its_physical_line(tmp_path, engine, name, text):
    """Line 5 in every file: past a blank line, or a quoted id that spans two lines."""
    if engine == "dask":
        pytest.importorskip("dask.dataframe", reason="the Dask engine needs annokit[dask]")
    (tmp_path / name).write_bytes(text.encode())
    result = run("stats", tmp_path / name, "--labels", "1,2", "--engine", engine)
    assert result.exit_code == 1
    assert result.output == (f"Error: line 5 of {name}, column 'label': unknown label 'zz'; "
                             "expected one of ['1', '2']\n")


def test_a_bad_row_read_from_standard_input_is_named_at_its_line():
    result = CliRunner().invoke(main, ["stats", "-", "--format", "long", "--labels", "1,2"],
                                input='item,annotator,label\na,x,1\n"b\n\nc",y,2\n\nc,z,zz\n')
    assert result.exit_code == 1
    assert result.output == ("Error: line 7 of <stdin>, column 'label': unknown label 'zz'; "
                             "expected one of ['1', '2']\n")
