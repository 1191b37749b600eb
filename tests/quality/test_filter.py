"""Annotator statistics, the Raykar-Yu spammer score, and the audited filter."""

from __future__ import annotations

import itertools
import json
import warnings

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annokit.core.votes import Votes
from annokit.errors import AnnokitWarning, DegenerateInputWarning, VoteSchemaError
from annokit.io import read_votes
from annokit.quality import (
    DawidSkene,
    SpammerScore,
    annotator_scores,
    annotator_stats,
    filter_annotators,
    krippendorff_alpha_nominal,
    max_consecutive_wrong,
    spammer_score,
)

from _vote_sets import synthetic, vote_sets


def reliability(votes: Votes, drop: int | None = None) -> np.ndarray:
    data = np.full((votes.n_annotators, votes.n_items), np.nan)
    keep = np.ones(votes.n_votes, bool) if drop is None else votes.annotator_index != drop
    data[votes.annotator_index[keep], votes.item_index[keep]] = votes.label_index[keep]
    return data


# -- statistics --------------------------------------------------------------------------------

@settings(max_examples=50, deadline=None)
@given(vote_sets(max_labels=3))
def test_alpha_and_alpha_without_each_annotator_match_krippendorff_package(votes):
    data = reliability(votes)
    pairable = (np.isfinite(data).sum(axis=0) >= 2)
    values = data[:, pairable][np.isfinite(data[:, pairable])]
    if len(np.unique(values)) < 2:
        return  # alpha undefined (no variation); the package raises, we return NaN
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert krippendorff_alpha_nominal(votes) == pytest.approx(ref, abs=1e-9)
    table = annotator_stats(votes)
    for j in range(votes.n_annotators):
        d = reliability(votes, drop=j)
        pair = np.isfinite(d).sum(axis=0) >= 2
        vals = d[:, pair][np.isfinite(d[:, pair])]
        if len(np.unique(vals)) < 2:
            continue
        ref_j = krippendorff.alpha(reliability_data=d, level_of_measurement="nominal")
        assert table.alpha_without[j] == pytest.approx(ref_j, abs=1e-9)


@settings(max_examples=50, deadline=None)
@given(vote_sets())
def test_annotator_stats_match_a_direct_loop(votes):
    table = annotator_stats(votes, alpha=False)
    counts = votes.counts()
    for j in range(votes.n_annotators):
        mine = np.flatnonzero(votes.annotator_index == j)
        pairs, loo = [], []
        for v in mine:
            i, a = votes.item_index[v], votes.label_index[v]
            others = counts[i].copy()
            others[a] -= 1
            if others.sum() == 0:
                continue
            pairs.append(others[a] / others.sum())
            top = np.flatnonzero(others == others.max())
            loo.append((a in top) / len(top))
        if pairs:
            assert table.agreement[j] == pytest.approx(np.mean(pairs))
            assert table.loo_majority_agreement[j] == pytest.approx(np.mean(loo))
        else:
            assert np.isnan(table.agreement[j])
        assert table.n_votes[j] == len(mine)


def test_label_entropy_and_gold_accuracy():
    df = pd.DataFrame({"item": list("abcdabcd"), "annotator": list("xxxxyyyy"),
                       "label": list("11110101"), "gold": list("01010101")})
    table = annotator_stats(Votes.from_long(df, gold="gold"))
    assert table.label_entropy.tolist() == [0.0, 1.0]         # x always says 1
    assert table.gold_accuracy.tolist() == [0.5, 1.0]
    assert table.n_gold.tolist() == [4, 4]


def test_max_consecutive_wrong_follows_vote_order():
    # annotator x: wrong, wrong, right, wrong, wrong, wrong (in file order, interleaved with y)
    rows = [("a", "x", "1"), ("a", "y", "0"), ("b", "x", "1"), ("c", "x", "0"), ("d", "x", "1"),
            ("b", "y", "1"), ("e", "x", "1"), ("f", "x", "1"), ("g", "x", "1"), ("c", "y", "1")]
    df = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    gold = {"a": "0", "b": "0", "c": "0", "d": "0", "e": "0", "f": "0", "g": "1"}
    votes = Votes.from_long(df)
    assert max_consecutive_wrong(votes, gold).tolist() == [3, 2]
    assert annotator_stats(votes, gold=gold).max_consecutive_wrong.tolist() == [3, 2]


