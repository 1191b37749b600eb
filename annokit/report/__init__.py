"""The agreement-binned analysis report: build (pydantic model) and render (JSON/HTML/Markdown).

>>> from annokit.core.votes import Votes
>>> from annokit.report import build_report, dump_json
>>> votes = Votes.from_counts([[9, 1], [5, 5], [2, 8]], labels=["yes", "no"])
>>> report = build_report(votes, {"model": [[0.9, 0.1], [0.5, 0.5], [0.3, 0.7]]},
...                       bins=1, n_boot=0)
>>> round(report.models[0].metrics["accuracy"].estimate, 3)
1.0
>>> dump_json(report).startswith("{")
True
"""

from annokit.report.build import build_report
from annokit.report.inputs import (
    ModelPredictions,
    load_annotator_predictions,
    load_models,
    plan_section,
    subsampling_rows,
)
from annokit.report.model import SCHEMA_VERSION, Report, dump_json, export_schema, report_schema
from annokit.report.write import write_report

__all__ = [
    "SCHEMA_VERSION",
    "ModelPredictions",
    "Report",
    "build_report",
    "dump_json",
    "export_schema",
    "load_annotator_predictions",
    "load_models",
    "report_schema",
    "plan_section",
    "subsampling_rows",
    "write_report",
]
