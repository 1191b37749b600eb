"""Dawid-Skene EM: full confusion matrices per annotator, and the one-coin variant.

Both estimators alternate an M-step (class priors and annotator parameters from
the current item posteriors) and an E-step (item posteriors from the parameters),
starting from the vote distributions (majority-vote soft labels). Each step is
two sparse matrix products over the (items x annotator-label) vote matrix, so a
5M-vote set costs a few hundred milliseconds per iteration.

References
----------
Dawid, A. P. and Skene, A. M. (1979). Maximum likelihood estimation of observer
error-rates using the EM algorithm. *Applied Statistics* 28(1), 20-28.
doi:10.2307/2346806
"""

from __future__ import annotations

import numpy as np
from scipy.special import entr

from annokit.core.votes import Votes
from annokit.quality._common import (
    check_nonneg_float,
    check_positive_int,
    clamp,
    gold_codes,
    normalize_log,
    require_annotators,
    vote_matrix,
    warn_not_converged,
)

__all__ = ["DawidSkene", "OneCoinDawidSkene"]


class _EMBase:
    """Parameters and bookkeeping shared by the EM estimators (both take the same options)."""

    def __init__(self, *, max_iter: int = 100, tol: float = 1e-5, smoothing: float = 0.01,
                 clamp_gold: bool = False):
        self.max_iter = max_iter
        self.tol = tol
        self.smoothing = smoothing
        self.clamp_gold = clamp_gold

    def _gold(self, votes: Votes) -> np.ndarray:
        if not self.clamp_gold:
            return np.full(votes.n_items, -1, dtype=np.int64)
        return gold_codes(votes, None, what=f"{type(self).__name__}.fit")

    def _check_params(self) -> None:
        check_positive_int("max_iter", self.max_iter)
        check_nonneg_float("tol", self.tol)
        check_nonneg_float("smoothing", self.smoothing)

    def _run(self, votes: Votes, m_step, log_joint):
        """Alternate M- and E-steps from the majority-vote soft labels until the bound converges.

        ``m_step(post) -> params`` and ``log_joint(params) -> (n_items, n_labels)``
        array of ``log p_k + sum_v log P(vote v | true label k)``. Each iteration
        evaluates the evidence lower bound per vote at the M-step pair,
        ``F(q, theta) = (sum_ik q_ik log_joint_ik + H(q)) / n_votes``, which EM never
        decreases, and stops once it improves by less than ``tol``, keeping the
        posteriors ``q`` of the last E-step and the parameters re-estimated from them.
        """
        gold = self._gold(votes)
        counts = votes.counts().astype(np.float64)
        post = clamp(counts / counts.sum(axis=1, keepdims=True), gold)
        prev, change, converged = -np.inf, np.inf, False
        for n_iter in range(1, self.max_iter + 1):
            params = m_step(post)
            joint = log_joint(params)
            expected = np.multiply(post, joint, out=np.zeros_like(post), where=post > 0).sum()
            bound = (expected + entr(post).sum()) / votes.n_votes
            change, prev = bound - prev, bound
            if self.tol > 0 and change < self.tol:   # tol=0 asks for exactly max_iter iterations
                converged = True
                log_norm = normalize_log(joint)[1]
                break
            post, log_norm = normalize_log(joint)
            clamp(post, gold)
        self.posteriors_ = post
        self.labels_ = post.argmax(axis=1)
        self.n_iter_ = n_iter
        self.converged_ = converged
        self.log_likelihood_ = float(log_norm.sum())
        if not converged and self.tol > 0:
            warn_not_converged(type(self).__name__, n_iter, change, self.tol,
                               what="evidence lower bound")
        return params


