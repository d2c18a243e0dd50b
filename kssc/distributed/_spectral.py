"""Distributed affinity and N-Cut, mirroring `kssc.spectral` row block by row block.

Z's row blocks are transposed by a shuffle of (row, column, |value|) triples to the blocks
owning the columns, giving W = |Z| + |Z|^T as row blocks. The N-Cut matrix
P = D^-1/2 (W + 0.5 I) D^-1/2 (entries below 1e-6 dropped, d = row sums + 1, docs/protocol.md
1.7) is built per block, entry for entry as `spectral._clustering._normalized_affinity` builds it,
with its columns renumbered to the halo of rows the block touches. LOBPCG (`_eigen`) runs
with its iterate in row blocks on the workers, from the coarse graph's eigenvectors
(`_coarse`: the single machine's multilevel route, aggregated block by block) to the
single machine's tolerance; Yu and Shi's discretisation then runs on the row blocks of the
embedding. The client
keeps only small matrices and the per-block bookkeeping, no array with a row per point.
"""

import numpy as np
import scipy.sparse as sp
from scipy.linalg import svd
from sklearn.exceptions import ConvergenceWarning

from ..spectral._clustering import MULTILEVEL_TOL, scale_entries
from ..spectral._multilevel import refine_dtype, with_values
from ..spectral.affinity import max_normalize_rows
from ..spectral.isolation import isolated_points
from ..utils._warnings import warn_caller
from . import _coarse, _eigen
from ._blocks import RowBlocks, concatenate, gather_rows, part, rows_between

_OFFSET = 0.5
_THRESHOLD = 1e-6
# LOBPCG on blocks of n_clusters + _GUARDS vectors, one halo exchange between the workers
# per iteration, to the residual tolerance of the single machine's multilevel route (from a
# random start at 1e-8 it took about 85 iterations on the scale data).
_TOL = MULTILEVEL_TOL
_MAX_ITER = 500
# Extra start vectors (guards): they speed up the wanted vectors' convergence (N = 20,000 of
# the scale data, 10 clusters: 82 iterations with none, 62 with 4, 55 with 10), for work
# per iteration growing with the block's width (4 is the fastest of the three).
_GUARDS = 4
# `halo_columns` marks columns in an n-entry array up to this many marks per stored index.
_MARKS_PER_ENTRY = 16


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
    """Row block of W = |Z| + |Z|^T, its thresholded row sums and its isolated rows (local
    indices, `kssc.spectral.isolation.isolated_points`)."""
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
    return W, sums, isolated_points(W, start)


def ncut_pattern(W, start, bounds):
    """Block rows of W + 0.5 I (entries below the threshold dropped) with their columns
    renumbered to the columns they touch (the halo, in increasing order), and the halo cut
    by the block owning it: (matrix, [local rows in block c for every c])."""
    n_b, n = W.shape
    small = np.abs(W.data) <= _THRESHOLD
    if small.any():  # a copy: W is a result other tasks share
        W = W.copy()
        W.data[small] = 0.0
        W.eliminate_zeros()
    own = sp.csr_matrix((np.full(n_b, _OFFSET), (np.arange(n_b), np.arange(start, start + n_b))),
                        shape=(n_b, n))
    W = (W + own).tocsr()
    cols, compact = halo_columns(W.indices, n)
    W = sp.csr_matrix((W.data, compact, W.indptr), shape=(n_b, cols.size))
    cuts = np.searchsorted(cols, bounds)
    return W, [cols[a:b] - bounds[c] for c, (a, b) in enumerate(zip(cuts[:-1], cuts[1:],
                                                                     strict=True))]


def halo_columns(indices, n):
    """The distinct column indices (increasing) and every index's position among them.

    A mark per column when the n marks are at most _MARKS_PER_ENTRY times the indices (one
    pass, no sort: 15 times faster than `np.unique` at 10^6 rows); a sort otherwise (blocks
    of a graph far larger than themselves)."""
    if n > _MARKS_PER_ENTRY * max(indices.size, 1):
        cols = np.unique(indices)
        return cols, np.searchsorted(cols, indices).astype(indices.dtype)
    marked = np.zeros(n, dtype=bool)
    marked[indices] = True
    cols = np.flatnonzero(marked)
    position = np.cumsum(marked, dtype=indices.dtype)
    position -= 1
    return cols, position[indices]


