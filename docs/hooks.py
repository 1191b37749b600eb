"""MkDocs hooks: pages generated at build time from the code and the repository.

* ``<!-- annokit:metrics -->`` in a page becomes the table of every metric in
  :data:`annokit.metrics.registry.REGISTRY` (no metric name is typed in the docs).
* ``<!-- annokit:datasets -->`` becomes the list of dataset cards.
* ``data_cards/*.md`` become ``datasets/<name>.md`` and ``ARCHITECTURE.md`` becomes
  ``architecture.md``: included as they are in the repository, not copied.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
CARDS = ROOT / "data_cards"
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", flags=re.DOTALL)


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _direction(lower_is_better: bool | None) -> str:
    if lower_is_better is None:
        return "signed, ideal 0"
    return "lower is better" if lower_is_better else "higher is better"


def metric_table() -> str:
    """The metric reference as a Markdown table, one row per registered metric."""
    from annokit.metrics.registry import REGISTRY

    rows = ["| metric | what it measures | needs | unit | direction | options | citation |",
            "|---|---|---|---|---|---|---|"]
    for spec in REGISTRY.values():
        needs = ", ".join("human distribution" if n == "soft" else "majority label"
                          for n in sorted(spec.needs))
        options = ", ".join(f"`{k}={v!r}`" for k, v in spec.options.items()) or "none"
        mean_of = "" if spec.per_item is None else " (mean of a per-item value)"
        rows.append(f"| `{spec.name}` | {_cell(spec.summary)}{mean_of} | {needs} | "
                    f"{_cell(spec.unit)} | {_direction(spec.lower_is_better)} | {options} | "
                    f"{_cell(spec.citation)} |")
    return "\n".join(rows) + "\n"


def _card_title(text: str, fallback: str) -> str:
    match = re.search(r"^# (.+)$", text, flags=re.MULTILINE)
    return match.group(1).strip() if match else fallback


def dataset_list() -> str:
    lines = []
    for card in sorted(CARDS.glob("*.md")):
        title = _card_title(card.read_text(encoding="utf-8"), card.stem)
        lines.append(f"- [{title}]({card.stem}.md) (`data_cards/{card.name}`)")
    return "\n".join(lines) + "\n"


def on_files(files, config):
    for card in sorted(CARDS.glob("*.md")):
        text = _FRONT_MATTER.sub("", card.read_text(encoding="utf-8"), count=1)
        files.append(File.generated(config, f"datasets/{card.stem}.md", content=text))
    files.append(File.generated(config, "architecture.md",
                                content=(ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")))
    return files


def on_page_markdown(markdown, page, config, files):
    if "<!-- annokit:metrics -->" in markdown:
        markdown = markdown.replace("<!-- annokit:metrics -->", metric_table())
    if "<!-- annokit:datasets -->" in markdown:
        markdown = markdown.replace("<!-- annokit:datasets -->", dataset_list())
    return markdown
