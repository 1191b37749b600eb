"""CLI: annokit annotators | filter | aggregate."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from annokit.cli import main
from annokit.io import read_votes


@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture
def small(tmp_path):
    """Votes with a gold file: annotator s answers at random-ish, the others agree."""
    rows = []
    truth = {}
    for k in range(30):
        t = str(k % 3)
        truth[f"q{k}"] = t
        for a in ("a1", "a2", "a3", "a4"):
            rows.append((f"q{k}", a, t if (k + len(a) * int(a[1])) % 7 else str((int(t) + 1) % 3)))
        rows.append((f"q{k}", "s", str((k * 5 + 1) % 3)))
    votes = tmp_path / "votes.csv"
    pd.DataFrame(rows, columns=["question", "worker", "answer"]).to_csv(votes, index=False)
    gold = tmp_path / "truth.csv"
    pd.DataFrame({"question": list(truth), "truth": list(truth.values())}).to_csv(gold, index=False)
    return votes, gold


def test_annotators_json_has_documented_keys(runner, small):
    votes, gold = small
    res = runner.invoke(main, ["annotators", "--votes", str(votes), "--gold", str(gold),
                               "--method", "gold", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["method"] == "gold" and data["threshold"] == 0.75
    assert {"annotator", "n_votes", "score", "flagged"} <= set(data["annotators"][0])
    flagged = {a["annotator"] for a in data["annotators"] if a["flagged"]}
    assert flagged == {"s"} and data["n_flagged"] == 1


def test_annotators_table_marks_flagged(runner, small):
    votes, _gold = small
    res = runner.invoke(main, ["annotators", "--votes", str(votes), "--method", "agreement"])
    assert res.exit_code == 0, res.output
    first = res.output.splitlines()[1]
    assert first.startswith("s ") and "*" in first
    assert res.output.strip().endswith("(method agreement, threshold 0.1); 0 with too few votes "
                                       "for a verdict (fewer than 5: --min-annotator-votes)")


def test_filter_writes_votes_and_audit_and_is_idempotent(runner, small, tmp_path):
    votes, gold = small
    out, audit = tmp_path / "kept.csv", tmp_path / "audit.json"
    res = runner.invoke(main, ["filter", "--votes", str(votes), "--gold", str(gold),
                               "--method", "gold", "--out", str(out), "--audit", str(audit)])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("removed 1 of 5 annotators (30 of 150 votes; method gold")
    data = json.loads(audit.read_text())
    assert data["annotators"][0]["annotator"] == "s"
    assert data["n_votes_removed"] == 30 and data["n_items_affected"] == 30
    kept = read_votes(out)
    assert kept.n_votes == 120 and "s" not in set(kept.annotator_ids[kept.annotator_index])
    out2, audit2 = tmp_path / "kept2.parquet", tmp_path / "audit2.json"
    res = runner.invoke(main, ["filter", "--votes", str(out), "--method", "gold", "--out", str(out2),
                               "--audit", str(audit2), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["n_votes_removed"] == 0
    assert read_votes(out2).equals(kept)
    assert not list(tmp_path.glob(".*"))                     # no temporary files left behind


def test_aggregate_json_summary_and_soft_output(runner, small, tmp_path):
    votes, gold = small
    for method in ("mv", "wmv", "ds", "onecoin", "mace", "glad", "wawa", "zbs"):
        res = runner.invoke(main, ["aggregate", "--votes", str(votes), "--gold", str(gold),
                                   "--method", method, "--json"])
        assert res.exit_code == 0, res.output
        data = json.loads(res.output)
        assert set(data) >= {"method", "n_items", "n_gold", "accuracy", "iterations", "converged"}
        assert data["n_items"] == 30 and data["n_gold"] == 30 and data["accuracy"] >= 0.9
    res = runner.invoke(main, ["aggregate", "--votes", str(votes), "--method", "ds", "--json"])
    assert json.loads(res.output)["accuracy"] is None
    out = tmp_path / "labels.csv"
    res = runner.invoke(main, ["aggregate", "--votes", str(votes), "--method", "ds", "--soft",
                               "--out", str(out)])
    assert res.exit_code == 0, res.output
    table = pd.read_csv(out)
    assert list(table.columns) == ["item", "label", "p_0", "p_1", "p_2"]
    assert (table[["p_0", "p_1", "p_2"]].sum(axis=1) - 1).abs().max() < 1e-9
    res = runner.invoke(main, ["aggregate", "--votes", str(votes)])
    assert res.output.splitlines()[0] == "item,label,tied"


@pytest.mark.parametrize(("ties", "accuracy", "n_ties"), [
    pytest.param(None, 0.91875, 65, id="snow2008_rte_default_first_tied_label"),
    pytest.param("first_seen", 0.9025, 65, id="snow2008_rte_source_md_first_seen"),
])
def test_aggregate_on_snow_rte_matches_source_md(runner, shared_data, ties, accuracy, n_ties):
    # SOURCE.md's 0.9025 breaks ties by the first-seen label; annokit's default (the first
    # tied label in label order, as `annokit stats`) gives 0.91875; both say which they used
    path = shared_data("snow2008_rte", "rte.standardized.tsv")
    extra = [] if ties is None else ["--ties", ties]
    res = runner.invoke(main, ["aggregate", "--votes", str(path), "--method", "mv", "--json",
                               *extra])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert (out["accuracy"], out["tie_policy"], out["n_ties"]) == (accuracy, ties or "first",
                                                                   n_ties)
    stats = json.loads(runner.invoke(main, ["stats", str(path), "--json", "--n-boot", "0",
                                            *extra]).output)
    assert stats["gold"]["majority_accuracy"] == accuracy
    assert stats["gold"]["tie_policy"] == stats["tie_policy"] == (ties or "first")


def test_errors_are_one_line_with_exit_1(runner, small, tmp_path, shared_data):
    votes, _gold = small
    res = runner.invoke(main, ["aggregate", "--votes", str(votes), "--out", str(tmp_path / "x.txt")])
    assert res.exit_code == 1
    assert res.output == "Error: x.txt: cannot write '.txt'; use .csv, .tsv or .parquet\n"
    res = runner.invoke(main, ["filter", "--votes", str(votes), "--method", "ds",
                               "--out", str(tmp_path / "k.xlsx"), "--audit", str(tmp_path / "a.json")])
    assert res.exit_code == 1
    assert res.output == ("Error: k.xlsx: cannot write '.xlsx'; use .csv, .tsv, .jsonl or "
                          ".parquet\n")
    res = runner.invoke(main, ["filter", "--votes", str(votes), "--method", "gold",
                               "--out", str(tmp_path / "k.csv"), "--audit", str(tmp_path / "a.json")])
    assert res.exit_code == 1
    assert res.output.startswith("Error: method 'gold' needs gold labels")
    chaos = shared_data("chaosnli", "chaosNLI_snli.jsonl")
    res = runner.invoke(main, ["annotators", "--votes", str(chaos)])
    assert res.exit_code == 1
    assert res.output.startswith("Error: annotator scoring needs annotator ids, but "
                                 "chaosNLI_snli.jsonl has none")


def test_usage_errors_exit_2(runner, small, tmp_path):
    votes, _ = small
    res = runner.invoke(main, ["aggregate", "--votes", str(votes), "--method", "kos"])
    assert res.exit_code == 2 and "Invalid value for '--method'" in res.output
    res = runner.invoke(main, ["filter", "--votes", str(votes), "--method", "ds"])
    assert res.exit_code == 2 and "Missing option '--out'" in res.output


@pytest.mark.parametrize("command", ["annotators", "filter", "aggregate"])
def test_commands_have_help(runner, command):
    res = runner.invoke(main, [command, "--help"])
    assert res.exit_code == 0 and "--votes" in res.output


GOLD_VOTES = "item,annotator,label\nq1,a,cat\nq1,b,dog\nq2,a,dog\nq2,b,dog\nq3,a,cat\nq3,b,cat\n"
# hand-typed gold as a spreadsheet exports it; q9 has no votes and names a label nobody used
GOLD_FILE = "item,gold\nq1,Cat\nq2, Dog\nq3,cat\nq9,fish\n"
GOLD_WARNINGS = (
    "Warning: g.csv: 2 item(s) have a gold label that is not among the votes' labels ['cat', "
    "'dog']: 'Cat' (1 item), ' Dog' (1 item); their gold is left out of accuracy; gold 'Cat' "
    "matches label 'cat' but for case; gold ' Dog' matches label 'dog' but for case and "
    "surrounding spaces (correct their spelling in the gold to match)\n"
    "Warning: g.csv: 1 gold row(s) name items without votes and were not used (e.g. 'q9')\n")


@pytest.fixture
def cased_gold(tmp_path):
    (tmp_path / "v.csv").write_text(GOLD_VOTES)
    (tmp_path / "g.csv").write_text(GOLD_FILE)
    return str(tmp_path / "v.csv"), str(tmp_path / "g.csv")


def test_aggregate_gold_never_adds_a_label_or_a_column(runner, cased_gold):
    votes, gold = cased_gold
    res = runner.invoke(main, ["aggregate", votes, "--gold", gold, "--soft"])
    assert res.exit_code == 0
    assert res.stdout == ("item,label,tied,p_cat,p_dog\nq1,cat,True,0.5,0.5\nq2,dog,False,0.0,1.0\n"
                          "q3,cat,False,1.0,0.0\n")
    assert res.stderr == GOLD_WARNINGS


def test_aggregate_states_the_gold_items_left_out(runner, cased_gold, tmp_path):
    votes, gold = cased_gold
    res = runner.invoke(main, ["aggregate", votes, "--gold", gold, "--json"])
    out = json.loads(res.stdout)
    assert (out["n_gold"], out["n_gold_unknown_label"], out["accuracy"]) == (1, 2, 1.0)
    res = runner.invoke(main, ["aggregate", votes, "--gold", gold, "--out",
                               str(tmp_path / "o.csv")])
    assert res.stdout == (f"mv: 3 items, accuracy 1.0000 on 1 of 3 gold items (2 gold labels not "
                          "among the votes' labels), ties: first (first tied label in label "
                          f"order); wrote {tmp_path / 'o.csv'} (CSV, 3 rows)\n")


def test_annotators_gold_states_the_gold_items_scored(runner, cased_gold):
    votes, gold = cased_gold
    res = runner.invoke(main, ["annotators", votes, "--gold", gold, "--method", "gold"])
    assert res.exit_code == 0 and res.stderr == GOLD_WARNINGS
    assert res.stdout.endswith("scored on 1 of 3 gold items (2 gold labels not among the votes' "
                               "labels)\n")
    out = json.loads(runner.invoke(main, ["annotators", votes, "--gold", gold, "--method", "gold",
                                          "--json"]).stdout)
    assert out["gold"] == {"n_items": 1, "n_unknown_label": 2}


def test_filter_gold_rule_when_no_gold_label_is_known(runner, cased_gold, tmp_path):
    votes, gold = cased_gold
    (tmp_path / "g2.csv").write_text("item,gold\nq1,Cat\nq2,DOG\n")
    res = runner.invoke(main, ["filter", votes, "--gold", str(tmp_path / "g2.csv"), "--method",
                               "gold", "--out", str(tmp_path / "k.csv"), "--audit",
                               str(tmp_path / "a.json")])
    assert res.exit_code == 1
    assert res.stderr.endswith(
        "Error: method 'gold' needs gold labels (a gold column, a gold file or gold=); none of the "
        "3 items has one among the votes' labels (2 item(s) have a gold label that is not)\n")


def test_aggregate_new_methods_ties_and_engine(dask_cluster, runner, small, tmp_path):
    votes, gold = small
    res = runner.invoke(main, ["aggregate", "--votes", str(votes), "--gold", str(gold),
                               "--method", "zbs", "--ties", "first_seen", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["tie_policy"] == "first_seen"
    res = runner.invoke(main, ["aggregate", "--votes", str(votes), "--method", "glad",
                               "--ties", "first"])
    assert res.exit_code == 2
    assert res.output.endswith("Error: --ties applies to mv, wmv, wawa and zbs, not --method "
                               "glad (its label is the most probable one in label order)\n")
    res = runner.invoke(main, ["aggregate", "--votes", str(votes), "--method", "wawa",
                               "--clamp-gold"])
    assert res.exit_code == 2
    assert res.output.endswith("Error: --clamp-gold applies to ds, onecoin and mace, not "
                               "--method wawa\n")
    res = runner.invoke(main, ["aggregate", "--votes", str(votes), "--method", "glad",
                               "--engine", "dask", "--out", str(tmp_path / "d")])
    assert res.exit_code == 2
    assert res.output.endswith("Error: --method glad runs in memory only: drop --engine dask\n")
@pytest.mark.parametrize("method, iterative", [("mv", False), ("wmv", False), ("ds", True)])
def test_aggregate_line_reports_iterations_only_for_iterative_methods(runner, small, tmp_path,
                                                                       method, iterative):
    out = tmp_path / f"{method}.csv"
    result = runner.invoke(main, ["aggregate", "--votes", str(small[0]), "--method", method,
                                  "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert ("iteration(s), converged" in result.stdout) is iterative
    assert ("ties: first" in result.stdout) is not iterative


def test_unbounded_threshold_help_shows_no_range(runner):
    for command in ("annotators", "filter"):
        text = runner.invoke(main, [command, "--help"]).output
        assert "[x<=None]" not in text and "x<=" not in text, command


@pytest.mark.parametrize("method", ["onecoin", "agreement", "ds"])
def test_no_annotator_with_too_few_votes_is_flagged_by_default(runner, shared_data, method):
    """On dog (109 annotators, 10 of them with one vote) no annotator with
    fewer than --min-annotator-votes (default 5) votes gets a verdict."""
    path = str(shared_data("dog", "answer.csv"))
    out = json.loads(runner.invoke(main, ["annotators", path, "--method", method, "--json"]).stdout)
    rows = out["annotators"]
    assert out["min_votes"] == 5
    assert out["n_too_few_votes"] == sum(r["n_votes"] < 5 for r in rows) == 18
    assert not any(r["flagged"] for r in rows if r["n_votes"] < 5)
    assert all(r["reason"] == f"too few votes ({r['n_votes']} < 5)" for r in rows
               if r["n_votes"] < 5)
    text = runner.invoke(main, ["annotators", path, "--method", method]).stdout.splitlines()
    assert text[-1].endswith("); 18 with too few votes for a verdict (fewer than 5: "
                             "--min-annotator-votes)")
    assert sum(line.endswith("-  too few votes") for line in text) == 18
    every = json.loads(runner.invoke(main, ["annotators", path, "--method", method,
                                            "--min-annotator-votes", "1", "--json"]).stdout)
    assert every["n_too_few_votes"] == 0 and every["n_flagged"] >= out["n_flagged"]


def test_annotators_pairs_table_json_and_out(runner, shared_data, tmp_path):
    """annotators --pairs [--min-shared N] [--out]: Cohen's kappa, percent agreement
    and shared items of every pair, the same rows as annokit.core.annotator_agreement."""
    from annokit.core.annotator_agreement import annotator_pairs

    path = shared_data("dog", "answer.csv")
    want = annotator_pairs(read_votes(path), min_shared=50)
    res = runner.invoke(main, ["annotators", str(path), "--pairs", "--min-shared", "50"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].split() == ["annotator_1", "annotator_2", "n_shared", "kappa", "agreement"]
    assert len(lines) == len(want) + 2
    assert lines[-1] == (f"{len(want)} pairs with at least 50 shared items (Cohen's kappa, "
                         f"weights none); {want.attrs['n_left_out']} pairs with fewer left out")
    doc = json.loads(runner.invoke(main, ["annotators", str(path), "--pairs", "--min-shared",
                                          "50", "--json"]).output)
    assert (doc["n_pairs"], doc["min_shared"], doc["weights"]) == (len(want), 50, "none")
    assert doc["pairs"][0] == {k: (v.item() if hasattr(v, "item") else v) for k, v in
                               want.drop(columns="weights").iloc[0].to_dict().items()}
    out = tmp_path / "pairs.parquet"
    res = runner.invoke(main, ["annotators", str(path), "--pairs", "--out", str(out)])
    assert res.exit_code == 0 and "wrote" in res.output
    assert len(pd.read_parquet(out)) == len(annotator_pairs(read_votes(path)))
    res = runner.invoke(main, ["annotators", str(path), "--min-shared", "3"])
    assert res.exit_code == 2 and "Error: --min-shared applies to --pairs" in res.output


def test_annotators_show_each_annotators_influence_on_alpha(runner, small):
    """annotators: alpha without each annotator and the change, in the table and the JSON."""
    votes, _ = small
    res = runner.invoke(main, ["annotators", "--votes", str(votes)])
    assert res.output.splitlines()[0].split()[:6] == ["annotator", "n_votes", "score", "alpha",
                                                      "w/o", "change"]
    doc = json.loads(runner.invoke(main, ["annotators", "--votes", str(votes), "--json"]).output)
    assert {"alpha_without", "alpha_change"} <= set(doc["annotators"][0])