def ncut_block(W, own_degrees, *halo_degrees, dtype=np.float64):
    """Row block of P = D^-1/2 (W + 0.5 I) D^-1/2 from `ncut_pattern`'s matrix (columns
    numbered by the halo), its values in `dtype`: (s_i w_ij) s_j, as
    `kssc.spectral._clustering._normalized_affinity` computes them."""
    # A copy of the values: W is a result other tasks share.
    P = sp.csr_matrix((W.data.copy(), W.indices, W.indptr), shape=W.shape)
    scale_entries(P, 1.0 / np.sqrt(own_degrees), 1.0 / np.sqrt(np.concatenate(halo_degrees)))
    return with_values(P, dtype)


def column_squares(V, degrees):
    """D^-1/2 V of this block and its squared column norms."""
    V = V / np.sqrt(degrees)[:, None]
    return V, np.einsum("ij,ij->j", V, V)


def scale_columns(V, factors):
    """V with column j multiplied by factors[j]."""
    return V * factors


def unit_embedding(vectors):
    """Rows scaled to unit norm (zero rows stay zero), as `kssc.spectral.discretize` does."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def accumulate(V, cumulative, r):
    """cumulative + |V r| (None: zeros), the block's smallest entry and its row."""
    cumulative = np.abs(V @ r) if cumulative is None else cumulative + np.abs(V @ r)
    i = int(np.argmin(cumulative))
    return cumulative, float(cumulative[i]), V[i]


def assign_block(V, R):
    """Labels argmax(V R) and the block's Y^T V (p x p)."""
    labels = np.argmax(V @ R, axis=1)
    Y = np.zeros((V.shape[0], R.shape[1]))
    Y[np.arange(V.shape[0]), labels] = 1.0
    return labels, Y.T @ V


def affinity(client, indices, coef, max_normalized=False):
    """W's row blocks, the blocks of every row's degree (thresholded row sum + 1), the blocks
    of isolated rows (local indices), their number, and the bytes the transpose moves.
    `max_normalized`: every row of Z divided by its largest absolute entry first (`KSSC`'s
    affinity="max_normalized", row by row)."""
    n = indices.n_rows
    spans = indices.spans()
    Z = [client.submit(z_block, i, c, n)
         for i, c in zip(indices.futures, coef.futures, strict=True)]
    if max_normalized:
        Z = [client.submit(max_normalize_rows, z) for z in Z]
    cut = [client.submit(transpose_pieces, z, start, indices.bounds)
           for z, (start, _) in zip(Z, spans, strict=True)]
    pieces = [[part(client, c, b) for c in cut] for b in range(len(spans))]
    moved = sum(client.gather([client.submit(_triple_bytes, c) for c in cut]))
    built = [client.submit(affinity_block, z, start, stop, *pieces[b])
             for b, (z, (start, stop)) in enumerate(zip(Z, spans, strict=True))]
    W = RowBlocks([part(client, w, 0) for w in built], indices.bounds)
    degrees = RowBlocks([client.submit(np.add, part(client, w, 1), 2.0 * _OFFSET)
                         for w in built], indices.bounds)
    isolated = RowBlocks([part(client, w, 2) for w in built], indices.bounds)
    n_isolated = sum(client.gather([client.submit(len, f) for f in isolated.futures]))
    return W, degrees, isolated, n_isolated, moved


def _minimum(step):
    return step[1:]


def _triple_bytes(pieces):
    return sum(a.nbytes for piece in pieces for a in piece)


