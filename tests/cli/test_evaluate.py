"""``annokit evaluate`` through click's CliRunner."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from annokit.cli import main
from annokit.metrics.registry import REGISTRY, available

#: Keys of ``--json`` documented in README.md (a public interface).
TOP_KEYS = ["n_items", "n_unmatched_predictions", "n_dropped_items", "dropped_item_ids", "labels",
            "task", "scale", "target", "positive_label", "n_bins", "tie_policy", "n_ties", "units",
            "lower_is_better", "metrics", "baselines", "metric_selection", "metric_names"]
#: ``--json`` lists exactly the registered metrics (records always give soft and hard labels).
REQUIRED_METRICS = list(available(True, True, n_labels=2))  # two labels: the binary metrics too


def run(*args):
    return CliRunner().invoke(main, ["evaluate", *map(str, args)])


@pytest.fixture
def small(tmp_path):
    votes = tmp_path / "votes.csv"
    votes.write_text("item,annotator,label\n"
                     "q1,a,yes\nq1,b,yes\nq1,c,no\n"
                     "q2,a,no\nq2,b,no\nq2,c,no\n"
                     "q3,a,yes\nq3,b,no\nq3,c,no\n")
    preds = tmp_path / "preds.jsonl"
    preds.write_text('{"item": "q1", "probs": [0.3, 0.7]}\n'   # columns: no, yes
                     '{"item": "q2", "probs": [0.9, 0.1]}\n'
                     '{"item": "q3", "probs": [0.6, 0.4]}\n'
                     '{"item": "q9", "probs": [0.5, 0.5]}\n')
    return votes, preds


def test_json_output_keys_and_values(small):
    votes, preds = small
    result = run("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert list(out) == TOP_KEYS and "ci" not in out and "temperature" not in out
    assert list(out["metrics"]) == REQUIRED_METRICS
    assert out["units"] == {name: REGISTRY[name].unit for name in REQUIRED_METRICS}
    assert out["lower_is_better"] == {name: REGISTRY[name].lower_is_better
                                      for name in REQUIRED_METRICS}
    assert out["n_items"] == 3 and out["n_unmatched_predictions"] == 1
    assert out["n_dropped_items"] == 0 and out["dropped_item_ids"] == []
    assert out["labels"] == ["no", "yes"]  # the votes' label order (natural sort)
    assert out["metrics"]["accuracy"] == 1.0
    assert out["metrics"]["dist_ce"] == pytest.approx((abs(0.3 - 1 / 3) + 0.1 + abs(0.6 - 2 / 3)) / 3)
    assert out["units"]["ent_ce"] == "nats"
    assert out["baselines"]["oracle"]["dist_ce"] == 0.0
    assert result.stderr == ""


def test_table_output(small):
    votes, preds = small
    result = run("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "items: 3   labels: no, yes (nominal)   bins: 10   positive class: yes"
    assert lines[1].startswith("unmatched prediction rows (ignored): 1   dropped vote items: 0")
    assert any(line.startswith("accuracy") and "1.0000" in line for line in lines)
    assert any(line.startswith("ent_ce ") and line.split()[-2:] == ["nats", "lower"]
               for line in lines)
    # the direction column the report has, in words
    assert any(line.startswith("ent_ce_signed ") and line.endswith("nats                  near 0")
               for line in lines)
    assert any(line.startswith("accuracy ") and line.endswith(" higher") for line in lines)


def test_per_item_csv(small, tmp_path):
    import pandas as pd

    votes, preds = small
    out = tmp_path / "items.csv"
    result = run("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes", "--per-item",
                 out, "--json")
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out)
    assert frame["item"].tolist() == ["q1", "q2", "q3"]
    per_item = [name for name in REQUIRED_METRICS if REGISTRY[name].per_item is not None]
    assert list(frame.columns) == ["item", "majority", "is_tied", *per_item]
    metrics = json.loads(result.stdout)["metrics"]
    for name in per_item:  # each column's mean is the metric
        assert frame[name].mean() == pytest.approx(metrics[name], abs=1e-12), name


def test_bootstrap_json_has_intervals(small):
    votes, preds = small
    args = ("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes", "--json",
            "--n-boot", "50", "--seed", "3")
    first, second = run(*args), run(*args)
    assert first.exit_code == 0, first.output
    assert first.stdout == second.stdout
    out = json.loads(first.stdout)
    assert list(out["ci"]) == REQUIRED_METRICS
    for name, ci in out["ci"].items():
        assert ci["method"] == REGISTRY[name].interval
        if ci["method"] == "none":  # the MCEs: no honest interval, and why
            assert ci["low"] is None and ci["high"] is None and ci["reason"]
            continue
        assert ci["low"] <= out["metrics"][name] + 1e-12
        assert ci["low"] <= ci["high"]
    assert out["bootstrap"] == {"n_boot": 50, "confidence": 0.95, "seed": 3}
    table = run(*args[:-5], "--n-boot", "20")
    assert "95% CI" in table.stdout
    old = run(*args[:-5], "--bootstrap", "20")
    assert old.exit_code == 2 and "No such option '--bootstrap'" in old.stderr


def test_by_agreement(small):
    votes, preds = small
    args = ("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes", "--by",
            "agreement")
    out = json.loads(run(*args, "--json").stdout)
    groups = out["groups"]
    assert sum(g["n_items"] for g in groups) == 3
    assert list(groups[0]) == ["group", "n_items", "entropy_low", "entropy_high", "metrics"]
    assert list(groups[0]["metrics"]) == REQUIRED_METRICS
    table = run(*args).stdout.splitlines()
    assert any(line.startswith("by agreement (bins of human entropy, nats): ") for line in table)


def test_temperature_options(small):
    votes, preds = small
    base = ("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes", "--json")
    out = json.loads(run(*base, "--temperature", "2").stdout)
    assert out["metrics"]["temperature"] == 2.0
    assert out["temperature"] == {"value": 2.0, "mode": "fixed"}
    result = run(*base, "--oracle-temperature", "--temperature-objective", "nll_soft")
    out = json.loads(result.stdout)
    assert out["temperature"]["mode"] == "oracle" and out["temperature"]["n_overlap_items"] == 3
    assert out["temperature"]["objective"] == "nll_soft"
    table = run(*base[:-1], "--temperature", "2")
    assert "temperature: 2 (fixed)" in table.stdout


def test_fit_temperature_on_dev_file(small, tmp_path):
    votes, _ = small
    dev = tmp_path / "dev.jsonl"
    dev.write_text('{"item": "q1", "probs": [0.1, 0.9]}\n{"item": "q2", "probs": [0.95, 0.05]}\n')
    test = tmp_path / "test.jsonl"
    test.write_text('{"item": "q3", "probs": [0.8, 0.2]}\n')
    result = run("--votes", votes, "--predictions", test, "--pred-labels", "no,yes",
                 "--on-missing", "drop", "--fit-temperature-on", dev, "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["temperature"]["mode"] == "fit" and out["temperature"]["n_fit_items"] == 2
    assert out["temperature"]["n_overlap_items"] == 0
    assert out["n_items"] == 1 and out["dropped_item_ids"] == ["q1", "q2"]
    assert result.stderr == ("Warning: 2 of 3 vote items have no prediction, e.g. ['q1', 'q2']; "
                             "they are dropped and 1 items are kept\n")
    overlap = run("--votes", votes, "--predictions", test, "--pred-labels", "no,yes",
                  "--on-missing", "drop", "--fit-temperature-on", test, "--json")
    assert "Warning: 1 items used to fit the temperature are also evaluated" in overlap.stderr


def test_missing_items_is_one_line_exit_1(small, tmp_path):
    votes, _ = small
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"item": "q2", "probs": [0.9, 0.1]}\n')
    result = run("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes")
    assert result.exit_code == 1
    assert result.stderr == ("Error: 2 of 3 vote items have no prediction, e.g. ['q1', 'q3']; pass "
                             "--on-missing drop to evaluate only the items with predictions "
                             "(Python: on_missing='drop')\n")


def test_mismatched_labels_exit_1(small):
    votes, preds = small
    result = run("--votes", votes, "--predictions", preds, "--pred-labels", "no,maybe")
    assert result.exit_code == 1
    assert result.stderr == ("Error: prediction labels ['no', 'maybe'] do not match the votes' "
                             "labels ['no', 'yes'] (names or aliases ['no', 'yes']): unknown "
                             "['maybe']; missing ['yes']; name each prediction column's class, "
                             "in file order, with --pred-labels (Python: pred_labels=)\n")


def test_bad_prediction_row_exit_1(small, tmp_path):
    votes, _ = small
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"item": "q1", "probs": [0.3, 0.8]}\n')
    result = run("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes")
    assert result.exit_code == 1
    assert result.stderr == (f"Error: line 1 of {preds} (item 'q1'): probs sum to 1.1, not 1 within "
                             "0.0001 (1 such row(s)); pass --renormalize to divide each row "
                             "by its sum (Python: renormalize=True)\n")
    ok = run("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes", "--renormalize",
             "--on-missing", "drop", "--json")
    assert ok.exit_code == 0 and json.loads(ok.stdout)["n_items"] == 1


def test_missing_prediction_file_exit_1(small, tmp_path):
    votes, _ = small
    result = run("--votes", votes, "--predictions", tmp_path / "none.jsonl", "--pred-labels", "a,b")
    assert result.exit_code == 1
    assert result.stderr == f"Error: prediction file not found: {tmp_path / 'none.jsonl'}\n"


def test_usage_errors_exit_2(small):
    votes, preds = small
    both = run("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes",
               "--temperature", "2", "--oracle-temperature")
    assert both.exit_code == 2
    assert both.stderr.splitlines()[-1] == ("Error: use only one of --temperature, "
                                            "--fit-temperature-on and --oracle-temperature")
    empty = run("--votes", votes, "--predictions", preds, "--pred-labels", "no,,yes")
    assert empty.exit_code == 2
    assert empty.stderr.splitlines()[-1] == ("Error: Invalid value for --pred-labels: empty label "
                                             "name in 'no,,yes'; give names separated by commas, "
                                             "e.g. e,c,n")
    bad = run("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes",
              "--oracle-temperature", "--temperature-objective", "ece")
    assert bad.exit_code == 2
    assert bad.stderr.splitlines()[-1] == ("Error: Invalid value for '--temperature-objective': "
                                           "'ece' is not one of 'nll_majority', 'nll_soft', "
                                           "'ece_grid'.")
    missing = run("--votes", votes, "--pred-labels", "no,yes")
    assert missing.exit_code == 2 and "Missing option '--predictions'" in missing.stderr


def test_chaosnli_with_baan_predictions(shared_data):
    votes = shared_data("chaosnli", "chaosNLI_snli.jsonl")
    d = shared_data("chaosnli_predictions_baan2022")
    result = run("--votes", votes, "--predictions", d / "SNLI_dev_roberta-base_0.json",
                 "--predictions", d / "SNLI_test_roberta-base_0.json", "--pred-labels", "e,c,n",
                 "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["n_items"] == 1514 and out["n_unmatched_predictions"] == 2 * 4921 - 1514
    assert out["n_ties"] == 14 and out["labels"] == ["entailment", "neutral", "contradiction"]
    assert result.stderr == ("Warning: 14 of 1514 items have a tied human majority; tie policy "
                             "'first' takes the first tied label in label order\n")
    # seed 0 alone: Table 1's RoBERTa column is the mean of three seeds
    assert out["metrics"]["accuracy"] == pytest.approx(0.74, abs=0.01)
    only_test = run("--votes", votes, "--predictions", d / "SNLI_test_roberta-base_0.json",
                    "--pred-labels", "e,c,n")
    assert only_test.exit_code == 1
    assert only_test.stderr.startswith("Error: 729 of 1514 vote items have no prediction, e.g. [")


def test_chaosnli_official_format_with_model_option(shared_data):
    votes = shared_data("chaosnli", "chaosNLI_mnli_m.jsonl")
    preds = shared_data("chaosnli_prediction_samples", "mnli_random_baseline.json")
    result = run("--votes", votes, "--predictions", preds, "--pred-labels", "e,n,c", "--model",
                 "random_baseline", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["n_items"] == 1599 and out["n_unmatched_predictions"] == 0


def test_chaosnli_swapped_label_order_hint_and_warning(shared_data):
    """The hint names the order that fits (e,c,n for the Baan et al. files, not the
    votes' e,n,c), and a below-chance order is warned about on one line."""
    votes = shared_data("chaosnli", "chaosNLI_snli.jsonl")
    d = shared_data("chaosnli_predictions_baan2022")
    files = ["--predictions", d / "SNLI_dev_roberta-base_0.json",
             "--predictions", d / "SNLI_test_roberta-base_0.json"]
    hint = run("--votes", votes, *files)
    assert hint.exit_code == 1
    assert hint.stderr.endswith("the order that agrees best with the human majority is e,c,n "
                                "(accuracy 0.741 on 1500 items without a tied majority)\n")
    swapped = run("--votes", votes, *files, "--pred-labels", "e,n,c", "--json")
    assert swapped.exit_code == 0
    assert swapped.stderr.splitlines()[0] == (
        "Warning: under the label order e,n,c the model's accuracy against the human majority "
        "is 0.318, below chance (0.333) on 1500 items without a tied majority; the order e,c,n "
        "would score 0.741: check pred_labels (CLI: --pred-labels)")


@pytest.mark.parametrize("args, message", [
    (["--temperature", "nan"], "Invalid value for '--temperature': 'nan' is not a finite number."),
    (["--temperature", "0"], "Invalid value for '--temperature': 0.0 is not in the range x>0."),
    (["--seed", "-3"], "Invalid value for '--seed': -3 is not in the range x>=0."),
    (["--n-boot", "10000000000"], ("Invalid value for '--n-boot': 10000000000 would need about "
                                   "2.3 TiB (replicate values of every metric), above the limit "
                                   "of 2.0 GiB; choose a smaller value")),
    (["--temperature-objective", "nll_soft"],
     "Error: --temperature-objective needs --fit-temperature-on or --oracle-temperature"),
])
def test_option_values_refused_before_work(small, args, message):
    votes, preds = small
    result = run("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes", *args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_positional_votes_is_the_same_as_the_option(small):
    votes, preds = small
    a = run(votes, "--predictions", preds, "--pred-labels", "no,yes", "--json")
    b = run("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes", "--json")
    assert a.exit_code == 0 and a.stdout == b.stdout
    both = run(votes, "--votes", votes, "--predictions", preds, "--pred-labels", "no,yes")
    assert both.exit_code == 2
    assert both.stderr.splitlines()[-1] == ("Error: give the votes once: --votes PATH or a "
                                            "positional VOTES path, not both")


# --- --metrics NAME,...|all ---------------------------------------------------------------------

def test_metrics_by_name_lewidi_2023_scores_on_nominal_labels(small):
    """LeWiDi 2023 (Leonardelli et al.) scores nominal soft labels with cross-entropy, LeWiDi 2025
    with the Manhattan distance: both asked for by name on nominal labels."""
    votes, preds = small
    result = run("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes",
                 "--metrics", "lewidi_ce,manhattan", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["metric_selection"] == "names"
    assert out["metric_names"] == list(out["metrics"]) == ["manhattan", "lewidi_ce"]  # registry order
    assert set(out["baselines"]["chance"]) == {"manhattan", "lewidi_ce"}
    table = run("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes",
                "--metrics", "manhattan").stdout
    assert "manhattan" in table and "accuracy" not in table


def test_metrics_all_and_default(small):
    votes, preds = small
    args = ("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes", "--json")
    default = json.loads(run(*args).stdout)
    everything = json.loads(run(*args, "--metrics", "all").stdout)
    assert default["metric_selection"] == "default" and everything["metric_selection"] == "all"
    assert default["metric_names"] == REQUIRED_METRICS
    assert everything["metric_names"] == list(available(True, True, n_labels=2, listing=False))
    assert {"manhattan", "lewidi_ce"} <= set(everything["metrics"]) - set(default["metrics"])
    assert "wasserstein" not in everything["metrics"]  # nominal labels: no order


@pytest.mark.parametrize("value, code, message", [
    ("manhatan", 2, ("Error: Invalid value for '--metrics': unknown metric 'manhatan'; did you "
                    "mean manhattan? registered: accuracy, ece,")),
    ("accuracy,,ece", 2, ("Error: Invalid value for '--metrics': empty metric name in "
                         "'accuracy,,ece'; give registry names separated by commas, e.g. "
                         "accuracy,manhattan,lewidi_ce, or all\n")),
    ("wasserstein", 1, ("Error: --metrics: metric 'wasserstein' applies to ordinal, interval, ratio "
                       "single-label data; the data are nominal single-label with 2 labels (leave "
                       "it out of --metrics, or declare the labels' scale with --scale)\n")),
    ("ece_multilabel", 1, ("Error: --metrics: metric 'ece_multilabel' applies to nominal "
                          "multi-label data; the data are nominal single-label with 2 labels")),
])
def test_metrics_refused_with_one_line(small, value, code, message):
    votes, preds = small
    result = run("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes",
                 "--metrics", value)
    assert result.exit_code == code
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_chance_row_accuracy_is_the_warnings_chance(small):
    """The chance row's accuracy is 1 / n_labels, the value the below-chance warning uses."""
    votes, preds = small
    out = json.loads(run("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes",
                         "--json").stdout)
    assert out["baselines"]["chance"]["accuracy"] == 0.5
    table = run("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes").stdout
    assert [line.split()[2] for line in table.splitlines() if line.startswith("accuracy")] == [
        "0.5000"]


def test_target_population_option_and_json_key(small):
    """``--target population`` (annokit.metrics.population): the JSON says so and lists the
    binned metrics it does not compute; naming one of them is refused in one line."""
    votes, preds = small
    result = run("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes",
                 "--target", "population", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["target"] == "population" and "ece" in out["not_computed"]
    assert "ece" not in out["metrics"] and "jsd" in out["metrics"]
    refused = run("--votes", votes, "--predictions", preds, "--pred-labels", "no,yes",
                  "--target", "population", "--metrics", "ece")
    assert refused.exit_code == 1
    assert "target='population' cannot estimate ece (not a mean" in refused.output