def test_spammer_score_matches_the_pairwise_definition():
    rng = np.random.default_rng(0)
    conf = rng.dirichlet(np.ones(4), size=(6, 4))
    k = 4
    ref = [sum(((conf[j, c] - conf[j, d]) ** 2).sum() for c, d in itertools.combinations(range(k), 2))
           / (k * (k - 1)) for j in range(6)]
    np.testing.assert_allclose(spammer_score(conf), ref)
    sens, spec = 0.9, 0.7    # binary: (sensitivity + specificity - 1)^2, Raykar and Yu (2012)
    assert spammer_score([[[spec, 1 - spec], [1 - sens, sens]]])[0] == pytest.approx(0.36)


@pytest.mark.parametrize("conf, match", [
    (np.ones((2, 2)), r"confusions must have shape \(n_annotators, n_labels, n_labels\); got \(2, 2\)"),
    (np.ones((1, 1, 1)), "the spammer score needs at least two labels"),
    (-np.ones((1, 2, 2)), "confusions must be finite and non-negative"),
])
def test_spammer_score_rejects_bad_input(conf, match):
    with pytest.raises(VoteSchemaError, match=match):
        spammer_score(conf)


def test_spammer_score_estimator_ranks_spammers_lowest():
    votes, _ = synthetic(seed=11)
    s = SpammerScore().fit(votes)
    assert set(np.argsort(s.scores_)[:2]) == {0, 1}

    class NoConfusions:
        def fit(self, votes):
            return self

    with pytest.raises(VoteSchemaError, match="NoConfusions has no confusions_"):
        SpammerScore(NoConfusions()).fit(votes)
    assert isinstance(SpammerScore().fit(votes).estimator_, DawidSkene)


# -- filtering ---------------------------------------------------------------------------------

@settings(max_examples=50, deadline=None)
@given(vote_sets(), st.sampled_from(["agreement", "ds", "onecoin", "entropy"]),
       st.floats(0.05, 0.6))
def test_filter_twice_changes_nothing(votes, method, threshold):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AnnokitWarning)
        try:
            once, _audit1 = filter_annotators(votes, method=method, threshold=threshold)
        except VoteSchemaError as exc:
            assert "would remove every annotator" in str(exc)
            return
        twice, audit2 = filter_annotators(once, method=method, threshold=threshold)
    assert twice.equals(once)
    assert audit2.n_votes_removed == 0 and len(audit2.annotators) == 0


@settings(max_examples=50, deadline=None)
@given(vote_sets(), st.sampled_from(["agreement", "onecoin"]), st.floats(0.05, 0.6))
def test_nothing_is_dropped_without_being_audited(votes, method, threshold):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AnnokitWarning)
        try:
            kept, audit = filter_annotators(votes, method=method, threshold=threshold)
        except VoteSchemaError:
            return
    removed = set(audit.removed_annotators)
    per = dict(zip(votes.annotator_ids, votes.votes_per_annotator(), strict=True))
    assert audit.annotators.n_votes.sum() == audit.n_votes_removed == votes.n_votes - kept.n_votes
    assert sum(per[a] for a in removed) == audit.n_votes_removed
    kept_ann = set(kept.annotator_ids[np.unique(kept.annotator_index)])
    assert kept_ann.isdisjoint(removed)
    assert set(votes.item_ids) - set(kept.item_ids) == set(audit.items_removed)
    assert len(audit.items) == votes.n_items
    finite = np.isfinite(audit.items.tvd)
    assert ((audit.items.tvd[finite] >= 0) & (audit.items.tvd[finite] <= 1 + 1e-12)).all()
    assert (finite == ~audit.items.removed).all()


def test_filter_removes_injected_spammers_and_reports_tvd():
    votes, _ = synthetic(n_items=400, n_ann=20, seed=12, n_spam=4)
    _kept, audit = filter_annotators(votes, method="mace")
    assert set(audit.removed_annotators) >= {"a0", "a1", "a2", "a3"}
    assert audit.summary()["n_items_affected"] == len(audit.items_affected) > 0
    assert audit.summary()["tvd_mean"] > 0
    assert (audit.annotators.score < audit.annotators.threshold).all()
    assert audit.annotators.reason.str.startswith("mace score below").all()
    data = json.loads(json.dumps(audit.to_dict()))
    assert data["n_votes_removed"] == audit.n_votes_removed
    assert {"annotator", "n_votes", "score", "threshold", "reason", "round"} <= set(data["annotators"][0])


def test_a_filter_stopped_by_max_rounds_warns_at_the_caller_and_notes_it():
    votes, _ = synthetic(n_items=400, n_ann=20, seed=12, n_spam=4)
    with pytest.warns(AnnokitWarning, match="stopped after 1 rounds while still flagging") as rec:
        _kept, audit = filter_annotators(votes, method="mace", max_rounds=1)
    assert {w.filename for w in rec if "stopped after" in str(w.message)} == {__file__}
    assert audit.notes == ["stopped after max_rounds=1 rounds without reaching a fixed point"]
    assert audit.rounds == 1 and set(audit.annotators["round"]) == {1}
    assert set(audit.removed_annotators) >= {"a0", "a1", "a2", "a3"}


