"""The text tables of :mod:`annokit.metrics.results` (``annokit evaluate`` prints them; their
bytes are checked through the command in ``tests/cli/test_evaluate.py``)."""

from __future__ import annotations

from annokit.metrics.results import format_value


def test_values_rounding_to_zero_never_print_as_negative_zero():
    assert [format_value(v) for v in (-1e-17, -0.0, 0.0, -0.00004, -0.00005, 0.25)] == [
        "0.0000", "0.0000", "0.0000", "0.0000", "-0.0001", "0.2500"]
