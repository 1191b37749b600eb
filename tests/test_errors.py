"""annokit.errors: an error names an option by its key; Python and the command line spell it."""

from __future__ import annotations

import pickle

import pytest

from annokit.cli._common import cli_option, error_message
from annokit.errors import InvalidValueError, Option, SchemaError


@pytest.mark.parametrize("option, python, cli", [
    (Option("no_header", True), "no_header=True", "--no-header"),
    (Option("flags"), "flags=", "--flags"),
    (Option("format", "counts"), "format='counts'", "--format counts"),
    (Option("duplicates", ("first", "last")), "duplicates='first' or 'last'",
     "--duplicates first|last"),
    (Option("columns", role="label"), "columns={'label': ...}", "--label-col"),
    (Option("max_count_bytes"), "max_count_bytes=", "Python: max_count_bytes="),
    (Option("duplicates", ("first", "last", "keep"), aside=True),
     "duplicates='first', 'last' or 'keep'", " (Python: duplicates='first', 'last' or 'keep')"),
])
def test_one_option_two_spellings(option, python, cli):
    assert option.python() == python and cli_option(option) == cli


def test_error_message_is_python_and_the_cli_renders_its_own():
    opt, aside = Option("no_header", True), Option("no_header", True, aside=True)
    err = InvalidValueError(f"v.csv: {opt} reads long tables{aside}", options=[opt, aside])
    assert str(err) == "v.csv: no_header=True reads long tables"
    assert error_message(err) == "v.csv: --no-header reads long tables (Python: no_header=True)"


def test_retold_and_pickled_errors_keep_their_options():
    opt = Option("sep")
    err = SchemaError(f"(row 3): {opt} is wrong", options=[opt])
    told = err.retold(lambda m: m.replace("(row 3)", "(line 4)"))
    assert type(told) is SchemaError and error_message(told) == "(line 4): --sep is wrong"
    back = pickle.loads(pickle.dumps(told))
    assert type(back) is SchemaError and str(back) == "(line 4): sep= is wrong"
    assert error_message(back) == "(line 4): --sep is wrong"


def test_errors_without_options_are_plain():
    err = InvalidValueError("plain {braces} kept")
    assert str(err) == error_message(err) == "plain {braces} kept"
