"""LADMPSAP (linearised ADMM) for the exact k-SSC problem, one compiled kernel per point.

Each problem i is  min_z lam * ||z||_1 + 1/2 * ||e||^2  s.t.  x_i = A_i^T z + e,
with multiplier y. The noise e and multiplier y stay in the span of the rows of
B_i = [A_i; x_i], so they are carried as coefficient vectors over B_i and every product
goes through the (k+1) x (k+1) Gram matrix H_i = B_i B_i^T. The products H [z; -1], H e and
H y are kept up to date from the (sparse) new z, so an iteration costs O(k nnz(z)).

Constants follow the paper's column-parallel code (`par_helper_exact`, docs/protocol.md 1.4):
mu_0 = 0.5, mu_max = 10, growth 1.1, rho = 1.2 ||A_i||_2^2, stopping tests normalised by
||A_i||_2, eps_primal = 1e-3, eps_change = 1e-4, 200 iterations, e updated with the new z.
The change test is that code's with its z term repaired: it computes
mu max(sqrt(rho) ||z - z||, ||e - e_prev||) / ||A_i||_2, whose z term is identically 0;
ours takes z - z_prev there, as the authors' `ssc_exact` does. It is neither that code's
test nor the paper's (appendix "Solving Exact kSSC via LADMPSAP": sqrt(rho) on both terms,
normalised by ||X_i||_F, with mu_0 = 0.1, mu_max = 1, rho = ||X_i||_F).
"""

import numpy as np
from numba import prange

from ._kernels import fill_cache, jit, parallel_jit, prox, sparse_matvec


@jit
def ladmpsap_point(H, lam, positive, tol_primal, tol_change, max_iter, mu0, mu_max, growth, z,
                   work):
    """Solve one problem into `z` (k,) from H (k+1, k+1) = [[G, b], [b^T, c]]; `work` is
    (6, k+1) scratch. Returns (n_iter, converged)."""
    k = z.size
    K = k + 1
    spectral_sq = max(np.linalg.eigvalsh(H[:k, :k])[k - 1], np.finfo(np.float64).tiny)
    rho = 1.2 * spectral_sq
    norm = np.sqrt(spectral_sq)
    zt, Hzt, e, He, y, Hy = work[0], work[1], work[2], work[3], work[4], work[5]
    z[:] = 0.0
    zt[:] = 0.0
    zt[k] = -1.0
    for m in range(K):
        Hzt[m] = -H[k, m]
    e[:] = 0.0
    He[:] = 0.0
    y[:] = 0.0
    Hy[:] = 0.0
    mu = mu0
    for it in range(1, max_iter + 1):
        dz_sq = 0.0
        for m in range(k):
            grad = Hzt[m] + He[m] + Hy[m] / mu
            z_new = prox(z[m] - mu / rho * grad, lam / rho, positive)
            dz_sq += (z_new - z[m]) ** 2
            z[m] = z_new
            zt[m] = z_new
        sparse_matvec(H, zt, Hzt)
        de_sq = 0.0
        primal_sq = 0.0
        shrink = 1.0 / (1.0 / mu + 1.0)
        for m in range(K):
            e_new = (-zt[m] - y[m] / mu) * shrink
            He_new = (-Hzt[m] - Hy[m] / mu) * shrink
            de_sq += (e_new - e[m]) * (He_new - He[m])
            e[m] = e_new
            He[m] = He_new
        for m in range(K):
            primal_sq += (zt[m] + e[m]) * (Hzt[m] + He[m])
        change = mu * max(np.sqrt(rho * dz_sq), np.sqrt(max(de_sq, 0.0))) / norm
        primal = np.sqrt(max(primal_sq, 0.0)) / norm
        for m in range(K):
            y[m] += mu * (zt[m] + e[m])
            Hy[m] += mu * (Hzt[m] + He[m])
        mu = min(mu_max, (growth if change < tol_change else 1.0) * mu)
        if primal < tol_primal and change < tol_change:
            return it, True
    return max_iter, False


@parallel_jit
def _solve_all(gram, corr, sq_norms, lam, positive, tol_primal, tol_change, max_iter, mu0,
               mu_max, growth):
    n, k = corr.shape
    coef = np.zeros((n, k))
    n_iter = np.zeros(n, dtype=np.int64)
    converged = np.zeros(n, dtype=np.bool_)
    for i in prange(n):
        H = np.empty((k + 1, k + 1))
        H[:k, :k] = gram[i]
        H[:k, k] = corr[i]
        H[k, :k] = corr[i]
        H[k, k] = sq_norms[i]
        n_iter[i], converged[i] = ladmpsap_point(H, lam[i], positive, tol_primal, tol_change,
                                                 max_iter, mu0, mu_max, growth, coef[i],
                                                 np.empty((6, k + 1)))
    return coef, n_iter, converged


def solve_exact_ladmpsap(gram, corr, sq_norms, lam, *, positive=False, tol_primal=1e-3,
                         tol_change=1e-4, max_iter=200, mu0=0.5, mu_max=10.0, growth=1.1):
    """Solve all problems; return (coef (n, k), n_iter (n,), converged (n,) bool)."""
    n = len(corr)
    lam = np.ascontiguousarray(np.broadcast_to(np.asarray(lam, dtype=float), (n,)))
    return _solve_all(np.ascontiguousarray(gram, dtype=float),
                      np.ascontiguousarray(corr, dtype=float),
                      np.ascontiguousarray(sq_norms, dtype=float), lam, bool(positive),
                      float(tol_primal), float(tol_change), int(max_iter), float(mu0),
                      float(mu_max), float(growth))


fill_cache(__name__)  # run from the on-disk cache, never from an in-process compile
