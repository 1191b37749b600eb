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


def test_all_lists_every_lazy_export():
    import annokit
    import annokit.metrics

    eager = {"AnnokitError", "InputError", "DataFormatError", "SchemaError", "AlignmentError",
             "InvalidValueError", "VoteSchemaError", "LabelSet", "Votes",
             "CHAOSNLI_NLI_LABELS", "__version__"}
    assert set(annokit.__all__) == eager | set(annokit._LAZY)
    assert set(annokit.metrics.__all__) == set(annokit.metrics._EXPORTS)
