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

from typing import Any

import numpy as np

from annokit.core.divergence import KL_EPS
from annokit.errors import InvalidValueError
from annokit.metrics import _binning
from annokit.metrics.states_ext import ExtensionState, RowMeanState, update_states

__all__ = ["MultilabelBinnedState", "MultilabelState", "bce_rows", "multilabel_scores"]


def bce_rows(probs: np.ndarray, soft: np.ndarray, eps: float = KL_EPS) -> np.ndarray:
    """Binary cross-entropy per item and label, shape (n, L)."""
    pos = np.where(soft > 0, soft * np.log(np.maximum(probs, eps)), 0.0)
    neg = np.where(soft < 1, (1 - soft) * np.log(np.maximum(1 - probs, eps)), 0.0)
    return -(pos + neg)


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
        if quantity not in ("squared", "log"):
            raise InvalidValueError(f"quantity must be 'squared' or 'log'; got {quantity!r}")
        self.quantity = quantity

    def _options(self) -> dict[str, Any]:
        return {"quantity": self.quantity}

    def _rows(self, p, s, h) -> np.ndarray:
        return (p - s) ** 2 if self.quantity == "squared" else bce_rows(p, s)


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

    def _options(self) -> dict[str, Any]:
        return {"n_bins": self.n_bins}

    def _absorb(self, p, s, h, w) -> None:
        n, L = p.shape
        idx = _binning.bin_index(p, _binning.uniform_edges(self.n_bins)).T  # (L, n)
        idx = idx + (np.arange(L) * self.n_bins)[:, None]
        size = L * self.n_bins
        parts = [_binning.bin_sums(idx, size, w, v) for v in (None, p.T, h.T)]
        out = np.stack(parts, axis=-2)  # (3, size) or (r, 3, size)
        self._sums = _add_sums(self._sums, out.reshape(out.shape[:-1] + (L, self.n_bins)))

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
    states = {"ece": MultilabelBinnedState(n_bins=n_bins), "brier": MultilabelState("squared"),
              "bce": MultilabelState("log")}
    update_states(states.values(), probs, soft, hard, weights, allow_empty=False)
    return {k: {"mean": float(st.compute()), "per_label": np.asarray(st.per_label()).tolist()}
            for k, st in states.items()}
