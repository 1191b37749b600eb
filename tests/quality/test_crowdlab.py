"""CROWDLAB (Goh, Tkachenko and Mueller 2022, arXiv:2210.06812): the formulas on a hand-sized
example, invariances, input errors, and cleanlab 2.x (``get_label_quality_multiannotator``, a
test-only reference) on real votes with a simulated model."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from annokit.core.votes import Votes
from annokit.errors import InvalidValueError, SchemaError
from annokit.io import read_votes
from annokit.io.synthetic import make_model_probs
from annokit.quality.crowdlab import CrowdLab

from _shared import data_path


def _votes() -> Votes:
    df = pd.DataFrame({"item": list("aaabbbccdd") + ["e"],
                       "annotator": list("xyzxyzxyxz") + ["y"],
                       "label": list("0010111001") + ["0"]})
    return Votes.from_long(df)


PROBS = np.array([[0.7, 0.3], [0.2, 0.8], [0.6, 0.4], [0.5, 0.5], [0.1, 0.9]])


def _oracle(votes: Votes, probs: np.ndarray, consensus: np.ndarray) -> np.ndarray:
    """The posterior of paper section 3 by loops over items and annotators (an independent
    reading of the formulas)."""
    items, labels = votes.item_index, votes.label_index
    annotators = votes.annotator_codes("test")[0]
    n, k = probs.shape
    by_item = [[(int(annotators[v]), int(labels[v])) for v in np.flatnonzero(items == i)]
               for i in range(n)]
    multi = [i for i in range(n) if len(by_item[i]) > 1]
    p_bar = np.mean([sum(lab == consensus[i] for _, lab in by_item[i]) / len(by_item[i])
                     for i in multi])
    common = np.bincount(consensus[multi], minlength=k).argmax()
    e0 = np.mean([consensus[i] != common for i in multi])
    weights = {}
    for j in range(votes.n_annotators):
        num = den = 0.0
        for i in range(n):
            mine = [lab for a, lab in by_item[i] if a == j]
            if mine:
                num += sum(lab == mine[0] for _, lab in by_item[i]) - 1
                den += len(by_item[i]) - 1
        weights[j] = max(1 - (1 - num / den) / e0, 1e-6)
    e_model = np.mean([probs[i].argmax() != consensus[i] for i in multi])
    w_m = max(1 - e_model / e0, 1e-6) * np.sqrt(np.mean([len(b) for b in by_item]))
    post = np.zeros((n, k))
    for i in range(n):
        for c in range(k):
            total = w_m * probs[i, c]
            for a, lab in by_item[i]:
                total += weights[a] * (p_bar if lab == c else (1 - p_bar) / (k - 1))
            post[i, c] = total / (w_m + sum(weights[a] for a, _ in by_item[i]))
    return post


def test_posterior_is_the_papers_weighted_average():
    """Goh et al. (2022) section 3: weights from the baseline error, posterior as the
    weighted average of the model and the votes' likelihoods, at the final consensus."""
    votes = _votes()
    fit = CrowdLab().fit(votes, PROBS)
    np.testing.assert_allclose(fit.posteriors_, _oracle(votes, PROBS, fit.labels_codes_),
                               rtol=1e-12)
    np.testing.assert_allclose(fit.consensus_quality_score_,
                               fit.posteriors_[np.arange(5), fit.labels_codes_])
    np.testing.assert_allclose(fit.posteriors_.sum(axis=1), 1.0)


def test_majority_tie_broken_by_the_model():
    """cleanlab's ``get_majority_vote_label``: a tied majority goes to the model's choice."""
    fit = CrowdLab().fit(_votes(), PROBS)
    assert fit.majority_codes_[2] == 0  # item c: one vote each, the model says 0 (0.6)
    assert fit.majority_codes_[3] == 1  # item d: tied, model 0.5/0.5: the rarer label (5 vs 6)


