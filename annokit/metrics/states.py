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

:func:`update_many` is the one update entry point (every state's :meth:`~MetricState.update`
calls it): it checks the shapes once, groups the states by the pass that fills them
(:attr:`MetricState.filled_by`, a :class:`StatePass`: the fused kernels of
:mod:`annokit.metrics.kernels` for the states of this module, one fused pass each for
the order-aware, binary and multi-label states), runs each pass once over the batch
(the passes check the values as they read them), and only then changes the states.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from annokit.errors import InvalidValueError, SchemaError
from annokit.metrics import _binning
from annokit.metrics import kernels as _kernels
from annokit.metrics import sums as _sums
from annokit.metrics._binning import BinStats

__all__ = ["KERNEL_PASS", "AdaptiveBinnedState", "BinnedState", "ItemMeanState", "MetricState",
           "StatePass", "check_needs", "edge_bin_stats", "top_label_ece", "top_label_hit",
           "update_many"]

#: ``prepare(probs, soft, hard, weights, *, names, allow_empty) -> (p, s, h, w)``: shapes only.
Prepare = Callable[..., tuple[np.ndarray, np.ndarray | None, np.ndarray | None,
                              np.ndarray | None]]
#: ``parts(states, p, s, h, w, names) -> [part per state]``: one read of the batch, values checked.
Parts = Callable[[list[Any], np.ndarray, np.ndarray | None, np.ndarray | None,
                  np.ndarray | None, Sequence[str]], list[Any]]


def _add(a: Any, b: Any) -> Any:
    return b if a is None else a + b


@dataclass(frozen=True, eq=False)
class StatePass:
    """One read of a batch that gives every state of one kind what it absorbs.

    Attributes
    ----------
    name : str
        What it fills (``"kernels"``, ``"ordinal"``, ``"binary"``, ``"multilabel"``).
    task : {"single", "multilabel"}
        The inputs it reads; states of different tasks cannot share a batch.
    prepare : callable
        The task's shape checks (:func:`annokit.metrics.sums.prepare` for single-label rows).
    parts : callable
        ``parts(states, p, s, h, w, names)``: one pass over the prepared batch that checks
        its values (raising the message that names the row) and returns, in order, the
        part each state absorbs (``state._absorb(part)``). It changes no state.
    """

    name: str
    task: str
    prepare: Prepare
    parts: Parts


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

    def __init__(self) -> None:
        self.n_labels: int | None = None
        self.n_replicates: int | None = None
        self._updated = False

    @property
    def filled_by(self) -> StatePass:
        """The pass that fills this state (:func:`update_many` runs each pass once per batch)."""
        return KERNEL_PASS

    # -- protocol
    def update(self, probs: Any, soft: Any = None, hard: Any = None, weights: Any = None
               ) -> MetricState:
        """Add one batch (see the module notes); returns self."""
        update_many([self], probs, soft, hard, weights)
        return self

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

    def bounds(self) -> tuple[Any, Any] | None:
        """Two statistics that bound the metric's population value, or None.

        The binned |gap| metrics (ECE and its kin) return ``(lower, upper)``
        (:func:`annokit.metrics._binning.gap_bounds`), each a float or shape ``(r,)``;
        their interval is built from these (registry ``interval="bounds"``). Other
        states return None. NaN for no weight.
        """
        if not self._updated:
            return (np.nan, np.nan) if self._has_bounds() else None
        return self._bounds()

    def _has_bounds(self) -> bool:
        return False

    def _bounds(self) -> tuple[Any, Any] | None:
        return None

    # -- shared helpers
    def _options(self) -> dict[str, Any]:
        raise NotImplementedError

    def _check_batch(self, given: dict[str, bool], k: int, r: int | None) -> None:
        """What this state requires of a batch besides its labels (checked before any pass)."""
        self._check_shape(k, r, "the batch")

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

    def _absorb(self, part: Any) -> None:
        """Add this state's part of one batch (what its pass returned for it)."""
        raise NotImplementedError

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


