"""One label per item from the votes: the aggregators by name, and their accuracy against gold.

:func:`aggregate` is what ``annokit aggregate`` runs: it fits one aggregator,
returns the per-item table (label, tie flag, posteriors) and its accuracy
against the gold labels, together with the majority tie policy that accuracy
depends on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.checks import check_option
from annokit.core.gold import describe_accuracy, gold_accuracy
from annokit.core.soft_labels import DEFAULT_TIES, TiePolicy
from annokit.core.votes import Votes
from annokit.errors import OptionConflictError
from annokit.quality.common import require_votes
from annokit.quality.crowdlab import CrowdLab
from annokit.quality.dawid_skene import DawidSkene, OneCoinDawidSkene
from annokit.quality.glad import GLAD
from annokit.quality.mace import MACE
from annokit.quality.majority import MajorityVote, WeightedMajorityVote
from annokit.quality.wawa import Wawa
from annokit.quality.zbs import ZeroBasedSkill

__all__ = ["AGGREGATORS", "MODEL_AGGREGATORS", "Aggregation", "aggregate", "make_aggregator"]

#: Names accepted by ``annokit aggregate --method``.
AGGREGATORS = ("mv", "wmv", "ds", "onecoin", "mace", "glad", "wawa", "zbs")

#: Names of the aggregators that use a model's probabilities as well as the votes.
MODEL_AGGREGATORS = ("crowdlab",)

#: The aggregators whose labels are a (weighted) majority vote, hence depend on the tie policy.
_MAJORITY = ("mv", "wmv", "wawa", "zbs")


def make_aggregator(method: str, *, ties: TiePolicy = DEFAULT_TIES, rng: Any = 0,
                    clamp_gold: bool = False, likelihood: str = "shared"):
    """An unfitted aggregator by its short name (``mv``, ``wmv``, ``ds``, ``onecoin``, ``mace``,
    ``glad``, ``wawa``, ``zbs``).

    Parameters
    ----------
    method : {"mv", "wmv", "ds", "onecoin", "mace", "glad", "wawa", "zbs"}
    ties : {"first", "first_seen", "random", "report"}, default=DEFAULT_TIES
        Tie policy of ``mv``, ``wmv``, ``wawa`` and ``zbs`` (see
        :func:`annokit.core.soft_labels.break_ties`).
    rng : numpy Generator, int or None, default=0
        Seeds MACE's restarts and ``ties="random"``.
    clamp_gold : bool, default=False
        Fix gold items to their gold label while fitting (ds, onecoin, mace).
    likelihood : {"shared", "confusion"}, default="shared"
        ``crowdlab`` only (:class:`~annokit.quality.crowdlab.CrowdLab`); ``crowdlab`` is
        fitted with ``fit(votes, probs)``.

    Examples
    --------
    >>> type(make_aggregator("ds")).__name__
    'DawidSkene'
    >>> make_aggregator("mv", ties="first_seen").ties
    'first_seen'
    """
    check_option("method", method, AGGREGATORS + MODEL_AGGREGATORS)
    if method == "crowdlab":
        return CrowdLab(likelihood=likelihood)
    if method == "mv":
        return MajorityVote(ties=ties, rng=rng)
    if method == "wmv":
        return WeightedMajorityVote(ties=ties, rng=rng)
    if method == "ds":
        return DawidSkene(clamp_gold=clamp_gold)
    if method == "onecoin":
        return OneCoinDawidSkene(clamp_gold=clamp_gold)
    if method == "glad":
        return GLAD()
    if method == "wawa":
        return Wawa(ties=ties, rng=rng)
    if method == "zbs":
        return ZeroBasedSkill(ties=ties, rng=rng)
    return MACE(rng=rng, clamp_gold=clamp_gold)


@dataclass(frozen=True)
class Aggregation:
    """A fitted aggregator's labels and their accuracy against gold.

    Attributes
    ----------
    method : str
    table : DataFrame
        One row per item: ``item``, ``label`` (name), ``tied`` (mv, wmv, wawa, zbs), and
        with ``soft=True`` one ``p_<label>`` posterior column per label.
    n_items, n_gold : int
        Items, and items whose gold label is one of the labels (the accuracy's denominator).
    accuracy : float or None
        Share of those gold items whose label equals gold; None when there are none.
    tie_policy : str or None
        The majority tie policy behind the labels (mv, wmv, wawa, zbs); None otherwise.
    n_ties : int or None
        Items whose top label was tied (mv, wmv, wawa, zbs); None otherwise.
    n_iter : int
    converged : bool
    estimator : object
        The fitted aggregator.
    n_gold_unknown : int
        Items whose gold label is not among the votes' labels (left out of ``accuracy``;
        see :mod:`annokit.core.gold`).
    """

    method: str
    n_items: int
    n_gold: int
    accuracy: float | None
    tie_policy: str | None
    n_ties: int | None
    n_iter: int
    converged: bool
    estimator: Any
    n_gold_unknown: int = 0
    #: Makes ``table`` on first use: a JSON summary of a million items never builds it.
    build_table: Callable[[], Any] | None = field(default=None, repr=False, compare=False)

    @cached_property
    def table(self) -> pd.DataFrame:
        """One row per item (see the class docstring), made on first use."""
        if self.build_table is None:
            raise AttributeError("this Aggregation was made without a table")
        return self.build_table()

    def gold_note(self) -> str:
        """``"0.9120 on 95 of 100 gold items (5 gold labels not among the votes' labels)"``,
        or ``"n/a (no gold)"``."""
        return describe_accuracy(self.accuracy, self.n_gold, self.n_gold_unknown)

    def summary(self) -> dict[str, Any]:
        """The ``annokit aggregate --json`` object (documented in the README); ``crowdlab``
        adds ``model_weight``, ``likelihood`` (the vote model) and ``consensus_quality_mean``."""
        out = {"method": self.method, "n_items": self.n_items, "n_gold": self.n_gold,
               "n_gold_unknown_label": self.n_gold_unknown, "accuracy": self.accuracy,
               "tie_policy": self.tie_policy,
               "iterations": self.n_iter, "converged": self.converged, "n_ties": self.n_ties}
        if self.method in MODEL_AGGREGATORS:
            est = self.estimator
            out.update(model_weight=float(est.model_weight_), likelihood=est.likelihood,
                       consensus_quality_mean=float(np.mean(est.consensus_quality_score_)))
        return out


def aggregate(votes: Votes, method: str = "mv", *, ties: TiePolicy = DEFAULT_TIES,
              soft: bool = False, clamp_gold: bool = False,
              rng: np.random.Generator | int | None = 0, probs: Any = None,
              likelihood: str = "shared") -> Aggregation:
    """Fit one aggregator and tabulate its labels, with accuracy against ``votes.gold``.

    Parameters
    ----------
    votes : Votes
    method : {"mv", "wmv", "ds", "onecoin", "mace", "glad", "wawa", "zbs"}, default="mv"
    ties : {"first", "first_seen", "random", "report"}, default=DEFAULT_TIES
        Tie policy of ``mv``, ``wmv``, ``wawa`` and ``zbs``. ``"first_seen"`` reproduces the
        published majority-vote accuracies of Snow et al.'s RTE (0.9025) and
        the dog data (0.8166); the default gives 0.91875 and 0.8178.
    soft : bool, default=False
        Add the posterior of every label (``p_<label>`` columns).
    clamp_gold : bool, default=False
    rng : numpy Generator, int or None, default=0
    probs : array of shape (n_items, n_labels), optional
        A model's probabilities, rows in the votes' item order and columns in their label
        order (:func:`annokit.metrics.model_join.item_probabilities` joins a file): required
        by ``crowdlab``, refused by the others.
    likelihood : {"shared", "confusion"}, default="shared"
        ``crowdlab``'s vote likelihood (:class:`~annokit.quality.crowdlab.CrowdLab`).

    Returns
    -------
    Aggregation

    Examples
    --------
    >>> df = pd.DataFrame({"item": list("aabb"), "annotator": list("xyxy"),
    ...                    "label": list("1001"), "gold": list("0011")})
    >>> agg = aggregate(Votes.from_long(df, gold="gold"))
    >>> agg.table["label"].tolist(), agg.accuracy, agg.tie_policy
    (['0', '0'], 0.5, 'first')
    """
    votes = require_votes(votes, "aggregate")
    est = make_aggregator(method, ties=ties, rng=rng, clamp_gold=clamp_gold,
                          likelihood=likelihood)
    if method in MODEL_AGGREGATORS:
        if probs is None:
            raise OptionConflictError(f"--method {method} needs a model's probabilities: give "
                                      "--predictions FILE (Python: probs=)")
        est.fit(votes, probs)
    elif probs is not None:
        raise OptionConflictError(f"--predictions applies to --method "
                                  f"{', '.join(MODEL_AGGREGATORS)}, not {method}")
    else:
        est.fit(votes)
    majority_like = method in _MAJORITY

    def build_table() -> pd.DataFrame:
        names = np.asarray(votes.labels.names, dtype=object)
        table = pd.DataFrame({"item": votes.item_ids.astype(str),
                              "label": names[est.labels_codes_]})
        if majority_like:
            table["tied"] = est.is_tied_
        if method in MODEL_AGGREGATORS:
            table["consensus_quality_score"] = est.consensus_quality_score_
            table["agreement"] = est.agreement_
        if soft:
            for k, name in enumerate(votes.labels.names):
                table[f"p_{name}"] = est.posteriors_[:, k]
        return table

    acc = gold_accuracy(est.labels_codes_, votes.gold)
    return Aggregation(
        method=method, build_table=build_table, n_items=votes.n_items, n_gold=acc.n_items,
        accuracy=acc.accuracy, tie_policy=est.ties if majority_like else None,
        n_ties=int(est.n_ties_) if majority_like else None, n_iter=int(est.n_iter_),
        converged=bool(est.converged_), estimator=est, n_gold_unknown=acc.n_unknown,
    )

