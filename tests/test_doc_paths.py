"""Every import path the docs name exists: ``annokit.x.y`` in the text and
``from annokit.x import y`` in the examples of README.md, ARCHITECTURE.md and docs/."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md", ROOT / "ARCHITECTURE.md"]
_DOTTED = re.compile(r"(?<![\w/.-])annokit(?:\.[A-Za-z_]\w*)+")
_FROM = re.compile(r"from (annokit[\w.]*) import (\([^)]*\)|[^\n]+)")


def resolves(path: str) -> bool:
    """Whether ``path`` is a module, or an attribute of the longest module it starts with."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for part in parts[i:]:
                obj = getattr(obj, part)
        except AttributeError:
            return False
        return True
    return False


def named_paths(text: str) -> set[str]:
    paths = {m.rstrip(".") for m in _DOTTED.findall(text)}
    for module, names in _FROM.findall(text):
        for name in names.strip("()").replace("\n", " ").split("#")[0].split(","):
            name = name.strip().split(" as ")[0].strip()
            if name.isidentifier():
                paths.add(f"{module}.{name}")
    return paths


def test_named_paths_reads_both_spellings():
    assert named_paths("see `annokit.io.read_votes`.\nfrom annokit.quality import (aggregate,\n"
                       "    filter_annotators)\n") == {
        "annokit.io.read_votes", "annokit.quality", "annokit.quality.aggregate",
        "annokit.quality.filter_annotators"}
    assert not resolves("annokit.scale.read_votes_dask")  # the path README.md used to name


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_import_path_in_the_docs_exists(path):
    missing = sorted(p for p in named_paths(path.read_text(encoding="utf-8")) if not resolves(p))
    assert not missing, f"{path.name} names paths that do not exist: {missing}"
