"""Where a large fit's memory goes: the traced peak of every step of a KSSC fit.

The scale data (experiments/scale.py: 10 subspaces of dimensions 5-10 in D = 64, noise
0.01) is written to a float32 .npy in a temporary folder and fitted memory-mapped with the
paper's setting (or the defaults, --defaults), under `tracemalloc`: numpy and scipy report
their allocations to it, so a step's peak is what it allocates beyond what the fit already
holds (the memory map, the interpreter and the libraries are not counted). Each step's
peak is taken with its own `tracemalloc.reset_peak()`, so a step that calls another reports
the larger of the two. Prints one line per step: the traced memory held when it started,
when it ended, and its peak, in GiB, and the seconds (tracing slows the fit by about 10 %).

    python -m benchmarks.bench_memory --n 1000000
    python -m benchmarks.bench_memory --n 300000 --defaults

Used for docs/scaling.md's "Memory" (the 10^7 cell of `scale` was killed for memory).

With --rss, the fit runs untraced and every stage's peak resident memory (anonymous pages:
the memory map's file pages are the page cache's) is measured above what the process held
when the fit started, against the estimate the fit checked before it allocated
(`kssc.neighbors._memory.kssc_fit_memory`): a thread samples RssAnon every millisecond, and the
kernel's high-water mark (VmHWM, reset at each stage through /proc/self/clear_refs, less the
file pages) catches a peak between samples. Prints one line per stage with the ratio
estimate / measured and writes them to results/bench_memory.csv (--output); asserts
nothing. Run it in a fresh process on an idle core (`nice`):

    nice python -m benchmarks.bench_memory --rss --n 200000
"""

import argparse
import contextlib
import functools
import os
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np

import kssc._base as base
import kssc.estimator as estimator
import kssc.spectral._clustering as spectral
import kssc.spectral._multilevel as multilevel
import kssc.spectral.affinity as affinity
from experiments import _io, _produce
from experiments._checkout import REPO_ROOT as REPO
from experiments.scale import write_union_npy
from kssc import KSSC
from kssc.metrics import clustering_error
from kssc.neighbors import nearest_neighbors

GIB = 2.0**30
PAPER = {"metric": "euclidean", "neighbor_algorithm": "auto", "assign_labels": "discretize"}
# (module, function, the modules that call it by name)
STEPS = [
    (affinity, "symmetric_affinity", (affinity, base)),
    (spectral, "_normalized_affinity", (spectral,)),
    (multilevel, "aggregation", (multilevel,)),
    (multilevel, "coarse_start", (multilevel,)),
    (multilevel, "refine", (multilevel,)),
    (spectral, "discretize", (spectral,)),
]


# The peaks of the steps running now, outermost first: one tracemalloc peak serves them all
# (reset when a step starts; a step's peak so far is folded into its caller's first).
_RUNNING = []
_PEAKS = {}  # the last peak of every step, by name


@contextlib.contextmanager
def _measured(name):
    current, peak = tracemalloc.get_traced_memory()
    if _RUNNING:
        _RUNNING[-1] = max(_RUNNING[-1], peak)
    tracemalloc.reset_peak()
    _RUNNING.append(0)
    clock = time.perf_counter()
    try:
        yield
    finally:
        end, peak = tracemalloc.get_traced_memory()
        peak = max(_RUNNING.pop(), peak)
        if _RUNNING:
            _RUNNING[-1] = max(_RUNNING[-1], peak)
        _PEAKS[name] = peak
        print(f"{name:>26}: held {current / GIB:5.2f} -> {end / GIB:5.2f} GiB, "
              f"peak {peak / GIB:5.2f} GiB, {time.perf_counter() - clock:6.1f} s", flush=True)


def _traced(function, name):
    @functools.wraps(function)
    def step(*args, **kwargs):
        with _measured(name):
            return function(*args, **kwargs)
    return step


def _traced_stages(timed):
    @contextlib.contextmanager
    def stage(timings, name):
        with _measured(f"stage {name}"), timed(timings, name):
            yield
    return stage


def _status():
    """{field: bytes} of /proc/self/status' memory lines."""
    fields = {}
    with open("/proc/self/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmHWM", "RssAnon", "RssFile", "RssShmem"):
                fields[name] = int(value.split()[0]) * 1024
    return fields


