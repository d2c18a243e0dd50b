"""The coefficient step's compiled drivers: per point, the Gram matrix of its k neighbours
from X, then its solver, all in local k-vectors.

A chunk of points is (X, rows (n,), indices (n, k)); point i of the chunk is row `rows[i]`
coded over the rows `indices[i]`. `solve_range` works through the points [lo, hi) in turn
(for joblib workers: one thread each); `solve_blocks` spreads blocks of points over numba's
threads. `method` and `options` select the solver:

- FISTA: options (tol, rho0, growth); weight = l1 weight, ridge = l2 weight per point.
- LADMPSAP: options (tol_primal, tol_change, mu0, mu_max, growth); weight = lam per point.
- ADMM (each point stops on its own change): options (tol, mu2, q, gamma, affine, outlier);
  weight = mu1 per point.

The ADMM "all" rule stops a chunk's points together: `admm_setup_*` builds every point's
system once per round, `admm_segment_*` runs a stretch of iterations of every point, one
point after another, and says at which of them every change was <= tol.
"""

import numpy as np
from numba import prange

from ._kernels import fill_cache, gram_point, jit, matvec, parallel_jit, prox
from .fista import fista_point
from .ladmpsap import ladmpsap_point

FISTA, LADMPSAP, ADMM_EACH = 0, 1, 2


@jit
def admm_setup_point(gram, corr, mu1, mu2, q, gamma, affine, outlier, inverse, rhs):
    """The point's k x k system inverse and right-hand side (`inverse`, `rhs` are filled)."""
    k = corr.size
    if outlier:
        s = mu1 / gamma**2 + mu2
        scale, shift = mu1 - mu1**2 / gamma**2 / s, 0.0
    else:
        scale, shift = mu1, (mu2 if affine else 0.0)
    system = np.empty((k, k))
    for p in range(k):
        for m in range(k):
            system[p, m] = scale * gram[p, m] + shift
        system[p, p] += mu2 + q
        rhs[p] = mu1 * corr[p] + shift
    inverse[:, :] = np.linalg.inv(system)


@jit
def admm_step_point(X, row, neighbours, inverse, rhs, mu1, mu2, gamma, affine, outlier,
                    positive, c, dual, dual_affine, e, dual_e, work_k, work_d):
    """One iteration of one point (state c, dual, dual_affine (1,), e, dual_e updated in
    place; e and dual_e are empty without the outlier term). Returns the largest change."""
    k = c.size
    v, u = work_k[0], work_k[1]
    for m in range(k):
        v[m] = rhs[m] + mu2 * c[m] - dual[m] - dual_affine[0]
    if outlier:
        beta, s = mu1 / gamma, mu1 / gamma**2 + mu2
        b, ve = work_d[0], work_d[1]
        x = X[row]
        D = x.size
        for d in range(D):
            b[d] = beta * x[d] + mu2 * e[d] - dual_e[d]
        for m in range(k):
            a = X[neighbours[m]]
            t = 0.0
            for d in range(D):
                t += a[d] * b[d]
            v[m] -= beta / s * t
    matvec(inverse, v, u)
    gap = 0.0
    for m in range(k):
        c_new = prox(u[m] + dual[m] / mu2, 1.0 / mu2, positive)
        dual[m] += mu2 * (u[m] - c_new)
        gap = max(gap, abs(u[m] - c_new), abs(u[m] - c[m]))
        c[m] = c_new
    if outlier:
        for d in range(D):
            ve[d] = b[d]
        for m in range(k):
            a = X[neighbours[m]]
            for d in range(D):
                ve[d] -= beta * u[m] * a[d]
        for d in range(D):
            v_d = ve[d] / s
            e_new = prox(v_d + dual_e[d] / mu2, 1.0 / mu2, False)
            dual_e[d] += mu2 * (v_d - e_new)
            gap = max(gap, abs(v_d - e_new), abs(v_d - e[d]))
            e[d] = e_new
    if affine:
        excess = -1.0
        for m in range(k):
            excess += u[m]
        dual_affine[0] += mu2 * excess
        gap = max(gap, abs(excess))
    return gap


@jit
def solve_range(lo, hi, method, X, rows, indices, weight, ridge, options, max_iter, positive,
                coef, n_iter, converged):
    """Solve points lo..hi-1 of the chunk into coef, n_iter and converged."""
    k = indices.shape[1]
    H = np.empty((k + 1, k + 1))
    gram = np.empty((k, k))
    corr = np.empty(k)
    work = np.empty((6, k + 1))
    # FISTA's and ADMM's scratch as C-contiguous arrays of their own: a view work[:5, :k]
    # has a non-contiguous layout that keeps numba from vectorising their k-loops (1.8x
    # FISTA's time at k = 20, D = 321).
    fista_work, admm_work = np.empty((5, k)), np.empty((2, k))
    # ADMM's settings and buffers (unused by the other methods).
    outlier = method == ADMM_EACH and options[5] != 0.0
    affine = method == ADMM_EACH and options[4] != 0.0
    inverse, rhs, dual, dual_affine = np.empty((k, k)), np.empty(k), np.empty(k), np.zeros(1)
    D = X.shape[1] if outlier else 0
    e, dual_e, work_d = np.empty(D), np.empty(D), np.empty((2, D))
    for i in range(lo, hi):
        c = gram_point(X, rows[i], indices[i], gram, corr)
        if method == FISTA:
            for m in range(k):
                gram[m, m] += ridge[i]
            n_iter[i], converged[i] = fista_point(gram, corr, c, weight[i], positive, options[0],
                                                  max_iter, options[1], options[2], coef[i],
                                                  fista_work)
        elif method == LADMPSAP:
            H[:k, :k] = gram
            H[:k, k] = corr
            H[k, :k] = corr
            H[k, k] = c
            n_iter[i], converged[i] = ladmpsap_point(H, weight[i], positive, options[0],
                                                     options[1], max_iter, options[2],
                                                     options[3], options[4], coef[i], work)
        else:
            tol, mu2, q, gamma = options[0], options[1], options[2], options[3]
            admm_setup_point(gram, corr, weight[i], mu2, q, gamma, affine, outlier, inverse, rhs)
            z = coef[i]
            z[:] = 0.0
            dual[:] = 0.0
            dual_affine[0] = 0.0
            e[:] = 0.0
            dual_e[:] = 0.0
            n_iter[i], converged[i] = max_iter, False
            for it in range(1, max_iter + 1):
                gap = admm_step_point(X, rows[i], indices[i], inverse, rhs, weight[i], mu2, gamma,
                                      affine, outlier, positive, z, dual, dual_affine, e, dual_e,
                                      admm_work, work_d)
                if gap <= tol:
                    n_iter[i], converged[i] = it, True
                    break


