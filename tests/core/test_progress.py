"""Progress bars (annokit.core.progress): on stderr only, off unless asked or on a terminal."""

from __future__ import annotations

import io
import sys

import pytest

from annokit.core.progress import progress, progress_enabled, reset_progress, set_progress


def test_off_when_stderr_is_not_a_terminal(capsys):
    token = set_progress(None)
    try:
        assert not progress_enabled(io.StringIO())
        with progress(total=3, delay=0) as bar:
            bar.update(3)
        assert capsys.readouterr() == ("", "")
    finally:
        from annokit.core.progress import _ENABLED

        _ENABLED.reset(token)


def test_forced_on_draws_on_stderr_never_stdout(capsys):
    pytest.importorskip("tqdm")
    from annokit.core.progress import _ENABLED

    token = set_progress(True)
    try:
        with progress(total=4, desc="work", delay=0, leave=True) as bar:
            bar.update(4)
    finally:
        _ENABLED.reset(token)
    out, err = capsys.readouterr()
    assert out == "" and "work" in err and "4/4" in err


def test_quiet_turns_bars_off_in_the_cli():
    """`annokit --quiet CMD` sets the switch off while the command runs (seen when it is
    reset, as the command's context closes), and back afterwards."""
    import subprocess

    code = ("from annokit.core import progress as p\n"
            "seen, reset = [], p.reset_progress\n"
            "p.reset_progress = lambda token: (seen.append(p._ENABLED.get()), reset(token))\n"
            "from annokit.cli import main\n"
            "main(['--quiet', 'stats', 'docs/examples/votes_long.csv', '--n-boot', '0'],\n"
            "     standalone_mode=False)\n"
            "print('enabled:', seen, p._ENABLED.get())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "enabled: [False] None"


def test_set_progress_rejects_non_bools():
    with pytest.raises(TypeError):
        set_progress("yes")


def test_notice_if_slow_only_when_enabled_and_slow(capsys):
    import time

    from annokit.core.progress import _ENABLED, notice_if_slow

    token = set_progress(True)
    try:
        with notice_if_slow("compiling once", delay=0.0):
            time.sleep(0.2)  # the timer fires during the block
        with notice_if_slow("fast block", delay=5.0):
            pass  # done before the delay: nothing written
    finally:
        _ENABLED.reset(token)
    token = set_progress(False)  # --quiet
    try:
        with notice_if_slow("quiet block", delay=0.0):
            time.sleep(0.2)
    finally:
        _ENABLED.reset(token)
    out, err = capsys.readouterr()
    assert out == "" and err == "compiling once\n"


def test_quiet_lasts_for_one_command_only(tmp_path):
    """``annokit --quiet`` run in-process (CliRunner, a notebook) turns bars off for that
    command; the caller's setting comes back after it."""
    from click.testing import CliRunner

    from annokit.cli import main

    (tmp_path / "v.csv").write_text("item,annotator,label\nq1,a,x\nq1,b,y\n")
    token = set_progress(True)
    try:
        result = CliRunner().invoke(main, ["--quiet", "stats", str(tmp_path / "v.csv"),
                                           "--json", "--n-boot", "0"])
        assert result.exit_code == 0, result.output
        assert progress_enabled() is True
    finally:
        reset_progress(token)
