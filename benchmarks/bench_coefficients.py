"""The coefficient step's speed beside the machine's float64 GEMM rate.

N = 20,000 points of 5 random 5-dimensional subspaces in D = 321 (`bench_kssc.tir_scale_data`),
their k = 20 and k = 50 nearest neighbours, lam = 0.1, each solver. The flops counted per point
are the Gram matrix, 2 k^2 D, plus 2 k^2 per solver iteration (one dense k x k product; the
kernels skip the zeros of sparse iterates, so they do less) and k^3 for ADMM's inverse. The
first call also loads (or, on a fresh machine, compiles) the numba kernels; its time is
printed apart.
"""

import time
import warnings

import numba
import numpy as np
from bench_kssc import tir_scale_data
from sklearn.exceptions import ConvergenceWarning

from kssc import ADMM
from kssc.neighbours import nearest_neighbours
from kssc.representation import kssc_coefficients

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


def main():
    warnings.simplefilter("ignore", ConvergenceWarning)
    X, _ = tir_scale_data(20_000, seed=1)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    ceiling = gemm_gflops()
    print(f"float64 GEMM (2000 x 2000 np.dot): {ceiling:.1f} GFLOP/s; "
          f"numba threads: {numba.get_num_threads()}")
    start = time.perf_counter()
    for solver in SOLVERS.values():
        kssc_coefficients(X[:50], nearest_neighbours(X[:50], 5, normalize=False)[0], 0.1,
                          solver=solver)
    print(f"first calls (load or compile the kernels): {time.perf_counter() - start:.1f} s\n")
    print("   k  solver    time (s)  mean iter  GFLOP/s  / GEMM")
    for k in (20, 50):
        indices, _ = nearest_neighbours(X, k, normalize=False)
        for name, solver in SOLVERS.items():
            start = time.perf_counter()
            _, n_iter, _ = kssc_coefficients(X, indices, 0.1, solver=solver,
                                             positive=not isinstance(solver, ADMM))
            elapsed = time.perf_counter() - start
            rate = flops(k, X.shape[1], n_iter, solver) / elapsed / 1e9
            print(f"  {k:2d}  {name:8s}  {elapsed:8.2f}  {n_iter.mean():9.1f}  {rate:7.1f}"
                  f"  {rate / ceiling:6.2f}")


if __name__ == "__main__":
    main()
