"""A coarse graph's eigenvectors as the start of the fine eigensolver (the multilevel route).

The N-Cut graphs of k-SSC are nearly disconnected unions of the clusters, so their leading
eigenvectors are close to piecewise-constant over any aggregation of the graph that stays
inside the clusters. Aggregating P's graph (pyamg's standard aggregation: a point and its
neighbours, repeatedly) gives the prolongation A (n x m, one aggregate per column); in the
basis B = D^1/2 A the problem restricted to the aggregates is the m x m symmetric
B^T P B c = l B^T B c, with B^T B = A^T D A diagonal. Its top vectors, prolonged, are an
orthonormal start within a few degrees of the fine eigenvectors (cos >= 0.9995 on the scale
data of 10^4 and 10^5 points), which LOBPCG refines to its residual tolerance in a few block
products (Lanczos from a random vector needs hundreds of single ones).
"""

import numpy as np
import scipy.sparse as sp
from scipy.linalg import eigh
from threadpoolctl import threadpool_limits

# Aggregate until the coarse graph has at most this many points (ARPACK's range in
# `kssc.spectral`), never below _MIN_PER_VECTOR aggregates per wanted vector (a coarser
# level may merge clusters: it is not taken).
COARSE_SIZE = 50_000
_MIN_PER_VECTOR = 20


def aggregate(graph):
    """One aggregation step of a graph: (the aggregate of every point, number of
    aggregates). Only the graph's pattern counts, its diagonal aside (pyamg's standard
    aggregation skips it). pyamg leaves points without edges out; each gets an aggregate of
    its own after the others (else its start vector entries would be zero)."""
    import pyamg

    step = pyamg.aggregation.standard_aggregation(sp.csr_matrix(graph))[0].tocsr()
    counts = np.diff(step.indptr)
    members = np.empty(step.shape[0], dtype=np.int64)
    members[counts == 1] = step.indices
    alone = np.flatnonzero(counts == 0)
    members[alone] = step.shape[1] + np.arange(alone.size)
    return members, step.shape[1] + alone.size


def restrict(P, members, n_coarse, weights=None, columns=None):
    """The n_coarse x n_coarse CSR matrix C[a, b] = sum of w_i P_ij w_j over the points i of
    aggregate a and j of b (w: `weights`, or ones), compiled
    (`kssc.spectral._products.coarse_sum`).

    `columns`: (members, weights) of P's columns when they are not its rows' (a row block
    whose columns are renumbered to the points it touches, `kssc.distributed`)."""
    from ._products import coarse_sum

    P = sp.csr_matrix(P)
    weights = np.ones(P.shape[0]) if weights is None else weights
    column_members, column_weights = (members, weights) if columns is None else columns
    return coarse_sum(P, members, column_members, weights, column_weights, n_coarse)


def aggregation(P, n_vectors, coarse_size=None):
    """The aggregate of every point of P's graph (n ints) and the number of aggregates;
    `coarse_size` None: COARSE_SIZE."""
    coarse_size = COARSE_SIZE if coarse_size is None else coarse_size
    members, n_coarse = np.arange(P.shape[0]), P.shape[0]
    graph = P
    while n_coarse > coarse_size:
        step, n_step = aggregate(graph)
        if n_step < _MIN_PER_VECTOR * n_vectors or n_step == n_coarse:
            break
        members, n_coarse = step[members], n_step
        if n_coarse <= coarse_size:
            break  # the next graph is not needed
        graph = restrict(graph, step, n_coarse)
    return members, n_coarse


def coarse_start(P, degrees, n_vectors, solve, coarse_size=None, dtype=np.float64):
    """Orthonormal n x n_vectors start in `dtype`: the top eigenvectors of P restricted to
    the aggregates, prolonged; `solve(Pc, n_vectors)` returns the coarse (values, vectors)."""
    members, n_coarse = aggregation(P, n_vectors, coarse_size)
    mass = np.bincount(members, weights=degrees, minlength=n_coarse)
    # Q = D^1/2 A diag(mass)^-1/2 (Q[i, members[i]] = q[i]) has orthonormal columns, and
    # (Q^T P Q)[a, b] sums q_i P_ij q_j over i in a, j in b: one pass over P's entries.
    q = np.sqrt(degrees / mass[members])
    coarse = restrict(P, members, n_coarse, weights=q)
    coarse = (coarse + coarse.T) / 2.0
    _, vectors = solve(coarse, n_vectors)
    return (q[:, None] * vectors[members]).astype(dtype, copy=False)


