"""Annotator quality, spammer filtering and aggregation.

One method per module:

- :mod:`~annokit.quality.stats`: per-annotator statistics (agreement with the
  others, gold accuracy, label-usage entropy, Krippendorff's alpha without each);
- :mod:`~annokit.quality.majority`: majority vote (explicit ties, incl. first-seen)
  and weighted majority vote;
- :mod:`~annokit.quality.dawid_skene`: Dawid-Skene EM, full and one-coin;
- :mod:`~annokit.quality.mace`: MACE (Hovy et al. 2013);
- :mod:`~annokit.quality.glad`: GLAD (Whitehill et al. 2009);
- :mod:`~annokit.quality.wawa`: Wawa, majority vote weighted by agreement with the majority;
- :mod:`~annokit.quality.zbs`: Zero-Based Skill (crowd-kit's iterated weighted majority vote);
- :mod:`~annokit.quality.crowdlab`: CROWDLAB (Goh et al. 2022), votes and a model's probabilities;
- :mod:`~annokit.quality.spammer`: the Raykar-Yu (2012) spammer score;
- :mod:`~annokit.quality.filter`: audited annotator filtering and ChaosNLI's gold rule;
- :mod:`~annokit.quality.aggregate`: the aggregators by name and their accuracy against gold.

Every estimator follows scikit-learn: keyword-only parameters in the
constructor, ``fit(votes)`` returns self, fitted attributes end in ``_``.
"""

from annokit.quality.aggregate import (
    AGGREGATORS,
    MODEL_AGGREGATORS,
    Aggregation,
    aggregate,
    make_aggregator,
)
from annokit.quality.crowdlab import CrowdLab
from annokit.quality.dawid_skene import DawidSkene, OneCoinDawidSkene
from annokit.quality.filter import (
    CHAOSNLI_MAX_WRONG_RUN,
    CHAOSNLI_MIN_GOLD_ACCURACY,
    DEFAULT_THRESHOLDS,
    METHODS,
    AnnotatorFlags,
    Audit,
    annotator_scores,
    filter_annotators,
    flag_annotators,
)
from annokit.quality.glad import GLAD
from annokit.quality.mace import MACE
from annokit.quality.majority import MajorityVote, WeightedMajorityVote, first_seen_order
from annokit.quality.spammer import SpammerScore, spammer_score
from annokit.quality.stats import annotator_stats, krippendorff_alpha_nominal, max_consecutive_wrong
from annokit.quality.wawa import Wawa
from annokit.quality.zbs import ZeroBasedSkill

__all__ = [
    "AGGREGATORS",
    "CHAOSNLI_MAX_WRONG_RUN",
    "CHAOSNLI_MIN_GOLD_ACCURACY",
    "DEFAULT_THRESHOLDS",
    "GLAD",
    "MACE",
    "METHODS",
    "MODEL_AGGREGATORS",
    "Aggregation",
    "AnnotatorFlags",
    "Audit",
    "CrowdLab",
    "DawidSkene",
    "MajorityVote",
    "OneCoinDawidSkene",
    "SpammerScore",
    "Wawa",
    "WeightedMajorityVote",
    "ZeroBasedSkill",
    "aggregate",
    "annotator_scores",
    "annotator_stats",
    "filter_annotators",
    "first_seen_order",
    "flag_annotators",
    "krippendorff_alpha_nominal",
    "make_aggregator",
    "max_consecutive_wrong",
    "spammer_score",
]
