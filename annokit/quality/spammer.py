"""The Raykar and Yu (2012) spammer score from annotator confusion matrices.

A spammer's answer does not depend on the true label: every row of their
confusion matrix is the same distribution. Raykar and Yu score an annotator by
how far the rows are from each other (their eq. for the multi-class case)::

    S_j = 1 / (K (K - 1)) * sum_{c < c'} sum_k (a^j_{ck} - a^j_{c'k})^2

which is 0 for a spammer (whatever label they favour) and 1 for a perfect
annotator; for two classes it equals ``(sensitivity + specificity - 1)^2``.

References
----------
Raykar, V. C. and Yu, S. (2012). Eliminating Spammers and Ranking Annotators for
Crowdsourced Labeling Tasks. *Journal of Machine Learning Research* 13, 491-518.
https://jmlr.org/papers/v13/raykar12a.html
"""

from __future__ import annotations

from typing import Any

import numpy as np

from annokit.core.votes import Votes
from annokit.errors import InvalidValueError, SchemaError
from annokit.quality.common import require_annotators
from annokit.quality.dawid_skene import DawidSkene

__all__ = ["SpammerScore", "spammer_score"]


def spammer_score(confusions: Any) -> np.ndarray:
    """Raykar-Yu spammer score of each annotator from confusion matrices.

    Parameters
    ----------
    confusions : array-like of shape (n_annotators, n_labels, n_labels)
        ``confusions[j, k, l] = P(annotator j says l | true label k)``; rows sum to 1.

    Returns
    -------
    score : ndarray of shape (n_annotators,)
        In [0, 1]; 0 for a spammer (identical rows), 1 for a perfect annotator.

    Examples
    --------
    >>> perfect = np.eye(2)
    >>> always_yes = [[0.0, 1.0], [0.0, 1.0]]
    >>> coin = [[0.5, 0.5], [0.5, 0.5]]
    >>> spammer_score([perfect, always_yes, coin]).tolist()
    [1.0, 0.0, 0.0]
    >>> round(float(spammer_score([[[0.8, 0.2], [0.3, 0.7]]])[0]), 4)  # (0.8 + 0.7 - 1) ** 2
    0.25
    """
    a = np.asarray(confusions, dtype=np.float64)
    if a.ndim != 3 or a.shape[1] != a.shape[2]:
        raise SchemaError(
            f"confusions must have shape (n_annotators, n_labels, n_labels); got {a.shape}"
        )
    k = a.shape[1]
    if k < 2:
        raise SchemaError("the spammer score needs at least two labels")
    if not np.all(np.isfinite(a)) or a.min() < 0:
        raise InvalidValueError("confusions must be finite and non-negative")
    # sum over ordered pairs (c, c') of ||a_c - a_c'||^2 = 2 K sum_c ||a_c||^2 - 2 ||sum_c a_c||^2
    sq = np.einsum("jck,jck->j", a, a)
    col = a.sum(axis=1)
    ordered = 2 * k * sq - 2 * np.einsum("jk,jk->j", col, col)
    return np.clip(ordered / 2 / (k * (k - 1)), 0.0, 1.0)


class SpammerScore:
    """Fit Dawid-Skene and score each annotator with the Raykar-Yu spammer score.

    Parameters
    ----------
    estimator : fitted-or-unfitted estimator with ``confusions_``, optional
        Default ``DawidSkene()``. Fitted on the votes by :meth:`fit`.

    Attributes
    ----------
    scores_ : ndarray of shape (n_annotators,)
        Spammer score; low means spammer. NaN for annotators without votes.
    confusions_ : ndarray of shape (n_annotators, n_labels, n_labels)
    estimator_ : the fitted estimator

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": list("aaabbbcccddd"), "annotator": list("xyz" * 4),
    ...                    "label": list("110001111000")})
    >>> s = SpammerScore().fit(Votes.from_long(df))
    >>> int(np.argmin(s.scores_))   # z always says 1 or 0 regardless of the item
    2
    """

    def __init__(self, estimator: Any = None):
        self.estimator = estimator

    def fit(self, votes: Votes) -> SpammerScore:
        votes = require_annotators(votes, "SpammerScore.fit")
        est = DawidSkene() if self.estimator is None else self.estimator
        est.fit(votes)
        if not hasattr(est, "confusions_"):
            raise SchemaError(
                f"{type(est).__name__} has no confusions_; use DawidSkene or OneCoinDawidSkene"
            )
        scores = spammer_score(est.confusions_)
        scores[votes.votes_per_annotator() == 0] = np.nan
        self.estimator_ = est
        self.confusions_ = est.confusions_
        self.scores_ = scores
        return self
