"""k-SSC on scipy.sparse rows (TF-IDF and the like) without a dense copy of X.

The cosine metrics need only inner products of unit rows: the neighbour search multiplies
sparse row blocks by X's transpose. The coefficient step codes a chunk of points at a time
from a dense copy of the chunk's rows and their candidates, restricted to the columns where
any of them is non-zero (the others add only zeros to every inner product), and runs the
dense kernels (`kssc.coding.representation.kssc_coefficients`) on it.
"""

import numpy as np
import scipy.sparse as sp

from .coding.admm import ADMM
from .coding.representation import _chunk_scale, code_residuals, kssc_coefficients
from .neighbors.candidates import _check_views, random_candidates
from .utils._validation import check_n_neighbors, normalize_rows, row_norms

# Similarities of one row block of the search, and the dense copy of one coefficient chunk.
_SEARCH_BYTES = 128 * 2**20
_CHUNK_BYTES = 64 * 2**20


def unit_rows(X):
    """X (CSR, float64) with every row scaled to unit norm; zero rows stay zero."""
    norms = row_norms(X)
    return sp.csr_matrix(sp.diags(1.0 / np.where(norms == 0, 1.0, norms)) @ X, dtype=float)


def sparse_neighbors(U, n_neighbors, metric, progress=None):
    """Indices (n, n_neighbors) of every unit row's most similar other rows, most similar
    first (ties by index): signed cosine for "euclidean", absolute for "abs_cosine". Exact,
    in float64, a block of rows against all at a time."""
    n = U.shape[0]
    U = sp.csr_matrix(U)
    UT = U.T.tocsr()
    block = int(max(1, min(n, _SEARCH_BYTES // (16 * n))))
    indices = np.empty((n, n_neighbors), dtype=np.int64)
    for start in range(0, n, block):
        stop = min(n, start + block)
        S = (U[start:stop] @ UT).toarray()
        if metric == "abs_cosine":
            np.abs(S, out=S)
        S[np.arange(stop - start), np.arange(start, stop)] = -np.inf
        top = np.argpartition(-S, n_neighbors - 1, axis=1)[:, :n_neighbors]
        order = np.lexsort((top, -np.take_along_axis(S, top, axis=1)))
        indices[start:stop] = np.take_along_axis(top, order, axis=1)
        if progress is not None:
            progress(stop, n)
    return indices


def _gather(X, start, stop, indices, normalize):
    """Dense float64 rows start..stop-1 of X, then their other candidates, on the columns
    where any of them is non-zero; and `indices` mapped to those rows."""
    rows = np.arange(start, stop)
    others = np.setdiff1d(indices, rows)
    block = X[np.concatenate([rows, others])]
    columns = np.unique(block.indices)
    dense = block[:, columns if columns.size else [0]].toarray().astype(float)
    if normalize:
        dense = normalize_rows(dense)[0]
    inside = (indices >= start) & (indices < stop)
    local = np.where(inside, indices - start, rows.size + np.searchsorted(others, indices))
    return dense, local


def _chunk_points(X, indices, chunk_size, n_sample=256):
    """Points per chunk: `chunk_size`, or the most whose dense copy stays within
    `_CHUNK_BYTES`, sized as chunk x (k + 1) rows on chunk x u columns, u the mean number of
    columns a point and its candidates span (measured on `n_sample` evenly spread points;
    the points of a chunk may share columns, which only makes the copy smaller)."""
    n, k = indices.shape
    if chunk_size is not None:
        return chunk_size
    sample = np.unique(np.linspace(0, n - 1, min(n, n_sample)).astype(np.int64))
    spans = [np.unique(X[np.append(indices[i], i)].indices).size for i in sample]
    width = max(1.0, float(np.mean(spans)))
    step = 1
    while step < n and 8 * (2 * step * (k + 1)) * min(X.shape[1], 2 * step * width) <= \
            _CHUNK_BYTES:
        step *= 2
    return min(step, n)


def sparse_coefficients(X, indices, lam, *, normalize, solver, positive, lam_mode, l1_ratio,
                        tol, max_iter, chunk_size=None, n_jobs=None, progress=None):
    """`kssc_coefficients` of the sparse rows of X (unit rows when `normalize`) over their
    candidates `indices`, a chunk of points at a time from its dense copy. Returns (coef,
    n_iter, converged, residuals), residuals as `code_residuals` gives them.

    The per-point weights come first from a pass over every chunk (``lam_mode="global"``
    takes the smallest lambda_max of all points), as `kssc.coding.representation.penalty` gives
    them; an `ADMM` solver needs ``stopping="each"`` (the "all" rule stops every point
    together) and its outlier term's gamma is the whole data's."""
    X = sp.csr_matrix(X)
    n = indices.shape[0]
    step = _chunk_points(X, indices, chunk_size)
    spans = [(s, min(s + step, n)) for s in range(0, n, step)]
    admm = isinstance(solver, ADMM)
    gamma = None
    if admm and solver.outlier:
        l1 = np.asarray(abs(X).sum(axis=1), dtype=float).ravel()
        scale = row_norms(X) if normalize else np.ones(n)
        peak = np.max(l1 / np.where(scale == 0, 1.0, scale))
        gamma = 1.0 / (lam * max(peak, np.finfo(float).tiny))
    if lam_mode == "absolute":
        lam_rows = np.full(n, float(lam))
    else:
        scale = np.concatenate([
            _chunk_scale(dense, np.arange(b - a), local, positive, gamma)
            for a, b in spans
            for dense, local in [_gather(X, a, b, indices[a:b], normalize)]])
        positive_scale = scale > 0
        if lam_mode == "global":
            lam_rows = np.full(n, lam * (scale[positive_scale].min() if positive_scale.any()
                                         else 1.0))
        else:
            lam_rows = lam * np.where(positive_scale, scale, 1.0)
    parts = []
    for done, (a, b) in enumerate(spans, start=1):
        dense, local = _gather(X, a, b, indices[a:b], normalize)
        coef, n_iter, converged = kssc_coefficients(
            dense, local, lam, solver=solver, positive=positive, lam_mode=lam_mode,
            l1_ratio=l1_ratio, tol=tol, max_iter=max_iter, n_jobs=n_jobs,
            lam_rows=lam_rows[a:b], gamma=gamma)
        parts.append((coef, n_iter, converged,
                      code_residuals(dense[:b - a], dense, local, coef)))
        if progress is not None:
            progress(done, len(spans))
    return tuple(np.concatenate(column) for column in zip(*parts, strict=True))


def sparse_candidate_sets(X, n_neighbors, *, neighbor_pcs=0, n_random=0, metric="euclidean",
                          random_state=None, progress=None):
    """`kssc.neighbors.candidates.candidate_sets` of the sparse rows of X for the cosine
    metrics: the views' neighbours from one exact search (with no direction removed, view j's
    are the next nearest), then the random candidates. Returns (indices, search report)."""
    counts, pcs = _check_views(n_neighbors, neighbor_pcs)
    if any(pcs):
        raise ValueError(f"sparse X cannot be searched with neighbor_pcs={neighbor_pcs!r}: "
                         "removing principal directions makes every row dense. Use "
                         "neighbor_pcs=0, or convert X with X.toarray().")
    k = check_n_neighbors(int(sum(counts)), X.shape[0])
    indices = sparse_neighbors(unit_rows(X), k, metric, progress)
    n_random = min(n_random, X.shape[0] - 1 - k)
    return (random_candidates(indices, n_random, random_state),
            {"algorithm": "exact", "recall": 1.0})
