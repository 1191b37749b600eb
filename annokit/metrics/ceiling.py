"""The split-half human ceiling, evaluated with the one engine (Baan et al. 2022, Sec. 5).

How good can a classifier get when humans disagree? Baan et al. (2022,
"How Good is Good?") split each item's votes into two disjoint random halves of
k votes, H1 and H2, and treat the half-sample distribution H1 as a "realistic
classifier": its errors against the human distribution are what sampling k
votes alone costs. :func:`split_half_ceiling` draws the halves
(:func:`annokit.subsample.split_half`) and evaluates H1 with
:func:`annokit.metrics.engine.evaluate`, like any model, twice:

* ``vs_reference``: H1 as a model of the reference distribution (all votes,
  ``reference="full"``, as the paper text says; or the votes in neither half,
  ``"rest"``, as their notebook does); its hard label is the reference majority;
* ``vs_half``: H1 as a model of H2 (the two halves are independent draws of the
  same size).

Every registered metric the engine computes is available, per group of items
too (``by``), with bootstrap intervals on request.

References
----------
Baan, Aziz, Plank, Fernandez (2022). Stop Measuring Calibration When Humans
Disagree. EMNLP, section 5. arXiv:2210.16133.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from annokit.core.votes import Votes
from annokit.errors import InvalidValueError, SchemaError
from annokit.metrics.engine import AGREEMENT_BINS, EvaluationResult, evaluate
from annokit.metrics.records import AlignedRecords, agreement_bins, agreement_entropy
from annokit.subsample.split_half import SplitHalf, split_half

__all__ = ["SplitHalfCeiling", "default_votes_per_half", "split_half_ceiling"]


@dataclass(frozen=True)
class SplitHalfCeiling:
    """The engine's results for the half-sample "human classifier" H1.

    Attributes
    ----------
    votes_per_half : int
        k, the votes in each half.
    split : SplitHalf
        The draws (H1, H2, the reference, which items were kept).
    vs_reference : EvaluationResult
        H1 as a model of the reference distribution (hard label: its majority).
    vs_half : EvaluationResult
        H1 as a model of H2 (hard label: H2's majority).
    """

    votes_per_half: int
    split: SplitHalf
    vs_reference: EvaluationResult
    vs_half: EvaluationResult

    @property
    def n_items(self) -> int:
        """Items with enough votes for two halves (the ones evaluated)."""
        return int(self.split.item_positions.size)

    @property
    def n_short(self) -> int:
        """Items left out: fewer than ``2k`` votes (``2k + 1`` with ``reference="rest"``)."""
        return int(self.split.n_short)


def default_votes_per_half(votes_per_item: Any) -> int:
    """Half the median number of votes per item, rounded down (0 when that is below one vote).

    Examples
    --------
    >>> default_votes_per_half([100, 100, 98]), default_votes_per_half([1, 1, 2])
    (50, 0)
    """
    n = np.asarray(votes_per_item)
    if n.ndim != 1 or n.size == 0:
        raise SchemaError(f"votes_per_item must be a non-empty 1-D array; got shape {n.shape}")
    return int(np.median(n)) // 2


def _groups(by: Any, split: SplitHalf, n_input: int) -> Any:
    """``by`` for the kept items: the input's per-item labels subset, or the reference's bins."""
    if by is None:
        return None
    if isinstance(by, str):
        if by != "agreement":
            raise InvalidValueError(f"by must be None, 'agreement' or one group label per item; "
                                    f"got {by!r}")
        _, index, _, _ = agreement_bins(agreement_entropy(split.reference_probs),
                                        AGREEMENT_BINS)
        return pd.Categorical(index, categories=range(int(index.max()) + 1))
    if isinstance(by, pd.Categorical):
        if len(by) != n_input:
            raise SchemaError(f"by has {len(by)} group labels for {n_input} items")
        return by[split.item_positions]
    labels = np.asarray(by, dtype=object)
    if labels.ndim != 1 or labels.size != n_input:
        raise SchemaError(f"by must be one group label per item: {n_input} labels; got shape "
                          f"{labels.shape}")
    return labels[split.item_positions]


def _votes_per_half(votes: Votes | Any, votes_per_half: int | None) -> int:
    """``votes_per_half`` checked, or by default half the median votes per item."""
    if votes_per_half is None:
        n_votes = (votes.votes_per_item() if isinstance(votes, Votes)
                   else np.asarray(votes).sum(axis=1))
        k = default_votes_per_half(n_votes)
        if k < 1:
            raise InvalidValueError("too few votes per item for two disjoint halves: the median "
                                    "item has fewer than two votes")
        return k
    if isinstance(votes_per_half, bool) or not isinstance(votes_per_half, (int, np.integer)) \
            or votes_per_half < 1:
        raise InvalidValueError(f"votes_per_half must be >= 1; got {votes_per_half!r}")
    return int(votes_per_half)


def split_half_ceiling(votes: Votes | Any, votes_per_half: int | None = None, *,
                       reference: Literal["full", "rest"] = "full",
                       metrics: Sequence[str] | None = None, by: Any = None, n_boot: int = 0,
                       seed: int = 0, confidence: float = 0.95, n_bins: int = 10,
                       rng: np.random.Generator | int | None = None) -> SplitHalfCeiling:
    """Draw two disjoint k-vote halves per item and evaluate H1 like a model.

    Parameters
    ----------
    votes : Votes or array-like of shape (n_items, n_labels)
        Votes, or a count matrix.
    votes_per_half : int, optional
        k, votes per half (Baan et al. use 20 of ChaosNLI's 100). Default: half
        the median number of votes per item (:func:`default_votes_per_half`).
    reference : {"full", "rest"}, default "full"
        What H1 is a model of in ``vs_reference``: all votes, or the votes in
        neither half (see :func:`annokit.subsample.split_half`).
    metrics : sequence of str, optional
        Registry names; default every registered metric.
    by : None, "agreement", array-like of shape (n_items,) or pandas Categorical
        Groups of items: one label per item of ``votes`` (the kept items'
        labels are used; a Categorical keeps its empty categories), or
        ``"agreement"``: equal-count bins of the reference's entropy, the
        same bins for ``vs_reference`` and ``vs_half``.
    n_boot, seed, confidence, n_bins
        As for :func:`~annokit.metrics.engine.evaluate` (bootstrap over items,
        keyed by item id; bins of the binned metrics).
    rng : numpy Generator, int seed or None
        Randomness of the split.

    Returns
    -------
    SplitHalfCeiling

    Raises
    ------
    InvalidValueError
        ``votes_per_half`` < 1, or (by default) the median item has fewer than
        two votes.
    InputError
        No item has the ``2k`` votes a split needs (from :func:`split_half`),
        or invalid engine options.

    Warns
    -----
    DegenerateInputWarning
        Items with too few votes are left out (counted in ``n_short``); tied
        majorities of the reference or of H2 take the first tied label.

    Notes
    -----
    H1's probabilities are its vote shares ``counts_h1 / k``; accuracy is then
    "H1's majority (first tied label) equals the reference majority", DistCE
    the TVD between H1 and the reference, and so on for every registered metric.

    Examples
    --------
    >>> import warnings
    >>> counts = [[30, 60, 10], [90, 5, 5], [40, 40, 20], [10, 10, 80]]
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     c = split_half_ceiling(counts, 20, rng=0, metrics=["accuracy"])
    >>> c.n_items, 0.0 <= c.vs_reference.metrics["accuracy"] <= 1.0
    (4, True)
    """
    k = _votes_per_half(votes, votes_per_half)
    n_input = votes.n_items if isinstance(votes, Votes) else len(np.asarray(votes))
    sh = split_half(votes, k, rng=rng, reference=reference, short="skip")
    labels = votes.labels if isinstance(votes, Votes) else None
    groups = _groups(by, sh, n_input)
    options = {"by": groups, "n_boot": n_boot, "seed": seed, "confidence": confidence,
               "n_bins": n_bins, "baselines": False}

    def vs(counts: np.ndarray) -> EvaluationResult:  # H1 evaluated as a model against counts
        return evaluate(AlignedRecords.from_arrays(sh.h1, counts, labels=labels,
                                                   item_ids=sh.item_ids, ties="first"),
                        metrics, **options)

    return SplitHalfCeiling(votes_per_half=k, split=sh, vs_reference=vs(sh.reference_counts),
                            vs_half=vs(sh.counts_h2))
