"""Benchmark the metric suite on large inputs (prints figures; not a test).

    python benchmarks/bench_metrics.py [--n 10000000] [--k 3] [--repeat 5] [--replicates 0]
        [--sections suite,alone,breakdown] [--metrics jsd,kl]

Measured in one run on the same arrays (probs, soft float64 (n, k); hard int64):

- floor: one ``numpy.sum`` pass over the suite's inputs, probs, soft and hard (the
  memory-bandwidth floor: one numpy.sum pass over the inputs); the ratios to the stricter
  floor over probs and soft only are printed too;
- suite: every registered metric whose state has a constant size (all but
  ``ece_adaptive``, which keeps every item) through the state protocol:
  ``states.update_many`` (input checks included) and ``compute``; today's
  ``evaluate`` metrics on soft and hard labels;
- the fused kernel pass alone (``kernels.batch_sums``: every per-item quantity,
  top-label and classwise bins), and ECE alone (``update_many`` on one state);
- with ``--replicates R``: the suite with ``(R, n)`` Poisson bootstrap weights;
- torchmetrics ``MulticlassCalibrationError`` (run in ``--peer-python``, default
  /work/.venv-tm, on the same arrays saved as .npy, when torch does not import
  here) and netcal ``ECE`` when importable; ratios of the peers to annokit's ECE;
- each registered single-label metric alone (its state's update and compute) against the
  floor over probs + soft, measured once before the section (``x floor``) and timed in
  alternation with the metric (``x near``: the same ratio under the same load), and
  adaptive ECE (which sorts the confidences) against one ``numpy.sort`` of the
  confidences too; the calibration estimators asked for by name only
  (``available(..., listing=False)``) are in the list;
- a single-thread breakdown of the kernels (ns per row);
- the binary (two labels) and multi-label metrics, each alone and all of a kind together
  (one fused pass per kind), without and with (4, n) weights, on up to 2e6 rows
  (``--only-binary-multilabel`` runs only these);
- peak memory of the suite: process RSS above what it was before the suite
  (numba's and numpy's allocations), beside the input bytes.

Medians over ``--repeat`` runs after one warm-up (which also loads or triggers
the numba compilation). The machine may be shared: ratios to the floor are
measured in the same run; the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import sys
import time

import numpy as np

# time the annokit of this checkout (the script's folder, not the cwd, is on sys.path)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


_PEER = """
import json, statistics, sys, time
import numpy as np, torch, torchmetrics
from torchmetrics.classification import MulticlassCalibrationError
probs, hard = np.load(sys.argv[1]), np.load(sys.argv[2])
k, nb, repeat = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
tp, tl = torch.from_numpy(probs), torch.from_numpy(hard)
metric = MulticlassCalibrationError(num_classes=k, n_bins=nb, norm="l1")
def tm():
    metric.reset()
    metric.update(tp, tl)
    return float(metric.compute())
tm()
wall, cpu = [], []
for _ in range(repeat):
    c0, t0 = time.process_time(), time.perf_counter()
    value = tm()
    wall.append(time.perf_counter() - t0)
    cpu.append(time.process_time() - c0)
print(json.dumps({"wall": statistics.median(wall), "cpu": statistics.median(cpu), "ece": value,
                  "threads": torch.get_num_threads(), "torch": torch.__version__,
                  "version": torchmetrics.__version__}))
