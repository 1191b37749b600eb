"""The sufficient statistics of every registered metric, from one batch (numpy reference).

Two entry points share one set of input checks and one set of formulas:

- :func:`item_values`: per-item values of the quantities in
  :data:`ITEM_QUANTITIES` (the per-item CSV, the named per-item functions);
- :func:`batch_sums`: their weighted sums, the total weight and the per-bin
  sums (:class:`~annokit.metrics._binning.BinStats`) of the binned metrics,
  which is all a metric state (:mod:`annokit.metrics.states`) absorbs.

Inputs, as everywhere in the metric states: ``probs`` (n, k) model rows and
``soft`` (n, k) human distributions, both on the simplex (finite, ``>= 0``,
rows summing to 1 within 1e-6); ``hard`` (n,) class indices in ``[0, k)`` (the
human majority under the tie policy); ``weights`` None (all 1), ``(n,)`` item
weights, or ``(r, n)`` for ``r`` replicate weightings at once (bootstrap), each
finite and ``>= 0``. :func:`prepare` checks shapes and dtypes
(:class:`~annokit.errors.SchemaError`); :func:`check_values` checks values
(:class:`~annokit.errors.InvalidValueError` naming the row). The fused numba
kernels (:mod:`annokit.metrics.kernels`) have the same signatures and check the
values in the same pass.

Per-item definitions (natural logs, ``eps = 1e-15``; Baan et al. 2022 for the
human-calibration ones):

=====================  ==========================================================
accuracy               ``[argmax_j p_j == hard]`` (first maximum on ties)
ent_ce_signed          ``H(p) - H(soft)``, ``H(x) = -sum_j x_j log x_j`` (Eq. 5)
ent_ce                 ``|H(p) - H(soft)|``
dist_ce                ``0.5 sum_j |p_j - soft_j|`` (TVD, Eq. 7)
jsd                    ``scipy.spatial.distance.jensenshannon(soft, p)``
kl                     ``sum_{soft_j > 0} soft_j log(soft_j / max(p_j, eps))``
brier                  ``sum_j (p_j - [j == hard])^2`` (Brier 1950)
brier_soft             ``sum_j (p_j - soft_j)^2``
nll_majority           ``-log max(p_hard, eps)``
nll                    ``-sum_{soft_j > 0} soft_j log max(p_j, eps)``
rank_cs                stable ``argsort(p) == argsort(soft)`` (Eq. 6)
rank_cs_tie_aware      ``soft`` read in ``p``'s stable ascending order never decreases
=====================  ==========================================================

Bins: ``clip(searchsorted(linspace(0, 1, n_bins + 1), c, "right") - 1, 0,
n_bins - 1)`` (:mod:`annokit.metrics._binning`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from annokit.core.checks import check_simplex
from annokit.core.divergence import KL_EPS, js_distance_rows, kl_rows, tvd_rows
from annokit.core.soft_labels import entropy
from annokit.errors import InvalidValueError, SchemaError
from annokit.metrics import _binning
from annokit.metrics._binning import BinStats

__all__ = [
    "ITEM_QUANTITIES",
    "NAMES",
    "RANK_SORT_KIND",
    "BatchSums",
    "BinStats",
    "accuracy_rows",
    "batch_sums",
    "brier_rows",
    "check_values",
    "entropy_gap_rows",
    "item_values",
    "nll_rows",
    "prepare",
    "quantity_needs",
    "rank_rows",
]

#: The per-item quantities, in the order of :func:`item_values` columns by default.
ITEM_QUANTITIES = ("accuracy", "ent_ce", "ent_ce_signed", "dist_ce", "jsd", "kl", "brier",
                   "brier_soft", "nll_majority", "nll", "rank_cs", "rank_cs_tie_aware")

#: Quantities computed against the hard labels; the others need the soft labels.
_HARD = frozenset({"accuracy", "brier", "nll_majority"})

#: Argument names used in error messages by default: (probs, soft, hard).
NAMES = ("probs", "soft", "hard")

#: Sort kind for RankCS. Baan et al.'s code calls ``np.argsort`` with the default
#: kind ("quicksort" = introsort), which in the numpy of 2022 ran an insertion
#: sort for fewer than 17 elements and was therefore stable; "stable" gives that
#: order for any number of classes (tied classes keep the votes' label order).
#: Newer numpy (>= 1.25) may dispatch the default kind to a SIMD sort on AVX-512
#: CPUs that does not keep ties in order, so the default is no longer reproducible.
RANK_SORT_KIND = "stable"


def quantity_needs(quantity: str) -> str:
    """``"hard"`` or ``"soft"``: the labels a per-item quantity is computed against."""
    if quantity not in ITEM_QUANTITIES:
        raise InvalidValueError(f"unknown per-item quantity {quantity!r}; "
                                f"known: {list(ITEM_QUANTITIES)}")
    return "hard" if quantity in _HARD else "soft"


# --------------------------------------------------------------------------- checks

def _matrix(x: Any, name: str) -> np.ndarray:
    arr = np.asarray(x.to_numpy() if hasattr(x, "to_numpy") else x, dtype=np.float64)
    if arr.ndim != 2:
        raise SchemaError(f"{name} must be 2-D (n_items, n_labels); got shape {arr.shape}")
    if arr.shape[1] == 0:
        raise SchemaError(f"{name} has no label columns")
    return np.ascontiguousarray(arr)


def _labels(x: Any, n: int, name: str, probs_name: str) -> np.ndarray:
    arr = np.asarray(x.to_numpy() if hasattr(x, "to_numpy") else x)
    if arr.ndim != 1:
        raise SchemaError(f"{name} must be 1-D (n_items,); got shape {arr.shape}")
    if arr.shape[0] != n:
        raise SchemaError(f"{name} has {arr.shape[0]} entries but {probs_name} has {n} rows")
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all():
            raise InvalidValueError(
                f"{name} has NaN or infinite values at item {int(np.argmin(np.isfinite(arr)))}")
        if np.any(arr != np.round(arr)):
            bad = int(np.flatnonzero(arr != np.round(arr))[0])
            raise InvalidValueError(
                f"{name} must be integer class indices; got {arr[bad].item()!r} at item {bad}")
    elif arr.dtype.kind not in "iub":
        raise SchemaError(f"{name} must be integer class indices; got dtype {arr.dtype}")
    return arr.astype(np.int64, copy=False)


def prepare(probs: Any, soft: Any = None, hard: Any = None, weights: Any = None, *,
            names: Sequence[str] = NAMES, allow_empty: bool = True
            ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """Shapes and dtypes of one batch: float64 ``probs``/``soft``, int64 ``hard``, float64 weights.

    Accepts lists, ndarrays and DataFrames/Series. Values are checked by
    :func:`check_values` (float labels are checked for being whole numbers here).

    Raises
    ------
    SchemaError
        Wrong dimensions, ``soft`` not of the shape of ``probs``, ``hard`` or
        ``weights`` not one per row, no rows (unless ``allow_empty``).
    InvalidValueError
        Float labels that are NaN or not whole numbers.
    """
    p_name, s_name, h_name = names
    p = _matrix(probs, p_name)
    n = p.shape[0]
    if n == 0 and not allow_empty:
        raise SchemaError(f"{p_name} has no rows")
    s = None
    if soft is not None:
        s = _matrix(soft, s_name)
        if s.shape != p.shape:
            raise SchemaError(f"{s_name} must have the shape of {p_name} {p.shape}; got {s.shape}")
    h = None if hard is None else _labels(hard, n, h_name, p_name)
    w = None
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim not in (1, 2) or w.shape[-1] != n:
            raise SchemaError(f"weights must have shape ({n},) or (n_replicates, {n}); "
                              f"got {w.shape}")
    return p, s, h, w


def check_values(probs: np.ndarray, soft: np.ndarray | None = None,
                 hard: np.ndarray | None = None, weights: np.ndarray | None = None, *,
                 names: Sequence[str] = NAMES) -> None:
    """Values of a prepared batch: rows on the simplex, labels in range, weights ``>= 0``.

    Raises
    ------
    InvalidValueError
        Naming the first offending row (item).
    """
    check_simplex(probs, name=names[0])
    if soft is not None:
        check_simplex(soft, name=names[1])
    k = probs.shape[1]
    if hard is not None and hard.size and (hard.min() < 0 or hard.max() >= k):
        bad = int(np.flatnonzero((hard < 0) | (hard >= k))[0])
        raise InvalidValueError(f"{names[2]} must lie in [0, {k}) (one per {names[0]} column); "
                                f"got {hard[bad]} at item {bad}")
    if weights is not None and weights.size and (
            not np.isfinite(weights).all() or weights.min() < 0):
        bad = np.argwhere(~(np.isfinite(weights) & (weights >= 0)))[0]
        where = f"item {bad[-1]}" + (f" of replicate {bad[0]}" if weights.ndim == 2 else "")
        raise InvalidValueError(f"weights must be finite and >= 0; got "
                                f"{float(weights[tuple(bad)])!r} at {where}")


# --------------------------------------------------------------------------- per-item maths
# Row functions: no input checks (callers ran prepare and check_values).

def accuracy_rows(probs: np.ndarray, hard: np.ndarray) -> np.ndarray:
    """``[argmax_j p_ij == hard_i]`` as 0/1 floats (first maximum on ties)."""
    return (probs.argmax(axis=1) == hard).astype(np.float64)


def entropy_gap_rows(probs: np.ndarray, soft: np.ndarray) -> np.ndarray:
    """Signed EntCE ``H(p_i) - H(soft_i)`` in nats (Baan et al. 2022, Eq. 5; ``0 log 0 = 0``)."""
    return entropy(probs, base=None) - entropy(soft, base=None)


def rank_rows(probs: np.ndarray, soft: np.ndarray, *, tie_aware: bool = False,
              order: np.ndarray | None = None) -> np.ndarray:
    """RankCS per item (Baan et al. 2022, Eq. 6), boolean.

    Strict: the stable ascending ``argsort`` of ``p_i`` equals that of
    ``soft_i``. Tie-aware: ``soft_i`` read in ``p_i``'s stable ascending order
    never decreases (consistent with some ordering of tied human classes).
    ``order`` may pass ``argsort(probs, kind=RANK_SORT_KIND)`` computed already.
    """
    if order is None:
        order = np.argsort(probs, axis=1, kind=RANK_SORT_KIND)
    if not tie_aware:
        return (order == np.argsort(soft, axis=1, kind=RANK_SORT_KIND)).all(axis=1)
    return (np.diff(np.take_along_axis(soft, order, axis=1), axis=1) >= 0).all(axis=1)


def _one_hot(hard: np.ndarray, k: int) -> np.ndarray:
    t = np.zeros((hard.shape[0], k))
    t[np.arange(hard.shape[0]), hard] = 1.0
    return t


def brier_rows(probs: np.ndarray, target: np.ndarray) -> np.ndarray:
    """``sum_j (p_ij - y_ij)^2`` (Brier 1950); ``target`` (n, k) rows, or (n,) class indices."""
    if target.ndim == 1:
        target = _one_hot(target, probs.shape[1])
    return ((probs - target) ** 2).sum(axis=1)


def nll_rows(probs: np.ndarray, target: np.ndarray, eps: float = KL_EPS) -> np.ndarray:
    """``-sum_{y_ij > 0} y_ij log max(p_ij, eps)``; ``target`` (n, k) rows or (n,) class indices.

    With class indices this is ``-log max(p_i,hard_i, eps)``.
    """
    if target.ndim == 1:
        return -np.log(np.maximum(probs[np.arange(probs.shape[0]), target], eps))
    terms = np.where(target > 0, target * np.log(np.maximum(probs, eps)), 0.0)
    return -terms.sum(axis=1)


_Row = Callable[[np.ndarray, np.ndarray | None, np.ndarray | None, dict], np.ndarray]


def _cached(cache: dict, key: str, make: Callable[[], np.ndarray]) -> np.ndarray:
    if key not in cache:
        cache[key] = make()
    return cache[key]


def _gap(p, s, cache):
    return _cached(cache, "gap", lambda: entropy_gap_rows(p, s))


def _order(p, cache):
    return _cached(cache, "order", lambda: np.argsort(p, axis=1, kind=RANK_SORT_KIND))


#: quantity -> f(probs, soft, hard, cache) -> (n,) float
_ROWS: dict[str, _Row] = {
    "accuracy": lambda p, s, h, c: accuracy_rows(p, h),
    "ent_ce": lambda p, s, h, c: np.abs(_gap(p, s, c)),
    "ent_ce_signed": lambda p, s, h, c: _gap(p, s, c),
    "dist_ce": lambda p, s, h, c: tvd_rows(p, s),
    "jsd": lambda p, s, h, c: js_distance_rows(s, p),
    "kl": lambda p, s, h, c: kl_rows(s, p),
    "brier": lambda p, s, h, c: brier_rows(p, h),
    "brier_soft": lambda p, s, h, c: brier_rows(p, s),
    "nll_majority": lambda p, s, h, c: nll_rows(p, h),
    "nll": lambda p, s, h, c: nll_rows(p, s),
    "rank_cs": lambda p, s, h, c: rank_rows(p, s, order=_order(p, c)),
    "rank_cs_tie_aware": lambda p, s, h, c: rank_rows(p, s, tie_aware=True, order=_order(p, c)),
}


def _check_quantities(quantities: Sequence[str], soft: Any, hard: Any) -> tuple[str, ...]:
    quantities = tuple(quantities)
    for q in quantities:
        need = quantity_needs(q)
        if (soft if need == "soft" else hard) is None:
            raise SchemaError(f"{q} needs {need} labels; got {need}=None")
    return quantities


def _rows_matrix(p: np.ndarray, s: np.ndarray | None, h: np.ndarray | None,
                 quantities: tuple[str, ...]) -> np.ndarray:
    """(m, n): one contiguous row of per-item values per quantity."""
    out = np.empty((len(quantities), p.shape[0]))
    cache: dict = {}
    for j, q in enumerate(quantities):
        out[j] = _ROWS[q](p, s, h, cache)
    return out


def item_values(probs: Any, soft: Any, hard: Any, quantities: Sequence[str] = ITEM_QUANTITIES,
                *, names: Sequence[str] = NAMES) -> np.ndarray:
    """Per-item values of ``quantities`` (see the module table).

    Parameters
    ----------
    probs : array-like of shape (n, k)
    soft : array-like of shape (n, k) or None
    hard : array-like of shape (n,) or None
    quantities : sequence of str, default :data:`ITEM_QUANTITIES`
    names : (str, str, str)
        Argument names for error messages.

    Returns
    -------
    ndarray of shape (n, len(quantities))

    Raises
    ------
    SchemaError, InvalidValueError
        Invalid inputs (:func:`prepare`, :func:`check_values`), or a quantity
        whose labels were not given.
    """
    p, s, h, _ = prepare(probs, soft, hard, names=names)
    check_values(p, s, h, names=names)
    quantities = _check_quantities(quantities, s, h)
    return _rows_matrix(p, s, h, quantities).T


@dataclass
class BatchSums:
    """What one batch contributes to the metric states.

    Attributes
    ----------
    weight : float or ndarray of shape (r,)
        Total weight (the number of rows when unweighted).
    items : ndarray of shape (m,) or (r, m)
        Weighted sums ``sum_i w_i v_iq`` of the requested quantities, in order.
    quantities : tuple of str
    bins : BinStats or None
        Per-bin sums for ``n_bins`` equal-width bins (None when ``n_bins`` is None).
    """

    weight: Any
    items: np.ndarray
    quantities: tuple[str, ...]
    bins: BinStats | None


def batch_sums(probs: Any, soft: Any, hard: Any, weights: Any, *,
               quantities: Sequence[str] = (), n_bins: int | None = None,
               classwise: bool = False, names: Sequence[str] = NAMES) -> BatchSums:
    """Weighted sums of per-item quantities and per-bin statistics of one batch.

    Parameters
    ----------
    probs, soft, hard, weights
        One batch (see the module notes); ``weights`` None, (n,) or (r, n).
    quantities : sequence of str
        Per-item quantities to sum (:data:`ITEM_QUANTITIES`).
    n_bins : int or None
        Equal-width bins for the binned statistics; None for none.
    classwise : bool, default False
        Also the classwise sums (``cw_*``; ``n_bins`` required).
    names : (str, str, str)
        Argument names for error messages.

    Returns
    -------
    BatchSums
        With a leading replicate axis when ``weights`` is 2-D.

    Raises
    ------
    SchemaError, InvalidValueError
        Invalid inputs, or a quantity whose labels were not given.

    Notes
    -----
    Top-label bins hold ``sum w``, ``sum w max_j p_ij``, ``sum w [pred == hard]``
    and ``sum w soft_i[pred]`` (Guo et al. 2017 Eq. 3-5; Leznik 2026 Eq. 4);
    classwise bins bin column ``k`` on ``p_ik`` and hold ``sum w``, ``sum w
    p_ik``, ``sum w [hard == k]``, ``sum w soft_ik`` (Nixon et al. 2019, SCE).
    """
    p, s, h, w = prepare(probs, soft, hard, weights, names=names)
    check_values(p, s, h, w, names=names)
    quantities = _check_quantities(quantities, s, h)
    n = p.shape[0]
    if w is None:
        weight: Any = float(n)
    else:
        weight = w.sum(axis=-1)
        weight = float(weight) if w.ndim == 1 else weight
    rows = _rows_matrix(p, s, h, quantities)
    # one reduction per quantity, so a sum does not depend on which others are asked for
    if w is None:
        items = rows.sum(axis=1)
    else:
        items = np.stack([w @ row for row in rows], axis=-1) if len(rows) else \
            np.zeros(w.shape[:-1] + (0,))
    bins = None if n_bins is None else _bin_stats(p, s, h, w, weight,
                                                  _binning.check_n_bins(n_bins), classwise)
    return BatchSums(weight, items, quantities, bins)


def _bin_stats(p: np.ndarray, s: np.ndarray | None, h: np.ndarray | None,
               w: np.ndarray | None, weight: Any, n_bins: int, classwise: bool) -> BinStats:
    edges = _binning.uniform_edges(n_bins)
    pred, conf = _binning.top_label(p)
    idx = _binning.bin_index(conf, edges)

    def top(values):
        return _binning.bin_sums(idx, n_bins, w, values)

    stats = BinStats(weight, top(None), top(conf))
    rows = np.arange(p.shape[0])
    if h is not None:
        stats.hit = top((pred == h).astype(np.float64))
    if s is not None:
        stats.soft = top(s[rows, pred])
    if classwise:
        k = p.shape[1]
        size = k * n_bins
        # class-major layout keeps each class's items in item order inside its bins
        flat = _binning.bin_index(p.T, edges) + (np.arange(k) * n_bins)[:, None]

        def cw(values):
            out = _binning.bin_sums(flat, size, w, values)
            return out.reshape(out.shape[:-1] + (k, n_bins))

        stats.cw_count = cw(None)
        stats.cw_conf = cw(p.T)
        if h is not None:
            stats.cw_hit = cw((h[None, :] == np.arange(k)[:, None]).astype(np.float64))
        if s is not None:
            stats.cw_soft = cw(s.T)
    return stats
