"""k-SSC benchmark at TIR scale: time and peak memory per stage, and the coefficient step vs N.

Run: make bench (or python benchmarks/bench_kssc.py). Prints a table; asserts nothing.
Data: 5 random subspaces of dimension 5 in D = 321 (TIR's band count), Gaussian coefficients,
k = 20, the paper's lambda = 0.1 and constants.
"""

import resource
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from kssc import KSSC, clustering_error
from kssc.estimator import PAPER_SETTING
from kssc.neighbours import nearest_neighbours
from kssc.representation import kssc_coefficients


def tir_scale_data(n, ambient=321, n_subspaces=5, dim=5, seed=0):
    rng = np.random.default_rng(seed)
    per = n // n_subspaces
    X = np.vstack([
        rng.standard_normal((per, dim)) @ np.linalg.qr(rng.standard_normal((ambient, dim)))[0].T
        for _ in range(n_subspaces)
    ])
    return X, np.repeat(np.arange(n_subspaces), per)


def gemm_gflops(size=4000):
    """The machine's float32 matrix-product rate (best of three size^3 products, all cores):
    the ceiling of the exact neighbour search."""
    A = np.random.default_rng(0).standard_normal((size, size), dtype=np.float32)
    A @ A
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        A @ A
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best / 1e9


def peak_rss_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def main():
    warnings.simplefilter("ignore", ConvergenceWarning)
    X, y = tir_scale_data(20_000)
    rss_before = peak_rss_gib()
    start = time.perf_counter()
    model = KSSC(5, n_neighbors=20, random_state=0, **PAPER_SETTING).fit(X)
    total = time.perf_counter() - start
    t = model.timings_
    print("KSSC.fit, N = 20,000, D = 321, 5 subspaces of dim 5, k = 20")
    gemm = gemm_gflops()
    neighbours_rate = 2 * X.shape[0] ** 2 * X.shape[1] / t["neighbours"] / 1e9
    print(f"  neighbours    {t['neighbours']:7.2f} s  ({neighbours_rate:.0f} GFLOP/s, "
          f"{neighbours_rate / gemm:.0%} of the float32 GEMM rate {gemm:.0f} GFLOP/s)")
    print(f"  coefficients  {t['coefficients']:7.2f} s")
    print(f"  spectral      {t['spectral']:7.2f} s")
    print(f"  total fit     {total:7.2f} s")
    print(f"  peak RSS      {peak_rss_gib():7.2f} GiB (data and interpreter: {rss_before:.2f} GiB)")
    print(f"  error         {clustering_error(y, model.labels_):7.2f} %")
    print("\ncoefficient step vs N (relaxed, FISTA)")
    print("       N   time (s)   us/point")
    for n in (5_000, 10_000, 20_000, 40_000):
        X, _ = tir_scale_data(n, seed=1)
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        indices, _ = nearest_neighbours(X, 20, normalize=False)
        start = time.perf_counter()
        kssc_coefficients(X, indices, 0.1)
        elapsed = time.perf_counter() - start
        print(f"  {n:6d}   {elapsed:8.2f}   {1e6 * elapsed / n:8.1f}")


if __name__ == "__main__":
    main()