"""


def _peer_in(python: str, probs, hard, k: int, nb: int, repeat: int) -> dict:
    """torchmetrics' ECE timed in another interpreter on the same arrays (saved as .npy)."""
    import json
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        pp, hp = os.path.join(tmp, "probs.npy"), os.path.join(tmp, "hard.npy")
        np.save(pp, probs)
        np.save(hp, hard)
        out = subprocess.run([python, "-c", _PEER, pp, hp, str(k), str(nb), str(repeat)],
                             capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median_time(fn, repeat: int) -> tuple[float, float]:
    """Median wall and CPU (all threads) time of ``fn()`` after one warm-up call."""
    fn()
    wall, cpu = [], []
    for _ in range(repeat):
        gc.collect()
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def _make(n: int, k: int, seed: int = 0, chunk: int = 1_000_000):
    """Model rows (softmax of normal logits), human rows from 50 votes, their majority.

    Written chunk by chunk into the final arrays, so that the process peak
    before the suite is about the inputs.
    """
    rng = np.random.default_rng(seed)
    probs, soft = np.empty((n, k)), np.empty((n, k))
    hard = np.empty(n, dtype=np.int64)
    for a in range(0, n, chunk):
        b = min(a + chunk, n)
        logits = rng.normal(size=(b - a, k)) * 2.0
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs[a:b] = e / e.sum(axis=1, keepdims=True)
        counts = rng.multinomial(50, np.full(k, 1.0 / k), size=b - a)
        soft[a:b] = counts / 50.0
        hard[a:b] = counts.argmax(axis=1)
    return probs, soft, hard


def _status(field: str) -> int | None:
    """``VmRSS`` (now) or ``VmHWM`` (peak) of this process in bytes, from /proc (Linux)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    """Reset the peak RSS to the current RSS (Linux >= 4.0: ``5 > /proc/self/clear_refs``)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _breakdown(probs, soft, hard, nb: int, repeat: int) -> list[tuple[str, float]]:
    """Single-thread ns per row of the fused pass, by what it is asked for (each kind of call
    is its own compiled kernel, :func:`annokit.metrics.kernels._kernel`)."""
    from annokit.metrics import kernels
    from annokit.metrics.sums import ITEM_QUANTITIES

    n = probs.shape[0]
    hard_q = ("accuracy", "brier", "nll_majority")
    calls = [
        ("checks only (probs, soft, hard)", {"soft": soft}),
        ("hard-label values (accuracy, brier, nll_majority)", {"quantities": hard_q}),
        ("checks + every per-item value (k=3: SIMD, 12 logs/row)",
         {"soft": soft, "quantities": ITEM_QUANTITIES}),
        ("NLL alone (its group: 3 logs/row)", {"soft": soft, "quantities": ("nll",)}),
        ("KL alone (its group, with the entropies: 6 logs/row)",
         {"soft": soft, "quantities": ("kl",)}),
        ("JSD alone (6 logs/row)", {"soft": soft, "quantities": ("jsd",)}),
        ("every value + top-label and classwise bins",
         {"soft": soft, "quantities": ITEM_QUANTITIES, "n_bins": nb, "classwise": True}),
        ("ECE alone: checks, argmax, bin in one loop + scatter", {"n_bins": nb}),
        ("classwise ECE alone: bins of every probability + scatter",
         {"n_bins": nb, "classwise": True}),
    ]
    threads, kernels.MAX_THREADS = kernels.MAX_THREADS, 1
    try:
        out = []
        for name, kw in calls:
            soft_in = kw.pop("soft", None)
            def fn(s=soft_in, kw=kw):
                return kernels.batch_sums(probs, s, hard, None, **kw)
            fn()
            out.append((name, _median_time(fn, repeat)[1] / n * 1e9))
        return out
    finally:
        kernels.MAX_THREADS = threads


def _interleaved(fn, floor_fn, repeat: int) -> tuple[float, float]:
    """Median wall time of ``fn()`` and of ``floor_fn()``, run in alternation after one
    warm-up each, so that both see the same load of a shared machine."""
    fn()
    floor_fn()
    wall, floor = [], []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        floor_fn()
        t1 = time.perf_counter()
        fn()
        wall.append(time.perf_counter() - t1)
        floor.append(t1 - t0)
    return statistics.median(wall), statistics.median(floor)


def _each_alone(probs, soft, hard, nb: int, repeat: int, strict, only: list[str]) -> None:
    """Each registered single-label metric alone (its state's update, input checks included,
    and compute) against the floor over probs + soft; adaptive ECE against one numpy.sort
    of the confidences (the targets: within 10x the floor, adaptive ECE within 2x the sort;
    ECE-sweep and TACE within 10x the floor: they rank by bucket counts, not by a sort).

    ``x floor``: against the floor measured once before the section; ``x near``: against
    the floor timed in alternation with the metric (:func:`_interleaved`), the same
    ratio under the same load when other processes share the CPUs.
    """
    from annokit.metrics.registry import REGISTRY, available

    # the default lists, then the metrics asked for by name only (the calibration estimators)
    names = only or list(dict.fromkeys(available(True, True)
                                       + available(True, True, scale="ordinal")
                                       + available(True, True, listing=False)))
    sorting = ("ece_adaptive",)  # it sorts the confidences: x sort is its target
    conf = probs.max(axis=1)
    sort_t = _median_time(lambda: np.sort(conf), repeat)
    print()
    print(f"each registered metric alone (update + compute; floor over probs + soft "
          f"{strict[0]:.4f} s; one numpy.sort of the confidences {sort_t[0]:.4f} s):")
    print(f"  {'metric':22s} {'wall s':>8s} {'x floor':>8s} {'x near':>8s} {'x sort':>8s}  load")
    worst, worst_near = ("", 0.0), ("", 0.0)
    for name in names:
        spec = REGISTRY[name]
        opts = {"n_bins": nb} if "n_bins" in spec.options else {}

        def run(spec=spec, opts=opts):
            st = spec.state(**opts)
            st.update(probs, soft if "soft" in st.needs else None,
                      hard if "hard" in st.needs else None)
            return st.compute()

        wall, near = _interleaved(run, lambda: (np.sum(probs), np.sum(soft)), repeat)
        ratio = wall / strict[0]
        if name not in sorting:
            worst = max(worst, (name, ratio), key=lambda x: x[1])
            worst_near = max(worst_near, (name, wall / near), key=lambda x: x[1])
        print(f"  {name:22s} {wall:8.4f} {ratio:8.2f} {wall / near:8.2f} {wall / sort_t[0]:8.2f}"
              f"  {os.getloadavg()[0]:.2f}")
    print(f"  slowest (the sorting {', '.join(sorting)} aside): {worst[0]} at {worst[1]:.2f} "
          f"x the floor over "
          f"probs + soft (target <= 10); {worst_near[0]} at {worst_near[1]:.2f} x near; "
          f"load average {os.getloadavg()[0]:.2f}")


def _suite(probs, soft, hard, args, input_bytes: int, strict) -> None:
    """The suite through update_many, the kernel pass alone, ECE alone and the peers' ECE,
    against the floor over probs, soft and hard."""
    from annokit.metrics import kernels
    from annokit.metrics.registry import REGISTRY, available
    from annokit.metrics.states import AdaptiveBinnedState, update_many
    from annokit.metrics.sums import ITEM_QUANTITIES

    n, k, nb = probs.shape[0], probs.shape[1], args.n_bins
    # the metrics of single-label, nominal data (the ordinal, binary and multi-label ones have
    # their own states and inputs)
    names = [name for name in available(has_soft=True, has_hard=True)
             if not issubclass(REGISTRY[name].state_class, AdaptiveBinnedState)]

    def suite(weights=None):
        states = [REGISTRY[name].state(**({"n_bins": nb} if "n_bins" in REGISTRY[name].options
                                          else {})) for name in names]
        update_many(states, probs, soft, hard, weights)
        return {name: st.compute() for name, st in zip(names, states, strict=True)}

    def ece():
        st = REGISTRY["ece"].state(n_bins=nb)
        update_many([st], probs, None, hard)
        return st.compute()

    rows = [("floor: numpy.sum over probs + soft + hard", _median_time(
        lambda: (np.sum(probs), np.sum(soft), np.sum(hard)), args.repeat))]
    floor = rows[0][1]
    suite()  # load the compiled kernels first (their code is not the suite's memory)
    gc.collect()
    reset = _reset_peak()
    rss_before = _status("VmRSS") if reset else None
    suite_t = _median_time(suite, args.repeat)
    rss_suite = _status("VmHWM") if reset else None
    rows.append((f"suite: update_many + compute ({len(names)} metrics)", suite_t))
    rows.append(("kernel pass alone: kernels.batch_sums", _median_time(
        lambda: kernels.batch_sums(probs, soft, hard, None, quantities=ITEM_QUANTITIES,
                                   n_bins=nb, classwise=True), args.repeat)))
    rows.append(("ECE alone: update_many on one state", _median_time(ece, args.repeat)))
    if args.replicates:
        keys = np.random.default_rng(1).poisson(1.0, size=(args.replicates, n)).astype(float)
        rows.append((f"suite with ({args.replicates}, n) bootstrap weights", _median_time(
            lambda: suite(keys), max(1, args.repeat // 2))))
        del keys

    peers = []
    try:
        import torch
        from torchmetrics.classification import MulticlassCalibrationError

        tp, tl = torch.from_numpy(probs), torch.from_numpy(hard)
        metric = MulticlassCalibrationError(num_classes=k, n_bins=nb, norm="l1")

        def tm():
            metric.reset()
            metric.update(tp, tl)
            return float(metric.compute())

        peers.append(("torchmetrics MulticlassCalibrationError", _median_time(tm, args.repeat)))
        print(f"torch threads: {torch.get_num_threads()}; torchmetrics ECE = {tm():.12f}, "
              f"annokit ECE = {ece():.12f}")
    except ImportError as exc:
        if args.peer_python and os.path.exists(args.peer_python):
            res = _peer_in(args.peer_python, probs, hard, k, nb, args.repeat)
            peers.append(("torchmetrics MulticlassCalibrationError", (res["wall"], res["cpu"])))
            ours = ece()
            print(f"torchmetrics {res['version']} (torch {res['torch']}, {res['threads']} threads, "
                  f"in {args.peer_python}): ECE = {res['ece']:.12f}, annokit ECE = {ours:.12f} "
                  f"(|difference| {abs(res['ece'] - ours):.1e}: torchmetrics sums the bins in "
                  f"float32)")
        else:
            print(f"torchmetrics: skipped ({exc}; no --peer-python)")
    try:
        from netcal.metrics import ECE as NetcalECE

        nc = NetcalECE(bins=nb)
        peers.append(("netcal ECE", _median_time(lambda: nc.measure(probs, hard), args.repeat)))
    except ImportError as exc:
        print(f"netcal: skipped ({exc})")
    except Exception as exc:  # noqa: BLE001 - a peer failing must not stop the benchmark
        print(f"netcal: failed ({type(exc).__name__}: {exc})")

    print()
    print(f"{'what':52s} {'wall s':>8s} {'x floor':>8s} {'CPU s':>8s} {'x floor':>8s}")
    for name, (wall, cpu) in rows + peers:
        print(f"{name:52s} {wall:8.4f} {wall / floor[0]:8.2f} {cpu:8.3f} {cpu / floor[1]:8.2f}")
    print()
    print(f"suite / floor = {suite_t[0] / floor[0]:.2f} wall, {suite_t[1] / floor[1]:.2f} CPU "
          f"(suite CPU {suite_t[1]:.3f} s); load average after={os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} cpus")
    print(f"suite / stricter floor (numpy.sum over probs + soft only, {strict[0]:.4f} s) = "
          f"{suite_t[0] / strict[0]:.2f} wall, {suite_t[1] / strict[1]:.2f} CPU")
    ece_t = rows[3][1]
    print(f"ECE alone / floor = {ece_t[0] / floor[0]:.2f} wall, {ece_t[1] / floor[1]:.2f} CPU")
    for name, (wall, cpu) in peers:
        print(f"{name} / annokit ECE = {wall / ece_t[0]:.1f}x wall, {cpu / ece_t[1]:.1f}x CPU")
    if rss_before is not None and rss_suite is not None:
        extra = max(0, rss_suite - rss_before)
        print(f"suite peak memory: process peak RSS {extra / 1e6:.1f} MB above the "
              f"{rss_before / 1e6:.0f} MB before it (inputs {input_bytes / 1e6:.0f} MB + "
              f"interpreter and libraries) = {(input_bytes + extra) / input_bytes:.3f} x inputs")
    else:
        print(f"suite peak memory: not measured (no /proc/self/clear_refs); process peak RSS "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3:.0f} MB")



def _binary_multilabel(n: int, nb: int, repeat: int, labels: int = 5) -> None:
    """The binary (two labels) and multi-label metrics: each alone and all of one kind
    together through ``update_many`` (one fused pass per kind), without
    and with (4, n) bootstrap weights, against one ``numpy.sum`` pass over their inputs."""
    from annokit.metrics.registry import REGISTRY
    from annokit.metrics.states import update_many

    rng = np.random.default_rng(2)
    p1 = rng.random(n)
    two, y2 = np.column_stack([1 - p1, p1]), (rng.random(n) < p1).astype(np.int64)
    ml_p = rng.random((n, labels))
    ml_s = rng.binomial(6, ml_p) / 6.0
    ml_h = (ml_s > 0.5).astype(np.float64)
    w = rng.poisson(1.0, size=(4, n)).astype(np.float64)
    kinds = {"binary": ((two, None, y2), ("ece_binary", "mce_binary")),
             "multilabel": ((ml_p, ml_s, ml_h),
                            ("ece_multilabel", "brier_multilabel", "bce_multilabel"))}
    print()
    print(f"binary (n={n:,} x 2) and multi-label (n={n:,} x {labels}) metrics, update_many + "
          f"compute; load average {os.getloadavg()[0]:.2f}:")
    print(f"  {'metrics':58s} {'weights':>8s} {'wall s':>8s} {'x floor':>8s}")
    for kind, (inputs, names) in kinds.items():
        floor = _median_time(lambda x=inputs: [np.sum(a) for a in x if a is not None], repeat)[0]
        for group in [*[(name,) for name in names], names]:
            for weights, label in ((None, "none"), (w, "(4, n)")):
                def run(group=group, inputs=inputs, weights=weights):
                    states = [REGISTRY[name].state(**({"n_bins": nb} if "n_bins" in
                                                      REGISTRY[name].options else {}))
                              for name in group]
                    update_many(states, *inputs, weights)
                    return [st.compute() for st in states]

                wall = _median_time(run, repeat)[0]
                print(f"  {' + '.join(group):58s} {label:>8s} {wall:8.4f} {wall / floor:8.2f}")
        print(f"  ({kind} floor: numpy.sum over the inputs {floor:.4f} s)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--peer-python", default="/work/.venv-tm/bin/python",
                    help="An interpreter with torch and torchmetrics, used when they do not "
                         "import here (torch is never an annokit dependency).")
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--n-bins", type=int, default=10)
    ap.add_argument("--replicates", type=int, default=0,
                    help="also time the suite with (R, n) bootstrap weights")
    ap.add_argument("--sections", default="suite,alone,breakdown,binml",
                    help="comma-separated sections to run: suite (the suite, ECE and the "
                         "peers), alone (each registered metric alone), breakdown (ns per row), "
                         "binml (binary and multi-label metrics, on up to 2e6 rows)")
    ap.add_argument("--only-binary-multilabel", action="store_true",
                    help="the same as --sections binml")
    ap.add_argument("--metrics", default="",
                    help="comma-separated metrics for the 'alone' section (default: every "
                         "registered single-label metric)")
    args = ap.parse_args(argv)
    sections = {"binml"} if args.only_binary_multilabel else set(args.sections.split(","))
    if sections == {"binml"}:
        print(f"annokit binary/multi-label benchmark: cpus={os.cpu_count()} load average "
              f"before={os.getloadavg()[0]:.2f}")
        _binary_multilabel(args.n, args.n_bins, args.repeat)
        return 0

    from annokit.metrics import kernels

    n, k, nb = args.n, args.k, args.n_bins
    print(f"annokit metrics benchmark: n={n:,} k={k} n_bins={nb} repeat={args.repeat} "
          f"cpus={os.cpu_count()} kernel threads={kernels._threads(1 << 30)} "
          f"load average before={os.getloadavg()[0]:.2f}")
    print(f"annokit from {os.path.dirname(kernels.__file__)}")
    probs, soft, hard = _make(n, k)
    input_bytes = probs.nbytes + soft.nbytes + hard.nbytes
    print(f"input bytes: {input_bytes / 1e6:.1f} MB (probs {probs.nbytes / 1e6:.0f}, "
          f"soft {soft.nbytes / 1e6:.0f}, hard {hard.nbytes / 1e6:.0f})")

    strict = _median_time(lambda: (np.sum(probs), np.sum(soft)), args.repeat)
    if "suite" in sections:
        _suite(probs, soft, hard, args, input_bytes, strict)
    if "alone" in sections:
        _each_alone(probs, soft, hard, nb, args.repeat, strict,
                    [m for m in args.metrics.split(",") if m])
    if "breakdown" in sections:
        print(f"single-thread breakdown (ns per row; large inputs run in chunks of "
              f"{kernels.CHUNK_ROWS:,} rows on threads):")
        sub = min(n, 2_000_000)
        for name, ns in _breakdown(probs[:sub], soft[:sub], hard[:sub], nb, args.repeat):
            print(f"  {name:60s} {ns:7.1f}")
    if "binml" in sections:
        _binary_multilabel(min(n, 2_000_000), nb, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
