"""Benchmark the first call against a warm one (prints figures; not a test).

    python benchmarks/bench_cold_start.py [--repeat 3]

Issue 22 item 4: a first ``annokit evaluate`` on ``docs/examples`` and a first
``annokit demo`` in a fresh environment (an empty ``NUMBA_CACHE_DIR``) each take at
most 4x the same command run again. For each command and each of ``--repeat``
rounds: a new empty numba cache directory, one cold run (compiles the kernels the
command needs and writes them to the cache), then one warm run (loads them). Prints
wall and CPU (user + sys of the child) seconds, their medians over the rounds and the
cold / warm ratios, and the load average before and after (the machine may be shared:
wall times under load are noisy, CPU times less so).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "docs", "examples")


def _commands(out: str) -> dict[str, list[str]]:
    annokit = [sys.executable, "-m", "annokit.cli"]
    return {
        "evaluate": [*annokit, "evaluate", "--votes", os.path.join(EXAMPLES, "votes_long.csv"),
                     "--predictions", os.path.join(EXAMPLES, "predictions.jsonl"),
                     "--pred-labels", "cat,dog,bird"],
        "demo": [*annokit, "demo", "--out", out],
    }


def _run(cmd: list[str], cache: str) -> tuple[float, float]:
    """Wall and CPU seconds (user + sys of the child) of one run of ``cmd``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": ROOT}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="rounds of (cold, warm) per command")
    args = ap.parse_args(argv)
    print(f"annokit cold-start benchmark: repeat={args.repeat} cpus={os.cpu_count()} "
          f"load average before={os.getloadavg()[0]:.2f}; annokit from {ROOT}")
    print(f"{'command':10s} {'cold wall':>10s} {'warm wall':>10s} {'ratio':>6s} "
          f"{'cold CPU':>9s} {'warm CPU':>9s} {'ratio':>6s}")
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for name, cmd in _commands(os.path.join(tmp, "demo-report")).items():
            cold, warm = [], []
            for r in range(args.repeat):
                cache = tempfile.mkdtemp(dir=tmp, prefix=f"numba-{name}-{r}-")
                cold.append(_run(cmd, cache))
                warm.append(_run(cmd, cache))
            cw, ww = (statistics.median(x[0] for x in runs) for runs in (cold, warm))
            cc, wc = (statistics.median(x[1] for x in runs) for runs in (cold, warm))
            worst = max(worst, cw / ww)
            print(f"{name:10s} {cw:10.2f} {ww:10.2f} {cw / ww:6.2f} {cc:9.2f} {wc:9.2f} "
                  f"{cc / wc:6.2f}")
    print(f"medians of {args.repeat} rounds; target: cold / warm wall <= 4 (worst here "
          f"{worst:.2f}); load average after={os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus")
    return 0


if __name__ == "__main__":
    sys.exit(main())
