"""The k-SSC coefficient step: every point coded over its k neighbours, in memory-bounded chunks."""

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed

from .admm import ADMM, LassoADMM, OutlierADMM, advance_all, solve_each
from .fista import solve_lasso_fista
from .ladmpsap import solve_exact_ladmpsap

SOLVERS = ("relaxed", "exact")
LAM_MODES = ("absolute", "relative", "global")
_CHUNK_BYTES = 64 * 2**20


def _gather(X, rows, indices):
    # X may be float32 (a memory map): the gathered chunk is cast, never all of X.
    A = np.asarray(X[indices], dtype=float)
    x = np.asarray(X[rows], dtype=float)
    return A, x, np.matmul(A, A.transpose(0, 2, 1)), np.einsum("nkd,nd->nk", A, x)


def _solve_chunk(X, rows, indices, lam, solver, positive, l1_ratio, tol, max_iter):
    _, x, gram, corr = _gather(X, rows, indices)
    sq_norms = np.einsum("nd,nd->n", x, x)
    if solver == "relaxed":
        # The elastic net's l2 part joins the smooth part: G + lam (1 - l1_ratio) I.
        if l1_ratio < 1.0:
            gram = gram + (lam * (1.0 - l1_ratio))[:, None, None] * np.eye(gram.shape[1])
        return solve_lasso_fista(gram, corr, sq_norms, lam * l1_ratio, positive=positive,
                                 tol=tol, max_iter=max_iter)
    return solve_exact_ladmpsap(gram, corr, sq_norms, lam, positive=positive, max_iter=max_iter)


def _chunk_scale(X, rows, indices, positive, outlier_gamma):
    """lambda_max of each point: the smallest lam giving all-zero codes (outlier: also over
    the identity atoms I / gamma)."""
    corr = np.einsum("nkd,nd->nk", np.asarray(X[indices], dtype=float),
                     np.asarray(X[rows], dtype=float))
    scale = corr.max(axis=1) if positive else np.abs(corr).max(axis=1)
    if outlier_gamma is not None:
        scale = np.maximum(scale, np.abs(X[rows]).max(axis=1) / outlier_gamma)
    return scale


def penalty(X, indices, lam, lam_mode, *, positive, outlier_gamma=None, chunk_size):
    """Per-point l1 weight (n,): lam ("absolute"), lam * lambda_max_i ("relative"), or
    lam * min_i lambda_max_i ("global": Elhamifar and Vidal's lam0 = 1 / alpha scaled)."""
    n = indices.shape[0]
    if lam_mode == "absolute":
        return np.full(n, float(lam))
    scale = np.concatenate([
        _chunk_scale(X, np.arange(s, min(s + chunk_size, n)), indices[s:s + chunk_size],
                     positive, outlier_gamma) for s in range(0, n, chunk_size)])
    # A point with lambda_max <= 0 gets the zero code under any lam: it must not set the
    # scale (1 stands in for it, and for a data set of such points).
    positive_scale = scale > 0
    if lam_mode == "global":
        return np.full(n, lam * (scale[positive_scale].min() if positive_scale.any() else 1.0))
    return lam * np.where(positive_scale, scale, 1.0)


def outlier_gamma(X, lam):
    """gamma of the outlier term: 1 / (lam * max_j ||x_j||_1) (their alpha / max_j ||x_j||_1)."""
    return 1.0 / (lam * max(np.abs(X).sum(axis=1).max(), np.finfo(float).tiny))


def _admm_problem(X, rows, indices, lam_rows, lam, solver, positive, l1_ratio, gamma, state):
    A, x, gram, corr = _gather(X, rows, indices)
    mu1, mu2, q = 1.0 / (lam_rows * l1_ratio), 1.0 / lam, (1.0 - l1_ratio) / l1_ratio
    if solver.outlier:
        return OutlierADMM(A, x, gram, corr, mu1, mu2, gamma, q, positive=positive, state=state)
    return LassoADMM(gram, corr, mu1, mu2, q, affine=solver.affine, positive=positive,
                     state=state)


def _admm_each(*args):
    solver = args[5]
    return solve_each(_admm_problem(*args, None), solver.tol, solver.max_iter)


def _admm_advance(start, target, state, *args):
    solver = args[5]
    problem = _admm_problem(*args, state)
    reached, met = advance_all(problem, start, target, solver.tol, solver.max_iter)
    return problem.state, reached, met


