"""``--engine dask`` on stats, aggregate, annotators and evaluate: the in-memory results."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

pytest.importorskip("distributed", reason="the Dask engine needs annokit[dask]")

from annokit.cli import main  # noqa: E402

pytestmark = pytest.mark.usefixtures("dask_cluster")  # one cluster (tests/cli/conftest.py)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A small long vote set as one Parquet file and as a folder of 3 partitions, with
    predictions the same way."""
    root = tmp_path_factory.mktemp("engine")
    rng = np.random.default_rng(0)
    rows = [(f"q{i}", f"w{a}", ["pos", "neg", "neu"][int(rng.integers(0, 3))])
            for i in range(60) for a in rng.choice(8, size=4, replace=False)]
    votes = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    votes.to_parquet(root / "votes.parquet", index=False)
    (root / "parts").mkdir()
    for j, idx in enumerate(np.array_split(np.arange(len(votes)), 3)):
        votes.iloc[idx].to_parquet(root / "parts" / f"p{j}.parquet", index=False)
    probs = rng.dirichlet(np.ones(3), size=60)
    preds = pd.DataFrame({"item": [f"q{i}" for i in range(60)]})
    for k, name in enumerate(["neg", "neu", "pos"]):
        preds[f"prob_{name}"] = probs[:, k]
    preds.to_parquet(root / "preds.parquet", index=False)
    return root


def _run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result


