"""Zero-Based Skill: a weighted majority vote whose weights chase the annotators' accuracy.

Start every annotator at skill ``1 / n_labels + eps``; then, ``max_iter`` times: take the
skill-weighted majority vote, and move each skill towards the share of the annotator's
votes equal to that vote, ``s_j <- s_j + lr (acc_j - s_j)``, a gradient step on the
squared error ``(acc_j - s_j)^2 / 2``; the learning rate starts at ``lr_init`` and is
multiplied by ``lr_reduce_factor`` at every ``lr_steps_to_reduce``-th iteration. The
labels are the majority vote weighted by the final skills.

This is the scheme of crowd-kit's ``ZeroBasedSkill`` (which documents no paper; Ustalov
et al. 2023 list it among the crowd-kit aggregators), with the same defaults. Like
crowd-kit it runs all ``max_iter`` iterations; ``converged_`` reports whether the labels
of the last two iterations agree. Each iteration is two ``np.bincount`` passes over the
votes.

References
----------
Ustalov, D., Pavlichenko, N. and Tseitlin, B. (2023). Learning from Crowds with Crowd-Kit.
*Journal of Open Source Software* 9(96), 6227. doi:10.21105/joss.06227
"""

from __future__ import annotations

import numpy as np

from annokit.core.soft_labels import DEFAULT_TIES, TiePolicy
from annokit.core.votes import Votes
from annokit.quality.common import check_nonneg_float, check_positive_int, require_annotators
from annokit.quality.majority import WeightedMajorityVote

__all__ = ["ZeroBasedSkill"]


class ZeroBasedSkill:
    """Zero-Based Skill aggregation (skills fitted by gradient steps on the agreement).

    Parameters
    ----------
    max_iter : int, default=100
        Iterations (all are run, as in crowd-kit).
    lr_init : float, default=1.0
        Initial learning rate.
    lr_steps_to_reduce : int, default=20
        The learning rate is reduced at every iteration divisible by this.
    lr_reduce_factor : float, default=0.5
    eps : float, default=1e-5
        Added to the initial skill ``1 / n_labels``.
    ties : {"first", "first_seen", "random", "report"}, default=DEFAULT_TIES
        Tie policy of the final weighted vote; the iterations take the first tied label
        in label order (crowd-kit's rule).
    rng : numpy Generator, int or None
        Only used by ``ties="random"``.

    Attributes
    ----------
    skills_ : ndarray of shape (n_annotators,)
        The final skills (the weights of the final vote, also ``weights_``).
    labels_, labels_codes_, posteriors_, is_tied_, tied_, n_ties_
        As in :class:`~annokit.quality.WeightedMajorityVote`.
    n_iter_ : int
    converged_ : bool
        Whether the last iteration's weighted vote equals the one before it.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": list("aaabbbccc"), "annotator": list("xyz" * 3),
    ...                    "label": list("110000111")})
    >>> z = ZeroBasedSkill().fit(Votes.from_long(df))
    >>> z.labels_.tolist(), z.skills_.round(3).tolist()
    (['1', '0', '1'], [1.0, 1.0, 0.667])
    """

    def __init__(self, *, max_iter: int = 100, lr_init: float = 1.0,
                 lr_steps_to_reduce: int = 20, lr_reduce_factor: float = 0.5,
                 eps: float = 1e-5, ties: TiePolicy = DEFAULT_TIES,
                 rng: np.random.Generator | int | None = None):
        self.ties = ties
        self.rng = rng
        self.max_iter = max_iter
        self.lr_init = lr_init
        self.lr_steps_to_reduce = lr_steps_to_reduce
        self.lr_reduce_factor = lr_reduce_factor
        self.eps = eps

    def fit(self, votes: Votes) -> ZeroBasedSkill:
        votes = require_annotators(votes, "ZeroBasedSkill.fit")
        max_iter = check_positive_int("max_iter", self.max_iter)
        steps = check_positive_int("lr_steps_to_reduce", self.lr_steps_to_reduce)
        lr = check_nonneg_float("lr_init", self.lr_init)
        factor = check_nonneg_float("lr_reduce_factor", self.lr_reduce_factor)
        eps = check_nonneg_float("eps", self.eps)
        ann_index, ann_ids = votes.annotator_codes("ZeroBasedSkill")
        n_ann, n_labels = len(ann_ids), votes.n_labels
        item = votes.item_index.astype(np.int64)
        ann = ann_index.astype(np.int64)
        label = votes.label_index.astype(np.int64)
        flat = item * n_labels + label
        n_per_ann = np.bincount(ann, minlength=n_ann).astype(np.float64)
        has = n_per_ann > 0
        # crowd-kit counts the labels that occur in the votes
        used = np.unique(label).size
        skills = np.full(n_ann, 1.0 / used + eps)
        labels: np.ndarray | None = None
        prev: np.ndarray | None = None
        for n_iter in range(1, max_iter + 1):
            if n_iter % steps == 0:
                lr *= factor
            scores = np.bincount(flat, weights=skills[ann], minlength=votes.n_items * n_labels)
            prev, labels = labels, scores.reshape(votes.n_items, n_labels).argmax(axis=1)
            hit = np.bincount(ann, weights=labels[item] == label, minlength=n_ann)
            acc = np.divide(hit, n_per_ann, out=np.zeros(n_ann), where=has)
            # annotators without votes keep their skill (crowd-kit has no row for them)
            skills = np.where(has, skills + lr * (acc - skills), skills)
        final = WeightedMajorityVote(skills, ties=self.ties, rng=self.rng).fit(votes)
        for name in ("labels_", "labels_codes_", "posteriors_", "tied_", "is_tied_", "n_ties_",
                     "weights_"):
            setattr(self, name, getattr(final, name))
        self.skills_ = skills
        self.n_iter_ = n_iter
        self.converged_ = (prev is not None and labels is not None
                           and bool(np.array_equal(prev, labels)))
        return self
