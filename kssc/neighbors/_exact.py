"""Exact k nearest other points by blocked float32 matrix products (the brute-force kernel).

One exact search serves every metric: "euclidean" and "abs_cosine" rank unit vectors by
(absolute) inner product, "l2" ranks the points as given by Euclidean distance. It runs
blocks of rows as float32 matrix products, on all cores (one block per worker thread, each
with a single-threaded BLAS, so the top-k selection of one block overlaps the product of
the next), then re-scores the k chosen candidates in float64 and sorts them. Both
`kssc.neighbors` (the dispatcher) and `kssc.neighbors._ann` (the recall sample, under-filled rows)
use it.
"""

from concurrent.futures import ThreadPoolExecutor
from threading import Lock

import numpy as np
from joblib import cpu_count
from threadpoolctl import threadpool_limits

# Similarities of all blocks in flight together (one block per worker thread).
_BLOCK_BYTES = 128 * 2**20
# Neighbour vectors gathered at a time to re-score the chosen candidates: small chunks stay
# in cache and reuse their memory (1.7x faster than 64 MiB ones at D = 321).
_RESCORE_BYTES = 2**20
# Query rows per block of the search of given rows.
_QUERY_BLOCK = 2048
# Rows re-scored per task.
_RESCORE_ROWS = 4096
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


def run_threads(tasks, workers):
    """Call every task, on `workers` threads with a single-threaded BLAS each (both cores
    multiply and select at once)."""
    if workers == 1:
        for task in tasks:
            task()
        return
    with threadpool_limits(1, user_api="blas"), ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda task: task(), tasks))


def _symmetric_top_k(database, k, metric, half_sq_norms, block, progress=None):
    """Float32 top-k (unordered) of every row of `database` against all others, computing
    each pair of row blocks (I, J), J >= I, once: its product updates I's rows and, by
    columns, J's rows (half the flops of a row-block search). One lock per row block."""
    from ._topk import empty_top_k, update_columns, update_rows

    n = database.shape[0]
    starts = list(range(0, n, block))
    pairs = [(i, j) for a, i in enumerate(starts) for j in starts[a:]]
    workers = _n_workers(len(pairs))
    scores, indices = empty_top_k(n, k)
    locks = {start: Lock() for start in starts}
    done, counting = [0], Lock()

    def search(worker):
        side = min(block, n)
        buffer = np.empty((side, side), dtype=np.float32)
        by_rows = np.empty((side, side), dtype=np.float32) if metric == "l2" else None
        for i, j in pairs[worker::workers]:
            rows, cols = database[i:i + block], database[j:j + block]
            G = np.matmul(rows, cols.T, out=buffer[:rows.shape[0], :cols.shape[0]])
            if metric == "abs_cosine":
                np.abs(G, out=G)
            if i == j:
                G[np.arange(rows.shape[0]), np.arange(rows.shape[0])] = -np.inf
            S, T = G, G
            if metric == "l2":
                # x.y - ||y||^2 / 2 ranks by -||x - y||; by columns, the other way round.
                S = np.subtract(G, half_sq_norms[j:j + cols.shape[0]],
                                out=by_rows[:rows.shape[0], :cols.shape[0]])
                T = np.subtract(G, half_sq_norms[i:i + rows.shape[0], None], out=G)
            with locks[i]:
                update_rows(S, np.arange(j, j + cols.shape[0]), scores, indices, i)
            if i != j:
                with locks[j]:
                    update_columns(T, np.arange(i, i + rows.shape[0]), scores, indices, j)
            if progress is not None:
                with counting:
                    done[0] += 1
                    progress(done[0], len(pairs))

    run_threads([lambda w=w: search(w) for w in range(workers)], workers)
    return indices


