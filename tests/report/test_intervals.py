"""The report's per-bin figures and the notes that replace them (annokit/report/intervals.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from annokit.errors import DegenerateInputWarning
from annokit.metrics.engine import evaluate
from annokit.metrics.records import AlignedRecords
from annokit.report.intervals import MIN_ITEMS_FOR_INTERVAL, bin_interval, noted


def test_a_small_bin_keeps_its_estimates_without_intervals_and_says_why():
    """A bootstrap interval of a mean of 2 values is as narrow as they are close (the engine's
    normal interval on 2 items); the figure stays, its interval becomes a note."""
    rng = np.random.default_rng(0)
    p = rng.dirichlet([1, 1, 1], 50)
    rec = AlignedRecords.from_arrays(p, rng.multinomial(5, p))
    groups = pd.Categorical([0] * 2 + [1] * 48, categories=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        res = evaluate(rec, ["jsd", "ece", "mce"], by=groups, n_boot=50, n_bins=2)
    small, large = res.groups
    iv = bin_interval("jsd", small.n_items, 2, small.metrics["jsd"], small.intervals["jsd"])
    assert iv.estimate == small.metrics["jsd"] and iv.low is None and iv.high is None
    assert iv.note.startswith(f"no interval: 2 items, fewer than {MIN_ITEMS_FOR_INTERVAL}")
    iv = bin_interval("jsd", large.n_items, 2, large.metrics["jsd"], large.intervals["jsd"])
    assert (iv.low, iv.high) == (large.intervals["jsd"].low, large.intervals["jsd"].high)
    ece = bin_interval("ece", small.n_items, 2, small.metrics["ece"], small.intervals["ece"])
    assert ece.estimate is None and ece.note.startswith("not shown: 2 items in 2 confidence bins")
    mce = bin_interval("mce", large.n_items, 1, large.metrics["mce"], large.intervals["mce"])
    assert mce.method == "none" and not np.isfinite(mce.low) and mce.note  # the registry's reason


def test_noted_says_each_warning_once_and_prefixes_it_once():
    """The population pass repeats the votes pass's warnings (a tie) and raises its own with
    the prefix already in the text: each reaches the notes once, with one prefix."""
    notes = ["58 of 784 items have a tied human majority"]
    with noted(notes, "population target: "):
        for text in ("58 of 784 items have a tied human majority",
                     "population target: kl -0.01 outside the metric's range",
                     "a new degenerate input"):
            warnings.warn(text, DegenerateInputWarning, stacklevel=2)
    assert notes == ["58 of 784 items have a tied human majority",
                     "population target: kl -0.01 outside the metric's range",
                     "population target: a new degenerate input"]
