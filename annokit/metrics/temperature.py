"""Temperature scaling of aligned records (Guo et al. 2017).

A single temperature ``T > 0`` divides the logits before the softmax,
``p = softmax(z / T)``: ``T > 1`` flattens the predictions, ``T < 1`` sharpens
them, and the argmax (hence accuracy and the model ranking) never changes.

``T`` is fitted on *dev* records and applied to test records:

* ``"nll_majority"``: minimise the mean negative log-likelihood of the human
  majority label (the usual recipe of Guo et al. 2017);
* ``"nll_soft"``: minimise the mean cross-entropy against the human
  distributions;
* ``"ece_grid"``: grid search for the lowest top-label ECE against the human
  majority, as Baan et al. (2022, Appendix C) chose their temperature. The
  paper does not give its grid; ours (:data:`DEFAULT_GRID`) is 0.1 to 5.0 in
  steps of 0.1, which contains the T = 2.0 they report.

Each objective is a registered metric (:data:`annokit.metrics.registry.REGISTRY`:
``nll_majority``, ``nll`` and ``ece``), computed by
:func:`annokit.metrics.registry.compute` on ``softmax(z / T)``.

Fitting on the evaluated records themselves is the *oracle* temperature
(Baan et al. 2022 used it as an upper bound on what temperature scaling can
do); :func:`temperature_scale` labels its output ``mode="oracle"`` then.

When records carry no logits, ``log(probs)`` is used as the logits
(``softmax(log p) = p``, so T = 1 leaves them unchanged); zero probabilities
stay exactly zero at every temperature.

References
----------
Guo, Pleiss, Sun, Weinberger (2017). On Calibration of Modern Neural Networks. ICML.
arXiv:1706.04599.
Baan, Aziz, Plank, Fernandez (2022). Stop Measuring Calibration When Humans Disagree.
EMNLP. arXiv:2210.16133.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from scipy.optimize import minimize_scalar

from annokit.core.checks import check_option
from annokit.core.ids import id_positions
from annokit.core.soft_labels import softmax
from annokit.errors import DegenerateInputWarning, InvalidValueError, SchemaError
from annokit.metrics.records import AlignedRecords
from annokit.metrics.registry import compute

__all__ = [
    "DEFAULT_BOUNDS",
    "DEFAULT_GRID",
    "OBJECTIVES",
    "apply_temperature",
    "fit_info",
    "fit_temperature",
    "scaled_probabilities",
    "temperature_scale",
]

#: Objective -> the registry metric it minimises (``annokit.metrics.registry.REGISTRY``) and
#: the human labels it reads (``"hard"``: the majority, ``"soft"``: the distribution).
_OBJECTIVE_METRIC = {"nll_majority": ("nll_majority", "hard"), "nll_soft": ("nll", "soft"),
                     "ece_grid": ("ece", "hard")}
OBJECTIVES = tuple(_OBJECTIVE_METRIC)
#: Grid of :func:`fit_temperature` with ``objective="ece_grid"``: 0.1, 0.2, ..., 5.0.
DEFAULT_GRID = np.round(np.arange(1, 51) * 0.1, 10)
#: Search interval of T for the NLL objectives (the search runs on log T).
DEFAULT_BOUNDS = (0.01, 100.0)


def _check_records(records: Any) -> AlignedRecords:
    if not isinstance(records, AlignedRecords):
        raise SchemaError(f"expected AlignedRecords (see annokit.metrics.records.align); got "
                              f"{type(records).__name__}")
    return records


def _logits(records: AlignedRecords) -> np.ndarray:
    """The records' logits, or ``log(probs)`` (-inf where a probability is 0)."""
    return _logits_of(records.probs, records.logits)


def _logits_of(probs: np.ndarray, logits: np.ndarray | None) -> np.ndarray:
    if logits is not None:
        return logits
    with np.errstate(divide="ignore"):
        return np.log(probs)


