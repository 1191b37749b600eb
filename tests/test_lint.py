"""The lint and type checks, run by the test suite so CI enforces them on every change.

ruff checks the rules selected in pyproject.toml (`[tool.ruff.lint]`) on every Python file of the
repository; mypy checks the package with `[tool.mypy]`. Both run as the test environment's
executables (`python -m ruff`, `python -m mypy`; the `test` extra installs them).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUFF_PATHS = ["annokit", "tests", "benchmarks", "recipes", "docs", ".ci"]

#: Files whose findings are not yet fixed (they were being edited when the checks were
#: introduced). Their findings are tolerated, nothing else's; a listed file that has
#: become clean fails the test, so the list only shrinks. The goal is for both to be empty.
PENDING: dict[str, set[str]] = {
    "ruff": set(),
    "mypy": set(),
}

#: A finding's line: `path:line:col: ...` (mypy's notes only explain the error before them).
_FINDING = re.compile(r"^(?P<path>[^\s:]+\.py):\d+:(?:\d+:)? (?!note:)", re.MULTILINE)


def _run(tool: str, *args: str) -> tuple[int, str]:
    if importlib.util.find_spec(tool) is None:
        pytest.skip(f"{tool} is not installed: pip install -e '.[test]'")
    proc = subprocess.run([sys.executable, "-m", tool, *args], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def _check(tool: str, code: int, output: str) -> None:
    pending = PENDING[tool]
    found = {m["path"] for m in _FINDING.finditer(output)}
    new = found - pending
    fixed = pending - found
    lines = [line for line in output.splitlines() if (m := _FINDING.match(line)) is None
             or m["path"] not in pending]
    assert not new, f"{tool} findings:\n" + "\n".join(lines)
    assert not fixed, (f"{tool}: {sorted(fixed)} are clean now: remove them from PENDING[{tool!r}] "
                       "in tests/test_lint.py")
    assert found or code == 0, f"{tool} failed:\n{output}"


def test_ruff() -> None:
    code, output = _run("ruff", "check", "--output-format", "concise", *RUFF_PATHS)
    _check("ruff", code, output)


def test_mypy() -> None:
    # The cache (.mypy_cache, git-ignored) makes a second run take a few seconds.
    code, output = _run("mypy", "--no-pretty", "--no-error-summary", "--show-column-numbers")
    _check("mypy", code, output)
