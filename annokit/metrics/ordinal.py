"""Order-aware metrics between a model's and the humans' distributions over ordered categories.

Labels ``0 .. k-1`` are ordered categories (an ordinal scale, or the bins of an
interval / ratio scale) with values ``v`` (``values=None``: ``0, 1, .., k-1``,
unit spacing). Per item, with ``F_x(j) = sum_{i <= j} x_i`` the cumulative
distribution:

=================  ==============================================================
wasserstein        ``sum_{j<k-1} |F_p(j) - F_soft(j)| (v_{j+1} - v_j)``: Wasserstein-1
                   (earth mover's) distance on the category values, as
                   ``scipy.stats.wasserstein_distance(v, v, soft, p)``; LeWiDi 2025
                   soft score of its ordinal sets (unit spacing)
manhattan          ``sum_j |p_j - soft_j|`` (LeWiDi 2025 soft score; any scale; on
                   nominal data it is ``2 * dist_ce``)
lewidi_ce          ``-sum_j soft_j log(clip(p_j, 1e-12, 1 - 1e-12) + 1e-9)``, natural
                   log: the SemEval-2023 Task 11 (LeWiDi 2023) cross-entropy
mean_abs_error     ``|sum_j v_j p_j - sum_j v_j soft_j|``: error of the predicted mean
rps / rps_soft     ``sum_{j<k-1} (F_p(j) - F_o(j))^2``, ``o`` the one-hot hard label
                   (``rps``) or the human distribution (``rps_soft``): the ranked
                   probability score (Epstein 1969, in Murphy's 1971 cumulative form)
=================  ==============================================================

Each metric is the (weighted) mean over items of its per-item value, computed by the
one fused pass of :mod:`annokit.metrics.kernels_ordinal` (checks, values and weighted
sums; the tests' numpy oracle evaluates the definitions). ``lewidi_ce``
differs from the registry's ``nll`` (clip at 1e-15 from below only, no ``+1e-9``)
by at most about ``1e-9`` nats per unit of human mass for ordinary predictions, and
much more for predictions near 0: it is kept separate so that scores match the
shared task's scorer exactly.

References
----------
Epstein (1969). A Scoring System for Probability Forecasts of Ranked Categories. Journal of
Applied Meteorology 8(6). DOI:10.1175/1520-0450(1969)008<0985:ASSFPF>2.0.CO;2.
Murphy (1971). A Note on the Ranked Probability Score. Journal of Applied Meteorology 10(1).
DOI:10.1175/1520-0450(1971)010<0155:ANOTRP>2.0.CO;2.
Leonardelli, Abercrombie, Almanea, Basile, Fornaciari, Plank, Rieser, Uma, Poesio (2023).
SemEval-2023 Task 11: Learning With Disagreements (LeWiDi). SemEval. DOI:10.18653/v1/2023.semeval-1.314.
Leonardelli et al. (2025). LeWiDi-2025 at NLPerspectives: the third edition of the Learning
with Disagreements shared task (evaluation notebook ``Evaluation_LeWiDi_2025_Metrics.ipynb``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from annokit.errors import InvalidValueError
from annokit.metrics import sums as _sums
from annokit.metrics.kernels_ordinal import (
    LEWIDI_CE_CLIP,
    LEWIDI_CE_SHIFT,
    QUANTITIES,
    ordinal_parts,
    ordinal_values,
)
from annokit.metrics.states import StatePass
from annokit.metrics.states_ext import RowMeanState, check_values_option, update_states

__all__ = ["LEWIDI_CE_CLIP", "LEWIDI_CE_SHIFT", "QUANTITIES", "OrdinalState", "ordinal_score"]


class OrdinalState(RowMeanState):
    """Weighted mean of one order-aware per-item quantity (module table).

    Parameters
    ----------
    quantity : {"emd", "l1", "ce_clip_shift", "mean_gap", "cum_sq_hard", "cum_sq_soft"}
        Wasserstein-1, Manhattan, LeWiDi 2023 cross-entropy, error of the mean,
        RPS against the hard label, RPS against the human distribution.
    values : sequence of float, optional
        Strictly increasing category values (``emd``, ``mean_gap``); default ``0 .. k-1``.

    Notes
    -----
    Constant memory: two sums (each ``(r,)`` with replicates); merging adds them.

    Examples
    --------
    >>> s = OrdinalState("emd").update([[0.5, 0.5, 0.0]], soft=[[0.0, 0.5, 0.5]])
    >>> s.compute()
    1.0
    """

    def __init__(self, quantity: str, *, values: Any = None) -> None:
        super().__init__()
        if quantity not in QUANTITIES:
            raise InvalidValueError(f"unknown ordinal quantity {quantity!r}; known: "
                                    f"{list(QUANTITIES)}")
        self.quantity = quantity
        self.values = None if values is None else tuple(float(v) for v in values)
        self.needs = frozenset({"hard" if quantity == "cum_sq_hard" else "soft"})
        if self.values is not None:
            check_values_option(self.values, len(self.values))

    def _options(self) -> dict[str, Any]:
        return {"quantity": self.quantity, "values": self.values}

    def _check_batch(self, given: dict[str, bool], k: int, r: int | None) -> None:
        super()._check_batch(given, k, r)
        if self.values is not None:
            check_values_option(self.values, k)

    @property
    def filled_by(self) -> StatePass:
        """Every order-aware state of a batch is filled from one pass (kernels_ordinal)."""
        return ORDINAL_PASS

    def _category_values(self, k: int) -> np.ndarray | None:
        return None if self.values is None else check_values_option(self.values, k)

    def _rows(self, p, s, h) -> np.ndarray:
        return ordinal_values(self.quantity, p, s, h, self._category_values(p.shape[1]))


#: The pass of the order-aware states (:func:`annokit.metrics.kernels_ordinal.ordinal_parts`).
ORDINAL_PASS = StatePass("ordinal", "single", _sums.prepare, ordinal_parts)


def ordinal_score(quantity: str, probs: Any, targets: Any, *, values: Any = None,
                  weights: Any = None) -> float:
    """Mean of an order-aware per-item quantity over items.

    Parameters
    ----------
    quantity : str
        One of :data:`QUANTITIES`.
    probs : array-like of shape (n_items, n_labels)
        Model distributions over the ordered categories.
    targets : array-like of shape (n_items, n_labels), or (n_items,) class indices for
        ``"cum_sq_hard"``
        Human distributions (or the hard labels).
    values : sequence of float, optional
        Category values (default ``0 .. k-1``).
    weights : None, array-like of shape (n_items,) or (n_replicates, n_items)

    Returns
    -------
    float, or ndarray of shape (n_replicates,)

    Raises
    ------
    InvalidValueError, SchemaError
        As :func:`annokit.metrics.registry.compute`; values not increasing or not one per label.

    Examples
    --------
    >>> ordinal_score("emd", [[1.0, 0.0, 0.0]], [[0.0, 0.0, 1.0]], values=[1, 2, 5])
    4.0
    """
    state = OrdinalState(quantity, values=values)
    if quantity == "cum_sq_hard":
        update_states([state], probs, None, targets, weights, allow_empty=False)
    else:
        update_states([state], probs, targets, None, weights, allow_empty=False)
    return state.compute()
