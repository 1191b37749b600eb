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


HEAVY = ("pandas", "pyarrow", "scipy", "numba", "matplotlib", "dask", "distributed", "datasets")


def test_import_and_help_import_no_heavy_module():
    """`import annokit` and `annokit --help` stay fast: none of the heavy libraries load."""
    import subprocess
    import sys

    code = ("import sys, annokit\n"
            "from annokit.cli import main\n"
            "try:\n"
            "    main(['--help'], standalone_mode=False)\n"
            "except SystemExit:\n"
            "    pass\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


def test_reading_and_aggregating_import_neither_numba_nor_scipy_special(tmp_path):
    """`annokit aggregate --method ds` on a CSV needs neither numba nor scipy.special: their
    imports (about 0.2 s and 0.15 s, numba's first call 0.4 s more) would be a tenth of the
    5M-vote benchmark against crowd-kit (benchmarks/bench_aggregate_cli.py)."""
    import subprocess
    import sys

    votes = tmp_path / "votes.csv"
    votes.write_text("item,annotator,label\n1,a,x\n1,b,y\n2,a,x\n2,b,x\n")
    code = ("import sys\n"
            "from annokit.cli import main\n"
            f"main(['--quiet', 'aggregate', {str(votes)!r}, '--method', 'ds', '--json'], "
            "standalone_mode=False)\n"
            "print(sorted(m for m in ('numba', 'scipy.special') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout
