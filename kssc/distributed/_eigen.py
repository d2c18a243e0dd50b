"""LOBPCG whose iterate lives in row blocks on the workers; the client holds small matrices only.

Knyazev's LOBPCG for the largest eigenpairs of a symmetric operator given as row blocks.
Every n-row quantity (the iterate X, the residuals R, the search directions P and their
products with the operator) stays where its block lives; the client receives the
m x m Gram matrices of S = [X, R, P] and of S against its product (m <= 3 p for p vectors),
solves the Rayleigh-Ritz problem and sends back the m x p coefficients. A product A V moves
only a halo: block b receives, from every block c, the rows of V at the columns of b's
operator rows that c owns (`HaloOperator`).

The Rayleigh-Ritz step orthonormalises S through its Gram matrix with the columns scaled to
unit norm, dropping directions whose Gram eigenvalue falls below `cutoff` times the largest
(R and P become nearly dependent as the iteration converges): `_CUTOFF`, or for an iterate
in float32 `_EPS_FACTOR` times its machine epsilon (the Gram matrices of float32 blocks carry
errors of that order; kept, such a direction is scaled up by the inverse square root of its
eigenvalue and the iterate diverged, on a noisy 3,000-point union, to inf in 40 iterations).
Products with the operator are updated implicitly, as in scipy's `lobpcg`.
"""

import numpy as np
import scipy.linalg
from joblib import cpu_count

from ..coding.representation import numba_threads
from ..spectral._products import csr_product

_CUTOFF = 1e-12
_EPS_FACTOR = 100


def cutoff(dtype):
    """The smallest Gram eigenvalue, relative to the largest, that Rayleigh-Ritz keeps for an
    iterate of `dtype`."""
    return max(_CUTOFF, _EPS_FACTOR * float(np.finfo(dtype).eps))


def take(block, local):
    """Rows `local` of a block."""
    return block[local]


def take_residual(checked, local):
    """Rows `local` of a block's residual (`residual`'s first output)."""
    return checked[0][local]


def halo_product(operator_block, *pieces):
    """One block's rows of A V from the halo rows of V, in the operator's column order: the
    single machine's compiled product (`kssc.spectral._products.csr_product`, 0.89-0.96 s
    against scipy's 1.21-1.43 s for 500,000 rows of 40 entries times 14 float32 columns on
    one thread) on the worker's share of the cores (`kssc.distributed._worker_tuning`)."""
    with numba_threads(cpu_count()):
        return csr_product(operator_block, np.concatenate(pieces))


def _width_and_dtype(block):
    return block.shape[1], block.dtype


def residual(state, values):
    """R = A X - X diag(values) of this block's state (X, A X, P, A P), in X's dtype."""
    X, AX = state[0], state[1]
    return (AX - X * values.astype(X.dtype),)


def grams(state, checked, AR):
    """S^T S and S^T (A S) of this block in float64, S = [X, R, P] (P omitted while None).

    Block by block (S is never stacked: a copy of 3 n_b p entries, twice, cost more than the
    products), the upper blocks only: both matrices are symmetric (A is), and the client
    symmetrises H anyway."""
    S, AS = _basis(state, checked, AR)
    widths = [s.shape[1] for s in S]
    cuts = np.concatenate([[0], np.cumsum(widths)])
    G = np.zeros((cuts[-1], cuts[-1]))
    H = np.zeros((cuts[-1], cuts[-1]))
    for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:], strict=True)):
        for j in range(i, len(S)):
            c, d = cuts[j], cuts[j + 1]
            G[a:b, c:d] = S[i].T @ S[j]
            H[a:b, c:d] = S[i].T @ AS[j]
            G[c:d, a:b], H[c:d, a:b] = G[a:b, c:d].T, H[a:b, c:d].T
    return G, H


def update(state, checked, AR, C):
    """The next state: P = [R, P] C' (C' = C less its rows for X), X = X C_x + P, and their
    products with the operator, updated the same way (in X's dtype)."""
    X, AX, P, AP = state
    C = C.astype(X.dtype, copy=False)
    if checked is None:
        return X @ C, AX @ C, None, None
    w = X.shape[1]
    R, C_x, C_r = checked[0], C[:w], C[w:2 * w]
    P, AP = (R @ C_r, AR @ C_r) if P is None else (R @ C_r + P @ C[2 * w:],
                                                 AR @ C_r + AP @ C[2 * w:])
    return X @ C_x + P, AX @ C_x + AP, P, AP


