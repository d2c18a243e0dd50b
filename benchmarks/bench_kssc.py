"""k-SSC benchmark at TIR scale: time and peak memory per stage, and each stage's rate.

Run: make bench (or `python -m benchmarks.bench_kssc [--n 20000] [--large 1000000]`; or
`--memory-check N D` to estimate and check the memory of a memory-mapped N x D fit only). Prints a
table and writes it to results/bench_kssc.csv (sidecar: versions, load average); asserts
nothing. Data: 5 random subspaces of dimension 5 in D = 321 (TIR's band count), Gaussian
coefficients, k = 20, the paper's lambda = 0.1 and constants. The D = 321 fit runs twice in
the process: the first call also loads the compiled kernels (numba's cache), the second is
the steady state. Each stage's rate is printed beside the machine's ceiling measured by
`ceilings.py` (the distance to the limit), and for the IVF self-join each of
its stages (k-means, assignment, recall sample, join); `--large` adds a fit on the scale
experiment's data (10 subspaces of dimension 5-10 in D = 64).
"""

import argparse
import os
import resource
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from benchmarks import ceilings
from experiments._checkout import REPO_ROOT as REPO
from kssc import KSSC, clustering_error
from kssc.datasets import make_union_of_subspaces
from kssc.estimator import PAPER_SETTING
from kssc.spectral._clustering import _normalized_affinity, top_eigenvectors


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
    """Time and number of mat-vecs of ARPACK on W's N-Cut matrix (the spectral step's
    eigensolver up to 50,000 points; above, the multilevel route, which needs the matrix
    itself), and the bytes of one mat-vec (`ceilings.csr_bytes`)."""
    from scipy.sparse.linalg import LinearOperator

    P, _ = _normalized_affinity(W)
    count = [0]

    def product(x):
        count[0] += x.shape[1] if x.ndim == 2 else 1
        return P @ x

    operator = LinearOperator(P.shape, matvec=product, matmat=product, dtype=P.dtype)
    start = time.perf_counter()
    top_eigenvectors(operator, n_clusters, random_state=0, dense_limit=0, solver="arpack")
    return time.perf_counter() - start, count[0], ceilings.csr_bytes(P)


def print_rates(model, n, ambient, k, limits):
    """Each stage's achieved rate beside the machine's ceiling, and their ratio (returned)."""
    t = model.timings_
    search = model.neighbor_search_
    # The flops the search computed: n^2 D for the exact one (each symmetric block pair
    # once), 2 D per similarity of the self-join's stages.
    joined = search["algorithm"] == "ivf"
    flops = 2.0 * ambient * sum(search["similarities"].values()) if joined else n**2 * ambient
    neighbours = flops / t["neighbours"] / 1e9
    gram = 2.0 * n * k**2 * ambient / t["coefficients"] / 1e9
    W = model.affinity_matrix_
    seconds, matvecs, nbytes = eigensolver_matvecs(W, model.n_clusters_)
    bandwidth = matvecs * nbytes / seconds / 1e9
    # The mat-vec ceiling of a matrix of the affinity's size: cache decides the bandwidth.
    spmv = ceilings.spmv_gbps(n, max(1, round(W.nnz / n)) + 1)
    print(f"  rates vs ceilings ({'IVF self-join' if joined else 'exact'} for neighbours)")
    basis = "2 D per similarity" if joined else "N^2 D"
    print(f"    neighbours    {neighbours:8.1f} GFLOP/s ({basis}) vs float32 GEMM "
          f"{limits['gemm32_gflops']:7.1f}: "
          f"{neighbours / limits['gemm32_gflops']:6.2f}")
    for stage, stage_seconds in (search["timings"] if joined else {}).items():
        rate = 2.0 * ambient * search["similarities"][stage] / stage_seconds / 1e9
        print(f"      {stage:11s} {stage_seconds:7.2f} s {rate:8.1f} GFLOP/s: "
              f"{rate / limits['gemm32_gflops']:6.2f} of the GEMM ceiling")
    print(f"    coefficients  {gram:8.1f} GFLOP/s (2 N k^2 D) vs float64 GEMM "
          f"{limits['gemm64_gflops']:7.1f}: {gram / limits['gemm64_gflops']:6.2f}")
    print(f"    ARPACK        {bandwidth:8.2f} GB/s ({matvecs} mat-vecs of {nbytes / 1e6:.0f} MB "
          f"in {seconds:.2f} s) vs CSR mat-vec of this size {spmv:5.2f} GB/s: "
          f"{bandwidth / spmv:6.2f}")
    return {"neighbours_vs_ceiling": neighbours / limits["gemm32_gflops"],
            "coefficients_vs_ceiling": gram / limits["gemm64_gflops"],
            "spectral_vs_ceiling": bandwidth / spmv}


