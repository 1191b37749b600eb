"""Integer ids on the CSV path: ids written as canonical integers are coded, checked and matched
as integers (annokit.core.ids, the gold path of annokit.io.tabular); any other spelling stays
text, so "07" and "7" are two ids. Every integer shortcut is checked against the text path."""

from __future__ import annotations

import warnings

import numpy as np
import pyarrow as pa
import pytest

from annokit.core.ids import canonical_ints, has_repeats, id_positions, int_positions
from annokit.errors import DataFormatError, DegenerateInputWarning
from annokit.io import read_votes, tabular
from annokit.io.fast_csv import read_csv_arrow
from annokit.io.source import Input

VOTES = "item,annotator,label\n7,1,cat\n7,2,dog\n0,1,dog\n12,2,cat\n3,1,cat\n"


def _read(tmp_path, gold, votes=VOTES, *, text=False, monkeypatch=None):
    """Votes and warning texts; ``text``: with the integer path of the gold file turned off."""
    (tmp_path / "v.csv").write_text(votes, newline="")
    (tmp_path / "g.csv").write_text(gold, newline="")
    with pytest.MonkeyPatch.context() as mp:
        if text:
            mp.setattr(tabular, "canonical_ints", lambda ids: None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = read_votes(tmp_path / "v.csv", gold=tmp_path / "g.csv")
    return out, [str(w.message) for w in caught if issubclass(w.category, DegenerateInputWarning)]


def _same_as_text(tmp_path, gold, votes=VOTES):
    fast, messages = _read(tmp_path, gold, votes)
    slow, slow_messages = _read(tmp_path, gold, votes, text=True)
    assert fast == slow and messages == slow_messages
    assert fast.n_gold_without_votes == slow.n_gold_without_votes
    return fast, messages


def test_integer_gold_ids_give_the_gold_and_messages_of_text_ids(tmp_path):
    gold = "item,gold\n12,dog\n99,cat\n7,fish\n0,\n3,cat\n"
    votes, messages = _same_as_text(tmp_path, gold)
    assert votes.item_ids.tolist() == ["7", "0", "12", "3"]
    assert votes.gold.tolist() == [-2, -1, 1, 0]
    assert messages == [
        "g.csv: 1 item(s) have a gold label that is not among the votes' labels ['cat', 'dog']: "
        "'fish' (1 item); their gold is left out of accuracy",
        "g.csv: 1 gold row(s) name items without votes and were not used (e.g. '99')"]
    assert votes.n_gold_without_votes == 1
    assert tabular._gold_table(tmp_path / "g.csv", None, ()).ints.tolist() == [12, 99, 7, 0, 3]


@pytest.mark.parametrize("ids", [
    ["3", "7", "7", "12"],  # sorted
    ["12", "7", "3", "7"],  # dense range
    ["1000000000000", "7", "-5", "7"],  # a range far wider than the file: a hash table
], ids=["sorted", "dense", "sparse"])
def test_a_repeated_integer_gold_id_is_refused_naming_it(tmp_path, ids):
    gold = "item,gold\n" + "".join(f"{i},cat\n" for i in ids)
    for text in (False, True):
        with pytest.raises(DataFormatError, match=r"^g.csv: item '7' has more than one gold row$"):
            _read(tmp_path, gold, text=text)


@pytest.mark.parametrize("spelling", ["07", "-0", "00", "0x7", "0X7", "-07", "+7", "7.0", "1e1"])
@pytest.mark.parametrize("row", ["first", "later"])
def test_gold_ids_spelled_otherwise_are_other_ids(tmp_path, spelling, row):
    # votes name 7, 0 and 12; a gold id spelled "07" (or "-0", "0x7", ...) names none of them
    rows = [f"{spelling},dog", "12,cat"]
    gold = "item,gold\n" + "\n".join(rows if row == "first" else rows[::-1]) + "\n"
    votes, messages = _same_as_text(tmp_path, gold)
    assert tabular._gold_table(tmp_path / "g.csv", None, ()).ints is None
    assert votes.gold.tolist() == [-1, -1, 0, -1]
    assert messages == [f"g.csv: 1 gold row(s) name items without votes and were not used "
                        f"(e.g. {spelling!r})"]


@pytest.mark.parametrize("spelling", ["07", "-0", "0x7", "+7"])
def test_votes_with_an_id_spelled_otherwise_match_gold_as_text(tmp_path, spelling):
    # the votes' ids are not all canonical integers: integer gold ids are matched as text
    votes = VOTES + f"{spelling},2,dog\n"
    votes_read, messages = _same_as_text(tmp_path, f"item,gold\n7,cat\n{spelling},cat\n", votes)
    assert votes_read.item_ids.tolist() == ["7", "0", "12", "3", spelling]
    assert votes_read.gold.tolist() == [0, -1, -1, -1, 0] and messages == []


@pytest.mark.parametrize("table, ids", [
    ([10, 7, 3], [3, 5, 10, -1, 11, 7]),  # dense: a lookup array
    ([-4, 2**40, 0], [2**40, 0, 5, -4]),  # sparse: pandas' hash table
    ([5], []),
    ([], [1, 2]),
], ids=["dense", "sparse", "no-ids", "empty-table"])
def test_int_positions_equal_a_dictionary_lookup(table, ids):
    where = {v: k for k, v in enumerate(table)}
    got = int_positions(np.array(table, dtype=np.int64), np.array(ids, dtype=np.int64))
    assert got.dtype == np.int64 and got.tolist() == [where.get(i, -1) for i in ids]


@pytest.mark.parametrize("values, repeats", [
    ([1, 2, 3], False), ([3, 1, 2], False), ([3, 1, 3], True), ([1, 1], True), ([5], False),
    ([2**40, -3, 7], False), ([2**40, -3, 2**40], True),
])
def test_has_repeats(values, repeats):
    assert has_repeats(np.array(values, dtype=np.int64)) is repeats


def test_integer_arrays_are_looked_up_as_their_text():
    table = np.array(["10", "7", "-3"], dtype=object)
    for ids, expected in ((np.array([7, -3, 8]), [1, 2, -1]),
                          (np.array([7, 253, 10], dtype=np.uint8), [1, -1, 0]),
                          (pa.array([7, -3, 8]), [1, 2, -1]),
                          (pa.chunked_array([[7], [-3, 8]]), [1, 2, -1])):
        assert id_positions(table, ids).tolist() == expected
    # among ids that are not all canonical integers, 7 is the text "7", never "07"
    assert id_positions(np.array(["07", "7"], dtype=object), np.array([7])).tolist() == [1]
    assert id_positions(np.array(["07"], dtype=object), pa.array([7])).tolist() == [-1]
    assert id_positions(table, np.array([2**63 + 7], dtype=np.uint64)).tolist() == [-1]
    assert id_positions(table, (i for i in (7, "10"))).tolist() == [1, 0]  # any iterable


SPELLINGS = ["07", "-0", "00", "-07", "0x7", "0X1f", "+7", " 7", "7 ", "\t7", "7.0", "1e1", "", "x"]


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("at", [0, 1, 5], ids=["first", "second", "last"])
def test_canonical_ints_refuse_every_other_spelling(spelling, at):
    ids = ["12", "0", "-3", "4", "10", "9"]
    ids[at] = spelling
    for arr in (pa.array(ids), pa.array(ids, pa.large_string()),
                pa.chunked_array([ids[:2], ids[2:]]), pa.array(["5", *ids]).slice(1)):
        assert canonical_ints(arr) is None
    assert canonical_ints(pa.array(["12", "0", "-3", "4", "10", "9"])).to_pylist() == [
        12, 0, -3, 4, 10, 9]
    assert canonical_ints(pa.array(["5", "07", "0"]).slice(2)).to_pylist() == [0]


@pytest.mark.parametrize("spelling", ["07", "-0", "00", "-07", "0x7", "0X7", "+7", " 7", "7 "])
@pytest.mark.parametrize("role", ["item", "annotator"])
@pytest.mark.parametrize("row", [0, 3])
@pytest.mark.parametrize("kind, newline", [("csv", "\n"), ("csv", "\r\n"), ("tsv", "\n"),
                                           ("tsv", "\r\n")])
def test_ids_spelled_otherwise_stay_apart_from_the_integer(tmp_path, spelling, role, row, kind,
                                                           newline):
    # the Arrow path (integer ids coded as integers) reads what the general reader reads
    rows = [["7", "7", "cat"], ["7", "8", "dog"], ["0", "7", "dog"], ["12", "0", "cat"],
            ["3", "8", "cat"]]
    rows[row][0 if role == "item" else 1] = spelling
    sep = "," if kind == "csv" else "\t"
    f = tmp_path / f"v.{kind}"
    f.write_text(newline.join(sep.join(r) for r in [["item", "annotator", "label"], *rows])
                 + newline, newline="")
    assert read_csv_arrow(Input(f, what="votes"), kind) is not None  # the Arrow path reads it
    fast, general = read_votes(f), read_votes(f, sep=sep)
    assert fast == general
    ids = (fast.item_ids if role == "item" else fast.annotator_ids).tolist()
    assert spelling in ids and "7" in ids