def ncut_operator(client, W, degrees, dtype=np.float64):
    """P's row blocks (`ncut_block`, values in `dtype`) as a halo operator, and the rows of
    the iterate one product moves between blocks (halo rows owned by another block)."""
    bounds = W.bounds
    patterns = [client.submit(ncut_pattern, w, start, bounds)
                for w, (start, _) in zip(W.futures, W.spans(), strict=True)]
    locals_ = [part(client, pattern, 1) for pattern in patterns]
    sizes = client.gather([client.submit(_sizes, local) for local in locals_])
    halo, blocks = [], []
    for b, (pattern, local) in enumerate(zip(patterns, locals_, strict=True)):
        pieces = [(c, part(client, local, c)) for c in np.flatnonzero(sizes[b])]
        halo_degrees = [client.submit(_eigen.take, degrees.futures[c], rows)
                        for c, rows in pieces]
        blocks.append(client.submit(ncut_block, part(client, pattern, 0), degrees.futures[b],
                                    *halo_degrees, dtype=dtype))
        halo.append(pieces)
    sizes = np.array(sizes)
    return _eigen.HaloOperator(blocks, halo), int(sizes.sum() - np.trace(sizes))


def _width(block):
    return block.shape[1]


def _sizes(local):
    return np.array([rows.size for rows in local])


def ncut_labels(client, W, degrees, isolated, n_clusters, rng):
    """N-Cut labels as row blocks of W's partition, and the bytes LOBPCG's products moved.

    W and the degrees are first merged into one row block per worker thread (consecutive
    blocks, each group placed on its own worker): an iteration then costs a few tasks per
    group and per pair of groups, however finely X was partitioned. Isolated rows (no
    affinity above the threshold) get the largest cluster's label, the rule of
    `kssc.spectral.spectral_clustering`; unlike it, they stay in the eigenproblem here (their
    labels are replaced after the discretisation)."""
    grouped, grouped_degrees, cuts = _group_blocks(client, W, degrees)
    vectors, moved = ncut_embedding(client, grouped, grouped_degrees, n_clusters, rng)
    labels = discretize(client, vectors, rng)
    blocks = []
    for g, (a, b) in enumerate(zip(cuts[:-1], cuts[1:], strict=True)):
        offset = W.bounds[a]
        blocks += [client.submit(rows_between, labels.futures[g], start - offset, stop - offset)
                   for start, stop in W.spans()[a:b]]
    blocks = canonical_labels(client, RowBlocks(blocks, W.bounds), n_clusters, isolated).futures
    counts = client.gather([client.submit(_linked_counts, b, i, n_clusters)
                            for b, i in zip(blocks, isolated.futures, strict=True)])
    largest = int(np.argmax(sum(counts)))
    blocks = [client.submit(_relabel, b, i, largest)
              for b, i in zip(blocks, isolated.futures, strict=True)]
    return RowBlocks(blocks, W.bounds), moved


def canonical_labels(client, labels, n_clusters, isolated=None):
    """`labels` renumbered so that cluster ids appear in the order of each cluster's first
    point (point 0 is in cluster 0, the first point outside it in cluster 1, ...), isolated
    points left out (`isolated`: row blocks of their local indices; they are labelled after).

    The same partition then has the same ids however it was computed: after a worker was
    lost on the approximate path, the discretisation returned the same partition with the
    ids permuted.
    """
    left_out = isolated.futures if isolated is not None else [None] * len(labels.futures)
    firsts = client.gather([client.submit(_first_points, f, start, n_clusters, i)
                            for f, (start, _), i in zip(labels.futures, labels.spans(), left_out,
                                                        strict=True)])
    order = np.argsort(np.min(firsts, axis=0), kind="stable")
    renumber = np.empty(n_clusters, dtype=np.int64)
    renumber[order] = np.arange(n_clusters)
    return RowBlocks([client.submit(_renumber, f, renumber) for f in labels.futures],
                     labels.bounds)


def _first_points(labels, start, n_clusters, isolated=None):
    """Every cluster's first point in this block (global index; the int64 maximum when it
    has none), isolated rows left out: a cluster's first occurrence in the rows kept, by a
    mask (np.setdiff1d and np.minimum.at took 0.5 s on 500,000 rows, this 0.04 s)."""
    kept = np.ones(labels.size, dtype=bool)
    if isolated is not None:
        kept[isolated] = False
    rows = np.flatnonzero(kept)
    clusters, first_row = np.unique(labels[rows], return_index=True)
    first = np.full(n_clusters, np.iinfo(np.int64).max)
    first[clusters] = start + rows[first_row]
    return first


