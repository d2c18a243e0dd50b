"""Batched LADMPSAP (linearised ADMM) for the exact k-SSC problem of many points at once.

Each problem i is  min_z lam * ||z||_1 + 1/2 * ||e||^2  s.t.  x_i = A_i^T z + e,
with multiplier y. The noise e and multiplier y stay in the span of the rows of
B_i = [A_i; x_i], so they are carried as coefficient vectors over B_i and every product
goes through the (k+1) x (k+1) Gram matrix H_i = B_i B_i^T: O(k^2) per iteration instead
of O(k D).

Constants follow the paper's column-parallel code (`par_helper_exact`, docs/protocol.md 1.4):
mu_0 = 0.5, mu_max = 10, growth 1.1, rho = 1.2 ||A_i||_2^2, stopping tests normalised by
||A_i||_2, eps_primal = 1e-3, eps_change = 1e-4, 200 iterations, e updated with the new z.
Unlike that code (whose z-change term is identically 0), the change test uses both the
z and the e change, as the paper writes it.
"""

import numpy as np

from ._batch import ProblemBatch
from .prox import nonneg_soft_threshold, soft_threshold


def _quad_norm(H, w):
    """||B^T w|| for every problem, from the Gram matrix H = B B^T."""
    return np.sqrt(np.maximum(np.einsum("ni,nij,nj->n", w, H, w), 0.0))


def solve_exact_ladmpsap(gram, corr, sq_norms, lam, *, positive=False, tol_primal=1e-3,
                         tol_change=1e-4, max_iter=200, mu0=0.5, mu_max=10.0, growth=1.1):
    """Solve all problems; return (coef (n, k), n_iter (n,), converged (n,) bool)."""
    n, k = corr.shape
    prox = nonneg_soft_threshold if positive else soft_threshold
    lam = np.broadcast_to(np.asarray(lam, dtype=float), (n,)).copy()
    H = np.empty((n, k + 1, k + 1))
    H[:, :k, :k] = gram
    H[:, :k, k] = corr
    H[:, k, :k] = corr
    H[:, k, k] = sq_norms
    spectral_sq = np.maximum(np.linalg.eigvalsh(gram)[:, -1], np.finfo(float).tiny)
    rho = 1.2 * spectral_sq
    norm = np.sqrt(spectral_sq)

    batch = ProblemBatch(n, k, max_iter)
    z = np.zeros((n, k))
    e = np.zeros((n, k + 1))
    y = np.zeros((n, k + 1))
    mu = np.full(n, float(mu0))

    for it in range(1, max_iter + 1):
        w = np.concatenate([z, np.broadcast_to(-1.0, (len(z), 1))], axis=1) + e + y / mu[:, None]
        grad = np.einsum("nij,nj->ni", H[:, :k, :], w)
        z_new = prox(z - (mu / rho)[:, None] * grad, (lam / rho)[:, None])
        e_new = (-np.concatenate([z_new, np.broadcast_to(-1.0, (len(z), 1))], axis=1)
                 - y / mu[:, None]) / (1.0 / mu + 1.0)[:, None]
        dz = np.linalg.norm(z_new - z, axis=1)
        de = _quad_norm(H, e_new - e)
        change = mu * np.maximum(np.sqrt(rho) * dz, de) / norm
        primal_w = np.concatenate([z_new, np.broadcast_to(-1.0, (len(z), 1))], axis=1) + e_new
        primal = _quad_norm(H, primal_w) / norm
        z, e = z_new, e_new
        y = y + mu[:, None] * primal_w
        mu = np.minimum(mu_max, np.where(change < tol_change, growth, 1.0) * mu)

        done = (primal < tol_primal) & (change < tol_change)
        if done.any():
            batch.finish(done, z, it)
            keep = ~done
            if batch.drop(keep):
                break
            H, z, e, y, mu = H[keep], z[keep], e[keep], y[keep], mu[keep]
            rho, norm, lam = rho[keep], norm[keep], lam[keep]
    return batch.result(z)
