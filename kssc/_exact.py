"""Exact k nearest other points by blocked float32 matrix products (the brute-force kernel).

One exact search serves every metric: "euclidean" and "abs_cosine" rank unit vectors by
(absolute) inner product, "l2" ranks the points as given by Euclidean distance. It runs
blocks of rows as float32 matrix products, on all cores (one block per worker thread, each
with a single-threaded BLAS, so the top-k selection of one block overlaps the product of
the next), then re-scores the k chosen candidates in float64 and sorts them. Both
`kssc.neighbours` (the dispatcher) and `kssc._ann` (the recall sample, under-filled rows)
use it.
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from joblib import cpu_count
from threadpoolctl import threadpool_limits

# Similarities of all blocks in flight together (one block per worker thread).
_BLOCK_BYTES = 128 * 2**20
# Neighbour vectors gathered at a time to re-score the chosen candidates: small chunks stay
# in cache and reuse their memory (1.7x faster than 64 MiB ones at D = 321).
_RESCORE_BYTES = 2**20
# Rows copied (and centred) into the float32 search database at a time.
_COPY_ROWS = 2**16


def _database(X, metric):
    """X as one float32 C-contiguous array (X itself when it already is one), centred for
    "l2" (distances do not change; the float32 cancellation in ||y||^2 - 2 x.y does)."""
    if metric != "l2":
        return np.ascontiguousarray(X, dtype=np.float32)
    n = X.shape[0]
    centre = sum(np.asarray(X[s:s + _COPY_ROWS], dtype=float).sum(axis=0)
                 for s in range(0, n, _COPY_ROWS)) / n
    database = np.empty(X.shape, dtype=np.float32)
    for start in range(0, n, _COPY_ROWS):
        database[start:start + _COPY_ROWS] = X[start:start + _COPY_ROWS] - centre
    return database


def _scores(queries, database, metric, half_sq_norms, out):
    """Similarity of every query to every database row, into `out`; larger is nearer.

    A reused output buffer: a fresh one would cost its page faults at every block (about a
    quarter of the product's time)."""
    S = np.matmul(queries, database.T, out=out)
    if metric == "abs_cosine":
        np.abs(S, out=S)
    elif metric == "l2":
        # x.y - ||y||^2 / 2 = (||x||^2 - ||x - y||^2) / 2: the ranking of -||x - y||.
        S -= half_sq_norms
    return S


def _top_k(S, k, group):
    """Column indices of the k largest entries of every row of S (unordered).

    Exact two-stage selection: split the columns into groups of `group` (group g: columns
    g, g + n_groups, g + 2 n_groups, ..., so that the group maxima are an elementwise maximum
    of contiguous slabs); the k largest entries lie in the k groups with the largest maxima,
    or in the last columns that fill no slab, so a partition of the group maxima and then of
    at most (k + 1) * group candidates replaces a partition of every row (several times
    faster).
    """
    rows, width = S.shape
    n_groups = width // group
    if n_groups <= k:
        return np.argpartition(S, width - k, axis=1)[:, width - k:]
    body = n_groups * group
    maxima = S[:, :body].reshape(rows, group, n_groups).max(axis=1)
    top_groups = np.argpartition(maxima, n_groups - k, axis=1)[:, n_groups - k:]
    candidates = (top_groups[:, :, None] + n_groups * np.arange(group)).reshape(rows, -1)
    if body < width:
        tail = np.broadcast_to(np.arange(body, width), (rows, width - body))
        candidates = np.hstack([candidates, tail])
    values = np.take_along_axis(S, candidates, 1)
    chosen = np.argpartition(values, values.shape[1] - k, axis=1)[:, values.shape[1] - k:]
    return np.take_along_axis(candidates, chosen, 1)


def rescore(points, X, found, metric="euclidean"):
    """Float64 scores of every row of `points` (b, D) against its candidates X[found] (b, k).

    The inner product (signed, also for "abs_cosine"), or for "l2" minus the squared
    Euclidean distance, computed from the differences (no cancellation). Gathers at most
    `_RESCORE_BYTES` of neighbour vectors at a time (chunks of rows, and of the k columns
    when one row's k neighbours exceed it), each chunk by the same contraction, so the
    values do not depend on the chunking. X may be float32 (a memory map): each gathered
    chunk is cast.
    """
    b, k = found.shape
    per_gather = max(1, _RESCORE_BYTES // (X.shape[1] * 8))
    n_rows, n_cols = max(1, per_gather // k), min(k, per_gather)
    scores = np.empty((b, k))
    for r in range(0, b, n_rows):
        x = np.asarray(points[r:r + n_rows], dtype=float)
        for c in range(0, k, n_cols):
            A = np.asarray(X[found[r:r + n_rows, c:c + n_cols]], dtype=float)
            if metric == "l2":
                A -= x[:, None, :]
                scores[r:r + n_rows, c:c + n_cols] = -np.einsum("ikj,ikj->ik", A, A)
            else:
                scores[r:r + n_rows, c:c + n_cols] = np.einsum("ij,ikj->ik", x, A)
    return scores


def _n_workers(n_blocks):
    return max(1, min(cpu_count(), n_blocks))


def exact_search(X, n_neighbors, metric="euclidean", block_size=None, rows=None):
    """Exact k nearest other points of the rows `rows` of X (default: all), by blocked products.

    "euclidean" ranks unit-norm rows by signed inner product (Euclidean distance between
    unit vectors, what the paper's code did), "abs_cosine" by its absolute value (x and -x
    span the same line), "l2" ranks the points as given by Euclidean distance. A point is
    never its own neighbour, also when the data holds exact duplicates: the exclusion is by
    index. The search runs in float32 on all cores, a block of `block_size` rows per worker
    thread; the k found are re-scored in float64 and sorted. Memory: a float32 copy of X
    (none when X is float32 already) and about `_BLOCK_BYTES` of similarities, whatever
    n_features.

    Returns (indices, similarities), each (len(rows), n_neighbors), nearest first:
    similarities are inner products of unit vectors (absolute for "abs_cosine") or, for
    "l2", Euclidean distances.
    """
    n = X.shape[0]
    k = n_neighbors
    queries = np.arange(n) if rows is None else np.asarray(rows, dtype=np.int64)
    m = queries.size
    group = int(np.clip(np.sqrt(n / k), 1, 128))
    database = _database(X, metric)
    half_sq_norms = 0.5 * np.einsum("ij,ij->i", database, database) if metric == "l2" else None
    if block_size is None:
        block_size = int(max(1, min(m, _BLOCK_BYTES // (4 * n * _n_workers(m)))))
    starts = range(0, m, block_size)
    workers = _n_workers(len(starts))
    indices = np.empty((m, k), dtype=np.int64)
    scores = np.empty((m, k))

    def search(worker):
        buffer = np.empty((min(block_size, m), n), dtype=np.float32)
        for start in starts[worker::workers]:
            part = slice(start, min(start + block_size, m))
            ids = queries[part]
            block = database[ids[0]:ids[-1] + 1] if rows is None else database[ids]
            S = _scores(block, database, metric, half_sq_norms, buffer[:ids.size])
            S[np.arange(ids.size), ids] = -np.inf
            indices[part] = _top_k(S, k, group)
            scores[part] = rescore(X[ids[0]:ids[-1] + 1] if rows is None else X[ids], X,
                                   indices[part], metric)

    if workers == 1:
        search(0)
    else:
        # One single-threaded BLAS per worker: both cores multiply and select at once.
        with threadpool_limits(1, user_api="blas"), ThreadPoolExecutor(workers) as pool:
            list(pool.map(search, range(workers)))
    if metric == "abs_cosine":
        np.abs(scores, out=scores)
    order = np.argsort(-scores, axis=1, kind="stable")
    indices, scores = np.take_along_axis(indices, order, 1), np.take_along_axis(scores, order, 1)
    if metric == "l2":
        scores = np.sqrt(np.maximum(-scores, 0.0))
    return indices, scores
