"""annokit.io.dispatch: the table of formats of read_votes and the one helper that refuses the
options a format does not accept."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from annokit.cli import main
from annokit.errors import InvalidValueError
from annokit.io import FORMATS, read_votes
from annokit.io.dispatch import ARRAY_FORMATS, VOTE_FORMATS, ReadOptions, refuse_options


def test_every_format_has_one_entry():
    assert set(VOTE_FORMATS) == set(FORMATS) - {"auto"}
    assert set(ARRAY_FORMATS) == {"counts", "soft"}


def test_refusal_names_the_option_and_the_format():
    with pytest.raises(InvalidValueError, match=re.escape(
            "v.csv: sep= applies to delimited text tables (CSV, TSV); this is read as lewidi")):
        refuse_options("v.csv", "lewidi", ReadOptions(sep=";"), VOTE_FORMATS["lewidi"].accepts)
    refuse_options("v.csv", "long", ReadOptions(sep=";", no_header=True),
                   VOTE_FORMATS["long"].accepts)  # accepted: nothing raised


def test_wide_table_refuses_no_header_in_both_spellings(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("item,a1,a2\nq,x,y\n")
    message = ("w.csv: {} reads long CSV/TSV tables without a header line (item, annotator, "
               "label); this is read as wide")
    with pytest.raises(InvalidValueError, match=re.escape(message.format("no_header=True"))):
        read_votes(path, format="wide", no_header=True)
    res = CliRunner().invoke(main, ["stats", str(path), "--format", "wide", "--no-header"])
    assert res.exit_code == 1 and res.output == f"Error: {message.format('--no-header')}\n"


def test_count_size_names_the_label_column_and_the_python_limit(tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("item,annotator,label\nq,a,x\nr,a,y\n")
    with pytest.raises(InvalidValueError, match=re.escape(
            "columns={'label': ...} names the right one; max_count_bytes= allows more")):
        read_votes(path, max_count_bytes=8)
