"""The coefficient step's speed beside the machine's float64 GEMM rate.

N = 20,000 points (--n) of 5 random 5-dimensional subspaces in D = 321
(`bench_kssc.tir_scale_data`), their k = 20 and k = 50 nearest neighbours, lam = 0.1, each
solver. The flops counted per point
are the Gram matrix, 2 k^2 D, plus 2 k^2 per solver iteration (one dense k x k product; the
kernels skip the zeros of sparse iterates, so they do less) and k^3 for ADMM's inverse. The
first call also loads (or, on a fresh machine, compiles) the numba kernels; its time is
printed apart. Then the relaxed solver at k = 20 for N / 4 to 2 N (linear in N).

Run: make bench (or `python -m benchmarks.bench_coefficients`). Prints the tables and writes
them to results/bench_coefficients.csv (sidecar: versions, load average); asserts nothing.

`--scale N` instead times the paper's setting (relaxed, k = 20, lam = 0.1, z >= 0) on the
scale experiment's data (D = 64, 10 subspaces; neighbours exact below 50,000 points, IVF from
there on, as KSSC's "auto"; their search is not timed) at 5,000 points and at N, and prints
the rate at N against the rate at 5,000 (the target: within 2x). Nothing is written.
"""

import argparse
import os
import time
import warnings
from pathlib import Path

import numba
import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from benchmarks.bench_kssc import REPO, tir_scale_data
from kssc import ADMM
from kssc.coding.representation import kssc_coefficients
from kssc.neighbors import nearest_neighbors

SOLVERS = {"relaxed": "relaxed", "exact": "exact", "ADMM": ADMM()}


def gemm_gflops(n=2000, repeats=3):
    """The machine's float64 GEMM rate (GFLOP/s): the best of `repeats` n x n products."""
    a = np.random.default_rng(0).standard_normal((n, n))
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        np.dot(a, a)
        best = min(best, time.perf_counter() - start)
    return 2 * n**3 / best / 1e9


def flops(k, d, n_iter, solver):
    """Counted flops of the coefficient step (see the module docstring)."""
    setup = k**3 if isinstance(solver, ADMM) else 0
    return np.sum(2 * k**2 * d + 2 * k**2 * n_iter + setup)


def timed(X, indices, solver):
    start = time.perf_counter()
    _, n_iter, _ = kssc_coefficients(X, indices, 0.1, solver=solver,
                                     positive=not isinstance(solver, ADMM))
    return time.perf_counter() - start, n_iter


def scale_rates(n_large, n_small=5_000):
    """The relaxed solver's time and rate on the scale data at n_small and n_large points."""
    from kssc.datasets import make_union_of_subspaces

    print(f"numba threads: {numba.get_num_threads()}; load average {os.getloadavg()[0]:.1f}")
    print("         N  search (s)  time (s)  mean iter  GFLOP/s")
    rates = []
    for n in (n_small, n_large):
        X = make_union_of_subspaces(n, ambient_dim=64, n_subspaces=10,
                                    subspace_dims=[5, 6, 7, 8, 9, 10], noise=0.01,
                                    random_state=0)[0]
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        start = time.perf_counter()
        indices, _ = nearest_neighbors(X, 20, normalize=False,
                                       algorithm="exact" if n < 50_000 else "approximate")
        search = time.perf_counter() - start
        if not rates:
            timed(X[:50], indices[:50] % 50, "relaxed")  # load the kernels untimed
        elapsed, n_iter = timed(X, indices, "relaxed")
        rates.append(flops(20, 64, n_iter, "relaxed") / elapsed / 1e9)
        print(f"  {n:8d}  {search:10.1f}  {elapsed:8.2f}  {n_iter.mean():9.1f}  "
              f"{rates[-1]:7.2f}", flush=True)
    print(f"rate at {n_small:,} / rate at {n_large:,}: {rates[0] / rates[1]:.2f} (target <= 2)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000,
                        help="points of the solver table; the N sweep runs N/4, N/2, N, 2N")
    parser.add_argument("--scale", type=int, default=None,
                        help="time the paper's setting on the scale data at this N instead")
    parser.add_argument("--output", type=Path,
                        default=REPO / "results" / "bench_coefficients.csv")
    args = parser.parse_args(argv)
    if args.scale is not None:
        warnings.simplefilter("ignore", ConvergenceWarning)
        scale_rates(args.scale)
        return
    from experiments import _io, _produce

    started, begin = _io.now(), time.perf_counter()
    warnings.simplefilter("ignore", ConvergenceWarning)
    X, _ = tir_scale_data(args.n, seed=1)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    ceiling = gemm_gflops()
    print(f"float64 GEMM (2000 x 2000 np.dot): {ceiling:.1f} GFLOP/s; "
          f"numba threads: {numba.get_num_threads()}")
    start = time.perf_counter()
    for solver in SOLVERS.values():
        kssc_coefficients(X[:50], nearest_neighbors(X[:50], 5, normalize=False)[0], 0.1,
                          solver=solver)
    print(f"first calls (load or compile the kernels): {time.perf_counter() - start:.1f} s\n")
    print("       N   k  solver    time (s)  mean iter  GFLOP/s  / GEMM")
    rows = []
    plan = [(args.n, k, name) for k in (20, 50) for name in SOLVERS]
    plan += [(n, 20, "relaxed") for n in (args.n // 4, args.n // 2, 2 * args.n)]
    for n, k, name in plan:
        Xn = X if n == args.n else tir_scale_data(n, seed=1)[0]
        Xn = Xn / np.linalg.norm(Xn, axis=1, keepdims=True)
        indices, _ = nearest_neighbors(Xn, k, normalize=False)
        elapsed, n_iter = timed(Xn, indices, SOLVERS[name])
        rate = flops(k, Xn.shape[1], n_iter, SOLVERS[name]) / elapsed / 1e9
        print(f"  {n:6d}  {k:2d}  {name:8s}  {elapsed:8.2f}  {n_iter.mean():9.1f}  "
              f"{rate:7.1f}  {rate / ceiling:6.2f}")
        rows.append({"n_samples": n, "ambient_dim": Xn.shape[1], "n_neighbors": k,
                     "solver": name, "time_s": elapsed, "us_per_point": 1e6 * elapsed / n,
                     "mean_iter": n_iter.mean(), "gflops": rate, "vs_gemm64": rate / ceiling,
                     "load_average": round(os.getloadavg()[0], 2)})
    _produce.write_benchmark(pd.DataFrame(rows), args.output, "bench_coefficients",
                             {"lam": 0.1, "numba_threads": numba.get_num_threads()},
                             started=started, clock=begin, extra={"gemm64_gflops": ceiling})


if __name__ == "__main__":
    from experiments import _produce

    _produce.traced_main(main)
