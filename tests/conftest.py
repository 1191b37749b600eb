"""Shared fixtures: where the real datasets live, and a skip when they are absent."""

from __future__ import annotations

import pytest

from _shared import DATA_ROOT, data_path  # noqa: F401  (re-exported for tests)


@pytest.fixture
def shared_data():
    """Call as ``shared_data("chaosnli", "chaosNLI_snli.jsonl")``; skips when the data are absent."""
    return data_path


# --------------------------------------------------------------------------- pytest-xdist
# The README runs the suite on two processes (`-n 2`). pyproject.toml's `--dist loadscope` sends
# each test module to one worker, so its module-scoped fixtures (the mkdocs site, the recipes run
# on the real data, reports, Dask clusters) are built once, not once per worker, and the numba
# kernels a module's tests compile are compiled by one worker. (xdist's `loadgroup`, which
# would group by fixture, does nothing under pytest 9: it renames node ids, which pytest 9
# derives.) `--no-loadscope-reorder` keeps the order set below.

#: Modules that take longest (every kernel compiled into an empty numba cache, mypy without
#: its cache, the mkdocs build and the docs' examples, fresh interpreters, Dask worker
#: processes, the recipes on the real data): sent to the workers first, so that the run does
#: not end with one worker busy on a long module and the other idle. The other modules follow,
#: those with the most tests first.
RUN_FIRST = (
    "tests/metrics/test_mutation.py",
    "tests/test_lint.py",
    "tests/test_docs.py",
    "tests/metrics/test_kernels.py",
    "tests/report/test_render.py",
    "tests/scale/test_cluster.py",
    "tests/recipes/test_report_recipe.py",
    "tests/report/test_browser.py",
    "tests/recipes/test_calibration_recipes.py",
    "tests/cli/test_engine_more.py",
    "tests/cli/test_engine.py",
)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    modules = [item.nodeid.split("::", 1)[0] for item in items]
    size = {module: modules.count(module) for module in set(modules)}
    first = {module: rank for rank, module in enumerate(RUN_FIRST)}
    order = {id(item): (first.get(module, len(RUN_FIRST)), -size[module], module)
             for item, module in zip(items, modules, strict=True)}
    items.sort(key=lambda item: order[id(item)])
