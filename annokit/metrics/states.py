"""Mergeable metric states: one batch at a time, any split, any order, the same value.

Every registered metric (:data:`annokit.metrics.registry.REGISTRY`) is a state::

    s = REGISTRY[name].state(**options)
    s.update(probs, soft=None, hard=None, weights=None)   # one batch; returns s
    s.merge(other)                                       # same metric/options/k/r; returns s
    s.compute()                                          # float, or ndarray (r,)

``probs`` (n, k) and ``soft`` (n, k) are probability rows, ``hard`` (n,) class
indices, ``weights`` None (all 1), ``(n,)`` item weights or ``(r, n)`` for ``r``
replicate weightings at once (then the state holds ``r`` replicates and
:meth:`~MetricState.compute` returns shape ``(r,)``). Updating one state with
all rows, or states on any split of the rows merged in any order, gives the same
value to floating-point summation order (1e-12 relative); integer weights give
the value of the repeated rows; a total weight of 0 computes NaN.

:func:`update_many` updates several states from one batch: the inputs are
checked once and every state is filled from one pass of
:func:`annokit.metrics.kernels.batch_sums` (one per distinct ``n_bins``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from annokit.errors import InvalidValueError, SchemaError
from annokit.metrics import _binning
from annokit.metrics import kernels as _kernels
from annokit.metrics import sums as _sums
from annokit.metrics._binning import BinStats

__all__ = ["AdaptiveBinnedState", "BinnedState", "ItemMeanState", "MetricState", "edge_bin_stats",
           "update_many"]


def _add(a: Any, b: Any) -> Any:
    return b if a is None else a + b


class MetricState:
    """Base class: the bookkeeping shared by every state (labels, replicates, inputs).

    Attributes
    ----------
    needs : frozenset of str
        The labels :meth:`update` requires, a subset of ``{"soft", "hard"}``.
    n_labels : int or None
        Columns of ``probs`` (set by the first non-empty update).
    n_replicates : int or None
        ``r`` when updated with 2-D weights, None for 1-D or no weights.
    """

    needs: frozenset[str] = frozenset()
    #: Filled from the fused kernel pass (:func:`update_many`); the extension states of
    #: :mod:`annokit.metrics.states_ext` are not, and absorb their checked batches themselves.
    fused = True

    def __init__(self) -> None:
        self.n_labels: int | None = None
        self.n_replicates: int | None = None
        self._updated = False

    # -- protocol
    def update(self, probs: Any, soft: Any = None, hard: Any = None, weights: Any = None
               ) -> MetricState:
        """Add one batch (see the module notes); returns self."""
        update_many([self], probs, soft, hard, weights)
        return self

    def update_together(self, states: list[MetricState], probs: Any, soft: Any, hard: Any,
                        weights: Any, *, names: Sequence[str], allow_empty: bool
                        ) -> list[MetricState]:
        """Update ``states`` (a mix holding this state) from one batch; the states that the
        fused kernels do not fill (``fused`` False) implement it."""
        raise NotImplementedError

    def merge(self, other: MetricState) -> MetricState:
        """Add the batches of ``other`` (same metric, options, labels and replicates); returns self."""
        if type(other) is not type(self) or other._options() != self._options():
            raise InvalidValueError(f"cannot merge {type(other).__name__}{other._options()} into "
                                    f"{type(self).__name__}{self._options()}")
        if other._updated:
            self._check_shape(other.n_labels, other.n_replicates, "the other state")
            self._merge(other)
            # a fresh state takes the other's shape, so later batches are checked against it
            self.n_labels, self.n_replicates = other.n_labels, other.n_replicates
            self._updated = True
        return self

    def compute(self) -> Any:
        """The metric: a float, or ndarray of shape (r,) with replicates; NaN for no weight."""
        if not self._updated:
            return np.nan
        return self._compute()

    # -- shared helpers
    def _options(self) -> dict[str, Any]:
        raise NotImplementedError

    def _check_shape(self, k: int | None, r: int | None, what: str) -> None:
        if not self._updated:
            return
        if k != self.n_labels:
            raise SchemaError(f"{what} has {k} label columns; the state holds {self.n_labels}")
        if r != self.n_replicates:
            raise SchemaError(f"{what} has {r} replicate weightings; the state holds "
                              f"{self.n_replicates}")

    def _accept(self, k: int, r: int | None) -> None:
        self.n_labels, self.n_replicates, self._updated = k, r, True

    def _merge(self, other: Any) -> None:
        raise NotImplementedError

    def _compute(self) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self._options().items())
        return f"{type(self).__name__}({opts})"


class ItemMeanState(MetricState):
    """Weighted mean of one per-item quantity: ``sum_i w_i v_i / sum_i w_i``.

    Parameters
    ----------
    quantity : str
        One of :data:`annokit.metrics.sums.ITEM_QUANTITIES` (definitions there).

    Notes
    -----
    Constant memory: the two sums (each of shape ``(r,)`` with replicates).
    Merging adds them.

    Examples
    --------
    >>> s = ItemMeanState("brier_soft").update([[0.8, 0.2]], soft=[[0.5, 0.5]])
    >>> round(s.update([[0.5, 0.5]], soft=[[0.5, 0.5]]).compute(), 6)
    0.09
    """

    def __init__(self, quantity: str) -> None:
        super().__init__()
        self.needs = frozenset({_sums.quantity_needs(quantity)})
        self.quantity = quantity
        self._total: Any = None
        self._weight: Any = None

    def _options(self) -> dict[str, Any]:
        return {"quantity": self.quantity}

    def _absorb(self, sums: _sums.BatchSums) -> None:
        j = sums.quantities.index(self.quantity)
        self._total = _add(self._total, np.array(sums.items[..., j]))
        self._weight = _add(self._weight, np.array(sums.weight, dtype=np.float64))

    def _merge(self, other: ItemMeanState) -> None:
        self._total = _add(self._total, other._total)
        self._weight = _add(self._weight, other._weight)

    def _compute(self) -> Any:
        return _binning._divide(self._total, self._weight)


_REDUCTIONS = ("ece", "max")


class BinnedState(MetricState):
    """Per-bin weighted sums over equal-width bins: ECE, MCE, classwise ECE, SMECE.

    Parameters
    ----------
    n_bins : int, default 10
        Equal-width bins on [0, 1] (``[lo, hi)``, the last closed; see
        :mod:`annokit.metrics._binning`).
    target : {"hard", "soft"}, default "hard"
        Bin target: the hard-label correctness (ECE) or the human probability
        (SMECE, Leznik 2026).
    classwise : bool, default False
        Bin every class column on its own probability and average over classes
        (Nixon et al. 2019, SCE) instead of the top label.
    reduce : {"ece", "max"}, default "ece"
        ``"ece"``: ``sum_b |conf_b - target_b| / W``; ``"max"``: MCE
        ``max_b |conf_b / W_b - target_b / W_b|`` over bins of positive weight
        (top label only).

    Notes
    -----
    Constant memory: ``3 n_bins`` sums (``3 k n_bins`` classwise), times ``r``
    with replicates. Merging adds them. With ``soft`` one-hot of ``hard`` the
    soft target equals the hard one bit for bit, so SMECE equals ECE exactly.

    Examples
    --------
    >>> s = BinnedState(n_bins=5).update([[0.9, 0.1], [0.6, 0.4]], hard=[0, 1])
    >>> round(s.update([[0.2, 0.8]], hard=[1]).compute(), 6)
    0.3
    """

    def __init__(self, *, n_bins: int = 10, target: str = "hard", classwise: bool = False,
                 reduce: str = "ece") -> None:
        super().__init__()
        self.n_bins = _binning.check_n_bins(n_bins)
        if target not in ("hard", "soft"):
            raise InvalidValueError(f"target must be one of ['hard', 'soft']; got {target!r}")
        if reduce not in _REDUCTIONS or (reduce == "max" and classwise):
            raise InvalidValueError(f"reduce must be one of {list(_REDUCTIONS)} (top label) "
                                    f"or 'ece' (classwise); got {reduce!r}")
        self.target, self.classwise, self.reduce = target, bool(classwise), reduce
        self.needs = frozenset({target})
        self._stats: BinStats | None = None

    def _options(self) -> dict[str, Any]:
        return {"n_bins": self.n_bins, "target": self.target, "classwise": self.classwise,
                "reduce": self.reduce}

    def _absorb(self, sums: _sums.BatchSums) -> None:
        b = sums.bins
        hard = self.target == "hard"
        if self.classwise:
            mine = BinStats(b.weight, b.count, b.conf, cw_count=b.cw_count, cw_conf=b.cw_conf,
                            cw_hit=b.cw_hit if hard else None,
                            cw_soft=None if hard else b.cw_soft)
        else:
            mine = BinStats(b.weight, b.count, b.conf, hit=b.hit if hard else None,
                            soft=None if hard else b.soft)
        self._stats = mine if self._stats is None else self._stats.merge(mine)

    def _merge(self, other: BinnedState) -> None:
        self._stats = other._stats if self._stats is None else self._stats.merge(other._stats)

    def _compute(self) -> Any:
        soft = self.target == "soft"
        if self.classwise:
            return _binning.compute_classwise(self._stats, soft=soft)
        return _binning.compute_top(self._stats, soft=soft, reduce=self.reduce)


class AdaptiveBinnedState(MetricState):
    """Top-label ECE over equal-mass (adaptive) bins (Nixon et al. 2019).

    Parameters
    ----------
    n_bins : int, default 10

    Notes
    -----
    The bin edges are the ``b / n_bins`` weighted quantiles of all confidences
    (:func:`annokit.metrics._binning.quantile_edges`: integer weights give
    ``np.quantile`` of the repeated rows), so the state keeps the confidence,
    the correctness and the weights of every item: memory grows linearly, 16
    bytes per item plus 8 per item and replicate. :meth:`compute` sorts them
    once. Then ``ECE = sum_b |conf_b - hit_b| / W`` as for equal-width bins.

    **Ties.** Tied confidences always stay in one bin: an item's bin is
    ``clip(searchsorted(edges, c, "right") - 1, 0, n_bins - 1)``, a function of
    its confidence alone, as in uncertainty-calibration (Kumar et al. 2019).
    torchmetrics-style and torch-uncertainty implementations that cut the
    sorted items into equal-count groups split tied values by sort position
    instead; on tie-heavy data (e.g. many one-hot predictions) the two rules can
    give noticeably different values (up to 24% on the data of issue 11), and
    bins here can be empty or unequal.

    Examples
    --------
    >>> s = AdaptiveBinnedState(n_bins=2).update([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]],
    ...                                          hard=[0, 1, 1])
    >>> round(s.compute(), 6)
    0.3
    """

    needs = frozenset({"hard"})

    def __init__(self, *, n_bins: int = 10) -> None:
        super().__init__()
        self.n_bins = _binning.check_n_bins(n_bins)
        self._conf: list[np.ndarray] = []
        self._hit: list[np.ndarray] = []
        self._weights: list[np.ndarray] = []
        self._total: Any = None

    def _options(self) -> dict[str, Any]:
        return {"n_bins": self.n_bins}

    def _absorb_items(self, conf: np.ndarray, hit: np.ndarray, w: np.ndarray | None,
                      weight: Any) -> None:
        self._conf.append(conf)
        self._hit.append(hit)
        self._weights.append(np.ones(conf.shape[0]) if w is None else np.array(w))
        self._total = _add(self._total, np.array(weight, dtype=np.float64))

    def _merge(self, other: AdaptiveBinnedState) -> None:
        self._conf += other._conf
        self._hit += other._hit
        self._weights += other._weights
        self._total = _add(self._total, other._total)

    def _compute(self) -> Any:
        if np.ndim(self._total) == 0 and not self._total > 0:
            return np.nan
        conf = np.concatenate(self._conf)
        hit = np.concatenate(self._hit)
        w = np.concatenate(self._weights, axis=-1)
        unit = w.ndim == 1 and np.all(w == 1)
        edges = _binning.quantile_edges(conf, self.n_bins, None if unit else w)
        return _binning.compute_top(edge_bin_stats(conf, hit, edges, self.n_bins,
                                                   None if unit else w, self._total))


def edge_bin_stats(conf: np.ndarray, hit: np.ndarray, edges: np.ndarray, n_bins: int,
                   weights: np.ndarray | None = None, total: Any = None) -> BinStats:
    """Top-label bin sums of ``conf`` and ``hit`` with given edges (one set, or one per replicate).

    The sums of :class:`AdaptiveBinnedState` once its edges are known (the Dask
    engine finds them without gathering the items, :mod:`annokit.scale.quantiles`).
    ``edges`` of shape (n_bins + 1,) or (r, n_bins + 1) with ``weights`` (r, n);
    replicates whose edges are not finite (no weight) put every item in bin 0.
    """
    per_rep = edges.ndim == 2
    if per_rep:
        idx = np.stack([_binning.bin_index(conf, e) if np.isfinite(e).all()
                        else np.zeros(conf.shape[0], np.int64) for e in edges])
    else:
        idx = _binning.bin_index(conf, edges)

    def sums(values):
        return _binning.bin_sums(idx, n_bins, weights, values, per_replicate=per_rep)

    if total is None:
        total = float(conf.size) if weights is None else np.sum(weights, axis=-1)
    return BinStats(total, sums(None), sums(conf), hit=sums(hit))


# --------------------------------------------------------------------------- update_many

def update_many(states: Iterable[MetricState], probs: Any, soft: Any = None, hard: Any = None,
                weights: Any = None, *, names: Sequence[str] = _sums.NAMES,
                allow_empty: bool = True) -> list[MetricState]:
    """Update every state with one batch, checking the inputs once.

    Parameters
    ----------
    states : iterable of MetricState
    probs : array-like of shape (n, k)
    soft : array-like of shape (n, k), optional
    hard : array-like of shape (n,), optional
    weights : None, array-like of shape (n,) or (r, n)
    names : (str, str, str), default ("probs", "soft", "hard")
        Argument names used in error messages (the named functions pass
        their own, e.g. ``("probs", "targets", "labels")``).
    allow_empty : bool, default True
        False rejects a batch without rows.

    Returns
    -------
    list of MetricState
        The states, updated in place. No state changes when a check fails.

    Raises
    ------
    SchemaError
        Wrong shapes, labels a state needs not given, or a batch whose number
        of label columns or replicates differs from what a state holds.
    InvalidValueError
        Rows off the simplex, labels out of range, negative or non-finite weights.
    """
    states = list(states)
    other = next((st for st in states if not st.fused), None)
    if other is not None:  # ordinal, binary, multi-label states among them
        return other.update_together(states, probs, soft, hard, weights, names=names,
                                     allow_empty=allow_empty)
    return _update_fused(states, probs, soft, hard, weights, names=names,
                         allow_empty=allow_empty)


def _update_fused(states: list[MetricState], probs: Any, soft: Any, hard: Any, weights: Any,
                  *, names: Sequence[str], allow_empty: bool) -> list[MetricState]:
    """:func:`update_many` for states that the fused kernels fill."""
    p, s, h, w = _sums.prepare(probs, soft, hard, weights, names=names, allow_empty=allow_empty)
    given = {"soft": s is not None, "hard": h is not None}
    k, r = p.shape[1], (w.shape[0] if w is not None and w.ndim == 2 else None)
    for st in states:
        for need in sorted(st.needs):
            if not given[need]:
                label = names[1] if need == "soft" else names[2]
                raise SchemaError(f"{type(st).__name__}{st._options()} needs {need} labels; "
                                  f"got {label}=None")
        st._check_shape(k, r, "the batch")
    item_states = [st for st in states if isinstance(st, ItemMeanState)]
    binned: dict[int, list[BinnedState]] = {}
    for st in states:
        if isinstance(st, BinnedState):
            binned.setdefault(st.n_bins, []).append(st)
    quantities = tuple(dict.fromkeys(st.quantity for st in item_states))
    groups = list(binned.items()) or [(None, [])]
    first = None
    for j, (n_bins, group) in enumerate(groups):
        out = _kernels.batch_sums(p, s, h, w, quantities=quantities if j == 0 else (),
                               n_bins=n_bins, classwise=any(st.classwise for st in group),
                               names=names)
        first = out if j == 0 else first
        for st in group:
            st._absorb(out)
    for st in item_states:
        st._absorb(first)
    adaptive = [st for st in states if isinstance(st, AdaptiveBinnedState)]
    if adaptive:
        pred, conf = _binning.top_label(p)
        hit = (pred == h).astype(np.float64)
        for st in adaptive:
            st._absorb_items(conf, hit, w, first.weight)
    for st in states:
        st._accept(k, r)
    return states
