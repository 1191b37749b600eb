"""Benchmark ``annokit report`` end to end on ChaosNLI-SNLI with three models (prints figures).

    python benchmarks/bench_report.py [--data DIR] [--repeat 3] [--n-boot 1000]

Measured in one run:

- end to end: the ``annokit report`` command in a fresh Python process (imports,
  reading 1,514 ChaosNLI items and 2 x 2 prediction files, RoBERTa-base and
  BERT-base seed 0 plus RoBERTa-base at T = 2, 1,000 bootstrap resamples,
  split-half ceiling, every figure as SVG, HTML/Markdown/JSON written
  atomically); target: under 15 s on the 2-core machine;
- the same stages in-process (after imports) so the split is visible: reading,
  building the report model, rendering the figures, writing;
- as a reference point in the same run, ``annokit stats`` on the same votes file
  in a fresh process (reading + statistics, no models): the ratio shows what the
  report adds on top of loading the data.

Medians over ``--repeat`` runs. The machine is shared, so the load average is
printed beside the times.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def default_data_dir() -> Path:
    env = os.environ.get("ANNOKIT_TEST_DATA")
    return Path(env) if env else REPO / ".." / "shared" / "data"


def report_args(data: Path, out: Path, n_bootstrap: int) -> list[str]:
    pred = data / "chaosnli_predictions_baan2022"

    def halves(stem: str) -> str:
        return ",".join(str(pred / f"SNLI_{h}_{stem}_0.json") for h in ("dev", "test"))

    return ["report", "--votes", str(data / "chaosnli" / "chaosNLI_snli.jsonl"),
            "--model", f"RoBERTa={halves('roberta-base')}",
            "--model", f"BERT={halves('bert-base-uncased')}",
            "--temperature", "RoBERTa=2", "--pred-labels", "e,c,n",
            "--n-boot", str(n_bootstrap), "--seed", "0", "--quiet", "--out", str(out)]


def _cli(args: list[str]) -> float:
    exe = Path(sys.executable).with_name("annokit")
    cmd = [str(exe), *args] if exe.exists() else [sys.executable, "-c",
                                                    "from annokit.cli import main; main()", *args]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def _stages(data: Path, out: Path, n_bootstrap: int) -> dict[str, float]:
    from annokit.io import read_votes
    from annokit.report import build_report, load_models
    from annokit.report.figures import report_figures
    from annokit.report.write import write_report

    args = report_args(data, out, n_bootstrap)
    models = dict(args[i + 1].split("=", 1) for i, a in enumerate(args) if a == "--model")
    times = {}
    t0 = time.perf_counter()
    votes = read_votes(data / "chaosnli" / "chaosNLI_snli.jsonl")
    loaded = load_models(votes, {name: paths.split(",") for name, paths in models.items()},
                         pred_labels="e,c,n", temperatures=[("RoBERTa", 2.0)])
    votes, preds = loaded.votes, loaded.models
    times["read votes + predictions"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    rep = build_report(votes, preds, n_boot=n_bootstrap, seed=0)
    times["build report model"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    report_figures(rep)
    times["figures (SVG)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    write_report(rep, out)
    times["write (figures + HTML/MD/JSON)"] = time.perf_counter() - t0
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--n-boot", type=int, default=1000)
    args = parser.parse_args(argv)
    data = args.data or default_data_dir()
    if not (data / "chaosnli" / "chaosNLI_snli.jsonl").exists():
        print(f"ChaosNLI data not found under {data}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        out = Path(tmp) / "report"
        e2e = [_cli(report_args(data, out, args.n_boot)) for _ in range(args.repeat)]
        stats = [_cli(["stats", str(data / "chaosnli" / "chaosNLI_snli.jsonl"), "--json"])
                 for _ in range(args.repeat)]
        stages = [_stages(data, Path(tmp) / "inproc", args.n_boot) for _ in range(args.repeat)]
    load = os.getloadavg()[0]
    med = statistics.median(e2e)
    print(f"annokit report, ChaosNLI-SNLI (1,514 items), 3 models, {args.n_boot} bootstrap "
          f"resamples; median of {args.repeat}; load average {load:.2f} on {os.cpu_count()} cores")
    print(f"  end to end (fresh process):  {med:6.2f} s   "
          f"(runs: {', '.join(f'{t:.2f}' for t in e2e)})")
    ref = statistics.median(stats)
    print(f"  annokit stats, same votes:   {ref:6.2f} s   report / stats = {med / ref:.1f}x")
    print("  in-process stages (median):")
    for key in stages[0]:
        print(f"    {key:<32}{statistics.median(s[key] for s in stages):6.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
