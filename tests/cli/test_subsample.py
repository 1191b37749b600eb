"""``annokit subsample`` through click's CliRunner."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from annokit.cli import main
from annokit.subsample import CURVE_KEYS

TOP_KEYS = {"curve", "recommended_k", "n_items", "reps", "seed"}


def run(*args):
    return CliRunner().invoke(main, ["subsample", *args])


@pytest.fixture
def votes_csv(tmp_path):
    rows = ["item,annotator,label"]
    labels = "xxyxyyxxzx"
    for i in range(8):
        for a in range(6):
            rows.append(f"q{i},w{a},{labels[(i + a * (i % 3)) % 10]}")
    path = tmp_path / "votes.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_json_has_the_documented_keys_and_stdout_is_pure_json(votes_csv):
    result = run("--votes", str(votes_csv), "--k", "1,2,3", "--reps", "20", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert TOP_KEYS <= set(out)
    assert [set(r) for r in out["curve"]] == [set(CURVE_KEYS)] * 3
    assert [r["k"] for r in out["curve"]] == [1, 2, 3]
    assert out["n_items"] == 8 and out["reps"] == 20 and out["seed"] == 0
    assert out["recommendation_source"] in ("observed", "extrapolated", "not reached")


def test_same_seed_same_output_other_seed_differs(votes_csv):
    args = ("--votes", str(votes_csv), "--k", "1,3", "--reps", "20", "--json")
    a = run(*args, "--seed", "5").stdout
    assert a == run(*args, "--seed", "5").stdout
    assert a == run(*args, "--seed", "5", "--jobs", "2").stdout
    assert a != run(*args, "--seed", "6").stdout


def test_table_output_and_recommendation_line(votes_csv):
    result = run("--votes", str(votes_csv), "--k", "1,3", "--reps", "10")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == ("8 items, 6 votes per item, 10 repetitions, "
                                              "seed 0")
    assert "tvd_mean" in result.stdout and "recommended k = " in result.stdout


def test_plot_is_written_atomically(votes_csv, tmp_path):
    target = tmp_path / "curve.png"
    result = run("--votes", str(votes_csv), "--k", "1,2,3", "--reps", "10", "--plot", str(target))
    assert result.exit_code == 0, result.output
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["curve.png", "votes.csv"]


@pytest.mark.parametrize(("suffix", "magic"), [("svg", b"<?xml"), ("pdf", b"%PDF")])
def test_plot_is_byte_identical_for_the_same_seed(votes_csv, tmp_path, suffix, magic):
    args = ("--votes", str(votes_csv), "--k", "1,2,3", "--reps", "10", "--seed", "4")
    a, b = tmp_path / f"a.{suffix}", tmp_path / f"b.{suffix}"
    assert run(*args, "--plot", str(a)).exit_code == 0
    assert run(*args, "--plot", str(b)).exit_code == 0
    assert a.read_bytes().startswith(magic)
    assert a.read_bytes() == b.read_bytes()
    if suffix == "svg":
        assert b"<dc:date>" not in a.read_bytes()
    else:
        assert b"/CreationDate" not in a.read_bytes()


def test_plot_errors_are_one_line(votes_csv, tmp_path):
    result = run("--votes", str(votes_csv), "--k", "1", "--reps", "2", "--plot",
                 str(tmp_path / "curve.txt"))
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {tmp_path / 'curve.txt'}: unsupported image type "
                             "'txt'; use .png, .svg or .pdf\n")
    missing = tmp_path / "nope" / "c.png"
    result = run("--votes", str(votes_csv), "--k", "1", "--reps", "2", "--plot", str(missing))
    assert result.exit_code == 1
    assert result.stderr == f"Error: {missing}: directory {missing.parent} does not exist\n"


def test_short_items_error_then_skip(votes_csv):
    result = run("--votes", str(votes_csv), "--k", "1,7", "--reps", "5")  # default --short skip
    assert result.exit_code == 1
    assert result.stderr == ("Error: no item has at least k=7 votes (most votes on an item: 6); "
                             "choose ks up to 6 (--k)\n")
    result = run("--votes", str(votes_csv), "--k", "1,7", "--reps", "5", "--short", "error")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: 8 item(s) have fewer than k=7 votes (fewest: 6), e.g. ['q0', 'q1', 'q2', 'q3', "
        "'q4' and 3 more]; pass short='skip' (--short skip) to leave them out or short='keep' "
        "(--short keep) to use all their votes\n")
    result = run("--votes", str(votes_csv), "--k", "1,7", "--reps", "5", "--short", "keep",
                 "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["n_short"] == [0, 8] and out["curve"][1]["tvd_mean"] == 0
    assert result.stderr == (
        "Warning: 8 item(s) have fewer than k=7 votes (fewest: 6), e.g. ['q0', 'q1', 'q2', "
        "'q3', 'q4' and 3 more]; kept with all their votes (short='keep', --short keep)\n")


@pytest.mark.parametrize("value", ["1,a", "0,2", ""])
def test_bad_k_is_a_usage_error(votes_csv, value):
    result = run("--votes", str(votes_csv), "--k", value)
    assert result.exit_code == 2
    assert "expected comma-separated positive integers" in result.stderr


def test_help_lists_the_options():
    result = CliRunner().invoke(main, ["subsample", "--help"])
    assert result.exit_code == 0
    for option in ("--votes", "--format", "--k", "--reps", "--seed", "--epsilon", "--json",
                   "--plot", "--short"):
        assert option in result.output


def test_chaosnli_progress_bar_goes_to_stderr(shared_data, monkeypatch):
    """Forced on (as on a terminal) and shown at once: the bar is on stderr, JSON on stdout."""
    from annokit.core import progress as bars

    monkeypatch.setattr(bars, "DEFAULT_DELAY", 0.0)
    token = bars.set_progress(True)
    try:
        path = str(shared_data("chaosnli", "chaosNLI_snli.jsonl"))
        result = run("--votes", path, "--k", "1,20", "--reps", "100", "--json", "--target",
                     "pool")
    finally:
        bars._ENABLED.reset(token)
    assert result.exit_code == 0, result.output
    assert "subsampling" in result.stderr and "subsampling" not in result.stdout
    out = json.loads(result.stdout)
    assert out["n_items"] == 1514
    assert 0.065 < out["curve"][1]["tvd_mean"] < 0.075
    assert out["target"] == "pool"
    assert out["recommendation_source"] == "observed" and 20 < out["recommended_k"] <= 50


def test_mnli_target_population_vs_pool(shared_data):
    """Against the pool of 100 votes MNLI needs k = 44; against the population the votes are a
    sample of (Dirichlet-multinomial extrapolation) about 78 (79 measured when it was written)."""
    path = str(shared_data("chaosnli", "chaosNLI_mnli_m.jsonl"))
    pool = json.loads(run("--votes", path, "--reps", "50", "--json", "--target", "pool").stdout)
    assert (pool["target"], pool["recommendation_source"]) == ("pool", "observed")
    assert pool["recommended_k"] == 44 and pool["epsilon"] == 0.05
    result = run(path, "--reps", "50")  # population is the default; positional VOTES
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[-2] == "target: population (tolerance: expected TVD < 0.05)"
    assert lines[-1].startswith("recommended k = 78 (interval 7")
    assert lines[-1].endswith("for expected TVD < 0.05; extrapolated, against the population "
                              "distribution (Dirichlet-multinomial fit)")


@pytest.mark.parametrize("args, message", [
    (["--k", "1,,2"], "Invalid value for '--k': empty element in '1,,2'"),
    (["--k", "1,1000000"], "Invalid value for '--k': k must be at most 100,000; got 1000000"),
    (["--seed", "-1"], "Invalid value for '--seed': -1 is not in the range x>=0."),
    (["--epsilon", "nan"], "Invalid value for '--epsilon': 'nan' is not a finite number."),
    (["--target", "crowd"], ("Invalid value for '--target': 'crowd' is not one of "
                             "'population', 'pool'.")),
    (["--reps", "100000000000"], "Invalid value for '--reps': 100000000000 would need about"),
])
def test_option_values_refused_before_work(votes_csv, args, message):
    result = run("--votes", str(votes_csv), *args)
    assert result.exit_code == 2
    assert message in result.stderr


# --- one answer per question: default options, the same recommendation as the report ----------

@pytest.mark.parametrize("path, first_line", [
    ("dog/answer.csv", "807 items, 10 votes per item, 200 repetitions, seed 0"),
    ("face/answer.csv", "584 items, 7-9 votes per item, 200 repetitions, seed 0"),
    ("snow2008_rte/rte.standardized.tsv", "800 items, 10 votes per item, 200 repetitions, seed 0"),
])
def test_default_options_work_on_ten_vote_crowd_sets(shared_data, path, first_line):
    """Zheng et al. (2017) crowd sets (dog, face) and Snow et al. (2008) RTE: 10 votes or fewer."""
    result = run(str(shared_data(*path.split("/"))))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == first_line
    assert lines[1].startswith("curve: k-vote subsamples against the pool")  # the pool is named
    ks = [int(line.split()[0]) for line in lines[3:-3]]
    assert lines[-3] == ("units: tvd probability, jsd sqrt(nats), kl nats, majority_agreement rate, "
                         "entropy_bias nats, majority_tie_rate rate")
    assert ks == [1, 2, 5, int(first_line.split()[2].split("-")[-1])]  # 1, 2, 5 .. most votes
    assert lines[-2] == "target: population (tolerance: expected TVD < 0.05)"
    assert lines[-1].startswith("recommended k = ")


def test_default_grid_skips_and_counts_short_items(tmp_path):
    rows = ["item,annotator,label"] + [f"q{i},w{a},{'xy'[(i + a) % 2]}"
                                       for i in range(6) for a in range(4 + (i == 0) * 3)]
    path = tmp_path / "votes.csv"
    path.write_text("\n".join(rows) + "\n")
    result = run(str(path), "--reps", "10", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert [r["k"] for r in out["curve"]] == [1, 2, 5, 7] and out["n_short"] == [0, 0, 5, 5]
    assert out["short"] == "skip"
    assert result.stderr == ("Warning: 5 item(s) have fewer than k=7 votes (fewest: 4), e.g. "
                             "['q1', 'q2', 'q3', 'q4', 'q5']; left out at that k "
                             "(short='skip', --short skip)\n")


def _report_recommendation(votes, predictions, out, *args):
    result = CliRunner().invoke(main, ["report", "--votes", str(votes), "--model",
                                       f"m={predictions}", "--quiet", "--n-boot", "0",
                                       "--no-ceiling", "--pred-labels", "x,y,z", "--out", str(out),
                                       *args])
    assert result.exit_code == 0, result.output
    return json.loads((out / "report.json").read_text())["subsampling_recommendation"]


@pytest.mark.parametrize("target", ["population", "pool"])
def test_report_and_subsample_recommend_the_same_k(votes_csv, tmp_path, target):
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(json.dumps({"item": f"q{i}", "probs": [0.5, 0.3, 0.2]}) + "\n"
                                   for i in range(8)))
    extra = ["--target", target, "--epsilon", "0.2"]
    sub = json.loads(run(str(votes_csv), "--k", "1,2,3", "--json", *extra).stdout)
    rep = _report_recommendation(votes_csv, predictions, tmp_path / "o", "--subsample", "1,2,3",
                                 *extra)
    assert (rep["k"], rep["k_low"], rep["k_high"], rep["kind"], rep["epsilon"]) == (
        sub["recommended_k"], sub["recommended_k_low"], sub["recommended_k_high"], target, 0.2)


def test_report_and_subsample_agree_on_chaosnli_snli(shared_data, tmp_path):
    """ChaosNLI-SNLI (Nie et al. 2020): one answer, k = 51 (48-53) against the population."""
    votes = shared_data("chaosnli", "chaosNLI_snli.jsonl")
    preds = shared_data("chaosnli_predictions_baan2022", "SNLI_dev_roberta-base_0.json").parent
    sub = json.loads(run(str(votes), "--k", "1,2,5,10,20,50", "--json").stdout)
    result = CliRunner().invoke(main, [
        "report", "--votes", str(votes), "--model",
        f"R={preds / 'SNLI_dev_roberta-base_0.json'},{preds / 'SNLI_test_roberta-base_0.json'}",
        "--pred-labels", "e,c,n", "--quiet", "--n-boot", "0", "--no-ceiling", "--bins", "1",
        "--subsample", "1,2,5,10,20,50", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    rep = json.loads((tmp_path / "o" / "report.json").read_text())["subsampling_recommendation"]
    assert (rep["k"], rep["k_low"], rep["k_high"]) == (
        sub["recommended_k"], sub["recommended_k_low"], sub["recommended_k_high"]) == (51, 48, 53)


def test_report_epsilon_and_target_need_subsample(votes_csv, tmp_path):
    result = CliRunner().invoke(main, ["report", "--votes", str(votes_csv), "--model", "m=x.jsonl",
                                       "--target", "pool", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert result.stderr.endswith("Error: --target applies to the recommended k: add --subsample\n")


@pytest.mark.parametrize(("folder", "name", "half"), [("dog", "answer.csv", 5),
                                                      ("snow2008_rte", "rte.standardized.tsv", 5)])
def test_target_pool_answers_for_the_pool_or_says_why(shared_data, folder, name, half):
    """--target pool on a crowd set with 10 votes per item no longer prints a k
    against the population; the curve's columns name the pool they measure against."""
    path = str(shared_data(folder, name))
    result = run("--votes", path, "--reps", "20", "--target", "pool")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1] == ("curve: k-vote subsamples against the pool (all votes of each item; "
                        "pool_* columns)")
    assert lines[2].split()[:4] == ["k", "pool_tvd_mean", "pool_tvd_low", "pool_tvd_high"]
    assert "population" not in lines[-1].split(";")[0]
    assert lines[-1] == (
        f"no k up to {half} reaches expected TVD < 0.05 (not reached; target: full data (10+ "
        f"votes per item; k up to {half} considered)); the pool target is the votes collected: "
        "it cannot be extrapolated beyond the votes an item has (a k-vote subsample is compared "
        f"with them up to half the fewest, k = {half}); for more votes per item than that use "
        "--target population (Python: target='population')")
    out = json.loads(run("--votes", path, "--reps", "20", "--target", "pool", "--json").stdout)
    assert (out["target"], out["recommended_k"], out["curve_target"]) == ("pool", None, "pool")
    assert out["recommendation_note"].startswith("the pool target is the votes collected")


def test_bins_option_sets_the_by_bin_rows(shared_data):
    """by_bin defaults to evaluate's 5 agreement bins; --bins changes it."""
    path = str(shared_data("dog", "answer.csv"))
    default = json.loads(run("--votes", path, "--reps", "5", "--k", "1", "--json").stdout)
    three = json.loads(run("--votes", path, "--reps", "5", "--k", "1", "--json",
                           "--bins", "3").stdout)
    assert len({r["bin"] for r in default["by_bin"]}) <= 5
    assert len({r["bin"] for r in three["by_bin"]}) <= 3 < len({r["bin"] for r in
                                                                  default["by_bin"]})