def scaled_probabilities(probs: Any, temperature: float, *, logits: Any = None
                         ) -> tuple[np.ndarray, np.ndarray]:
    """``softmax(z / T)`` and ``z / T``, with ``z`` the logits or ``log(probs)``.

    The one formula of :func:`apply_temperature`, on bare arrays: the Dask engine applies
    it to each partition of prediction rows (:func:`annokit.scale.evaluate.evaluate_dask`).

    Parameters
    ----------
    probs : ndarray of shape (n_items, n_labels)
    temperature : float
        ``T > 0``.
    logits : ndarray of shape (n_items, n_labels), optional
        Used instead of ``log(probs)`` when given.

    Examples
    --------
    >>> p, z = scaled_probabilities(np.array([[0.8, 0.2]]), 2.0)
    >>> p.round(4).tolist()
    [[0.6667, 0.3333]]
    """
    t = _check_temperature(temperature)
    z = _logits_of(np.asarray(probs, dtype=np.float64),
                   None if logits is None else np.asarray(logits, dtype=np.float64)) / t
    return softmax(z), z


def _check_temperature(t: Any) -> float:
    try:
        value = float(t)
    except (TypeError, ValueError):
        raise InvalidValueError(f"temperature must be a positive number; got {t!r}") from None
    if not np.isfinite(value) or value <= 0:
        raise InvalidValueError(f"temperature must be a positive finite number; got {t!r}")
    return value


def _objective(records: AlignedRecords, objective: str, z: np.ndarray, **options: Any
               ) -> Any:
    """``t -> metric(softmax(z / t))``: the registry metric of ``objective`` against the human labels."""
    name, target = _OBJECTIVE_METRIC[objective]
    labels = ({"hard": records.majority.labels} if target == "hard"
              else {"soft": records.human})
    return lambda t: compute(name, softmax(z / t), **labels, **options)


def fit_temperature(records: AlignedRecords, *, objective: str = "nll_majority",
                    grid: Any = None, n_bins: int = 10,
                    bounds: tuple[float, float] = DEFAULT_BOUNDS) -> float:
    """Fit one temperature on (dev) records.

    Parameters
    ----------
    records : AlignedRecords
        Usually dev records; fitting on the evaluated records is the oracle
        temperature.
    objective : {"nll_majority", "nll_soft", "ece_grid"}, default="nll_majority"
        NLL of the human majority label, cross-entropy against the human
        distribution (both minimised over ``log T`` with scipy's bounded scalar
        search), or the grid value with the lowest top-label ECE against the
        majority (Baan et al. 2022; the first grid value wins a tie).
    grid : array-like of float, optional
        Candidate temperatures for ``"ece_grid"``; default :data:`DEFAULT_GRID`.
    n_bins : int, default=10
        Equal-width bins of the ECE for ``"ece_grid"``.
    bounds : (float, float), default=(0.01, 100)
        Search interval of T for the NLL objectives.

    Returns
    -------
    float
        The temperature. A fit that ends on a bound of the search interval
        warns (:class:`~annokit.errors.DegenerateInputWarning`).

    Raises
    ------
    VoteSchemaError
        Unknown objective, empty or non-positive grid, bad bounds.

    Examples
    --------
    >>> from annokit.metrics.records import AlignedRecords
    >>> rec = AlignedRecords.from_arrays([[0.9, 0.1], [0.9, 0.1], [0.1, 0.9], [0.1, 0.9]],
    ...                                  [[3, 1], [1, 3], [1, 3], [1, 3]])
    >>> round(fit_temperature(rec), 3)  # 90% confident, 75% right: 9 ** (1 / T) = 3
    2.0
    """
    records = _check_records(records)
    check_option("objective", objective, OBJECTIVES)
    z = _logits(records)
    if objective == "ece_grid":
        values = DEFAULT_GRID if grid is None else np.asarray(grid, dtype=np.float64).reshape(-1)
        if values.size == 0 or not np.isfinite(values).all() or (values <= 0).any():
            raise InvalidValueError(f"grid must hold positive finite temperatures; got "
                                  f"{np.asarray(grid).tolist()!r}")
        ece = _objective(records, objective, z, n_bins=n_bins)
        eces = np.array([ece(t) for t in values])
        best = int(np.argmin(eces))
        if values.size > 1 and best in (0, values.size - 1):
            warnings.warn(f"the lowest ECE is at the edge of the temperature grid (T={values[best]:g})"
                          "; widen the grid", DegenerateInputWarning, stacklevel=2)
        return float(values[best])
    lo, hi = (float(b) for b in bounds)
    if not (0 < lo < hi and np.isfinite(hi)):
        raise InvalidValueError(f"bounds must satisfy 0 < low < high < inf; got {bounds!r}")
    nll = _objective(records, objective, z)
    res = minimize_scalar(lambda u: nll(float(np.exp(u))),
                          bounds=(np.log(lo), np.log(hi)), method="bounded",
                          options={"xatol": 1e-7})
    t = float(np.exp(res.x))
    if min(abs(res.x - np.log(lo)), abs(res.x - np.log(hi))) < 1e-3:
        warnings.warn(f"the fitted temperature {t:g} is at the edge of the search interval "
                      f"{(lo, hi)}", DegenerateInputWarning, stacklevel=2)
    return t


