"""The metric registry: every evaluation metric declared once.

:data:`REGISTRY` maps each metric's name (the key in ``annokit evaluate --json``)
to a :class:`MetricSpec`: a one-line summary, the labels it needs, its
direction, unit and citation, its options with defaults, the per-item quantity
whose mean it is (if any), and the state class that computes it
(:mod:`annokit.metrics.states`). The engine, the CLI, the per-item CSV, the
report and the docs read names, units and directions from here.

To add a metric: add its per-item quantity to :mod:`annokit.metrics.sums` and
:mod:`annokit.metrics.kernels` (or write a new state class in :mod:`annokit.metrics.states`) and add one
:class:`MetricSpec` below; ``tests/metrics/test_registry.py`` then checks it
for mergeability, invariances and input rejection.

Examples
--------
>>> from annokit.metrics.registry import REGISTRY, compute
>>> spec = REGISTRY["ece"]
>>> spec.unit, spec.lower_is_better, dict(spec.options)
('probability', True, {'n_bins': 10})
>>> round(compute("ece", [[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]], hard=[0, 1, 1], n_bins=5), 6)
0.3
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from annokit.errors import InvalidValueError
from annokit.metrics.states import (
    AdaptiveBinnedState,
    BinnedState,
    ItemMeanState,
    MetricState,
    update_many,
)

__all__ = ["REGISTRY", "MetricSpec", "available", "compute"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class MetricSpec:
    """One registered metric.

    Attributes
    ----------
    name : str
        The key in ``annokit evaluate --json`` ``"metrics"``.
    summary : str
        One line.
    needs : frozenset of str
        Labels it needs besides the model probabilities: subset of ``{"soft", "hard"}``.
    lower_is_better : bool or None
        None for a signed quantity whose ideal is 0 (``ent_ce_signed``).
    unit : str
        ``"probability"``, ``"rate"``, ``"nats"``, ...
    citation : str
        Author(s), year, venue, arXiv/DOI.
    options : Mapping
        Accepted options with their defaults, e.g. ``{"n_bins": 10}``.
    per_item : str or None
        The per-item quantity (:data:`annokit.metrics.sums.ITEM_QUANTITIES`)
        whose mean this metric is; None for the binned metrics.
    state_class : type
        A :class:`~annokit.metrics.states.MetricState` subclass.
    state_args : Mapping
        Fixed constructor arguments of ``state_class`` (e.g. ``classwise=True``).
    headline : bool
        One of the few metrics a summary shows first (the report's per-bin and
        per-item figures); every metric is still in the full tables.
    """

    name: str
    summary: str
    needs: frozenset[str]
    lower_is_better: bool | None
    unit: str
    citation: str
    options: Mapping[str, Any]
    per_item: str | None
    state_class: type
    state_args: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    headline: bool = False

    def state(self, **options: Any) -> MetricState:
        """A fresh state with ``options`` (defaults from :attr:`options`).

        Raises
        ------
        InvalidValueError
            An option the metric does not accept, or an invalid value.
        """
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            raise InvalidValueError(f"metric {self.name!r} accepts options "
                                    f"{sorted(self.options)}; got {unknown}")
        return self.state_class(**self.state_args, **{**self.options, **options})


_NAEINI = ("Naeini, Cooper, Hauskrecht (2015). Obtaining Well Calibrated Probabilities Using "
           "Bayesian Binning. AAAI. DOI:10.1609/aaai.v29i1.9602")
_GUO = ("Guo, Pleiss, Sun, Weinberger (2017). On Calibration of Modern Neural Networks. ICML. "
        "arXiv:1706.04599")
_NIXON = ("Nixon, Dusenberry, Zhang, Jerfel, Tran (2019). Measuring Calibration in Deep "
          "Learning. CVPR Workshops. arXiv:1904.01685")
_LEZNIK = ("Leznik (2026). Soft Mean Expected Calibration Error (SMECE): A Calibration Metric "
           "for Probabilistic Labels")
_BAAN = ("Baan, Aziz, Plank, Fernandez (2022). Stop Measuring Calibration When Humans "
         "Disagree. EMNLP. arXiv:2210.16133")
_NIE = ("Nie, Zhou, Bansal (2020). What Can We Learn from Collective Human Opinions on Natural "
        "Language Inference Data? EMNLP. arXiv:2010.03532")
_LIN = ("Lin (1991). Divergence measures based on the Shannon entropy. IEEE Trans. Inf. Theory "
        "37(1). DOI:10.1109/18.61115; as scipy.spatial.distance.jensenshannon and " + _NIE)
_KL = ("Kullback, Leibler (1951). On Information and Sufficiency. Ann. Math. Statist. 22(1). "
       "DOI:10.1214/aoms/1177729694")
_BRIER = ("Brier (1950). Verification of Forecasts Expressed in Terms of Probability. Monthly "
          "Weather Review 78(1). DOI:10.1175/1520-0493(1950)078<0001:VOFEIT>2.0.CO;2")
_NLL = ("Gneiting, Raftery (2007). Strictly Proper Scoring Rules, Prediction, and Estimation. "
        "JASA 102(477) (the logarithmic score). DOI:10.1198/016214506000001437")

_HARD, _SOFT = frozenset({"hard"}), frozenset({"soft"})
_BINS = MappingProxyType({"n_bins": 10})


def _mean(name: str, summary: str, needs: frozenset[str], lower: bool | None, unit: str,
          citation: str, *, headline: bool) -> MetricSpec:
    return MetricSpec(name, summary, needs, lower, unit, citation, _EMPTY, name, ItemMeanState,
                      MappingProxyType({"quantity": name}), headline=headline)


def _binned(name: str, summary: str, needs: frozenset[str], citation: str, *, headline: bool,
            **state_args: Any) -> MetricSpec:
    return MetricSpec(name, summary, needs, True, "probability", citation, _BINS, None,
                      BinnedState, MappingProxyType(state_args), headline=headline)


_SPECS = (
    _mean("accuracy", "Fraction of items whose argmax (first on ties) is the hard label "
          "(the human majority under the tie policy)", _HARD, False, "rate", _NIE, headline=True),
    _binned("ece", "Top-label expected calibration error against the hard label, equal-width "
            "bins", _HARD, _GUO, headline=True),
    MetricSpec("ece_adaptive", "Top-label ECE against the hard label with equal-mass bins "
               "(weighted quantiles; tied confidences share a bin)", _HARD, True, "probability",
               _NIXON, _BINS, None, AdaptiveBinnedState, headline=False),
    _binned("mce", "Maximum calibration error: the largest |confidence - accuracy| over "
            "non-empty equal-width bins", _HARD, _NAEINI, reduce="max", headline=False),
    _binned("classwise_ece", "Classwise ECE (SCE): every class binned on its own probability, "
            "averaged over classes", _HARD, _NIXON, classwise=True, headline=False),
    _binned("smece", "Top-label soft ECE: bin targets are the mean human probability of the "
            "predicted class", _SOFT, _LEZNIK, target="soft", headline=True),
    _binned("smece_classwise", "Classwise soft ECE against the human distribution", _SOFT,
            _LEZNIK, target="soft", classwise=True, headline=False),
    _mean("rank_cs", "Fraction of items whose stable class ranking equals the human one "
          "(tied human classes in label order)", _SOFT, False, "rate", _BAAN, headline=False),
    _mean("rank_cs_tie_aware", "Fraction of items whose ranking is consistent with some "
          "ordering of tied human classes", _SOFT, False, "rate", _BAAN, headline=False),
    _mean("ent_ce", "Mean |H(model) - H(human)|, entropy calibration error", _SOFT, True,
          "nats", _BAAN, headline=False),
    _mean("ent_ce_signed", "Mean H(model) - H(human); > 0: model less certain than the "
          "annotators, ideal 0", _SOFT, None, "nats", _BAAN, headline=True),
    _mean("dist_ce", "Mean total variation distance between model and human distributions",
          _SOFT, True, "probability", _BAAN, headline=True),
    _mean("jsd", "Mean Jensen-Shannon distance between human and model distributions (scipy "
          "convention, natural log)", _SOFT, True, "sqrt(nats)", _LIN, headline=True),
    _mean("kl", "Mean KL(human || model), model probabilities clipped at 1e-15", _SOFT, True,
          "nats", _KL, headline=False),
    _mean("brier", "Brier score against the one-hot hard label, summed over classes", _HARD,
          True, "Brier units", _BRIER, headline=False),
    _mean("brier_soft", "Brier score against the human distribution, summed over classes",
          _SOFT, True, "Brier units", _BRIER, headline=False),
    _mean("nll", "Cross-entropy of the model against the human distribution (probabilities "
          "clipped at 1e-15)", _SOFT, True, "nats", _NLL, headline=False),
    _mean("nll_majority", "Negative log-likelihood of the hard label (probabilities clipped at "
          "1e-15)", _HARD, True, "nats", _NLL, headline=False),
)

#: Every registered metric, name -> :class:`MetricSpec`, in output order (read-only).
REGISTRY: Mapping[str, MetricSpec] = MappingProxyType({spec.name: spec for spec in _SPECS})


def _spec(name: str) -> MetricSpec:
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise InvalidValueError(f"unknown metric {name!r}; registered: {list(REGISTRY)}") from None


def compute(name: str, probs: Any, soft: Any = None, hard: Any = None, *, weights: Any = None,
            **options: Any) -> float:
    """One registered metric on one set of rows: ``state(**options).update(...).compute()``.

    Parameters
    ----------
    name : str
        A key of :data:`REGISTRY`.
    probs : array-like of shape (n_items, n_labels)
        Model distributions (rows on the simplex).
    soft : array-like of shape (n_items, n_labels), optional
        Human distributions, for metrics that need ``"soft"``.
    hard : array-like of shape (n_items,), optional
        Hard labels (class indices), for metrics that need ``"hard"``.
    weights : None, array-like of shape (n_items,) or (n_replicates, n_items)
        Non-negative item weights; 2-D gives one value per replicate.
    **options
        The metric's options (:attr:`MetricSpec.options`), e.g. ``n_bins``.

    Returns
    -------
    float, or ndarray of shape (n_replicates,) with 2-D weights
        NaN when the total weight is 0.

    Raises
    ------
    InvalidValueError
        Unknown metric or option, rows off the simplex, labels out of range,
        negative weights.
    SchemaError
        Wrong shapes, no rows, or labels the metric needs not given.
    """
    state = _spec(name).state(**options)
    update_many([state], probs, soft, hard, weights, allow_empty=False)
    return state.compute()


def available(has_soft: bool, has_hard: bool) -> tuple[str, ...]:
    """Names of the registered metrics whose ``needs`` the inputs meet, in output order.

    Examples
    --------
    >>> available(has_soft=False, has_hard=True)[:3]
    ('accuracy', 'ece', 'ece_adaptive')
    """
    have = {label for label, ok in (("soft", has_soft), ("hard", has_hard)) if ok}
    return tuple(name for name, spec in REGISTRY.items() if spec.needs <= have)