def _json(*args):
    result = _run(*args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_stats_same_numbers(data):
    mem = _json("stats", data / "votes.parquet", "--json", "--n-boot", "30")
    got = _json("stats", data / "parts", "--engine", "dask", "--json", "--n-boot", "30")
    for key in ("n_items", "n_votes", "n_annotators", "labels", "entropy", "agreement", "ties",
                "label_counts", "majority_counts"):
        assert got[key] == mem[key], key
    assert got["krippendorff_alpha"]["value"] == pytest.approx(mem["krippendorff_alpha"]["value"],
                                                               rel=1e-12)


def test_aggregate_annotators_evaluate(data, tmp_path):
    mem = _json("aggregate", data / "votes.parquet", "--method", "ds", "--json")
    got = _json("aggregate", data / "parts", "--method", "ds", "--engine", "dask", "--json",
                "--out", tmp_path / "labels.parquet")
    out = got.pop("output")  # as many files as the writer made (ranges of the item order)
    assert out.pop("n_files") == len(list((tmp_path / "labels.parquet").glob("*.parquet"))) >= 1
    assert out == {"path": str(tmp_path / "labels.parquet"), "format": "parquet",
                   "layout": "dataset", "n_rows": 60}
    assert got == mem
    assert len(pd.read_parquet(tmp_path / "labels.parquet")) == 60
    mem = _json("annotators", data / "votes.parquet", "--json")
    got = _json("annotators", data / "parts", "--engine", "dask", "--json")
    by_id = {r["annotator"]: r for r in mem["annotators"]}
    for row in got["annotators"]:
        assert row["score"] == pytest.approx(by_id[row["annotator"]]["score"], rel=1e-12)
        assert row["flagged"] == by_id[row["annotator"]]["flagged"]
    mem = _json("evaluate", "--votes", data / "votes.parquet", "--predictions",
                data / "preds.parquet", "--json", "--n-boot", "20")
    got = _json("evaluate", "--votes", data / "parts", "--predictions", data / "preds.parquet",
                "--engine", "dask", "--json", "--n-boot", "20")
    for name, value in mem["metrics"].items():
        assert got["metrics"][name] == pytest.approx(value, rel=1e-12, abs=1e-15), name


def test_evaluate_with_scale_on_dask(tmp_path):
    """--scale reaches the Dask reader: the order-aware metrics and the labels' numbers."""
    rng = np.random.default_rng(1)
    votes = pd.DataFrame([(f"q{i}", f"w{a}", str(int(rng.integers(1, 6))))
                          for i in range(40) for a in rng.choice(6, size=3, replace=False)],
                         columns=["item", "annotator", "label"])
    votes.to_parquet(tmp_path / "votes.parquet", index=False)
    (tmp_path / "parts").mkdir()
    for j, idx in enumerate(np.array_split(np.arange(len(votes)), 3)):
        votes.iloc[idx].to_parquet(tmp_path / "parts" / f"p{j}.parquet", index=False)
    preds = pd.DataFrame({"item": [f"q{i}" for i in range(40)]})
    for k, p in enumerate(rng.dirichlet(np.ones(5), size=40).T):
        preds[f"prob_{k + 1}"] = p
    preds.to_parquet(tmp_path / "preds.parquet", index=False)
    for scale in ("ordinal", "interval"):
        mem = _json("evaluate", "--votes", tmp_path / "votes.parquet", "--predictions",
                    tmp_path / "preds.parquet", "--scale", scale, "--json")
        got = _json("evaluate", "--votes", tmp_path / "parts", "--predictions",
                    tmp_path / "preds.parquet", "--scale", scale, "--engine", "dask", "--json")
        assert got["scale"] == mem["scale"] == scale
        assert list(got["metrics"]) == list(mem["metrics"])
        assert "wasserstein" in got["metrics"]
        for name, value in mem["metrics"].items():
            assert got["metrics"][name] == pytest.approx(value, rel=1e-12, abs=1e-15), name


def test_filter(data, tmp_path):
    mem = _json("filter", data / "votes.parquet", "--method", "agreement", "--top-fraction", "0.25",
                "--out", tmp_path / "kept.csv", "--audit", tmp_path / "a.json", "--json")
    got = _json("filter", data / "parts", "--method", "agreement", "--top-fraction", "0.25",
                "--engine", "dask", "--out", tmp_path / "kept.parquet", "--audit",
                tmp_path / "b.json", "--json")
    assert (mem.pop("output")["layout"], got.pop("output")["layout"]) == ("file", "dataset")
    for key, value in mem.items():
        assert got[key] == (pytest.approx(value, rel=1e-12) if isinstance(value, float)
                            else value), key
    assert len(pd.read_parquet(tmp_path / "kept.parquet")) == len(pd.read_csv(tmp_path /
                                                                             "kept.csv"))


@pytest.mark.parametrize("args, code, text", [
    (["stats", "{parts}", "--scheduler", "tcp://127.0.0.1:1"], 2, "--scheduler applies to "
                                                                  "--engine dask"),
    (["aggregate", "{parts}", "--engine", "dask"], 2, "Error: --engine dask writes the per-item "
     "table to a file, not to stdout: give --out FILE.csv (or .tsv), or --out DIR.parquet for a "
     "Parquet dataset"),
    (["aggregate", "{parts}", "--engine", "dask", "--out", "labels"], 1, "Error: labels: cannot "
     "write '' with --engine dask; use .csv or .tsv (one file) or .parquet (a directory of "
     "Parquet parts, one per partition)"),
    (["stats", "{parts}", "--engine", "dask", "--ties", "random"], 2, "do(es) not apply"),
    (["annotators", "{parts}", "--engine", "dask", "--method", "gold"], 2, "Error: --method gold "
     "(ChaosNLI's rule, with runs of consecutive wrong answers in vote order) runs in memory "
     "only"),
    (["evaluate", "--votes", "{parts}", "--predictions", "{preds}", "--engine", "dask",
      "--oracle-temperature"], 2, "Error: --oracle-temperature runs in memory only: its fit "
     "reads every evaluated item at each step of the search; fit on dev files with "
     "--fit-temperature-on, or use --engine memory"),
    (["evaluate", "--votes", "{parts}", "--predictions", "{preds}", "--engine", "dask",
      "--ties", "random"], 2, "Error: --ties random runs in memory only: the in-memory draw "
     "follows each item's rank in the whole item order (one random stream), which no partition "
     "knows; use --ties first, or --engine memory"),
])
def test_engine_usage_errors(data, args, code, text):
    args = [a.format(parts=data / "parts", preds=data / "preds.parquet") for a in args]
    result = _run(*args)
    assert result.exit_code == code, result.output
    assert text in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_rerun_into_the_same_output_directory(data, tmp_path):
    """The partitioned outputs are replaced atomically: a second run into them is allowed."""
    for _ in range(2):
        _json("aggregate", data / "parts", "--method", "mv", "--engine", "dask", "--json",
              "--out", tmp_path / "labels.parquet")
    assert len(pd.read_parquet(tmp_path / "labels.parquet")) == 60


@pytest.fixture(scope="module")
def side_files(tmp_path_factory):
    """One long CSV of votes (items in a shuffled first-seen order), a separate gold file
    (with a gold value that is no label and a row for an item without votes) and JSON Lines
    predictions, as annotation tools and model scripts export them."""
    root = tmp_path_factory.mktemp("side")
    rng = np.random.default_rng(3)
    names = ["pos", "neg", "neu"]
    rows = [(f"q{i}", f"w{a}", names[int(rng.integers(0, 3))])
            for i in rng.permutation(90) for a in rng.choice(8, size=4, replace=False)]
    pd.DataFrame(rows, columns=["item", "annotator", "label"]).to_csv(root / "votes.csv",
                                                                       index=False)
    gold = [(f"q{i}", names[i % 3]) for i in range(0, 90, 2)] + [("q999", "pos")]
    gold[1] = (gold[1][0], "Positive")
    pd.DataFrame(gold, columns=["item", "gold"]).to_csv(root / "gold.csv", index=False)
    probs = rng.dirichlet(np.ones(3), size=90)
    with open(root / "preds.jsonl", "w", encoding="utf-8") as f:
        for i in range(90):
            f.write(json.dumps({"id": f"q{i}", "probs": probs[i].tolist()}) + "\n")
    return root


@pytest.fixture(scope="module")
def scheduler():
    """One cluster for the acceptance runs, reached with --scheduler as an external one is:
    two single-threaded in-process workers on tcp://127.0.0.1 (a LocalCluster per command
    would cost seconds each; ``tests/scale/test_cluster.py`` runs worker processes)."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       protocol="tcp", host="127.0.0.1", memory_limit=0,
                                       dashboard_address=None,
                                       scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
    yield cluster.scheduler_address
    cluster.close()


#: The chance-corrected agreement coefficients: sums of per-item terms added in another
#: order on Dask (with their bootstrap intervals), so equal as metrics are, to 1e-12.
COEFFICIENTS = ("krippendorff_alpha", "fleiss_kappa", "percent_agreement", "gwet_ac1",
                "brennan_prediger", "conger_kappa")  # sums added in another order


def _assert_close(got, want, *, rel, where="doc"):
    """The same JSON document: the same keys, lists, strings, counts and flags; floats
    within ``rel`` (relative; 1e-15 absolute near 0)."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), where
        for key, value in want.items():
            _assert_close(got[key], value, rel=rel, where=f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _assert_close(g, w, rel=rel, where=f"{where}[{i}]")
    elif isinstance(want, float) and not isinstance(got, bool):
        assert got == pytest.approx(want, rel=rel, abs=1e-15, nan_ok=True), where
    else:
        assert got == want and type(got) is type(want), where


def _partitions(votes_csv, folder, sizes, ext):
    """The votes file's rows cut into consecutive files of ``sizes`` rows (an item's votes
    fall in several of them)."""
    votes = pd.read_csv(votes_csv, dtype=str)
    assert sum(sizes) == len(votes)
    folder.mkdir()
    for j, rows in enumerate(np.split(np.arange(len(votes)), np.cumsum(sizes)[:-1])):
        part = votes.iloc[rows]
        name = folder / f"part-{j:03d}.{ext}"
        part.to_parquet(name, index=False) if ext == "parquet" else part.to_csv(name, index=False)
    return folder


@pytest.mark.parametrize("sizes, ext", [
    ((360,), "csv"),
    ((120, 120, 120), "csv"),
    ((1, 2, 7, 50, 100, 200), "parquet"),
], ids=["1-csv-part", "3-csv-parts", "6-uneven-parquet-parts"])
def test_acceptance_1_cli_gold_jsonl_predictions_labels_csv(side_files, tmp_path, scheduler,
                                                            sizes, ext):
    """Memory (one CSV file) and Dask (the same votes in partitions)
    through the CLI, with a separate gold file, JSON Lines predictions and --out labels.csv
    (one CSV file): counts and statistics identical, EM posteriors within 1e-9, metrics
    within 1e-12."""
    votes, gold, preds = (side_files / n for n in ("votes.csv", "gold.csv", "preds.jsonl"))
    parts = _partitions(votes, tmp_path / "votes", sizes, ext)
    dask = ["--engine", "dask", "--scheduler", scheduler]
    warned = [f"Warning: {gold.name}: 1 item(s) have a gold label that is not among the votes' "
              "labels ['neg', 'neu', 'pos']: 'Positive' (1 item); their gold is left out of "
              "accuracy",
              f"Warning: {gold.name}: 1 gold row(s) name items without votes and were not used "
              "(e.g. 'q999')"]

    # stats --json: every count and statistic identical, the coefficients within 1e-12
    mem, got = (_run("stats", v, "--gold", gold, "--json", "--n-boot", "30", *extra)
                for v, extra in ((votes, []), (parts, dask)))
    assert mem.exit_code == got.exit_code == 0, (mem.output, got.output)
    assert got.stderr.splitlines() == mem.stderr.splitlines() == warned
    mem_doc, got_doc = json.loads(mem.stdout), json.loads(got.stdout)
    assert got_doc.pop("read_as") == f"{parts}: Dask engine, {len(sizes)} partitions"
    assert got_doc.pop("source") == str(parts)
    del mem_doc["read_as"], mem_doc["source"]
    for key in COEFFICIENTS:
        _assert_close(got_doc.pop(key), mem_doc.pop(key), rel=1e-12, where=key)
    assert got_doc == mem_doc
    assert (mem_doc["n_items"], mem_doc["n_votes"], mem_doc["gold"]["n_items"]) == (90, 360, 44)

    # aggregate --method ds --gold --soft --out labels.csv: one CSV file, posteriors 1e-9
    mem, got = (_run("aggregate", v, "--gold", gold, "--method", "ds", "--soft", "--out",
                     tmp_path / name, *extra)
                for v, name, extra in ((votes, "memory.csv", []), (parts, "labels.csv", dask)))
    assert mem.exit_code == got.exit_code == 0, (mem.output, got.output)
    assert got.stderr.splitlines() == mem.stderr.splitlines() == warned
    summary = mem.stdout.strip().split("; wrote")[0]
    assert summary.startswith("ds: 90 items, accuracy ")
    assert got.stdout.strip() == f"{summary}; wrote {tmp_path / 'labels.csv'} (CSV, 90 rows)"
    assert (tmp_path / "labels.csv").is_file()
    want = pd.read_csv(tmp_path / "memory.csv", dtype={"item": str})
    labels = pd.read_csv(tmp_path / "labels.csv", dtype={"item": str})
    assert list(labels.columns) == list(want.columns) == ["item", "label", "p_neg", "p_neu",
                                                          "p_pos"]
    assert labels["item"].tolist() == want["item"].tolist()  # the items' first-seen order
    assert labels["label"].tolist() == want["label"].tolist()
    np.testing.assert_allclose(labels.iloc[:, 2:].to_numpy(), want.iloc[:, 2:].to_numpy(),
                               rtol=0, atol=1e-9)

    # evaluate --predictions preds.jsonl --json: every metric, interval and baseline, 1e-12
    mem, got = (_run("evaluate", "--votes", v, "--predictions", preds, "--pred-labels",
                     "neg,neu,pos", "--json", "--n-boot", "20", *extra)
                for v, extra in ((votes, []), (parts, dask)))
    assert mem.exit_code == got.exit_code == 0, (mem.output, got.output)
    assert got.stderr == mem.stderr
    mem_doc, got_doc = json.loads(mem.stdout), json.loads(got.stdout)
    assert len(mem_doc["metrics"]) > 10
    _assert_close(got_doc, mem_doc, rel=1e-12)


def test_gold_file_other_commands_as_in_memory(side_files, tmp_path):
    """aggregate --method mv and annotators --method ds with a separate gold file, on the
    default LocalCluster: the in-memory summaries (Dawid-Skene scores within 1e-9)."""
    votes, gold = side_files / "votes.csv", side_files / "gold.csv"
    dask = ["--engine", "dask"]
    for args in (["aggregate", votes, "--gold", gold, "--method", "mv", "--json"],
                 ["annotators", votes, "--gold", gold, "--method", "ds", "--json"]):
        mem_doc = _json(*args, *(["--out", tmp_path / "m.csv"] if args[0] == "aggregate" else []))
        got_doc = _json(*args, *dask, *(["--out", tmp_path / "d.csv"] if args[0] == "aggregate"
                                         else []))
        if args[0] == "aggregate":  # what was written: the same but for the path
            assert ({**got_doc.pop("output"), "path": "-"} == {**mem_doc.pop("output"), "path": "-"}
                    == {"path": "-", "format": "csv", "layout": "file", "n_files": 1,
                        "n_rows": 90})
        if args[0] == "annotators":
            by_id = {r["annotator"]: r for r in mem_doc.pop("annotators")}
            for row in got_doc.pop("annotators"):  # Dawid-Skene scores: EM, within 1e-9
                # alpha without each annotator: partition sums added, to rounding
                assert row == {**by_id.pop(row["annotator"]),
                               "score": pytest.approx(row["score"], abs=1e-9),
                               "alpha_without": pytest.approx(row["alpha_without"], abs=1e-12),
                               "alpha_change": pytest.approx(row["alpha_change"], abs=1e-12)}
            assert not by_id
        assert got_doc == mem_doc, args[0]


def test_per_item_is_one_csv_file_in_the_memory_order(side_files, tmp_path):
    votes, preds = side_files / "votes.csv", side_files / "preds.jsonl"
    for engine in ("memory", "dask"):
        res = _run("evaluate", "--votes", votes, "--predictions", preds, "--pred-labels",
                   "neg,neu,pos", "--per-item", tmp_path / f"{engine}.csv", "--engine", engine)
        assert res.exit_code == 0, res.output
    mem = pd.read_csv(tmp_path / "memory.csv", dtype={"item": str})
    got = pd.read_csv(tmp_path / "dask.csv", dtype={"item": str})
    pd.testing.assert_frame_equal(got, mem, check_exact=False, rtol=1e-12, atol=1e-15)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dask.csv", "memory.csv"]


def test_filter_with_gold_writes_one_csv_file(side_files, tmp_path):
    votes, gold = side_files / "votes.csv", side_files / "gold.csv"
    for engine in ("memory", "dask"):
        res = _run("filter", votes, "--gold", gold, "--method", "agreement", "--top-fraction",
                   "0.25", "--out", tmp_path / f"{engine}.csv", "--audit",
                   tmp_path / f"{engine}.json", "--engine", engine)
        assert res.exit_code == 0, res.output
        rows = len(pd.read_csv(tmp_path / f"{engine}.csv"))
        assert (f"wrote {tmp_path / f'{engine}.csv'} (CSV, {rows} rows) and "
                f"{tmp_path / f'{engine}.json'}") in res.output.splitlines()
    mem = pd.read_csv(tmp_path / "memory.csv", dtype=str)
    got = pd.read_csv(tmp_path / "dask.csv", dtype=str)
    assert list(got.columns) == list(mem.columns)
    key = list(mem.columns)
    # the same votes; memory keeps the vote order, Dask groups them by item
    pd.testing.assert_frame_equal(got.sort_values(key).reset_index(drop=True),
                                  mem.sort_values(key).reset_index(drop=True))