class _Resident:
    """Peak anonymous resident memory of the stages running now (`stage`), sampled every
    millisecond and checked against the kernel's high-water mark at each stage's start and
    end."""

    def __init__(self):
        self.running, self.peaks, self.starts = [], {}, {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _note(self, anon):
        for record in self.running:
            record[1] = max(record[1], anon)

    def _sample(self):
        while not self._stop.wait(0.001):
            self._note(_status()["RssAnon"])

    def _high_water(self):
        # Between resets, VmHWM is the largest RSS; less the file pages now (they only grow
        # during a fit: the memory map is read once), a lower bound of the largest anon.
        fields = _status()
        self._note(fields["VmHWM"] - fields["RssFile"] - fields["RssShmem"])
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")

    @contextlib.contextmanager
    def stage(self, name):
        self._high_water()
        anon = _status()["RssAnon"]
        record = [name, anon]
        self.running.append(record)
        self.starts[name] = anon
        try:
            yield
        finally:
            self._high_water()
            self.running.remove(record)
            self.peaks[name] = record[1]

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300_000)
    parser.add_argument("--d", type=int, default=64, help="ambient dimension (default: 64)")
    parser.add_argument("--defaults", action="store_true", help="KSSC's defaults, not the paper's")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rss", action="store_true",
                        help="peak resident memory per stage against the fit's estimate")
    parser.add_argument("--output", type=Path, default=REPO / "results" / "bench_memory.csv")
    args = parser.parse_args(argv)
    if args.rss:
        return _measure_resident(args)
    originals = [(caller, name, getattr(caller, name))
                 for _, name, callers in STEPS for caller in callers]
    originals.append((base, "timed", base.timed))
    try:
        for module, name, callers in STEPS:
            wrapped = _traced(getattr(module, name), name)
            for caller in callers:
                setattr(caller, name, wrapped)
        base.timed = _traced_stages(base.timed)
        _measure(args)
    finally:
        for caller, name, function in originals:
            setattr(caller, name, function)


def _measure(args):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "scale.npy"
        y = write_union_npy(path, args.n, ambient_dim=args.d, n_subspaces=10,
                            subspace_dims=[5, 6, 7, 8, 9, 10], noise=0.01,
                            random_state=args.seed)
        X = np.load(path, mmap_mode="r")
        setting = {} if args.defaults else PAPER
        print(f"N = {args.n:,}, D = {args.d}, {'defaults' if args.defaults else 'paper setting'}; "
              f"the float32 data: {X.nbytes / GIB:.2f} GiB (memory-mapped, not traced)",
              flush=True)
        tracemalloc.start()
        with _measured("nearest_neighbors alone"):
            nearest_neighbors(X, 20, metric=setting.get("metric", "abs_cosine"),
                              algorithm="approximate", random_state=args.seed)
        tracemalloc.stop()
        tracemalloc.start()
        with _measured("fit"):
            model = KSSC(n_clusters=10, random_state=args.seed, **setting).fit(X)
        tracemalloc.stop()
        error = clustering_error(y, model.labels_)
        print(f"error {error:.2f} %; the fit's traced peak per point: "
              f"{_PEAKS['fit'] / args.n:,.0f} bytes", flush=True)


def _measure_resident(args):
    import pandas as pd

    started, begin = _io.now(), time.perf_counter()
    estimates = {}
    check = estimator.check_fit_memory

    def recorded(stages, *rest):
        estimates.update(stages)
        return check(stages, *rest)

    timed = base.timed
    with tempfile.TemporaryDirectory() as folder, _Resident() as resident:
        path = Path(folder) / "scale.npy"
        y = write_union_npy(path, args.n, ambient_dim=args.d, n_subspaces=10,
                            subspace_dims=[5, 6, 7, 8, 9, 10], noise=0.01,
                            random_state=args.seed)
        X = np.load(path, mmap_mode="r")
        setting = {} if args.defaults else PAPER

        @contextlib.contextmanager
        def stage(timings, name):
            with resident.stage(name), timed(timings, name):
                yield

        estimator.check_fit_memory, base.timed = recorded, stage
        try:
            model = KSSC(n_clusters=10, random_state=args.seed, **setting).fit(X)
        finally:
            estimator.check_fit_memory, base.timed = check, timed
    start = resident.starts["total"]
    measured = {"unit rows": resident.starts["neighbours"] - start,
                **{name: resident.peaks[name] - start
                   for name in ("neighbours", "coefficients", "spectral")}}
    print(f"N = {args.n:,}, D = {args.d}, {'defaults' if args.defaults else 'paper setting'}, "
          f"memory-mapped float32; error {clustering_error(y, model.labels_):.2f} %; peak "
          "anonymous resident memory above the fit's start:", flush=True)
    rows = []
    for name, estimate in estimates.items():
        ratio = estimate / measured[name] if measured[name] > 0 else float("nan")
        print(f"{name:>14}: estimate {estimate / GIB:6.3f} GiB, measured "
              f"{measured[name] / GIB:6.3f} GiB, ratio {ratio:5.2f}", flush=True)
        rows.append({"n_samples": args.n, "n_features": args.d,
                     "setting": "defaults" if args.defaults else "paper", "stage": name,
                     "estimate_bytes": int(estimate), "measured_bytes": int(measured[name]),
                     "ratio": round(ratio, 3), "seed": args.seed})
    frame = pd.DataFrame(rows)
    config = {"experiment": {"name": "bench_memory", "n": args.n, "d": args.d,
                             "defaults": args.defaults, "seed": args.seed}}
    _produce.write_result(frame, args.output, config,
                          started=started, wall_time=time.perf_counter() - begin,
                          extra={"load_average_end": os.getloadavg()})
    print(f"wrote {args.output}")
    return frame


if __name__ == "__main__":
    from experiments import _produce

    _produce.traced_main(main)
