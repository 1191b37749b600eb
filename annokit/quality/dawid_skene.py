"""Dawid-Skene EM: full confusion matrices per annotator, and the one-coin variant.

Both estimators start with an M-step from the vote distributions (majority-vote
soft labels), then alternate an E-step (item posteriors from the parameters)
and an M-step (class priors and annotator parameters from those posteriors).
The fitted parameters are always the ones re-estimated from the final
posteriors, as in crowd-kit. Each iteration is one pass over the items
(:mod:`annokit.quality.em_blocks`: two sparse products with the (items x
annotator-label) vote matrix, a softmax and two dot products), about 0.08 s per
iteration on 5M votes.

References
----------
Dawid, A. P. and Skene, A. M. (1979). Maximum likelihood estimation of observer
error-rates using the EM algorithm. *Applied Statistics* 28(1), 20-28.
doi:10.2307/2346806

Neal, R. M. and Hinton, G. E. (1998). A view of the EM algorithm that justifies
incremental, sparse, and other variants. In *Learning in Graphical Models*,
355-368. doi:10.1007/978-94-011-5014-9_12
"""

from __future__ import annotations

import numpy as np

from annokit.core.progress import progress
from annokit.core.votes import Votes
from annokit.quality.common import (
    check_nonneg_float,
    check_positive_int,
    clamp,
    gold_codes,
    label_names,
    require_annotators,
    vote_matrix,
    warn_not_converged,
)
from annokit.quality.em_blocks import (
    BlockSums,
    block_pass,
    entropy,
    expected_log_joint,
    start_sums,
    whole_block,
)

__all__ = ["DawidSkene", "OneCoinDawidSkene", "ds_log_joint", "ds_log_prior", "ds_log_table",
           "ds_m_step", "objective_terms", "onecoin_confusions", "onecoin_log_joint",
           "onecoin_log_prior", "onecoin_log_table", "onecoin_m_step"]


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

    def _run(self, votes: Votes, m_step, log_table, log_prior):
        """EM from the majority-vote soft labels; returns the parameters re-estimated from the
        final posteriors.

        ``m_step(mass, post_sum) -> params`` from the expected counts ``mass = X^T q`` (``X``:
        the items x annotator-label vote matrix) and the posteriors' column sums;
        ``log_table(params)`` the (n_annotators * n_labels, n_labels) log probabilities of each
        annotator-label column given the true label, and the log class priors, so that the log
        joint is ``J_ik = log p_k + sum_v log P(vote v | true label k)``; ``log_prior(params)``
        the log density of the smoothing pseudo-counts (0 without smoothing). Initialisation is
        one M-step from the vote distributions ``q_0``; iteration ``t`` is an E-step
        ``q_t = E(theta_{t-1})`` then an M-step ``theta_t = M(q_t)``, followed by the objective

            G_t = (sum_ik q_ik J_ik(theta_t) + H(q_t) + log_prior(theta_t)) / n_votes,

        the evidence lower bound plus the log prior that the smoothed M-step maximises
        (Neal and Hinton 1998, section 2): the E-step maximises it over ``q`` and the M-step
        over ``theta``, so it never decreases, up to rounding. EM stops once
        ``|G_t - G_{t-1}| < tol`` (``G_0`` is evaluated at ``(q_0, theta_0)``). The posteriors
        kept and the parameters returned are always ``(q_t, theta_t)`` of the same iteration,
        whether EM converged or ran out of ``max_iter``. One pass over the items per iteration
        (:func:`annokit.quality.em_blocks.block_pass`) evaluates ``G_t``'s data terms at
        ``theta_t`` and makes ``q_{t+1}`` with its sums.
        """
        gold = self._gold(votes)
        counts = votes.counts().astype(np.float64)
        post = clamp(counts / counts.sum(axis=1, keepdims=True), gold)
        following = np.empty_like(post)  # q_{t+1}, made by the pass that evaluates G_t
        n_votes = votes.n_votes
        block = whole_block(vote_matrix(votes), gold)

        def step(params, post, following) -> BlockSums:
            table, log_priors = log_table(params)
            return block_pass(block, table, log_priors, post, following)

        sums = start_sums(block, post)
        post_entropy = sums.entropy
        params = m_step(sums.mass, sums.post_sum)
        sums = step(params, post, following)
        prev = (sums.expected + post_entropy + log_prior(params)) / n_votes
        change, converged = np.inf, False
        n_iter = 0  # iterations run, reported after the loop
        with progress(total=self.max_iter, desc=f"{type(self).__name__} EM", unit="iter") as bar:
            while n_iter < self.max_iter:
                n_iter += 1
                bar.update(1)
                post, following, post_entropy = following, post, sums.entropy  # E-step
                params = m_step(sums.mass, sums.post_sum)   # M-step from those posteriors
                sums = step(params, post, following)
                value = (sums.expected + post_entropy + log_prior(params)) / n_votes
                change, prev = value - prev, value
                # |change|: the objective never decreases, so a drop beyond rounding is no sign
                # of convergence; tol=0 asks for exactly max_iter iterations
                if abs(change) < self.tol:
                    converged = True
                    break
        self.posteriors_ = post
        self.labels_codes_ = post.argmax(axis=1)
        self.labels_ = label_names(votes, self.labels_codes_)
        self.n_iter_ = n_iter
        self.converged_ = converged
        self.log_likelihood_ = sums.log_likelihood
        if not converged and self.tol > 0:
            warn_not_converged(type(self).__name__, n_iter, change, self.tol,
                               what="objective")
        return params


