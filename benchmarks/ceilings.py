"""The machine's measured ceilings, against which `bench_kssc.py` prints each stage's rate.

- Dense GEMM rate (GFLOP/s) of `np.dot` on two n x n matrices, float32 and float64, with
  every BLAS thread (the exact neighbour search and the coefficient Gram products are GEMMs).
- Sparse mat-vec bandwidth (GB/s) of a CSR matrix shaped like a k-SSC affinity: n rows of
  `nnz_per_row` float64 entries at random columns (the points are shuffled, so a row's
  neighbours are anywhere), int32 indices; the bytes counted are those the product must
  read and write once (values, column indices, row pointers, x and y).

Each is the best of `repeats` runs, so the figure is the machine's and not its load's.
Run: python -m benchmarks.ceilings
"""

import time

import numpy as np
import scipy.sparse as sp


def _best_time(run, repeats):
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def gemm_gflops(dtype=np.float32, n=4096, repeats=3):
    """GFLOP/s of `np.dot` on two random n x n matrices of `dtype` (2 n^3 flops)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, n)).astype(dtype)
    np.dot(a, b)
    return 2.0 * n**3 / _best_time(lambda: np.dot(a, b), repeats) / 1e9


def affinity_like(n, nnz_per_row=13, seed=0):
    """A CSR matrix of n rows with `nnz_per_row` random columns each (float64, int32)."""
    rng = np.random.default_rng(seed)
    columns = np.sort(rng.integers(0, n, (n, nnz_per_row)), axis=1).astype(np.int32).ravel()
    indptr = np.arange(0, n * nnz_per_row + 1, nnz_per_row, dtype=np.int32)
    return sp.csr_matrix((rng.random(n * nnz_per_row), columns, indptr), shape=(n, n))


def csr_bytes(matrix):
    """Bytes one product `matrix @ x` reads and writes: the CSR arrays, x and y."""
    vectors = (matrix.shape[0] + matrix.shape[1]) * matrix.dtype.itemsize
    return matrix.data.nbytes + matrix.indices.nbytes + matrix.indptr.nbytes + vectors


def spmv_gbps(n=1_000_000, nnz_per_row=13, repeats=5):
    """GB/s of a CSR mat-vec on `affinity_like(n, nnz_per_row)` (bytes by `csr_bytes`)."""
    matrix = affinity_like(n, nnz_per_row)
    x = np.random.default_rng(1).standard_normal(n)
    matrix @ x
    return csr_bytes(matrix) / _best_time(lambda: matrix @ x, repeats) / 1e9


def measure(gemm_n=4096, spmv_n=1_000_000):
    """The three ceilings as a dict: gemm32_gflops, gemm64_gflops, spmv_gbps."""
    return {"gemm32_gflops": gemm_gflops(np.float32, gemm_n),
            "gemm64_gflops": gemm_gflops(np.float64, gemm_n),
            "spmv_gbps": spmv_gbps(spmv_n)}


if __name__ == "__main__":
    ceilings = measure()
    print(f"float32 GEMM {ceilings['gemm32_gflops']:8.1f} GFLOP/s")
    print(f"float64 GEMM {ceilings['gemm64_gflops']:8.1f} GFLOP/s")
    print(f"CSR mat-vec  {ceilings['spmv_gbps']:8.2f} GB/s")
