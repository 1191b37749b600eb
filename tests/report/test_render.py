"""The rendered report for a reader: escaping of hostile data, the comparison matrix, grouped
dataset statistics, numbered captions, headline figures, the reliability diagram's marks, the
subsampling recommendation, units, and byte-identical figures across runs."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from annokit.core.votes import Votes
from annokit.metrics.registry import REGISTRY
from annokit.report import build_report as build_report_with_population
from annokit.report import subsampling_rows, write_report
from annokit.report.captions import TINY_BIN, figure_texts, headline_metrics
from annokit.report.figures import report_figures
from annokit.report.plots import mpl_text, reliability_diagrams, render
from annokit.report.render_html import render_html
from annokit.report.render_md import md_escape, render_markdown
from annokit.report.tables import dataset_rows, fmt_number, report_tables

#: The votes-target report alone: the population-target figures, which few votes per item
#: add by default and which cost a prior fit per model, are tested in test_population_figures.py.
build_report = functools.partial(build_report_with_population, population="never")

REPO = Path(__file__).resolve().parents[2]

HOSTILE = ["<script>alert(1)</script>", "a|b", "`tick`", "two\nlines", "*_bold_*", "$x^2$",
           "_hidden", "<img src=x onerror=alert(1)>", "&lt;ok&gt;", "[link](http://e.x)"]


def _votes(labels, n=24, seed=0):
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(10, rng.dirichlet(np.ones(len(labels)), n)[0], size=n)
    return Votes.from_counts(counts, labels=labels,
                             item_ids=[f"item {HOSTILE[i % len(HOSTILE)]} {i}" for i in range(n)])


@pytest.fixture(scope="module")
def hostile_report():
    labels = ["<b>x</b>", "y|z", "&lt;ok&gt;"]
    votes = _votes(labels)
    rng = np.random.default_rng(1)
    models = {name: rng.dirichlet(np.ones(3), votes.n_items) for name in HOSTILE[:4]}
    rep = build_report(votes, models, bins=2, n_boot=30, title="<script>t</script> | *title*",
                       subsampling=subsampling_rows(votes, [1, 2, 5], reps=5))
    rep.models[0].sources = ["<evil>|`name`.jsonl"]
    rep.notes.append("note with <i>html</i>\nand a | pipe")
    return rep


def test_md_escape_leaves_no_markup():
    for text in HOSTILE:
        out = md_escape(text)
        assert "<" not in out and ">" not in out and "\n" not in out
        assert not re.search(r"(?<!\\)[|`*_$\[\]]", out), out


def test_markdown_passes_no_raw_html_and_keeps_every_table_row_intact(hostile_report):
    md = render_markdown(hostile_report, figures={"per-bin": "figures/per-bin.svg"})
    assert "<script" not in md and "<img" not in md and "<b>" not in md and "<i>" not in md
    assert "&lt;script&gt;t&lt;/script&gt;" in md
    assert "&amp;lt;ok&amp;gt;" in md  # an entity in the data stays text
    tables = report_tables(hostile_report)
    for t in tables:
        after = md[md.index(f"### {md_escape(t.title)}\n"):]
        start = after.index(f"| {' | '.join(md_escape(h) for h in t.header)} |\n")
        block = after[start:].split("\n\n")[0].splitlines()
        assert len(block) == len(t.rows) + 2, t.id  # no row split by a newline from the data
        for line in block:  # unescaped pipes delimit exactly the header's cells
            assert len(re.findall(r"(?<!\\)\|", line)) == len(t.header) + 1, (t.id, line)


def test_markdown_renders_the_data_as_text():
    markdown = pytest.importorskip("markdown")
    rep_md = "| a |\n|---|\n| " + " | ".join(md_escape(t) for t in HOSTILE[:1]) + " |\n"
    page = markdown.markdown(rep_md + "\n" + md_escape("<img src=x onerror=alert(1)>"),
                             extensions=["tables"])
    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;" in page


def test_html_escapes_everything_from_the_data(hostile_report):
    figs = report_figures(hostile_report)
    page = render_html(hostile_report, figs)
    assert "<script" not in page and "<img" not in page and "<b>x" not in page
    assert "onerror" not in page.replace("onerror=alert(1)&gt;", "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.split("<svg")[0]
    for svg in figs.values():
        assert "<script" not in svg and "<img" not in svg


def test_figures_draw_hostile_names_literally():
    assert mpl_text("$x^2$") == r"\$x^2\$"
    assert mpl_text("_hidden").endswith("_hidden") and not mpl_text("_hidden").startswith("_")
    assert mpl_text("a\nb") == "a b"


def test_comparisons_are_a_matrix_with_a_significance_mark(hostile_report):
    t = {t.id: t for t in report_tables(hostile_report)}["table-comparisons"]
    later = [m.name for m in hostile_report.models[1:]]
    assert t.header == ["metric", "unit"] + later
    assert len(t.rows) == len(hostile_report.metrics)
    cells = {(c.model_a, c.metric): c for c in hostile_report.comparisons}
    for info, row in zip(hostile_report.metrics, t.rows, strict=True):
        for name, cell in zip(later, row[2:], strict=True):
            d = cells[name, info.name].difference
            assert ("*" in cell) == (d.low > 0 or d.high < 0), (info.name, cell, d)
            if "*" in cell and info.lower_is_better is not None:
                better = (d.estimate < 0) == info.lower_is_better
                assert cell.endswith("(better)" if better else "(worse)")


def test_dataset_statistics_are_grouped_by_name_without_dotted_keys(hostile_report):
    rows = dataset_rows(hostile_report.dataset)
    assert [r[0] for r in rows] == [k.replace("_", " ") for k in sorted(hostile_report.dataset)]
    assert not any("." in r[0] for r in rows)
    per_item = dict(rows)["votes per item"]
    assert per_item.startswith("max ") and "; min " in per_item
    kappa = dict(rows)["fleiss kappa"]
    assert re.match(r"-?\d\.\d{4} \[-?\d\.\d{4}, -?\d\.\d{4}\] \(95% interval, ", kappa)


def test_figures_are_numbered_with_captions_in_page_order(hostile_report):
    figs = report_figures(hostile_report)
    texts = figure_texts(hostile_report, figs)
    assert [f.key for f in texts] == list(figs)
    assert [f.number for f in texts] == list(range(1, len(figs) + 1))
    assert all(f.caption for f in texts)
    page = render_html(hostile_report, figs)
    md = render_markdown(hostile_report, figures={k: f"figures/{k}.svg" for k in figs})
    for f in texts:
        assert f"<b>Figure {f.number}. " in page
        assert f"### Figure {f.number}. " in md
    assert "Entropy in nats (natural log)" in page


def test_headline_metrics_come_from_the_registry(hostile_report):
    assert all(isinstance(spec.headline, bool) for spec in REGISTRY.values())
    marked = [n for n, spec in REGISTRY.items() if spec.headline]
    assert 1 <= len(marked) <= 6
    assert [i.name for i in headline_metrics(hostile_report)] == marked
    svg = report_figures(hostile_report)["per-bin"]
    assert svg.count("agreement bin, human entropy [nats]") == len(marked)
    caption = figure_texts(hostile_report, ["per-bin"])[0].caption
    assert all(f"{n} ({REGISTRY[n].unit})" in caption for n in marked)


def test_headline_falls_back_to_the_first_reported_metrics():
    votes = _votes(["a", "b"])
    rest = [n for n, spec in REGISTRY.items() if not spec.headline][:3]
    rep = build_report(votes, {"m": np.full((votes.n_items, 2), 0.5)}, bins=1, n_boot=0,
                       metrics=rest, ceiling=False)
    assert [i.name for i in headline_metrics(rep)] == rest


def test_every_axis_title_has_a_unit(hostile_report, monkeypatch):
    import matplotlib.pyplot as plt

    from annokit.report import plots

    seen = []

    def check(fig, fmt="svg", **_k):
        for ax in fig.axes:
            if ax.get_visible():
                seen.append((ax.get_xlabel(), ax.get_ylabel()))
        plt.close(fig)
        return ""

    monkeypatch.setattr(plots, "render", check)
    report_figures(hostile_report)
    assert len(seen) >= 6 + 2 * len(hostile_report.models)
    for xlabel, ylabel in seen:
        assert re.search(r"\[[^\]]+\]$", xlabel) and re.search(r"\[[^\]]+\]$", ylabel), \
            (xlabel, ylabel)


def test_entropy_is_reported_in_nats_everywhere(hostile_report):
    assert hostile_report.human_entropy.edges[-1] == pytest.approx(np.log(3))
    assert hostile_report.models[0].entropy.edges == hostile_report.human_entropy.edges
    assert hostile_report.binning.entropy_base == pytest.approx(np.e)
    assert "entropy [nats]" in report_figures(hostile_report)["entropy-histograms"]
    assert hostile_report.dataset["entropy"]["unit"] == "nats"


def test_reliability_diagram_marks_empty_and_tiny_bins():
    n = 10
    count = [0, 0, 0, 3, 40, 50, 60, 0, 1, 100]
    conf = [np.nan if c == 0 else 0.05 + 0.1 * i for i, c in enumerate(count)]
    acc = [np.nan if c == 0 else 0.3 for c in count]
    svg = reliability_diagrams({"edges": np.linspace(0, 1, n + 1).tolist(), "count": count,
                                "confidence": conf, "accuracy": acc, "soft_target": acc},
                               title="m")
    assert len(re.findall(r">empty</text>", svg)) == 2 * 4  # two panels, four empty bins
    assert f"fewer than {TINY_BIN} items" in svg
    assert 'id="h' in svg or "<pattern" in svg  # the hatch of the tiny bins
    # opacity grows with the count: the bars' fill-opacity values differ
    assert len(set(re.findall(r"fill-opacity: ?([0-9.]+)", svg))) >= 3


def test_subsampling_section_shows_tolerance_and_recommended_k(hostile_report):
    rec = hostile_report.subsampling_recommendation
    assert rec is not None and rec.epsilon == 0.05
    t = {t.id: t for t in report_tables(hostile_report)}["table-recommendation"]
    rows = dict(t.rows)
    assert rows["tolerance (expected TVD below)"] == "0.05"
    assert rows["recommended k (votes per item)"] == ("not reached" if rec.k is None
                                                      else str(rec.k))
    assert rows["TVD measured against"] == rec.target
    caption = figure_texts(hostile_report, ["subsampling"])[0].caption
    assert "tolerance, expected TVD 0.05" in caption


def test_subsampling_recommendation_given_explicitly():
    votes = _votes(["a", "b"])
    rep = build_report(votes, {"m": np.full((votes.n_items, 2), 0.5)}, bins=1, n_boot=0,
                       ceiling=False,
                       subsampling=[{"k": 1, "tvd_mean": 0.3, "tvd_low": 0.2, "tvd_high": 0.4},
                                    {"k": 4, "tvd_mean": 0.04, "tvd_low": 0.03,
                                     "tvd_high": 0.06}],
                       subsampling_recommendation={"k": 4, "k_low": 4, "k_high": 5,
                                                   "epsilon": 0.05, "source": "observed",
                                                   "target": "full data"})
    svg = report_figures(rep)["subsampling"]
    assert "recommended k = 4" in svg and "interval of k: 4 to 5" in svg
    md = render_markdown(rep)
    assert "| interval of k | 4 to 5 |" in md


_FIGURE_SCRIPT = """
import hashlib, sys
import numpy as np
from annokit.core.votes import Votes
from annokit.report import build_report, write_report
from annokit.report.plots import render, reliability_diagrams

