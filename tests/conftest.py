"""Shared fixtures: where the real datasets live, and a skip when they are absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: Real public datasets are read in place from here (never copied into the repository).
DATA_ROOT = Path(os.environ.get("ANNOKIT_TEST_DATA",
                                Path(__file__).resolve().parents[1] / ".." / "shared" / "data")).resolve()


def data_path(*parts: str) -> Path:
    """Path below the shared data folder; skips the test when it is absent."""
    path = DATA_ROOT.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not found at {path} (set ANNOKIT_TEST_DATA to the folder "
                    "holding chaosnli/, snow2008_rte/, ...)")
    return path


@pytest.fixture
def shared_data():
    """Call as ``shared_data("chaosnli", "chaosNLI_snli.jsonl")``."""
    return data_path
