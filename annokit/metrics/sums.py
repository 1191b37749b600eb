"""The quantities, types and input checks behind every registered metric.

This module declares what a metric state absorbs and checks what it is fed:
:data:`ITEM_QUANTITIES` (the per-item quantities whose means are metrics),
:class:`BatchSums` (what one batch contributes: weighted sums of those
quantities, the total weight and the per-bin sums of the binned metrics),
:func:`prepare` and :func:`check_values`. The sums themselves are computed by
the fused numba kernels in :mod:`annokit.metrics.kernels` (``batch_sums`` and
``item_values``), for every input size; a plain numpy oracle of the same two
functions lives in ``tests/metrics/oracle.py``. The named per-item functions
(:func:`annokit.metrics.scores.brier_score` with ``reduction="none"`` and its kin)
read the same kernel (``item_values``).

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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from annokit.core.checks import check_simplex
from annokit.errors import InvalidValueError, SchemaError
from annokit.metrics._binning import BinStats

__all__ = [
    "ITEM_QUANTITIES",
    "NAMES",
    "NO_LOG_QUANTITIES",
    "QUANTITIES",
    "RANK_SORT_KIND",
    "TVD_QUANTITY",
    "BatchSums",
    "BinStats",
    "Quantity",
    "check_values",
    "prepare",
    "quantity_needs",
]

@dataclass(frozen=True)
class Quantity:
    """One per-item quantity: its name, the labels it is computed against, its logs and its
    kernel group.

    ``logs``: ``""`` none (the kernels' cheaper pass without logs), ``"p"`` the log of the
    model probabilities, ``"pt"`` those of the model and of the soft labels, ``"own"`` its
    own logs (Jensen-Shannon's, of the mixture). ``group``: the quantities a kernel computes
    together (:data:`annokit.metrics.kernels._GROUPS`): a metric alone computes its group,
    not every quantity; the groups without a log are computed together whenever a log is.
    """

    name: str
    needs: str
    logs: str
    group: str


#: Every per-item quantity, once, in the order of :func:`item_values` columns by default;
#: the kernels build their column tuples, bit masks and groups from it (checked at import).
QUANTITIES = (
    Quantity("accuracy", "hard", "", "plain"),
    Quantity("ent_ce", "soft", "pt", "entropy"),
    Quantity("ent_ce_signed", "soft", "pt", "entropy"),
    Quantity("dist_ce", "soft", "", "plain"),
    Quantity("jsd", "soft", "own", "jsd"),
    Quantity("kl", "soft", "pt", "entropy"),
    Quantity("brier", "hard", "", "plain"),
    Quantity("brier_soft", "soft", "", "plain"),
    Quantity("nll_majority", "hard", "p", "nll"),
    Quantity("nll", "soft", "p", "nll"),
    Quantity("rank_cs", "soft", "", "rank"),
    Quantity("rank_cs_tie_aware", "soft", "", "rank"),
)
_BY_NAME = {q.name: q for q in QUANTITIES}


def _check_table() -> None:
    """Names unique, ``needs``/``logs`` known, a group either all with logs or all without."""
    if len(_BY_NAME) != len(QUANTITIES):
        raise ImportError("sums.QUANTITIES: a per-item quantity is listed twice")
    for q in QUANTITIES:
        if q.needs not in ("hard", "soft") or q.logs not in ("", "p", "pt", "own"):
            raise ImportError(f"sums.QUANTITIES: {q.name!r} has needs={q.needs!r}, "
                              f"logs={q.logs!r}; expected needs hard or soft, logs '', p, pt "
                              "or own")
        if any(bool(o.logs) != bool(q.logs) for o in QUANTITIES if o.group == q.group):
            raise ImportError(f"sums.QUANTITIES: group {q.group!r} mixes quantities with and "
                              "without logs")


_check_table()

#: The per-item quantities, in the order of :func:`item_values` columns by default.
ITEM_QUANTITIES = tuple(q.name for q in QUANTITIES)

#: Quantities computed against the hard labels; the others need the soft labels.
_HARD = frozenset(q.name for q in QUANTITIES if q.needs == "hard")
#: The quantities without a log, in ITEM_QUANTITIES order (the kernels have a cheaper pass).
NO_LOG_QUANTITIES = tuple(q.name for q in QUANTITIES if not q.logs)
#: The per-item quantity of DistCE, the total variation distance (Baan et al. 2022, Eq. 7).
TVD_QUANTITY = "dist_ce"

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


def check_quantities(quantities: Sequence[str], soft: Any, hard: Any) -> tuple[str, ...]:
    quantities = tuple(quantities)
    for q in quantities:
        need = quantity_needs(q)
        if (soft if need == "soft" else hard) is None:
            raise SchemaError(f"{q} needs {need} labels; got {need}=None")
    return quantities


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
