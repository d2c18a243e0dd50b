"""Compiled (numba) passes over SSC's N x N coefficient matrix, parallel over rows.

Each replaces several numpy passes (and their temporaries) by one: at N = 750 the elementwise
work of a FISTA step, not its products, set SSC's run time.
"""

import numpy as np
from numba import prange

from ..coding._kernels import fill_cache, parallel_jit


@parallel_jit
def prox_gradient_rows(G, J, rho, lam, positive, rows, self_cols, C, T, lin, sq, l1):
    """For every r: C[i] = prox(J[i] - G[i] / rho[i], lam / rho[i]) with C[i, self_cols[r]] = 0,
    T[i] = C[i] - J[i], lin[i] = T[i] . G[i], sq[i] = ||T[i]||^2, l1[i] = ||C[i]||_1,
    i = rows[r]. Returns the number of non-zeros of the rows written.

    Two loops per row (the prox, then the sums) so that each vectorises."""
    n = C.shape[1]
    nnz = np.zeros(rows.size, dtype=np.int64)
    for r in prange(rows.size):
        i = rows[r]
        step = 1.0 / rho[i]
        threshold = lam * step
        Ci, Ti, Gi, Ji = C[i], T[i], G[i], J[i]
        if positive:
            for j in range(n):
                Ci[j] = max(Ji[j] - Gi[j] * step - threshold, 0.0)
        else:
            for j in range(n):
                v = Ji[j] - Gi[j] * step
                Ci[j] = np.copysign(max(abs(v) - threshold, 0.0), v)
        Ci[self_cols[r]] = 0.0
        lin_i = 0.0
        sq_i = 0.0
        l1_i = 0.0
        count = 0
        for j in range(n):
            t = Ci[j] - Ji[j]
            Ti[j] = t
            lin_i += t * Gi[j]
            sq_i += t * t
            magnitude = abs(Ci[j])
            l1_i += magnitude
            count += magnitude > 0.0
        lin[i] = lin_i
        sq[i] = sq_i
        l1[i] = l1_i
        nnz[r] = count
    return nnz.sum()


@parallel_jit
def sparse_rows_product(C, rows, B, out):
    """out[i] = C[i] @ B for i in rows, skipping the zeros of C[i]."""
    n, width = B.shape
    for r in prange(rows.size):
        i = rows[r]
        for p in range(width):
            out[i, p] = 0.0
        for j in range(n):
            c = C[i, j]
            if c != 0.0:
                for p in range(width):
                    out[i, p] += c * B[j, p]


@parallel_jit
def extrapolate(C, C_prev, beta, J):
    """J = C + beta[i] (C - C_prev), row by row."""
    for i in prange(C.shape[0]):
        b = beta[i]
        for j in range(C.shape[1]):
            J[i, j] = C[i, j] + b * (C[i, j] - C_prev[i, j])


fill_cache(__name__)  # run from the on-disk cache, never from an in-process compile
