"""Distributed affinity and N-Cut, mirroring `kssc.spectral` row block by row block.

Z's row blocks are transposed by a shuffle of (row, column, |value|) triples to the blocks
owning the columns, giving W = |Z| + |Z|^T as row blocks. The N-Cut matrix
P = D^-1/2 (W + 0.5 I) D^-1/2 (entries below 1e-6 dropped, d = row sums + 1, docs/protocol.md
1.7) is built per block, entry for entry as `kssc.spectral._normalized_affinity` builds it;
LOBPCG runs on the client with a LinearOperator whose products P V (a block of
n_clusters vectors) are computed by the blocks; its start block is the start vector of
`kssc.spectral.top_eigenvectors` and its cyclic shifts. Yu and Shi's
discretisation then runs on the row blocks of the embedding, the client keeping only
p x p matrices.
"""

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.linalg import svd
from scipy.sparse.linalg import LinearOperator, lobpcg

from ._blocks import RowBlocks, part

_OFFSET = 0.5
_THRESHOLD = 1e-6
# LOBPCG on blocks of n_clusters vectors: one round trip to the workers per iteration, about
# 3 times fewer than ARPACK's single-vector products on N-Cut matrices (docs/scaling.md).
_TOL = 1e-8
_MAX_ITER = 500


def z_block(indices, coef, n):
    """Row block of Z (n_b, n): row i holds point i's coefficients over its neighbours."""
    n_b, k = indices.shape
    # Copies: sum_duplicates sorts in place, and the inputs are results other tasks share.
    Z = sp.csr_matrix((coef.ravel().copy(), indices.ravel().copy(), np.arange(0, n_b * k + 1, k)),
                      shape=(n_b, n))
    Z.sum_duplicates()
    Z.eliminate_zeros()
    return Z


def transpose_pieces(Z, start, bounds):
    """|Z|'s entries as (column, row, value) triples, cut by the block owning the column."""
    coo = Z.tocoo()
    order = np.argsort(coo.col, kind="stable")
    cols, rows, vals = coo.col[order], coo.row[order] + start, np.abs(coo.data[order])
    cuts = np.searchsorted(cols, bounds)
    return [(cols[a:b], rows[a:b], vals[a:b]) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]


def affinity_block(Z, start, stop, *pieces):
    """Row block of W = |Z| + |Z|^T, its thresholded row sums and its number of isolated rows."""
    cols = np.concatenate([p[0] for p in pieces]) - start
    rows = np.concatenate([p[1] for p in pieces])
    vals = np.concatenate([p[2] for p in pieces])
    transposed = sp.csr_matrix((vals, (cols, rows)), shape=(stop - start, Z.shape[1]))
    W = (abs(Z) + transposed).tocsr()
    W.eliminate_zeros()
    W = W.astype(np.float64)
    kept = W.copy()
    kept.data[np.abs(kept.data) <= _THRESHOLD] = 0.0
    kept.eliminate_zeros()
    sums = np.asarray(abs(kept).sum(axis=1)).ravel()
    return W, sums, int((np.diff(W.indptr) == 0).sum())


def ncut_block(W, start, degrees):
    """Row block of P = D^-1/2 (W + 0.5 I) D^-1/2, built as `_normalized_affinity` builds P."""
    n_b, n = W.shape
    W = W.copy()
    W.data[np.abs(W.data) <= _THRESHOLD] = 0.0
    W.eliminate_zeros()
    own = sp.csr_matrix((np.full(n_b, _OFFSET), (np.arange(n_b), np.arange(start, start + n_b))),
                        shape=(n_b, n))
    scale = 1.0 / np.sqrt(degrees)
    return (sp.diags(scale[start:start + n_b]) @ (W + own) @ sp.diags(scale)).tocsr()


def matvec_block(P, v):
    """One block's rows of P v."""
    return P @ v


def unit_embedding(vectors):
    """Rows scaled to unit norm (zero rows stay zero), as `kssc.spectral.discretize` does."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def accumulate(V, cumulative, r):
    """cumulative + |V r|, and the block's smallest entry with its row: (new, min, row)."""
    cumulative = cumulative + np.abs(V @ r)
    i = int(np.argmin(cumulative))
    return cumulative, float(cumulative[i]), V[i]


