"""Multi-label metrics: independent per-label Bernoulli predictions against per-label soft labels.

Each annotator ticks any subset of ``L`` labels. The model gives ``probs`` (n, L),
one independent probability per label; the humans give ``soft`` (n, L), the
fraction of the item's annotators who ticked each label, and ``hard`` (n, L), the
0/1 majority per label (ties resolved by the caller's policy). Rows need not sum
to 1. Every metric is computed per label and averaged over labels (equal weight
per label); :meth:`MultilabelState.per_label` gives the per-label values.

=================  ==============================================================
ece_multilabel     per label, ECE of ``p_l`` against ``hard_l`` over equal-width bins
                   (``sum_b |sum p - sum y| / W``), averaged over labels
brier_multilabel   per label ``(p_l - soft_l)^2`` (Brier 1950), mean over items, then labels
bce_multilabel     per label ``-(soft_l log max(p_l, eps) + (1 - soft_l) log max(1 - p_l,
                   eps))``, ``eps = 1e-15`` as ``nll`` (a term with zero human mass is 0)
=================  ==============================================================

References
----------
Brier (1950). Verification of Forecasts Expressed in Terms of Probability. Monthly Weather
Review 78(1). DOI:10.1175/1520-0493(1950)078<0001:VOFEIT>2.0.CO;2.
Guo, Pleiss, Sun, Weinberger (2017). On Calibration of Modern Neural Networks. ICML.
arXiv:1706.04599 (ECE); per label as in Kull et al. (2019), arXiv:1910.12656.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from annokit.core.divergence import KL_EPS
from annokit.errors import InvalidValueError, SchemaError
from annokit.metrics import _binning
from annokit.metrics.kernels_bernoulli import (
    MULTILABEL_QUANTITIES,
    multilabel_sums,
    multilabel_values,
)
from annokit.metrics.states import StatePass
from annokit.metrics.states_ext import (
    ExtensionState,
    RowMeanState,
    _multilabel_shapes,
    check_multilabel,
    prepare_multilabel,
    update_states,
)

__all__ = ["MULTILABEL_PASS", "MultilabelBinnedState", "MultilabelState", "bce_rows",
           "multilabel_scores"]

def bce_rows(probs: Any, soft: Any, eps: float = KL_EPS) -> np.ndarray:
    """Binary cross-entropy per item and label, shape (n, L) (module table), probabilities
    clipped at ``eps``.

    Raises
    ------
    SchemaError, InvalidValueError
        As :func:`annokit.metrics.states_ext.prepare_multilabel`.
    """
    p, s, _, _ = prepare_multilabel(probs, soft, None, None, check_values=False)
    if s is None:
        raise SchemaError("soft must be given: the fraction of annotators ticking each label")
    return multilabel_values("log", p, s, lambda: check_multilabel(p, s), eps=eps)


class MultilabelState(RowMeanState):
    """Per-label mean of a per-item, per-label quantity, averaged over labels.

    Parameters
    ----------
    quantity : {"squared", "log"}
        ``(p_l - soft_l)^2`` (Brier) or the binary cross-entropy.

    Notes
    -----
    Constant memory: ``L + 1`` sums (times ``r``); merging adds them.

    Examples
    --------
    >>> s = MultilabelState("squared").update([[0.8, 0.1]], soft=[[1.0, 0.5]])
    >>> round(s.compute(), 6), s.per_label().round(6).tolist()
    (0.1, [0.04, 0.16])
    """

    task = "multilabel"
    needs = frozenset({"soft"})

    def __init__(self, quantity: str) -> None:
        super().__init__()
        if quantity not in MULTILABEL_QUANTITIES:
            raise InvalidValueError(f"quantity must be 'squared' or 'log'; got {quantity!r}")
        self.quantity = quantity

    @property
    def filled_by(self) -> StatePass:
        return MULTILABEL_PASS

    def _options(self) -> dict[str, Any]:
        return {"quantity": self.quantity}

    def _rows(self, p: np.ndarray, s: np.ndarray | None, h: np.ndarray | None) -> np.ndarray:
        if s is None:  # pragma: no cover - _check_batch requires soft labels first
            raise InvalidValueError("the multi-label means need soft labels")
        return multilabel_values(self.quantity, p, s, lambda: check_multilabel(p, s, h))


class MultilabelBinnedState(ExtensionState):
    """Per-label ECE over equal-width bins on ``p_l`` against the 0/1 majority ``hard_l``.

    Parameters
    ----------
    n_bins : int, default 10

    Notes
    -----
    Constant memory: ``3 L n_bins`` sums (times ``r``); merging adds them.
    ``ECE_l = sum_b |sum_{i in b} w_i p_il - sum_{i in b} w_i y_il| / W``;
    :meth:`compute` is the mean over labels, :meth:`per_label` each ``ECE_l``.

    Examples
    --------
    >>> s = MultilabelBinnedState(n_bins=2).update([[0.9, 0.2], [0.6, 0.4]],
    ...                                             hard=[[1, 0], [0, 0]])
    >>> s.per_label().round(6).tolist()
    [0.25, 0.3]
    """

    task = "multilabel"
    needs = frozenset({"hard"})

    def __init__(self, *, n_bins: int = 10) -> None:
        super().__init__()
        self.n_bins = _binning.check_n_bins(n_bins)
        self._sums: Any = None  # (3, L, B) or (r, 3, L, B)

    @property
    def filled_by(self) -> StatePass:
        return MULTILABEL_PASS

    def _options(self) -> dict[str, Any]:
        return {"n_bins": self.n_bins}

    def _absorb(self, part: np.ndarray) -> None:
        self._sums = _add_sums(self._sums, part)

    def _merge(self, other: MultilabelBinnedState) -> None:
        self._sums = _add_sums(self._sums, other._sums)

    def per_label(self) -> Any:
        """ECE per label, shape (L,) or (r, L); NaN without weight."""
        weight, ps, ys = np.moveaxis(self._sums, -3, 0)
        return _binning.reduce_bins(weight, ps, ys, weight.sum(axis=-1))

    def _compute(self) -> Any:
        out = np.asarray(self.per_label()).mean(axis=-1)
        return float(out) if out.ndim == 0 else out


def _add_sums(a: Any, b: Any) -> Any:
    return b if a is None else a + b


def _multilabel_parts(states: list[Any], p: np.ndarray, s: np.ndarray | None,
                      h: np.ndarray | None, w: np.ndarray | None,
                      names: Sequence[str]) -> list[Any]:
    """:data:`MULTILABEL_PASS`: every multi-label state's sums from one kernel pass."""
    n_bins = list(dict.fromkeys(st.n_bins for st in states
                                if isinstance(st, MultilabelBinnedState)))
    quantities = list(dict.fromkeys(st.quantity for st in states
                                    if isinstance(st, MultilabelState)))
    out = multilabel_sums(p, s, h, w, n_bins=n_bins, quantities=quantities,
                          check=lambda: check_multilabel(p, s, h, w))
    return [out.bins[n_bins.index(st.n_bins)] if isinstance(st, MultilabelBinnedState)
            else (out.means[st.quantity], out.weight) for st in states]