def _renumber(labels, renumber):
    return renumber[labels]


def _linked_counts(labels, isolated, n_clusters):
    linked = np.ones(labels.size, dtype=bool)
    linked[isolated] = False
    return np.bincount(labels[linked], minlength=n_clusters)


def _relabel(labels, isolated, label):
    labels = labels.copy()
    labels[isolated] = label
    return labels


def _group_blocks(client, W, degrees):
    # The workers as the scheduler lists them now (the client's cached identity can be
    # empty: a fit once failed on it with a modulo by zero).
    threads = client.nthreads()
    workers = sorted(threads)
    n_groups = min(len(W.futures), max(1, sum(threads.values())))
    cuts = np.linspace(0, len(W.futures), n_groups + 1).round().astype(int)
    grouped, grouped_degrees = [], []
    for g, (a, b) in enumerate(zip(cuts[:-1], cuts[1:], strict=True)):
        where = {"workers": [workers[g % len(workers)]], "allow_other_workers": True}
        grouped.append(client.submit(_stack_rows, *W.futures[a:b], **where))
        grouped_degrees.append(client.submit(concatenate, *degrees.futures[a:b], **where))
    return (RowBlocks(grouped, W.bounds[cuts]), RowBlocks(grouped_degrees, W.bounds[cuts]),
            cuts)


def _stack_rows(*blocks):
    return sp.vstack(blocks, format="csr")


def ncut_embedding(client, W, degrees, n_clusters, rng):
    """N-Cut eigenvectors D^-1/2 v as row blocks (norm sqrt(n), first entry negative), as
    `kssc.spectral.ncut_embedding`, and the bytes LOBPCG's products moved between blocks;
    warns when LOBPCG stops short of its tolerance."""
    n = W.n_rows
    # The single machine's precision at this tolerance (float32 at 1e-3): P's values and
    # LOBPCG's blocks, half the bytes every product and Gram matrix reads.
    dtype = refine_dtype(_TOL)
    operator, moved_rows = ncut_operator(client, W, degrees, dtype)
    start = _coarse.coarse_start(client, operator, W, degrees, min(n_clusters + _GUARDS, n - 1),
                                 rng, dtype, tol=_TOL ** 2)
    width = client.submit(_width, start[0]).result()
    _, vectors, converged, n_iter = _eigen.lobpcg(client, operator, start, n_clusters, _TOL,
                                                  _MAX_ITER)
    if not converged:
        warn_caller(f"the N-Cut eigenvectors did not reach the residual tolerance {_TOL:g} in "
                    f"{n_iter} LOBPCG iterations; the labels may be unreliable.",
                    ConvergenceWarning)
    steps = [client.submit(column_squares, v, d)
             for v, d in zip(vectors, degrees.futures, strict=True)]
    norms = np.sqrt(sum(client.gather([part(client, s, 1) for s in steps])))
    V = [part(client, s, 0) for s in steps]
    first = client.submit(_eigen.take, V[0], 0).result()
    factors = np.sqrt(n) / norms * np.where(first > 0, -1.0, 1.0)
    # The coarse matrix's exchange moves (aggregate, q) of each halo row: 16 bytes.
    moved = moved_rows * (width * np.dtype(dtype).itemsize * (n_iter + 2) + 16)
    return RowBlocks([client.submit(scale_columns, v, factors) for v in V], W.bounds), moved


def discretize(client, vectors, rng, max_iter=20):
    """Yu and Shi's discretisation (`kssc.spectral.discretize`) on row blocks: label blocks."""
    n, bounds = vectors.n_rows, vectors.bounds
    V = RowBlocks([client.submit(unit_embedding, v) for v in vectors.futures], bounds)
    first = gather_rows(client, V, [rng.randint(n)])[0]
    p = first.size
    R = np.zeros((p, p))
    R[:, 0] = first
    V = V.futures
    cumulative = [None] * len(V)
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
