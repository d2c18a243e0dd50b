"""Seconds of the float64 re-scoring of a join partition under three glibc allocator settings.

`kssc.neighbors._exact.rescore` gathers 1 MiB of candidate rows at a time, the way one
partition's join task re-scores its queries' k + 1 candidates in `kssc.distributed`. Each
setting runs in a fresh process (the allocator is per process): "plain" (glibc's defaults,
its mmap threshold adapting), "dask" (MALLOC_TRIM_THRESHOLD_=65536, as dask's nanny starts
workers: the threshold stays at 128 KiB, every gather a fresh mapping) and "dask, fit"
(that variable, and the thresholds `kssc.distributed._worker_tuning` sets during a fit).
Random unit rows: n queries, n / 2 database rows, D = 64, k + 1 = 21 candidates each; the
best of three runs per setting, one thread (OMP_NUM_THREADS=1). Prints figures only.

    python -m benchmarks.bench_allocator --n 300000
"""

import argparse
import os
import subprocess
import sys
import time

import numpy as np

SETTINGS = {"plain": {}, "dask": {"MALLOC_TRIM_THRESHOLD_": "65536"},
            "dask, fit": {"MALLOC_TRIM_THRESHOLD_": "65536", "KSSC_BENCH_FIT_ALLOCATOR": "1"}}


def rescore_seconds(n, dim=64, k1=21, repeats=3, seed=0):
    """Best seconds of `rescore` of n queries against n / 2 rows, k1 candidates each."""
    from kssc.neighbors._exact import rescore

    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((n, dim))
    database = rng.standard_normal((n // 2, dim))
    found = rng.integers(0, n // 2, size=(n, k1))
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        rescore(rows, database, found)
        best = min(best, time.perf_counter() - start)
    return best


def _child(n):
    if os.environ.get("KSSC_BENCH_FIT_ALLOCATOR"):
        from kssc.distributed import _worker_tuning

        _worker_tuning._set_allocator(_worker_tuning._FIT_MMAP_THRESHOLD,
                                      2 * _worker_tuning._FIT_MMAP_THRESHOLD)
    print(rescore_seconds(n))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300_000)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.n)
        return
    base = {key: value for key, value in os.environ.items()
            if key not in ("MALLOC_TRIM_THRESHOLD_", "KSSC_BENCH_FIT_ALLOCATOR")}
    for name, extra in SETTINGS.items():
        out = subprocess.run([sys.executable, "-m", "benchmarks.bench_allocator", "--n",
                              str(args.n), "--child"], check=True, capture_output=True,
                             text=True, env={**base, "OMP_NUM_THREADS": "1", **extra}).stdout
        print(f"{name:>10}: re-scoring {args.n:,} queries x 21 candidates in "
              f"{float(out.split()[-1]):.2f} s")


if __name__ == "__main__":
    main()
