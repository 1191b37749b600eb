"""Mergeable states of the metrics beyond :mod:`annokit.metrics.states`: ordinal, binary, multi-label.

They follow the same protocol (``update`` / ``merge`` / ``compute``, weights None,
``(n,)`` or ``(r, n)``) and the one update entry point,
:func:`~annokit.metrics.states.update_many` (:func:`update_states` is the same
function): every state names the pass that fills it
(:attr:`~annokit.metrics.states.MetricState.filled_by`), and all the states of one
kind are filled from one read of the batch that also checks its values: the
order-aware states by :mod:`annokit.metrics.kernels_ordinal`, the binary and
multi-label states by :mod:`annokit.metrics.kernels_bernoulli`. A
:class:`RowMeanState` without a kernel of its own (a mean of a numpy per-item
quantity) is filled by :data:`ROWS_PASS`, which checks the values with numpy.

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

from collections.abc import Sequence
from typing import Any

import numpy as np

from annokit.errors import InvalidValueError, SchemaError
from annokit.metrics import _binning
from annokit.metrics import sums as _sums
from annokit.metrics.kernels_bernoulli import binary_bin_sums
from annokit.metrics.states import MetricState, StatePass, check_needs, update_many

__all__ = ["BINARY_PASS", "ROWS_PASS", "BinaryBinnedState", "ExtensionState", "RowMeanState",
           "check_multilabel", "prepare_multilabel", "update_states", "weighted_sums"]

#: The one update entry point (:func:`annokit.metrics.states.update_many`), under its older name.
update_states = update_many


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

def _matrix(x: Any, name: str) -> np.ndarray:
    arr = np.asarray(x.to_numpy() if hasattr(x, "to_numpy") else x, dtype=np.float64)
    if arr.ndim != 2:
        raise SchemaError(f"{name} must be 2-D (n_items, n_labels); got shape {arr.shape}")
    if arr.shape[1] == 0:
        raise SchemaError(f"{name} has no label columns")
    return np.ascontiguousarray(arr)


def _check01(arr: np.ndarray, name: str) -> None:
    finite = np.isfinite(arr).all(axis=1)
    if not finite.all():
        raise InvalidValueError(f"{name} has NaN or infinite values in row "
                                f"{int(np.argmin(finite))}")
    bad = (arr < 0) | (arr > 1)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InvalidValueError(f"{name} must lie in [0, 1] (one probability per label); got "
                                f"{float(arr[i, j])!r} in row {i}, label column {j}")


def check_multilabel(p: np.ndarray, s: np.ndarray | None = None, h: np.ndarray | None = None,
                     w: np.ndarray | None = None) -> None:
    """Values of a multi-label batch shaped by :func:`prepare_multilabel`.

    Raises
    ------
    InvalidValueError
        NaN, values outside [0, 1], ``hard`` not 0/1, negative or non-finite weights
        (the message names the row and label column).
    """
    _check01(p, "probs")
    if s is not None:
        _check01(s, "soft")
    if h is not None:
        _check01(h, "hard")
        off = (h != 0) & (h != 1)
        if off.any():
            i, j = np.argwhere(off)[0]
            raise InvalidValueError(f"hard must be 0 or 1 per label; got {float(h[i, j])!r} in "
                                    f"row {i}, label column {j}")
    if w is not None:
        _sums.check_values(np.ones((p.shape[0], 1)), weights=w)


def prepare_multilabel(probs: Any, soft: Any = None, hard: Any = None, weights: Any = None, *,
                       allow_empty: bool = True, check_values: bool = True
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
    allow_empty : bool, default True
    check_values : bool, default True
        False checks the shapes only (the kernel passes check the values as they read them:
        :func:`check_multilabel`).

    Raises
    ------
    SchemaError
        Not 2-D, shapes differ, no rows (unless ``allow_empty``), weights not one per row.
    InvalidValueError
        NaN, values outside [0, 1], ``hard`` not 0/1, negative or non-finite weights.
    """
    p = _matrix(probs, "probs")
    n = p.shape[0]
    if n == 0 and not allow_empty:
        raise SchemaError("probs has no rows")
    s = h = None
    if soft is not None:
        s = _matrix(soft, "soft")
        if s.shape != p.shape:
            raise SchemaError(f"soft must have the shape of probs {p.shape}; got {s.shape}")
    if hard is not None:
        h = _matrix(hard, "hard")
        if h.shape != p.shape:
            raise SchemaError(f"hard must have the shape of probs {p.shape}; got {h.shape}")
    w = None
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim not in (1, 2) or w.shape[-1] != n:
            raise SchemaError(f"weights must have shape ({n},) or (n_replicates, {n}); "
                              f"got {w.shape}")
    if check_values:
        check_multilabel(p, s, h, w)
    return p, s, h, w


def _multilabel_shapes(probs: Any, soft: Any, hard: Any, weights: Any, *,
                       names: Sequence[str] = _sums.NAMES, allow_empty: bool = True
                       ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None,
                                  np.ndarray | None]:
    """The ``prepare`` of the multi-label passes: shapes only (``names`` are the fixed ones)."""
    return prepare_multilabel(probs, soft, hard, weights, allow_empty=allow_empty,
                              check_values=False)