def apply_temperature(records: AlignedRecords, temperature: float) -> AlignedRecords:
    """Records with probabilities ``softmax(logits / T)``.

    Without logits, ``log(probs)`` is used (see the module notes). The returned
    records keep the scaled logits and record the total temperature applied
    (applying T1 then T2 equals applying T1 * T2).

    Examples
    --------
    >>> from annokit.metrics.records import AlignedRecords
    >>> rec = AlignedRecords.from_arrays([[0.8, 0.2]], [[1, 1]])
    >>> scaled = apply_temperature(rec, 2.0)
    >>> scaled.probs.round(4).tolist(), scaled.temperature
    ([[0.6667, 0.3333]], 2.0)
    """
    records = _check_records(records)
    t = _check_temperature(temperature)
    probs, z = scaled_probabilities(records.probs, t, logits=records.logits)
    total = t if records.temperature is None else records.temperature * t
    return records.with_probs(probs, logits=z, temperature=total)


def fit_info(value: float, *, oracle: bool, objective: str, n_fit_items: int,
             n_overlap_items: int) -> dict[str, Any]:
    """What :func:`temperature_scale` reports about a fitted temperature (``info``).

    Examples
    --------
    >>> fit_info(2.0, oracle=False, objective="nll_majority", n_fit_items=10, n_overlap_items=0)
    {'value': 2.0, 'mode': 'fit', 'objective': 'nll_majority', 'n_fit_items': 10, 'n_overlap_items': 0}
    """
    return {"value": value, "mode": "oracle" if oracle else "fit", "objective": objective,
            "n_fit_items": n_fit_items, "n_overlap_items": n_overlap_items}


def temperature_scale(records: AlignedRecords, *, temperature: float | None = None,
                      fit_on: AlignedRecords | None = None, oracle: bool = False,
                      objective: str = "nll_majority", grid: Any = None,
                      n_bins: int = 10) -> tuple[AlignedRecords, dict[str, Any]]:
    """Apply a given, dev-fitted or oracle temperature and describe what was done.

    Exactly one of ``temperature``, ``fit_on`` and ``oracle=True`` must be given.

    Returns
    -------
    records : AlignedRecords
        The scaled records.
    info : dict
        ``value`` (T), ``mode`` (``"fixed"``, ``"fit"`` or ``"oracle"``: fitted
        on the evaluated records themselves), and for fitted modes
        ``objective``, ``n_fit_items`` and ``n_overlap_items`` (fit items that
        are also evaluated; non-zero means the fit saw test items).

    Examples
    --------
    >>> from annokit.metrics.records import AlignedRecords
    >>> rec = AlignedRecords.from_arrays([[0.9, 0.1], [0.9, 0.1], [0.1, 0.9], [0.1, 0.9]],
    ...                                  [[3, 1], [1, 3], [1, 3], [1, 3]])
    >>> scaled, info = temperature_scale(rec, oracle=True)
    >>> info["mode"], round(info["value"], 3), info["n_overlap_items"]
    ('oracle', 2.0, 4)
    """
    records = _check_records(records)
    given = [temperature is not None, fit_on is not None, bool(oracle)]
    if sum(given) != 1:
        raise InvalidValueError("give exactly one of temperature, fit_on and oracle=True")
    if temperature is not None:
        t = _check_temperature(temperature)
        return apply_temperature(records, t), {"value": t, "mode": "fixed"}
    source = records if oracle else _check_records(fit_on)
    t = fit_temperature(source, objective=objective, grid=grid, n_bins=n_bins)
    # one hash join (np.isin on object arrays compares strings pairwise: seconds per 1e4 ids)
    overlap = int((id_positions(records.item_ids, source.item_ids) >= 0).sum())
    info = fit_info(t, oracle=bool(oracle), objective=objective, n_fit_items=source.n_items,
                    n_overlap_items=overlap)
    return apply_temperature(records, t), info