def _basis(state, checked, AR):
    """S and A S as lists of column blocks: [X], then [X, R], then [X, R, P]."""
    X, AX, P, AP = state
    if checked is None:
        return [X], [AX]
    if P is None:
        return [X, checked[0]], [AX, AR]
    return [X, checked[0], P], [AX, AR, AP]


def rayleigh_ritz(G, H, p, cut=_CUTOFF):
    """Largest p Ritz values (descending) and coefficients C (C^T G C = I) of the pencil (H, G),
    dropping the directions of G's eigenvalues below `cut` times its largest."""
    H = (H + H.T) / 2.0
    scale = np.sqrt(np.diag(G))
    keep = scale > 0
    scale, G, H = scale[keep], G[np.ix_(keep, keep)], H[np.ix_(keep, keep)]
    G = G / scale[:, None] / scale[None, :]
    H = H / scale[:, None] / scale[None, :]
    gram_values, gram_vectors = scipy.linalg.eigh(G)
    kept = gram_values > cut * gram_values[-1]
    basis = gram_vectors[:, kept] / np.sqrt(gram_values[kept])
    values, vectors = scipy.linalg.eigh(basis.T @ H @ basis)
    top = np.argsort(values)[::-1][:p]
    C = np.zeros((keep.size, top.size))
    C[keep] = (basis @ vectors[:, top]) / scale[:, None]
    return values[top], C


class HaloOperator:
    """A symmetric n x n operator as row blocks whose columns are renumbered to their halo.

    Parameters
    ----------
    blocks : list of distributed.Future
        Block b's rows, a CSR matrix whose column j is the j-th global column block b
        touches, in increasing order.
    halo : list of list of (int, distributed.Future)
        For block b, the (owner c, local row indices in c) of those columns, in c's order;
        only owners with at least one column appear.
    """

    def __init__(self, blocks, halo):
        self.blocks, self.halo = blocks, halo

    def matmat(self, client, V, take_rows=take):
        """Row blocks of A V for V given as row blocks (futures; `take_rows(V[c], local)`
        extracts the rows of V[c] that a block needs)."""
        return [client.submit(halo_product, block,
                              *[client.submit(take_rows, V[c], local) for c, local in pieces])
                for block, pieces in zip(self.blocks, self.halo, strict=True)]


def lobpcg(client, operator, start, n_wanted, tol, max_iter):
    """The `n_wanted` largest eigenpairs of `operator`, from the row blocks `start` (futures of
    n_b x m, m >= n_wanted: the extra vectors speed up the convergence of the wanted ones).

    Returns
    -------
    values : ndarray of shape (n_wanted,)
        Ritz values, descending.
    X : list of distributed.Future
        Row blocks of the orthonormal Ritz vectors (n_b x n_wanted).
    converged : bool
        Whether the wanted residual norms reached `tol` within `max_iter` iterations.
    n_iter : int
        Iterations run; the operator was applied n_iter + 2 times (to the start, and to the
        residual of every iterate, the last one's included).
    """
    AX = operator.matmat(client, start)
    states = [client.submit(tuple, [x, a, None, None]) for x, a in zip(start, AX, strict=True)]
    absent = [None] * len(states)  # no residuals or products yet: S = X
    G, H = _summed_grams(client, states, absent, absent)
    first, dtype = client.submit(_width_and_dtype, start[0]).result()
    cut = cutoff(dtype)
    values, C = rayleigh_ritz(G, H, first, cut)
    width = C.shape[1]  # below the start's width if the start was rank-deficient
    states = [client.submit(update, state, None, None, C) for state in states]
    for n_iter in range(max_iter + 1):
        checked = [client.submit(residual, state, values) for state in states]
        AR = operator.matmat(client, checked, take_rows=take_residual)
        G, H = _summed_grams(client, states, checked, AR)
        norms = np.sqrt(np.diag(G)[width:width + n_wanted])
        if norms.max() <= tol or n_iter == max_iter:
            X = [client.submit(_leading, state, n_wanted) for state in states]
            return values[:n_wanted], X, bool(norms.max() <= tol), n_iter
        values, C = rayleigh_ritz(G, H, width, cut)
        states = [client.submit(update, state, c, a, C)
                  for state, c, a in zip(states, checked, AR, strict=True)]
        width = C.shape[1]


def _summed_grams(client, states, checked, AR):
    parts = client.gather([client.submit(grams, state, c, a)
                           for state, c, a in zip(states, checked, AR, strict=True)])
    return sum(g for g, _ in parts), sum(h for _, h in parts)


def _leading(state, n_columns):
    return state[0][:, :n_columns]
