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

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import lobpcg
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from ..utils._warnings import warn_caller

# Aggregate until the coarse graph has at most this many points (ARPACK's range in
# `kssc.spectral`), never below _MIN_PER_VECTOR aggregates per wanted vector (a coarser
# level may merge clusters: it is not taken).
COARSE_SIZE = 50_000
_MIN_PER_VECTOR = 20
# Entries of P restricted at a time (`restrict`): bounds its gathered temporaries (about
# 40 bytes an entry) whatever the graph's size.
_RESTRICT_ENTRIES = 2**22


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
    aggregate a and j of b (w: `weights`, or ones), summed over row chunks of P.

    `columns`: (members, weights) of P's columns when they are not its rows' (a row block
    whose columns are renumbered to the points it touches, `kssc.distributed`)."""
    P = sp.csr_matrix(P)
    column_members, column_weights = (members, weights) if columns is None else columns
    coarse = sp.csr_matrix((n_coarse, n_coarse))
    rows_per_chunk = max(1, _RESTRICT_ENTRIES * P.shape[0] // max(P.nnz, 1))
    for start in range(0, P.shape[0], rows_per_chunk):
        stop = min(start + rows_per_chunk, P.shape[0])
        span = slice(P.indptr[start], P.indptr[stop])
        rows = np.repeat(np.arange(start, stop), np.diff(P.indptr[start:stop + 1]))
        cols = P.indices[span]
        values = P.data[span]
        if weights is not None:
            values = values * weights[rows] * column_weights[cols]
        coarse = coarse + sp.csr_matrix((values, (members[rows], column_members[cols])),
                                        shape=(n_coarse, n_coarse))
    coarse.eliminate_zeros()  # sums that cancel: not an edge of the coarse graph
    return coarse


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


def refine(P, start, tol, max_iter):
    """LOBPCG on P from `start` to the residual tolerance `tol`: (values, vectors), warning
    when it stops short. Iterates in `refine_dtype(tol)` (P's values and `start` cast if
    they are not in it already); its block products are `kssc.spectral._products`' (every
    core, scipy's sums)."""
    from ._products import csr_product, parallel_operator

    dtype = refine_dtype(tol)
    P = with_values(P, dtype)
    start = start.astype(dtype, copy=False)
    # One BLAS thread, as for ARPACK: the block products are n x 3p by 3p x 3p, too thin to
    # share; on the loaded 2-core machine two threads took 3x the CPU time (10^5 points).
    with warnings.catch_warnings(), threadpool_limits(limits=1, user_api="blas"):
        warnings.simplefilter("ignore", UserWarning)  # scipy's own; ours below names the cost
        values, vectors = lobpcg(parallel_operator(P), start, tol=tol, maxiter=max_iter,
                                 largest=True)
    residual = np.linalg.norm(csr_product(P, vectors) - vectors * values, axis=0).max()
    if residual > tol:
        warn_caller(f"the multilevel eigensolver's LOBPCG stopped at residual {residual:.2g} "
                    f"above tol={tol:g} in {max_iter} iterations: the embedding may be "
                    "inaccurate; use solver='arpack'.", ConvergenceWarning)
    return values.astype(np.float64), vectors.astype(np.float64)
