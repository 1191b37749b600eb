"""What a researcher reads first: the report's plain-language summary and its Dataset section.

Nothing here computes a figure: the sentences and tables are written from the report model (the
engine's results and ``annokit stats``'s document), so they say what the tables say.

* :func:`summary_lines`: a few sentences opening the report: what the headline metrics say about
  each model against the chance and oracle baselines and the human ceiling, and the two caveats
  of the evaluate guide (on data where people disagree chance can beat a good model on ECE, and
  the oracle's ECE is not 0).
* :func:`dataset_tables`: the Dataset section as ``annokit stats`` prints it (the same row
  names: :func:`annokit.quality.dataset_stats.stats_rows`) and one row per label in the labels'
  order.
"""

from __future__ import annotations

from typing import Any

from annokit.core.soft_labels import ENTROPY_UNIT
from annokit.quality.dataset_stats import stats_rows
from annokit.report.model import MetricInfo, Report

__all__ = ["CEILING_NAME", "dataset_tables", "summary_lines"]

#: The name of the reference a model is compared with, everywhere in the report's summary.
CEILING_NAME = "human ceiling (split-half: half of each item's votes against all of them)"

#: Per-label rows of the Dataset section: (stats key, column header).
_LABEL_COLUMNS = (("label_counts", "votes"), ("majority_counts", "items with this majority"),
                  ("old_majority_counts", "items per original label"),
                  ("original_label_counts", "original annotators' votes"))


def _num(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}"


def _beats(info: MetricInfo, a: float | None, b: float | None) -> bool | None:
    """Whether value ``a`` is better than ``b`` for the metric (None: no direction or value)."""
    if a is None or b is None:
        return None
    if info.lower_is_better is None:
        return abs(a) < abs(b)
    return a < b if info.lower_is_better else a > b


def _model_line(report: Report, model: Any, infos: list[MetricInfo]) -> str:
    """One sentence on one model: its headline metrics against chance, oracle and ceiling."""
    chance = report.baselines.get("chance", {})
    ceiling = report.human_ceiling.overall.vs_reference if report.human_ceiling else {}
    worse = [i.name for i in infos if _beats(i, model.metrics[i.name].estimate,
                                             chance.get(i.name)) is False]
    below = [i.name for i in infos if i.name in ceiling and _beats(
        i, model.metrics[i.name].estimate, ceiling.get(i.name)) is False]
    shown = ", ".join(f"{i.name} {_num(model.metrics[i.name].estimate)}" for i in infos)
    text = f"{model.name}: {shown}."
    text += (" Better than chance on every headline metric" if not worse else
             f" Worse than chance on {', '.join(worse)}") + (
        "" if not ceiling else
        f"; short of the {CEILING_NAME.split(' (')[0]} on {', '.join(below)}." if below else
        f"; at or beyond the {CEILING_NAME.split(' (')[0]} on every headline metric it has.")
    return text if text.endswith(".") else text + "."


def summary_lines(report: Report) -> list[str]:
    """The plain-language summary opening the report (module docstring)."""
    infos = [i for i in report.metrics if i.headline] or list(report.metrics)[:4]
    lines = [_model_line(report, m, infos) for m in report.models]
    chance, oracle = report.baselines.get("chance", {}), report.baselines.get("oracle", {})
    if report.human_ceiling is not None:
        ceiling = report.human_ceiling.overall.vs_reference
        lines.append(f"The {CEILING_NAME} is the reference a model should be compared with: "
                     + ", ".join(f"{i.name} {_num(ceiling.get(i.name))}" for i in infos
                                 if i.name in ceiling) + ".")
    if "ece" in oracle:
        ece_info = next((i for i in report.metrics if i.name == "ece"), None)
        beaten = [m.name for m in report.models if ece_info is not None and "ece" in m.metrics
                  and _beats(ece_info, chance.get("ece"), m.metrics["ece"].estimate)]
        lines.append(
            "Caveats: on data where people disagree, chance (the uniform distribution) can beat "
            f"a good model on ECE (here chance {_num(chance.get('ece'))}"
            + (f", better than {', '.join(beaten)}" if beaten else "") + "), and the oracle "
            f"(the human distribution itself) does not have ECE 0 (here {_num(oracle['ece'])}): "
            "ECE compares confidence with agreement with the majority label; the distribution "
            "metrics (JSD, DistCE, SMECE) say how close a model is to the human distribution.")
    return lines


def dataset_tables(report: Report) -> list[dict[str, Any]]:
    """The Dataset section: ``annokit stats``'s rows, and one row per label in label order (the
    keyword arguments of :class:`annokit.report.tables.Table`)."""
    stats = report.dataset
    rows = [[name, value] for name, value in stats_rows(stats)
            if name not in ("votes per label", "majority label counts",
                            "items per original label", "original annotators' votes per label")]
    tables = [dict(id="table-dataset", title="Dataset", header=["statistic", "value"], rows=rows,
                   caption=f"As annokit stats prints it; entropy in {ENTROPY_UNIT} (natural "
                           "log). Per label: the next table.")]
    present = [(key, title) for key, title in _LABEL_COLUMNS if stats.get(key)]
    if present:
        labels = [name for name in report.labels if any(name in stats[k] for k, _ in present)]
        tables.append(dict(
            id="table-dataset-labels", title="Labels", header=["label"] + [t for _, t in present],
            rows=[[name] + [f"{stats[k].get(name, 0):,}" for k, _ in present] for name in labels],
            caption="In the labels' order; majority ties follow the report's tie policy."))
    return tables
