"""annokit.quality.dataset_stats: the statistics do not depend on the order of the file's rows."""

import json

import numpy as np
import pandas as pd

from annokit.core.votes import Votes
from annokit.quality.dataset_stats import dataset_stats


def test_reversing_the_rows_gives_the_same_statistics_to_the_last_digit():
    """Issue 12: reversing the row order changed `stats` output (float sums in row order)."""
    rng = np.random.default_rng(3)
    n = 400
    df = pd.DataFrame({"item": np.repeat([f"i{k}" for k in range(n)], 7),
                       "annotator": [f"a{k}" for k in rng.integers(0, 50, n * 7)],
                       "label": rng.choice(["x", "y", "z"], n * 7)})
    df = df.drop_duplicates(["item", "annotator"])
    forward = dataset_stats(Votes.from_long(df), n_boot=200, rng=0)
    backward = dataset_stats(Votes.from_long(df.iloc[::-1]), n_boot=200, rng=0)
    for stats in (forward, backward):
        stats.pop("source", None)
    assert json.dumps(forward, sort_keys=True) == json.dumps(backward, sort_keys=True)
    assert forward["krippendorff_alpha"]["ci_low"] < forward["krippendorff_alpha"]["value"]
