"""Gold on the Dask engine: coded against the votes' labels as in memory, never adding one."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("dask.dataframe", reason="the Dask engine needs annokit[dask]")

from annokit.errors import DegenerateInputWarning  # noqa: E402
from annokit.io import read_votes  # noqa: E402
from annokit.quality.aggregate import aggregate  # noqa: E402
from annokit.quality.dataset_stats import dataset_stats  # noqa: E402
from annokit.scale.quality import aggregate_dask  # noqa: E402
from annokit.scale.stats import dataset_stats_dask  # noqa: E402
from annokit.scale.votes import read_votes_dask  # noqa: E402

TEXT = ("item,annotator,label,gold\nq1,a,cat,Cat\nq1,b,dog,Cat\nq2,a,dog, Dog\nq2,b,dog, Dog\n"
        "q3,a,cat,cat\nq3,b,cat,\nq4,a,dog,dog\nq4,b,dog,dog\n")


def test_unknown_gold_on_dask_as_in_memory(tmp_path):
    (tmp_path / "v.csv").write_text(TEXT)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DegenerateInputWarning)
        dv = read_votes_dask(str(tmp_path / "v.csv"), npartitions=2)
    assert dv.labels.names == ("cat", "dog")
    assert [str(w.message) for w in caught if issubclass(w.category, DegenerateInputWarning)] == [
        f"{tmp_path / 'v.csv'}, column 'gold': 2 gold value(s) are not among the votes' labels "
        "['cat', 'dog']: 'Cat', ' Dog'; their gold is left out of accuracy; gold 'Cat' matches "
        "label 'cat' but for case; gold ' Dog' matches label 'dog' but for case and surrounding "
        "spaces (correct their spelling in the gold to match)"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        mem = read_votes(tmp_path / "v.csv")
    got = dataset_stats_dask(dv, n_boot=0)["gold"]
    assert got == dataset_stats(mem, n_boot=0)["gold"]
    assert got["n_unknown_label"] == 2 and got["n_items"] == 2
    agg = aggregate_dask(dv, "mv")
    assert (agg.n_gold, agg.n_gold_unknown, agg.accuracy) == (2, 2, 1.0)
    assert agg.summary() == {**aggregate(mem).summary(), "iterations": agg.n_iter}


def _messages(caught):
    return [str(w.message) for w in caught if issubclass(w.category, DegenerateInputWarning)]


def test_a_gold_file_joined_on_dask_as_in_memory(tmp_path):
    """A separate gold file: read once, joined by item id across partitions; the same gold
    codes, the same two warnings (a value that is no label, a row without votes)."""
    from annokit.io import read_gold
    from annokit.scale.votes import attach_gold_dask, to_votes

    (tmp_path / "v.csv").write_text("item,annotator,label\nq1,a,cat\nq1,b,dog\nq2,a,dog\n"
                                    "q2,b,dog\nq3,a,cat\nq3,b,cat\nq4,a,dog\nq4,b,dog\n")
    (tmp_path / "g.csv").write_text("item,gold\nq1,cat\nq2,Dog\nq4,dog\nq9,cat\n")
    with warnings.catch_warnings(record=True) as mem_caught:
        warnings.simplefilter("always", DegenerateInputWarning)
        mem = read_votes(tmp_path / "v.csv", gold=tmp_path / "g.csv")
    dv = read_votes_dask(str(tmp_path / "v.csv"), npartitions=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DegenerateInputWarning)
        dv = attach_gold_dask(dv, read_gold(tmp_path / "g.csv"))
    assert dv.has_gold
    assert _messages(caught) == _messages(mem_caught) == [
        "g.csv: 1 item(s) have a gold label that is not among the votes' labels ['cat', 'dog']: "
        "'Dog' (1 item); their gold is left out of accuracy; gold 'Dog' matches label 'dog' but "
        "for case (correct their spelling in the gold to match)",
        "g.csv: 1 gold row(s) name items without votes and were not used (e.g. 'q9')"]
    back = to_votes(dv)
    got = dict(zip(back.item_ids, back.gold.tolist(), strict=True))
    assert got == dict(zip(mem.item_ids, mem.gold.tolist(), strict=True))
    agg = aggregate_dask(dv, "mv")
    assert agg.summary() == {**aggregate(mem).summary(), "iterations": agg.n_iter}


def test_a_gold_file_that_contradicts_the_gold_column_is_refused_as_in_memory(tmp_path):
    from annokit.errors import InputError
    from annokit.io import read_gold
    from annokit.scale.votes import attach_gold_dask

    (tmp_path / "v.csv").write_text("item,annotator,label,gold\n0,a,x,x\n0,b,y,x\n1,a,x,\n"
                                    "2,a,y,y\n")
    (tmp_path / "fill.csv").write_text("item,gold\n1,y\n2,y\n")
    dv = attach_gold_dask(read_votes_dask(str(tmp_path / "v.csv"), npartitions=2, client=False),
                          read_gold(tmp_path / "fill.csv"))
    mem = read_votes(tmp_path / "v.csv", gold=tmp_path / "fill.csv")
    assert dataset_stats_dask(dv, n_boot=0)["gold"] == dataset_stats(mem, n_boot=0)["gold"]
    (tmp_path / "clash.csv").write_text("item,gold\n0,y\n2,x\n")
    with pytest.raises(InputError, match=r"clash\.csv: item '0' has gold 'y', but the gold "
                       r"column of .*v\.csv gives 'x' \(2 item\(s\) differ\)"):
        attach_gold_dask(read_votes_dask(str(tmp_path / "v.csv"), npartitions=2, client=False),
                         read_gold(tmp_path / "clash.csv"))
    for n in (1, 3):  # the first-seen clashing item is named whatever the partitioning
        with pytest.raises(InputError, match=r"clash\.csv: item '0' .* \(2 item\(s\) differ\)"):
            attach_gold_dask(read_votes_dask(str(tmp_path / "v.csv"), npartitions=n,
                                             client=False), read_gold(tmp_path / "clash.csv"))
