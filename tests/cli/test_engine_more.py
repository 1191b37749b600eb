"""``--engine dask`` against memory through the CLI: annotator predictions (perspectivist
evaluation) and the scales on stats and evaluate (every scale's Dask parity is in tests/scale)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

pytest.importorskip("distributed", reason="the Dask engine needs annokit[dask]")

from annokit.cli import main  # noqa: E402

pytestmark = pytest.mark.usefixtures("dask_cluster")  # one cluster (tests/cli/conftest.py)

DASK = ["--engine", "dask"]


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _json(*args):
    result = _run(*args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _same(got, want, where="") -> None:
    """Equal JSON documents, floats within 1e-12 (relative or absolute)."""
    if isinstance(want, dict):
        assert list(got) == list(want), where
        for key in want:
            _same(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert len(got) == len(want), where
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            _same(a, b, f"{where}[{i}]")
    elif isinstance(want, float) and not isinstance(got, bool):
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12, nan_ok=True), where
    else:
        assert got == want, where


def _parts(frame: pd.DataFrame, folder, n: int) -> None:
    folder.mkdir()
    for j, idx in enumerate(np.array_split(np.arange(len(frame)), n)):
        frame.iloc[idx].to_parquet(folder / f"part{j}.parquet", index=False)


@pytest.fixture(scope="module")
def ratings(tmp_path_factory):
    """Seeded ratings on the labels 1, 2, 4, 8 (unevenly spaced: the values matter on interval
    and ratio scales): one CSV file, the same rows in 3 Parquet parts (one of them empty),
    item predictions (Parquet) and predictions per (item, annotator) as CSV labels and as
    JSON Lines distributions, some naming pairs without a vote."""
    root = tmp_path_factory.mktemp("more")
    rng = np.random.default_rng(25)
    labels = ["1", "2", "4", "8"]
    rows = [(f"q{i}", f"w{a}", labels[int(np.clip(c + rng.integers(-1, 2), 0, 3))])
            for i, c in enumerate(rng.integers(0, 4, size=50))
            for a in rng.choice(7, size=int(rng.integers(2, 6)), replace=False)]
    votes = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    votes.to_csv(root / "votes.csv", index=False)
    parts = root / "parts"
    parts.mkdir()
    votes.iloc[:100].to_parquet(parts / "a.parquet", index=False)
    votes.iloc[:0].to_parquet(parts / "b.parquet", index=False)
    votes.iloc[100:].to_parquet(parts / "c.parquet", index=False)
    preds = pd.DataFrame({"item": [f"q{i}" for i in range(50)]})
    for k, p in enumerate(rng.dirichlet(np.ones(4), size=50).T):
        preds[f"prob_{labels[k]}"] = p
    preds.to_parquet(root / "preds.parquet", index=False)
    pairs = votes.sample(frac=0.85, random_state=1)[["item", "annotator"]]
    pairs = pd.concat([pairs, pd.DataFrame({"item": ["q0", "zz"], "annotator": ["nobody", "w1"]})],
                      ignore_index=True)
    pairs.assign(label=rng.choice(labels, len(pairs))).to_csv(root / "ann.csv", index=False)
    dist = pairs.copy()
    for k, p in enumerate(rng.dirichlet(np.ones(4), size=len(pairs)).T):
        dist[f"prob_{labels[k]}"] = p
    dist.to_json(root / "ann.jsonl", orient="records", lines=True)
    return root


# ordinal and ratio take the ordered path interval takes (their Dask parity per scale is in
# tests/scale/test_evaluate.py); a command-line run each would add ~15 s to the suite
@pytest.mark.parametrize("scale", [None, "interval"])
def test_annotator_predictions_alone(ratings, scale):
    opts = [] if scale is None else ["--scale", scale]
    mem = _json("evaluate", "--votes", ratings / "votes.csv", "--annotator-predictions",
                ratings / "ann.csv", "--json", *opts)
    got = _json("evaluate", "--votes", ratings / "parts", "--annotator-predictions",
                ratings / "ann.csv", "--json", *opts, *DASK)
    assert mem["annotators"]["n_unmatched_predictions"] == 2
    _same(got, mem)
    if scale == "ordinal":  # the table too
        text_mem = _run("evaluate", "--votes", ratings / "votes.csv", "--annotator-predictions",
                        ratings / "ann.csv", *opts).output
        text_dask = _run("evaluate", "--votes", ratings / "parts", "--annotator-predictions",
                         ratings / "ann.csv", *opts, *DASK).output
        assert "per annotator (ordinal scale)" in text_mem
        assert [x for x in text_dask.splitlines() if "Port " not in x] == text_mem.splitlines()


def test_annotator_predictions_with_item_predictions(ratings):
    args = ["evaluate", "--predictions", ratings / "preds.parquet", "--annotator-predictions",
            ratings / "ann.jsonl", "--scale", "interval", "--json", "--metrics", "all"]
    mem = _json(*args, "--votes", ratings / "votes.csv")
    got = _json(*args, "--votes", ratings / "parts", *DASK)
    assert "nll" in mem["annotators"]["scores"] and "manhattan" in mem["annotators"]["pooled"]
    _same(got["annotators"], mem["annotators"])
    _same(got["metrics"], mem["metrics"])


@pytest.mark.parametrize("scale", ["nominal", "ordinal", "interval"])
def test_stats_every_scale(ratings, scale):
    mem = _json("stats", ratings / "votes.csv", "--scale", scale, "--json", "--n-boot", "25")
    got = _json("stats", ratings / "parts", "--scale", scale, "--json", "--n-boot", "25", *DASK)
    _same({k: got[k] for k in mem if k not in ("source", "read_as")},
          {k: v for k, v in mem.items() if k not in ("source", "read_as")})


@pytest.mark.parametrize("labels, scale", [(["low", "mid", "high", "top"], "ordinal"),
                                           (["-2", "-0.5", "1", "3"], "interval")],
                         ids=["ordinal_words", "interval_negative"])
def test_other_label_sets(tmp_path, labels, scale):
    """Ordinal words (in the order --labels declares) and negative interval values: stats and
    evaluate as in memory."""
    rng = np.random.default_rng(3)
    votes = pd.DataFrame([(f"q{i}", f"w{a}", labels[int(rng.integers(0, 4))])
                          for i in range(40) for a in rng.choice(6, size=3, replace=False)],
                         columns=["item", "annotator", "label"])
    votes.to_csv(tmp_path / "votes.csv", index=False)
    _parts(votes, tmp_path / "parts", 3)
    preds = pd.DataFrame({"item": [f"q{i}" for i in range(40)]})
    for name, p in zip(labels, rng.dirichlet(np.ones(4), size=40).T, strict=True):
        preds[f"prob_{name}"] = p
    preds.to_csv(tmp_path / "preds.csv", index=False)
    declared = ["--labels", ",".join(labels)] if scale == "ordinal" else []
    for args in (["stats", "--n-boot", "20"],
                 ["evaluate", "--predictions", tmp_path / "preds.csv", "--metrics", "all",
                  "--votes"]):
        mem = _json(*args, tmp_path / "votes.csv", "--scale", scale, "--json", *declared)
        got = _json(*args, tmp_path / "parts", "--scale", scale, "--json", *declared, *DASK)
        for doc in (mem, got):
            doc.pop("source", None)
            doc.pop("read_as", None)
        assert mem["scale"] == scale and set(got) == set(mem)
        _same({k: got[k] for k in mem}, mem)  # stats: the same keys, in another order


# ordinal: test_other_label_sets[ordinal_words]; ratio: the ordered path interval takes (Dask
# parity per scale in tests/scale/test_evaluate.py)
@pytest.mark.parametrize("scale", ["nominal", "interval"])
def test_evaluate_every_scale(ratings, scale):
    args = ["evaluate", "--predictions", ratings / "preds.parquet", "--scale", scale, "--json",
            "--metrics", "all", "--n-boot", "20", "--by", "agreement"]
    mem = _json(*args, "--votes", ratings / "votes.csv")
    got = _json(*args, "--votes", ratings / "parts", *DASK)
    assert mem["scale"] == scale
    _same(got, mem)


@pytest.fixture(scope="module")
def ticks(tmp_path_factory):
    """Seeded multi-label votes (one row per ticked label) as one CSV file and 2 Parquet parts,
    per-label predictions as a CSV file (2 items without one, 1 unknown id)."""
    root = tmp_path_factory.mktemp("ticks")
    rng = np.random.default_rng(7)
    labels = ["joy", "anger", "fear"]
    rows = [(f"t{i}", f"r{a}", lab) for i in range(30)
            for a in rng.choice(6, size=int(rng.integers(2, 5)), replace=False)
            for lab in rng.choice(labels, size=int(rng.integers(1, 3)), replace=False)]
    votes = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    votes.to_csv(root / "votes.csv", index=False)
    _parts(votes, root / "parts", 2)
    preds = pd.DataFrame({"item": [f"t{i}" for i in range(2, 30)] + ["t99"]})
    for name in labels:
        preds[f"prob_{name}"] = rng.uniform(size=len(preds))
    preds.to_csv(root / "preds.csv", index=False)
    return root


def test_multilabel_evaluate(ticks, tmp_path):
    args = ["evaluate", "--predictions", ticks / "preds.csv", "--multilabel", "--on-missing",
            "drop", "--n-boot", "30", "--json"]
    mem = _run(*args, "--votes", ticks / "votes.csv")
    got = _run(*args, "--votes", ticks / "parts", *DASK)
    assert mem.exit_code == got.exit_code == 0, got.output
    mem_doc, got_doc = json.loads(mem.stdout), json.loads(got.stdout)
    assert mem_doc["task"] == "multilabel" and mem_doc["n_dropped_items"] == 2
    # --multilabel implies --duplicates keep: both engines report the repeated pairs
    assert mem_doc["duplicates"]["policy"] == "keep" and mem_doc["duplicates"]["repeated_pairs"]
    _same(got_doc, mem_doc)
    assert [x for x in got.stderr.splitlines() if "Port " not in x] == \
        mem.stderr.splitlines() == [
        "Warning: 2 of 30 vote items have no prediction, e.g. ['t0', 't1']; they are dropped "
        "and 28 items are kept", f"Warning: {mem_doc['n_ties']} (item, label) cells are ticked "
        "by exactly half of the annotators; tie policy 'exclude'"]
    text = [_run(*args[:-1], "--votes", v, "--per-item", out, *e).stdout
            for v, out, e in ((ticks / "votes.csv", tmp_path / "mem.csv", []),
                              (ticks / "parts", tmp_path / "dask.csv", DASK))]
    lines = [t.splitlines() for t in text]
    assert "per label:" in text[0] and lines[1][:-1] == lines[0][:-1]
    assert [x[-1] for x in lines] == [f"wrote {tmp_path / f'{e}.csv'} (CSV, 28 rows)"
                                      for e in ("mem", "dask")]
    assert (tmp_path / "dask.csv").read_text() == (tmp_path / "mem.csv").read_text()


def test_multilabel_stats(ticks):
    args = ["stats", "--multilabel", "--n-boot", "40", "--seed", "3"]
    mem = _run(*args, ticks / "votes.csv", "--json")
    got = _run(*args, ticks / "parts", "--json", *DASK)
    assert mem.exit_code == got.exit_code == 0, got.output
    mem_doc, got_doc = json.loads(mem.stdout), json.loads(got.stdout)
    for doc in (mem_doc, got_doc):
        for key in ("source", "read_as"):
            doc.pop(key)
    assert mem_doc["task"] == "multilabel" and mem_doc["duplicates"]["repeated_pairs"] > 0
    _same(got_doc, mem_doc)
    assert [x for x in got.stderr.splitlines() if "Port " not in x] == mem.stderr.splitlines()
    table = [_run(*args, v, *e).stdout.splitlines() for v, e in ((ticks / "votes.csv", []),
                                                                  (ticks / "parts", DASK))]
    assert [x for x in table[1] if "read as" not in x and "source" not in x] == \
        [x for x in table[0] if "read as" not in x and "source" not in x]


def test_multilabel_stats_blank_gold_column(ticks, tmp_path):
    """A gold column left blank on every item is accepted by both engines (no gold labels);
    one gold value is refused by both, in the same words."""
    votes = pd.read_csv(ticks / "votes.csv").assign(gold=None)
    _parts(votes, tmp_path / "blank", 2)
    votes.to_csv(tmp_path / "blank.csv", index=False)
    args = ["stats", "--multilabel", "--n-boot", "0", "--json"]
    docs = [_json(*args, v, *e) for v, e in ((tmp_path / "blank.csv", []),
                                              (tmp_path / "blank", DASK))]
    for doc in docs:
        for key in ("source", "read_as"):
            doc.pop(key)
    _same(docs[1], docs[0])
    votes.loc[3, "gold"] = "joy"
    _parts(votes, tmp_path / "one", 2)
    votes.to_csv(tmp_path / "one.csv", index=False)
    for v, e in ((tmp_path / "one.csv", []), (tmp_path / "one", DASK)):
        result = _run(*args, v, *e)
        assert result.exit_code == 2, result.output
        assert result.output.splitlines()[-1] == (
            "Error: gold labels (--gold, a gold column) apply to single-label votes, not to "
            "multi-label ones")


@pytest.mark.parametrize("args, code, text", [
    (["stats", "{parts}", "--multilabel", "--ties", "random", *DASK], 2, "Error: --ties applies "
     "to single-label votes (a multi-label tie is a label ticked by exactly half: reported, left "
     "out)"),
    (["evaluate", "--votes", "{parts}", "--predictions", "{preds}", "--multilabel", "--by",
      "agreement", *DASK], 2, "Error: multi-label votes take --predictions, --pred-labels, "
     "--id-field, --on-missing, --n-bins, --n-boot, --seed and --per-item; not temperatures, "
     "--by, --ties, --positive, --annotator-predictions, --model or --renormalize"),
    (["evaluate", "--votes", "{parts}", "--predictions", "{preds}", "--multilabel",
      "--duplicates", "first", *DASK], 2, "Error: --multilabel keeps every label an annotator "
     "gave an item; --duplicates first conflicts with it"),
    (["evaluate", "--votes", "{parts}", "--annotator-predictions", "{ann}", "--n-boot", "5",
      *DASK], 2, "Error: --per-item, --by, --n-boot, --positive, --metrics and the temperature "
                 "options need --predictions"),
])
def test_refused_up_front(ratings, args, code, text):
    args = [a.format(parts=ratings / "parts", preds=ratings / "preds.parquet",
                     ann=ratings / "ann.csv") for a in args]
    result = _run(*args)
    assert result.exit_code == code, result.output
    assert text in " ".join(result.output.split())
    assert "Traceback" not in result.output
