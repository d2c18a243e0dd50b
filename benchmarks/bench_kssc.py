"""k-SSC benchmark at TIR scale: time and peak memory per stage, and the coefficient step vs N.

Run: make bench (or python benchmarks/bench_kssc.py [--n 20000] [--large 1000000]). Prints a
table; asserts nothing.
Data: 5 random subspaces of dimension 5 in D = 321 (TIR's band count), Gaussian coefficients,
k = 20, the paper's lambda = 0.1 and constants. Each stage's rate is printed beside the
machine's ceiling measured by `ceilings.py` (the distance to the limit, issue 12 part 5);
`--large` adds a fit on the scale experiment's data (10 subspaces of dimension 5-10 in D = 64).
"""

import argparse
import resource
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ceilings

from kssc import KSSC, clustering_error
from kssc.datasets import make_union_of_subspaces
from kssc.estimator import PAPER_SETTING
from kssc.neighbours import nearest_neighbours
from kssc.representation import kssc_coefficients
from kssc.spectral import _normalized_affinity, top_eigenvectors


def tir_scale_data(n, ambient=321, n_subspaces=5, dim=5, seed=0):
    rng = np.random.default_rng(seed)
    per = n // n_subspaces
    X = np.vstack([
        rng.standard_normal((per, dim)) @ np.linalg.qr(rng.standard_normal((ambient, dim)))[0].T
        for _ in range(n_subspaces)
    ])
    return X, np.repeat(np.arange(n_subspaces), per)


def peak_rss_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def eigensolver_matvecs(W, n_clusters):
    """Time and number of mat-vecs of the spectral step's eigensolver on W's N-Cut matrix,
    and the bytes of one mat-vec (`ceilings.csr_bytes`)."""
    from scipy.sparse.linalg import LinearOperator

    P, _ = _normalized_affinity(W)
    count = [0]

    def product(x):
        count[0] += x.shape[1] if x.ndim == 2 else 1
        return P @ x

    operator = LinearOperator(P.shape, matvec=product, matmat=product, dtype=P.dtype)
    start = time.perf_counter()
    top_eigenvectors(operator, n_clusters, random_state=0, dense_limit=0)
    return time.perf_counter() - start, count[0], ceilings.csr_bytes(P)


def print_rates(model, n, ambient, k, limits, exact):
    """Each stage's achieved rate beside the machine's ceiling, and their ratio."""
    t = model.timings_
    neighbours = 2.0 * n**2 * ambient / t["neighbours"] / 1e9
    gram = 2.0 * n * k**2 * ambient / t["coefficients"] / 1e9
    W = model.affinity_matrix_
    seconds, matvecs, nbytes = eigensolver_matvecs(W, model.n_clusters_)
    bandwidth = matvecs * nbytes / seconds / 1e9
    # The mat-vec ceiling of a matrix of the affinity's size: cache decides the bandwidth.
    spmv = ceilings.spmv_gbps(n, max(1, round(W.nnz / n)) + 1)
    search = "exact" if exact else "approximate: exact-search equivalent"
    print(f"  rates vs ceilings ({search} for neighbours)")
    print(f"    neighbours    {neighbours:8.1f} GFLOP/s (2 N^2 D) vs float32 GEMM "
          f"{limits['gemm32_gflops']:7.1f}: {neighbours / limits['gemm32_gflops']:6.2f}")
    print(f"    coefficients  {gram:8.1f} GFLOP/s (2 N k^2 D) vs float64 GEMM "
          f"{limits['gemm64_gflops']:7.1f}: {gram / limits['gemm64_gflops']:6.2f}")
    print(f"    spectral      {bandwidth:8.2f} GB/s ({matvecs} mat-vecs of {nbytes / 1e6:.0f} MB "
          f"in {seconds:.2f} s) vs CSR mat-vec of this size {spmv:5.2f} GB/s: "
          f"{bandwidth / spmv:6.2f}")


def fit_and_report(title, X, y, n_clusters, k, limits, exact):
    rss_before = peak_rss_gib()
    start = time.perf_counter()
    model = KSSC(n_clusters, n_neighbors=k, random_state=0, **PAPER_SETTING).fit(X)
    total = time.perf_counter() - start
    t = model.timings_
    print(title)
    print(f"  neighbours    {t['neighbours']:7.2f} s")
    print(f"  coefficients  {t['coefficients']:7.2f} s")
    print(f"  spectral      {t['spectral']:7.2f} s")
    print(f"  total fit     {total:7.2f} s")
    print(f"  peak RSS      {peak_rss_gib():7.2f} GiB (data and interpreter: {rss_before:.2f} GiB)")
    print(f"  error         {clustering_error(y, model.labels_):7.2f} %")
    print_rates(model, X.shape[0], X.shape[1], k, limits, exact)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000, help="points of the D = 321 fit")
    parser.add_argument("--large", type=int, default=0,
                        help="points of the scale experiment's fit (D = 64); 0: none")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", ConvergenceWarning)
    limits = ceilings.measure()
    print(f"ceilings: float32 GEMM {limits['gemm32_gflops']:.1f} GFLOP/s, float64 GEMM "
          f"{limits['gemm64_gflops']:.1f} GFLOP/s, CSR mat-vec {limits['spmv_gbps']:.2f} GB/s\n")
    X, y = tir_scale_data(args.n)
    fit_and_report(f"KSSC.fit, N = {args.n:,}, D = 321, 5 subspaces of dim 5, k = 20", X, y, 5,
                   20, limits, exact=args.n < 50_000)
    if args.large:
        X, y = make_union_of_subspaces(args.large, ambient_dim=64, n_subspaces=10,
                                       subspace_dims=[5, 6, 7, 8, 9, 10], noise=0.01,
                                       random_state=0)
        fit_and_report(f"\nKSSC.fit, N = {args.large:,}, D = 64, 10 subspaces of dim 5-10, "
                       "k = 20", X, y, 10, 20, limits, exact=args.large < 50_000)
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