class DawidSkene(_EMBase):
    """Dawid-Skene (1979) EM with a full confusion matrix per annotator.

    Parameters
    ----------
    max_iter : int, default=100
        Maximum number of EM iterations (one M-step plus one E-step each).
    tol : float, default=1e-5
        Stop when the evidence lower bound per vote (nats),
        ``F(q, theta) = (E_q[log p(votes, true labels | theta)] + H(q)) / n_votes``
        evaluated after each M-step, improves by less than ``tol``; the
        posteriors kept are those of the last E-step and the parameters are
        re-estimated from them. This is crowd-kit's criterion and default, so
        both stop at the same iteration; scale-free whatever the size of the
        data. ``tol=0`` runs exactly ``max_iter`` iterations.
    smoothing : float, default=0.01
        Pseudo-count added to every confusion-matrix cell and class-prior count
        in the M-step (a symmetric Dirichlet MAP estimate); keeps log
        probabilities finite for annotators who never used a label. 0 gives the
        plain maximum-likelihood update of the paper.
    clamp_gold : bool, default=False
        Fix the posterior of items with a gold label (``votes.gold``) to that label
        in every E-step (semi-supervised Dawid-Skene).

    Attributes
    ----------
    posteriors_ : ndarray of shape (n_items, n_labels)
        ``P(true label = k | votes)``; usable as soft labels.
    labels_ : ndarray of shape (n_items,)
        Most probable label (first in label order on exact ties).
    priors_ : ndarray of shape (n_labels,)
        Class priors ``pi_k``.
    confusions_ : ndarray of shape (n_annotators, n_labels, n_labels)
        ``confusions_[j, k, l] = P(annotator j says l | true label k)``; rows of
        annotators without votes are uniform.
    n_iter_ : int
        Number of M-steps (the first starts from the majority-vote soft labels).
    converged_ : bool
    log_likelihood_ : float
        Observed-data log-likelihood ``sum_i log sum_k pi_k prod_j pi^(j)_{k, l_ij}``
        at the final parameters (Dawid and Skene 1979, eq. 2.4).

    Notes
    -----
    M-step (eqs. 2.3, 2.5): ``pi^(j)_{kl} ∝ sum_i T_ik n^(j)_il + smoothing`` and
    ``p_k ∝ sum_i T_ik + smoothing``; E-step (eq. 2.5):
    ``T_ik ∝ p_k prod_j prod_l (pi^(j)_{kl})^{n^(j)_il}``, computed in log space.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": list("aaabbbccc"), "annotator": list("xyzxyzxyz"),
    ...                    "label": list("110000111")})
    >>> ds = DawidSkene().fit(Votes.from_long(df))
    >>> ds.labels_.tolist(), ds.converged_
    ([1, 0, 1], True)
    >>> bool(abs(ds.posteriors_.sum(axis=1) - 1).max() < 1e-12)
    True
    """

    def fit(self, votes: Votes) -> DawidSkene:
        votes = require_annotators(votes, "DawidSkene.fit")
        self._check_params()
        n_labels, n_ann = votes.n_labels, votes.n_annotators
        x = vote_matrix(votes)                       # (items, J*L)
        xt = x.T                                      # CSC view: fast scatter into (J*L, K)
        a = self.smoothing

        def m_step(post):
            priors = post.sum(axis=0) + a
            # (J*L, K) -> (J, L, K) -> (J, K, L): expected counts of "true k, said l"
            conf = np.asarray(xt @ post).reshape(n_ann, n_labels, n_labels).transpose(0, 2, 1) + a
            totals = conf.sum(axis=2, keepdims=True)
            conf = np.divide(conf, totals, out=np.full_like(conf, 1.0 / n_labels), where=totals > 0)
            return priors / priors.sum(), conf

        def log_joint(params):
            # log p_k + sum_{j,l} n^(j)_il log pi^(j)_kl
            priors, conf = params
            with np.errstate(divide="ignore"):       # smoothing=0: log 0 = -inf is meant
                log_conf = np.log(conf).transpose(0, 2, 1).reshape(n_ann * n_labels, n_labels)
                return np.asarray(x @ log_conf) + np.log(priors)

        self.priors_, self.confusions_ = self._run(votes, m_step, log_joint)
        return self


class OneCoinDawidSkene(_EMBase):
    """One-coin Dawid-Skene: each annotator has a single accuracy (skill).

    Annotator ``j`` reports the true label with probability ``s_j`` and each other
    label with probability ``(1 - s_j) / (n_labels - 1)``.

    Parameters
    ----------
    max_iter : int, default=100
    tol : float, default=1e-5
        Change of the evidence lower bound per vote (nats) at which EM stops, as
        in :class:`DawidSkene`.
    smoothing : float, default=0.01
        Pseudo-count added to each annotator's expected correct and incorrect
        vote counts (and to the class-prior counts) in the M-step.
    clamp_gold : bool, default=False
        Fix the posteriors of gold items to their gold label.

    Attributes
    ----------
    posteriors_ : ndarray of shape (n_items, n_labels)
    labels_ : ndarray of shape (n_items,)
    priors_ : ndarray of shape (n_labels,)
    skills_ : ndarray of shape (n_annotators,)
        Estimated accuracy ``s_j`` (1/2 for annotators without votes).
    confusions_ : ndarray of shape (n_annotators, n_labels, n_labels)
        The implied confusion matrices (for the Raykar-Yu spammer score).
    n_iter_, converged_, log_likelihood_
        As in :class:`DawidSkene`.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": list("aaabbbccc"), "annotator": list("xyzxyzxyz"),
    ...                    "label": list("110000111")})
    >>> oc = OneCoinDawidSkene().fit(Votes.from_long(df))
    >>> oc.labels_.tolist()
    [1, 0, 1]
    """

    def fit(self, votes: Votes) -> OneCoinDawidSkene:
        votes = require_annotators(votes, "OneCoinDawidSkene.fit")
        self._check_params()
        n_labels, n_ann = votes.n_labels, votes.n_annotators
        x = vote_matrix(votes)                        # (items, J*L)
        xt = x.T                                      # CSC view
        n_per_ann = np.asarray(x.sum(axis=0)).reshape(n_ann, n_labels).sum(axis=1)
        eye = np.eye(n_labels, dtype=bool)
        others = max(n_labels - 1, 1)
        a = self.smoothing

        def m_step(post):
            priors = post.sum(axis=0) + a
            # expected correct votes of j: sum over j's votes of P(T_i = given label)
            correct = np.asarray(xt @ post).reshape(n_ann, n_labels, n_labels)[:, eye].sum(axis=1)
            skills = (correct + a) / (n_per_ann + 2 * a) if a > 0 else np.divide(
                correct, n_per_ann, out=np.full(n_ann, 0.5), where=n_per_ann > 0)
            return priors / priors.sum(), np.clip(skills, 1e-12, 1 - 1e-12)

        def log_joint(params):
            # log p_k + sum_v (log s_j if l_v = k else log((1 - s_j) / (K - 1)))
            priors, skills = params
            log_right = np.log(skills)
            log_wrong = np.log((1 - skills) / others)
            log_p = np.where(eye[None, :, :], log_right[:, None, None], log_wrong[:, None, None])
            return np.asarray(x @ log_p.reshape(n_ann * n_labels, n_labels)) + np.log(priors)

        self.priors_, skills = self._run(votes, m_step, log_joint)
        self.skills_ = skills
        off = (1 - skills) / others
        self.confusions_ = np.where(eye, skills[:, None, None], off[:, None, None])
        return self