def _query_top_k(database, queries, k, metric, half_sq_norms, block):
    """Float32 top-k (unordered) of the rows `queries` against every row (the search of a
    few rows: the recall sample, under-filled rows): blocks of `block` queries against
    column chunks of the database, so the database is read once per query block however
    many rows it has; a lock per query block (its chunks run on different threads)."""
    from ._topk import empty_top_k, update_rows

    n, m = database.shape[0], queries.size
    workers = _n_workers(n)
    width = int(max(1, min(n, _BLOCK_BYTES // (4 * block * workers))))
    tasks = [(q, c) for q in range(0, m, block) for c in range(0, n, width)]
    scores, indices = empty_top_k(m, k)
    locks = {q: Lock() for q in range(0, m, block)}

    def search(worker):
        buffer = np.empty(min(block, m) * width, dtype=np.float32)
        for q, c in tasks[worker::workers]:
            ids = queries[q:q + block]
            columns = database[c:c + width]
            S = np.matmul(database[ids], columns.T,
                          out=buffer[:ids.size * columns.shape[0]].reshape(ids.size, -1))
            if metric == "abs_cosine":
                np.abs(S, out=S)
            elif metric == "l2":
                S -= half_sq_norms[c:c + columns.shape[0]]
            with locks[q]:
                update_rows(S, np.arange(c, c + columns.shape[0]), scores, indices, q, skip=ids)

    run_threads([lambda w=w: search(w) for w in range(workers)], workers)
    return indices


def memory_bytes(n_samples, n_features, n_neighbors, metric="euclidean", dtype=float):
    """Bytes `exact_search` over all rows allocates at its peak: a float32 copy of the data
    unless it is float32 already (always for "l2", centred), the similarity blocks, the
    running top-k and the re-scored, sorted result."""
    copy = 4 * n_samples * n_features if metric == "l2" or dtype != np.float32 else 0
    blocks = _BLOCK_BYTES * (2 if metric == "l2" else 1)
    top_k = 12 * n_samples * n_neighbors
    result = 3 * 16 * n_samples * n_neighbors  # indices, scores, sort order and a copy
    return copy + blocks + top_k + result + _RESCORE_BYTES * _n_workers(n_samples)


def exact_search(X, n_neighbors, metric="euclidean", block_size=None, rows=None, progress=None):
    """Exact k nearest other points of the rows `rows` of X (default: all), by blocked products.

    "euclidean" ranks unit-norm rows by signed inner product (Euclidean distance between
    unit vectors, what the paper's code did), "abs_cosine" by its absolute value (x and -x
    span the same line), "l2" ranks the points as given by Euclidean distance. A point is
    never its own neighbour, also when the data holds exact duplicates: the exclusion is by
    index. The search runs in float32 on all cores (a block per worker thread): for all rows,
    on square blocks of `block_size` rows each computed once for both of its row blocks
    (X X^T is symmetric); for `rows`, on blocks of `block_size` query rows against all. The
    k found are re-scored in float64 and sorted; `progress(done, total)` is called as block
    pairs finish (all rows only). Memory: a float32 copy of X (none when X
    is float32 already), about `_BLOCK_BYTES` of similarities whatever n_features, and the
    running top-k (12 n k bytes).

    Returns (indices, similarities), each (len(rows), n_neighbors), nearest first:
    similarities are inner products of unit vectors (absolute for "abs_cosine") or, for
    "l2", Euclidean distances.
    """
    n = X.shape[0]
    k = n_neighbors
    database = _database(X, metric)
    half_sq_norms = 0.5 * np.einsum("ij,ij->i", database, database) if metric == "l2" else None
    if rows is None:
        queries = np.arange(n)
        block = block_size or int(np.sqrt(_BLOCK_BYTES / (4 * _n_workers(n))))
        indices = _symmetric_top_k(database, k, metric, half_sq_norms, min(block, n), progress)
    else:
        queries = np.asarray(rows, dtype=np.int64)
        block = int(np.clip(block_size or _QUERY_BLOCK, 1, max(queries.size, 1)))
        indices = _query_top_k(database, queries, k, metric, half_sq_norms, block)
    return rescored(X, queries, indices, metric)


def rescored(X, queries, indices, metric="euclidean"):
    """The candidates `indices` (m, k) of the rows `queries` of X re-scored in float64 and
    sorted, nearest first (ties: the smaller index first), on all cores: (indices,
    similarities) as `exact_search` returns them. Rows are scored and sorted
    `_RESCORE_ROWS` at a time, so beyond the result the memory is that of one chunk."""
    m, k = indices.shape
    scores = np.empty((m, k))
    ordered = np.empty_like(indices)
    starts = range(0, m, _RESCORE_ROWS)
    workers = _n_workers(len(starts))
    contiguous = m > 0 and np.array_equal(queries, np.arange(queries[0], queries[0] + m))

    def score(worker):
        for start in starts[worker::workers]:
            ids = queries[start:start + _RESCORE_ROWS]
            mine = slice(start, start + ids.size)
            points = X[ids[0]:ids[-1] + 1] if contiguous else X[ids]
            found = indices[mine]
            s = rescore(points, X, found, metric)
            if metric == "abs_cosine":
                np.abs(s, out=s)
            order = np.lexsort((found, -s), axis=1)  # ties: the smaller index first
            ordered[mine] = np.take_along_axis(found, order, 1)
            s = np.take_along_axis(s, order, 1)
            scores[mine] = np.sqrt(np.maximum(-s, 0.0)) if metric == "l2" else s

    run_threads([lambda w=w: score(w) for w in range(workers)], workers)
    return ordered, scores
