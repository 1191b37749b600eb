"""The one writing layer (annokit/io/atomic.py) and output escaping (annokit/io/escape.py)."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from annokit.core.votes import Votes
from annokit.errors import DataFormatError, OutputError
from annokit.io import atomic as atomic_mod
from annokit.io import read_votes, write_votes
from annokit.io.atomic import (
    atomic_directory,
    atomic_path,
    atomic_paths,
    check_outputs,
    describe_output,
    file_mode,
    output_error,
    output_info,
    table_format,
    write_bytes_atomic,
    write_table,
    write_text_atomic,
)
from annokit.io.escape import neutralise_formulas, printable

ROOT = Path(__file__).resolve().parents[2]


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture
def umask():
    """Set a umask for one test and restore the old one."""
    old = os.umask(0o022)
    yield lambda m: os.umask(m)
    os.umask(old)


# --- modes ------------------------------------------------------------------------------

@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_files_and_directories_follow_the_umask(tmp_path, umask, mask, mode):
    umask(mask)
    assert file_mode() == mode
    write_text_atomic(tmp_path / "a.json", "{}")
    write_table(pd.DataFrame({"x": [1]}), tmp_path / "t.csv")
    for name in ("a.json", "t.csv"):
        assert (tmp_path / name).stat().st_mode & 0o777 == mode
    with atomic_directory(tmp_path / "rep") as tmp:
        (tmp / "r.md").write_text("x")
    assert (tmp_path / "rep").stat().st_mode & 0o777 == 0o777 & ~mask


# --- missing directory, read-only target, full disk -----------------------------------------

def test_missing_directory_is_one_line_and_creates_nothing(tmp_path):
    target = tmp_path / "nope" / "out.csv"
    with pytest.raises(OutputError, match=r"out\.csv: directory .*nope does not exist"):
        write_table(pd.DataFrame({"x": [1]}), target)
    with pytest.raises(OutputError, match="directory .*nope does not exist"), \
            atomic_directory(tmp_path / "nope" / "rep"):
        pass
    assert _names(tmp_path) == []


def test_read_only_directory_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic_mod.os, "access", lambda *_a, **_k: False)  # root ignores chmod
    with pytest.raises(OutputError, match=r"--out .*x\.csv: directory .* is not writable"):
        check_outputs({"--out": tmp_path / "x.csv"})


def test_permission_denied_while_creating_the_temporary_file(tmp_path, monkeypatch):
    def denied(*_a, **_k):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(atomic_mod.tempfile, "mkstemp", denied)
    with pytest.raises(OutputError, match=r"^cannot write .*x\.txt: permission denied$"):
        write_text_atomic(tmp_path / "x.txt", "hello")


@pytest.mark.parametrize("where", ["write", "fsync"])
def test_full_disk_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch, where):
    target = tmp_path / "out.txt"
    target.write_text("old")

    def full(*_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic_mod.os, where, full)
    with pytest.raises(OutputError, match=r"^cannot write .*out\.txt: no space left on the device$"):
        write_bytes_atomic(target, b"new" * 1000)
    monkeypatch.undo()
    assert target.read_text() == "old" and _names(tmp_path) == ["out.txt"]


def test_full_disk_in_a_table_writer(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic_mod, "_fsync_path", lambda *_a, **_k: (_ for _ in ()).throw(
        OSError(errno.ENOSPC, "No space left on device")))
    with pytest.raises(OutputError, match=r"cannot write .*t\.parquet: no space left"):
        write_table(pd.DataFrame({"x": [1]}), tmp_path / "t.parquet")
    assert _names(tmp_path) == []


def test_real_small_tmpfs_if_it_can_be_mounted(tmp_path):
    """A genuinely full disk: a 64 KiB tmpfs (skipped where mounting is not allowed)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                      capture_output=True, check=False).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        (mnt / "out.txt").write_text("old")
        with pytest.raises(OutputError, match="no space left on the device"):
            write_bytes_atomic(mnt / "out.txt", b"x" * 200_000)
        assert (mnt / "out.txt").read_text() == "old" and _names(mnt) == ["out.txt"]
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def test_output_error_message():
    assert str(output_error("a.csv", OSError(errno.EROFS, "x"))) == \
        "cannot write a.csv: read-only file system"
    assert str(output_error("a.csv", OSError(errno.ELOOP, "Too many levels"))) == \
        "cannot write a.csv: too many levels"


# --- outputs that name an input -------------------------------------------------------------

@pytest.fixture
def votes_file(tmp_path):
    path = tmp_path / "votes.csv"
    path.write_text("item,annotator,label\nq1,a,x\nq1,b,y\n")
    return path


