"""The release files: one version everywhere, the license pyproject.toml declares, a changelog in
the Keep a Changelog form (https://keepachangelog.com/en/1.1.0/) and a citation file with the keys
the Citation File Format 1.2.0 requires (https://github.com/citation-file-format/citation-file-format,
schema.json: ``cff-version``, ``message``, ``title``, ``authors``)."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import pytest
from click.testing import CliRunner

import annokit
from annokit.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _release_file(name: str) -> str:
    path = ROOT / name
    if not path.exists():
        pytest.skip(f"{name} is not beside the tests (an installed wheel's tests run without it)")
    return path.read_text(encoding="utf-8")


def test_version_option_agrees_with_the_package_metadata():
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.output.split()[-1] == version("annokit") == annokit.__version__


def test_license_is_the_apache_license_pyproject_declares():
    text = _release_file("LICENSE")
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "END OF TERMS AND CONDITIONS" in text
    pyproject = _release_file("pyproject.toml")
    assert re.search(r'^license = "Apache-2.0"$', pyproject, flags=re.M)
    assert re.search(r'^license-files = \["LICENSE"\]$', pyproject, flags=re.M)


def test_changelog_has_unreleased_and_the_current_version():
    text = _release_file("CHANGELOG.md")
    releases = re.findall(r"^## \[([^\]]+)\]", text, flags=re.M)
    assert releases[0] == "Unreleased"
    assert annokit.__version__ in releases, f"no '## [{annokit.__version__}] - date' section"
    assert re.search(rf"^## \[{re.escape(annokit.__version__)}\] - \d{{4}}-\d\d-\d\d$", text,
                     flags=re.M)
    unreleased = text.split("## [Unreleased]")[1].split("\n## [")[0]
    kinds = re.findall(r"^### (\w+)$", unreleased, flags=re.M)
    assert set(kinds) <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def test_citation_file_has_the_required_keys_and_the_version():
    yaml = pytest.importorskip("yaml", reason="PyYAML comes with the docs extra")
    cff = yaml.safe_load(_release_file("CITATION.cff"))
    assert cff["cff-version"] == "1.2.0"
    assert {"message", "title", "authors"} <= set(cff)
    assert all("name" in a or "family-names" in a for a in cff["authors"])
    assert str(cff["version"]) == annokit.__version__
    assert cff["license"] == "Apache-2.0"
