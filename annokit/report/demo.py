"""Synthetic *models* for ``annokit demo``: predictions built from the true item distributions.

:func:`annokit.io.synthetic.make_votes` draws votes from known per-item human
distributions ``pi``; here four models are derived from the same ``pi`` so the
report has something to show:

- ``posterior-matching``: ``softmax(log pi + noise)``, the model that learned the
  human distribution (up to noise);
- ``overconfident``: the same logits divided by a temperature < 1;
- ``underconfident``: divided by a temperature > 1;
- ``temperature-scaled``: the overconfident model with a temperature fitted
  (:func:`annokit.metrics.temperature.fit_temperature`, NLL of the majority) on
  the even-numbered items, the textbook post-hoc fix (Guo et al. 2017) that
  Baan et al. (2022) examine.
"""

from __future__ import annotations

import numpy as np

from annokit.core.checks import check_probs, check_rng
from annokit.core.soft_labels import softmax
from annokit.core.votes import Votes
from annokit.errors import InvalidValueError, SchemaError
from annokit.io.synthetic import SyntheticDataset
from annokit.report.build import build_report
from annokit.report.inputs import ModelPredictions, subsampling_rows
from annokit.report.model import Report

__all__ = ["DEMO_KS", "DEMO_TEMPERATURES", "demo_report", "make_models"]

#: Votes per item of the demo's "how many annotations are enough" curve.
DEMO_KS = (1, 2, 3, 5, 10, 20)

#: Temperatures of the over- and underconfident demo models.
DEMO_TEMPERATURES = {"overconfident": 0.4, "underconfident": 2.5}


def make_models(votes: Votes, true_probs: np.ndarray, *, noise: float = 0.5,
                rng: np.random.Generator | int | None = 0) -> list[ModelPredictions]:
    """Four synthetic models of the items of ``votes``.

    Parameters
    ----------
    votes : Votes
        The synthetic votes (used to fit the temperature-scaled model).
    true_probs : ndarray of shape (n_items, n_labels)
        The distributions the votes were drawn from, in ``votes`` item order.
    noise : float, default 0.5
        Standard deviation of the Gaussian noise added to ``log pi`` (shared by
        all four models, so they differ only in temperature).
    rng : numpy Generator or int seed, default 0

    Returns
    -------
    list of ModelPredictions

    Examples
    --------
    >>> from annokit.io.synthetic import make_votes
    >>> data = make_votes(n_items=40, n_annotators=10, votes_per_item=5, rng=0)
    >>> [m.name for m in make_models(data.votes, data.true_probs, rng=0)]
    ['posterior-matching', 'overconfident', 'underconfident', 'temperature-scaled']
    """
    from annokit.metrics.records import AlignedRecords
    from annokit.metrics.temperature import fit_temperature

    pi = check_probs(true_probs, name="true_probs")
    if pi.shape != (votes.n_items, votes.n_labels):
        raise SchemaError(f"true_probs has shape {pi.shape}; the votes need "
                              f"({votes.n_items}, {votes.n_labels})")
    if not np.isfinite(noise) or noise < 0:
        raise InvalidValueError(f"noise must be a finite number >= 0; got {noise!r}")
    gen = check_rng(rng)
    logits = np.log(np.maximum(pi, 1e-6)) + gen.normal(0.0, noise, size=pi.shape)
    over_t, under_t = DEMO_TEMPERATURES["overconfident"], DEMO_TEMPERATURES["underconfident"]
    over = softmax(logits / over_t)
    dev = np.arange(votes.n_items) % 2 == 0
    counts = votes.counts()
    fitted = fit_temperature(AlignedRecords.from_arrays(
        over[dev], counts[dev], labels=votes.labels, item_ids=votes.item_ids[dev], ties="first"))
    return [
        ModelPredictions("posterior-matching", softmax(logits), sources=["synthetic"],
                         temperature_note="log true distribution + Gaussian noise "
                                          f"(sd {noise:g})"),
        ModelPredictions("overconfident", over, sources=["synthetic"], temperature=over_t,
                         temperature_note="posterior-matching logits / T"),
        ModelPredictions("underconfident", softmax(logits / under_t), sources=["synthetic"],
                         temperature=under_t, temperature_note="posterior-matching logits / T"),
        ModelPredictions("temperature-scaled", softmax(np.log(over) / fitted),
                         sources=["synthetic"], temperature=fitted,
                         temperature_note=(f"overconfident model scaled by T fitted (NLL of the "
                                           f"majority) on the {int(dev.sum())} even-numbered "
                                           "items, which are also in the report")),
    ]


def demo_report(data: SyntheticDataset, *, seed: int = 0, n_boot: int = 1000) -> Report:
    """The report ``annokit demo`` writes: four synthetic models, the subsampling curve, and
    notes comparing the flagged annotators with the injected spammers.

    Parameters
    ----------
    data : SyntheticDataset
        From :func:`annokit.io.synthetic.make_votes` (votes, true distributions, spammers).
    seed : int, default 0
        Seeds the models' noise, the subsampling curve, the bootstrap and the ceiling split.
    n_boot : int, default 1000
        Bootstrap replicates of the report.

    Returns
    -------
    Report
    """
    models = make_models(data.votes, data.true_probs, rng=seed)
    notes: list[str] = []
    curve = subsampling_rows(data.votes, list(DEMO_KS), reps=200, rng=seed, notes=notes)
    report = build_report(data.votes, models, n_boot=n_boot, seed=seed, subsampling=curve,
                          title="annokit demo: synthetic dataset, four synthetic models")
    aq = report.annotator_quality
    if aq is not None:
        _, annotator_ids = data.votes.annotator_codes("the demo's spammer check")
        known = set(annotator_ids[data.spammer].tolist())
        for m in aq.methods:
            hits = sum(r.flagged[m] and r.annotator in known for r in aq.annotators)
            notes.append(f"demo truth: {len(known)} injected spammers; {m} flags "
                         f"{aq.n_flagged[m]} annotators, {hits} of them spammers")
    report.notes = notes + report.notes
    return report