#: The pass of the multi-label states (:mod:`annokit.metrics.kernels_bernoulli`).
MULTILABEL_PASS = StatePass("multilabel", "multilabel", _multilabel_shapes, _multilabel_parts)


def multilabel_scores(probs: Any, soft: Any, hard: Any = None, *, n_bins: int = 10,
                      weights: Any = None) -> dict[str, Any]:
    """ECE, Brier and binary cross-entropy per label and averaged.

    Parameters
    ----------
    probs : array-like of shape (n_items, n_labels)
        Independent per-label probabilities.
    soft : array-like of shape (n_items, n_labels)
        Fraction of annotators ticking each label.
    hard : array-like of shape (n_items, n_labels), optional
        0/1 majority per label; default ``soft > 0.5`` (a tie at 0.5 is 0).
    n_bins : int, default 10
    weights : array-like of shape (n_items,), optional

    Returns
    -------
    dict
        ``{"ece": {"mean": float, "per_label": [...]}, "brier": ..., "bce": ...}``.

    Raises
    ------
    SchemaError, InvalidValueError
        As :func:`annokit.metrics.states_ext.prepare_multilabel`.

    Examples
    --------
    >>> out = multilabel_scores([[0.8, 0.1]], [[1.0, 0.5]])
    >>> round(out["brier"]["mean"], 6), [round(v, 6) for v in out["brier"]["per_label"]]
    (0.1, [0.04, 0.16])
    """
    if hard is None:
        hard = (np.asarray(soft, dtype=np.float64) > 0.5).astype(np.float64)
    states: dict[str, MultilabelBinnedState | MultilabelState] = {
        "ece": MultilabelBinnedState(n_bins=n_bins), "brier": MultilabelState("squared"),
              "bce": MultilabelState("log")}
    update_states(states.values(), probs, soft, hard, weights, allow_empty=False)
    return {k: {"mean": float(st.compute()), "per_label": np.asarray(st.per_label()).tolist()}
            for k, st in states.items()}
