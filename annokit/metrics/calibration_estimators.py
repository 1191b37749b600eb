"""Calibration estimators of the ECE literature beyond fixed bins: ECE-sweep and MacroCE, and
the pass that fills every calibration estimator's state.

Every one compares the model's top-label (or per-class) probabilities with the hard label (the
human majority, as ``ece`` does) and follows the state protocol of
:mod:`annokit.metrics.states` (``update`` with weights None, ``(n,)`` or ``(r, n)``;
``merge``; ``compute``). One read of a batch, :data:`CALIBRATION_PASS`, fills all of them
(with TACE, :mod:`annokit.metrics.calibration_tace`, and the grid states of
:mod:`annokit.metrics.calibration_smooth`): it checks the values as every pass does and
computes each row's top-label confidence and correctness once (only the checks when no
state of the batch reads the top label).

Memory and Dask
---------------
- :class:`MacroCEState` is mergeable in constant memory (four sums per replicate).
- :class:`SweepECEState` (and TACE) keep their rows: their bins are quantiles of all
  confidences (for ECE-sweep, at every number of bins tried), which no constant-size
  summary gives exactly. ECE-sweep keeps 16 bytes per item (confidence, correctness), 8
  more per item (and replicate) when the batches are weighted. On the Dask engine they
  take its generic path: each partition fills a state and the tree reduction merges them,
  so the rows of every partition are gathered on the worker that computes the value (the
  same memory as in memory, on one worker). ``ece_adaptive`` has its own selection path
  (:mod:`annokit.scale.eval_adaptive`); these do not.

Speed
-----
With unit weights and at least :data:`BUCKETED_MIN` rows, ECE-sweep finds the ranks of its
equal-mass edges by bucket counts instead of sorting every confidence
(:mod:`annokit.metrics._buckets`): the same bins, the sums up to rounding.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numba
import numpy as np

from annokit.core.checks import SIMPLEX_ATOL
from annokit.errors import InvalidValueError, SchemaError
from annokit.metrics import _binning, _buckets
from annokit.metrics import kernels as _kernels
from annokit.metrics import sums as _sums
from annokit.metrics.states import StatePass
from annokit.metrics.states_ext import ExtensionState

__all__ = ["CALIBRATION_PASS", "MacroCEState", "SweepECEState", "check_rows", "sweep_ece",
           "top_label_rows"]


def _add(a: Any, b: Any) -> Any:
    return b if a is None else a + b


def _total(n: int, w: np.ndarray | None) -> Any:
    """The batch's total weight: a float, or shape (r,) with replicate weights."""
    if w is None:
        return float(n)
    return float(w.sum()) if w.ndim == 1 else w.sum(axis=1)


class CalibrationState(ExtensionState):
    """A state filled by :data:`CALIBRATION_PASS` (needs the hard label).

    Subclasses implement ``_part(p, h, w, conf, hit)``: what one batch adds, from the
    checked rows, the weights and each row's top-label confidence and correctness.
    """

    needs = frozenset({"hard"})
    #: Whether ``_part`` reads the top-label confidence and correctness (else they are empty).
    uses_top_label = True

    @property
    def filled_by(self) -> StatePass:
        return CALIBRATION_PASS

    def _part(self, p: np.ndarray, h: np.ndarray, w: np.ndarray | None, conf: np.ndarray,
              hit: np.ndarray) -> Any:
        raise NotImplementedError


@numba.njit(cache=True, nogil=True)
def _rows_ok(p: np.ndarray, atol: float) -> bool:  # pragma: no cover - numba
    for i in range(p.shape[0]):
        total = 0.0
        for j in range(p.shape[1]):
            v = p[i, j]
            if not (v >= 0.0 and v < np.inf):
                return False
            total += v
        if abs(total - 1.0) > atol:
            return False
    return True


