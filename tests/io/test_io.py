"""Loaders: ChaosNLI, long and wide tables, gold files, the dataset registry, writers."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pandas as pd
import pytest

from annokit.core.soft_labels import majority
from annokit.errors import (
    DataFormatError,
    DatasetNotFoundError,
    DegenerateInputWarning,
    VoteSchemaError,
)
from annokit.io import (
    read_chaosnli,
    read_gold,
    read_long,
    read_votes,
    read_wide,
    registry,
    write_votes,
)

# Figures from each folder's SOURCE.md (shared/data): items, votes, annotators, gold items.
CROWD_SETS = [
    pytest.param("snow2008_rte", "rte.standardized.tsv", None, 800, 8000, 164, id="snow2008_rte_source_md"),
    pytest.param("bluebirds", "answer.csv", "truth.csv", 108, 4212, 39, id="bluebirds_source_md"),
    pytest.param("dog", "answer.csv", "truth.csv", 807, 8070, 109, id="dog_source_md"),
    pytest.param("face", "answer.csv", "truth.csv", 584, 5242, 27, id="face_source_md"),
]


@pytest.mark.parametrize("folder, votes_file, gold_file, n_items, n_votes, n_annotators", CROWD_SETS)
def test_crowd_sets_load_through_the_generic_loader(shared_data, folder, votes_file, gold_file,
                                                    n_items, n_votes, n_annotators):
    gold = shared_data(folder, gold_file) if gold_file else None
    v = read_votes(shared_data(folder, votes_file), gold=gold)
    assert (v.n_items, v.n_votes, v.n_annotators) == (n_items, n_votes, n_annotators)
    assert (v.gold >= 0).sum() == n_items


def _first_seen_majority(votes):
    """Reference loop for majority with first-seen tie breaking (the SOURCE.md rule)."""
    out = np.empty(votes.n_items, dtype=int)
    for i in range(votes.n_items):
        labels = votes.label_index[votes.item_index == i]
        counts = np.bincount(labels, minlength=votes.n_labels)
        top = set(np.flatnonzero(counts == counts.max()))
        out[i] = next(x for x in labels if x in top)
    return out


@pytest.mark.parametrize("folder, votes_file, gold_file, accuracy", [
    pytest.param("snow2008_rte", "rte.standardized.tsv", None, 0.9025, id="snow2008_rte_mv_source_md"),
    pytest.param("dog", "answer.csv", "truth.csv", 0.8166, id="dog_mv_source_md"),
])
def test_majority_accuracy_matches_source_md(shared_data, folder, votes_file, gold_file, accuracy):
    gold = shared_data(folder, gold_file) if gold_file else None
    v = read_votes(shared_data(folder, votes_file), gold=gold)
    assert (_first_seen_majority(v) == v.gold).mean() == pytest.approx(accuracy, abs=5e-5)
    # the tie-reporting majority agrees wherever there is no tie
    m = majority(v.counts())
    assert (m.labels[~m.is_tied] == _first_seen_majority(v)[~m.is_tied]).all()


def test_long_formats_agree(tmp_path):
    df = pd.DataFrame({"task": ["1", "1", "2"], "worker": ["w1", "w2", "w1"], "label": ["a", "b", "b"]})
    df.to_csv(tmp_path / "v.csv", index=False)
    df.to_csv(tmp_path / "v.tsv", sep="\t", index=False)
    df.to_json(tmp_path / "v.jsonl", orient="records", lines=True)
    df.to_parquet(tmp_path / "v.parquet")
    loaded = [read_votes(tmp_path / f"v.{ext}") for ext in ("csv", "tsv", "jsonl", "parquet")]
    for v in loaded:
        assert v.counts().tolist() == [[1, 1], [0, 1]]
        assert v.annotator_ids.tolist() == ["w1", "w2"]


def test_ids_are_read_as_strings(tmp_path):
    (tmp_path / "v.csv").write_text("item,annotator,label\n007,a,1\n7,a,1\n")
    v = read_long(tmp_path / "v.csv")
    assert v.item_ids.tolist() == ["007", "7"]


def test_explicit_column_mapping_and_no_annotators(tmp_path):
    (tmp_path / "v.csv").write_text("doc,rating\nd1,3\nd1,4\nd2,4\n")
    v = read_long(tmp_path / "v.csv", columns={"item": "doc", "label": "rating", "annotator": None})
    assert v.counts().tolist() == [[1, 1], [0, 1]] and not v.has_annotators


def test_wide_file_and_sniffing(tmp_path):
    (tmp_path / "w.csv").write_text("item,ann1,ann2,ann3\nq1,yes,no,\nq2,,yes,yes\n")
    v = read_votes(tmp_path / "w.csv")
    assert v.counts().tolist() == [[1, 1], [0, 2]]
    assert read_wide(tmp_path / "w.csv").equals(v)


def test_gold_from_same_file_and_separate_file(tmp_path):
    (tmp_path / "v.csv").write_text("item,annotator,label,gold\nq1,a,x,x\nq1,b,y,x\nq2,a,y,\n")
    v = read_votes(tmp_path / "v.csv")
    assert v.gold.tolist() == [0, -1]
    (tmp_path / "g.csv").write_text("question,truth\nq2,y\nq9,x\n")
    with pytest.warns(DegenerateInputWarning, match="1 gold row"):
        v2 = read_votes(tmp_path / "v.csv", gold=tmp_path / "g.csv")
    # the file fills the item the gold column left blank; the column's gold stays
    assert v2.gold.tolist() == [0, 1] and v2.n_gold_without_votes == 1
    assert read_gold(tmp_path / "g.csv").to_dict() == {"q2": "y", "q9": "x"}


def _chaos_line(**overrides):
    row = {"uid": "u1", "label_counter": {"e": 2, "n": 1}, "majority_label": "e",
           "label_dist": [2 / 3, 1 / 3, 0.0], "label_count": [2, 1, 0], "old_label": "n",
           "old_labels": ["neutral", "entailment"],
           "example": {"premise": "p", "hypothesis": "h", "source": "s"}}
    row.update(overrides)
    return json.dumps(row)


def test_chaosnli_minimal_file(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text(_chaos_line() + "\n\n" + _chaos_line(uid="u2", label_counter={"c": 1},
                                                      label_dist=[0, 0, 1], label_count=[0, 0, 1]) + "\n")
    v = read_chaosnli(f)
    assert v.counts().tolist() == [[2, 1, 0], [0, 0, 1]]
    assert v.item_metadata["old_labels"][0] == ["neutral", "entailment"]
    assert v.item_metadata["premise"].tolist() == ["p", "p"]


CHAOS_ERRORS = [
    ("{not json", r"line 1 of c.jsonl: not valid JSON"),
    ("[1, 2]", "line 1 of c.jsonl: expected a JSON object, got list"),
    (_chaos_line(label_counter=[1]), "line 1 of c.jsonl: label_counter is not an object"),
    (_chaos_line(label_counter={"e": -1}), r"label_counter\['e'\] must be a non-negative integer"),
    (_chaos_line(label_counter={"e": 1.5}), "must be a non-negative integer; got 1.5"),
    (_chaos_line(label_counter={"e": "3"}), "must be a non-negative integer; got '3'"),
    (_chaos_line(label_counter={"e": 2, "x": 1}), "label_counter has unknown label 'x'"),
    (_chaos_line(label_count=[1, 1, 1]), r"label_count \[1, 1, 1\] disagrees with label_counter"),
    (_chaos_line(label_dist=[0.5, 0.5, 0.0]), "label_dist .* disagrees with label_counter"),
    (_chaos_line(label_dist=[1.0]), "label_dist must be a list of 3 numbers"),
    (_chaos_line(label_counter={"e": 0}, label_count=[0, 0, 0], label_dist=[0, 0, 0]),
     r"line 1 of c.jsonl, field label_counter: item 'u1' has no votes \(every count is 0\)"),
    # the real shape: every count 0 next to a uniform label_dist, or an empty counter
    (_chaos_line(label_counter={"e": 0, "n": 0, "c": 0}, label_dist=[0.333, 0.333, 0.333]),
     r"line 1 of c.jsonl, field label_counter: item 'u1' has no votes \(every count is 0\); each "
     "line needs at least one vote: correct its label_counter or remove the line"),
    (_chaos_line(label_counter={}, label_dist=[0.333, 0.333, 0.333]),
     r"item 'u1' has no votes \(it is empty\)"),
    (_chaos_line(uid=""), "line 1 of c.jsonl: missing uid"),
    (_chaos_line(old_label="x"), "old_label 'x' is not a known label"),
    (_chaos_line() + "\n" + _chaos_line(), "line 2 of c.jsonl: uid 'u1' repeats line 1"),
    ("", "c.jsonl has no items"),
]


@pytest.mark.parametrize("text, message", CHAOS_ERRORS, ids=[m[:40] for _, m in CHAOS_ERRORS])
def test_chaosnli_errors_name_file_and_line(tmp_path, text, message):
    f = tmp_path / "c.jsonl"
    f.write_text(text + "\n")
    with pytest.raises(DataFormatError, match=message):
        read_chaosnli(f)


def test_chaosnli_unreadable_files(tmp_path):
    with pytest.raises(DataFormatError, match="missing.jsonl: no such file"):
        read_chaosnli(tmp_path / "missing.jsonl")
    with pytest.raises(DataFormatError, match="is a directory; give a regular file, or '-'"):
        read_chaosnli(tmp_path)
    bad = tmp_path / "latin.jsonl"
    bad.write_bytes("{\"uid\": \"caf\u00e9\"}".encode("latin-1"))
    with pytest.raises(DataFormatError, match=r"latin.jsonl: not UTF-8 text: byte 12 \(line 1\) is "
                                              r"b'\\xe9' \(invalid continuation byte\); save the "
                                              r"file as UTF-8 \(in Excel: CSV UTF-8\)"):
        read_chaosnli(bad)
    bad.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(DataFormatError, match=r"latin.jsonl: starts with a UTF-16 byte-order mark but "
                                              r"is not UTF-16 text: byte 2 \(truncated data\)"):
        read_chaosnli(bad)


TABLE_ERRORS = [
    ("v.csv", "item,annotator,label\nq1,a,x\nq1,,y\n",
     "line 3 of v.csv, column 'annotator': empty annotator id"),
    ("v.csv", "item,annotator,label\nq1,a,x\n,b,y\n", "line 3 of v.csv, column 'item': empty item id"),
    ("v.csv", "item,annotator,label\nq1,a,\n", "line 2 of v.csv, column 'label': empty label"),
    ("v.csv", "foo,bar\n1,2\n", "cannot tell the format from columns"),
    ("v.csv", "item,annotator,label\nq1,a,x\nq1,a,y\n",
     r"1 \(item, annotator\) pair\(s\) have more than one vote"),
    ("v.xlsx", "x", "unknown file type '.xlsx'"),
    ("v.csv", 'item,annotator,label\nq1,a,"x\n',
     r"v.csv: line 2: a quoted field opened on this line is never closed \(unterminated quote\)"),
]


@pytest.mark.parametrize("name, text, message", TABLE_ERRORS, ids=[m[:40] for *_, m in TABLE_ERRORS])
def test_table_errors_name_file_line_and_column(tmp_path, name, text, message):
    f = tmp_path / name
    f.write_text(text)
    with pytest.raises(VoteSchemaError, match=message):
        read_votes(f)


def test_more_loader_errors(tmp_path):
    f = tmp_path / "v.csv"
    f.write_text("item,annotator,label\nq1,a,x\nq1,b,z\n")
    with pytest.raises(DataFormatError, match=r"line 3 of v.csv, column 'label': unknown label 'z'"):
        read_long(f, labels=["x", "y"])
    with pytest.raises(VoteSchemaError, match="no label column"):
        read_long(f, columns={"label": None})
    with pytest.raises(VoteSchemaError, match=r"unknown column role\(s\) \['text'\]"):
        read_long(f, columns={"text": "x"})
    with pytest.raises(VoteSchemaError, match=r"missing column\(s\) \['nope'\]"):
        read_long(f, columns={"annotator": "nope"})
    with pytest.raises(DataFormatError, match="no such file"):
        read_votes(tmp_path / "absent.csv")
    with pytest.raises(DataFormatError, match="no such file"):
        read_long(tmp_path / "absent.csv")
    (tmp_path / "g.csv").write_text("foo,bar\n1,2\n")
    with pytest.raises(VoteSchemaError, match="a gold file needs an item column and a gold column"):
        read_gold(tmp_path / "g.csv")
    (tmp_path / "g2.csv").write_text("item,gold\nq1,x\nq1,y\n")
    with pytest.raises(DataFormatError, match="item 'q1' has more than one gold row"):
        read_gold(tmp_path / "g2.csv")
    (tmp_path / "w.csv").write_text("ann1,ann2\nx,y\n")
    with pytest.raises(VoteSchemaError, match="no item column"):
        read_wide(tmp_path / "w.csv")
    with pytest.raises(VoteSchemaError, match="format must be one of"):
        read_votes(f, format="xml")
    with pytest.raises(DataFormatError, match="cannot write '.xml'"):
        write_votes(read_votes(f), tmp_path / "out.xml")


def test_write_votes_round_trips_and_leaves_no_temp_files(tmp_path):
    (tmp_path / "v.csv").write_text("item,annotator,label,gold\nq1,a,x,x\nq1,b,y,x\nq2,a,y,y\n")
    v = read_votes(tmp_path / "v.csv")
    for ext in ("csv", "tsv", "jsonl", "parquet"):
        out = write_votes(v, tmp_path / f"out.{ext}")
        back = read_votes(out)
        np.testing.assert_array_equal(back.counts(), v.counts())
        assert back.gold.tolist() == v.gold.tolist()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


# -- registry ---------------------------------------------------------------------------------

def test_registry_loads_from_a_seeded_cache(shared_data, tmp_path, monkeypatch):
    src = shared_data("chaosnli", "chaosNLI_snli.jsonl")
    (tmp_path / "chaosNLI_snli.jsonl").symlink_to(src)
    monkeypatch.setenv("ANNOKIT_HOME", str(tmp_path))
    v = registry.load_dataset("chaosnli-snli", download=False)
    assert v.n_items == 1514
    assert read_votes("chaosnli-snli").n_items == 1514
    assert registry.load_dataset("chaosnli-snli", path=src.parent).n_items == 1514


def test_registry_download_verifies_and_extracts(shared_data, tmp_path, monkeypatch):
    src = shared_data("chaosnli", "chaosNLI_alphanli.jsonl")
    archive = tmp_path / "chaosNLI_v1.0.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(src, "chaosNLI_v1.0/chaosNLI_alphanli.jsonl")
    spec = registry.REGISTRY["chaosnli-alphanli"]
    fake = registry.DatasetSpec(spec.name, spec.filename, archive.as_uri(), spec.sha256, spec.member)
    monkeypatch.setitem(registry.REGISTRY, spec.name, fake)
    cache = tmp_path / "cache"
    path = registry.dataset_path("chaosnli-alphanli", cache=cache)
    assert path == cache / "chaosNLI_alphanli.jsonl" and path.read_bytes() == src.read_bytes()
    assert sorted(p.name for p in cache.iterdir()) == ["chaosNLI_alphanli.jsonl"]


def test_registry_errors(tmp_path, monkeypatch):
    with pytest.raises(DatasetNotFoundError, match="unknown dataset 'nope'"):
        registry.load_dataset("nope")
    with pytest.raises(DatasetNotFoundError, match="is not cached .* and download=False"):
        registry.dataset_path("chaosnli-snli", cache=tmp_path, download=False)
    with pytest.raises(DatasetNotFoundError, match="no file at"):
        registry.dataset_path("chaosnli-snli", path=tmp_path / "x.jsonl")
    (tmp_path / "chaosNLI_snli.jsonl").write_text("tampered\n")
    with pytest.raises(DataFormatError, match="sha256 .* does not match"):
        registry.dataset_path("chaosnli-snli", cache=tmp_path)
    spec = registry.REGISTRY["chaosnli-mnli"]
    missing = registry.DatasetSpec(spec.name, spec.filename, (tmp_path / "absent.zip").as_uri(),
                                   spec.sha256, spec.member)
    monkeypatch.setitem(registry.REGISTRY, spec.name, missing)
    with pytest.raises(DatasetNotFoundError, match="download from .* failed"):
        registry.dataset_path("chaosnli-mnli", cache=tmp_path / "c")
    notzip = tmp_path / "notzip.zip"
    notzip.write_text("x")
    monkeypatch.setitem(registry.REGISTRY, spec.name, registry.DatasetSpec(
        spec.name, spec.filename, notzip.as_uri(), spec.sha256, spec.member))
    with pytest.raises(DataFormatError, match="is not a zip with"):
        registry.dataset_path("chaosnli-mnli", cache=tmp_path / "c2")


def test_parquet_and_arrow_errors(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from annokit.io import votes_from_arrow

    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet")
    with pytest.raises(DataFormatError, match="bad.parquet: cannot parse as parquet"):
        read_votes(bad, format="long")
    pq.write_table(pa.table({"item": ["a"], "label": ["x"]}), tmp_path / "v.parquet")
    with pytest.raises(VoteSchemaError, match=r"v.parquet is missing column\(s\) \['who'\]"):
        read_long(tmp_path / "v.parquet", columns={"annotator": "who"})
    with pytest.raises(VoteSchemaError, match=r"item id is empty at row 1 \(column 'item', got ' '\)"):
        votes_from_arrow(pa.table({"item": ["a", " "], "label": ["x", "y"]}))


def test_parquet_with_a_separate_gold_file(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"item": ["a", "a", "b"], "annotator": ["1", "2", "1"],
                             "label": ["x", "x", "y"]}), tmp_path / "v.parquet")
    (tmp_path / "g.csv").write_text("item,gold\na,z\nb,y\n")
    with pytest.warns(DegenerateInputWarning) as caught:
        v = read_votes(tmp_path / "v.parquet", gold=tmp_path / "g.csv")
    # gold never adds a label: 'z' is counted, coded -2 (not among the labels)
    assert v.labels.names == ("x", "y") and v.gold.tolist() == [-2, 1]
    assert [str(w.message) for w in caught] == [
        "g.csv: 1 item(s) have a gold label that is not among the votes' labels ['x', 'y']: "
        "'z' (1 item); their gold is left out of accuracy"]


def test_hf_errors():
    from annokit import Votes
    from annokit.io import from_hf, to_hf

    ds = to_hf(Votes.from_long(pd.DataFrame({"item": ["a"], "annotator": ["u"], "label": ["x"]})))
    with pytest.raises(VoteSchemaError, match="annotator id 'stranger' at row 0 is not in the given ids"):
        from_hf(ds.map(lambda row: {"annotators": ["stranger"]}))
    # ClassLabel stores -1 for "no label"; a vote cannot be missing
    with pytest.raises(VoteSchemaError, match="class-coded votes outside the ClassLabel range"):
        from_hf(ds.map(lambda row: {"labels": [-1]}))


def test_sniffing_reads_only_headers_and_reports_unparsable_files(tmp_path):
    from annokit.io import read_columns

    (tmp_path / "v.jsonl").write_text('{"item": "a", "annotator": "u", "label": "x"}\n')
    assert read_columns(tmp_path / "v.jsonl") == ["item", "annotator", "label"]
    assert read_votes(tmp_path / "v.jsonl").counts().tolist() == [[1]]
    (tmp_path / "bad.parquet").write_bytes(b"nope")
    with pytest.raises(DataFormatError, match="bad.parquet: cannot parse as parquet"):
        read_votes(tmp_path / "bad.parquet")
    (tmp_path / "bad.jsonl").write_text("{oops\n")
    with pytest.raises(DataFormatError, match="line 1 of bad.jsonl: not valid JSON"):
        read_columns(tmp_path / "bad.jsonl")
    with pytest.raises(DataFormatError, match="no such file"):
        read_columns(tmp_path / "absent.csv")


def test_io_errors_have_their_specific_type(tmp_path):
    import pyarrow as pa

    from annokit.errors import InvalidValueError, SchemaError
    from annokit.io import votes_from_arrow
    from annokit.io.atomic import check_table_path
    from annokit.io.predictions import read_predictions
    from annokit.io.synthetic import make_votes
    from annokit.io.tabular import detect_columns

    with pytest.raises(InvalidValueError, match=r"unknown column role\(s\) \['speaker'\]"):
        detect_columns(["item", "label"], ("item", "speaker"))
    with pytest.raises(SchemaError, match=r"is missing column\(s\) \['label'\]"):
        votes_from_arrow(pa.table({"item": ["a"]}))
    with pytest.raises(InvalidValueError, match="read_predictions needs at least one path"):
        read_predictions([])
    with pytest.raises(InvalidValueError, match=r"votes_per_item must be in \[1, n_annotators=5\]"):
        make_votes(n_annotators=5, votes_per_item=6)
    with pytest.raises(DataFormatError, match=r"x.xlsx: cannot write '.xlsx'; use .csv, .tsv or "
                                              r"\.parquet"):
        check_table_path(tmp_path / "x.xlsx", jsonl=False)


def test_an_empty_categorical_label_in_parquet_is_named_with_its_row(tmp_path):
    # the general path's label check says "empty at row 0 (got '')": its row is still found
    pd.DataFrame({"label": pd.Categorical([""]), "item": [False]}).to_parquet(tmp_path / "s.parquet")
    with pytest.raises(DataFormatError, match=r"^row 0 of s.parquet, column 'label': label is empty"):
        read_votes(tmp_path / "s.parquet", missing=["NA"])
