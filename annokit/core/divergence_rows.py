"""The divergences between two label distributions, each written once, as numba functions.

(With them the entropy gap ``H(p) - H(q)``, which the same consumers compare.)

The one implementation of the per-item divergences that every path computes:
the named functions of :mod:`annokit.core.divergence`, the fused metric kernels
(``dist_ce``, ``jsd`` and ``kl`` of :mod:`annokit.metrics.kernels`, ``wasserstein``
of :mod:`annokit.metrics.kernels_ordinal`, so the registry states, the engine, the
human ceiling, the perspectivist scores and the report), and the subsampling
curves (:mod:`annokit.subsample.engine`). A plain numpy evaluation of each
definition is the tests' oracle (``tests/metrics/oracle.py``); replacing one of
these functions by a wrong one changes every consumer (``tests/metrics/test_mutation.py``).

Each divergence is a sum over the labels ``j`` of a per-label *term* and a
*distance* made of that sum; the callers own the loop over labels (the metric
kernels fuse it with the other per-item quantities, so that it vectorises) and
the logs (the metric kernels use their vectorisable log, the others
``np.log``): a term takes the logs it needs as arguments. A log of 0 must be
passed as any finite number: it is multiplied by its zero weight.

* total variation ``TVD(p, q) = 1/2 sum_j |p_j - q_j|``: :func:`tv_term`, :func:`tv_distance`;
* Jensen-Shannon distance (natural log, ``scipy.spatial.distance.jensenshannon``)
  ``sqrt(1/2 sum_j p_j log(p_j / m_j) + q_j log(q_j / m_j))``, ``m = (p + q) / 2``
  (Lin 1991, Eq. 4.1 with equal weights): :func:`js_term` (:func:`js_term_logs`),
  :func:`js_distance`;
* Kullback-Leibler ``KL(t || q) = sum_j t_j (log t_j - log q_j)`` (Kullback and
  Leibler 1951; the model's log floored by the caller): :func:`kl_term`;
* the entropy gap ``H(p) - H(q)``, ``H(x) = -sum_j x_j log x_j``: :func:`plogp_term`,
  :func:`entropy_gap`;
* Wasserstein-1 on ordered category values ``v``: :func:`wasserstein_term` (summed
  over the gaps between values by :func:`wasserstein_row` or a caller's own loop).

They branch on no value (selects only), so that the loops calling them vectorise.
Each is a few operations, inlined into its caller by numba (``inline="always"``: the
callers are themselves compiled once each, so no kernel links a library per term;
float32 inputs are computed in float64).

References
----------
Lin (1991). Divergence measures based on the Shannon entropy. IEEE Transactions
on Information Theory 37(1), 145-151. DOI:10.1109/18.61115.
Kullback, Leibler (1951). On Information and Sufficiency. Annals of Mathematical
Statistics 22(1), 79-86. DOI:10.1214/aoms/1177729694.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["divergence_rows", "entropy_gap", "js_distance", "js_term", "js_term_logs", "kl_term",
           "plogp_term",
           "tv_distance", "tv_term", "wasserstein_row", "wasserstein_term"]

_row = numba.njit(nogil=True, error_model="numpy", inline="always")

#: Below this ``|d| = |p - q| / (p + q)`` the Jensen-Shannon term is its series.
JS_SERIES_BELOW = 0.015625


@_row
def tv_term(p, q):  # pragma: no cover - compiled
    """What label j adds to ``2 TVD``: ``|p_j - q_j|``."""
    return abs(p - q)


@_row
def tv_distance(s):  # pragma: no cover - compiled
    """TVD from the summed :func:`tv_term`: ``s / 2``."""
    return 0.5 * s


@_row
def js_term(p, q, lrp, lrq, inv_sum):  # pragma: no cover - compiled
    """What label j adds to ``2 JSD``: ``p log(p / m) + q log(q / m)``, ``m = (p + q) / 2``.

    ``lrp, lrq`` are ``log(p / m)`` and ``log(q / m)``, ``inv_sum`` is ``1 / (p + q)``: the
    metric kernels take the logs of ``2 p inv_sum`` and ``2 q inv_sum`` (two logs per label,
    not three, and one division; JSD alone 17 -> 12.6 ns per row of 3 labels), the others
    pass differences of logs (:func:`js_term_logs`). With ``d = (p - q) / (p + q)`` the term
    is ``m g(d)``, ``g(d) = (1 + d) log(1 + d) + (1 - d) log(1 - d) = sum_n d^2n / (n (2n -
    1))``: four terms for ``|d| < 1/64`` (to 1e-16) keep the digits that the direct form
    cancels when ``p`` and ``q`` nearly coincide (there it loses up to ~6 bits); both are
    computed and one selected (no branch). ``p = q = 0`` gives ``d = NaN``: the direct
    form, 0.
    """
    sm = p + q
    d = (p - q) * inv_sum if sm > 0.0 else np.nan
    d2 = d * d
    near = 0.5 * sm * d2 * (1.0 + d2 * (1 / 6 + d2 * (1 / 15 + d2 / 28)))
    direct = p * lrp + q * lrq
    return near if abs(d) < JS_SERIES_BELOW else direct


@_row
def js_term_logs(p, q, lp, lq, lm):  # pragma: no cover - compiled
    """:func:`js_term` from ``log p``, ``log q`` and ``log m``."""
    sm = p + q
    return js_term(p, q, lp - lm, lq - lm, 1.0 / sm if sm > 0.0 else 0.0)


@_row
def js_distance(s):  # pragma: no cover - compiled
    """Jensen-Shannon distance from the summed :func:`js_term`: ``sqrt(max(s / 2, 0))``."""
    return np.sqrt(max(0.5 * s, 0.0))


@_row
def kl_term(t, lt, lq):  # pragma: no cover - compiled
    """What label j adds to ``KL(t || q)``: ``t_j (log t_j - log q_j)`` (``lt``, ``lq`` the logs)."""
    return t * (lt - lq)


@_row
def plogp_term(p, lp):  # pragma: no cover - compiled
    """What label j adds to ``sum_j p_j log p_j = -H(p)`` (``lp = log p_j``)."""
    return p * lp


@_row
def entropy_gap(s_model, s_ref):  # pragma: no cover - compiled
    """``H(model) - H(reference)`` from the summed :func:`plogp_term` of each (``-H``):
    the signed entropy calibration error (Baan et al. 2022) and the subsampling
    curves' entropy bias."""
    return s_ref - s_model