class DawidSkene(_EMBase):
    """Dawid-Skene (1979) EM with a full confusion matrix per annotator.

    Parameters
    ----------
    max_iter : int, default=100
        Maximum number of EM iterations (one E-step plus one M-step each, after
        the initial M-step from the vote distributions).
    tol : float, default=1e-5
        Stop once the objective per vote (nats) changes by less than ``tol``
        between iterations (see Notes). Scale-free whatever the size of the data.
        ``tol=0`` runs exactly ``max_iter`` iterations. Not crowd-kit's stopping
        rule, and not the same stopping iteration (table in Notes).
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
        ``P(true label = k | votes)`` from the last E-step; usable as soft labels.
    labels_ : ndarray of str, shape (n_items,)
        Most probable label, by name (first in label order on exact ties).
    labels_codes_ : ndarray of int, shape (n_items,)
        The same as indices into ``votes.labels`` (the columns of ``posteriors_``).
    priors_ : ndarray of shape (n_labels,)
        Class priors ``p_k``, re-estimated from ``posteriors_`` (the last M-step),
        whether EM converged or stopped at ``max_iter``.
    confusions_ : ndarray of shape (n_annotators, n_labels, n_labels)
        ``confusions_[j, k, l] = P(annotator j says l | true label k)``, from the
        same M-step as ``priors_``; rows without expected counts (``smoothing=0``)
        are uniform.
    n_iter_ : int
        Number of EM iterations run (E-steps; crowd-kit's ``n_iter`` counts the same).
    converged_ : bool
        True only when the objective changed by less than ``tol``; False when
        ``max_iter`` was reached first, and always with ``tol=0``.
    log_likelihood_ : float
        Observed-data log-likelihood ``sum_i log sum_k p_k prod_j pi^(j)_{k, l_ij}``
        at ``priors_`` and ``confusions_`` (Dawid and Skene 1979, eq. 2.4).

    Notes
    -----
    M-step (eqs. 2.3, 2.5): ``pi^(j)_{kl} ∝ sum_i T_ik n^(j)_il + smoothing`` and
    ``p_k ∝ sum_i T_ik + smoothing``; E-step (eq. 2.5):
    ``T_ik ∝ p_k prod_j prod_l (pi^(j)_{kl})^{n^(j)_il}``, computed in log space.

    Stopping rule: after the M-step of iteration ``t`` (parameters ``theta_t``
    estimated from the posteriors ``q_t``), the objective per vote is

        ``G_t = (E_q[log p(votes, true labels | theta)] + H(q) + log prior(theta)) / n_votes``

    at ``(q_t, theta_t)``: the evidence lower bound plus the log density of the
    smoothing pseudo-counts, which EM with this M-step never decreases (Neal and
    Hinton 1998). EM stops once ``|G_t - G_{t-1}| < tol``; ``G_0`` is taken at the
    vote distributions and the initial M-step.

    crowd-kit 1.4.2 (``DawidSkene(n_iter=100, tol=1e-5)``) iterates the same way
    (from the same start, with parameters re-estimated from the final
    posteriors), without smoothing, but its stopping loss adds ``log p_k`` once
    per vote rather than once per item, so it is not a bound EM increases, and it
    stops at the first iteration where that loss drops. Run for crowd-kit's
    number of iterations with ``smoothing=0``, annokit's posteriors equal
    crowd-kit's to 2e-5 on every set below (crowd-kit clips error rates at 1e-10);
    at both defaults they stop at different iterations
    (``benchmarks/compare_crowdkit_em.py``; iterations annokit / crowd-kit,
    share of equal ``labels_``, max absolute difference of the posteriors;
    LeWiDi 2023 training splits):

    ============  =======  ======  ======  =======  ======  ======
    data set      DS iter  labels  post    1c iter  labels  post
    ============  =======  ======  ======  =======  ======  ======
    snow2008_rte  8 / 9    1.0000  0.0079  8 / 10   1.0000  0.11
    dog           10 / 14  0.9988  0.026   5 / 14   1.0000  0.27
    bluebirds     7 / 2    0.9907  0.54    16 / 19  1.0000  0.0052
    face          13 / 40  0.9966  0.33    5 / 11   1.0000  0.025
    ArMIS         7 / 3    1.0000  0.063   5 / 3    1.0000  0.010
    HS-Brexit     9 / 2    0.9860  0.53    5 / 8    1.0000  0.0032
    ============  =======  ======  ======  =======  ======  ======

    (DS = Dawid-Skene, 1c = one-coin.) Over the script's 20 runs (these, and the
    LeWiDi dev and test splits) the posteriors differ by more than 1e-3 in 19,
    and crowd-kit stopped on a drop of its loss in 10.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": list("aaabbbccc"), "annotator": list("xyzxyzxyz"),
    ...                    "label": list("110000111")})
    >>> ds = DawidSkene().fit(Votes.from_long(df))
    >>> ds.labels_.tolist(), ds.labels_codes_.tolist(), ds.converged_
    (['1', '0', '1'], [1, 0, 1], True)
    >>> bool(abs(ds.posteriors_.sum(axis=1) - 1).max() < 1e-12)
    True
    """

    def fit(self, votes: Votes) -> DawidSkene:
        votes = require_annotators(votes, "DawidSkene.fit")
        self._check_params()
        shape = {"n_annotators": votes.n_annotators, "n_labels": votes.n_labels}
        a = self.smoothing
        self.priors_, self.confusions_ = self._run(
            votes,
            lambda mass, post_sum: ds_m_step(mass, post_sum, smoothing=a, **shape),
            lambda params: ds_log_table(params, **shape),
            lambda params: ds_log_prior(params, a),
        )
        return self


