"""Positive-class calibration for two-label data: ECE, MCE and the reliability diagram on p(positive).

With two labels the top-label ECE bins ``max(p_0, p_1) >= 0.5`` and mixes the two
classes; binary calibration bins the probability of a declared positive class
(``positive``, a label index, default 1) on ``[0, 1]`` and compares each bin's
mean ``p(positive)`` with the observed frequency of the positive class (the hard
label equal to ``positive``)::

    ECE = sum_b |sum_{i in b} w_i p_i - sum_{i in b} w_i y_i| / sum_i w_i
    MCE = max_{b: W_b > 0} |mean_b p - mean_b y|

Bins are equal-width (``[lo, hi)``, the last closed; :mod:`annokit.metrics._binning`),
as in scikit-learn's ``calibration_curve(strategy="uniform")`` except for values
exactly on an inner edge (scikit-learn puts them in the lower bin).

References
----------
Naeini, Cooper, Hauskrecht (2015). Obtaining Well Calibrated Probabilities Using Bayesian
Binning. AAAI. DOI:10.1609/aaai.v29i1.9602.
Niculescu-Mizil, Caruana (2005). Predicting Good Probabilities with Supervised Learning.
ICML. DOI:10.1145/1102351.1102430 (reliability diagrams of binary classifiers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from annokit.metrics.states_ext import BinaryBinnedState, update_states

__all__ = ["BinaryReliability", "binary_reliability"]


@dataclass(frozen=True)
class BinaryReliability:
    """Positive-class calibration of two-label predictions (:func:`binary_reliability`).

    Attributes
    ----------
    positive : int
        Index of the positive class.
    positive_label : str or None
        Its name, when label names were given.
    ece, mce : float
    bins : dict
        ``bin_low``, ``bin_high``, ``weight``, ``mean_probability`` and
        ``frequency`` per bin (NaN for empty bins).
    """

    positive: int
    positive_label: str | None
    ece: float
    mce: float
    bins: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able (NaN kept as float NaN)."""
        return {"positive": self.positive, "positive_label": self.positive_label,
                "ece": self.ece, "mce": self.mce,
                "bins": {k: v for k, v in self.bins.items() if k != "positive"}}


def binary_reliability(probs: Any, hard: Any, *, positive: int = 1, n_bins: int = 10,
                       labels: Any = None, weights: Any = None) -> BinaryReliability:
    """ECE, MCE and reliability-diagram data on the positive-class probability.

    Parameters
    ----------
    probs : array-like of shape (n_items, 2)
        Model distributions over the two labels.
    hard : array-like of shape (n_items,)
        Hard labels (0 or 1).
    positive : {0, 1}, default 1
        Column of the positive class.
    n_bins : int, default 10
    labels : sequence of two str, optional
        Label names, to state the positive class by name.
    weights : array-like of shape (n_items,), optional

    Returns
    -------
    BinaryReliability

    Raises
    ------
    SchemaError
        Not two label columns, wrong shapes.
    InvalidValueError
        Rows off the simplex, labels out of range, ``positive`` not 0 or 1.

    Examples
    --------
    >>> r = binary_reliability([[0.9, 0.1], [0.2, 0.8], [0.3, 0.7]], [0, 1, 0], n_bins=2,
    ...                        labels=["no", "yes"])
    >>> r.positive_label, round(r.ece, 6), r.bins["frequency"]
    ('yes', 0.2, [0.0, 0.5])
    """
    ece = BinaryBinnedState(n_bins=n_bins, positive=positive)
    mce = BinaryBinnedState(n_bins=n_bins, positive=positive, reduce="max")
    update_states([ece, mce], probs, None, hard, weights, allow_empty=False)
    name = None if labels is None else str(list(labels)[ece.positive])
    return BinaryReliability(ece.positive, name, float(ece.compute()), float(mce.compute()),
                             ece.reliability())