def fit_and_report(title, X, y, n_clusters, k, limits, exact):
    """Fit, print the stages and rates; return them as a results row."""
    rss_before = peak_rss_gib()
    load = os.getloadavg()[0]
    start = time.perf_counter()
    model = KSSC(n_clusters, n_neighbors=k, random_state=0, **PAPER_SETTING).fit(X)
    total = time.perf_counter() - start
    t = model.timings_
    print(title)
    print(f"  neighbours    {t['neighbours']:7.2f} s ({model.neighbor_search_['algorithm']}, "
          f"recall {model.neighbor_recall_:.3f})")
    print(f"  coefficients  {t['coefficients']:7.2f} s")
    print(f"  spectral      {t['spectral']:7.2f} s")
    print(f"  total fit     {total:7.2f} s")
    print(f"  peak RSS      {peak_rss_gib():7.2f} GiB (data and interpreter: {rss_before:.2f} GiB)")
    error = clustering_error(y, model.labels_)
    print(f"  error         {error:7.2f} %")
    ratios = print_rates(model, X.shape[0], X.shape[1], k, limits)
    return {"n_samples": X.shape[0], "ambient_dim": X.shape[1], "n_neighbors": k,
            "neighbours": "exact" if exact else "approximate",
            "time_neighbours_s": t["neighbours"], "time_coefficients_s": t["coefficients"],
            "time_spectral_s": t["spectral"], "time_fit_s": total,
            "rss_peak_gib": peak_rss_gib(), "error_pct": error,
            "neighbor_recall": getattr(model, "neighbor_recall_", None),
            "load_average": round(load, 2), **ratios}


def memory_check(n, d, k=20):
    """Print the neighbour stage's memory estimate for a memory-mapped float32 N x D fit, the
    fit's float32 unit-row copy beside it, against 2x the data, and run the check alone."""
    from kssc import NeighborMemoryError
    from kssc.neighbors._ann import memory_bytes
    from kssc.neighbors._memory import available_memory
    from kssc.neighbors._search import check_search_memory

    data = 4 * n * d
    search = memory_bytes(n, d, k, dtype=np.float32)
    print(f"data {data / 2**30:.2f} GiB (float32 file); unit-row copy {data / 2**30:.2f} GiB; "
          f"neighbour stage {search / 2**30:.2f} GiB; both {(data + search) / 2**30:.2f} GiB "
          f"= {(data + search) / data:.2f}x the data (target <= 2x); available "
          f"{available_memory() / 2**30:.2f} GiB")
    try:
        check_search_memory((n, d), np.float32, k, "euclidean", "approximate")
        print("memory check: passes (the neighbour stage would start)")
    except NeighborMemoryError as error:
        print(f"memory check: stops before the neighbour stage: {error}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000, help="points of the D = 321 fit")
    parser.add_argument("--large", type=int, default=0,
                        help="points of the scale experiment's fit (D = 64); 0: none")
    parser.add_argument("--output", type=Path, default=REPO / "results" / "bench_kssc.csv")
    parser.add_argument("--memory-check", type=int, nargs=2, metavar=("N", "D"),
                        help="only estimate the memory of a memory-mapped float32 fit of N x D "
                             "points (approximate search, k = 20) and check it on this machine")
    args = parser.parse_args(argv)
    if args.memory_check:
        memory_check(*args.memory_check)
        return
    from experiments import _io, _produce

    started, start = _io.now(), time.perf_counter()
    warnings.simplefilter("ignore", ConvergenceWarning)
    limits = ceilings.measure()
    print(f"ceilings: float32 GEMM {limits['gemm32_gflops']:.1f} GFLOP/s, float64 GEMM "
          f"{limits['gemm64_gflops']:.1f} GFLOP/s, CSR mat-vec {limits['spmv_gbps']:.2f} GB/s\n")
    X, y = tir_scale_data(args.n)
    rows = []
    for call in ("first", "second"):
        row = fit_and_report(f"KSSC.fit ({call} in this process), N = {args.n:,}, D = 321, "
                             "5 subspaces of dim 5, k = 20", X, y, 5, 20, limits,
                             exact=args.n < 50_000)
        rows.append({"data": "tir_scale", "call": call, **row})
        print()
    if args.large:
        X, y = make_union_of_subspaces(args.large, ambient_dim=64, n_subspaces=10,
                                       subspace_dims=[5, 6, 7, 8, 9, 10], noise=0.01,
                                       random_state=0)
        row = fit_and_report(f"KSSC.fit, N = {args.large:,}, D = 64, 10 subspaces of dim "
                             "5-10, k = 20", X, y, 10, 20, limits, exact=args.large < 50_000)
        rows.append({"data": "scale", "call": "first", **row})
    _produce.write_benchmark(pd.DataFrame(rows), args.output, "bench_kssc",
                             {"n": args.n, "large": args.large,
                              "setting": "PAPER_SETTING, k = 20"},
                             started=started, clock=start, extra={"ceilings": limits})


if __name__ == "__main__":
    from experiments import _produce

    _produce.traced_main(main)