def assign_block(V, R):
    """Labels argmax(V R) and the block's Y^T V (p x p)."""
    labels = np.argmax(V @ R, axis=1)
    Y = np.zeros((V.shape[0], R.shape[1]))
    Y[np.arange(V.shape[0]), labels] = 1.0
    return labels, Y.T @ V


def affinity(client, indices, coef):
    """W's row blocks, every row's thresholded degree sum (client), isolated points, and the
    bytes the transpose shuffle moves."""
    n = indices.n_rows
    spans = indices.spans()
    Z = [client.submit(z_block, i, c, n)
         for i, c in zip(indices.futures, coef.futures, strict=True)]
    cut = [client.submit(transpose_pieces, z, start, indices.bounds)
           for z, (start, _) in zip(Z, spans, strict=True)]
    pieces = [[part(client, c, b) for c in cut] for b in range(len(spans))]
    moved = sum(client.gather([client.submit(_triple_bytes, c) for c in cut]))
    built = [client.submit(affinity_block, z, start, stop, *pieces[b])
             for b, (z, (start, stop)) in enumerate(zip(Z, spans, strict=True))]
    W = RowBlocks([part(client, w, 0) for w in built], indices.bounds)
    sums = np.concatenate(client.gather([part(client, w, 1) for w in built]))
    isolated = sum(client.gather([part(client, w, 2) for w in built]))
    return W, sums + 2.0 * _OFFSET, isolated, moved


def _minimum(step):
    return step[1:]


def _triple_bytes(pieces):
    return sum(a.nbytes for piece in pieces for a in piece)


def ncut_embedding(client, W, degrees, n_clusters, rng):
    """N-Cut eigenvectors D^-1/2 v (norm sqrt(n), first entry negative), as kssc.spectral."""
    n = W.n_rows
    P = [client.submit(ncut_block, w, start, degrees)
         for w, (start, _) in zip(W.futures, W.spans(), strict=True)]

    def matmat(V):
        return np.concatenate(client.gather([client.submit(matvec_block, p, V) for p in P]))

    operator = LinearOperator((n, n), matvec=matmat, matmat=matmat, dtype=np.float64)
    v0 = rng.uniform(-1.0, 1.0, n)
    start = np.column_stack([np.roll(v0, j) for j in range(n_clusters)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        values, vectors = lobpcg(operator, start, largest=True, tol=_TOL, maxiter=_MAX_ITER)
    vectors = vectors[:, np.argsort(values)[::-1]] / np.sqrt(degrees)[:, None]
    vectors *= np.sqrt(n) / np.linalg.norm(vectors, axis=0)
    return vectors * np.where(vectors[0] > 0, -1.0, 1.0)


def discretize(client, vectors, bounds, rng, max_iter=20):
    """Yu and Shi's discretisation (`kssc.spectral.discretize`) on row blocks: label blocks."""
    n, p = vectors.shape
    V = [client.submit(unit_embedding, vectors[a:b]) for a, b in zip(bounds[:-1], bounds[1:],
                                                                    strict=True)]
    R = np.zeros((p, p))
    R[:, 0] = unit_embedding(vectors[[rng.randint(n)]])[0]
    cumulative = [np.zeros(b - a) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    for j in range(1, p):
        steps = [client.submit(accumulate, v, c, R[:, j - 1])
                 for v, c in zip(V, cumulative, strict=True)]
        cumulative = [part(client, s, 0) for s in steps]
        minima = client.gather([client.submit(_minimum, s) for s in steps])
        R[:, j] = min(minima, key=lambda m: m[0])[1]
    last = 0.0
    for _ in range(max_iter):
        steps = [client.submit(assign_block, v, R) for v in V]
        labels = [part(client, s, 0) for s in steps]
        moment = sum(client.gather([part(client, s, 1) for s in steps]))
        U, s, Vt = svd(moment, full_matrices=False)
        ncut_value = 2.0 * (n - s.sum())
        if abs(ncut_value - last) < np.finfo(float).eps:
            break
        last = ncut_value
        R = Vt.T @ U.T
    return RowBlocks(labels, bounds)