def ds_m_step(mass, post_sum, *, smoothing, n_annotators, n_labels):
    """Dawid-Skene M-step from the expected counts: ``mass = X.T @ post`` of shape
    (n_annotators * n_labels, n_labels) and ``post_sum`` (n_labels,); returns (priors,
    confusions). Shared by the in-memory and the Dask engines."""
    priors = post_sum + smoothing
    # (J*L, K) -> (J, L, K) -> (J, K, L): expected counts of "true k, said l"
    conf = np.asarray(mass).reshape(n_annotators, n_labels, n_labels).transpose(0, 2, 1) \
        + smoothing
    totals = conf.sum(axis=2, keepdims=True)
    conf = np.divide(conf, totals, out=np.full_like(conf, 1.0 / n_labels), where=totals > 0)
    return priors / priors.sum(), conf


def ds_log_table(params, *, n_annotators, n_labels):
    """``(T, log p)``: ``T[j * n_labels + l, k] = log pi^(j)_kl``, the log probability of each
    annotator-label column of the vote matrix given the true label, and the log priors."""
    priors, conf = params
    with np.errstate(divide="ignore"):       # smoothing=0: log 0 = -inf is meant
        return (np.log(conf).transpose(0, 2, 1).reshape(n_annotators * n_labels, n_labels),
                np.log(priors))


def ds_log_joint(x, params, *, n_annotators, n_labels):
    """``log p_k + sum_{j,l} n^(j)_il log pi^(j)_kl`` for the rows of the vote matrix ``x``."""
    table, log_priors = ds_log_table(params, n_annotators=n_annotators, n_labels=n_labels)
    joint = np.asarray(x @ table)
    joint += log_priors  # in place: a fresh (n_items, n_labels) buffer costs page faults
    return joint


def ds_log_prior(params, smoothing):
    """Dirichlet(1 + a) on every confusion row and on the priors, up to a constant."""
    priors, conf = params
    return smoothing * (np.log(conf).sum() + np.log(priors).sum()) if smoothing > 0 else 0.0


def onecoin_m_step(mass, post_sum, n_per_ann, *, smoothing, n_annotators, n_labels):
    """One-coin M-step from ``mass = X.T @ post`` and the votes per annotator; returns
    (priors, skills)."""
    eye = np.eye(n_labels, dtype=bool)
    priors = post_sum + smoothing
    # expected correct votes of j: sum over j's votes of P(T_i = given label)
    correct = np.asarray(mass).reshape(n_annotators, n_labels, n_labels)[:, eye].sum(axis=1)
    skills = (correct + smoothing) / (n_per_ann + 2 * smoothing) if smoothing > 0 else np.divide(
        correct, n_per_ann, out=np.full(n_annotators, 0.5), where=n_per_ann > 0)
    return priors / priors.sum(), np.clip(skills, 1e-12, 1 - 1e-12)


