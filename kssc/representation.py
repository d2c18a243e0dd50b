"""The k-SSC coefficient step: every point coded over its k neighbours, in memory-bounded chunks."""

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed

from .fista import solve_lasso_fista
from .ladmpsap import solve_exact_ladmpsap

SOLVERS = ("relaxed", "exact")
_CHUNK_BYTES = 64 * 2**20


def _solve_chunk(X, rows, indices, lam, solver, positive, lam_mode, tol, max_iter):
    A = X[indices]
    x = X[rows]
    gram = np.matmul(A, A.transpose(0, 2, 1))
    corr = np.einsum("nkd,nd->nk", A, x)
    sq_norms = np.einsum("nd,nd->n", x, x)
    if lam_mode == "relative":
        # As SSC's alpha: relative to the smallest lam that makes the solution zero.
        lam_max = corr.max(axis=1) if positive else np.abs(corr).max(axis=1)
        lam = lam * np.maximum(lam_max, np.finfo(float).tiny)
    if solver == "relaxed":
        return solve_lasso_fista(gram, corr, sq_norms, lam, positive=positive, tol=tol,
                                 max_iter=max_iter)
    return solve_exact_ladmpsap(gram, corr, sq_norms, lam, positive=positive, max_iter=max_iter)


def kssc_coefficients(X, indices, lam, *, solver="relaxed", positive=True, lam_mode="absolute",
                      tol=1e-6, max_iter=200, chunk_size=None, n_jobs=None, progress=None):
    """Code every row of `X` over its neighbours `indices` (n, k).

    Returns (coef (n, k), n_iter (n,), converged (n,)). The work is split into chunks of
    `chunk_size` points (default: about 64 MiB of gathered neighbours each), solved in turn
    or in parallel with joblib when `n_jobs` is set (any joblib backend, e.g. dask).
    `progress(done, total)`, if given, is called with the number of chunks solved so far.
    """
    n, k = indices.shape
    if chunk_size is None:
        chunk_size = int(max(1, min(n, _CHUNK_BYTES // (8 * k * max(X.shape[1], k)))))
    starts = range(0, n, chunk_size)
    tasks = (
        delayed(_solve_chunk)(X, np.arange(s, min(s + chunk_size, n)), indices[s:s + chunk_size],
                              lam, solver, positive, lam_mode, tol, max_iter)
        for s in starts
    )
    if n_jobs is None or n_jobs == 1:
        solved = (f(*a, **kw) for f, a, kw in tasks)
    else:
        solved = Parallel(n_jobs=n_jobs, return_as="generator")(tasks)
    parts = []
    for part in solved:
        parts.append(part)
        if progress is not None:
            progress(len(parts), len(starts))
    coef = np.concatenate([p[0] for p in parts])
    n_iter = np.concatenate([p[1] for p in parts])
    converged = np.concatenate([p[2] for p in parts])
    return coef, n_iter, converged


def coefficients_to_sparse(indices, coef, n_samples):
    """Z (n_samples x n_samples, CSR) with Z[i, indices[i, m]] = coef[i, m]; zeros dropped."""
    n, k = indices.shape
    Z = sp.csr_matrix((coef.ravel(), indices.ravel(), np.arange(0, n * k + 1, k)),
                      shape=(n_samples, n_samples))
    Z.sum_duplicates()
    Z.eliminate_zeros()
    return Z
