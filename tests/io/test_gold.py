"""Gold labels: coded against the votes' labels, never adding one (annokit.core.gold and the
gold path of annokit.io.tabular)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from annokit.core.gold import (
    GoldAccuracy,
    describe_accuracy,
    encode_gold,
    factorize_gold,
    gold_accuracy,
    gold_value_codes,
    item_gold,
)
from annokit.core.ids import id_positions
from annokit.core.labels import LabelSet
from annokit.core.votes import Votes
from annokit.errors import DegenerateInputWarning, InputError, SchemaError
from annokit.io import read_gold, read_votes, votes_table

VOTES = "item,annotator,label\r\nq1,a,cat\r\nq1,b,dog\r\nq2,a,dog\r\nq2,b,dog\r\nq3,a,cat\r\nq3,b,cat\r\n"
# as a spreadsheet writes a hand-typed list: capitals, a space after the comma, CRLF
GOLD = "item,gold\r\nq1,Cat\r\nq2, Dog\r\nq3,cat\r\nq9,fish\r\n"
UNKNOWN = ("g.csv: 2 item(s) have a gold label that is not among the votes' labels ['cat', 'dog']: "
           "'Cat' (1 item), ' Dog' (1 item); their gold is left out of accuracy; gold 'Cat' "
           "matches label 'cat' but for case; gold ' Dog' matches label 'dog' but for case and "
           "surrounding spaces (correct their spelling in the gold to match)")
VOTELESS = "g.csv: 1 gold row(s) name items without votes and were not used (e.g. 'q9')"


def _read(tmp_path, votes=VOTES, gold=GOLD, **kw):
    (tmp_path / "v.csv").write_text(votes, newline="")
    (tmp_path / "g.csv").write_text(gold, newline="")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = read_votes(tmp_path / "v.csv", gold=tmp_path / "g.csv", **kw)
    return out, [str(w.message) for w in caught if issubclass(w.category, DegenerateInputWarning)]


def test_a_gold_file_in_other_case_never_adds_labels(tmp_path):
    votes, messages = _read(tmp_path)
    assert votes.labels.names == ("cat", "dog")
    assert votes.gold.tolist() == [-2, -2, 0]  # Cat, ' Dog': not labels; cat: label 0
    assert messages == [UNKNOWN, VOTELESS]
    assert votes.n_gold_without_votes == 1


def test_a_voteless_gold_row_naming_an_unknown_label_adds_nothing(tmp_path):
    votes, messages = _read(tmp_path, gold="item,gold\nq1,cat\nq2,dog\nq9,fish\n")
    assert votes.labels.names == ("cat", "dog") and votes.gold.tolist() == [0, 1, -1]
    assert messages == [VOTELESS]  # 'fish' is on a voteless row: counted there only


def test_gold_in_a_column_of_the_votes_file_behaves_alike(tmp_path):
    text = ("item,annotator,label,gold\nq1,a,cat,Cat\nq1,b,dog,\nq2,a,dog, Dog\nq2,b,dog, Dog\n"
            "q3,a,cat,cat\nq3,b,cat,\n")
    (tmp_path / "v.csv").write_text(text)
    (tmp_path / "q.csv").write_text(text.replace("q1,a,cat,Cat", 'q1,a,"cat",Cat'))
    for name in ("v.csv", "q.csv"):  # Arrow's CSV path, and (quotes) the general reader
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            votes = read_votes(tmp_path / name)
        assert votes.labels.names == ("cat", "dog") and votes.gold.tolist() == [-2, -2, 0]
        assert [str(w.message) for w in caught] == [
            UNKNOWN.replace("g.csv:", f"{name}, column 'gold':")]


def test_gold_that_differs_within_an_item_is_refused_with_its_text(tmp_path):
    (tmp_path / "v.csv").write_text("item,annotator,label,gold\nq1,a,cat,cat\nq1,b,dog,Cat\n")
    with pytest.raises(SchemaError, match=r"^v.csv, column 'gold': gold must be the same on every "
                                          r"row of an item; item 'q1' has 'cat' and 'Cat' \(line 3\)$"):
        read_votes(tmp_path / "v.csv")


def test_accuracy_is_stated_with_its_denominator(tmp_path):
    from annokit.quality.aggregate import aggregate
    from annokit.quality.dataset_stats import dataset_stats

    votes, _ = _read(tmp_path)
    agg = aggregate(votes)
    assert (agg.accuracy, agg.n_gold, agg.n_gold_unknown) == (1.0, 1, 2)
    assert agg.summary()["n_gold_unknown_label"] == 2
    assert agg.gold_note() == "1.0000 on 1 of 3 gold items (2 gold labels not among the votes' labels)"
    gold = dataset_stats(votes, n_boot=0)["gold"]
    assert gold == {"n_items": 1, "majority_accuracy": 1.0, "n_tied": 0, "tie_policy": "first",
                    "n_unknown_label": 2}


def test_written_votes_leave_unknown_gold_blank_and_say_so(tmp_path):
    votes, _ = _read(tmp_path)
    with pytest.warns(DegenerateInputWarning, match=r"^v.csv: 2 item\(s\) have a gold label that is "
                      r"not among the votes' labels; it is written as missing \(no gold\)$"):
        table = votes_table(votes)
    assert table["gold"].tolist() == ["", "", "", "", "cat", "cat"]


def test_separate_gold_file_is_coded_after_the_scale(tmp_path):
    votes, messages = _read(tmp_path, votes="item,annotator,label\nq1,a,10\nq1,b,2\nq2,a,2\n",
                            gold="item,gold\nq1,10\nq2,2.0\n", scale="ordinal")
    assert votes.labels.names == ("2", "10") and votes.labels.scale == "ordinal"
    assert votes.gold.tolist()[0] == 1  # coded against the scaled (numerically ordered) labels
    assert all("'2.0'" in m and "is the number of label '2'" in m for m in messages)


def test_read_gold_gives_label_text_by_item(tmp_path):
    (tmp_path / "g.csv").write_text("question,truth\n7,x\n8,\n9, y\n")
    gold = read_gold(tmp_path / "g.csv")
    assert gold.to_dict() == {"7": "x", "9": " y"} and gold.attrs["source"] == "g.csv"
    (tmp_path / "d.csv").write_text("item,gold\n1,x\n1,y\n")
    with pytest.raises(Exception, match=r"^d.csv: item '1' has more than one gold row$"):
        read_gold(tmp_path / "d.csv")


@pytest.mark.parametrize("values, codes", [
    (["cat", "Cat", "", None, "fish", " ", np.nan], [0, -2, -1, -1, -2, -1, -1]),
    ([1, 2.0, "1", 3], [0, 1, 0, -2]),
    (pd.Series(["b", "a"], dtype="category"), [1, 0]),
])
def test_encode_gold(values, codes):
    labels = LabelSet(["cat", "dog"]) if "cat" in list(values) else LabelSet(["1", "2"])
    if isinstance(values, pd.Series):
        labels = LabelSet(["a", "b"])
    assert encode_gold(values, labels).tolist() == codes


def test_aliases_are_spellings_and_case_is_not():
    labels = LabelSet(["entailment", "neutral"], aliases={"e": "entailment"})
    assert gold_value_codes(["e", "E", "entailment", "Neutral"], labels).tolist() == [0, -2, 0, -2]


def test_item_gold_counts_unknown_values_per_item():
    index, distinct = factorize_gold(["x", "", "zz", "zz", "y", "zz"])
    labels = LabelSet(["x", "y"])
    gold, unknown = item_gold(gold_value_codes(distinct, labels), index, distinct,
                              np.array([0, 0, 1, 1, 2, 3]), 5, labels, where="w")
    assert gold.tolist() == [0, -2, 1, -2, -1]
    assert unknown.values == (("zz", 2),)


def test_item_gold_of_distinct_items_equals_the_general_computation():
    # a gold file (items distinct: repeats are refused) skips the same-gold-per-item comparison
    rng = np.random.default_rng(1)
    index, distinct = factorize_gold(rng.choice(["x", "y", "", "zz", "w"], 300))
    labels = LabelSet(["x", "y"])
    items = rng.permutation(400)[:300]
    general = item_gold(gold_value_codes(distinct, labels), index, distinct, items, 400, labels,
                        where="w")
    fast = item_gold(gold_value_codes(distinct, labels), index, distinct, items, 400, labels,
                     where="w", distinct_items=True)
    assert fast[0].tolist() == general[0].tolist() and fast[1] == general[1]
    assert fast[1].values == general[1].values and len(fast[1].values) == 2


def test_a_gold_series_naming_an_item_twice_is_still_compared():
    from annokit.io import attach_gold

    votes = Votes.from_long(pd.DataFrame({"item": [7, 8], "annotator": ["a", "a"],
                                          "label": ["cat", "dog"]}))
    twice = pd.Index([7, "7"], dtype=object)  # one item id, spelled two ways
    assert attach_gold(votes, pd.Series(["cat", "cat"], index=twice)).gold.tolist() == [0, -1]
    with pytest.raises(SchemaError, match="gold must be the same on every row of an item"):
        attach_gold(votes, pd.Series(["cat", "dog"], index=twice))


def test_gold_accuracy_counts_unknown_gold_beside_the_denominator():
    acc = gold_accuracy(np.array([0, 1, 1, 0, 1]), np.array([0, 0, -2, -1, 1]))
    assert (acc.n_right, acc.n_items, acc.n_unknown, acc.accuracy) == (2, 3, 1, 2 / 3)
    assert acc + acc == GoldAccuracy(4, 6, 2)
    assert describe_accuracy(0.912, 95, 5) == (
        "0.9120 on 95 of 100 gold items (5 gold labels not among the votes' labels)")
    assert describe_accuracy(0.5, 4, 0, "1 tied") == "0.5000 on 4 gold items (1 tied)"
    assert describe_accuracy(None, 0, 3) == "n/a (none of the 3 gold labels is among the votes' labels)"
    assert describe_accuracy(None, 0, 0) == "n/a (no gold)"


def test_item_positions_compare_ids_as_text():
    v = Votes.from_long(pd.DataFrame({"item": [10, 7, 3], "label": ["x", "y", "x"]}),
                        annotator=None)
    assert v.item_positions([7, "3", 3.0, "07", 99]).tolist() == [1, 2, 2, -1, -1]
    assert v.item_positions(pd.Index(["10", "3"])).tolist() == [0, 2]
    assert id_positions(np.array(["a", "b"], dtype=object), []).tolist() == []


def test_fast_csv_reads_what_the_general_reader_reads(tmp_path):
    rng = np.random.default_rng(0)
    n = 2000
    df = pd.DataFrame({"item": rng.integers(0, 300, n).astype(str),
                       "annotator": np.char.add("w", rng.integers(0, 40, n).astype(str)),
                       "label": rng.choice(["pos", "neg", " neu", "10", "9"], n)})
    df = df.drop_duplicates(["item", "annotator"]).reset_index(drop=True)
    df.to_csv(tmp_path / "v.csv", index=False)
    df.to_csv(tmp_path / "v.tsv", index=False, sep="\t")
    general = Votes.from_long(df, source="v.csv")
    for name in ("v.csv", "v.tsv"):
        fast = read_votes(tmp_path / name)
        assert fast == general
        assert fast.read_info == (f"{name}: long table ({name[-3:]}); columns item='item', "
                                  "annotator='annotator', label='label'")


def test_integer_ids_are_matched_as_written(tmp_path):
    # "07" and "7" are different ids; integers written canonically take the integer path
    (tmp_path / "v.csv").write_text("item,annotator,label\n7,1,x\n07,1,y\n-3,2,x\n")
    (tmp_path / "g.csv").write_text("item,gold\n7,x\n-3,x\n")
    votes = read_votes(tmp_path / "v.csv", gold=tmp_path / "g.csv")
    assert votes.item_ids.tolist() == ["7", "07", "-3"] and votes.gold.tolist() == [0, -1, 0]
    assert votes.annotator_ids.tolist() == ["1", "2"]
    assert id_positions(np.array(["7", "07", "-3"], dtype=object), ["07", 7, "+7"]).tolist() == [
        1, 0, -1]
    # Arrow reads "0x7" as 7: such text stays text
    assert id_positions(np.array(["7", "0x7"], dtype=object), ["0x7", "7", "-0"]).tolist() == [
        1, 0, -1]
    canonical = read_votes(tmp_path / "v.csv")
    assert canonical == Votes.from_long(pd.read_csv(tmp_path / "v.csv", dtype=str), source="v.csv")


def test_a_dataframe_with_gold_in_another_case_keeps_the_votes_labels():
    df = pd.DataFrame({"item": ["q1", "q1", "q2"], "annotator": ["a", "b", "a"],
                       "label": ["cat", "dog", "dog"], "gold": ["Cat", "Cat", "dog"]})
    with pytest.warns(DegenerateInputWarning, match=r"^DataFrame, column 'gold': 1 item\(s\) have a "
                      r"gold label that is not among the votes' labels \['cat', 'dog'\]: 'Cat' "
                      r"\(1 item\)"):
        votes = read_votes(df)
    assert votes.labels.names == ("cat", "dog") and votes.gold.tolist() == [-2, 1]


def test_a_gold_file_fills_the_gold_column_and_a_clash_is_refused(tmp_path):
    (tmp_path / "v.csv").write_text("item,annotator,label,gold\n0,a,x,x\n0,b,y,x\n1,a,x,\n"
                                    "2,a,y,y\n")
    (tmp_path / "fill.csv").write_text("item,gold\n1,y\n2,y\n")
    votes = read_votes(tmp_path / "v.csv", gold=tmp_path / "fill.csv")
    assert votes.gold.tolist() == [0, 1, 1]
    (tmp_path / "clash.csv").write_text("item,gold\n0,y\n2,x\n")
    with pytest.raises(InputError, match=r"^clash\.csv: item '0' has gold 'y', but the gold column "
                       r"of .*v\.csv gives 'x' \(2 item\(s\) differ\); keep one gold source: drop "
                       r"--gold, or correct one of the two files$"):
        read_votes(tmp_path / "v.csv", gold=tmp_path / "clash.csv")