rng = np.random.default_rng(0)
counts = rng.multinomial(8, [0.5, 0.3, 0.2], size=30)
votes = Votes.from_counts(counts, labels=["a", "b", "c"])
probs = rng.dirichlet(np.ones(3), 30)
rep = build_report(votes, {"m": probs, "n": probs[::-1]}, bins=2, n_boot=20, seed=3,
                   population="never",
                   subsampling=[{"k": 1, "tvd_mean": 0.3, "tvd_low": 0.2, "tvd_high": 0.4},
                                {"k": 4, "tvd_mean": 0.1, "tvd_low": 0.05, "tvd_high": 0.2}])
out = write_report(rep, sys.argv[1], png=True)
for p in sorted((out / "figures").iterdir()):
    print(p.name, hashlib.sha256(p.read_bytes()).hexdigest())
rel = rep.models[0].reliability
nan = float("nan")
bins = {"edges": rel.edges, "count": rel.count,
        "confidence": [nan if v is None else v for v in rel.confidence],
        "accuracy": [nan if v is None else v for v in rel.accuracy],
        "soft_target": [nan if v is None else v for v in rel.soft_target]}
for fmt in ("pdf", "svg"):
    data = reliability_diagrams(bins, title="m", fmt=fmt)
    data = data.encode() if isinstance(data, str) else data
    print(fmt, hashlib.sha256(data).hexdigest())
