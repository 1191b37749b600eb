"""The metric registry: every evaluation metric declared once.

:data:`REGISTRY` maps each metric's name (the key in ``annokit evaluate --json``)
to a :class:`MetricSpec`: a one-line summary, the labels it needs, its
direction, unit and citation, its options with defaults, the per-item quantity
whose mean it is (if any), and the state class that computes it
(:mod:`annokit.metrics.states`). The engine, the CLI, the per-item CSV, the
report and the docs read names, units and directions from here.

To add a metric: write its state and its :class:`MetricSpec` in one metric module of
:data:`METRIC_MODULES` (a module-level ``METRICS``; :mod:`annokit.metrics.calibration_smooth`
declares ``smooth_ece`` so), and its tests in that module's test file;
``tests/metrics/test_registry.py`` then checks it for mergeability, invariances, input
rejection and a complete declaration. The metrics below are declared here, beside the
states of several modules. Every name check goes through :func:`resolve_metric_names`.

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

import importlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from annokit.errors import InvalidValueError
from annokit.metrics.calibration_estimators import MacroCEState, SweepECEState
from annokit.metrics.calibration_smooth import KDEECEState
from annokit.metrics.multilabel import MultilabelBinnedState, MultilabelState
from annokit.metrics.ordinal import OrdinalState
from annokit.metrics.spec import EMPTY, INTERVAL_METHODS, SCALES, TASKS, MetricSpec
from annokit.metrics.states import (
    AdaptiveBinnedState,
    BinnedState,
    ItemMeanState,
)
from annokit.metrics.states_ext import BinaryBinnedState, update_states

__all__ = ["INTERVAL_METHODS", "METRIC_MODULES", "REGISTRY", "SCALES", "TASKS", "MetricSpec",
           "available", "check_applicable", "close_matches", "compute", "resolve_metric_names"]

_EMPTY = EMPTY
_ALL_SCALES = frozenset(SCALES)
_ORDERED = frozenset(SCALES[1:])


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

#: The modules that declare metrics beside their states: a module-level ``METRICS`` tuple of
#: :class:`MetricSpec`, placed in output order after the registered metric named by its
#: ``METRICS_AFTER`` (at the end when it has none).
METRIC_MODULES = ("annokit.metrics.calibration_smooth", "annokit.metrics.calibration_tace")


def _collect(specs: tuple[MetricSpec, ...]) -> tuple[MetricSpec, ...]:
    """``specs`` with the metrics of :data:`METRIC_MODULES` in their places; a name declared
    twice, or a ``METRICS_AFTER`` that names no metric, stops the import."""
    out = list(specs)
    for module_name in METRIC_MODULES:
        module = importlib.import_module(module_name)
        after = getattr(module, "METRICS_AFTER", None)
        names = [spec.name for spec in out]
        if after is not None and after not in names:
            raise ImportError(f"{module_name}.METRICS_AFTER names no registered metric: {after!r}")
        at = len(out) if after is None else names.index(after) + 1
        out[at:at] = module.METRICS
    names = [spec.name for spec in out]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ImportError(f"metrics registered twice: {twice}")
    return tuple(out)


#: Every registered metric, name -> :class:`MetricSpec`, in output order (read-only).
REGISTRY: Mapping[str, MetricSpec] = MappingProxyType(
    {spec.name: spec for spec in _collect(_SPECS)})


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


def _unknown(name: Any) -> InvalidValueError:
    """The one message for a name that is not registered (the engine, ``compute`` and the CLI)."""
    near = close_matches(name)
    hint = f"did you mean {', '.join(near)}? " if near else ""
    return InvalidValueError(f"unknown metric {name!r}; {hint}registered: {', '.join(REGISTRY)}")


def _spec(name: str) -> MetricSpec:
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise _unknown(name) from None


def resolve_metric_names(names: Any) -> tuple[str, ...]:
    """Registry names asked for (one name or several), checked: in the order given, each once.

    Whether they apply to the data is :func:`check_applicable`'s question.

    Raises
    ------
    InvalidValueError
        No name, or a name that is not registered (the message names close matches).

    Examples
    --------
    >>> resolve_metric_names(["kl", "ece", "kl"]), resolve_metric_names("ece")
    (('kl', 'ece'), ('ece',))
    """
    wanted = [names] if isinstance(names, str) else list(names)
    if not wanted:
        raise InvalidValueError(f"no metric named; registered: {', '.join(REGISTRY)}")
    for name in wanted:
        _spec(name)
    return tuple(dict.fromkeys(wanted))


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
    for name in resolve_metric_names(names):
        spec = REGISTRY[name]
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