def test_output_equal_to_an_input_is_refused(votes_file):
    with pytest.raises(OutputError, match=r"--out .*votes\.csv is the input --votes; refusing "
                                          r"to overwrite an input \(choose another path\)"):
        check_outputs({"--out": votes_file}, {"--votes": votes_file})
    # spelled differently
    other = votes_file.parent / "." / ".." / votes_file.parent.name / "votes.csv"
    with pytest.raises(OutputError, match="is the input --votes"):
        check_outputs({"--out": other}, {"--votes": str(votes_file)})


def test_symlink_and_hard_link_to_an_input_are_refused(votes_file, tmp_path):
    (tmp_path / "link.csv").symlink_to(votes_file)
    os.link(votes_file, tmp_path / "hard.csv")
    for name in ("link.csv", "hard.csv"):
        with pytest.raises(OutputError, match=f"--per-item .*{name} is the input --predictions"):
            check_outputs({"--per-item": tmp_path / name},
                          {"--predictions": ["elsewhere.jsonl", votes_file]})
    # an input given through a symlink
    with pytest.raises(OutputError, match="is the input --gold"):
        check_outputs({"--out": votes_file}, {"--gold": tmp_path / "link.csv"})


def test_report_directory_holding_an_input_is_refused(tmp_path):
    out = tmp_path / "rep"
    out.mkdir()
    (out / "votes.csv").write_text("x")
    with pytest.raises(OutputError, match=r"--out .*rep holds the input --votes \(.*votes\.csv\)"):
        check_outputs({"--out": out}, {"--votes": out / "votes.csv"}, directories=["--out"])


def test_two_outputs_on_one_file_and_wrong_kinds_are_refused(tmp_path):
    with pytest.raises(OutputError, match=r"--audit .*a\.json and --out .*a\.json are the same "
                                          "file"):
        check_outputs({"--out": tmp_path / "a.json", "--audit": tmp_path / "a.json"})
    with pytest.raises(OutputError, match="is a directory; give a file name"):
        check_outputs({"--out": tmp_path})
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError, match="exists and is not a directory"):
        check_outputs({"--out": tmp_path / "f"}, directories=["--out"])
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(OutputError, match="is not a regular file; refusing to replace it"):
        check_outputs({"--out": tmp_path / "fifo"})


def test_inputs_that_are_not_files_are_ignored(tmp_path):
    check_outputs({"--out": tmp_path / "o.csv", "--plot": None},
                  {"--votes": "chaosnli-snli", "--gold": None, "--x": "-"})


# --- several files, directories --------------------------------------------------------------

