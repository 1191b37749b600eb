"""The report's agreement bins: items cut by the entropy of their human label distribution.

:func:`agreement_binning` cuts the items with :func:`annokit.metrics.records.agreement_bins`
(equal-count quantile cut points, Nie et al. 2020, Sec. 5.4, or user edges) on an entropy per
item, in nats (``core.soft_labels.ENTROPY_BASE``): by default the entropy of its collected
votes (:func:`annokit.metrics.records.agreement_entropy`).

That entropy is itself an estimate from a few votes, and a cut on a noisy value selects on its
noise: the items of the lowest-entropy bin are on average less agreed in the population than
their votes show, and those of the highest bin more (regression to the mean). With
``bin_on="population"`` the cut is on :func:`population_entropy` instead, the posterior mean
of each item's population entropy under the population target's prior fitted to all
items' votes (:mod:`annokit.metrics.population`), which shrinks each item toward what the other
items say.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import digamma

from annokit.core.soft_labels import ENTROPY_BASE
from annokit.errors import DegenerateInputWarning
from annokit.metrics.records import agreement_bins
from annokit.report.model import Binning

__all__ = ["HIST_BINS", "AgreementBins", "agreement_binning", "dirichlet_entropy", "entropy_edges",
           "population_entropy"]

#: Bins of the report's histograms.
HIST_BINS = 20


@dataclass(frozen=True)
class AgreementBins:
    """The report's agreement bins: the model's :class:`Binning`, each item's bin, the bins as
    the engine's groups, the entropies they were cut on, and the notes the cut left."""

    binning: Binning
    index: np.ndarray
    groups: pd.Categorical
    entropy: np.ndarray
    notes: list[str]

    @property
    def n_bins(self) -> int:
        return len(self.binning.counts)


def agreement_binning(h_human: np.ndarray, bins: int | Sequence[float], *,
                      cut_on: str = "votes") -> AgreementBins:
    """Cut the items into agreement bins on ``h_human``; one warning names the empty bins."""
    edges, bin_idx, method, notes = agreement_bins(h_human, bins)  # warns and notes merged bins
    n_agree = edges.size - 1
    bin_counts = np.bincount(bin_idx, minlength=n_agree)
    empty = np.flatnonzero(bin_counts == 0)
    if empty.size:  # one warning for all of them
        msg = (f"agreement bin {empty[0]} is empty" if empty.size == 1 else
               f"{empty.size:,} of {n_agree:,} agreement bins are empty (bins "
               f"{', '.join(map(str, empty[:5].tolist()))}"
               + (f" and {empty.size - 5:,} more" if empty.size > 5 else "") + ")")
        warnings.warn(msg, DegenerateInputWarning, stacklevel=4)
        notes.append(msg)
    binning = Binning(
        method=method,
        # a count of bins is what makes agreement_bins cut at quantiles
        requested_bins=int(bins) if isinstance(bins, (int, np.integer)) else n_agree,
        entropy_base=ENTROPY_BASE, edges=edges.tolist(), counts=bin_counts.tolist(),
        mean_entropy=[float(h_human[bin_idx == b].mean()) if bin_counts[b] else None
                      for b in range(n_agree)],
        labels=[f"{edges[b]:.2f}-{edges[b + 1]:.2f}" for b in range(n_agree)], cut_on=cut_on)
    return AgreementBins(binning=binning, index=bin_idx,
                         groups=pd.Categorical(bin_idx, categories=range(n_agree)),
                         entropy=h_human, notes=notes)


def entropy_edges(n_labels: int) -> np.ndarray:
    """Edges of the entropy histograms: [0, entropy of the uniform distribution]."""
    return np.linspace(0.0, float(np.log(n_labels) / np.log(ENTROPY_BASE)), HIST_BINS + 1)


def dirichlet_entropy(alpha: np.ndarray) -> np.ndarray:
    """``E[H(p)]`` in nats for ``p ~ Dirichlet(alpha)``, over the last axis.

    Notes
    -----
    ``E[-p_j ln p_j] = (alpha_j / A) (psi(A + 1) - psi(alpha_j + 1))`` with ``A = sum_j
    alpha_j`` (the mean of ``ln p_j`` under the size-biased Dirichlet ``Dirichlet(alpha +
    e_j)``), so ``E[H] = psi(A + 1) - sum_j (alpha_j / A) psi(alpha_j + 1)`` (Nemenman,
    Shafee, Bialek 2002, NIPS, eq. 9; Wolpert & Wolf 1995, Phys. Rev. E 52).

    Examples
    --------
    >>> round(float(dirichlet_entropy(np.array([1.0, 1.0]))), 4)  # uniform p: E[H] = 1/2 nat
    0.5
    """
    a = np.asarray(alpha, dtype=np.float64)
    total = a.sum(axis=-1)
    return digamma(total + 1.0) - (a * digamma(a + 1.0)).sum(axis=-1) / total


def population_entropy(counts: np.ndarray, *, seed: int = 0) -> np.ndarray:
    """Posterior mean of each item's population entropy (nats), 12 decimals.

    The prior is the population target's (:func:`annokit.metrics.population.fit_prior`, a
    mixture of Dirichlets fitted to all items' counts by maximum marginal likelihood) given a
    uniform model, so that it depends on the votes alone: the bins are the same for every
    model, and no model's predictions select the items it is scored on. Each item's posterior
    is the mixture of ``Dirichlet(alpha_c + x_i)`` with the components' posterior weights; its
    mean entropy is :func:`dirichlet_entropy`'s, averaged with those weights. Deterministic for
    a seed (the seed only picks the items the prior is fitted on when there are many).

    Parameters
    ----------
    counts : ndarray of shape (n_items, n_labels)
        Votes per label.
    seed : int, default 0

    Returns
    -------
    ndarray of shape (n_items,)

    Examples
    --------
    >>> x = np.array([[5, 0, 0]] * 30 + [[2, 2, 1]] * 30)
    >>> h = population_entropy(x)
    >>> bool(h[0] > 0.0), bool(h[-1] < np.log(3))  # shrunk toward each other
    (True, True)
    """
    from annokit.metrics.population import fit_prior

    x = np.asarray(counts, dtype=np.float64)
    q = np.full(x.shape, 1.0 / x.shape[1])
    prior = fit_prior(x, q, seed=seed)
    weights = prior.responsibilities(x, q)  # (n, components)
    per_component = dirichlet_entropy(prior.alphas(q) + x[:, None, :])
    return np.round((weights * per_component).sum(axis=1), 12) + 0.0
