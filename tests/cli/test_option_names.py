"""Errors a command-line user sees name real options: an error names an option by its key
(``annokit.errors.Option``), which the command line spells as its flag; a message written out
by hand names the CLI option first and the Python argument only after "Python:"."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from annokit.cli import main

PACKAGE = Path(__file__).resolve().parents[2] / "annokit"
#: ``name=`` inside a message, not part of a longer word or option (``--id-field=``).
ARGUMENT = re.compile(r"(?<![\w\-.'\"])([a-z_]{2,})=(?!=)")
#: Messages of functions only Python reaches (no command calls them with these arguments).
PYTHON_ONLY = {
    ("io/hf_responses.py", "value_field="),  # from_hf_responses: Hugging Face datasets in Python
    ("io/registry.py", "download="), ("io/registry.py", "path="),  # load_dataset(download=False)
    ("io/synthetic.py", "n_annotators="),  # the generator's own parameters
    ("io/frames.py", "format="), ("io/frames.py", "columns="),  # a DataFrame given to read_votes
}


def _text(node) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join("{}" if isinstance(v, ast.FormattedValue) else _text(v) for v in node.values)
    if isinstance(node, ast.BinOp):
        return _text(node.left) + _text(node.right)
    return ""


def test_io_and_cli_messages_name_python_arguments_only_after_python():
    offenders = []
    for folder in ("io", "cli"):
        for path in sorted((PACKAGE / folder).glob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
                        and node.exc.args):
                    continue
                message = _text(node.exc.args[0])
                for m in ARGUMENT.finditer(message):
                    where = (f"{folder}/{path.name}", m.group())
                    if "Python:" not in message[:m.start()] and where not in PYTHON_ONLY:
                        offenders.append(f"{where[0]}:{node.lineno}: {m.group()} in {message!r}")
    assert offenders == []


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_ambiguous_item_column(tmp_path):
    f = tmp_path / "v.csv"
    f.write_text("task,id,annotator,label\nt,1,a,x\nt,2,a,y\n")
    result = run("stats", f)
    assert result.exit_code == 1 and result.output == (
        "Error: v.csv: columns ['task', 'id'] could each be the item column; name one with "
        "--item-col (Python: columns={'item': ...})\n")


def test_label_studio_with_two_controls(tmp_path):
    def ann(user, control):
        return {"completed_by": user, "result": [{"from_name": control, "to_name": "text",
                                                  "type": "choices", "value": {"choices": ["x"]}}]}
    f = tmp_path / "export.json"
    f.write_text(json.dumps([{"id": 1, "data": {"text": "t"},
                              "annotations": [ann(1, "sentiment"), ann(2, "topic")]}]))
    result = run("stats", f, "--format", "labelstudio")
    assert result.exit_code == 1 and result.output == (
        "Error: export.json: answers from several controls ['sentiment', 'topic']; say which "
        "holds the label with --label-col (Python: from_name=)\n")


def test_mturk_with_two_answer_columns(tmp_path):
    f = tmp_path / "batch.csv"
    f.write_text("HITId,WorkerId,AssignmentStatus,Input.text,Answer.a,Answer.b\n"
                 "H1,w1,Approved,t,x,y\n")
    result = run("stats", f)
    assert result.exit_code == 1 and result.output == (
        "Error: batch.csv: 2 answer columns ['a', 'b']; say which holds the label "
        "with --label-col (Python: label=)\n")


def test_lewidi_folder_and_unannotated_items(tmp_path):
    item = {"annotators": "Ann1,Ann2", "annotations": "1,0", "soft_label": {"0": 0.5, "1": 0.5},
            "hard_label": "0"}
    (tmp_path / "Toy_dev.json").write_text(json.dumps({"1": item}))
    result = run("stats", tmp_path, "--format", "lewidi")
    assert result.exit_code == 1 and result.output == (
        f"Error: {tmp_path} is a folder (1 LeWiDi split file(s): ['Toy_dev.json']); give the path "
        "of one split file (Python: or split='train', 'dev' or 'test')\n")
    (tmp_path / "Toy_test.json").write_text(json.dumps({"1": item, "2": {"annotators": "Ann1"}}))
    result = run("stats", tmp_path / "Toy_test.json")
    assert result.exit_code == 1 and result.output == (
        "Error: Toy_test.json: 1 item(s) have no annotations, e.g. ['2']; give a split file with "
        "annotations (Python: unannotated='skip' leaves these items out, counted)\n")


@pytest.mark.parametrize("command", [["annotators"], ["filter", "--method", "agreement", "--out",
                                                     "kept.csv", "--audit", "audit.json"]])
def test_label_lists_without_annotators_refuse_per_annotator_work(tmp_path, command):
    f = tmp_path / "graded.jsonl"
    f.write_text('{"id": "a", "labels": [50, -50, 49.9999]}\n{"id": "b", "labels": [1, 2]}\n')
    ok = run("stats", f, "--n-boot", "0")
    assert ok.exit_code == 0 and "annotators unknown (no ids in the file)" in ok.output
    args = [tmp_path / a if a.endswith((".csv", ".json")) else a for a in command]
    result = run(args[0], f, *args[1:])
    assert result.exit_code == 1
    assert result.output.startswith("Error: ") and "needs annotator ids, but graded.jsonl has none" \
        in result.output