def onecoin_log_table(params, *, n_annotators, n_labels):
    """``(T, log p)``: ``T[j * n_labels + l, k]`` is ``log s_j`` for ``l = k`` and
    ``log((1 - s_j) / (K - 1))`` otherwise; and the log priors."""
    priors, skills = params
    eye = np.eye(n_labels, dtype=bool)
    log_right = np.log(skills)
    log_wrong = np.log((1 - skills) / max(n_labels - 1, 1))
    log_p = np.where(eye[None, :, :], log_right[:, None, None], log_wrong[:, None, None])
    return log_p.reshape(n_annotators * n_labels, n_labels), np.log(priors)


def onecoin_log_joint(x, params, *, n_annotators, n_labels):
    """``log p_k + sum_v (log s_j if l_v = k else log((1 - s_j) / (K - 1)))``."""
    table, log_priors = onecoin_log_table(params, n_annotators=n_annotators, n_labels=n_labels)
    return np.asarray(x @ table) + log_priors


def onecoin_log_prior(params, smoothing):
    """Beta(1 + a, 1 + a) on every skill, Dirichlet(1 + a) on the priors, up to a constant."""
    priors, skills = params
    if smoothing == 0:
        return 0.0
    return smoothing * (np.log(skills).sum() + np.log1p(-skills).sum() + np.log(priors).sum())


def onecoin_confusions(skills, n_labels):
    """The confusion matrices a one-coin model implies."""
    eye = np.eye(n_labels, dtype=bool)
    off = (1 - skills) / max(n_labels - 1, 1)
    return np.where(eye, skills[:, None, None], off[:, None, None])


def objective_terms(post, joint):
    """``(sum_ik q_ik joint_ik, sum_ik H(q_i))``: the data part of the EM objective
    (:func:`annokit.quality.em_blocks.expected_log_joint` and
    :func:`~annokit.quality.em_blocks.entropy`)."""
    return expected_log_joint(post, joint), entropy(post)


class OneCoinDawidSkene(_EMBase):
    """One-coin Dawid-Skene: each annotator has a single accuracy (skill).

    Annotator ``j`` reports the true label with probability ``s_j`` and each other
    label with probability ``(1 - s_j) / (n_labels - 1)``.

    Parameters
    ----------
    max_iter : int, default=100
    tol : float, default=1e-5
        Change of the objective per vote (nats) at which EM stops, as in
        :class:`DawidSkene`, with the Beta(1 + smoothing, 1 + smoothing) log
        prior of the skills in the objective.
    smoothing : float, default=0.01
        Pseudo-count added to each annotator's expected correct and incorrect
        vote counts (and to the class-prior counts) in the M-step.
    clamp_gold : bool, default=False
        Fix the posteriors of gold items to their gold label.

    Attributes
    ----------
    posteriors_ : ndarray of shape (n_items, n_labels)
    labels_, labels_codes_ : ndarray of shape (n_items,)
        Most probable label by name, and as indices into ``votes.labels``.
    priors_ : ndarray of shape (n_labels,)
        Re-estimated from ``posteriors_``, as in :class:`DawidSkene`.
    skills_ : ndarray of shape (n_annotators,)
        Estimated accuracy ``s_j`` from the same M-step as ``priors_`` (1/2 for
        annotators without votes).
    confusions_ : ndarray of shape (n_annotators, n_labels, n_labels)
        The implied confusion matrices (for the Raykar-Yu spammer score).
    n_iter_, converged_, log_likelihood_
        As in :class:`DawidSkene`.

    Notes
    -----
    Against crowd-kit 1.4.2's ``OneCoinDawidSkene(n_iter=100, tol=1e-5)``: the same
    iterations (posteriors equal to 1e-10 at crowd-kit's iteration count with
    ``smoothing=0``; crowd-kit clips error rates at 1e-10), a different stopping
    rule; see the table in :class:`DawidSkene`.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": list("aaabbbccc"), "annotator": list("xyzxyzxyz"),
    ...                    "label": list("110000111")})
    >>> oc = OneCoinDawidSkene().fit(Votes.from_long(df))
    >>> oc.labels_.tolist()
    ['1', '0', '1']
    """

    def fit(self, votes: Votes) -> OneCoinDawidSkene:
        votes = require_annotators(votes, "OneCoinDawidSkene.fit")
        annotators, annotator_ids = votes.annotator_codes("OneCoinDawidSkene.fit")
        n_ann = len(annotator_ids)
        self._check_params()
        shape = {"n_annotators": n_ann, "n_labels": votes.n_labels}
        n_per_ann = np.bincount(annotators, minlength=n_ann).astype(np.float64)
        a = self.smoothing
        self.priors_, skills = self._run(
            votes,
            lambda mass, post_sum: onecoin_m_step(mass, post_sum, n_per_ann, smoothing=a,
                                                  **shape),
            lambda params: onecoin_log_table(params, **shape),
            lambda params: onecoin_log_prior(params, a),
        )
        self.skills_ = skills
        self.confusions_ = onecoin_confusions(skills, votes.n_labels)
        return self
