"""One path for both engines: every command that reads votes takes a directory or (quoted)
glob of partitions, with the results of the files concatenated into one."""

from __future__ import annotations

import functools
import json
import shutil

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from annokit.cli import main

from _shared import assert_close_documents


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The same votes as one CSV file and as 4 CSV parts the way pandas and spreadsheets
    export them (CRLF line ends in two, a byte-order mark in one), plus predictions."""
    root = tmp_path_factory.mktemp("partitions")
    rng = np.random.default_rng(7)
    rows = [(f"q{i}", f"w{a}", ["pos", "neg", "neu"][int(rng.integers(0, 3))])
            for i in range(80) for a in rng.choice(10, size=5, replace=False)]
    votes = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    votes["gold"] = np.where(np.arange(len(votes)) % 7 == 0, "pos", "")
    votes.to_csv(root / "all.csv", index=False)
    (root / "parts").mkdir()
    for j, idx in enumerate(np.array_split(np.arange(len(votes)), 4)):
        votes.iloc[idx].to_csv(root / "parts" / f"part-{j:05d}.csv", index=False,
                               lineterminator="\r\n" if j % 2 else "\n",
                               encoding="utf-8-sig" if j == 2 else "utf-8")
    (root / "parts" / "_SUCCESS").write_text("")
    probs = rng.dirichlet(np.ones(3), size=80)
    preds = pd.DataFrame({"item": [f"q{i}" for i in range(80)]})
    for k, name in enumerate(["neg", "neu", "pos"]):
        preds[f"prob_{name}"] = probs[:, k]
    preds.to_csv(root / "preds.csv", index=False)
    return root


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _json(*args):
    result = _run(*args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _without_source(doc):
    return {k: v for k, v in doc.items() if k not in ("source", "read_as")}


_close = functools.partial(assert_close_documents, abs_tol=1e-15)


def test_stats_memory_on_a_directory_equals_the_file_and_dask(dask_cluster, data):
    one = _json("--quiet", "stats", data / "all.csv", "--json", "--n-boot", "30")
    parts = _json("--quiet", "stats", data / "parts", "--json", "--n-boot", "30")
    assert parts["source"] == "parts/"
    assert parts["read_as"].endswith("; 4 csv partitions (part-00000.csv ... part-00003.csv)")
    assert _without_source(parts) == _without_source(one)
    pytest.importorskip("distributed", reason="the Dask engine needs annokit[dask]")
    dask = _json("--quiet", "stats", data / "parts", "--json", "--n-boot", "30",
                 "--engine", "dask")
    _close(_without_source(dask), _without_source(parts))


@pytest.mark.parametrize("args", [
    ("aggregate", "--method", "ds", "--json"),
    ("annotators", "--json"),
    ("subsample", "--k", "1,3", "--reps", "20", "--json"),
    ("plan", "--budget", "0", "--json"),
    ("evaluate", "--predictions", "{preds}", "--json"),
], ids=lambda a: a[0])
def test_every_command_takes_a_quoted_glob(data, args):
    args = [a.format(preds=data / "preds.csv") for a in args]
    one = _json(args[0], data / "all.csv", *args[1:])
    glob = _json(args[0], str(data / "parts" / "part-*.csv"), *args[1:])
    assert _without_source(glob) == _without_source(one)


def test_filter_and_aggregate_write_what_the_file_gives(data, tmp_path):
    for src, tag in ((data / "all.csv", "one"), (data / "parts", "dir")):
        result = _run("filter", src, "--method", "agreement", "--top-fraction", "0.2",
                      "--out", tmp_path / f"kept_{tag}.csv", "--audit",
                      tmp_path / f"audit_{tag}.json")
        assert result.exit_code == 0, result.output
        result = _run("aggregate", src, "--out", tmp_path / f"labels_{tag}.csv")
        assert result.exit_code == 0, result.output
    for name in ("kept", "labels"):
        assert (tmp_path / f"{name}_one.csv").read_bytes() == (tmp_path / f"{name}_dir.csv").read_bytes()


def test_errors_name_the_partition_and_exit_1(data, tmp_path):
    result = _run("stats", str(data / "parts" / "nothing-*.csv"))
    assert result.exit_code == 1
    assert result.output.strip().endswith("nothing-*.csv: no file matches this pattern")
    bad = tmp_path / "bad"
    shutil.copytree(data / "parts", bad)
    lines = (bad / "part-00002.csv").read_bytes().split(b"\n")  # the part with a BOM
    lines[2] = lines[2].rsplit(b",", 2)[0] + b",p0s,"
    (bad / "part-00002.csv").write_bytes(b"\n".join(lines))
    result = _run("stats", bad, "--labels", "pos,neg,neu")
    assert result.exit_code == 1
    assert result.output == ("Error: line 3 of part-00002.csv, column 'label': unknown label "
                             "'p0s'; expected one of ['pos', 'neg', 'neu']\n")
    result = _run("aggregate", data / "parts", "--out", data / "parts" / "labels.csv")
    assert result.exit_code == 1
    assert "is inside the input --votes" in result.output
    assert "a directory of partitions: it would be read as one of them" in result.output
