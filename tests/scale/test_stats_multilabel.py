"""Multi-label statistics on Dask equal memory (multilabel_stats) on seeded data."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pandas as pd
import pytest

from _shared import assert_close_documents

dask = pytest.importorskip("dask", reason="the Dask engine needs annokit[dask]")

from annokit.core.votes import Votes  # noqa: E402
from annokit.errors import InvalidValueError, SchemaError  # noqa: E402
from annokit.quality.dataset_stats import multilabel_stats  # noqa: E402
from annokit.scale.stats_multilabel import multilabel_stats_dask  # noqa: E402
from annokit.scale.votes import from_votes  # noqa: E402

LABELS = ["a", "b", "c"]


def _votes(seed: int, n_items: int = 45) -> Votes:
    """Responses ticking 1-3 labels; 1-5 annotators per item (single responses too)."""
    rng = np.random.default_rng(seed)
    rows = [(f"i{i}", f"w{a}", lab) for i in range(n_items)
            for a in rng.choice(7, size=int(rng.integers(1, 6)), replace=False)
            for lab in rng.choice(LABELS, size=int(rng.integers(1, 4)), replace=False)]
    return Votes.from_long(pd.DataFrame(rows, columns=["item", "annotator", "label"]),
                           labels=LABELS, duplicates="keep")


_close = functools.partial(assert_close_documents, key_order=True)


def _recorded(f, *args, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = f(*args, **kw)
    return out, [str(w.message) for w in caught]


@pytest.mark.parametrize("npartitions", [1, 4, 70])  # 70 > items: empty partitions
@pytest.mark.parametrize("ties", ["exclude", "include"])
def test_equals_memory(npartitions, ties):
    votes = _votes(npartitions)
    mem, mem_said = _recorded(multilabel_stats, votes, n_boot=50, ties=ties, rng=5)
    with dask.config.set(scheduler="synchronous"):
        dv = from_votes(votes, npartitions=npartitions, client=False)
        got, said = _recorded(multilabel_stats_dask, dv, n_boot=50, ties=ties, rng=5)
    assert said == mem_said and "cannot be paired" in said[0]
    assert mem["n_tied_cells"] > 0 and mem["per_label"]["a"]["krippendorff_alpha"]["ci_low"]
    _close({k: v for k, v in got.items() if k not in ("source", "read_as")},
           {k: v for k, v in mem.items() if k not in ("source", "read_as")})


def test_equals_memory_on_a_cluster(dask_client):
    votes = _votes(9)
    mem, mem_said = _recorded(multilabel_stats, votes, n_boot=20, rng=1)
    got, said = _recorded(multilabel_stats_dask, from_votes(votes, npartitions=3,
                                                            client=dask_client), n_boot=20, rng=1)
    assert [x for x in said if "Port " not in x] == mem_said
    _close({k: v for k, v in got.items() if k not in ("source", "read_as")},
           {k: v for k, v in mem.items() if k not in ("source", "read_as")})


def _dask(votes, **kw):
    with dask.config.set(scheduler="synchronous"):
        return multilabel_stats_dask(from_votes(votes, npartitions=2, client=False), **kw)


def test_errors():
    df = pd.DataFrame({"item": ["q", "q", "q", "r"], "annotator": ["a", "a", "b", "a"],
                       "label": ["x", "x", "y", "x"]})
    votes = Votes.from_long(df, duplicates="keep")
    match = ("1 \\(item, annotator, label\\) vote\\(s\\) repeated, e.g. \\[\\('q', 'a', 'x'\\)\\]; "
             "a response ticks each label at most once")
    with pytest.raises(SchemaError, match=match):
        multilabel_stats(votes)
    with pytest.raises(SchemaError, match=match):
        _dask(votes)
    with pytest.raises(SchemaError, match="needs annotator ids"):
        _dask(Votes.from_counts([[2, 1]], labels=["x", "y"]))
    with pytest.raises(InvalidValueError, match="n_boot must be >= 0"):
        _dask(_votes(1), n_boot=-1)
    with pytest.raises(InvalidValueError, match="ties"):
        _dask(_votes(1), ties="error")
