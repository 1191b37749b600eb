"""The README is executable documentation: its examples run, every command is documented."""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import pytest
from _shared import DATA_ROOT
from click.testing import CliRunner

from annokit.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _quickstart():
    spec = importlib.util.spec_from_file_location("quickstart", ROOT / ".ci" / "quickstart.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.quickstart_commands(README)


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.DOTALL)


def _with_data(text: str) -> str:
    if "../shared/data" in text and not DATA_ROOT.exists():
        pytest.skip(f"README example needs the shared data at {DATA_ROOT}")
    return text.replace("../shared/data", str(DATA_ROOT))


def test_quick_start_is_exactly_two_commands_install_and_tests():
    install, tests = _quickstart()
    assert "pip install" in install and install.endswith("annokit demo")
    assert "pytest" in tests


def test_ci_runs_the_readme_quick_start():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "quickstart.py README.md" in ci


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_available_command_has_help_and_is_in_the_readme(name):
    module, _, _ = COMMANDS[name]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"command {name} is not part of this build")
    result = CliRunner().invoke(main, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage: " in result.output and len(result.output.splitlines()) > 3
    assert f"annokit {name}" in README


def _shell_examples():
    lines = []
    for block in _blocks("bash"):
        for line in block.splitlines():
            line = line.strip()
            if line.startswith("annokit "):
                lines.append(line)
    return lines


@pytest.mark.parametrize("line", _shell_examples())
def test_readme_shell_examples_run(line, tmp_path, monkeypatch):
    args = shlex.split(_with_data(line))[1:]
    if any(a.startswith("<") for a in args):
        pytest.skip("placeholder example")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_readme_python_examples_run(index, monkeypatch, tmp_path):
    code = _with_data(_blocks("python")[index])
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"README.md python block {index}", "exec"), {"__name__": "__readme__"})  # noqa: S102