def test_chaosnli_gold_rule_accuracy_and_wrong_run():
    # w answers 5 gold items: right, then wrong x4 -> accuracy 0.2 and a run of 4;
    # v: 3 of 4 right (0.75, kept); y: 7 of 8 right (kept)
    rows = []
    gold = {}
    for k in range(8):
        gold[f"g{k}"] = "1"
        rows += [(f"g{k}", "x", "1"), (f"g{k}", "y", "1" if k != 3 else "0")]
    rows += [("g0", "w", "1")] + [(f"g{k}", "w", "0") for k in range(1, 5)]
    rows += [("g0", "v", "1"), ("g1", "v", "1"), ("g2", "v", "1"), ("g3", "v", "0")]
    df = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    df["gold"] = df["item"].map(gold)
    votes = Votes.from_long(df, gold="gold", labels=["0", "1"])
    kept, audit = filter_annotators(votes, method="gold")
    assert audit.removed_annotators == ["w"] and kept.n_votes == votes.n_votes - 5
    assert audit.annotators.reason[0] == ("gold accuracy below 0.75 and 4 or more consecutive "
                                          "wrong gold answers")
    _kept, audit = filter_annotators(votes, method="gold", max_wrong_run=1)
    assert sorted(audit.removed_annotators) == ["v", "w", "y"]
    reasons = dict(zip(audit.annotators.annotator, audit.annotators.reason, strict=True))
    assert reasons["y"] == "1 or more consecutive wrong gold answers"


def test_top_fraction_removes_lowest_scores_once():
    votes, _ = synthetic(n_items=300, n_ann=20, seed=13, n_spam=4)
    _kept, audit = filter_annotators(votes, method="onecoin", top_fraction=0.2)
    assert len(audit.annotators) == 4 and audit.rounds == 1
    assert set(audit.removed_annotators) == {"a0", "a1", "a2", "a3"}
    assert audit.threshold == pytest.approx(audit.annotators.score.max())


def test_filter_warns_about_items_left_with_too_few_votes():
    df = pd.DataFrame({"item": list("aabbb"), "annotator": list("xyxyz"),
                       "label": list("10111")})
    votes = Votes.from_long(df)
    with pytest.warns(DegenerateInputWarning, match=r"1 item\(s\) have fewer than 2 votes"):
        _kept, audit = filter_annotators(votes, method="agreement", threshold=0.5)
    # x and y each agree with half of their co-votes (chance-rescaled score 0): both go,
    # item a loses every vote, item b keeps z's single vote
    assert sorted(audit.removed_annotators) == ["x", "y"]
    assert audit.items_removed == ["a"] and audit.items_too_few_votes == ["b"]


@pytest.mark.parametrize("kwargs, match", [
    ({"method": "glad"}, "method must be one of"),
    ({"method": "ds", "threshold": 0.1, "top_fraction": 0.1},
     "give either threshold or top_fraction, not both"),
    ({"method": "ds", "top_fraction": 1.5}, r"top_fraction must be in \(0, 1\); got 1.5"),
    ({"method": "ds", "threshold": float("nan")}, "threshold must be a finite number; got nan"),
    ({"method": "gold"}, "method 'gold' needs gold labels"),
    ({"method": "ds", "max_wrong_run": 3}, "max_wrong_run applies only to method='gold'"),
    ({"method": "ds", "min_votes": 0}, "min_votes must be a positive integer; got 0"),
    ({"method": "agreement", "threshold": 2.0}, "would remove every annotator"),
])
def test_filter_rejects_bad_arguments(kwargs, match):
    votes, _ = synthetic(n_items=40)
    votes.gold = None
    with pytest.raises(VoteSchemaError, match=match):
        filter_annotators(votes, **kwargs)


def test_filter_and_stats_need_annotator_ids():
    votes = Votes.from_counts(np.array([[3, 1], [0, 4]]), labels=["a", "b"])
    with pytest.raises(VoteSchemaError, match="filter_annotators needs annotator ids"):
        filter_annotators(votes, method="ds")
    with pytest.raises(VoteSchemaError, match="annotator_stats needs annotator ids"):
        annotator_stats(votes)


