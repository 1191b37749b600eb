"""Where the real datasets live (importable by tests; pytest's ``pythonpath`` includes tests/)."""

from __future__ import annotations

import math
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


def assert_close_documents(got, want, path: str = "result", *, rel: float = 1e-12,
                           abs_tol: float = 1e-12, key_order: bool = False) -> None:
    """Equal documents (``to_dict`` / ``--json`` output of the two engines): the same keys
    (in the same order with ``key_order``), lists of the same length, floats within
    ``max(rel * |want|, abs_tol)`` (the Dask engine sums in another order; NaN equals NaN),
    anything else equal."""
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{path}: {got!r} is not a mapping"
        if key_order:
            assert list(got) == list(want), f"{path}: keys {list(got)} vs {list(want)}"
        assert set(got) == set(want), f"{path}: keys {set(got) ^ set(want)}"
        for key in want:
            assert_close_documents(got[key], want[key], f"{path}.{key}", rel=rel,
                                   abs_tol=abs_tol, key_order=key_order)
    elif isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), \
            f"{path}: {got!r} vs {want!r}"
        for i, (x, y) in enumerate(zip(got, want, strict=True)):
            assert_close_documents(x, y, f"{path}[{i}]", rel=rel, abs_tol=abs_tol,
                                   key_order=key_order)
    elif isinstance(want, float) and isinstance(got, float):
        if math.isnan(want):
            assert math.isnan(got), f"{path}: {got!r} vs {want!r}"
        else:
            assert abs(got - want) <= max(rel * abs(want), abs_tol), f"{path}: {got!r} vs {want!r}"
    else:
        assert got == want, f"{path}: {got!r} vs {want!r}"
