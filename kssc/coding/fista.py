"""FISTA with backtracking for many small lasso problems, one compiled kernel per problem.

Each problem i is  min_z lam_i * ||z||_1 + 1/2 * ||x_i - A_i^T z||^2  (optionally z >= 0),
given through its Gram matrix G_i = A_i A_i^T, correlations b_i = A_i x_i and c_i = ||x_i||^2:
the smooth part is 1/2 z^T G_i z - b_i^T z + c_i / 2. Working on k x k Gram matrices makes an
iteration cost O(k^2) per problem instead of O(k D) (O(k nnz(z)): the products skip the
zeros of the sparse iterate).

Constants follow the paper's code (`par_helper_relaxed`): rho_0 = 1, growth 1.1, stop when
the objective changes by at most `tol`, at most `max_iter` iterations, rho kept per problem.
"""

import numpy as np
from numba import prange

from ._kernels import fill_cache, jit, parallel_jit, prox, sparse_matvec


@jit
def fista_point(G, b, c, lam, positive, tol, max_iter, rho0, growth, z, work):
    """Solve one problem into `z` (k,); `work` is (5, k) scratch. Returns (n_iter, converged)."""
    z_prev, Gz, Gz_prev, j, Gj = work[0], work[1], work[2], work[3], work[4]
    k = b.size
    z[:] = 0.0
    Gz[:] = 0.0
    j[:] = 0.0
    Gj[:] = 0.0
    alpha, rho, F_prev = 1.0, rho0, np.inf
    for it in range(1, max_iter + 1):
        z_prev[:] = z
        Gz_prev[:] = Gz
        # Backtracking: for a quadratic smooth part the paper's test F(z) > Q(z, j) is
        # exactly d^T G d > rho ||d||^2 with d = z - j; this form has no cancellation, so
        # it always ends once rho exceeds the largest eigenvalue of G.
        while True:
            for m in range(k):
                z[m] = prox(j[m] - (Gj[m] - b[m]) / rho, lam / rho, positive)
            sparse_matvec(G, z, Gz)
            curvature = 0.0
            step_sq = 0.0
            for m in range(k):
                step = z[m] - j[m]
                curvature += step * (Gz[m] - Gj[m])
                step_sq += step * step
            if curvature <= rho * step_sq:
                break
            rho *= growth
        F = 0.5 * c
        for m in range(k):
            F += lam * abs(z[m]) + z[m] * (0.5 * Gz[m] - b[m])
        alpha_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * alpha * alpha))
        beta = (alpha - 1.0) / alpha_new
        alpha = alpha_new
        for m in range(k):
            j[m] = z[m] + beta * (z[m] - z_prev[m])
            Gj[m] = Gz[m] + beta * (Gz[m] - Gz_prev[m])
        if abs(F - F_prev) <= tol:
            return it, True
        F_prev = F
    return max_iter, False


@parallel_jit
def _solve_all(gram, corr, sq_norms, lam, positive, tol, max_iter, rho0, growth):
    n, k = corr.shape
    coef = np.zeros((n, k))
    n_iter = np.zeros(n, dtype=np.int64)
    converged = np.zeros(n, dtype=np.bool_)
    for i in prange(n):
        n_iter[i], converged[i] = fista_point(gram[i], corr[i], sq_norms[i], lam[i], positive,
                                              tol, max_iter, rho0, growth, coef[i],
                                              np.empty((5, k)))
    return coef, n_iter, converged


def solve_lasso_fista(gram, corr, sq_norms, lam, *, positive=True, tol=1e-6, max_iter=200,
                      rho0=1.0, growth=1.1):
    """Solve all problems; return (coef (n, k), n_iter (n,), converged (n,) bool).

    `lam` is a scalar or one value per problem. Every problem stops as soon as its own
    objective change is <= tol. The problems are spread over numba's threads.
    """
    n = len(corr)
    lam = np.ascontiguousarray(np.broadcast_to(np.asarray(lam, dtype=float), (n,)))
    return _solve_all(np.ascontiguousarray(gram, dtype=float),
                      np.ascontiguousarray(corr, dtype=float),
                      np.ascontiguousarray(sq_norms, dtype=float), lam, bool(positive),
                      float(tol), int(max_iter), float(rho0), float(growth))


fill_cache(__name__)  # run from the on-disk cache, never from an in-process compile