def _run(tasks, n_jobs, progress=None):
    """Results of the delayed `tasks`, in order; `progress(done, total)` after each one."""
    if n_jobs is None or n_jobs == 1:
        solved = (f(*a, **kw) for f, a, kw in tasks)
    else:
        solved = Parallel(n_jobs=n_jobs, return_as="generator")(tasks)
    parts = []
    for part in solved:
        parts.append(part)
        if progress is not None:
            progress(len(parts), len(tasks))
    return parts


def _admm_coefficients(X, indices, lam, lam_rows, solver, positive, l1_ratio, gamma, spans,
                       n_jobs, progress=None):
    def args(span):
        rows = np.arange(*span)
        return (X, rows, indices[rows], lam_rows[rows], lam, solver, positive, l1_ratio, gamma)

    if solver.stopping == "each":
        return _run([delayed(_admm_each)(*args(span)) for span in spans], n_jobs, progress)
    # Their rule over all chunks: the first iteration at which every chunk's largest change
    # is <= tol. Each round brings the chunks behind up to the furthest one and on to their
    # next such iteration; chunks keep only their iterates between rounds (O(n k) memory).
    states = [None] * len(spans)
    reached = [0] * len(spans)
    met = [False] * len(spans)
    target = 0
    while True:
        todo = [c for c in range(len(spans))
                if reached[c] < solver.max_iter and (reached[c] < target or not met[c])]
        if not todo:
            break
        parts = _run([delayed(_admm_advance)(reached[c], target, states[c], *args(spans[c]))
                      for c in todo], n_jobs)
        for c, (state, it, ok) in zip(todo, parts, strict=True):
            states[c], reached[c], met[c] = state, it, ok
        target = max(reached)
        if all(r == target and ok for r, ok in zip(reached, met, strict=True)):
            break
    n_iter = max(reached)
    converged = all(met) and n_iter == min(reached)
    if progress is not None:
        progress(len(spans), len(spans))
    return [(state["c"], np.full(len(state["c"]), n_iter), np.full(len(state["c"]), converged))
            for state in states]


def kssc_coefficients(X, indices, lam, *, solver="relaxed", positive=True, lam_mode="absolute",
                      l1_ratio=1.0, tol=1e-6, max_iter=200, chunk_size=None, n_jobs=None,
                      progress=None):
    """Code every row of `X` over its neighbours `indices` (n, k).

    Point i: min_z lam_i (l1_ratio ||z||_1 + (1 - l1_ratio)/2 ||z||^2) + 1/2 ||x_i - A_i^T z||^2
    (relaxed, FISTA; l1_ratio = 1 in the exact model), lam_i from `lam` and `lam_mode`
    (`penalty`). `solver` is "relaxed", "exact" or an `ADMM` (its own model, tol and
    max_iter; `tol` and `max_iter` here are ignored for it).

    Returns (coef (n, k), n_iter (n,), converged (n,)). The work is split into chunks of
    `chunk_size` points (default: about 64 MiB of gathered neighbours each), solved in turn
    or in parallel with joblib when `n_jobs` is set (any joblib backend, e.g. dask).
    `progress(done, total)`, if given, is called with the number of chunks solved so far.
    """
    n, k = indices.shape
    if chunk_size is None:
        chunk_size = int(max(1, min(n, _CHUNK_BYTES // (8 * k * max(X.shape[1], k)))))
    spans = [(s, min(s + chunk_size, n)) for s in range(0, n, chunk_size)]
    if isinstance(solver, ADMM):
        gamma = outlier_gamma(X, lam) if solver.outlier else None
        lam_rows = penalty(X, indices, lam, lam_mode, positive=positive, outlier_gamma=gamma,
                           chunk_size=chunk_size)
        parts = _admm_coefficients(X, indices, lam, lam_rows, solver, positive, l1_ratio, gamma,
                                   spans, n_jobs, progress)
    else:
        lam_rows = penalty(X, indices, lam, lam_mode, positive=positive, chunk_size=chunk_size)
        parts = _run([delayed(_solve_chunk)(X, np.arange(a, b), indices[a:b], lam_rows[a:b],
                                            solver, positive, l1_ratio, tol, max_iter)
                      for a, b in spans], n_jobs, progress)
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