def with_values(P, dtype):
    """P (CSR) with its values in `dtype`, its pattern shared (not copied)."""
    P = sp.csr_matrix(P)
    return sp.csr_matrix((P.data.astype(dtype, copy=False), P.indices, P.indptr), shape=P.shape)


def refine_dtype(tol):
    """float32 when the residual tolerance `tol` is at least 1e-4 (float32's rounding far
    below it: half the memory of LOBPCG's blocks and of P's values), else float64."""
    return np.float32 if tol >= 1e-4 else np.float64


def _ritz(S, AS, width, p):
    """Rayleigh-Ritz on the first `width` columns of S (their images in AS): the top `p`
    (values, coefficients), or None when those columns are numerically dependent. The
    columns are scaled to unit norm first (a converged residual is small, not dependent);
    one that vanishes is left out."""
    # Over all 3p columns (contiguous: BLAS; the unused ones are sliced off after).
    G = (S.T @ S)[:width, :width].astype(np.float64)
    H = (S.T @ AS)[:width, :width].astype(np.float64)
    diagonal = np.diag(G).copy()
    keep = diagonal > np.finfo(S.dtype).eps ** 2 * diagonal[:p].max()
    keep[:p] = True
    scale = 1.0 / np.sqrt(diagonal[keep])
    G = G[np.ix_(keep, keep)] * np.outer(scale, scale)
    H = (H + H.T)[np.ix_(keep, keep)] * np.outer(scale, scale) / 2.0
    if np.linalg.eigvalsh(G)[0] < np.sqrt(np.finfo(S.dtype).eps):
        return None
    values, vectors = eigh(H, G)
    coefficients = np.zeros((width, p))
    coefficients[keep] = vectors[:, ::-1][:, :p] * scale[:, None]
    return values[::-1][:p], coefficients


def refine(P, start, tol, max_iter):
    """LOBPCG (Knyazev 2001, no preconditioner) on P from `start` to the residual tolerance
    `tol`, at most `max_iter` block products after the first: (values, vectors, largest
    residual norm), descending; the caller checks the residual against `tol` (a start far from
    the invariant subspace may not converge, and in float32 its Ritz values can then exceed
    P's eigenvalues).

    Iterates in `refine_dtype(tol)` on two n x 3p blocks S = [X, R, D] and P S: each
    iteration one block product (`kssc.spectral._products.csr_product`, every core), the
    Rayleigh-Ritz Gram matrices by BLAS (one thread: n x 3p by 3p, too thin to share), and
    one compiled pass over the rows for the new X, D, their images and the residuals R
    (`ritz_update`). At 10^6 points (the scale data, p = 10, 4 iterations) it took 3.3 s
    where scipy's `lobpcg` from the same start, about 20 passes over n x p blocks an
    iteration, took 5.2 s (medians of 3, paired), and it holds 8 n x p blocks at its peak."""
    from ._products import csr_product, ritz_update

    dtype = refine_dtype(tol)
    P = with_values(P, dtype)
    n, p = start.shape
    S, AS = np.zeros((n, 3 * p), dtype=dtype), np.zeros((n, 3 * p), dtype=dtype)
    S[:, :p] = start
    AS[:, :p] = csr_product(P, S[:, :p])
    width, residual = p, np.inf
    with threadpool_limits(limits=1, user_api="blas"):
        for iteration in range(max_iter + 1):
            ritz = _ritz(S, AS, width, p)
            if ritz is None and width == 3 * p:  # D has become dependent: without it
                width = 2 * p
                ritz = _ritz(S, AS, width, p)
            if ritz is None:
                if width == p:
                    raise ValueError("the start vectors of the multilevel eigensolver are "
                                     "linearly dependent.")
                break
            values, coefficients = ritz
            residual = ritz_update(S, AS, coefficients, values, width).max()
            if residual <= tol or iteration == max_iter:
                break
            AS[:, p:2 * p] = csr_product(P, S[:, p:2 * p])
            width = 3 * p if width > p else 2 * p
    return values.astype(np.float64), S[:, :p].astype(np.float64), float(residual)
