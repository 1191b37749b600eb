"""Every official file we hold loads with ``annokit stats --votes FILE`` and no other option, and
the counts printed are the file's own. The shared data are read in place."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from annokit.cli import main

from _shared import DATA_ROOT

LEWIDI = sorted(p.relative_to(DATA_ROOT).as_posix() for p in DATA_ROOT.glob("lewidi20*/*/*.json")
                if not p.name.endswith("_annotators_meta.json"))


def _printed(output: str, label: str) -> int:
    m = re.search(rf"^{re.escape(label)}\s+([\d,]+)$", output, re.MULTILINE)
    assert m, output
    return int(m.group(1).replace(",", ""))


@pytest.mark.skipif(not LEWIDI, reason=f"no LeWiDi files under {DATA_ROOT}")
@pytest.mark.parametrize("name", LEWIDI or ["none"])
def test_official_lewidi_file_loads_with_its_own_counts(shared_data, name):
    path = shared_data(*name.split("/"))
    doc = json.loads(path.read_text(encoding="utf-8"))
    result = CliRunner().invoke(main, ["stats", "--votes", str(path)])
    assert result.exit_code == 0, result.output
    assert _printed(result.stdout, "items") == len(doc)
    votes = 0
    for rec in doc.values():
        ann = rec["annotations"]
        votes += (len(ann.split(",")) if isinstance(ann, str)
                  else sum(len(str(v).split(",")) for v in ann.values()))
    multilabel = "ticks (votes)" in result.stdout
    assert _printed(result.stdout, "ticks (votes)" if multilabel else "votes") == votes
    assert "Error" not in result.output


@pytest.mark.parametrize("parts, n_items, n_votes", [
    (("sentence-pair-analysis", "preprocessed-data.jsonl"), 496, 19360),
    (("context-analysis", "preprocessed-context-data.jsonl"), 416, 15278)])
def test_pavlick2019_loads_without_conversion(shared_data, parts, n_items, n_votes):
    path = shared_data("pavlick2019_nli_variation", *parts)
    result = CliRunner().invoke(main, ["stats", "--votes", str(path), "--n-boot", "0"])
    assert result.exit_code == 0, result.output
    assert (_printed(result.stdout, "items"), _printed(result.stdout, "votes")) == (n_items, n_votes)
    assert "annotators                           unknown (counts only)" in result.stdout
    assert "Krippendorff's alpha (interval)" in result.stdout
