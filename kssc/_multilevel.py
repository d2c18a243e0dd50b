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

from ._warnings import warn_caller

# Aggregate until the coarse graph has at most this many points (ARPACK's range in
# `kssc.spectral`), never below _MIN_PER_VECTOR aggregates per wanted vector (a coarser
# level may merge clusters: it is not taken).
COARSE_SIZE = 50_000
_MIN_PER_VECTOR = 20


def aggregate(graph):
    """One aggregation step of a graph without its diagonal: (n x m CSR, one 1 per row).
    pyamg leaves points without edges out; each gets an aggregate of its own (else its
    start vector entries would be zero)."""
    import pyamg

    step = pyamg.aggregation.standard_aggregation(graph)[0].tocsr().astype(np.float64)
    alone = np.flatnonzero(np.diff(step.indptr) == 0)
    extra = sp.csr_matrix((np.ones(alone.size), (alone, np.arange(alone.size))),
                          shape=(step.shape[0], alone.size))
    return sp.hstack([step, extra], format="csr")


def aggregation(P, n_vectors, coarse_size=None):
    """Prolongation A (n x m CSR, A[i, a] = 1 if point i is in aggregate a) of P's graph;
    `coarse_size` None: COARSE_SIZE."""
    coarse_size = COARSE_SIZE if coarse_size is None else coarse_size
    graph = sp.csr_matrix(P, copy=True)
    graph.setdiag(0.0)
    graph.eliminate_zeros()
    A = sp.identity(P.shape[0], format="csr")
    while graph.shape[0] > coarse_size:
        step = aggregate(graph)
        if step.shape[1] < _MIN_PER_VECTOR * n_vectors or step.shape[1] == graph.shape[0]:
            break
        A = (A @ step).tocsr()
        if step.shape[1] <= coarse_size:
            break  # the next graph is not needed
        graph = (step.T @ graph @ step).tocsr()
        graph.setdiag(0.0)
        graph.eliminate_zeros()
    return A


def coarse_start(P, degrees, n_vectors, solve, coarse_size=None):
    """Orthonormal n x n_vectors start: the top eigenvectors of P restricted to the
    aggregates, prolonged; `solve(Pc, n_vectors)` returns the coarse (values, vectors)."""
    A = aggregation(P, n_vectors, coarse_size)
    members = A.indices  # one aggregate per row
    mass = np.bincount(members, weights=degrees, minlength=A.shape[1])
    # Q = D^1/2 A diag(mass)^-1/2 (Q[i, members[i]] = q[i]) has orthonormal columns, and
    # (Q^T P Q)[a, b] sums q_i P_ij q_j over i in a, j in b: one pass over P's entries.
    q = np.sqrt(degrees / mass[members])
    P = sp.csr_matrix(P)
    rows = np.repeat(np.arange(P.shape[0]), np.diff(P.indptr))
    coarse = sp.csr_matrix((P.data * q[rows] * q[P.indices],
                            (members[rows], members[P.indices])), shape=(A.shape[1],) * 2)
    coarse = (coarse + coarse.T) / 2.0
    _, vectors = solve(coarse, n_vectors)
    return q[:, None] * vectors[members]


def refine(P, start, tol, max_iter):
    """LOBPCG on P from `start` to the residual tolerance `tol`: (values, vectors), warning
    when it stops short."""
    # One BLAS thread, as for ARPACK: the block products are n x 3p by 3p x 3p, too thin to
    # share; on the loaded 2-core machine two threads took 3x the CPU time (10^5 points).
    with warnings.catch_warnings(), threadpool_limits(limits=1, user_api="blas"):
        warnings.simplefilter("ignore", UserWarning)  # scipy's own; ours below names the cost
        values, vectors = lobpcg(P, start, tol=tol, maxiter=max_iter, largest=True)
    residual = np.linalg.norm(P @ vectors - vectors * values, axis=0).max()
    if residual > tol:
        warn_caller(f"the multilevel eigensolver's LOBPCG stopped at residual {residual:.2g} "
                    f"above tol={tol:g} in {max_iter} iterations: the embedding may be "
                    "inaccurate; use solver='arpack'.", ConvergenceWarning)
    return values, vectors