def _prepare_single(probs: Any, soft: Any, hard: Any, weights: Any, allow_empty: bool
                    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None,
                               np.ndarray | None]:
    p, s, h, w = _sums.prepare(probs, soft, hard, weights, allow_empty=allow_empty)
    _sums.check_values(p, s, h, w)
    return p, s, h, w


# --------------------------------------------------------------------------- base class

class ExtensionState(MetricState):
    """A state of :mod:`annokit.metrics.states_ext` and the modules built on it.

    Subclasses set :attr:`task` and :attr:`needs`, name their pass
    (:attr:`~annokit.metrics.states.MetricState.filled_by`) and implement
    ``_absorb(part)``, ``_merge``, ``_compute`` and ``_options``. ``exact_labels``
    restricts the number of label columns a batch may have.
    """

    task = "single"
    exact_labels: int | None = None

    def _check_batch(self, given: dict[str, bool], k: int, r: int | None) -> None:
        check_needs(self, given)
        if self.exact_labels is not None and k != self.exact_labels:
            raise SchemaError(f"{type(self).__name__} applies to {self.exact_labels} labels; "
                              f"the batch has {k} label columns")
        self._check_shape(k, r, "the batch")


# --------------------------------------------------------------------------- generic states

class RowMeanState(ExtensionState):
    """Weighted mean of a per-item quantity ``v_i = f(p_i, soft_i, hard_i)``.

    ``sum_i w_i v_i / sum_i w_i``; a per-label quantity ``(n, L)`` keeps one sum
    per label and :meth:`compute` averages the per-label means (``per_label``
    returns them). Constant memory: two sums (times ``L`` per label, ``r`` with
    replicates); merging adds them.

    Subclasses implement ``_rows(p, s, h) -> ndarray (n,) or (n, L)``; by default
    :data:`ROWS_PASS` fills them (the numpy value checks, then ``_batch_sums`` of each
    state). A kind with a fused kernel names its own pass (ordinal, multi-label), whose
    parts are ``(total, weight)``.
    """

    def __init__(self) -> None:
        super().__init__()
        self._total: Any = None
        self._weight: Any = None

    @property
    def filled_by(self) -> StatePass:
        return ROWS_PASS[self.task]

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

    def _batch_sums(self, p: np.ndarray, s: np.ndarray | None, h: np.ndarray | None,
                    w: np.ndarray | None) -> tuple[Any, Any]:
        """``(sum_i w_i v_i, sum_i w_i)`` of one batch."""
        return weighted_sums(self._rows(p, s, h), w)

    def _absorb(self, part: tuple[Any, Any]) -> None:
        total, weight = part
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


def _rows_parts(states: list[Any], p: np.ndarray, s: np.ndarray | None, h: np.ndarray | None,
                w: np.ndarray | None, names: Sequence[str]) -> list[Any]:
    """:data:`ROWS_PASS`: the numpy value checks, then each state's ``_batch_sums``."""
    if states[0].task == "multilabel":
        check_multilabel(p, s, h, w)
    else:
        _sums.check_values(p, s, h, w, names=names)
    return [st._batch_sums(p, s, h, w) for st in states]


#: The pass of a :class:`RowMeanState` without a kernel pass of its own, per task.
ROWS_PASS = {"single": StatePass("rows", "single", _sums.prepare, _rows_parts),
             "multilabel": StatePass("rows", "multilabel", _multilabel_shapes, _rows_parts)}


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

    @property
    def filled_by(self) -> StatePass:
        return BINARY_PASS

    def _options(self) -> dict[str, Any]:
        return {"n_bins": self.n_bins, "positive": self.positive, "reduce": self.reduce}

    def _absorb(self, part: np.ndarray) -> None:
        self._sums = _add(self._sums, part)

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

    def _has_bounds(self) -> bool:
        return self.reduce == "ece"

    def _bounds(self) -> tuple[Any, Any] | None:
        if not self._has_bounds():
            return None
        weight, ps, ys = np.moveaxis(self._sums, -2, 0)
        return _binning.gap_bounds(weight, ps, ys, weight.sum(axis=-1), hard=True)


def _binary_parts(states: list[Any], p: np.ndarray, s: np.ndarray | None, h: np.ndarray | None,
                  w: np.ndarray | None, names: Sequence[str]) -> list[Any]:
    """:data:`BINARY_PASS`: the bin sums of every ``(n_bins, positive)`` asked, in one pass."""
    configs = list(dict.fromkeys((st.n_bins, st.positive) for st in states))
    if h is None:  # pragma: no cover - update_many checks the states' needs first
        raise SchemaError("the binary metrics need hard labels")
    sums, _ = binary_bin_sums(p, s, h, w, configs, names=names)
    return [sums[configs.index((st.n_bins, st.positive))] for st in states]


#: The pass of the binary states (:mod:`annokit.metrics.kernels_bernoulli`).
BINARY_PASS = StatePass("binary", "single", _sums.prepare, _binary_parts)


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