_REDUCTIONS = ("ece", "max", "debiased")


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
    reduce : {"ece", "max", "debiased"}, default "ece"
        ``"ece"``: ``sum_b |conf_b - target_b| / W``; ``"max"``: MCE
        ``max_b |conf_b / W_b - target_b / W_b|`` over bins of positive weight
        (top label only); ``"debiased"``: Kumar et al.'s (2019) unbiased squared L2
        calibration error (:func:`annokit.metrics._binning.debiased_square`; top label,
        hard target only).

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
        if reduce not in _REDUCTIONS or (reduce != "ece" and classwise):
            raise InvalidValueError(f"reduce must be one of {list(_REDUCTIONS)} (top label) "
                                    f"or 'ece' (classwise); got {reduce!r}")
        if reduce == "debiased" and target != "hard":
            raise InvalidValueError("reduce='debiased' takes 0/1 targets: target must be "
                                    f"'hard'; got {target!r}")
        self.target, self.classwise, self.reduce = target, bool(classwise), reduce
        self.needs = frozenset({target})
        self._stats: BinStats | None = None

    def _options(self) -> dict[str, Any]:
        return {"n_bins": self.n_bins, "target": self.target, "classwise": self.classwise,
                "reduce": self.reduce}

    def _absorb(self, sums: _sums.BatchSums) -> None:
        b = sums.bins
        if b is None:  # pragma: no cover - the kernel pass always bins for a BinnedState
            raise RuntimeError("batch sums without bins given to a BinnedState")
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
        if other._stats is not None:
            self._stats = other._stats if self._stats is None else self._stats.merge(other._stats)

    def _compute(self) -> Any:
        if self._stats is None:  # pragma: no cover - compute() asks only updated states
            return np.nan
        soft = self.target == "soft"
        if self.classwise:
            return _binning.compute_classwise(self._stats, soft=soft)
        return _binning.compute_top(self._stats, soft=soft, reduce=self.reduce)

    def _has_bounds(self) -> bool:
        return self.reduce == "ece"

    def _bounds(self) -> tuple[Any, Any] | None:
        if not self._has_bounds() or self._stats is None:
            return None
        return _binning.stats_bounds(self._stats, soft=self.target == "soft",
                                     classwise=self.classwise)


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
    give noticeably different values (up to 24% on tie-heavy data), and
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
        self._weights: list[np.ndarray | None] = []  # None: each item weighs 1
        self._total: Any = None
        self._cache: BinStats | None = None  # the sums of the current content

    def _options(self) -> dict[str, Any]:
        return {"n_bins": self.n_bins}

    def _absorb(self, part: tuple[np.ndarray, np.ndarray, np.ndarray | None, Any]) -> None:
        """``part``: the confidences, correctness, weights and total weight of one batch."""
        conf, hit, w, weight = part
        self._cache = None
        self._conf.append(conf)
        self._hit.append(hit)
        self._weights.append(None if w is None else np.array(w))
        self._total = _add(self._total, np.array(weight, dtype=np.float64))

    def _merge(self, other: AdaptiveBinnedState) -> None:
        self._cache = None
        self._conf += other._conf
        self._hit += other._hit
        self._weights += other._weights
        self._total = _add(self._total, other._total)

    def _bin_stats(self) -> BinStats | None:
        """The per-bin sums over the equal-mass edges (computed once per content)."""
        if np.ndim(self._total) == 0 and not self._total > 0:
            return None
        if self._cache is not None:
            return self._cache
        conf, hit = _joined(self._conf), _joined(self._hit)
        w = None
        if any(x is not None for x in self._weights):
            w = _joined([np.ones(c.shape[0]) if x is None else x
                         for c, x in zip(self._conf, self._weights, strict=True)])
            w = None if w.ndim == 1 and np.all(w == 1) else w
        edges = _binning.quantile_edges(conf, self.n_bins, w)
        self._cache = edge_bin_stats(conf, hit, edges, self.n_bins, w, self._total)
        return self._cache

    def _compute(self) -> Any:
        stats = self._bin_stats()
        return np.nan if stats is None else _binning.compute_top(stats)

    def _has_bounds(self) -> bool:
        return True

    def _bounds(self) -> tuple[Any, Any] | None:
        stats = self._bin_stats()
        if stats is None:
            return np.nan, np.nan
        return _binning.stats_bounds(stats)


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    """The batches' arrays end to end along the last axis (the one array itself, uncopied)."""
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=-1)


def top_label_hit(probs: np.ndarray, hard: Any) -> tuple[np.ndarray, np.ndarray]:
    """Each row's top-label confidence and whether its top label is ``hard`` (1.0 or 0.0)."""
    pred, conf = _binning.top_label(probs)
    return conf, (pred == hard).astype(np.float64)


