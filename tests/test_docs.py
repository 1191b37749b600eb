"""The README and the documentation site are executable documentation.

Every ```python block of README.md and docs/**/*.md runs (in a temporary working directory; blocks
that read the shared data skip without it), every ``annokit ...`` line of their ```bash blocks runs
through click's CliRunner, every command has help and a row in the README's commands table, and
``mkdocs build --strict`` passes with every command, metric and public name in the generated
references (skipped when the docs extra is not installed). ``python recipes/...`` lines are not run
here: the recipes take minutes; tests/recipes/ test them.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from annokit.cli import COMMANDS, main

from _shared import DATA_ROOT

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
EXAMPLES = ROOT / "docs" / "examples"


def _quickstart():
    spec = importlib.util.spec_from_file_location("quickstart", ROOT / ".ci" / "quickstart.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.quickstart_commands(README)


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def _where(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _python_blocks():
    return [pytest.param(path, i, code, id=f"{_where(path)}#{i}")
            for path in DOC_FILES
            for i, code in enumerate(_blocks(path.read_text(encoding="utf-8"), "python"))]


def _shell_examples():
    out = []
    for path in DOC_FILES:
        for block in _blocks(path.read_text(encoding="utf-8"), "bash"):
            for line in block.splitlines():
                if line.strip().startswith("annokit "):
                    out.append(pytest.param(line.strip(), id=f"{_where(path)}: {line.strip()[:70]}"))
    return out


def _resolve_paths(text: str) -> str:
    if "../shared/data" in text and not DATA_ROOT.exists():
        pytest.skip(f"example needs the shared data at {DATA_ROOT}")
    return text.replace("../shared/data", str(DATA_ROOT)).replace("docs/examples/", f"{EXAMPLES}/")


# --------------------------------------------------------------------------- the README


def test_quick_start_is_exactly_two_commands_install_and_tests():
    install, tests = _quickstart()
    assert "pip install" in install and ".[test,docs]" in install
    assert install.endswith("annokit demo")
    assert "pytest" in tests


def test_ci_runs_the_readme_quick_start():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "quickstart.py README.md" in ci


def test_readme_is_short():
    assert len(README.splitlines()) <= 160


def _commands_table() -> set[str]:
    return set(re.findall(r"^\| `annokit (\w+)`", README, flags=re.MULTILINE))


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_available_command_has_help_and_a_row_in_the_readme(name):
    module, _, _ = COMMANDS[name]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"command {name} is not part of this build")
    result = CliRunner().invoke(main, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage: " in result.output and len(result.output.splitlines()) > 3
    assert name in _commands_table(), f"README's commands table has no row for annokit {name}"


def test_the_readme_commands_table_lists_only_real_commands():
    assert _commands_table() <= set(COMMANDS)


# --------------------------------------------------------------------------- examples run


@pytest.mark.parametrize("line", _shell_examples())
def test_shell_examples_run(line, tmp_path, monkeypatch):
    args = shlex.split(_resolve_paths(line))[1:]
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("path, index, code", _python_blocks())
def test_python_examples_run(path, index, code, monkeypatch, tmp_path):
    code = _resolve_paths(code)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"{_where(path)} python block {index}", "exec"),  # noqa: S102
         {"__name__": "__docs__"})


def test_examples_write_into_a_temporary_or_named_directory():
    # Python examples write under tempfile.mkdtemp(); shell examples write relative paths the
    # checkout's .gitignore covers (tests run them in a temporary directory).
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    for name in ("annokit-demo/", "site/", "chaosnli-report/", "rte-kept.csv", "rte-audit.json", "curve.png",
                 "labels.csv"):
        assert name in ignored or f"/{name}" in ignored, name


# --------------------------------------------------------------------------- the site


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                          "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
                         check=False, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    return out


def _page(site: Path, name: str) -> str:
    return (site / name / "index.html").read_text(encoding="utf-8")


def test_mkdocs_build_strict(site):
    assert (site / "index.html").exists()


def test_cli_reference_has_every_command(site):
    page = _page(site, "reference/cli")
    for name in COMMANDS:
        assert f"annokit {name}" in page, name
    assert "UNSET" not in page  # click's sentinel must not leak into the defaults


def test_metric_reference_is_generated_from_the_registry(site):
    from annokit.metrics.registry import REGISTRY

    page = _page(site, "reference/metrics")
    for spec in REGISTRY.values():
        assert f"<code>{spec.name}</code>" in page, spec.name
    source = (ROOT / "docs" / "reference" / "metrics.md").read_text(encoding="utf-8")
    typed = [name for name in REGISTRY if f"`{name}`" in source.split("```")[0]]
    assert typed == [], f"metric names typed by hand in the metric table's page: {typed}"


PUBLIC = ["annokit", "annokit.io", "annokit.quality", "annokit.subsample", "annokit.metrics",
          "annokit.report"]


def test_api_reference_has_every_public_function_and_class(site):
    ids = set(re.findall(r'id="(annokit[\w.]*)"', _page(site, "reference/api")))
    leaves = {i.rsplit(".", 1)[-1] for i in ids}
    missing = []
    for package in PUBLIC:
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            # aliases (VoteSchemaError = InputError) are documented under their own name
            if callable(obj) and name not in leaves and getattr(obj, "__name__", "") not in leaves:
                missing.append(f"{package}.{name}")
    assert missing == []


def test_dataset_cards_are_in_the_site_and_the_nav(site):
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for card in sorted((ROOT / "data_cards").glob("*.md")):
        assert f"datasets/{card.name}" in nav, card.name
        assert (site / "datasets" / card.stem / "index.html").exists(), card.name
    assert "How to add a metric" in _page(site, "architecture")
