"""Safe outputs for every command: inputs never overwritten, clean one-line errors, no half files."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from annokit.cli import main
from annokit.io import atomic as atomic_mod

ROOT = Path(__file__).resolve().parents[2]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _one_line_error(res, pattern: str) -> None:
    import re

    assert res.exit_code == 1, res.output
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr, res.stderr
    assert re.search(pattern, res.stderr), res.stderr


@pytest.fixture
def files(tmp_path):
    rows = []
    for i in range(12):
        for a in ("a1", "a2", "a3", "a4", "s"):
            good = "x" if i % 3 else "y"
            rows.append((f"q{i}", a, good if a != "s" else ("y" if i % 2 else "x")))
    votes = tmp_path / "votes.csv"
    pd.DataFrame(rows, columns=["item", "annotator", "label"]).to_csv(votes, index=False)
    gold = tmp_path / "gold.csv"
    pd.DataFrame({"item": [f"q{i}" for i in range(12)],
                  "gold": ["x" if i % 3 else "y" for i in range(12)]}).to_csv(gold, index=False)
    preds = tmp_path / "predictions.jsonl"
    preds.write_text("".join(f'{{"item": "q{i}", "probs": [0.7, 0.3]}}\n' for i in range(12)))
    return {"votes": votes, "gold": gold, "preds": preds, "dir": tmp_path}


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


# --- an output that names an input is refused before any work --------------------------------

@pytest.mark.parametrize("case", ["filter_out", "filter_audit", "aggregate_gold", "per_item",
                                  "symlink", "report_dir", "plot"])
def test_output_naming_an_input_is_refused_and_the_input_kept(files, case):
    v, g, p, d = files["votes"], files["gold"], files["preds"], files["dir"]
    if case == "symlink":
        (d / "alias.csv").symlink_to(v)
    if case == "report_dir":
        (d / "rep").mkdir()
        (d / "rep" / "report.json").write_text("{}")
        (d / "rep" / "votes.csv").write_bytes(v.read_bytes())
    before = _snapshot(d)
    args, pattern = {
        "filter_out": (["filter", "--votes", v, "--method", "agreement", "--out", v,
                        "--audit", d / "audit.json"], r"--out .*votes\.csv is the input --votes"),
        "filter_audit": (["filter", "--votes", v, "--gold", g, "--method", "agreement",
                          "--out", d / "kept.csv", "--audit", g],
                         r"--audit .*gold\.csv is the input --gold"),
        "aggregate_gold": (["aggregate", "--votes", v, "--gold", g, "--out", g],
                           r"--out .*gold\.csv is the input --gold"),
        "per_item": (["evaluate", "--votes", v, "--predictions", p, "--pred-labels", "x,y",
                      "--per-item", p], (r"--per-item .*predictions\.jsonl is the input "
                                        "--predictions")),
        "symlink": (["aggregate", "--votes", v, "--out", d / "alias.csv"],
                    r"--out .*alias\.csv is the input --votes"),
        "report_dir": (["report", "--votes", d / "rep" / "votes.csv", "--model", f"m={p}",
                        "--pred-labels", "x,y", "--n-boot", 0, "--out", d / "rep", "--quiet"],
                       r"--out .*rep holds the input --votes"),
        "plot": (["subsample", "--votes", v, "--k", "1,2", "--plot", d / "votes.csv.png"], None),
    }[case]
    if case == "plot":  # a distinct image path is fine; the image naming the input is refused
        args[-1] = v.with_suffix(".svg")
        v.with_suffix(".svg").write_bytes(b"<svg/>")
        args[2] = v.with_suffix(".svg")
        pattern = r"--plot .*votes\.svg is the input --votes"
        before = _snapshot(d)
    res = run(*args)
    _one_line_error(res, pattern + r".*refusing to overwrite an input")
    assert _snapshot(d) == before
    if case == "report_dir":
        assert (d / "rep" / "votes.csv").exists()


# --- missing directory for every writer -------------------------------------------------------

@pytest.mark.parametrize("case", ["filter_out", "filter_audit", "aggregate", "per_item", "plot",
                                  "report", "demo"])
def test_missing_directory_is_one_line_for_every_writer(files, case):
    v, p, d = files["votes"], files["preds"], files["dir"]
    missing = d / "no" / "such"
    args = {
        "filter_out": ["filter", "--votes", v, "--method", "agreement", "--out",
                       missing / "k.csv", "--audit", d / "a.json"],
        "filter_audit": ["filter", "--votes", v, "--method", "agreement", "--out", d / "k.csv",
                         "--audit", missing / "a.json"],
        "aggregate": ["aggregate", "--votes", v, "--out", missing / "g.csv"],
        "per_item": ["evaluate", "--votes", v, "--predictions", p, "--pred-labels", "x,y",
                     "--per-item", missing / "per.csv"],
        "plot": ["subsample", "--votes", v, "--k", "1,2", "--plot", missing / "c.svg"],
        "report": ["report", "--votes", v, "--model", f"m={p}", "--pred-labels", "x,y",
                   "--n-boot", 0, "--out", missing / "rep", "--quiet"],
        "demo": ["demo", "--n-boot", 0, "--out", missing / "rep"],
    }[case]
    before = _snapshot(d)
    res = run(*args)
    assert res.exit_code == 1, res.output
    assert "does not exist" in res.stderr and "Traceback" not in res.stderr
    assert res.stderr.count("\n") == 1
    assert _snapshot(d) == before and not (d / "no").exists()


# --- failures while writing leave earlier outputs whole ---------------------------------------

def _fail_on(monkeypatch, name: str):
    """Make the rename onto ``name`` fail with a full disk."""
    real = os.replace

    def flaky(src, dst):
        if Path(dst).name == name:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(atomic_mod.os, "replace", flaky)


def test_filter_writes_votes_and_audit_together_or_not_at_all(files, monkeypatch):
    v, d = files["votes"], files["dir"]
    out, audit = d / "kept.csv", d / "audit.json"
    out.write_text("earlier votes\n")
    audit.write_text("earlier audit\n")
    _fail_on(monkeypatch, "audit.json")
    res = run("filter", "--votes", v, "--method", "agreement", "--out", out, "--audit", audit)
    _one_line_error(res, r"^Error: cannot write .*audit\.json: no space left on the device$")
    assert out.read_text() == "earlier votes\n" and audit.read_text() == "earlier audit\n"
    assert not [p for p in d.iterdir() if p.name.startswith(".")]
    monkeypatch.undo()
    res = run("filter", "--votes", v, "--method", "agreement", "--out", out, "--audit", audit)
    assert res.exit_code == 0, res.output
    assert out.read_text().startswith("item,annotator,label") and audit.read_text().startswith("{")


def test_failed_per_item_write_keeps_the_earlier_file(files, monkeypatch):
    v, p, d = files["votes"], files["preds"], files["dir"]
    per = d / "per_item.csv"
    assert run("evaluate", "--votes", v, "--predictions", p, "--pred-labels", "x,y",
               "--per-item", per).exit_code == 0
    earlier = per.read_bytes()
    assert earlier.startswith(b"item,")
    monkeypatch.setattr(atomic_mod, "_fsync_path", lambda *_a, **_k: (_ for _ in ()).throw(
        OSError(errno.ENOSPC, "No space left on device")))
    res = run("evaluate", "--votes", v, "--predictions", p, "--pred-labels", "x,y",
              "--temperature", 2, "--per-item", per)
    assert res.exit_code == 1 and "Error: cannot write" in res.stderr
    assert "no space left on the device" in res.stderr
    assert per.read_bytes() == earlier


# --- modes and escaping -------------------------------------------------------------------------

def test_outputs_follow_the_umask(files):
    v, d = files["votes"], files["dir"]
    old = os.umask(0o022)
    try:
        assert run("aggregate", "--votes", v, "--out", d / "agg.csv").exit_code == 0
        assert run("filter", "--votes", v, "--method", "agreement", "--out", d / "k.parquet",
                   "--audit", d / "a.json").exit_code == 0
        assert run("demo", "--n-boot", 0, "--seed", 1, "--out", d / "rep").exit_code == 0
    finally:
        os.umask(old)
    for name in ("agg.csv", "k.parquet", "a.json", "rep/report.html", "rep/figures/per-bin.svg"):
        assert (d / name).stat().st_mode & 0o777 == 0o644, name
    assert (d / "rep").stat().st_mode & 0o777 == 0o755


def test_csv_for_people_neutralises_formulas_and_vote_files_stay_exact(tmp_path):
    votes = tmp_path / "votes.csv"
    rows = [("=cmd|' /C calc'!A0", "a", "x"), ("=cmd|' /C calc'!A0", "b", "x"),
            ("@SUM(1)", "a", "-y"), ("@SUM(1)", "b", "-y"), ("plain", "a", "x")]
    pd.DataFrame(rows, columns=["item", "annotator", "label"]).to_csv(votes, index=False)
    res = run("aggregate", "--votes", votes, "--soft", "--out", tmp_path / "agg.csv")
    assert res.exit_code == 0, res.output
    agg = pd.read_csv(tmp_path / "agg.csv", dtype=str)
    assert set(agg["item"]) == {"'=cmd|' /C calc'!A0", "'@SUM(1)", "plain"}
    assert set(agg["label"]) == {"x", "'-y"} and "p_-y" in agg.columns
    stdout = run("aggregate", "--votes", votes).stdout
    assert "'=cmd" in stdout and "\n=cmd" not in stdout and "\n@SUM" not in stdout
    res = run("filter", "--votes", votes, "--method", "agreement", "--threshold", "-1",
              "--out", tmp_path / "kept.csv", "--audit", tmp_path / "audit.json")
    assert res.exit_code == 0, res.output
    kept = pd.read_csv(tmp_path / "kept.csv", dtype=str)
    assert "=cmd|' /C calc'!A0" in set(kept["item"]) and "-y" in set(kept["label"])


def test_control_characters_in_ids_are_escaped_on_the_terminal(tmp_path):
    votes = tmp_path / "votes.csv"
    bad = "evil\x1b[2J"  # a NUL byte is refused by the reader (tests/io/test_input_boundary.py)
    rows = [("q1", bad, "x"), ("q1", "b", "x"), ("q2", bad, "y"), ("q2", "b", "x"),
            (f"q3{chr(0x1b)}]0;pwn\x07", "b", "y"), (f"q3{chr(0x1b)}]0;pwn\x07", bad, "y")]
    pd.DataFrame(rows, columns=["item", "annotator", "label"]).to_csv(votes, index=False)
    res = run("annotators", "--votes", votes)
    assert res.exit_code == 0, res.output
    assert "\x1b" not in res.output and "\x00" not in res.output and "\x07" not in res.output
    assert "evil\\x1b[2J" in res.stdout
    # the aggregate CSV is data: exact on a pipe (CliRunner's stdout is not a terminal)
    piped = run("aggregate", "--votes", votes)
    assert piped.exit_code == 0, piped.output
    assert f"q3{chr(0x1b)}]0;pwn\x07" in piped.stdout


# --- standard output ----------------------------------------------------------------------------

def test_stdout_on_a_full_disk_is_one_line():
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-c", "from annokit.cli import main; main()",
                               "demo", "--no-report"], cwd=ROOT, stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=120, check=False)
    assert proc.returncode == 1
    assert proc.stderr == "Error: cannot write to standard output: no space left on the device\n"


def test_stdout_closed_pipe_is_one_line():
    proc = subprocess.Popen([sys.executable, "-c", "from annokit.cli import main; main()",
                             "demo", "--no-report"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    proc.stdout.close()  # the reader went away before anything was written
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1
    assert err == "Error: cannot write to standard output: broken pipe\n"
