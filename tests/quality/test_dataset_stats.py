"""annokit.quality.dataset_stats: the statistics do not depend on the order of the file's rows."""

import json

import numpy as np
import pandas as pd

from annokit.core.votes import Votes
from annokit.quality.dataset_stats import dataset_stats


def test_reversing_the_rows_gives_the_same_statistics_to_the_last_digit():
    """Reversing the row order leaves `stats` unchanged (sums do not follow the row order)."""
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


def test_stats_are_a_dict_with_a_frame_of_every_statistic():
    """DatasetStats.to_frame: the statistics as a table for pandas users."""
    df = pd.DataFrame({"item": list("aabbcc"), "annotator": list("xyxyxy"),
                       "label": list("110100")})
    stats = dataset_stats(Votes.from_long(df), n_boot=0)
    assert isinstance(stats, dict) and json.loads(json.dumps(stats)) == stats
    frame = stats.to_frame()
    assert frame.index.name == "statistic" and list(frame.columns) == ["value"]
    assert frame.loc["n_votes", "value"] == 6
    assert frame.loc["label_counts.1", "value"] == 3
    assert frame.loc["krippendorff_alpha.value", "value"] == stats["krippendorff_alpha"]["value"]
    assert frame.loc["labels", "value"] == ["0", "1"]


def test_numeric_scale_stats_are_invariant_to_how_numbers_are_written():
    """Relabelling 1 -> 1.0 leaves every figure equal."""
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"item": np.repeat([f"i{k}" for k in range(30)], 4),
                       "annotator": np.tile(list("wxyz"), 30),
                       "label": rng.integers(1, 6, 120).astype(str)})
    respelled = df.assign(label=[f"{v}.0" if j % 3 else f"+{v}" for j, v in enumerate(df.label)])
    for scale in ("ordinal", "interval", "ratio"):
        a = dataset_stats(Votes.from_long(df).with_scale(scale), n_boot=50)
        b = dataset_stats(Votes.from_long(respelled).with_scale(scale), n_boot=50)
        assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
