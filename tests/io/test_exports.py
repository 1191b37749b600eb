"""Which tool wrote a file (annokit.io.exports): every example loads with `annokit stats FILE`
and no option, its read-as line names the tool, and its counts are the file's own."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from annokit.cli import main
from annokit.io import FORMATS, read_votes, sniff_format
from annokit.io.exports import TOOL_FORMATS

# file, format, tool named in read_as, items, votes (hand counted from the file)
EXAMPLES = [
    ("toloka_assignments.tsv", "toloka", "Toloka results", 4, 9),
    ("prodigy_choice.jsonl", "prodigy", "Prodigy JSONL", 3, 6),
    ("prodigy_binary.jsonl", "prodigy", "Prodigy JSONL", 3, 5),
    ("argilla_records.json", "argilla", "Argilla records (nested)", 3, 6),
    ("argilla_hub.jsonl", "argilla", "Argilla records (flat)", 3, 7),
    ("labelstudio_min.json", "labelstudio", "Label Studio JSON-MIN export", 3, 6),
    ("labelstudio.csv", "labelstudio", "Label Studio CSV export", 3, 6),
]


@pytest.mark.parametrize("name, fmt, tool, n_items, n_votes", EXAMPLES,
                         ids=[e[0] for e in EXAMPLES])
def test_example_is_detected_and_read(name, fmt, tool, n_items, n_votes):
    path = f"docs/examples/{name}"
    assert sniff_format(path) == fmt
    votes = read_votes(path)
    assert (votes.n_items, votes.n_votes) == (n_items, n_votes)
    assert votes.read_info.startswith(f"{name}: {tool}")
    assert read_votes(path, format=fmt).counts().tolist() == votes.counts().tolist()


@pytest.mark.parametrize("name, fmt, tool, n_items, n_votes", EXAMPLES[::3],
                         ids=[e[0] for e in EXAMPLES[::3]])
def test_stats_reads_the_example_with_no_option(name, fmt, tool, n_items, n_votes):
    result = CliRunner().invoke(main, ["stats", f"docs/examples/{name}", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output[result.output.index("{"):])
    assert doc["read_as"].startswith(f"{name}: {tool}")
    assert (doc["n_items"], doc["n_votes"]) == (n_items, n_votes)


def test_every_tool_is_a_format():
    assert set(TOOL_FORMATS) <= set(FORMATS)


def test_a_bad_export_is_one_line_through_the_cli(tmp_path):
    path = tmp_path / "db-out.jsonl"
    path.write_text('{"_input_hash": 1, "label": "A", "answer": "maybe", "_annotator_id": "d-x"}\n')
    result = CliRunner().invoke(main, ["stats", str(path)])
    assert result.exit_code == 1
    assert result.output.strip() == ("Error: line 1 of db-out.jsonl, field answer: 'maybe' is not "
                                     "accept, reject or ignore")


def test_full_labelstudio_export_still_read_as_tasks(tmp_path):
    tasks = [{"id": 1, "data": {"text": "a"}, "annotations": [
        {"completed_by": 7, "result": [{"from_name": "s", "type": "choices",
                                        "value": {"choices": ["pos"]}}]}]}]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(tasks))
    assert read_votes(path).read_info.startswith("export.json: Label Studio export, 1 tasks")