def test_item_order_and_label_names_do_not_matter():
    """Invariances: permuting items permutes the outputs; renaming labels changes nothing."""
    votes = _votes()
    base = CrowdLab().fit(votes, PROBS)
    order = np.array([4, 2, 0, 3, 1])
    moved = CrowdLab().fit(votes.select_items(order), PROBS[order])
    np.testing.assert_allclose(moved.posteriors_, base.posteriors_[order], rtol=1e-12)
    np.testing.assert_allclose(moved.annotator_quality_score_, base.annotator_quality_score_,
                               rtol=1e-12)


def test_confusion_variant_is_a_distribution():
    fit = CrowdLab(likelihood="confusion").fit(_votes(), PROBS)
    np.testing.assert_allclose(fit.posteriors_.sum(axis=1), 1.0)
    assert fit.labels_codes_.shape == (5,)


def test_errors():
    votes = _votes()
    with pytest.raises(SchemaError, match=r"shape \(n_items, n_labels\) = \(5, 2\)"):
        CrowdLab().fit(votes, PROBS[:4])
    with pytest.raises(InvalidValueError, match="CrowdLab probs rows must sum to 1"):
        CrowdLab().fit(votes, PROBS * 2)
    with pytest.raises(InvalidValueError, match="likelihood"):
        CrowdLab(likelihood="nope").fit(votes, PROBS)
    single = Votes.from_long(pd.DataFrame({"item": ["a", "b"], "annotator": ["x", "y"],
                                           "label": ["0", "1"]}))
    with pytest.raises(SchemaError, match="items with two votes or more"):
        CrowdLab().fit(single, PROBS[:2])
    counts = Votes.from_counts([[2, 1], [0, 3]], labels=["0", "1"])
    with pytest.raises(SchemaError, match="CrowdLab needs annotator ids"):
        CrowdLab().fit(counts, PROBS[:2])


def _wide(votes: Votes) -> pd.DataFrame:
    annotators = votes.annotator_codes("test")[0]
    wide = np.full((votes.n_items, votes.n_annotators), np.nan)
    wide[votes.item_index, annotators] = votes.label_index
    return pd.DataFrame(wide)


@pytest.mark.parametrize("name, gold", [
    pytest.param(("snow2008_rte", "rte.standardized.tsv"), None, id="rte_cleanlab_2.9"),
    pytest.param(("product_jn", "answer.csv"), ("product_jn", "truth.csv"),
                 id="d_product_cleanlab_2.9"),
])
def test_matches_cleanlab(name, gold):
    """cleanlab's ``get_label_quality_multiannotator`` (default ``best_quality`` consensus,
    ``crowdlab`` quality) with a simulated model of 92% accuracy: the same consensus labels,
    consensus quality scores, weights and annotator quality."""
    multiannotator = pytest.importorskip("cleanlab.multiannotator")
    votes = read_votes(data_path(*name), gold=None if gold is None else data_path(*gold))
    truth = np.asarray(votes.gold)
    probs = make_model_probs(truth, votes.n_labels, accuracy=0.92, rng=0)
    fit = CrowdLab().fit(votes, probs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = multiannotator.get_label_quality_multiannotator(
            _wide(votes), probs, verbose=False, return_weights=True)
    quality = ref["label_quality"]
    np.testing.assert_array_equal(fit.labels_codes_, quality["consensus_label"].to_numpy())
    np.testing.assert_allclose(fit.consensus_quality_score_,
                               quality["consensus_quality_score"].to_numpy(), atol=1e-12)
    np.testing.assert_allclose(fit.model_weight_, ref["model_weight"], rtol=1e-12)
    np.testing.assert_allclose(fit.annotator_weights_, ref["annotator_weight"], rtol=1e-12)
    stats = ref["annotator_stats"].sort_index()
    np.testing.assert_allclose(fit.annotator_quality_score_,
                               stats["annotator_quality"].to_numpy(), atol=1e-12)
    np.testing.assert_allclose(fit.annotator_agreement_,
                               stats["agreement_with_consensus"].to_numpy(), atol=1e-12)
