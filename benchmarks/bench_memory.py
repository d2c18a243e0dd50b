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
"""

import argparse
import contextlib
import functools
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

import kssc._base as base
import kssc.spectral._clustering as spectral
import kssc.spectral._multilevel as multilevel
import kssc.spectral.affinity as affinity
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300_000)
    parser.add_argument("--defaults", action="store_true", help="KSSC's defaults, not the paper's")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
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
        y = write_union_npy(path, args.n, ambient_dim=64, n_subspaces=10,
                            subspace_dims=[5, 6, 7, 8, 9, 10], noise=0.01,
                            random_state=args.seed)
        X = np.load(path, mmap_mode="r")
        setting = {} if args.defaults else PAPER
        print(f"N = {args.n:,}, D = 64, {'defaults' if args.defaults else 'paper setting'}; "
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



if __name__ == "__main__":
    main()