@_row
def wasserstein_term(c, v_lo, v_hi):  # pragma: no cover - compiled
    """What the gap from value ``v_lo`` to ``v_hi`` adds to Wasserstein-1, ``c = F_p(j) -
    F_q(j)`` the difference of the cumulative distributions below it: ``|c| (v_hi - v_lo)``."""
    return abs(c) * (v_hi - v_lo)


@_row
def wasserstein_row(p, op, q, oq, k, v):  # pragma: no cover - compiled
    """Wasserstein-1 between ``p[op:op + k]`` and ``q[oq:oq + k]`` on increasing values ``v``:
    ``sum_{j<k-1} |F_p(j) - F_q(j)| (v_{j+1} - v_j)`` over the cumulative distributions
    (``scipy.stats.wasserstein_distance(v, v, q, p)``), ``F`` summed label by label."""
    c, acc = 0.0, 0.0
    for j in range(k - 1):
        c += p[op + j] - q[oq + j]
        acc += wasserstein_term(c, v[j], v[j + 1])
    return acc


@_row
def _log0(x):  # pragma: no cover - compiled
    """``log x``, and 0 for ``x = 0`` (a log with a zero weight)."""
    return np.log(x) if x > 0.0 else 0.0


@numba.njit(cache=True, nogil=True, error_model="numpy")
def divergence_rows(p, q, which, log_eps, out):  # pragma: no cover - compiled
    """``out[i]`` = TVD (``which`` 0), Jensen-Shannon distance (1) or ``KL(p_i || q_i)``
    with ``log q`` floored at ``log_eps`` (2) of the rows of two C-contiguous
    (n, k) float64 arrays (the named functions of :mod:`annokit.core.divergence`)."""
    n, k = p.shape
    for i in range(n):
        s = 0.0
        for j in range(k):
            pj, qj = p[i, j], q[i, j]
            if which == 0:
                s += tv_term(pj, qj)
            elif which == 1:
                s += js_term_logs(pj, qj, _log0(pj), _log0(qj), _log0(0.5 * (pj + qj)))
            else:
                s += kl_term(pj, _log0(pj), max(log_eps, np.log(qj)))  # log(0) = -inf: log_eps
        out[i] = tv_distance(s) if which == 0 else (js_distance(s) if which == 1 else s)
