"""Silent misreads made loud: a table read with a role missing while a
column is left unused, and labels that look like spellings of one label."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from annokit.cli import main
from annokit.core.columns import unused_columns_message
from annokit.core.labels import label_variants, label_variants_message
from annokit.errors import DegenerateInputWarning, InvalidValueError
from annokit.io import read_votes


def _table(annotator="annotator", labels=("cat", "dog"), n_items=60, extra=()):
    rng = np.random.default_rng(0)
    rows = [(f"i{i}", f"a{a}", labels[int(rng.integers(len(labels)))])
            for i in range(n_items) for a in rng.choice(12, 5, replace=False)]
    rows += [(f"i{k}", "a99", v) for k, v in enumerate(extra)]
    return pd.DataFrame(rows, columns=["item", annotator, "label"])


UNUSED = ("{src}: no annotator column was found, and column(s) [{col!r}] are not read "
          "({col!r} looks like 'annotator'); the votes are read without annotator ids (counts "
          "only). If one of them holds the annotator, name it with --annotator-col (Python: "
          "columns={{'annotator': ...}}); to read without annotators, columns={{'annotator': "
          "None}}")


@pytest.mark.parametrize("spelling", ["anotator", "Annotater", "workr", "person"])
@pytest.mark.parametrize("kind", ["csv", "tsv", "parquet", "frame"])
def test_a_misspelled_annotator_column_is_named_with_the_option(tmp_path, spelling, kind):
    df = _table(annotator=spelling)
    if kind == "frame":
        source, src = df, "DataFrame"
    else:
        source = tmp_path / f"votes.{kind}"
        src = source.name
        if kind == "parquet":
            df.to_parquet(source)
        else:
            df.to_csv(source, index=False, sep="," if kind == "csv" else "\t")
    with pytest.warns(DegenerateInputWarning) as caught:
        votes = read_votes(source)
    assert not votes.has_annotators
    message = next(str(w.message) for w in caught if "annotator column" in str(w.message))
    if spelling == "person":  # not close to a spelling: listed, not compared
        assert message == UNUSED.format(src=src, col=spelling).replace(
            f" ({spelling!r} looks like 'annotator')", "")
    else:
        assert message.startswith(f"{src}: no annotator column was found, and column(s) "
                                  f"[{spelling!r}] are not read ({spelling!r} looks like ")
        assert "--annotator-col" in message


def test_the_named_column_or_none_reads_without_warning(tmp_path):
    df = _table(annotator="anotator")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateInputWarning)
        assert read_votes(df, columns={"annotator": "anotator"}).n_annotators == 12
        assert not read_votes(df, columns={"annotator": None}).has_annotators
        assert not read_votes(df.drop(columns="anotator")).has_annotators  # nothing unused


def test_unused_columns_message_lists_the_near_spelling_first():
    message = unused_columns_message(["item", "text", "label", "wroker"],
                                     {"item": "item", "annotator": None, "label": "label"},
                                     source="f.csv")
    assert message is not None and message.startswith(
        "f.csv: no annotator column was found, and column(s) ['wroker', 'text'] are not read "
        "('wroker' looks like 'worker');")
    assert unused_columns_message(["item", "annotator", "label", "text"],
                                  {"item": "item", "annotator": "annotator", "label": "label"}) is None


def test_cli_stats_and_annotators_name_the_column_and_option(tmp_path):
    path = tmp_path / "votes.csv"
    _table(annotator="anotator").to_csv(path, index=False)
    runner = CliRunner()
    stats = runner.invoke(main, ["stats", str(path)])
    assert stats.exit_code == 0
    assert UNUSED.format(src="votes.csv", col="anotator") in stats.stderr
    scored = runner.invoke(main, ["annotators", str(path)])
    assert scored.exit_code == 1
    assert scored.stderr.splitlines()[0] == "Warning: " + UNUSED.format(src="votes.csv",
                                                                        col="anotator")
    assert scored.stderr.splitlines()[-1] == (
        "Error: annotator scoring needs annotator ids, but votes.csv has none (counts-only data "
        "such as ChaosNLI publish no annotator ids); if a column of the file holds them, name it "
        "with --annotator-col (Python: columns={'annotator': ...}); else use majority vote or "
        "soft labels instead")


VARIANTS = ("votes.csv: labels that differ only by case, spaces, '_' or '-': 'dog' ({n} votes), "
            "'Dog' (1 vote), 'dog ' (1 vote); label 'dgo' (1 vote) is one edit away from 'dog' "
            "({n} votes); they are read as separate labels. Correct their spelling in the file, or "
            "give the label set with --labels (Python: labels=[...]): votes are then matched to "
            "it ignoring case, and any other spelling is an error naming its line")


def test_label_variants_warn_naming_them_and_the_fix(tmp_path):
    df = _table(extra=("dog ", "Dog", "dgo"))
    path = tmp_path / "votes.csv"
    df.to_csv(path, index=False)
    n = int((df.label == "dog").sum())
    result = CliRunner().invoke(main, ["stats", str(path)])
    assert result.exit_code == 0
    assert f"Warning: {VARIANTS.format(n=f'{n:,}')}" in result.stderr.splitlines()
    declared = CliRunner().invoke(main, ["stats", str(path), "--labels", "cat,dog"])
    assert declared.exit_code == 1  # today's error, kept
    assert declared.stderr.startswith("Error: line ")
    assert "unknown label 'dog '; expected one of ['cat', 'dog']" in declared.stderr


@pytest.mark.parametrize(("names", "counts", "groups", "typos"), [
    (["Yes", "no", "yes", " yes"], [3, 300, 400, 1], [["yes", "Yes", " yes"]], []),
    (["positive", "negative", "postive"], [300, 200, 12], [], [("postive", "positive")]),
    (["not_sure", "Not sure", "yes"], [100, 3, 200], [["not_sure", "Not sure"]], []),
    (["positive", "negative", "postive"], [300, 200, 40], [], []),  # 40 votes: a label
    (["neg", "ne", "pos"], [300, 1, 200], [], [("ne", "neg")]),
    (["1", "2", "3"], [1, 500, 400], [], []),           # numbers are not typos
    (["cat", "car"], [300, 100], [], []),               # both frequent: two labels
    (["a", "b"], [500, 1], [], []),                      # too short to tell
])
def test_label_variants_classes(names, counts, groups, typos):
    assert label_variants(names, counts) == (groups, typos)


def test_no_variants_no_message_and_declared_labels_never_warn(tmp_path):
    assert label_variants_message(["cat", "dog"], [10, 1], "x") is None
    df = _table(extra=("Dog",))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateInputWarning)
        votes = read_votes(df, labels=["cat", "dog"])  # case-insensitive match to the set
    assert votes.labels.names == ("cat", "dog")
    with pytest.raises(InvalidValueError, match=r"unknown label 'dgo'"):
        read_votes(_table(extra=("dgo",)), labels=["cat", "dog"])
