"""The metric registry: every evaluation metric declared once.

:data:`REGISTRY` maps each metric's name (the key in ``annokit evaluate --json``)
to a :class:`MetricSpec`: a one-line summary, the labels it needs, its
direction, unit and citation, its options with defaults, the per-item quantity
whose mean it is (if any), and the state class that computes it
(:mod:`annokit.metrics.states`). The engine, the CLI, the per-item CSV, the
report and the docs read names, units and directions from here.

To add a metric: add its per-item quantity to :mod:`annokit.metrics.sums` and
:mod:`annokit.metrics.kernels` (or write a new state class in :mod:`annokit.metrics.states`,
or an :class:`~annokit.metrics.states_ext.ExtensionState` in its own module) and add one
:class:`MetricSpec` below; ``tests/metrics/test_registry.py`` then checks it
for mergeability, invariances and input rejection.

Applicability
-------------
Each metric declares the data it applies to: ``scales`` (the label scales on
which it is meaningful: ``"nominal"``, ``"ordinal"``, ``"interval"``,
``"ratio"``; order-aware metrics need ordered categories), ``listed`` (the
scales on which :func:`available` lists it by default; a subset of ``scales``),
``task`` (``"single"``: one label per vote, rows on the simplex; ``"multilabel"``:
per-label Bernoulli rows) and ``n_labels`` (a required number of labels, 2 for
the binary metrics). :func:`available` lists a metric when its needs are met,
the scale is in ``listed``, the task matches and ``n_labels`` (when the metric
requires one) is the stated number; :func:`check_applicable` refuses a requested
metric outside ``scales``, task or ``n_labels``. With the defaults
(``scale="nominal"``, ``n_labels=None``, single-label) the list is the original
eighteen metrics, in their order.

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

import numpy as np

from annokit.errors import InvalidValueError
from annokit.metrics.calibration_estimators import MacroCEState, SweepECEState
from annokit.metrics.calibration_smooth import KDEECEState, SmoothECEState
from annokit.metrics.calibration_tace import TACEState
from annokit.metrics.multilabel import MultilabelBinnedState, MultilabelState
from annokit.metrics.ordinal import OrdinalState
from annokit.metrics.states import (
    AdaptiveBinnedState,
    BinnedState,
    ItemMeanState,
    MetricState,
)
from annokit.metrics.states_ext import BinaryBinnedState, update_states

__all__ = ["INTERVAL_METHODS", "REGISTRY", "SCALES", "TASKS", "MetricSpec", "available", "check_applicable",
           "close_matches", "compute"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})

#: Label scales, from unordered to numbers with a true zero.
SCALES = ("nominal", "ordinal", "interval", "ratio")
#: ``"single"``: one label per vote; ``"multilabel"``: any subset of labels per vote.
TASKS = ("single", "multilabel")
_ALL_SCALES = frozenset(SCALES)
_ORDERED = frozenset(SCALES[1:])
#: How a metric's bootstrap interval is built (:attr:`MetricSpec.interval`).
INTERVAL_METHODS = ("percentile", "normal", "bounds", "none")


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
        ``"probability"``, ``"rate"``, ``"nats"``, ``"squared probability"`` (Brier,
        RPS: sums of squared probability differences), ``"scale points"`` (distances
        on the label values), ...
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
    scales : frozenset of str
        Label scales (:data:`SCALES`) on which the metric is meaningful.
    listed : frozenset of str or None
        Scales on which :func:`available` lists it by default; None: ``scales``.
    task : {"single", "multilabel"}
    n_labels : int or None
        The number of labels the metric requires (2: binary), None for any.
    interval : {"percentile", "normal", "bounds", "none"}
        How ``evaluate(..., n_boot=...)`` builds the metric's interval
        (:data:`INTERVAL_METHODS`): the percentile bootstrap of the metric itself;
        ``"normal"`` (the means over items): the estimate plus or minus the normal quantile
        times the bootstrap standard error (:func:`annokit.core.resample.normal_interval`);
        ``"bounds"``: the binned |gap| metrics, whose plug-in is biased upward at
        the sizes users have, get an interval for their population value from two
        statistics that bound it (:meth:`~annokit.metrics.states.MetricState.bounds`);
        ``"none"``: no honest interval is known, ``no_interval`` says why.
    no_interval : str
        Why a metric has no interval (``interval="none"``); empty otherwise.
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
    scales: frozenset[str] = _ALL_SCALES
    listed: frozenset[str] | None = None
    task: str = "single"
    n_labels: int | None = None
    interval: str = "percentile"
    no_interval: str = ""

    def applies(self, *, scale: str = "nominal", n_labels: int | None = None,
                multilabel: bool = False, listing: bool = False) -> bool:
        """Whether the metric applies to data of this scale, task and number of labels.

        ``listing=True`` asks whether :func:`available` lists it (``listed``
        scales, and a required ``n_labels`` stated); otherwise whether it may be
        requested (``scales``; an unknown ``n_labels`` is not refused).
        """
        scales = (self.scales if self.listed is None else self.listed) if listing else self.scales
        if scale not in scales or (self.task == "multilabel") != bool(multilabel):
            return False
        if self.n_labels is None:
            return True
        return n_labels == self.n_labels if listing else n_labels in (None, self.n_labels)

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

_EPSTEIN = ("Epstein (1969). A Scoring System for Probability Forecasts of Ranked Categories. "
            "J. Appl. Meteor. 8(6). DOI:10.1175/1520-0450(1969)008<0985:ASSFPF>2.0.CO;2; cumulative "
            "form: Murphy (1971). J. Appl. Meteor. 10(1). "
            "DOI:10.1175/1520-0450(1971)010<0155:ANOTRP>2.0.CO;2")
_LEWIDI23 = ("Leonardelli, Abercrombie, Almanea, Basile, Fornaciari, Plank, Rieser, Uma, Poesio "
             "(2023). SemEval-2023 Task 11: Learning With Disagreements (LeWiDi). SemEval. "
             "DOI:10.18653/v1/2023.semeval-1.314 (the scorer's cross_entropy)")
_LEWIDI25 = ("LeWiDi 2025 (third edition, NLPerspectives at EMNLP 2025): official soft scores, "
             "Evaluation_LeWiDi_2025_Metrics.ipynb in Le-Wi-Di/le-wi-di.github.io")
_EMD = ("Rubner, Tomasi, Guibas (2000). The Earth Mover's Distance as a Metric for Image "
        "Retrieval. IJCV 40(2). DOI:10.1023/A:1026543900054; " + _LEWIDI25)
_MAE = ("Gaudette, Japkowicz (2009). Evaluation Methods for Ordinal Classification. Canadian AI. "
        "DOI:10.1007/978-3-642-01818-3_25 (absolute error on the ordinal scale, here of the means)")
_KUMAR = ("Kumar, Liang, Ma (2019). Verified Uncertainty Calibration. NeurIPS. arXiv:1909.10155 "
          "(the debiased estimator; uncertainty-calibration's unbiased_square_ce)")
_KULL = ("Kull, Perello-Nieto, Kangsepp, Silva Filho, Song, Flach (2019). Beyond temperature "
         "scaling: classwise-calibrated probabilities. NeurIPS. arXiv:1910.12656; " + _GUO)

_ROELOFS = ("Roelofs, Cain, Shlens, Mozer (2022). Mitigating Bias in Calibration Error "
            "Estimation. AISTATS. arXiv:2012.08668")
_BLASIOK = ("Błasiok, Nakkiran (2023). Smooth ECE: Principled Reliability Diagrams via Kernel "
            "Smoothing. arXiv:2309.12236; the relplot package")
_SI = ("Si, Zhao, Chen, Boyd-Graber (2022). Re-Examining Calibration: The Case of Question "
       "Answering. Findings of EMNLP. arXiv:2205.12507")
_ZHANG = ("Zhang, Kailkhura, Han (2020). Mix-n-Match: Ensemble and Compositional Methods for "
          "Uncertainty Calibration in Deep Learning. ICML. arXiv:2003.07329")

_HARD, _SOFT = frozenset({"hard"}), frozenset({"soft"})
_BINS = MappingProxyType({"n_bins": 10})


def _mean(name: str, summary: str, needs: frozenset[str], lower: bool | None, unit: str,
          citation: str, *, headline: bool) -> MetricSpec:
    return MetricSpec(name, summary, needs, lower, unit, citation, _EMPTY, name, ItemMeanState,
                      MappingProxyType({"quantity": name}), headline=headline, interval="normal")


def _binned(name: str, summary: str, needs: frozenset[str], citation: str, *, headline: bool,
            interval: str = "bounds", no_interval: str = "", **state_args: Any) -> MetricSpec:
    return MetricSpec(name, summary, needs, True, "probability", citation, _BINS, None,
                      BinnedState, MappingProxyType(state_args), headline=headline,
                      interval=interval, no_interval=no_interval)


#: Why the MCEs report no interval.
_NO_MCE_INTERVAL = ("the maximum over bins is driven by the emptiest bins; no bootstrap or "
                    "bound statistic covers the population MCE at the usual sizes")


_BINARY = MappingProxyType({"n_bins": 10, "positive": 1})
_NOMINAL = frozenset({"nominal"})
_VALUES = MappingProxyType({"values": None})


def _ordinal(name: str, quantity: str, summary: str, needs: frozenset[str], unit: str,
             citation: str, *, values: bool = False, scales: frozenset[str] = _ORDERED
             ) -> MetricSpec:
    """An order-aware mean; ``scales`` where valid, listed on the ordered scales only."""
    return MetricSpec(name, summary, needs, True, unit, citation, _VALUES if values else _EMPTY,
                      None, OrdinalState, MappingProxyType({"quantity": quantity}), scales=scales,
                      listed=_ORDERED, interval="normal")


_SPECS = (
    _mean("accuracy", "Fraction of items whose argmax (first on ties) is the hard label "
          "(the human majority under the tie policy)", _HARD, False, "rate", _NIE, headline=True),
    _binned("ece", "Top-label expected calibration error against the hard label, equal-width "
            "bins", _HARD, _GUO, headline=True),
    MetricSpec("ece_adaptive", "Top-label ECE against the hard label with equal-mass bins "
               "(weighted quantiles; tied confidences share a bin)", _HARD, True, "probability",
               _NIXON, _BINS, None, AdaptiveBinnedState, headline=False, interval="bounds"),
    _binned("mce", "Maximum calibration error: the largest |confidence - accuracy| over "
            "non-empty equal-width bins", _HARD, _NAEINI, reduce="max", headline=False,
            interval="none", no_interval=_NO_MCE_INTERVAL),
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
          True, "squared probability", _BRIER, headline=False),
    _mean("brier_soft", "Brier score against the human distribution, summed over classes",
          _SOFT, True, "squared probability", _BRIER, headline=False),
    _mean("nll", "Cross-entropy of the model against the human distribution (probabilities "
          "clipped at 1e-15)", _SOFT, True, "nats", _NLL, headline=False),
    _mean("nll_majority", "Negative log-likelihood of the hard label (probabilities clipped at "
          "1e-15)", _HARD, True, "nats", _NLL, headline=False),
    # order-aware metrics (annokit.metrics.ordinal): ordered categories, values 0..k-1 by default
    _ordinal("wasserstein", "emd",
             "Mean Wasserstein-1 (earth mover's) distance between model and human "
             "distributions on the category values", _SOFT, "scale points", _EMD, values=True),
    _ordinal("manhattan", "l1",
             "Mean L1 distance sum_j |p_j - soft_j| (LeWiDi 2025 soft score; "
             "2 x dist_ce, listed on ordered scales)", _SOFT, "probability mass", _LEWIDI25,
             scales=_ALL_SCALES),
    _ordinal("lewidi_ce", "ce_clip_shift",
             "LeWiDi 2023 cross-entropy: -sum soft log(clip(p, 1e-12, 1-1e-12) + "
             "1e-9), natural log, mean over items", _SOFT, "nats", _LEWIDI23, scales=_ALL_SCALES),
    _ordinal("mean_abs_error", "mean_gap",
             "Mean |E_model[value] - E_human[value]|: absolute error of the "
             "predicted mean on the category values", _SOFT, "scale points", _MAE, values=True),
    _ordinal("rps", "cum_sq_hard",
             "Ranked probability score against the hard label: sum over categories of "
             "the squared cumulative differences", _HARD, "squared probability", _EPSTEIN),
    _ordinal("rps_soft", "cum_sq_soft",
             "Ranked probability score against the human distribution's cumulative "
             "distribution", _SOFT, "squared probability", _EPSTEIN),
    # binary: positive-class calibration (annokit.metrics.binary), two labels only
    MetricSpec("ece_binary", "ECE on p(positive) against the positive-class frequency of the "
               "hard label; equal-width bins; positive = label index (default 1)", _HARD, True,
               "probability", _NAEINI, _BINARY, None, BinaryBinnedState, n_labels=2,
               interval="bounds"),
    MetricSpec("mce_binary", "MCE on p(positive): the largest |mean p - positive frequency| over "
               "non-empty equal-width bins", _HARD, True, "probability", _NAEINI, _BINARY, None,
               BinaryBinnedState, MappingProxyType({"reduce": "max"}), n_labels=2,
               interval="none", no_interval=_NO_MCE_INTERVAL),
    # multi-label: per-label Bernoulli rows (annokit.metrics.multilabel), averaged over labels
    MetricSpec("ece_multilabel", "Per-label ECE of p_l against the 0/1 majority per label, "
               "equal-width bins, averaged over labels", _HARD, True, "probability", _KULL, _BINS,
               None, MultilabelBinnedState, scales=_NOMINAL, task="multilabel"),
    MetricSpec("brier_multilabel", "Per-label Brier (p_l - soft_l)^2 against the fraction of "
               "annotators ticking the label, averaged over labels", _SOFT, True, "squared probability",
               _BRIER, _EMPTY, None, MultilabelState, MappingProxyType({"quantity": "squared"}),
               scales=_NOMINAL, task="multilabel"),
    MetricSpec("bce_multilabel", "Per-label binary cross-entropy against the fraction ticking the "
               "label (clipped at 1e-15 like nll), averaged over labels", _SOFT, True, "nats",
               _NLL, _EMPTY, None, MultilabelState, MappingProxyType({"quantity": "log"}),
               scales=_NOMINAL, task="multilabel"),
    # calibration estimators of the ECE literature (annokit.metrics.calibration_estimators,
    # calibration_smooth): asked by name or --metrics all, not listed by default (their
    # intervals are not studied yet)
    MetricSpec("ece_sweep", "Top-label ECE with equal-mass bins, as many as keep the bin "
               "accuracies monotone in confidence", _HARD, True, "probability", _ROELOFS,
               MappingProxyType({"norm": 1}), None, SweepECEState, listed=frozenset()),
    MetricSpec("smooth_ece", "Smooth ECE: the top-label residual kernel-smoothed over the "
               "confidence, bandwidth at its fixed point (relplot smECE)", _HARD, True,
               "probability", _BLASIOK, _EMPTY, None, SmoothECEState, listed=frozenset()),
    MetricSpec("tace", "Thresholded adaptive calibration error: classwise, equal-mass bins "
               "per class over predictions >= threshold", _HARD, True, "probability", _NIXON,
               MappingProxyType({"n_bins": 10, "threshold": 1e-3}), None, TACEState,
               listed=frozenset()),
    MetricSpec("macro_ce", "MacroCE: mean of 1 - confidence over correct and of confidence "
               "over wrong top-label predictions, averaged", _HARD, True, "probability", _SI,
               _EMPTY, None, MacroCEState, listed=frozenset()),
    MetricSpec("kde_ece", "Top-label ECE with the accuracy a ratio of triweight kernel "
               "density estimates (Mix-n-Match rule)", _HARD, True, "probability", _ZHANG,
               _EMPTY, None, KDEECEState, listed=frozenset()),
    # Kumar et al.'s debiased estimator: requested by name, not listed by default
    MetricSpec("ece_debiased", "Debiased squared L2 top-label calibration error against the hard "
               "label, equal-width bins (Kumar et al. 2019): unbiased for sum_b P(b) gap_b^2, can be "
               "negative; sqrt(max(0, .)) is uncertainty-calibration's debias=True value",
               _HARD, True, "squared probability", _KUMAR, _BINS, None, BinnedState,
               MappingProxyType({"reduce": "debiased"}), listed=frozenset()),
)

#: Every registered metric, name -> :class:`MetricSpec`, in output order (read-only).
REGISTRY: Mapping[str, MetricSpec] = MappingProxyType({spec.name: spec for spec in _SPECS})


def close_matches(name: Any) -> list[str]:
    """Registered metric names close to ``name`` (for "did you mean"), best first.

    Examples
    --------
    >>> close_matches("manhatan"), close_matches("ECE")
    (['manhattan'], ['ece', 'ece_adaptive', 'classwise_ece'])
    """
    import difflib

    text = str(name).strip().lower()
    found = [n for n in REGISTRY if text and (n.startswith(text) or text in n.split("_"))]
    found += difflib.get_close_matches(text, list(REGISTRY), n=3, cutoff=0.6)
    return list(dict.fromkeys(found))[:3]


def _spec(name: str) -> MetricSpec:
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        near = close_matches(name)
        hint = f"did you mean {', '.join(near)}? " if near else ""
        raise InvalidValueError(f"unknown metric {name!r}; {hint}registered: "
                                f"{', '.join(REGISTRY)}") from None


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
    update_states([state], probs, soft, hard, weights, allow_empty=False)
    return state.compute()


def _check_data(scale: Any, multilabel: Any) -> None:
    if scale not in SCALES:
        raise InvalidValueError(f"scale must be one of {list(SCALES)}; got {scale!r}")
    if not isinstance(multilabel, (bool, np.bool_)):
        raise InvalidValueError(f"multilabel must be True or False; got {multilabel!r}")


def available(has_soft: bool, has_hard: bool, *, scale: str = "nominal",
              n_labels: int | None = None, multilabel: bool = False,
              listing: bool = True) -> tuple[str, ...]:
    """Names of the registered metrics that apply to the data, in output order.

    Parameters
    ----------
    has_soft, has_hard : bool
        Whether human soft labels / hard labels are available.
    scale : {"nominal", "ordinal", "interval", "ratio"}, default "nominal"
    n_labels : int, optional
        The number of labels; metrics that require a number (the binary ones,
        2) are listed only when it is stated.
    multilabel : bool, default False
        Multi-label data (per-label Bernoulli rows) instead of one label per vote.
    listing : bool, default True
        True: the metrics listed by default on the scale; False: every metric that
        may be requested for it (``annokit evaluate --metrics all``; on nominal
        labels this adds ``manhattan`` and ``lewidi_ce``).

    Raises
    ------
    InvalidValueError
        Unknown scale.

    Examples
    --------
    >>> available(has_soft=False, has_hard=True)[:3]
    ('accuracy', 'ece', 'ece_adaptive')
    >>> available(True, True, scale="ordinal")[-6:]
    ('wasserstein', 'manhattan', 'lewidi_ce', 'mean_abs_error', 'rps', 'rps_soft')
    >>> available(True, True, n_labels=2)[-2:], available(True, True, multilabel=True)
    (('ece_binary', 'mce_binary'), ('ece_multilabel', 'brier_multilabel', 'bce_multilabel'))
    """
    _check_data(scale, multilabel)
    have = {label for label, ok in (("soft", has_soft), ("hard", has_hard)) if ok}
    return tuple(name for name, spec in REGISTRY.items() if spec.needs <= have and spec.applies(
        scale=scale, n_labels=n_labels, multilabel=multilabel, listing=listing))


def check_applicable(names: Any, *, scale: str = "nominal", n_labels: int | None = None,
                     multilabel: bool = False) -> tuple[str, ...]:
    """The requested registry names, refusing any that does not apply to the data.

    Raises
    ------
    InvalidValueError
        An unknown name, or a metric whose scales, task or number of labels
        exclude the data (the message names them).

    Examples
    --------
    >>> check_applicable(["manhattan", "ece"])
    ('manhattan', 'ece')
    >>> check_applicable(["wasserstein"])
    Traceback (most recent call last):
    ...
    annokit.errors.InvalidValueError: metric 'wasserstein' applies to ordinal, interval, ratio
    single-label data; the data are nominal single-label
    """
    _check_data(scale, multilabel)
    out = []
    for name in ([names] if isinstance(names, str) else list(names)):
        spec = _spec(name)
        if not spec.applies(scale=scale, n_labels=n_labels, multilabel=multilabel):
            want = ", ".join(s for s in SCALES if s in spec.scales)
            want += " multi-label data" if spec.task == "multilabel" else " single-label data"
            if spec.n_labels is not None:
                want += f" with {spec.n_labels} labels"
            have = f"{scale} " + ("multi-label" if multilabel else "single-label")
            if n_labels is not None:
                have += f" with {n_labels} labels"
            raise InvalidValueError(f"metric {name!r} applies to {want}; the data are {have}")
        out.append(name)
    return tuple(out)
