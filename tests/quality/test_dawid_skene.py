"""Dawid-Skene and one-coin EM: crowd-kit's step-by-step fixture, the pairing of parameters
with posteriors, converged_, and the stopping rule against a loop transcription."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import xlogy

from annokit.core.votes import Votes
from annokit.errors import AnnokitWarning, ConvergenceWarning
from annokit.io import read_votes
from annokit.quality import DawidSkene, OneCoinDawidSkene

from _vote_sets import synthetic

# -- crowd-kit's one-step fixture -------------------------------------------------------------

# Toloka/crowd-kit, tests/aggregation/test_ds_aggregation.py: the `data` fixture (5 tasks,
# 5 workers, t1 without w3) and the expected state after one EM iteration
# (`probas_iter_1`, `priors_iter_1`, `errors_iter_1`, `tasks_labels_iter_1`), compared there
# with atol=0.005. crowd-kit's errors_[(worker, observed), true] is confusions_[j, true, observed].
_CK_VOTES = ("t1 w1 no,t1 w2 yes,t1 w4 yes,t1 w5 no,t2 w1 yes,t2 w2 yes,t2 w3 yes,t2 w4 no,"
             "t2 w5 no,t3 w1 yes,t3 w2 no,t3 w3 no,t3 w4 yes,t3 w5 no,t4 w1 yes,t4 w2 yes,"
             "t4 w3 yes,t4 w4 yes,t4 w5 yes,t5 w1 yes,t5 w2 no,t5 w3 no,t5 w4 no,t5 w5 no")
_CK_PROBAS_ITER_1 = {"t1": [0.35, 0.65], "t2": [0.26, 0.74], "t3": [0.87, 0.13],
                     "t4": [0.00, 1.00], "t5": [0.95, 0.05]}
_CK_PRIORS_ITER_1 = [0.49, 0.51]
_CK_ERRORS_ITER_1 = {  # worker: [[P(no | no), P(yes | no)], [P(no | yes), P(yes | yes)]]
    "w1": [[0.14, 0.86], [0.25, 0.75]], "w2": [[0.75, 0.25], [0.07, 0.93]],
    "w3": [[0.87, 0.13], [0.09, 0.91]], "w4": [[0.50, 0.50], [0.31, 0.69]],
    "w5": [[1.00, 0.00], [0.61, 0.39]],
}
_CK_LABELS_ITER_1 = {"t1": "yes", "t2": "yes", "t3": "no", "t4": "yes", "t5": "no"}


def _crowdkit_fixture_votes() -> Votes:
    rows = [vote.split() for vote in _CK_VOTES.split(",")]
    return Votes.from_long(pd.DataFrame(rows, columns=["item", "annotator", "label"]),
                           labels=["no", "yes"])


@pytest.mark.parametrize("n_iter", [pytest.param(1, id="crowdkit_test_dawid_skene_step_by_step_1")])
def test_one_iteration_matches_crowdkit_step_by_step_fixture(n_iter):
    votes = _crowdkit_fixture_votes()
    with pytest.warns(ConvergenceWarning, match="stopped after 1 iterations"):
        ds = DawidSkene(max_iter=n_iter, smoothing=0.0).fit(votes)
    items, annotators = list(votes.item_ids), list(votes.annotator_ids)
    assert not ds.converged_ and ds.n_iter_ == 1
    np.testing.assert_allclose(ds.posteriors_, [_CK_PROBAS_ITER_1[i] for i in items], atol=0.005)
    # the priors re-estimated from these posteriors, not the starting [0.46, 0.54]
    np.testing.assert_allclose(ds.priors_, _CK_PRIORS_ITER_1, atol=0.005)
    np.testing.assert_allclose(ds.confusions_, [_CK_ERRORS_ITER_1[a] for a in annotators],
                               atol=0.005)
    assert ds.labels_.tolist() == [_CK_LABELS_ITER_1[i] for i in items]


# -- a loop transcription of the model and of annokit's stopping rule ----------------------------

def _item_votes(votes: Votes) -> list[list[tuple[int, int]]]:
    out: list[list[tuple[int, int]]] = [[] for _ in range(votes.n_items)]
    for i, a, lab in zip(votes.item_index, votes.annotator_index, votes.label_index, strict=True):
        out[i].append((int(a), int(lab)))
    return out


def _m_step(item_votes, post, n_labels, n_ann, a, one_coin):
    """Dawid and Skene (1979) eqs. 2.3 and 2.5 with ``a`` pseudo-counts, per vote; or the
    one-coin skill (expected share of correct votes). Returns priors, confusions, skills,
    the expected counts C[j, k, l] and the log prior of the pseudo-counts."""
    priors = post.sum(axis=0) + a
    priors = priors / priors.sum()
    counts = np.zeros((n_ann, n_labels, n_labels))
    for i, votes in enumerate(item_votes):
        for j, lab in votes:
            counts[j, :, lab] += post[i]
    skills = None
    if one_coin:
        correct = np.einsum("jkk->j", counts)
        n = counts.sum(axis=(1, 2))
        skills = np.clip((correct + a) / (n + 2 * a), 1e-12, 1 - 1e-12)
        off = (1 - skills) / (n_labels - 1)
        conf = np.where(np.eye(n_labels, dtype=bool), skills[:, None, None], off[:, None, None])
        log_prior = a * (np.log(skills).sum() + np.log(1 - skills).sum() + np.log(priors).sum())
    else:
        conf = counts + a
        totals = conf.sum(axis=2, keepdims=True)
        conf = np.where(totals > 0, conf / np.where(totals > 0, totals, 1), 1.0 / n_labels)
        log_prior = a * (np.log(conf).sum() + np.log(priors).sum()) if a > 0 else 0.0
    return priors, conf, skills, counts, log_prior


def _reference_em(item_votes, n_labels, n_ann, *, tol, max_iter=100, a=0.0, one_coin=False):
    """EM from the vote distributions: an M-step, then (E-step, M-step) per iteration; after
    each M-step the objective per vote, written over expected counts,
    ``(sum_k N_k log p_k + sum_jkl C_jkl log pi_jkl + H(q) + log prior) / n_votes`` with
    ``0 log 0 = 0``; stop when it changes by less than ``tol``. Returns the last E-step's
    posteriors, the parameters of the M-step after it, the iteration count and convergence."""
    n_votes = sum(len(v) for v in item_votes)
    post = np.zeros((len(item_votes), n_labels))
    for i, votes in enumerate(item_votes):
        for _, lab in votes:
            post[i, lab] += 1.0 / len(votes)

    def objective(post, fitted):
        priors, conf, _, counts, log_prior = fitted
        value = xlogy(post.sum(axis=0), priors).sum() + xlogy(counts, conf).sum()
        value -= xlogy(post, post).sum()
        return (value + log_prior) / n_votes

    fitted = _m_step(item_votes, post, n_labels, n_ann, a, one_coin)
    prev = objective(post, fitted)
    for it in range(1, max_iter + 1):
        priors, conf = fitted[0], fitted[1]
        with np.errstate(divide="ignore"):                  # log 0 = -inf is meant
            joint = np.tile(np.log(priors), (len(item_votes), 1))
            for i, votes in enumerate(item_votes):
                for j, lab in votes:
                    joint[i] += np.log(conf[j, :, lab])
        post = np.exp(joint - joint.max(axis=1, keepdims=True))
        post /= post.sum(axis=1, keepdims=True)
        fitted = _m_step(item_votes, post, n_labels, n_ann, a, one_coin)
        value = objective(post, fitted)
        if abs(value - prev) < tol:
            return post, fitted, it, True
        prev = value
    return post, fitted, max_iter, False


@pytest.mark.parametrize("one_coin", [False, True], ids=["dawid_skene", "one_coin"])
@pytest.mark.parametrize("smoothing", [0.0, 0.01])
def test_em_matches_a_loop_transcription_of_its_stopping_rule(one_coin, smoothing):
    votes, _ = synthetic(n_items=60, n_ann=8, per_item=4, seed=31)
    ref_post, (ref_priors, ref_conf, ref_skills, _, _), ref_iter, ref_conv = _reference_em(
        _item_votes(votes), votes.n_labels, votes.n_annotators, tol=1e-5, a=smoothing,
        one_coin=one_coin)
    model = (OneCoinDawidSkene if one_coin else DawidSkene)(smoothing=smoothing, tol=1e-5)
    model.fit(votes)
    assert ref_conv and model.converged_ and model.n_iter_ == ref_iter > 2
    np.testing.assert_allclose(model.posteriors_, ref_post, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.priors_, ref_priors, rtol=1e-9)
    np.testing.assert_allclose(model.confusions_, ref_conf, rtol=1e-9, atol=1e-12)
    if one_coin:
        np.testing.assert_allclose(model.skills_, ref_skills, rtol=1e-9)


def test_stopping_rule_ignores_underflowed_confusion_cells(shared_data):
    # dog without smoothing: at iteration 3 a posterior of ~1e-320 gives a confusion cell that
    # underflows to 0, and q * log 0 made the objective -inf, a "change" below tol at which EM
    # reported convergence (iteration 4 of the old count) though the likelihood still rose.
    votes = read_votes(shared_data("dog", "answer.csv"), gold=shared_data("dog", "truth.csv"))
    ds = DawidSkene(smoothing=0.0).fit(votes)
    _, _, ref_iter, ref_conv = _reference_em(_item_votes(votes), votes.n_labels,
                                             votes.n_annotators, tol=1e-5)
    assert ds.converged_ and ref_conv and ds.n_iter_ == ref_iter == 10


# -- parameters and posteriors of the same iteration; converged_ -------------------------------

@pytest.mark.parametrize("cls", [DawidSkene, OneCoinDawidSkene])
@pytest.mark.parametrize("max_iter, tol", [(1, 0.0), (3, 0.0), (3, 1e-5), (100, 1e-5)])
@pytest.mark.parametrize("smoothing", [0.0, 0.01])
def test_parameters_are_re_estimated_from_the_final_posteriors(cls, max_iter, tol, smoothing):
    votes, _ = synthetic(seed=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = cls(max_iter=max_iter, tol=tol, smoothing=smoothing).fit(votes)
    priors, conf, skills, _, _ = _m_step(_item_votes(votes), model.posteriors_, votes.n_labels,
                                         votes.n_annotators, smoothing, cls is OneCoinDawidSkene)
    np.testing.assert_allclose(model.priors_, priors, rtol=1e-12)
    np.testing.assert_allclose(model.confusions_, conf, rtol=1e-12, atol=1e-15)
    if skills is not None:
        np.testing.assert_allclose(model.skills_, skills, rtol=1e-12)
    # log_likelihood_ is the marginal likelihood at those parameters (eq. 2.4)
    log_lik = np.log(model.priors_)[None, :].repeat(votes.n_items, axis=0)
    for i, j, lab in zip(votes.item_index, votes.annotator_index, votes.label_index, strict=True):
        log_lik[i] += np.log(model.confusions_[j, :, lab])
    expected = np.logaddexp.reduce(log_lik, axis=1).sum()
    assert model.log_likelihood_ == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("cls", [DawidSkene, OneCoinDawidSkene])
def test_converged_only_when_the_criterion_was_met(cls):
    votes, _ = synthetic(seed=6)
    with pytest.warns(ConvergenceWarning, match="stopped after 1 iterations without converging"):
        one = cls(max_iter=1).fit(votes)
    assert not one.converged_ and one.n_iter_ == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", AnnokitWarning)     # tol=0: a fixed count, no warning
        fixed = cls(max_iter=40, tol=0).fit(votes)
    assert not fixed.converged_ and fixed.n_iter_ == 40
    done = cls().fit(votes)
    assert done.converged_ and 1 < done.n_iter_ < 100
    # one iteration fewer has not met the criterion: it reports that, with a warning
    with pytest.warns(ConvergenceWarning):
        short = cls(max_iter=done.n_iter_ - 1).fit(votes)
    assert not short.converged_
    # the same iterates: stopping early changes nothing but the count
    again = cls(max_iter=done.n_iter_, tol=0).fit(votes)
    np.testing.assert_array_equal(again.posteriors_, done.posteriors_)
    np.testing.assert_array_equal(again.priors_, done.priors_)