def top_label_ece(count: np.ndarray, conf: np.ndarray, hit: np.ndarray) -> float:
    """The top-label ECE from per-bin sums of weight, confidence and hit (nan without weight).

    The adaptive ECE of the Dask engine, whose bin edges are found without gathering
    the items (:mod:`annokit.scale.eval_adaptive`); :class:`AdaptiveBinnedState` in memory.
    """
    total = count.sum()
    if not total > 0:
        return float("nan")
    return float(_binning.compute_top(BinStats(total, count, conf, hit=hit)))


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
    """Update every state with one batch: the one update entry point of every registered state.

    The shapes are checked once; the states are grouped by the pass that fills them
    (:attr:`MetricState.filled_by`), each pass reads the batch once and checks its
    values, and the states change only when every pass has succeeded.

    Parameters
    ----------
    states : iterable of MetricState
        Any mix of states of one task (single-label and multi-label states take
        different inputs).
    probs : array-like of shape (n, k)
    soft : array-like of shape (n, k), optional
    hard : array-like of shape (n,), optional
        (multi-label states: ``soft`` and ``hard`` of shape (n, L),
        :func:`annokit.metrics.states_ext.prepare_multilabel`)
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
        Wrong shapes, labels a state needs not given, a batch whose number
        of label columns or replicates differs from what a state holds, single-label
        and multi-label states mixed, or a binary metric given other than two label columns.
    InvalidValueError
        Rows off the simplex, labels out of range, negative or non-finite weights
        (multi-label: values outside [0, 1], ``hard`` not 0/1).
    """
    states = list(states)
    passes: dict[StatePass, list[MetricState]] = {}
    for st in states:
        passes.setdefault(st.filled_by, []).append(st)
    if len({ps.task for ps in passes}) > 1:
        raise SchemaError("single-label and multi-label metrics take different inputs; "
                          "update them separately")
    prepare = next(iter(passes)).prepare if passes else _sums.prepare
    p, s, h, w = prepare(probs, soft, hard, weights, names=names, allow_empty=allow_empty)
    given = {"soft": s is not None, "hard": h is not None}
    k, r = p.shape[1], (w.shape[0] if w is not None and w.ndim == 2 else None)
    for st in states:
        check_needs(st, given, names)
        st._check_batch(given, k, r)
    # every pass reads (and checks) the batch before any state changes
    parts = [(group, ps.parts(group, p, s, h, w, names)) for ps, group in passes.items()]
    for group, got in parts:
        for st, part in zip(group, got, strict=True):
            st._absorb(part)
    for st in states:
        st._accept(k, r)
    return states


def check_needs(state: MetricState, given: dict[str, bool],
                names: Sequence[str] = _sums.NAMES) -> None:
    """SchemaError unless the labels ``state`` needs are ``given`` (``names`` as in messages)."""
    for need in sorted(state.needs):
        if not given[need]:
            label = names[1] if need == "soft" else names[2]
            raise SchemaError(f"{type(state).__name__}{state._options()} needs {need} labels; "
                              f"got {label}=None")


def _kernel_parts(states: list[MetricState], p: np.ndarray, s: np.ndarray | None,
                  h: np.ndarray | None, w: np.ndarray | None, names: Sequence[str]) -> list[Any]:
    """The parts of the states of this module: one :func:`annokit.metrics.kernels.batch_sums`
    pass (one more per further distinct ``n_bins``), which also checks the values."""
    item_states = [st for st in states if isinstance(st, ItemMeanState)]
    binned: dict[int, list[BinnedState]] = {}
    for st in states:
        if isinstance(st, BinnedState):
            binned.setdefault(st.n_bins, []).append(st)
    quantities = tuple(dict.fromkeys(st.quantity for st in item_states))
    bin_groups = list(binned.items())
    n_bins, group = bin_groups[0] if bin_groups else (None, [])
    first = _kernels.batch_sums(p, s, h, w, quantities=quantities, n_bins=n_bins,
                                classwise=any(st.classwise for st in group), names=names)
    out: dict[int, Any] = {id(st): first for st in [*item_states, *group]}
    for n_bins, group in bin_groups[1:]:
        more = _kernels.batch_sums(p, s, h, w, n_bins=n_bins,
                                   classwise=any(st.classwise for st in group), names=names)
        out.update({id(st): more for st in group})
    if any(isinstance(st, AdaptiveBinnedState) for st in states):
        items = (*top_label_hit(p, h), w, first.weight)
        out.update({id(st): items for st in states if isinstance(st, AdaptiveBinnedState)})
    return [out[id(st)] for st in states]


#: The pass of the states of this module (:mod:`annokit.metrics.kernels`).
KERNEL_PASS = StatePass("kernels", "single", _sums.prepare, _kernel_parts)
