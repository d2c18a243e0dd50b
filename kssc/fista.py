"""Batched FISTA with backtracking for many small lasso problems at once.

Each problem i is  min_z lam_i * ||z||_1 + 1/2 * ||x_i - A_i^T z||^2  (optionally z >= 0),
given through its Gram matrix G_i = A_i A_i^T, correlations b_i = A_i x_i and c_i = ||x_i||^2:
the smooth part is 1/2 z^T G_i z - b_i^T z + c_i / 2. Working on k x k Gram matrices makes an
iteration cost O(k^2) per problem instead of O(k D).

Constants follow the paper's code (`par_helper_relaxed`): rho_0 = 1, growth 1.1, stop when
the objective changes by at most `tol`, at most `max_iter` iterations, rho kept per problem.
"""

import numpy as np

from ._batch import ProblemBatch
from .prox import nonneg_soft_threshold, soft_threshold


def _matvec(G, v):
    return np.matmul(G, v[:, :, None])[:, :, 0]


def _smooth(Gv, v, b, c):
    return 0.5 * np.einsum("ni,ni->n", v, Gv) - np.einsum("ni,ni->n", b, v) + 0.5 * c


def solve_lasso_fista(gram, corr, sq_norms, lam, *, positive=True, tol=1e-6, max_iter=200,
                      rho0=1.0, growth=1.1):
    """Solve all problems; return (coef (n, k), n_iter (n,), converged (n,) bool).

    `lam` is a scalar or one value per problem. Problems leave the active set as soon as
    their own objective change is <= tol, so easy problems cost few iterations.
    """
    n, k = corr.shape
    prox = nonneg_soft_threshold if positive else soft_threshold
    lam = np.broadcast_to(np.asarray(lam, dtype=float), (n,)).copy()
    batch = ProblemBatch(n, k, max_iter)
    G, b, c, lam_a = gram, corr, np.asarray(sq_norms, dtype=float), lam
    z = np.zeros((n, k))
    Gz = np.zeros((n, k))
    j, Gj = z.copy(), Gz.copy()
    alpha = np.ones(n)
    rho = np.full(n, float(rho0))
    F_prev = np.full(n, np.inf)
    # Finished problems are masked out and the arrays compacted only once half are done:
    # copying every array whenever any problem finishes cost a quarter of the run time.
    live = np.ones(n, dtype=bool)

    for it in range(1, max_iter + 1):
        grad = Gj - b
        z_prev, Gz_prev = z, Gz
        z = prox(j - grad / rho[:, None], (lam_a / rho)[:, None])
        Gz = _matvec(G, z)
        # Backtracking, restricted to the problems whose model still underestimates F.
        # For a quadratic smooth part the paper's test F(z) > Q(z, j) is exactly
        # d^T G d > rho ||d||^2 with d = z - j; this form has no cancellation, so it
        # always ends once rho exceeds the largest eigenvalue of G.
        todo = np.arange(len(z))
        while todo.size:
            step = z[todo] - j[todo]
            curvature = np.einsum("ni,ni->n", step, Gz[todo] - Gj[todo])
            bad = curvature > rho[todo] * np.einsum("ni,ni->n", step, step)
            todo = todo[bad]
            rho[todo] *= growth
            z[todo] = prox(j[todo] - grad[todo] / rho[todo, None],
                           (lam_a[todo] / rho[todo])[:, None])
            Gz[todo] = _matvec(G[todo], z[todo])
        F = lam_a * np.abs(z).sum(axis=1) + _smooth(Gz, z, b, c)

        alpha_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * alpha**2))
        beta = ((alpha - 1.0) / alpha_new)[:, None]
        j = z + beta * (z - z_prev)
        Gj = Gz + beta * (Gz - Gz_prev)
        alpha = alpha_new

        done = (np.abs(F - F_prev) <= tol) & live
        F_prev = F
        if done.any():
            batch.finish(done, z, it)
            live &= ~done
            if not live.any():
                break
            if live.sum() <= live.size // 2:
                keep = live
                batch.drop(keep)
                G, b, c, lam_a = G[keep], b[keep], c[keep], lam_a[keep]
                z, Gz, z_prev, Gz_prev = z[keep], Gz[keep], z_prev[keep], Gz_prev[keep]
                j, Gj, alpha, rho, F_prev = j[keep], Gj[keep], alpha[keep], rho[keep], F_prev[keep]
                live = np.ones(keep.sum(), dtype=bool)
    return batch.result(z, live)
