"""Elhamifar and Vidal's SSC-ADMM over all points, one shared system (their `admmLasso_mat_func.m`
and `admmOutlier_mat_func.m`); the model and stopping rule are those of `kssc.coding.admm`.

Rows convention: row i of the returned C codes point i (the transpose of their C). Memory
is O(N^2), as SSC's.
"""

import numpy as np

from .prox import nonneg_soft_threshold, soft_threshold


def global_scale(X, gamma=None):
    """Their lam0 = min_i max_{j != i} |x_i^T x_j| (with the outlier term, the identity
    atoms I / gamma count too)."""
    G = X @ X.T
    np.fill_diagonal(G, 0.0)
    scale = np.abs(G).max(axis=1)
    if gamma is not None:
        scale = np.maximum(scale, np.abs(X).max(axis=1) / gamma)
    # Points with no correlation get the zero code under any lam: they do not set the scale.
    positive = scale[scale > 0]
    return float(positive.min()) if positive.size else 1.0


def ssc_admm(X, lam_eff, mu2, *, q=0.0, gamma=None, affine=False, positive=False, tol=2e-4,
             max_iter=200):
    """min ||C||_1 + q/2 ||C||^2 + mu1/2 ||X^T - X^T C^T - E/gamma||^2 [+ ||E||_1 with
    `gamma`] [1^T c_i = 1 with `affine`], diag(C) = 0, mu1 = 1 / lam_eff; every point stops
    together once the largest change is <= tol.

    Returns (C (n, n), the iteration count, converged).
    """
    n = X.shape[0]
    G = X @ X.T
    mu1 = 1.0 / lam_eff
    prox = nonneg_soft_threshold if positive else soft_threshold
    outlier = gamma is not None
    if outlier:
        beta, s = mu1 / gamma, mu1 / gamma**2 + mu2
        system = (mu1 - beta**2 / s) * G + (mu2 + q) * np.eye(n)
    else:
        system = mu1 * G + (mu2 + q) * np.eye(n) + (mu2 if affine else 0.0)
    inverse = np.linalg.inv(system)
    rhs = mu1 * G + (mu2 if affine else 0.0)
    C = np.zeros((n, n))          # column j codes point j here (their layout)
    dual = np.zeros((n, n))
    dual_affine = np.zeros(n)
    if outlier:
        E, dual_e, rhs_e = np.zeros(X.shape), np.zeros(X.shape), beta * X
    converged = False
    for it in range(1, max_iter + 1):  # noqa: B007 -- `it` is returned after the loop
        a = rhs + mu2 * C - dual - dual_affine[None, :]
        if outlier:
            b = rhs_e + mu2 * E - dual_e
            Z = inverse @ (a - beta / s * (X @ b.T))
            V = (b - beta * (Z.T @ X)) / s
        else:
            Z = inverse @ a
        np.fill_diagonal(Z, 0.0)
        C_new = prox(Z + dual / mu2, 1.0 / mu2)
        np.fill_diagonal(C_new, 0.0)
        dual += mu2 * (Z - C_new)
        gap = max(np.abs(Z - C_new).max(), np.abs(Z - C).max())
        if outlier:
            E_new = soft_threshold(V + dual_e / mu2, 1.0 / mu2)
            dual_e += mu2 * (V - E_new)
            gap = max(gap, np.abs(V - E_new).max(), np.abs(V - E).max())
            E = E_new
        if affine:
            excess = Z.sum(axis=0) - 1.0
            dual_affine += mu2 * excess
            gap = max(gap, np.abs(excess).max())
        C = C_new
        if gap <= tol:
            converged = True
            break
    return C.T, it, converged
