"""The curated public surface: every name in ``__all__`` resolves."""

import importlib

import pytest


@pytest.mark.parametrize("module", ["annokit", "annokit.metrics", "annokit.io"])
def test_every_exported_name_resolves(module):
    mod = importlib.import_module(module)
    for name in mod.__all__:
        assert getattr(mod, name) is not None, name
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        mod.nope  # noqa: B018