@pytest.mark.parametrize("gold, match", [
    (np.zeros(3, dtype=int), r"gold must have one code per item, shape \(40,\); got \(3,\)"),
    (np.zeros(40), "gold codes must be integers"),
    (np.full(40, 7), r"gold codes must be -1 \(no gold\), -2 \(a gold label not among the "
                     r"labels\) or in range\(3\)"),
    ({"nope": "c0"}, "gold names 1 item"),
])
def test_gold_argument_is_validated(gold, match):
    votes, _ = synthetic(n_items=40)
    with pytest.raises(VoteSchemaError, match=match):
        annotator_scores(votes, "gold", gold=gold)


def test_gold_rule_on_snow_rte(shared_data):
    votes = read_votes(shared_data("snow2008_rte", "rte.standardized.tsv"))
    kept, audit = filter_annotators(votes, method="gold")
    table = annotator_stats(votes, alpha=False)
    expected = set(table.annotator[(table.gold_accuracy < 0.75) | (table.max_consecutive_wrong >= 4)])
    assert set(audit.removed_annotators) == expected
    assert kept.n_votes == votes.n_votes - audit.n_votes_removed
    again, audit2 = filter_annotators(kept, method="gold")
    assert again.equals(kept) and audit2.n_votes_removed == 0


def test_quality_errors_have_their_specific_type():
    from annokit.errors import AlignmentError, InvalidValueError, SchemaError
    from annokit.quality import WeightedMajorityVote, flag_annotators

    df = pd.DataFrame({"item": list("aabb"), "annotator": list("xyxy"), "label": list("1001")})
    votes = Votes.from_long(df)
    with pytest.raises(AlignmentError, match=r"gold names 1 item\(s\) that are not in the votes"):
        filter_annotators(votes, method="gold", gold={"zz": "1"})
    with pytest.raises(InvalidValueError, match="give either threshold or top_fraction, not both"):
        filter_annotators(votes, method="agreement", threshold=0.1, top_fraction=0.5)
    with pytest.raises(SchemaError, match="annotator scoring needs annotator ids"):
        flag_annotators(Votes.from_counts([[1, 1]], labels=["0", "1"]))
    with pytest.raises(SchemaError, match="method 'gold' needs gold labels"):
        flag_annotators(votes, "gold")
    with pytest.raises(SchemaError, match=r"confusions must have shape"):
        spammer_score(np.ones((2, 2)))
    with pytest.raises(SchemaError, match="weights must have one value per annotator"):
        WeightedMajorityVote(weights=[1.0]).fit(votes)
    with pytest.raises(InvalidValueError, match="weights must be finite and >= 0"):
        WeightedMajorityVote(weights=[1.0, -1.0]).fit(votes)


def test_flag_annotators_is_the_first_round_of_the_filter():
    from annokit.quality import flag_annotators

    df = pd.DataFrame({"item": list("aaabbbcccddd"), "annotator": list("xyz" * 4),
                       "label": list("110001111000")})
    votes = Votes.from_long(df)
    flags = flag_annotators(votes, "agreement", threshold=0.25, min_votes=1)  # every verdict
    _kept, audit = filter_annotators(votes, method="agreement", threshold=0.25)
    first = audit.annotators.loc[audit.annotators["round"] == 1, "annotator"].tolist()
    assert flags.table.loc[flags.table.flagged, "annotator"].tolist() == first == ["z"]
    out = flags.to_dict()
    assert (out["method"], out["threshold"], out["n_annotators"], out["n_flagged"]) == (
        "agreement", 0.25, 3, 1)
    z = out["annotators"][2]
    assert {k: z[k] for k in ("annotator", "n_votes", "score", "flagged", "reason")} == {
        "annotator": "z", "n_votes": 4, "score": 0.0, "flagged": True,
        "reason": "agreement score below 0.25"}
    assert set(z) == {"annotator", "n_votes", "score", "flagged", "reason", "alpha_without",
                      "alpha_change"}  # each annotator's influence on alpha


def test_annotator_flags_as_a_frame_and_a_short_repr():
    """Annotator scores indexed by annotator id, for pandas users."""
    from annokit.quality import flag_annotators

    df = pd.DataFrame({"item": list("aaabbbcccddd"), "annotator": list("xyz" * 4),
                       "label": list("110001111000")})
    flags = flag_annotators(Votes.from_long(df), "agreement", threshold=0.25, min_votes=1)
    frame = flags.to_frame()
    assert frame.index.name == "annotator" and list(frame.index) == ["x", "y", "z"]
    assert list(frame.columns) == ["n_votes", "score", "flagged", "reason", "alpha_without",
                                   "alpha_change"]
    assert frame["flagged"].to_dict() == {"x": False, "y": False, "z": True}
    assert repr(flags) == ("AnnotatorFlags(method='agreement', threshold=0.25, n_annotators=3, "
                           "n_flagged=1)")
