"""MACE: Multi-Annotator Competence Estimation (Hovy et al. 2013).

Generative story (Hovy et al. 2013, section 2): each item ``i`` has a true label
``T_i`` drawn uniformly; for each vote annotator ``j`` either knows
(``S_ij = 0``, probability ``theta_j``) and reports ``T_i``, or spams
(``S_ij = 1``) and draws a label from a personal strategy ``xi_j``::

    P(A_ij = a | T_i = t) = (1 - theta_j) * xi_j[a] + theta_j * [a == t]

Training follows the reference implementation: variational-Bayes EM by default
(Beta(alpha, beta) prior on the spam/know split, a symmetric Dirichlet(10)
prior on strategies, parameters replaced by ``exp(E[log .])`` through the
digamma function), or plain EM with additive smoothing ``0.01 / n_labels``
(``method="em"``); a fixed number of random restarts (initial parameters
``1 + 0.5 * U(0, 1)`` normalised), keeping the restart with the highest log
marginal likelihood. Every E-step is two sparse matrix products over the
(items x annotator-answer) vote matrix; nothing depends on row order.

References
----------
Hovy, D., Berg-Kirkpatrick, T., Vaswani, A. and Hovy, E. (2013). Learning Whom
to Trust with MACE. *NAACL-HLT 2013*, 1120-1130. https://aclanthology.org/N13-1132/
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy.special import digamma

from annokit.core.checks import check_option, check_rng
from annokit.core.progress import progress
from annokit.core.votes import Votes
from annokit.quality._common import (
    check_nonneg_float,
    check_positive_int,
    clamp,
    gold_codes,
    label_names,
    normalize_log,
    require_annotators,
    vote_matrix,
)

__all__ = ["MACE"]

_STRATEGY_PRIOR = 10.0   # symmetric Dirichlet prior on xi_j in the reference implementation
_INIT_NOISE = 0.5


class MACE:
    """MACE annotator competence and item posteriors (Hovy et al. 2013).

    Parameters
    ----------
    method : {"vb", "em"}, default="vb"
        Variational-Bayes EM (the paper's recommended training, the reference
        implementation's default) or plain EM.
    n_restarts : int, default=10
        Random restarts; the one with the highest log marginal likelihood wins.
    max_iter : int, default=50
        Iterations per restart (the reference implementation's default; it runs
        a fixed number, which ``tol=0`` reproduces).
    tol : float, default=1e-7
        A restart stops early when the log marginal likelihood per vote changes
        by less than ``tol`` (nats) between iterations.
    alpha, beta : float, default=0.5
        Beta prior pseudo-counts of spamming and knowing (``method="vb"``).
    smoothing : float, optional
        Additive smoothing of expected counts for ``method="em"``; default
        ``0.01 / n_labels`` as in the reference implementation.
    clamp_gold : bool, default=False
        Use ``votes.gold`` as control items (posterior fixed to the gold label).
    rng : numpy Generator, int or None
        Seeds the random restarts.

    Attributes
    ----------
    posteriors_ : ndarray of shape (n_items, n_labels)
        Posterior over the true label of each item.
    labels_ : ndarray of str, shape (n_items,)
        Most probable label by name; ``labels_codes_`` as indices into ``votes.labels``.
    competence_ : ndarray of shape (n_annotators,)
        Probability that the annotator knows the answer (``theta_j``): the
        variational posterior mean ``(E[n_know] + beta) / (E[n] + alpha + beta)``
        for ``method="vb"``, the smoothed EM estimate for ``method="em"``, from
        the expected counts of the E-step that gave ``posteriors_``.
    spamming_ : ndarray of shape (n_annotators,)
        ``1 - competence_``.
    strategies_ : ndarray of shape (n_annotators, n_labels)
        Spamming strategy ``xi_j`` (label distribution when guessing), from the
        same expected counts: the Dirichlet(10) posterior mean for ``method="vb"``,
        the smoothed EM estimate for ``method="em"``.
    priors_ : ndarray of shape (n_labels,)
        The (uniform) class prior of the model.
    n_iter_ : int
        Iterations run by the winning restart.
    converged_ : bool
        Whether the winning restart met ``tol`` within ``max_iter`` iterations.
    log_likelihood_ : float
        Log marginal likelihood of the winning restart, at the parameters its
        last E-step used (those of the last M-step).
    best_restart_ : int

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": list("aaabbbcccddd"), "annotator": list("xyz" * 4),
    ...                    "label": list("110000111001")})
    >>> mace = MACE(rng=0).fit(Votes.from_long(df))
    >>> mace.labels_.tolist()
    ['1', '0', '1', '0']
    >>> bool(mace.competence_[2] < mace.competence_[0])
    True
    """

    def __init__(self, *, method: Literal["vb", "em"] = "vb", n_restarts: int = 10,
                 max_iter: int = 50, tol: float = 1e-7, alpha: float = 0.5, beta: float = 0.5,
                 smoothing: float | None = None, clamp_gold: bool = False,
                 rng: np.random.Generator | int | None = None):
        self.method = method
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.tol = tol
        self.alpha = alpha
        self.beta = beta
        self.smoothing = smoothing
        self.clamp_gold = clamp_gold
        self.rng = rng

    def fit(self, votes: Votes) -> MACE:
        votes = require_annotators(votes, "MACE.fit")
        check_option("method", self.method, ("vb", "em"))
        check_positive_int("n_restarts", self.n_restarts)
        check_positive_int("max_iter", self.max_iter)
        check_nonneg_float("tol", self.tol)
        check_nonneg_float("alpha", self.alpha, positive=True)
        check_nonneg_float("beta", self.beta, positive=True)
        n_labels = votes.n_labels
        smoothing = (0.01 / n_labels if self.smoothing is None
                     else check_nonneg_float("smoothing", self.smoothing))
        gen = check_rng(self.rng)
        gold = (gold_codes(votes, None, what="MACE.fit") if self.clamp_gold
                else np.full(votes.n_items, -1, dtype=np.int64))
        data = _Data(votes, gold)

        best = None
        with progress(total=self.n_restarts, desc="MACE restarts", unit="restart") as bar:
            best = self._restarts(data, gen, votes, n_labels, smoothing, bar)
        self._finish(votes, best, smoothing, n_labels)
        return self

    def _restarts(self, data, gen, votes, n_labels, smoothing, bar) -> dict:
        best = None
        for restart in range(self.n_restarts):
            spam = 1.0 + _INIT_NOISE * gen.random((votes.n_annotators, 2))
            spam /= spam.sum(axis=1, keepdims=True)
            strat = 1.0 + _INIT_NOISE * gen.random((votes.n_annotators, n_labels))
            strat /= strat.sum(axis=1, keepdims=True)
            result = self._run(data, spam, strat, smoothing)
            bar.update(1)
            if best is None or result["ll"] > best["ll"]:
                best = dict(result, restart=restart)
        return best

    def _finish(self, votes, best, smoothing, n_labels) -> None:
        # competence_ and strategies_ both from the expected counts of the E-step that gave
        # posteriors_ (the reference implementation reports the parameters that E-step used)
        post, know_c, spam_c, strat_c = best["post"], best["know"], best["spam_c"], best["strat_c"]
        if self.method == "vb":
            comp = (know_c + self.beta) / (know_c + spam_c + self.alpha + self.beta)
            strat = strat_c + _STRATEGY_PRIOR
        else:
            comp = (know_c + smoothing) / (know_c + spam_c + 2 * smoothing)
            strat = strat_c + smoothing
        strat = strat / strat.sum(axis=1, keepdims=True)
        self.posteriors_ = post
        self.labels_codes_ = post.argmax(axis=1)
        self.labels_ = label_names(votes, self.labels_codes_)
        self.competence_ = comp
        self.spamming_ = 1.0 - comp
        self.strategies_ = strat
        self.priors_ = np.full(n_labels, 1.0 / n_labels)
        self.n_iter_ = best["n_iter"]
        self.converged_ = best["converged"]
        self.log_likelihood_ = best["ll"]
        self.best_restart_ = best["restart"]
        # No warning when max_iter is reached: the reference implementation runs a fixed
        # number of iterations per restart; converged_ reports whether tol was met.

    def _run(self, data: _Data, spam: np.ndarray, strat: np.ndarray, smoothing: float) -> dict:
        """One restart: E-step, then (M-step, E-step) x max_iter, as the reference does."""
        stats = data.e_step(spam, strat)
        prev, change, converged, n_iter = stats["ll"], np.inf, False, 0
        for n_iter in range(1, self.max_iter + 1):
            spam, strat = self._m_step(stats, smoothing)
            stats = data.e_step(spam, strat)
            ll = stats["ll"]
            change = abs(ll - prev) / data.n_votes if np.isfinite(prev) else np.inf
            prev = ll
            if change < self.tol:
                converged = True
                break
        stats.update(n_iter=n_iter, converged=converged, change=change, strat=strat)
        return stats

    def _m_step(self, stats: dict, smoothing: float) -> tuple[np.ndarray, np.ndarray]:
        counts = np.stack([stats["spam_c"], stats["know"]], axis=1)      # (J, 2): spam, know
        strat_c = stats["strat_c"]
        if self.method == "vb":
            # variational M-step: exp(digamma(c + prior) - digamma(sum(c + prior)))
            c = counts + np.array([self.alpha, self.beta])
            spam = np.exp(digamma(c) - digamma(c.sum(axis=1, keepdims=True)))
            s = strat_c + _STRATEGY_PRIOR
            strat = np.exp(digamma(s) - digamma(s.sum(axis=1, keepdims=True)))
        else:
            c = counts + smoothing
            spam = c / c.sum(axis=1, keepdims=True)
            s = strat_c + smoothing
            strat = s / s.sum(axis=1, keepdims=True)
        return spam, strat


class _Data:
    """The vote matrix of one fit, with the vectorised E-step.

    ``P(A = a | T = l)`` depends only on the annotator ``j``, the answer ``a`` and
    ``l``, so the E-step is the Dawid-Skene E-step with MACE's confusion matrix
    ``(1 - theta_j) xi_j[a] + theta_j [a == l]``: one sparse product
    ``X @ log P`` over the (items x annotator-answer) count matrix ``X``; the
    expected counts need the posterior mass of the given answer, ``X.T @ post``.
    """

    def __init__(self, votes: Votes, gold: np.ndarray):
        self.n_items, self.n_labels, self.n_ann = votes.n_items, votes.n_labels, votes.n_annotators
        self.n_votes = votes.n_votes
        self.x = vote_matrix(votes)                     # (items, J*L), item-sorted CSR
        self.xt = self.x.T                              # CSC view: fast scatter into (J*L, L)
        self.n_ja = np.asarray(self.x.sum(axis=0)).reshape(self.n_ann, self.n_labels)
        self.gold = gold
        self.log_prior = -np.log(self.n_labels)
        self.eye = np.eye(self.n_labels, dtype=bool)

    def e_step(self, spam: np.ndarray, strat: np.ndarray) -> dict:
        n_ann, n_labels = self.n_ann, self.n_labels
        guess = spam[:, :1] * strat                     # (J, L): P(spam) xi_j[a]
        know = spam[:, 1:]                              # (J, 1): P(know)
        log_guess = np.log(guess)
        log_hit = np.log(guess + know)
        # log P(a | T = l) for row (j, a), column l
        log_p = np.where(self.eye[None, :, :], log_hit[:, :, None], log_guess[:, :, None])
        log_post = np.asarray(self.x @ log_p.reshape(n_ann * n_labels, n_labels)) + self.log_prior
        post, log_norm = normalize_log(log_post)
        known = self.gold >= 0
        if known.any():
            # control items: the marginal is restricted to the gold label
            rows = np.flatnonzero(known)
            log_norm[rows] = log_post[rows, self.gold[rows]]
            clamp(post, self.gold)
        # expected counts: a vote (j, a) on item i "knows" with P(T_i = a) know / (guess + know)
        mass = np.asarray(self.xt @ post).reshape(n_ann, n_labels, n_labels)
        p_true = mass[:, self.eye]                      # (J, L): sum of P(T_i = a) over votes (j, a)
        know_c = p_true * (know / (guess + know))
        strat_c = self.n_ja - know_c
        return {
            "post": post,
            "ll": float(log_norm.sum()),
            "know": know_c.sum(axis=1),
            "spam_c": strat_c.sum(axis=1),
            "strat_c": strat_c,
        }