def test_group_is_all_or_nothing_when_the_block_fails(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.json"
    a.write_text("old a")
    b.write_text("old b")
    with pytest.raises(RuntimeError, match="audit failed"), atomic_paths([a, b]) as (ta, _tb):
        ta.write_text("new a")
        raise RuntimeError("audit failed")
    assert (a.read_text(), b.read_text()) == ("old a", "old b")
    assert _names(tmp_path) == ["a.csv", "b.json"]


def test_group_rolls_back_when_a_later_rename_fails(tmp_path, monkeypatch):
    a, b = tmp_path / "a.csv", tmp_path / "b.json"
    a.write_text("old a")
    real = os.replace
    calls = []

    def flaky(src, dst):
        calls.append(dst)
        if Path(dst) == b:
            raise OSError(errno.EIO, "Input/output error")
        return real(src, dst)

    monkeypatch.setattr(atomic_mod.os, "replace", flaky)
    with pytest.raises(OutputError, match=r"cannot write .*b\.json: input/output error"), \
            atomic_paths([a, b]) as (ta, tb):
        ta.write_text("new a")
        tb.write_text("new b")
    assert a.read_text() == "old a" and not b.exists()
    assert _names(tmp_path) == ["a.csv"]


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two_renames"])
def test_directory_is_swapped_and_the_old_one_kept_on_failure(tmp_path, monkeypatch, exchange):
    if not exchange:
        monkeypatch.setattr(atomic_mod, "_exchange", lambda *_a: False)
    out = tmp_path / "rep"
    with atomic_directory(out) as tmp:
        (tmp / "v1").write_text("1")
    with atomic_directory(out) as tmp:
        (tmp / "v2").write_text("2")
    assert _names(out) == ["v2"] and _names(tmp_path) == ["rep"]
    with pytest.raises(RuntimeError, match="render failed"), atomic_directory(out) as tmp:
        (tmp / "v3").write_text("3")
        raise RuntimeError("render failed")
    assert _names(out) == ["v2"] and _names(tmp_path) == ["rep"]


def test_two_rename_fallback_puts_the_old_directory_back(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic_mod, "_exchange", lambda *_a: False)
    out = tmp_path / "rep"
    out.mkdir()
    (out / "old").write_text("keep me")
    real = os.replace

    def flaky(src, dst):
        if Path(src).name.startswith(".rep.new-"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(atomic_mod.os, "replace", flaky)
    with pytest.raises(OutputError, match=r"cannot write .*rep: no space left"), \
            atomic_directory(out) as tmp:
        (tmp / "new").write_text("x")
    assert (out / "old").read_text() == "keep me"


def test_exchange_is_one_step_on_linux(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "in_a").touch()
    if not atomic_mod._exchange(a, b):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available here")
    assert _names(b) == ["in_a"] and _names(a) == []


# --- crash safety ----------------------------------------------------------------------------

CRASH_WRITER = textwrap.dedent("""
    import sys, time
    from annokit.io.atomic import atomic_path
    with atomic_path(sys.argv[1]) as tmp:
        with open(tmp, "w") as fh:
            fh.write("partial " * 1000)
            fh.flush()
            print("writing", flush=True)
            time.sleep(60)
            fh.write("never")
""")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killing_a_writer_mid_write_keeps_the_old_file(tmp_path, sig):
    target = tmp_path / "out.csv"
    target.write_text("old,intact\n")
    proc = subprocess.Popen([sys.executable, "-c", CRASH_WRITER, str(target)], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "writing"
        time.sleep(0.05)
        proc.send_signal(sig)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
    assert proc.returncode == -sig
    assert target.read_text() == "old,intact\n"
    # a killed process cannot clean up: only a hidden temporary file may remain beside it
    assert [n for n in _names(tmp_path) if not n.startswith(".out.csv.")] == ["out.csv"]


# --- tables and escaping ---------------------------------------------------------------------

def test_vote_files_stay_exact_and_tables_for_people_are_neutralised(tmp_path):
    ids = ["=HYPERLINK(\"http://x\")", "+1", "-2", "@SUM(A1)", "plain"]
    votes = Votes.from_long(pd.DataFrame({"item": ids, "annotator": ["a"] * 5,
                                          "label": ["=x", "y", "y", "y", "y"]}))
    write_votes(votes, tmp_path / "v.csv")
    back = read_votes(tmp_path / "v.csv")
    assert sorted(back.item_ids) == sorted(ids) and "=x" in back.labels.names
    df = pd.DataFrame({"item": ids, "p_=x": [-0.5, 1.0, 0.0, 0.5, 1.0]})
    write_table(df, tmp_path / "agg.csv", for_people=True)
    written = pd.read_csv(tmp_path / "agg.csv", dtype={"item": str})
    assert written["item"].tolist() == ["'=HYPERLINK(\"http://x\")", "'+1", "'-2", "'@SUM(A1)",
                                        "plain"]
    assert written["p_=x"].tolist() == [-0.5, 1.0, 0.0, 0.5, 1.0]  # numbers untouched
    write_table(df, tmp_path / "agg.parquet", for_people=True)  # not a spreadsheet format
    assert pd.read_parquet(tmp_path / "agg.parquet")["item"].tolist() == ids


def test_default_extension_and_unknown_extension(tmp_path):
    write_table(pd.DataFrame({"x": ["=1"]}), tmp_path / "per_item.txt", default=".csv",
                for_people=True)
    assert (tmp_path / "per_item.txt").read_text() == "x\n'=1\n"
    with pytest.raises(DataFormatError, match=r"x\.txt: cannot write '\.txt'"):
        write_table(pd.DataFrame({"x": [1]}), tmp_path / "x.txt")


def test_neutralise_leaves_categorical_and_missing_cells_usable():
    df = pd.DataFrame({"a": pd.Categorical(["=1", "b"]), "b": ["\t=x", None]})
    out = neutralise_formulas(df)
    assert out["a"].tolist() == ["'=1", "b"] and out["b"].tolist()[0] == "'\t=x"
    assert pd.isna(out["b"].tolist()[1])


def test_printable_escapes_control_characters_only():
    assert printable("a\x1b]0;title\x07b") == "a\\x1b]0;title\\x07b"
    assert printable("nul\x00 del\x7f c1\x9b rlo\u202e") == "nul\\x00 del\\x7f c1\\x9b rlo\\u202e"
    assert printable("tab\tnew\nline é 中") == "tab\tnew\nline é 中"


def test_atomic_path_cleans_up_on_error(tmp_path):
    with pytest.raises(ValueError, match="bad"), atomic_path(tmp_path / "x.txt") as tmp:
        tmp.write_text("half")
        raise ValueError("bad")
    assert _names(tmp_path) == []


def test_report_directory_given_as_a_symlink_is_replaced_and_its_target_kept(tmp_path):
    real = tmp_path / "v1"
    real.mkdir()
    (real / "report.json").write_text("{}")
    (tmp_path / "rep").symlink_to(real)
    with atomic_directory(tmp_path / "rep") as tmp:
        (tmp / "report.json").write_text('{"new": 1}')
    assert not (tmp_path / "rep").is_symlink() and _names(tmp_path) == ["rep", "v1"]
    assert (real / "report.json").read_text() == "{}"


def test_read_only_file_system_if_it_can_be_mounted(tmp_path):
    mnt = tmp_path / "ro"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,ro", "tmpfs", str(mnt)],
                      capture_output=True, check=False).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        with pytest.raises(OutputError, match=r"x\.csv: directory .*ro is on a read-only file "
                                              "system$"):
            write_table(pd.DataFrame({"x": [1]}), mnt / "x.csv")
        with pytest.raises(OutputError, match=r"rep: directory .* on a read-only file system"), \
                atomic_directory(mnt / "rep"):
            pass
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def test_a_failure_inside_a_group_names_the_file_being_written(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.json"
    with pytest.raises(OutputError, match=r"^cannot write .*b\.json: no space left on the device$"), \
            atomic_paths([a, b]) as (_ta, tb):
        raise OSError(errno.ENOSPC, "No space left on device", str(tb))
    assert _names(tmp_path) == []


# -- --out-format ---------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "fmt", "jsonl", "message"), [
    ("labels.txt", None, True, r"^labels\.txt: cannot write '\.txt'; use \.csv, \.tsv, \.jsonl or "
                               r"\.parquet, or name the format with --out-format "
                               r"\(csv\|tsv\|jsonl\|parquet\)$"),
    ("labels", "jsonl", False, r"^labels: --out-format jsonl is not written here; use csv, tsv, "
                               r"parquet$"),
    ("labels.tsv", "parquet", True, r"^labels\.tsv: its extension \.tsv names tsv, --out-format "
                                    r"parquet; give a path ending in \.parquet \(or with no table "
                                    r"extension\)$"),
], ids=["unknown-extension", "jsonl-not-here", "contradiction"])
def test_table_format_refusals(path, fmt, jsonl, message):
    with pytest.raises(DataFormatError, match=message):
        table_format(path, fmt, jsonl=jsonl)


def test_table_format_and_what_was_written(tmp_path):
    assert [table_format(p) for p in ("a.csv", "a.TAB", "a.ndjson", "a.pq")] == [
        "csv", "tsv", "jsonl", "parquet"]
    assert table_format("a.dat", "tsv") == "tsv" and table_format("a.parquet", "parquet")
    df = pd.DataFrame({"item": ["a", "b"], "label": ["=x", "y"]})
    write_table(df, tmp_path / "t.out", format="tsv", for_people=True)
    assert (tmp_path / "t.out").read_text() == "item\tlabel\na\t'=x\nb\ty\n"
    write_table(df, tmp_path / "t.bin", format="parquet")
    assert pd.read_parquet(tmp_path / "t.bin")["label"].tolist() == ["=x", "y"]
    info = output_info(tmp_path / "t.bin", "parquet", 2)
    assert describe_output(info) == f"{tmp_path / 't.bin'} (Parquet, 2 rows)"
    assert describe_output(output_info("out/", "parquet", 1234, n_files=1)) == (
        "out/ (Parquet dataset, 1 file, 1,234 rows)")


def test_outputs_inside_an_input_directory_of_partitions_are_refused(tmp_path):
    (tmp_path / "votes").mkdir()
    (tmp_path / "votes" / "part-0.csv").write_text("item,annotator,label\nq,w,x\n")
    with pytest.raises(OutputError, match=r"^--out .*votes/labels\.csv is inside the input "
                                          r"--votes .*votes/, a directory of partitions: it would "
                                          r"be read as one of them; choose a path outside it$"):
        check_outputs({"--out": tmp_path / "votes" / "labels.csv"}, {"--votes": tmp_path / "votes"})
    with pytest.raises(OutputError, match=r"part-0\.csv is the input --votes; refusing"):
        check_outputs({"--out": tmp_path / "votes" / "part-0.csv"},
                      {"--votes": str(tmp_path / "votes" / "part-*.csv")})
    check_outputs({"--audit": tmp_path / "votes" / "audit.json"}, {"--votes": tmp_path / "votes"})