@numba.njit(cache=True, nogil=True)
def _top_label(p: np.ndarray, h: np.ndarray, conf: np.ndarray, hit: np.ndarray,
               atol: float) -> bool:  # pragma: no cover - numba
    """Each row's first maximum and whether it is ``h``; False at the first row off the
    simplex or label out of range (the caller then raises the message naming it)."""
    k = p.shape[1]
    for i in range(p.shape[0]):
        best, top, total = 0, -1.0, 0.0
        for j in range(k):
            v = p[i, j]
            if not (v >= 0.0 and v < np.inf):
                return False
            total += v
            if v > top:
                best, top = j, v
        if abs(total - 1.0) > atol or h[i] < 0 or h[i] >= k:
            return False
        conf[i] = top
        hit[i] = 1.0 if best == h[i] else 0.0
    return True


@numba.njit(cache=True, nogil=True)
def _top_label3(p: np.ndarray, h: np.ndarray, conf: np.ndarray, hit: np.ndarray,
                atol: float) -> bool:  # pragma: no cover - numba
    """:func:`_top_label` for three labels, without a branch per row (LLVM vectorises it):
    the same values, and False when any row fails (not at the first)."""
    ok = True
    for i in range(p.shape[0]):
        a, b, c = p[i, 0], p[i, 1], p[i, 2]
        top = b if b > a else a
        best = 1 if b > a else 0
        best = 2 if c > top else best
        top = c if c > top else top
        conf[i] = top
        hit[i] = 1.0 if best == h[i] else 0.0
        total = a + b + c
        ok &= (a >= 0.0) & (a < np.inf) & (b >= 0.0) & (b < np.inf) & (c >= 0.0) \
            & (c < np.inf) & (abs(total - 1.0) <= atol) & (h[i] >= 0) & (h[i] < 3)
    return ok


@numba.njit(cache=True, nogil=True)
def _labelled_rows_ok(p: np.ndarray, h: np.ndarray, atol: float) -> bool:  # pragma: no cover
    """The checks of :func:`_top_label` without its outputs (no branch per row)."""
    ok = True
    k = p.shape[1]
    for i in range(p.shape[0]):
        total = 0.0
        for j in range(k):
            v = p[i, j]
            ok &= (v >= 0.0) & (v < np.inf)
            total += v
        ok &= (abs(total - 1.0) <= atol) & (h[i] >= 0) & (h[i] < k)
    return ok


@numba.njit(cache=True, nogil=True)
def _labelled_rows_ok3(p: np.ndarray, h: np.ndarray, atol: float) -> bool:  # pragma: no cover
    """:func:`_labelled_rows_ok` for three labels, vectorised: a NaN or infinite entry makes
    the row's sum fail the tolerance, so the entries need only ``min >= 0``."""
    good = 0
    for i in range(p.shape[0]):
        a, b, c = p[i, 0], p[i, 1], p[i, 2]
        good += (min(a, min(b, c)) >= 0.0) & (abs(a + b + c - 1.0) <= atol) & (h[i] >= 0) \
            & (h[i] < 3)
    return good == p.shape[0]


def check_rows(p: np.ndarray, h: np.ndarray, soft: np.ndarray | None = None,
               w: np.ndarray | None = None, *, names: Sequence[str] = _sums.NAMES) -> None:
    """The checks of :func:`top_label_rows`, for states that do not read the top label."""
    atol = SIMPLEX_ATOL - 1e-12
    rows_ok = _labelled_rows_ok3 if p.shape[1] == 3 else _labelled_rows_ok
    ok = all(_kernels._run_parts(lambda a, b: rows_ok(p[a:b], h[a:b], atol),
                                 p.shape[0])) and (soft is None or all(_kernels._run_parts(
                                     lambda a, b: _rows_ok(soft[a:b], atol), p.shape[0]))) and (
        w is None or bool(np.isfinite(w).all() and (not w.size or w.min() >= 0)))
    if not ok:
        _sums.check_values(p, soft, h, w, names=names)


def top_label_rows(p: np.ndarray, h: np.ndarray, soft: np.ndarray | None = None,
                   w: np.ndarray | None = None, *,
                   names: Sequence[str] = _sums.NAMES) -> tuple[np.ndarray, np.ndarray]:
    """Each row's top-label confidence and whether its top label (first maximum) is ``h``
    (:func:`annokit.metrics.states.top_label_hit`), checking the batch in the same pass.

    A compiled pass over the rows checks what :func:`annokit.metrics.sums.check_values`
    checks (with a tolerance 1e-12 tighter, so it never passes a row that check_values
    refuses); when it stops at a row, check_values runs and raises its message.
    """
    n = p.shape[0]
    conf, hit = np.empty(n), np.empty(n)

    kernel = _top_label3 if p.shape[1] == 3 else _top_label

    def rows(atol: float) -> bool:  # chunks of rows on threads (the kernels' chunks)
        return all(_kernels._run_parts(lambda a, b: kernel(
            p[a:b], h[a:b], conf[a:b], hit[a:b], atol), n))

    atol = SIMPLEX_ATOL - 1e-12
    ok = rows(atol) and (soft is None or all(_kernels._run_parts(
        lambda a, b: _rows_ok(soft[a:b], atol), n))) and (
        w is None or bool(np.isfinite(w).all() and (not w.size or w.min() >= 0)))
    if not ok:  # the message naming the row; a row at the tolerance's edge passes there
        _sums.check_values(p, soft, h, w, names=names)
        rows(np.inf)
    return conf, hit


def _calibration_parts(states: list[Any], p: np.ndarray, s: np.ndarray | None,
                       h: np.ndarray | None, w: np.ndarray | None,
                       names: Sequence[str]) -> list[Any]:
    """:data:`CALIBRATION_PASS`: the top label once, with the value checks of every input;
    then each state's part."""
    if h is None:  # pragma: no cover - update_many checks the labels each state needs
        raise SchemaError("the calibration estimators need hard labels")
    if any(st.uses_top_label for st in states):
        conf, hit = top_label_rows(p, h, s, w, names=names)
    else:
        check_rows(p, h, s, w, names=names)
        conf = hit = np.zeros(0)
    return [st._part(p, h, w, conf, hit) for st in states]


#: The pass of the calibration estimators (one top-label computation per batch).
CALIBRATION_PASS = StatePass("calibration", "single", _sums.prepare, _calibration_parts)


class _RowsState(CalibrationState):
    """Keeps arrays of rows per batch (concatenated at compute) and the total weight."""

    def __init__(self) -> None:
        super().__init__()
        self._rows: list[tuple[np.ndarray, ...]] = []
        self._weight: Any = None

    def _absorb(self, part: tuple[tuple[np.ndarray, ...], Any]) -> None:
        rows, weight = part
        self._rows.append(rows)
        self._weight = _add(self._weight, np.asarray(weight, dtype=np.float64))

    def _merge(self, other: _RowsState) -> None:
        self._rows += other._rows
        self._weight = _add(self._weight, other._weight)

    def _columns(self) -> tuple[list[np.ndarray], np.ndarray | None]:
        """The kept columns, and the weights (None when every batch had unit weights)."""
        cols = [col[0] if len(col) == 1 else np.concatenate(col, axis=-1)
                for col in zip(*(r[:-1] for r in self._rows), strict=True)]
        ws = [r[-1] for r in self._rows]
        if all(w is None for w in ws):
            return cols, None
        n = [r[0].shape[-1] for r in self._rows]
        return cols, np.concatenate([np.ones(m) if w is None else w for w, m in
                                     zip(ws, n, strict=True)], axis=-1)


# --------------------------------------------------------------------------- ECE-sweep

