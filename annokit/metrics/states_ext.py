"""Mergeable states of the metrics beyond the fused kernels: ordinal, binary and multi-label.

The states in :mod:`annokit.metrics.states` are filled from one pass of the
fused numba kernels (:func:`~annokit.metrics.states.update_many`). The metrics
added for ordinal scales, binary calibration and multi-label votes are states of
their own, following the same protocol (``update`` / ``merge`` / ``compute``,
weights None, ``(n,)`` or ``(r, n)``): an :class:`ExtensionState` absorbs its checked
batch itself (the order-aware ones from their own fused pass,
:mod:`annokit.metrics.kernels_ordinal`). There is one update entry point:
:func:`~annokit.metrics.states.update_many` (and every state's ``update``) takes any
mix of both kinds and hands it to :func:`update_states`, which checks every input
before any state changes.

Two input kinds (:attr:`ExtensionState.task`):

``"single"``
    As everywhere: ``probs`` (n, k) and ``soft`` (n, k) rows on the simplex,
    ``hard`` (n,) class indices; checked by :func:`annokit.metrics.sums.prepare`
    and :func:`~annokit.metrics.sums.check_values` (the same messages).
``"multilabel"``
    ``probs`` (n, L) independent per-label probabilities, ``soft`` (n, L) the
    fraction of annotators ticking each label, ``hard`` (n, L) 0/1 majority
    per label; values in [0, 1], rows need not sum to 1 (:func:`prepare_multilabel`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from annokit.errors import InvalidValueError, SchemaError
from annokit.metrics import _binning
from annokit.metrics import sums as _sums
from annokit.metrics.states import MetricState, _update_fused

__all__ = ["BinaryBinnedState", "ExtensionState", "RowMeanState", "prepare_multilabel",
           "update_states", "weighted_sums"]


def _add(a: Any, b: Any) -> Any:
    return b if a is None else a + b


def weighted_sums(values: np.ndarray, w: np.ndarray | None) -> tuple[Any, Any]:
    """``(sum_i w_i v_i, sum_i w_i)`` over the first axis of ``values`` (n,) or (n, L).

    With ``w`` of shape (r, n) both sums get a leading replicate axis.
    """
    if w is None:
        return values.sum(axis=0), float(values.shape[0])
    if w.ndim == 1:
        return np.tensordot(w, values, axes=(0, 0)), float(w.sum())
    return np.tensordot(w, values, axes=(1, 0)), w.sum(axis=1)


# --------------------------------------------------------------------------- checks

def _matrix01(x: Any, name: str) -> np.ndarray:
    arr = np.asarray(x.to_numpy() if hasattr(x, "to_numpy") else x, dtype=np.float64)
    if arr.ndim != 2:
        raise SchemaError(f"{name} must be 2-D (n_items, n_labels); got shape {arr.shape}")
    if arr.shape[1] == 0:
        raise SchemaError(f"{name} has no label columns")
    finite = np.isfinite(arr).all(axis=1)
    if not finite.all():
        raise InvalidValueError(f"{name} has NaN or infinite values in row "
                                f"{int(np.argmin(finite))}")
    bad = (arr < 0) | (arr > 1)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InvalidValueError(f"{name} must lie in [0, 1] (one probability per label); got "
                                f"{float(arr[i, j])!r} in row {i}, label column {j}")
    return np.ascontiguousarray(arr)


def prepare_multilabel(probs: Any, soft: Any = None, hard: Any = None, weights: Any = None, *,
                       allow_empty: bool = True
                       ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None,
                                  np.ndarray | None]:
    """Shapes and values of one multi-label batch.

    Parameters
    ----------
    probs, soft : array-like of shape (n, L)
        Per-label probabilities in [0, 1] (rows need not sum to 1).
    hard : array-like of shape (n, L), optional
        0/1 majority per label.
    weights : None, array-like of shape (n,) or (r, n)

    Raises
    ------
    SchemaError
        Not 2-D, shapes differ, no rows (unless ``allow_empty``), weights not one per row.
    InvalidValueError
        NaN, values outside [0, 1], ``hard`` not 0/1, negative or non-finite weights.
    """
    p = _matrix01(probs, "probs")
    n = p.shape[0]
    if n == 0 and not allow_empty:
        raise SchemaError("probs has no rows")
    s = h = None
    if soft is not None:
        s = _matrix01(soft, "soft")
        if s.shape != p.shape:
            raise SchemaError(f"soft must have the shape of probs {p.shape}; got {s.shape}")
    if hard is not None:
        h = _matrix01(hard, "hard")
        if h.shape != p.shape:
            raise SchemaError(f"hard must have the shape of probs {p.shape}; got {h.shape}")
        off = (h != 0) & (h != 1)
        if off.any():
            i, j = np.argwhere(off)[0]
            raise InvalidValueError(f"hard must be 0 or 1 per label; got {float(h[i, j])!r} in "
                                    f"row {i}, label column {j}")
    w = None
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim not in (1, 2) or w.shape[-1] != n:
            raise SchemaError(f"weights must have shape ({n},) or (n_replicates, {n}); "
                              f"got {w.shape}")
        _sums.check_values(np.ones((n, 1)), weights=w)
    return p, s, h, w


def _prepare_single(probs: Any, soft: Any, hard: Any, weights: Any, allow_empty: bool
                    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None,
                               np.ndarray | None]:
    p, s, h, w = _sums.prepare(probs, soft, hard, weights, allow_empty=allow_empty)
    _sums.check_values(p, s, h, w)
    return p, s, h, w


# --------------------------------------------------------------------------- base class

class ExtensionState(MetricState):
    """A metric state that checks and absorbs its batches itself (numpy, no fused kernel).

    Subclasses set :attr:`task` and :attr:`needs` and implement ``_absorb(p, s, h, w)``
    (the checked batch), ``_merge``, ``_compute`` and ``_options``. ``min_labels`` /
    ``exact_labels`` restrict the number of label columns a batch may have.
    """

    task = "single"
    exact_labels: int | None = None
    fused = False
    #: True when the state's own kernel checks the batch's values (``_batch_sums``).
    checks_values = False

    @staticmethod
    def update_together(states: list[MetricState], probs: Any, soft: Any, hard: Any,
                        weights: Any, *, names: Sequence[str], allow_empty: bool
                        ) -> list[MetricState]:
        """:func:`annokit.metrics.states.update_many` of a mix holding extension states."""
        return update_states(states, probs, soft, hard, weights, names=names,
                             allow_empty=allow_empty)

    def _check_batch(self, given: dict[str, bool], k: int, r: int | None) -> None:
        for need in sorted(self.needs):
            if not given[need]:
                raise SchemaError(f"{type(self).__name__}{self._options()} needs {need} labels; "
                                  f"got {need}=None")
        if self.exact_labels is not None and k != self.exact_labels:
            raise SchemaError(f"{type(self).__name__} applies to {self.exact_labels} labels; "
                              f"the batch has {k} label columns")
        self._check_shape(k, r, "the batch")

    def _absorb(self, p: np.ndarray, s: np.ndarray | None, h: np.ndarray | None,
                w: np.ndarray | None) -> None:
        raise NotImplementedError

    def _batch_sums(self, p: np.ndarray, s: np.ndarray | None, h: np.ndarray | None,
                    w: np.ndarray | None) -> tuple[Any, Any]:
        """``(sum_i w_i v_i, sum_i w_i)`` of one batch; states with ``checks_values`` only."""
        raise NotImplementedError

    def _absorb_sums(self, total: Any, weight: Any) -> None:
        """Add the sums of :meth:`_batch_sums`; states with ``checks_values`` only."""
        raise NotImplementedError



def update_states(states: Iterable[MetricState], probs: Any, soft: Any = None, hard: Any = None,
                  weights: Any = None, *, names: Sequence[str] = _sums.NAMES,
                  allow_empty: bool = True) -> list[MetricState]:
    """Update kernel states and extension states from one batch; no state changes on an error.

    Parameters
    ----------
    states : iterable of MetricState
        Any mix of :mod:`annokit.metrics.states` states and :class:`ExtensionState`
        of one task (single-label and multi-label states take different inputs).
    probs, soft, hard, weights
        One batch, as in :func:`annokit.metrics.states.update_many` (multi-label:
        :func:`prepare_multilabel`).
    allow_empty : bool, default True

    Returns
    -------
    list of MetricState

    Raises
    ------
    SchemaError, InvalidValueError
        As :func:`~annokit.metrics.states.update_many`; also single-label and
        multi-label states mixed, or a binary metric given other than two label columns.
    """
    states = list(states)
    ext = [st for st in states if isinstance(st, ExtensionState)]
    core = [st for st in states if not isinstance(st, ExtensionState)]
    tasks = {st.task for st in ext} | ({"single"} if core else set())
    if len(tasks) > 1:
        raise SchemaError("single-label and multi-label metrics take different inputs; "
                          "update them separately")
    fused: dict[int, Any] = {}
    if ext:
        if "multilabel" in tasks:
            p, s, h, w = prepare_multilabel(probs, soft, hard, weights, allow_empty=allow_empty)
        elif all(st.checks_values for st in ext):  # values checked in the kernels' passes
            p, s, h, w = _sums.prepare(probs, soft, hard, weights, allow_empty=allow_empty)
        else:
            p, s, h, w = _prepare_single(probs, soft, hard, weights, allow_empty)
        given = {"soft": s is not None, "hard": h is not None}
        r = w.shape[0] if w is not None and w.ndim == 2 else None
        for st in ext:
            st._check_batch(given, p.shape[1], r)
        # the states whose kernels check the batch: their sums first (a check that fails
        # raises before any state changes)
        fused = {id(st): st._batch_sums(p, s, h, w) for st in ext if st.checks_values}
    if core:
        _update_fused(core, probs, soft, hard, weights, names=names, allow_empty=allow_empty)
    for st in ext:
        if id(st) in fused:
            st._absorb_sums(*fused[id(st)])
        else:
            st._absorb(p, s, h, w)
        st._accept(p.shape[1], r)
    return states


# --------------------------------------------------------------------------- generic states

class RowMeanState(ExtensionState):
    """Weighted mean of a per-item quantity ``v_i = f(p_i, soft_i, hard_i)``.

    ``sum_i w_i v_i / sum_i w_i``; a per-label quantity ``(n, L)`` keeps one sum
    per label and :meth:`compute` averages the per-label means (``per_label``
    returns them). Constant memory: two sums (times ``L`` per label, ``r`` with
    replicates); merging adds them.

    Subclasses implement ``_rows(p, s, h) -> ndarray (n,) or (n, L)``.
    """

    def __init__(self) -> None:
        super().__init__()
        self._total: Any = None
        self._weight: Any = None

    def _rows(self, p: np.ndarray, s: np.ndarray | None, h: np.ndarray | None) -> np.ndarray:
        raise NotImplementedError

    def item_values(self, probs: Any, soft: Any = None, hard: Any = None) -> np.ndarray:
        """The per-item quantity whose weighted mean the state computes, checked like a batch."""
        if self.task == "multilabel":
            p, s, h, _ = prepare_multilabel(probs, soft, hard, None, allow_empty=True)
        else:
            p, s, h, _ = _prepare_single(probs, soft, hard, None, True)
        self._check_batch({"soft": s is not None, "hard": h is not None}, p.shape[1], None)
        return self._rows(p, s, h)

    def _batch_sums(self, p, s, h, w) -> tuple[Any, Any]:
        """``(sum_i w_i v_i, sum_i w_i)`` of one checked batch."""
        return weighted_sums(self._rows(p, s, h), w)

    def _absorb(self, p, s, h, w) -> None:
        self._absorb_sums(*self._batch_sums(p, s, h, w))

    def _absorb_sums(self, total: Any, weight: Any) -> None:
        self._total = _add(self._total, np.asarray(total, dtype=np.float64))
        self._weight = _add(self._weight, np.asarray(weight, dtype=np.float64))

    def _merge(self, other: RowMeanState) -> None:
        self._total = _add(self._total, other._total)
        self._weight = _add(self._weight, other._weight)

    def per_label(self) -> Any:
        """Per-label means, shape (L,) or (r, L); NaN where there is no weight."""
        weight = self._weight
        if np.ndim(self._total) > np.ndim(weight) and np.ndim(weight) == 1:
            weight = weight[:, None]  # (r,) replicate weights against (r, L) label sums
        return _binning._divide(self._total, weight)

    def _compute(self) -> Any:
        out = self.per_label()
        out = np.mean(out, axis=-1) if np.ndim(out) > np.ndim(self._weight) else out
        return float(out) if np.ndim(out) == 0 else out


class BinaryBinnedState(ExtensionState):
    """Per-bin sums of the positive-class probability and the positive-class hits.

    Two label columns only; ``positive`` is the column of the positive class.
    Bins are equal-width on ``p(positive)`` (:mod:`annokit.metrics._binning`
    convention: ``[lo, hi)``, the last closed); per bin the weight ``W_b``, the
    summed ``p_b`` and the summed ``y_b = [hard == positive]``.

    ``reduce="ece"``: ``sum_b |p_b - y_b| / W``; ``"max"``: the largest
    ``|p_b / W_b - y_b / W_b|`` over bins of positive weight. Constant memory:
    ``3 n_bins`` sums (times ``r``); merging adds them. :meth:`reliability` gives
    the reliability-diagram data.
    """

    needs = frozenset({"hard"})
    exact_labels = 2

    def __init__(self, *, n_bins: int = 10, positive: int = 1, reduce: str = "ece") -> None:
        super().__init__()
        self.n_bins = _binning.check_n_bins(n_bins)
        if isinstance(positive, bool) or positive not in (0, 1):
            raise InvalidValueError(f"positive must be the label index 0 or 1; got {positive!r}")
        if reduce not in ("ece", "max"):
            raise InvalidValueError(f"reduce must be one of ['ece', 'max']; got {reduce!r}")
        self.positive, self.reduce = int(positive), reduce
        self._sums: Any = None  # (3, n_bins) or (r, 3, n_bins): weight, p, y

    def _options(self) -> dict[str, Any]:
        return {"n_bins": self.n_bins, "positive": self.positive, "reduce": self.reduce}

    def _absorb(self, p, s, h, w) -> None:
        conf = p[:, self.positive]
        idx = _binning.bin_index(conf, _binning.uniform_edges(self.n_bins))
        hit = (h == self.positive).astype(np.float64)
        parts = [_binning.bin_sums(idx, self.n_bins, w, v) for v in (None, conf, hit)]
        self._sums = _add(self._sums, np.stack(parts, axis=-2))

    def _merge(self, other: BinaryBinnedState) -> None:
        self._sums = _add(self._sums, other._sums)

    def reliability(self) -> dict[str, Any]:
        """Reliability diagram on ``p(positive)``: per bin the edges, weight, mean p, frequency.

        Empty bins have NaN mean and frequency. Without replicates only.
        """
        if self._sums is None or self._sums.ndim != 2:
            raise InvalidValueError("reliability needs a state updated without replicate weights")
        weight, ps, ys = self._sums
        edges = _binning.uniform_edges(self.n_bins)
        return {"positive": self.positive, "bin_low": edges[:-1].tolist(),
                "bin_high": edges[1:].tolist(), "weight": weight.tolist(),
                "mean_probability": _binning._divide(ps, weight).tolist(),
                "frequency": _binning._divide(ys, weight).tolist()}

    def _compute(self) -> Any:
        weight, ps, ys = np.moveaxis(self._sums, -2, 0)
        return _binning.reduce_bins(weight, ps, ys, weight.sum(axis=-1), reduce=self.reduce)


def check_values_option(values: Sequence[float] | None, k: int) -> np.ndarray:
    """Category values for ``k`` ordered categories: ``0..k-1`` by default, else strictly increasing."""
    if values is None:
        return np.arange(k, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or v.shape[0] != k:
        raise SchemaError(f"values must give one number per label ({k}); got shape {v.shape}")
    if not np.isfinite(v).all() or np.any(np.diff(v) <= 0):
        raise InvalidValueError(f"values must be finite and strictly increasing; got {v.tolist()}")
    return v