@parallel_jit
def solve_blocks(bounds, method, X, rows, indices, weight, ridge, options, max_iter, positive,
                 coef, n_iter, converged):
    """`solve_range` over the blocks [bounds[b], bounds[b + 1]), in parallel."""
    for b in prange(bounds.size - 1):
        solve_range(bounds[b], bounds[b + 1], method, X, rows, indices, weight, ridge, options,
                    max_iter, positive, coef, n_iter, converged)


@jit
def admm_setup_range(lo, hi, X, rows, indices, mu1, mu2, q, gamma, affine, outlier, inverse,
                     rhs):
    """Every point's system inverse (n, k, k) and right-hand side (n, k), points lo..hi-1."""
    k = indices.shape[1]
    gram, corr = np.empty((k, k)), np.empty(k)
    for i in range(lo, hi):
        gram_point(X, rows[i], indices[i], gram, corr)
        admm_setup_point(gram, corr, mu1[i], mu2, q, gamma, affine, outlier, inverse[i], rhs[i])


@parallel_jit
def admm_setup_blocks(bounds, X, rows, indices, mu1, mu2, q, gamma, affine, outlier, inverse,
                      rhs):
    """`admm_setup_range` over the blocks [bounds[b], bounds[b + 1]), in parallel."""
    for b in prange(bounds.size - 1):
        admm_setup_range(bounds[b], bounds[b + 1], X, rows, indices, mu1, mu2, q, gamma, affine,
                         outlier, inverse, rhs)


@jit
def admm_segment_range(lo, hi, start, stop, X, rows, indices, inverse, rhs, mu1, mu2, gamma,
                       affine, outlier, positive, tol, c, dual, dual_affine, e, dual_e, met):
    """Iterations start + 1 .. stop of points lo..hi-1, one point after another, so that a
    point's candidates stay in cache through them; met[t - start - 1] is cleared where a
    point's largest change exceeds tol (or is NaN) at iteration t."""
    k = indices.shape[1]
    work_k, work_d = np.empty((2, k)), np.empty((2, e.shape[1]))
    for i in range(lo, hi):
        for t in range(stop - start):
            gap = admm_step_point(X, rows[i], indices[i], inverse[i], rhs[i], mu1[i], mu2, gamma,
                                  affine, outlier, positive, c[i], dual[i], dual_affine[i], e[i],
                                  dual_e[i], work_k, work_d)
            if not gap <= tol:
                met[t] = False


@parallel_jit
def admm_segment_blocks(bounds, start, stop, X, rows, indices, inverse, rhs, mu1, mu2, gamma,
                        affine, outlier, positive, tol, c, dual, dual_affine, e, dual_e, met):
    """`admm_segment_range` over the blocks [bounds[b], bounds[b + 1]), in parallel, block b
    clearing met[b]."""
    for b in prange(bounds.size - 1):
        admm_segment_range(bounds[b], bounds[b + 1], start, stop, X, rows, indices, inverse, rhs,
                           mu1, mu2, gamma, affine, outlier, positive, tol, c, dual, dual_affine,
                           e, dual_e, met[b])


@jit
def residual_range(lo, hi, points, X, indices, coef, out):
    """out[i] = ||points[i] - sum_m coef[i, m] X[indices[i, m]]|| for i in [lo, hi), summed
    in float64 (rows read straight from X; zero coefficients and absent indices skipped)."""
    k, D = indices.shape[1], X.shape[1]
    rest = np.empty(D)
    for i in range(lo, hi):
        for d in range(D):
            rest[d] = points[i, d]
        for m in range(k):
            c, j = coef[i, m], indices[i, m]
            if c != 0.0 and j >= 0:
                for d in range(D):
                    rest[d] -= c * X[j, d]
        s = 0.0
        for d in range(D):
            s += rest[d] * rest[d]
        out[i] = np.sqrt(s)


@parallel_jit
def residual_blocks(bounds, points, X, indices, coef, out):
    """`residual_range` over the blocks [bounds[b], bounds[b + 1]), in parallel."""
    for b in prange(bounds.size - 1):
        residual_range(bounds[b], bounds[b + 1], points, X, indices, coef, out)


fill_cache(__name__)  # run from the on-disk cache, never from an in-process compile
