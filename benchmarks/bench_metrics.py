"""Benchmark the calibration metrics on large inputs (prints figures; not a test).

    python benchmarks/bench_metrics.py [--n 10000000] [--k 3] [--repeat 5] [--peers]

Measured in one run on the same arrays (probs, targets float64 (n, k); labels int64):

- floor: one ``numpy.sum`` pass over probs and targets (the memory-bandwidth floor);
- the whole suite (:func:`annokit.metrics.human.calibration_summary`: accuracy, ECE,
  MCE, classwise ECE, SMECE top-label and classwise, RankCS both ways, EntCE, DistCE,
  JS distance, KL, Brier both ways, NLL both ways) including input validation;
- ECE alone (fused numba path) and the plain-numpy reference path;
- torchmetrics ``MulticlassCalibrationError`` and netcal ``ECE`` when importable
  (they need torch: run the script from a separate environment that has them);
- peak memory of the suite above the inputs (tracemalloc, numpy allocations)
  and the process peak RSS, beside the input bytes.

Medians over ``--repeat`` runs after one warm-up (which also triggers / loads
the numba compilation cache).
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import sys
import time
import tracemalloc

import numpy as np

CPU_TIMES: dict[int, float] = {}


def _median_time(fn, repeat: int) -> float:
    """Median wall time; the median CPU time (all threads) is kept in CPU_TIMES[id(fn)]."""
    fn()  # warm-up (JIT cache load, page faults)
    times, cpu = [], []
    for _ in range(repeat):
        gc.collect()
        c0 = time.process_time()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    CPU_TIMES[id(fn)] = statistics.median(cpu)
    return statistics.median(times)


def _make(n: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, k)) * 2.0
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    counts = rng.multinomial(50, np.full(k, 1.0 / k), size=n).astype(np.float64)
    targets = counts / counts.sum(axis=1, keepdims=True)
    labels = counts.argmax(axis=1).astype(np.int64)
    return probs, labels, targets


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--n-bins", type=int, default=10)
    ap.add_argument("--no-numpy-reference", action="store_true",
                    help="skip timing the slower plain-numpy reference path")
    args = ap.parse_args(argv)

    from annokit.metrics import _binning, _fast
    from annokit.metrics.calibration import expected_calibration_error
    from annokit.metrics.human import _summary_numpy, calibration_summary

    n, k, nb = args.n, args.k, args.n_bins
    print(f"annokit metrics benchmark: n={n:,} k={k} n_bins={nb} repeat={args.repeat} "
          f"numba={'yes' if _fast.HAVE_NUMBA else 'no'} cpus={os.cpu_count()} "
          f"load average before={os.getloadavg()[0]:.2f}")
    probs, labels, targets = _make(n, k)
    input_bytes = probs.nbytes + labels.nbytes + targets.nbytes
    print(f"input bytes: {input_bytes / 1e6:.1f} MB (probs {probs.nbytes / 1e6:.0f}, "
          f"targets {targets.nbytes / 1e6:.0f}, labels {labels.nbytes / 1e6:.0f})")

    rows = []
    floor_fn = lambda: (np.sum(probs), np.sum(targets))
    floor = _median_time(floor_fn, args.repeat)
    rows.append(("floor: numpy.sum over probs + targets", floor))
    suite_fn = lambda: calibration_summary(probs, labels, targets, n_bins=nb)
    suite = _median_time(suite_fn, args.repeat)
    rows.append(("suite: calibration_summary (all metrics)", suite))
    ece = _median_time(lambda: expected_calibration_error(probs, labels, n_bins=nb), args.repeat)
    rows.append(("ECE (annokit, fused)", ece))
    floor_cpu, suite_cpu = CPU_TIMES[id(floor_fn)], CPU_TIMES[id(suite_fn)]
    if not args.no_numpy_reference:
        edges = _binning.uniform_edges(nb)

        def ece_numpy():
            p, y, _ = _binning.validate_inputs(probs, labels)
            return _binning.compute_top(_binning.update_numpy(p, y, None, edges, classwise=False))

        rows.append(("ECE (annokit, plain-numpy reference)",
                     _median_time(ece_numpy, max(1, args.repeat // 2))))
        rows.append(("suite (plain-numpy reference)",
                     _median_time(lambda: _summary_numpy(probs, labels, targets, nb),
                                  max(1, args.repeat // 2))))

    peers: dict[str, float] = {}
    try:
        import torch
        from torchmetrics.classification import MulticlassCalibrationError

        tp, tl = torch.from_numpy(probs), torch.from_numpy(labels)
        metric = MulticlassCalibrationError(num_classes=k, n_bins=nb, norm="l1")

        def tm():
            metric.reset()
            metric.update(tp, tl)
            return float(metric.compute())

        peers["torchmetrics MulticlassCalibrationError"] = _median_time(tm, args.repeat)
        print(f"torch threads: {torch.get_num_threads()}; torchmetrics ECE = {tm():.12f}, "
              f"annokit ECE = {expected_calibration_error(probs, labels, n_bins=nb):.12f}")
    except ImportError as exc:
        print(f"torchmetrics: skipped ({exc})")
    try:
        from netcal.metrics import ECE as NetcalECE

        nc = NetcalECE(bins=nb)
        peers["netcal ECE"] = _median_time(lambda: nc.measure(probs, labels), args.repeat)
    except ImportError as exc:
        print(f"netcal: skipped ({exc})")
    except Exception as exc:  # noqa: BLE001 - a peer failing must not stop the benchmark
        print(f"netcal: failed ({type(exc).__name__}: {exc})")
    for name, t in peers.items():
        rows.append((name, t))

    print()
    print(f"{'what':48s} {'median s':>10s} {'x floor':>9s}")
    for name, t in rows:
        print(f"{name:48s} {t:10.4f} {t / floor:9.2f}")
    print()
    print(f"suite / floor = {suite / floor:.2f} wall (target <= 15); "
          f"CPU time {suite_cpu:.3f} s / {floor_cpu:.3f} s = {suite_cpu / floor_cpu:.2f}; "
          f"load average after={os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus")
    for name, t in peers.items():
        print(f"{name} / annokit ECE = {t / ece:.1f}x (target >= 5)")

    if k == 3 and _fast.HAVE_NUMBA:
        # Where the suite's time goes: the k = 3 kernels on one thread over all rows.
        flat_p, flat_t = probs.reshape(-1), targets.reshape(-1)
        edges, log_eps = _binning.uniform_edges(nb), float(np.log(_fast.EPS))

        def sums_pass():
            _fast._summary_sums3(flat_p, flat_t, labels, log_eps, _fast.ATOL,
                                 np.zeros(len(_fast.SUMMARY_SUMS) + 1))

        idx = np.empty(4 * n, dtype=np.int64)

        def binidx_pass():
            _fast._summary_binidx3(flat_p, 1.0 / nb, nb, idx)

        def bins_pass():
            top, cw = _fast._accumulators(nb, k)
            _fast._summary_bins3(flat_p, flat_t, labels, idx, top, cw)

        parts = [("checks + per-item sums (vectorised, 9 logs/row)", sums_pass),
                 ("bin indices (vectorised, 4 bins/row)", binidx_pass),
                 ("binned sums (scalar scatter, 16 adds/row)", bins_pass),
                 ("both, chunked as in the suite",
                  lambda: _fast._summary_part(probs, targets, labels, edges, k, nb, log_eps))]
        print(f"single-thread breakdown (ns per row; the suite splits the rows into "
              f"{_fast.N_PARTS} parts on threads):")
        for name, fn in parts:
            print(f"  {name:52s} {_median_time(fn, args.repeat) / n * 1e9:7.1f}")

    # Peak memory of the suite: numpy allocations above the inputs, and process RSS.
    gc.collect()
    tracemalloc.start()
    calibration_summary(probs, labels, targets, n_bins=nb)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    print(f"suite peak memory = inputs + extra allocations (tracemalloc peak {peak / 1e6:.1f} MB)"
          f" = {(input_bytes + peak) / input_bytes:.3f} x inputs (target <= 3)")
    print(f"process peak RSS over the whole run (data generation, numpy reference, peers): "
          f"{rss / 1e6:.0f} MB = {rss / input_bytes:.2f} x inputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
