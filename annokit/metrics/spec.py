"""What the registry holds for one metric: :class:`MetricSpec`, and the scales and tasks it names.

A module that defines a metric declares its :class:`MetricSpec` beside its state
(``METRICS``; :mod:`annokit.metrics.registry` collects them), so this module sits
below every metric module and imports none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from annokit.errors import InvalidValueError

if TYPE_CHECKING:
    from annokit.metrics.states import MetricState

__all__ = ["EMPTY", "INTERVAL_METHODS", "SCALES", "TASKS", "MetricSpec"]

#: No options, no state arguments.
EMPTY: Mapping[str, Any] = MappingProxyType({})
_EMPTY = EMPTY

#: Label scales, from unordered to numbers with a true zero.
SCALES = ("nominal", "ordinal", "interval", "ratio")
#: ``"single"``: one label per vote; ``"multilabel"``: any subset of labels per vote.
TASKS = ("single", "multilabel")
_ALL_SCALES = frozenset(SCALES)
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
