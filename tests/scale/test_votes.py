"""Reading and coding votes on Dask (annokit.scale.votes) against the in-memory reader."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe", reason="the Dask engine needs annokit[dask]")
import dask  # noqa: E402

from annokit.core.votes import Votes  # noqa: E402
from annokit.errors import DataFormatError, InvalidValueError, SchemaError  # noqa: E402
from annokit.io import read_votes  # noqa: E402
from annokit.scale.votes import from_votes, read_votes_dask, to_votes  # noqa: E402


def _by_id(votes):
    return {str(i): row for i, row in zip(votes.item_ids, votes.counts().tolist(), strict=True)}


def _long(n_items=60, seed=0, k=3, n_ann=9):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        for a in rng.choice(n_ann, size=int(rng.integers(1, 6)), replace=False):
            rows.append((f"item{i}", f"w{a}", f"l{int(rng.integers(0, k))}"))
    return pd.DataFrame(rows, columns=["item", "annotator", "label"])


def _write_parts(df, folder, n, kind="parquet"):
    folder.mkdir(parents=True, exist_ok=True)
    for j, part in enumerate(np.array_split(np.arange(len(df)), n)):
        sub = df.iloc[part]
        if kind == "parquet":
            sub.to_parquet(folder / f"part-{j}.parquet", index=False)
        else:
            sub.to_csv(folder / f"part-{j}.csv", index=False)
    return folder


@pytest.mark.parametrize("kind", ["parquet", "csv"])
@pytest.mark.parametrize("n_files", [1, 3, 7])
def test_directory_of_files_equals_the_in_memory_reader(tmp_path, dask_client, kind, n_files):
    df = _long(seed=n_files)
    whole = tmp_path / f"all.{kind}"
    df.to_parquet(whole, index=False) if kind == "parquet" else df.to_csv(whole, index=False)
    mem = read_votes(whole)
    dv = read_votes_dask(_write_parts(df, tmp_path / "parts", n_files, kind), client=dask_client)
    back = to_votes(dv)
    assert dv.labels == mem.labels
    assert (dv.n_items, dv.n_votes, dv.n_annotators) == (mem.n_items, mem.n_votes, mem.n_annotators)
    assert _by_id(back) == _by_id(mem)
    assert sorted(back.annotator_ids) == sorted(mem.annotator_ids)
    # an item's votes are in one partition, and items partition i holds exactly its items
    frames = dv.compute(*dv.frame.to_delayed())
    items = dv.compute(*dv.items.to_delayed())
    for f, it in zip(frames, items, strict=True):
        assert set(f["item"]) == set(it["item"])
    assert sum(len(it) for it in items) == mem.n_items


@pytest.mark.parametrize("npartitions", [1, 2, 5, 40])  # 40 > the 30 items: empty ones
def test_any_number_of_partitions_including_empty_and_one_item(npartitions, dask_client):
    votes = Votes.from_long(_long(n_items=30, seed=npartitions))
    dv = from_votes(votes, npartitions=npartitions, client=dask_client)
    assert _by_id(to_votes(dv)) == _by_id(votes)
    assert dv.npartitions == npartitions


def test_glob_list_and_frames(tmp_path, dask_client):
    df = _long(seed=5)
    folder = _write_parts(df, tmp_path / "p", 3)
    mem = Votes.from_long(df)
    for src in (str(folder / "part-*.parquet"), sorted(folder.glob("*.parquet")), df,
                dd.from_pandas(df, npartitions=4)):
        assert _by_id(to_votes(read_votes_dask(src, client=dask_client))) == _by_id(mem)


@pytest.mark.parametrize("scale", ["ordinal", "interval", "nominal"])
def test_scale_orders_and_keeps_the_labels_as_in_memory(tmp_path, dask_client, scale):
    """Numeric labels in numeric order on ordered scales (natural order inferred otherwise)."""
    df = _long(seed=3, k=4)
    df["label"] = df["label"].map({"l0": "10", "l1": "-5", "l2": "2", "l3": "-1.5"})
    path = tmp_path / "v.parquet"
    df.to_parquet(path, index=False)
    mem = read_votes(path, scale=scale)
    dv = read_votes_dask(_write_parts(df, tmp_path / "parts", 3), client=dask_client, scale=scale)
    assert dv.labels == mem.labels and dv.labels.scale == scale
    if scale != "nominal":
        assert dv.labels.names == ("-5", "-1.5", "2", "10")
    assert _by_id(to_votes(dv)) == _by_id(mem)
    assert from_votes(mem, npartitions=2, client=dask_client).labels == mem.labels
    with pytest.raises(InvalidValueError, match="the order of ordinal labels"):
        read_votes_dask(_long(seed=1), client=dask_client, scale="ordinal")


def test_gold_column_and_no_annotators(tmp_path, dask_client):
    df = _long(seed=2)
    df["gold"] = df["item"].map(lambda s: "l0" if s.endswith(("1", "3")) else None)
    path = tmp_path / "g.parquet"
    df.to_parquet(path, index=False)
    mem = read_votes(path)
    back = to_votes(read_votes_dask(path, client=dask_client))
    gold_mem = dict(zip(mem.item_ids, mem.gold, strict=True))
    assert dict(zip(back.item_ids, back.gold, strict=True)) == gold_mem
    anon = read_votes_dask(df[["item", "label"]], client=dask_client)
    assert anon.annotator_ids is None and anon.n_votes == len(df)


def test_errors_name_the_file_and_line(tmp_path, dask_client):
    df = _long(seed=3)
    df.loc[4, "label"] = None
    folder = _write_parts(df, tmp_path / "bad", 1, "csv")
    with pytest.raises(SchemaError, match=r"line 6 of part-0.csv, column 'label': missing label"):
        read_votes_dask(folder, client=dask_client)
    dup = pd.concat([_long(seed=4), _long(seed=4).iloc[:1]])
    first = dup.iloc[0]
    with pytest.raises(SchemaError, match=f"duplicate votes: item {first['item']!r} has two or "
                                          f"more votes from annotator {first['annotator']!r}"):
        read_votes_dask(dup, client=dask_client)
    assert read_votes_dask(dup, duplicates="keep", client=dask_client).n_votes == len(dup)
    with pytest.raises(InvalidValueError, match="not available on Dask"):
        read_votes_dask(dup, duplicates="first", client=dask_client)
    with pytest.raises(DataFormatError, match="no such file"):
        read_votes_dask(tmp_path / "nope", client=dask_client)
    with pytest.raises(DataFormatError, match=r"^partition 0, row \d+, column 'label': unknown "
                       r"label 'l2'; expected one of \['l0', 'l1'\]$"):
        read_votes_dask(_long(), labels=["l0", "l1"], client=dask_client)


def test_blank_values_are_refused_with_their_line(tmp_path, dask_client):
    df = _long(seed=8)
    df.loc[3, "label"] = "  "
    folder = _write_parts(df, tmp_path / "blank", 1)
    with pytest.raises(SchemaError, match=r"row 3 of part-0.parquet, column 'label': label is "
                                          r"empty"):
        read_votes_dask(folder, client=dask_client)


def _first_seen(dv):
    items = pd.concat(dv.compute(*dv.items.to_delayed()), ignore_index=True)
    return dict(zip(items["item_id"], items["first"], strict=True))


def test_item_disjoint_files_are_kept_as_read_without_a_shuffle(tmp_path, dask_client):
    df = _long(n_items=45, seed=11)
    number = df["item"].str[4:].astype(int)
    folder = tmp_path / "disjoint"
    folder.mkdir()
    files = []
    for j in range(3):  # interleaved items: disjoint files, not in item order
        part = df[number % 3 == j]
        part.to_parquet(folder / f"part-{j}.parquet", index=False)
        files.append(part)
    dv = read_votes_dask(folder, client=dask_client)
    frames = dv.compute(*dv.frame.to_delayed())
    items = dv.compute(*dv.items.to_delayed())
    for f, it, part in zip(frames, items, files, strict=True):
        assert set(it["item_id"]) == set(part["item"])  # partition i is file i
        assert set(f["item"]) == set(it["item"])
        assert (np.diff(f["item"].to_numpy()) >= 0).all()  # sorted by item key
    mem = read_votes(pd.concat(files, ignore_index=True))
    assert _by_id(to_votes(dv)) == _by_id(mem)
    # first-seen positions: (file << 40) + row of the item's first vote in its file
    expect = {}
    for j, part in enumerate(files):
        for row, item in enumerate(part["item"]):
            expect.setdefault(item, (j << 40) + row)
    assert _first_seen(dv) == expect


def test_an_item_in_two_files_is_shuffled_together_as_in_memory(tmp_path, dask_client):
    df = _long(n_items=40, seed=12)
    shared = df["item"].value_counts().index[0]  # an item with several votes, split in two
    rows = np.flatnonzero(df["item"] == shared)
    assert rows.size >= 2
    folder = tmp_path / "shared"
    folder.mkdir()
    df.iloc[:rows[0] + 1].to_parquet(folder / "part-0.parquet", index=False)
    df.iloc[rows[0] + 1:].to_parquet(folder / "part-1.parquet", index=False)
    dv = read_votes_dask(folder, client=dask_client)
    assert _by_id(to_votes(dv)) == _by_id(read_votes(df))
    frames = dv.compute(*dv.frame.to_delayed())
    items = dv.compute(*dv.items.to_delayed())
    holding = [i for i, it in enumerate(items) if shared in set(it["item_id"])]
    assert len(holding) == 1
    key = items[holding[0]].set_index("item_id").loc[shared, "item"]
    assert (frames[holding[0]]["item"] == key).sum() == rows.size
    assert _first_seen(dv)[shared] == rows[0]  # its first row, in the first file


@pytest.mark.parametrize("blank", ["\u3000", "\t \x1c", ""])
@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_white_space_ids_are_refused_in_every_file_type(tmp_path, dask_client, blank, kind):
    df = _long(seed=9)
    df.loc[4, "annotator"] = blank
    folder = _write_parts(df, tmp_path / "ws", 1, kind)
    if kind == "csv" and blank == "":
        match = r"line 6 of part-0.csv, column 'annotator': missing annotator id"
    else:
        where = "row 4 of part-0.parquet" if kind == "parquet" else "line 6 of part-0.csv"
        match = rf"{where}, column 'annotator': annotator id is empty"
    with pytest.raises(SchemaError, match=match):
        read_votes_dask(folder, client=dask_client)


def test_spaces_are_the_characters_str_strip_removes():
    from annokit.scale.vote_parts import SPACES

    assert set(SPACES) == {c for c in map(chr, range(0x110000)) if c.isspace()}


@pytest.mark.parametrize("seed", range(6))
def test_order_by_key_is_the_stable_argsort(seed):
    from annokit.scale.vote_parts import order_by_key

    rng = np.random.default_rng(seed)
    runs = np.repeat(rng.permutation(50)[:int(rng.integers(1, 40))].astype(np.int64),
                     rng.integers(1, 5, size=1)[0])  # each key's rows consecutive
    scattered = rng.integers(-5, 5, size=int(rng.integers(1, 60))).astype(np.int64)
    for key in (runs, scattered, np.zeros(0, np.int64)):
        np.testing.assert_array_equal(order_by_key(key), np.argsort(key, kind="stable"))


def test_dictionary_values_no_row_uses_are_not_items_nor_labels(tmp_path, dask_client):
    df = _long(n_items=30, seed=13)
    every_item = sorted(set(df["item"])) + ["never"]
    every_label = sorted(set(df["label"])) + ["unused"]
    folder = tmp_path / "dict"
    folder.mkdir()
    number = df["item"].str[4:].astype(int)
    parts = [df[number < 15], df[number >= 15]]
    for j, part in enumerate(parts):  # each file's dictionaries list every item and label
        part.assign(item=pd.Categorical(part["item"], categories=every_item),
                    label=pd.Categorical(part["label"], categories=every_label)
                    ).to_parquet(folder / f"part-{j}.parquet", index=False)
    dv = read_votes_dask(folder, client=dask_client)
    mem = read_votes(df)
    assert dv.labels == mem.labels
    assert (dv.n_items, dv.n_votes) == (mem.n_items, mem.n_votes)
    items = dv.compute(*dv.items.to_delayed())
    for it, part in zip(items, parts, strict=True):  # kept as read: no shuffle
        assert set(it["item_id"]) == set(part["item"])
    expect = {}
    for j, part in enumerate(parts):
        for row, item in enumerate(part["item"]):
            expect.setdefault(item, (j << 40) + row)
    assert _first_seen(dv) == expect


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_an_unknown_label_is_named_at_its_file_and_line_as_in_memory(tmp_path, ext):
    """A label outside --labels in the third of three partitions: the Dask reader names the
    file, line (row for Parquet) and column, as the in-memory reader does."""
    from annokit.errors import DataFormatError
    from annokit.io import read_votes

    folder = tmp_path / "parts"
    folder.mkdir()
    rows = [("q1", "a", "pos"), ("q1", "b", "neg"), ("q2", "a", "pos"), ("q3", "a", "neg"),
            ("q3", "b", "neg"), ("q4", "a", "pos"), ("q4", "b", "P0S"), ("q5", "a", "neg")]
    for j, cut in enumerate([rows[:3], rows[3:5], rows[5:]]):
        frame = pd.DataFrame(cut, columns=["item", "annotator", "label"])
        path = folder / f"part-{j}.{ext}"
        frame.to_parquet(path, index=False) if ext == "parquet" else frame.to_csv(path,
                                                                                 index=False)
    with pytest.raises(DataFormatError) as mem:
        read_votes(folder, labels=["neg", "pos"])
    with pytest.raises(DataFormatError) as got:
        read_votes_dask(str(folder), labels=["neg", "pos"], client=False)
    assert str(got.value) == str(mem.value)
    unit = "line 3" if ext == "csv" else "row 1"
    assert str(got.value) == (f"{unit} of part-2.{ext}, column 'label': unknown label 'P0S'; "
                              "expected one of ['neg', 'pos']")


def test_duplicate_vote_in_item_disjoint_parts_is_refused(tmp_path, dask_client):
    """Partitions that share no item are not shuffled: a repeated (item, annotator) pair inside
    one of them is still refused, by name, when the votes are read."""
    df = _long(seed=5)
    folder = tmp_path / "parts"
    folder.mkdir()
    second = df["item"].str[4:].astype(int) >= 30
    df[~second].to_csv(folder / "part-0.csv", index=False)
    dup = pd.concat([df[second], df[second].iloc[[0]]])
    dup.to_csv(folder / "part-1.csv", index=False)
    item, annotator = dup.iloc[0]["item"], dup.iloc[0]["annotator"]
    with pytest.raises(SchemaError, match=f"duplicate votes: item {item!r} has two or more "
                                          f"votes from annotator {annotator!r}"):
        read_votes_dask(folder, client=dask_client)
def test_kept_duplicates_reported_as_in_memory(tmp_path):
    """``duplicates="keep"``: the repeated (item, annotator) pairs counted once each, as the
    in-memory reader reports them (``duplicates_info``); None for the default."""
    df = _long(seed=5)
    again = df.iloc[[0, 0, 3, 10]].assign(label="l2")  # pair 0 three times, two more pairs
    dup = pd.concat([df, again], ignore_index=True)
    folder = _write_parts(dup, tmp_path / "dup", 3)
    mem = read_votes(folder, duplicates="keep").duplicates_info
    with dask.config.set(scheduler="synchronous"):
        got = read_votes_dask(folder, duplicates="keep", client=False)
        plain = read_votes_dask(df, client=False)
        anon = read_votes_dask(dup[["item", "label"]], duplicates="keep", client=False)
    assert mem == {"policy": "keep", "repeated_pairs": 3, "votes_removed": 0}
    assert got.duplicates_info == mem and plain.duplicates_info is None
    dup[["item", "label"]].to_csv(tmp_path / "anon.csv", index=False)
    assert anon.duplicates_info == read_votes(tmp_path / "anon.csv", duplicates="keep") \
        .duplicates_info == {"policy": "keep", "repeated_pairs": None, "votes_removed": 0}


def test_a_file_only_the_in_memory_readers_read_is_refused_with_the_way_out(tmp_path):
    """A ChaosNLI-shaped JSON Lines file given to the Dask engine: one line naming the file and
    --engine memory, before any cluster starts."""
    path = tmp_path / "chaosNLI_snli.jsonl"
    path.write_text('{"uid": "a", "label_counter": {"e": 3}}\n')
    with pytest.raises(DataFormatError, match=r"^chaosNLI_snli\.jsonl: the Dask engine reads long "
                       r"tables in \.parquet, \.csv or \.tsv files; read this file with "
                       r"--engine memory \(Python: annokit\.io\.read_votes\)$"):
        read_votes_dask(path, client=False)


def test_collected_filter_result_counts_the_annotators_of_its_rows(dask_client):
    """The Dask collect of filtered votes names only annotators with a vote
    (compared with the in-memory filter)."""
    import warnings

    from annokit.errors import AnnokitWarning
    from annokit.quality import filter_annotators
    from annokit.scale.filter import filter_annotators_dask

    votes = read_votes(pd.DataFrame(_long(n_items=40, seed=3, n_ann=9)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AnnokitWarning)
        kept_dask, audit = filter_annotators_dask(from_votes(votes, npartitions=3, client=dask_client),
                                                  method="entropy", top_fraction=0.3)
        kept, _ = filter_annotators(votes, method="entropy", top_fraction=0.3)
    back = to_votes(kept_dask)
    assert len(audit.annotators) > 0
    assert back.n_annotators == len(np.unique(back.annotator_index)) == kept.n_annotators
    assert sorted(back.annotator_ids.tolist()) == sorted(kept.annotator_ids.tolist())


def test_a_misspelled_annotator_column_warns_on_dask(dask_client, tmp_path):
    """An unused column that looks like a misspelled annotator column: the in-memory warning."""
    from annokit.errors import DegenerateInputWarning

    path = tmp_path / "votes.csv"
    _long(n_items=10).rename(columns={"annotator": "anotator"}).to_csv(path, index=False)
    with pytest.warns(DegenerateInputWarning, match=r"no annotator column was found, and "
                      r"column\(s\) \['anotator'\] are not read .*--annotator-col"):
        votes = read_votes_dask(str(path), client=dask_client)
    assert votes.annotator_ids is None
