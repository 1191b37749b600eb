"""--sep and --flags, and the messages of files read the careless way."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from annokit.cli import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def semicolon(tmp_path):
    path = tmp_path / "v.csv"
    path.write_bytes(b"\xef\xbb\xbfitem;annotator;category\r\nq1;a;x\r\nq1;b;y\r\nq2;a;x\r\nq2;b;x\r\n")
    return path


def test_stats_reads_a_european_spreadsheet_and_says_how(semicolon):
    res = run("stats", semicolon, "--n-boot", "0", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["read_as"] == (
        "v.csv: long table (csv; separator ';' sniffed, --sep to override); columns item='item', "
        "annotator='annotator', label='category' (label: the one column besides item and annotator)")


def test_sep_forces_and_a_wrong_sep_is_one_line(semicolon):
    res = run("stats", semicolon, "--n-boot", "0", "--json", "--sep", ";")
    assert res.exit_code == 0, res.output
    assert "separator ';' given" in json.loads(res.stdout)["read_as"]
    res = run("stats", semicolon, "--n-boot", "0", "--sep", ",")
    assert res.exit_code == 1
    assert res.output == ("Error: v.csv: --sep ',' does not split the header line; ';' does (give "
                          "--sep ';', or leave --sep out to sniff it)\n")
    res = run("stats", semicolon, "--sep", ":")
    assert res.exit_code == 2
    assert "Invalid value for '--sep': expected one of , ; | or tab; got ':'" in res.output


@pytest.mark.parametrize("text, message", [
    ("item,annotator,label\nq1,a,x\nq1,b,y,z\n",
     "Error: v.csv: line 3 has 4 fields, the header has 3 (read as comma-separated: quote a field "
     "that holds a comma, or name the separator with --sep)\n"),
    ('item,annotator,label\nq1,a,"x\nq1,b,y\n',
     "Error: v.csv: line 2: a quoted field opened on this line is never closed (unterminated "
     "quote)\n"),
    ("item,annotator\nq1,a\nq1,b\n",
     "Error: v.csv: item ('item') and annotator ('annotator') columns but no label column; got "
     "['item', 'annotator']; name it with --label-col (Python: columns={'label': ...})\n"),
    ("item,person,tag\nq1,a,x\nq1,b,y\n",
     "Error: v.csv: item ids repeat in 'item', so one row is one vote, but which of ['person', "
     "'tag'] holds the annotator and which the label is not said by their names; name them with "
     "--annotator-col and --label-col (or --format wide)\n"),
], ids=["ragged_row", "unterminated_quote", "no_label_column", "unnamed_roles"])
def test_careless_files_get_one_line_naming_a_real_option(tmp_path, text, message):
    path = tmp_path / "v.csv"
    path.write_text(text)
    res = run("stats", path, "--n-boot", "0")
    assert res.exit_code == 1
    assert res.output == message
    assert res.exception is None or isinstance(res.exception, SystemExit)


@pytest.fixture
def batch(tmp_path):
    path = tmp_path / "batch.csv"
    path.write_text("HITId,WorkerId,AssignmentStatus,Input.id,Answer.sentiment,Answer.cannot_judge.on\n"
                    "H1,w1,Approved,q1,pos,on\nH1,w2,Approved,q1,neg,\nH1,w3,Approved,q1,neg,\n"
                    "H2,w1,Approved,q2,pos,\nH2,w2,Approved,q2,pos,\n")
    return path


def test_flags_drop_by_default_and_keep_on_request(batch):
    res = run("stats", batch, "--n-boot", "0", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["n_votes"] == 4
    assert out["read_as"].endswith("; flag field(s) ['Answer.cannot_judge.on']: 1 flagged vote(s) "
                                   "dropped (--flags keep to keep them)")
    res = run("stats", batch, "--n-boot", "0", "--json", "--flags", "keep")
    assert json.loads(res.stdout)["n_votes"] == 5


def test_flags_on_a_table_that_is_not_an_mturk_batch(semicolon):
    res = run("stats", semicolon, "--flags", "keep")
    assert res.exit_code == 1
    assert res.output == ("Error: v.csv: --flags applies to Mechanical Turk batch results (flag "
                          "fields beside the answer); this is read as long\n")


def test_sep_and_flags_are_refused_with_the_dask_engine(semicolon):
    res = run("stats", semicolon, "--engine", "dask", "--sep", ";")
    assert res.exit_code == 2
    assert "--sep do(es) not apply with --engine dask" in res.output


def test_evaluate_reads_semicolon_predictions_with_decimal_commas(semicolon, tmp_path):
    preds = tmp_path / "p.csv"
    preds.write_bytes(b"item;prob_x;prob_y\r\nq1;0,5;0,5\r\nq2;0,9;0,1\r\n")
    res = run("evaluate", "--votes", semicolon, "--predictions", preds, "--json", "--n-boot", "0")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["n_items"] == 2