"""


def test_figures_are_byte_identical_across_runs_with_the_same_seed(tmp_path):
    """Two fresh interpreters (different hash seeds) write the same SVG, PNG and PDF bytes."""
    outputs = []
    for run, hash_seed in enumerate(("1", "2")):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed, SOURCE_DATE_EPOCH="")
        env.pop("SOURCE_DATE_EPOCH")
        proc = subprocess.run([sys.executable, "-c", _FIGURE_SCRIPT, str(tmp_path / f"r{run}")],
                              check=False,
                              capture_output=True, text=True, cwd=REPO, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1]
    names = [line.split()[0] for line in outputs[0].splitlines()]
    assert "per-bin.svg" in names and "per-bin.png" in names and "pdf" in names
    svg = (tmp_path / "r0" / "figures" / "per-bin.svg").read_text()
    assert "<dc:date>" not in svg and "Matplotlib v" not in svg


def test_pdf_carries_no_date():
    import matplotlib.pyplot as plt

    pdf = render(plt.figure(), "pdf")
    assert b"CreationDate" not in pdf and b"ModDate" not in pdf


def test_written_markdown_links_every_figure(hostile_report, tmp_path):
    out = write_report(hostile_report, tmp_path / "r")
    md = (out / "report.md").read_text()
    for key in report_figures(hostile_report):
        assert f"(<figures/{key}.svg>)" in md
    digest = hashlib.sha256((out / "report.html").read_bytes()).hexdigest()
    again = write_report(hostile_report, tmp_path / "r")
    assert hashlib.sha256((again / "report.html").read_bytes()).hexdigest() == digest


@pytest.mark.parametrize("value, text", [(-0.0001, "0.000"), (-0.0, "0.000"), (-0.0006, "-0.001"),
                                         (0.0004, "0.000"), (-1.25, "-1.250")])
def test_numbers_that_round_to_zero_have_no_sign(value, text):
    assert fmt_number(value) == text


@pytest.mark.parametrize(("rec", "expected"), [
    ({"k": 55, "k_low": 49, "k_high": 60, "epsilon": 0.05, "source": "extrapolated",
      "target": "population distribution (Dirichlet-multinomial fit)", "kind": "population"},
     " Recommended k = 55 (interval 49 to 60), extrapolated, against the population distribution "
     "(Dirichlet-multinomial fit); not drawn: the curve measures the distance to the votes "
     "collected (0 once k is all of them), a different target, so k is not read off it."),
    ({"k": None, "epsilon": 0.05, "source": "not reached", "target": "full data", "kind": "pool",
      "k_limit": 2, "note": "the pool target is the votes collected"},
     " No k is recommended: the pool target is the votes collected."),
])
def test_subsampling_caption_does_not_contradict_the_drawn_curve(rec, expected):
    """The curve reaches 0 at all votes; a population k is not 'beyond' it."""
    votes = _votes(["a", "b"])
    rep = build_report(votes, {"m": np.full((votes.n_items, 2), 0.5)}, bins=1, n_boot=0,
                       ceiling=False,
                       subsampling=[{"k": 1, "tvd_mean": 0.3, "tvd_low": 0.2, "tvd_high": 0.4},
                                    {"k": 4, "tvd_mean": 0.0, "tvd_low": 0.0, "tvd_high": 0.0}],
                       subsampling_recommendation=rec)
    caption = figure_texts(rep, ["subsampling"])[0].caption
    assert caption.endswith(" Dashed: the tolerance, expected TVD 0.05." + expected)
    assert "beyond the observed curve" not in caption
