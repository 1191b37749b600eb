"""Shared fixtures: where the real datasets live, and a skip when they are absent."""

from __future__ import annotations

import pytest

from _shared import DATA_ROOT, data_path  # noqa: F401  (re-exported for tests)


@pytest.fixture
def shared_data():
    """Call as ``shared_data("chaosnli", "chaosNLI_snli.jsonl")``; skips when the data are absent."""
    return data_path
