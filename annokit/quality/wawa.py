"""Wawa: worker agreement with aggregate (a weighted majority vote).

Three steps: the majority vote; each annotator's skill, the share of their votes equal
to it; the majority vote weighted by those skills. This is what
:class:`~annokit.quality.majority.WeightedMajorityVote` does without ``weights``;
:class:`Wawa` gives it the name the crowdsourcing literature and crowd-kit use, and
names the weights ``skills_``.

Both majority votes follow ``ties`` (default: the first tied label in label order).
crowd-kit 1.4.2 breaks ties by the column order of a pandas ``value_counts().unstack()``,
which depends on the data and the pandas version (with pandas 3.1 on Snow et al.'s RTE it
puts label 1 first, and all 65 tied items go to 1). Against it
(``benchmarks/bench_aggregators.py --sets``) the labels are identical on bluebirds, face and
D_Product, and differ only through tied majority votes on dog (2 items) and RTE (10 items):
accuracy 0.8290 both on dog, 0.9213 (annokit) against 0.9187 on RTE.

References
----------
Ustalov, D., Pavlichenko, N. and Tseitlin, B. (2023). Learning from Crowds with Crowd-Kit.
*Journal of Open Source Software* 9(96), 6227. doi:10.21105/joss.06227 (Wawa, section
"Aggregation methods"; accuracy table).
"""

from __future__ import annotations

import numpy as np

from annokit.core.soft_labels import DEFAULT_TIES, TiePolicy
from annokit.core.votes import Votes
from annokit.quality.majority import WeightedMajorityVote

__all__ = ["Wawa"]


class Wawa(WeightedMajorityVote):
    """Majority vote weighted by each annotator's agreement with the plain majority vote.

    Parameters
    ----------
    ties : {"first", "first_seen", "random", "report"}, default=DEFAULT_TIES
        Tie policy of both majority votes (see :class:`~annokit.quality.MajorityVote`).
    rng : numpy Generator, int or None
        Only used by ``ties="random"``.

    Attributes
    ----------
    skills_ : ndarray of shape (n_annotators,)
        Share of each annotator's votes equal to the majority vote (0 without votes).
    weights_ : ndarray of shape (n_annotators,)
        The same array (the weights of the final vote).
    labels_, labels_codes_, posteriors_, is_tied_, tied_, n_ties_, n_iter_, converged_
        As in :class:`~annokit.quality.WeightedMajorityVote`; ``posteriors_`` are the
        skill-weighted vote shares.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": list("aaabbbccc"), "annotator": list("xyz" * 3),
    ...                    "label": list("110000111")})
    >>> w = Wawa().fit(Votes.from_long(df))
    >>> w.labels_.tolist(), w.skills_.round(3).tolist()
    (['1', '0', '1'], [1.0, 1.0, 0.667])
    """

    def __init__(self, *, ties: TiePolicy = DEFAULT_TIES,
                 rng: np.random.Generator | int | None = None):
        super().__init__(None, ties=ties, rng=rng)

    def fit(self, votes: Votes) -> Wawa:
        super().fit(votes)
        self.skills_ = self.weights_
        return self