@numba.njit(cache=True, nogil=True)
def _prefix(W: np.ndarray, C: np.ndarray, Y: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover - numba
    """The three running sums, each with a leading 0 (one pass)."""
    PW, PC, PY = np.zeros(W.size + 1), np.zeros(W.size + 1), np.zeros(W.size + 1)
    for i in range(W.size):
        PW[i + 1] = PW[i] + W[i]
        PC[i + 1] = PC[i] + C[i]
        PY[i + 1] = PY[i] + Y[i]
    return PW, PC, PY


def _monotone(w: np.ndarray, y: np.ndarray) -> bool:
    return bool(np.all(np.diff(y / w) >= 0))


def _sweep_bins(sums: Callable[[int], tuple[np.ndarray, np.ndarray, np.ndarray]],
                total: float) -> int:
    """``b*``: the largest ``b <= n - 1`` such that the bin accuracies of ``sums(b')`` are
    non-decreasing for every ``b' <= b`` (Roelofs et al. 2022, Sec. 4, ECE_sweep)."""
    b_max = max(1, math.ceil(total) - 1)  # Roelofs et al. sweep b = 2, ..., n - 1
    b = 1
    while b < b_max and _monotone(*sums(b + 1)[::2]):
        b += 1
    return b


def _binned_error(w: np.ndarray, c: np.ndarray, y: np.ndarray, total: float, norm: int) -> float:
    return float((np.sum(w * np.abs(y / w - c / w) ** norm) / total) ** (1.0 / norm))


def _sweep_groups(W: np.ndarray, C: np.ndarray, Y: np.ndarray, norm: int) -> float:
    """ECE-sweep from the weight, confidence and hit sums of each distinct confidence (sorted).

    Equal-mass bins with ``b`` bins: edge ``e_j`` is the weighted inverted-CDF ``j / b``
    quantile (the first value whose cumulative weight reaches ``j W / b``), and a value
    ``c`` falls in bin ``#{j : c > e_j}``; on distinct confidences with unit weights this
    is Roelofs et al.'s split of the sorted items, ``floor(rank b / n)``.
    """
    D = W.size
    PW, PC, PY = _prefix(W, C, Y)
    F = PW[1:]
    total = float(F[-1])

    def sums(b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        edges = np.searchsorted(F, np.arange(1, b) * total / b, side="left")
        cuts = np.unique(edges[edges < D - 1]) + 1
        lo, hi = np.concatenate(([0], cuts)), np.concatenate((cuts, [D]))
        return PW[hi] - PW[lo], PC[hi] - PC[lo], PY[hi] - PY[lo]

    if _monotone(W, Y):  # every coarser partition of a monotone sequence is monotone too
        b = max(1, math.ceil(total) - 1)
    else:  # the finest partition breaks monotonicity, so the sweep stops before it
        b = _sweep_bins(sums, total)
    return _binned_error(*sums(b), total, norm)


def sweep_ece(conf: np.ndarray, hit: np.ndarray, weights: np.ndarray | None = None, *,
              norm: int = 1) -> float:
    """ECE-sweep (Roelofs et al. 2022) of top-label confidences against correctness.

    Parameters
    ----------
    conf, hit : ndarray of shape (n,)
        Confidences and correctness (0.0 or 1.0).
    weights : ndarray of shape (n,), optional
        Non-negative item weights (integer weights equal repeated rows).
    norm : int, default 1
        ``p`` of the ``L_p`` calibration error (1: as ``ece``; the authors' code defaults to 2).

    Returns
    -------
    float
        NaN when the total weight is 0.

    Examples
    --------
    >>> round(sweep_ece(np.array([0.6, 0.7, 0.8, 0.9]), np.array([0.0, 1.0, 1.0, 1.0])), 6)
    0.15
    """
    conf, hit = np.ascontiguousarray(conf, np.float64), np.asarray(hit, np.float64)
    if weights is None:
        return _sweep_unit(conf, hit, norm)
    order = np.argsort(conf, kind="stable")
    return _sweep_sorted(conf[order], hit[order], weights[order], norm)


def _sweep_sorted(c: np.ndarray, y: np.ndarray, w: np.ndarray, norm: int) -> float:
    """ECE-sweep of rows sorted by confidence: the sums of each distinct confidence first
    (``C_v = v W_v``, so tied rows add no rounding of their own)."""
    keep = w > 0
    if not keep.any():
        return float("nan")
    c, y, w = c[keep], y[keep], w[keep]
    starts = np.flatnonzero(np.concatenate(([True], c[1:] != c[:-1])))
    W, Y = np.add.reduceat(w, starts), np.add.reduceat(w * y, starts)
    return _sweep_groups(W, c[starts] * W, Y, norm)


@numba.njit(cache=True, nogil=True)
def _keys(bits: np.ndarray, hit: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover
    for i in range(bits.size):
        out[i] = (bits[i] << np.uint64(1)) | np.uint64(1 if hit[i] > 0.0 else 0)


@numba.njit(cache=True, nogil=True)
def _groups(key: np.ndarray, bits: np.ndarray, W: np.ndarray,
            Y: np.ndarray) -> int:  # pragma: no cover - numba
    """The distinct confidences of the sorted keys (their bits), with their counts and hits;
    returns how many there are."""
    d = -1
    prev = np.uint64(0)
    for i in range(key.size):
        b = key[i] >> np.uint64(1)
        if d < 0 or b != prev:
            d += 1
            bits[d], W[d], Y[d], prev = b, 0.0, 0.0, b
        W[d] += 1.0
        Y[d] += float(key[i] & np.uint64(1))
    return d + 1


def _unit_groups(conf: np.ndarray, hit: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct confidences (sorted), their counts and hits, for unit weights: one sort of
    the confidence's bits (order-preserving for non-negative floats) with the hit appended,
    no permutation."""
    key = np.empty(conf.size, np.uint64)
    _keys(np.ascontiguousarray(conf, np.float64).view(np.uint64), hit, key)
    key.sort()
    return _sorted_groups(key)


def _sorted_groups(key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct confidences of sorted keys (confidence bits, hit appended), their counts
    and hits."""
    bits, W, Y = np.empty(key.size, np.uint64), np.empty(key.size), np.empty(key.size)
    d = _groups(key, bits, W, Y)
    return bits[:d].view(np.float64), W[:d], Y[:d]




#: From this many rows on, unit-weight ECE-sweep (and TACE) find their equal-mass edges by
#: bucketed ranks (:mod:`annokit.metrics._buckets`) instead of sorting every value.
BUCKETED_MIN = 1 << 17


def _sweep_bucketed(conf: np.ndarray, hit: np.ndarray, norm: int) -> float:
    """ECE-sweep of unit weights from bucketed ranks: the same bins as :func:`_sweep_groups`
    (the edge of rank ``ceil(j n / b)``, ties in one bin), only the buckets that hold an
    edge sorted. When the buckets' accuracies are monotone the distinct confidences' may be
    too: every bucket is sorted and :func:`_sweep_groups` decides."""
    tb = _buckets.TopBuckets(conf, hit)
    if tb.bucket_monotone():
        v, W, Y = _sorted_groups(tb.sort_all())
        return _sweep_groups(W, v * W, Y, norm)
    total = float(conf.size)
    return _binned_error(*tb.cuts(_sweep_bins(tb.cuts, total)), total, norm)


def _sweep_unit(conf: np.ndarray, hit: np.ndarray, norm: int) -> float:
    if not conf.size:
        return float("nan")
    if conf.size >= BUCKETED_MIN:
        return _sweep_bucketed(conf, hit, norm)
    v, W, Y = _unit_groups(conf, hit)
    return _sweep_groups(W, v * W, Y, norm)


class SweepECEState(_RowsState):
    """Top-label ECE-sweep: equal-mass bins, as many as keep the bin accuracies monotone.

    Parameters
    ----------
    norm : int, default 1
        ``p`` of the ``L_p`` error, ``(sum_b W_b/W |acc_b - conf_b|^p)^(1/p)``; 1 is on the
        scale of ``ece`` and ``ece_adaptive``, 2 is the authors' default.

    Notes
    -----
    Roelofs et al. (2022) choose the number of equal-mass bins ``b*`` as the largest ``b``
    for which the bin accuracies are monotone in confidence for every ``b' <= b`` (a true
    calibration curve is monotone for most models, so more bins than that only add
    noise), and report the binned ECE at ``b*``. Bins here: edge ``j`` is the first
    confidence whose cumulative weight reaches ``j W / b``; an item falls in the number
    of edges strictly below its confidence. On distinct confidences with unit weights this
    is the authors' split of the sorted items (``floor(rank * b / n)``); tied confidences
    stay in one bin (the authors' sort splits them arbitrarily), and integer weights equal
    repeated rows. The sweep runs ``b = 2, 3, ...`` up to ``n - 1`` (``ceil(W) - 1``); when
    the accuracies of the distinct confidences are already monotone every ``b`` is, and
    ``b* = n - 1`` is taken at once. Each step costs ``O(b log n)`` after one sort (with
    unit weights and many rows: after one counting pass, plus one pass over the rows per
    doubling of ``b``), so a sweep that stops at ``b*`` costs ``O(b*^2 log n)``: small
    (``b*`` grows like ``n^(1/3)`` for a smooth calibration curve), but a model whose
    accuracy is monotone at every scale except the finest can sweep far (every bucket is
    then sorted, as one sort of every confidence).

    Memory grows linearly: 16 bytes per item, plus 8 per item and replicate with weights
    (the rows are kept; see the module notes for Dask).

    Examples
    --------
    >>> s = SweepECEState().update([[0.6, 0.4], [0.3, 0.7], [0.2, 0.8], [0.9, 0.1]],
    ...                           hard=[1, 1, 1, 0])
    >>> round(s.compute(), 6)
    0.15
    """

    def __init__(self, *, norm: int = 1) -> None:
        super().__init__()
        if isinstance(norm, bool) or norm not in (1, 2):
            raise InvalidValueError(f"norm must be 1 or 2; got {norm!r}")
        self.norm = int(norm)

    def _options(self) -> dict[str, Any]:
        return {"norm": self.norm}

    def _part(self, p: np.ndarray, h: np.ndarray, w: np.ndarray | None, conf: np.ndarray,
              hit: np.ndarray) -> Any:
        return (conf, hit, w), _total(conf.size, w)

    def _compute(self) -> Any:
        (conf, hit), w = self._columns()
        if w is None:
            return _sweep_unit(conf, hit, self.norm)
        order = np.argsort(conf, kind="stable")
        c, y = conf[order], hit[order]
        if w.ndim == 1:
            return _sweep_sorted(c, y, w[order], self.norm)
        return np.array([_sweep_sorted(c, y, wr[order], self.norm) for wr in w])


# --------------------------------------------------------------------------- MacroCE

class MacroCEState(CalibrationState):
    """MacroCE: the mean instance-level calibration error of the correct and of the wrong
    predictions, averaged (Si et al. 2022).

    Notes
    -----
    ``ICE_pos = sum_{i correct} w_i (1 - c_i) / sum_{i correct} w_i`` and
    ``ICE_neg = sum_{i wrong} w_i c_i / sum_{i wrong} w_i`` with ``c_i`` the top-label
    confidence and "correct" the top label being the hard label;
    ``MacroCE = (ICE_pos + ICE_neg) / 2``. When every prediction is correct (or every one
    wrong) the other term is undefined and MacroCE is the one that is (the macro average
    over the groups present). Constant memory: four sums (times ``r``); merging adds them.

    Examples
    --------
    >>> s = MacroCEState().update([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]], hard=[0, 1, 1])
    >>> round(s.compute(), 6)
    0.3
    """

    def __init__(self) -> None:
        super().__init__()
        self._sums: Any = None

    def _options(self) -> dict[str, Any]:
        return {}

    def _part(self, p: np.ndarray, h: np.ndarray, w: np.ndarray | None, conf: np.ndarray,
              hit: np.ndarray) -> Any:
        # sum w hit (1 - c), sum w hit, sum w (1 - hit) c, sum w (1 - hit) from three dot products
        both = hit * conf
        if w is None:
            n_hit, c_all, c_hit, total = hit.sum(), conf.sum(), both.sum(), float(conf.size)
        else:
            n_hit, c_all, c_hit, total = w @ hit, w @ conf, w @ both, w.sum(axis=-1)
        return np.stack([n_hit - c_hit, n_hit, c_all - c_hit, total - n_hit], axis=-1)

    def _absorb(self, part: np.ndarray) -> None:
        self._sums = _add(self._sums, np.asarray(part, dtype=np.float64))

    def _merge(self, other: MacroCEState) -> None:
        self._sums = _add(self._sums, other._sums)

    def _compute(self) -> Any:
        s = self._sums
        ice = np.stack([_binning._divide(s[..., 0], s[..., 1]),
                        _binning._divide(s[..., 2], s[..., 3])], axis=-1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # no weight at all: NaN
            out = np.nanmean(ice, axis=-1)
        return float(out) if np.ndim(out) == 0 else out
