"""Where the real datasets live (importable by tests; pytest's ``pythonpath`` includes tests/)."""

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
