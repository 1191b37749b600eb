"""Annotator quality, spammer filtering and aggregation.

One method per module:

- :mod:`~annokit.quality.stats`: per-annotator statistics (agreement with the
  others, gold accuracy, label-usage entropy, Krippendorff's alpha without each);
- :mod:`~annokit.quality.majority`: majority vote (explicit ties, incl. first-seen)
  and weighted majority vote;
- :mod:`~annokit.quality.dawid_skene`: Dawid-Skene EM, full and one-coin;
- :mod:`~annokit.quality.mace`: MACE (Hovy et al. 2013);
- :mod:`~annokit.quality.spammer`: the Raykar-Yu (2012) spammer score;
- :mod:`~annokit.quality.filter`: audited annotator filtering and ChaosNLI's gold rule.

Every estimator follows scikit-learn: keyword-only parameters in the
constructor, ``fit(votes)`` returns self, fitted attributes end in ``_``.
"""

from annokit.quality.dawid_skene import DawidSkene, OneCoinDawidSkene
from annokit.quality.filter import (
    CHAOSNLI_MAX_WRONG_RUN,
    CHAOSNLI_MIN_GOLD_ACCURACY,
    DEFAULT_THRESHOLDS,
    METHODS,
    Audit,
    annotator_scores,
    filter_annotators,
)
from annokit.quality.mace import MACE
from annokit.quality.majority import MajorityVote, WeightedMajorityVote, first_seen_order
from annokit.quality.spammer import SpammerScore, spammer_score
from annokit.quality.stats import annotator_stats, krippendorff_alpha_nominal, max_consecutive_wrong

__all__ = [
    "AGGREGATORS",
    "CHAOSNLI_MAX_WRONG_RUN",
    "CHAOSNLI_MIN_GOLD_ACCURACY",
    "DEFAULT_THRESHOLDS",
    "MACE",
    "METHODS",
    "Audit",
    "DawidSkene",
    "MajorityVote",
    "OneCoinDawidSkene",
    "SpammerScore",
    "WeightedMajorityVote",
    "annotator_scores",
    "annotator_stats",
    "filter_annotators",
    "first_seen_order",
    "krippendorff_alpha_nominal",
    "make_aggregator",
    "max_consecutive_wrong",
    "spammer_score",
]

#: Names accepted by ``annokit aggregate --method``.
AGGREGATORS = ("mv", "wmv", "ds", "onecoin", "mace")


def make_aggregator(method: str, *, rng=0, clamp_gold: bool = False):
    """An unfitted aggregator by its short name (``mv``, ``wmv``, ``ds``, ``onecoin``, ``mace``).

    Examples
    --------
    >>> type(make_aggregator("ds")).__name__
    'DawidSkene'
    """
    from annokit.core.checks import check_option

    check_option("method", method, AGGREGATORS)
    if method == "mv":
        return MajorityVote()
    if method == "wmv":
        return WeightedMajorityVote()
    if method == "ds":
        return DawidSkene(clamp_gold=clamp_gold)
    if method == "onecoin":
        return OneCoinDawidSkene(clamp_gold=clamp_gold)
    return MACE(rng=rng, clamp_gold=clamp_gold)
