"""IVF self-join: every point's k most similar others among the points of the inverted lists
it probes, computed as blocked float32 matrix products.

The queries are the database. Every point probes its `n_probe` most similar lists
(centroids); turned around, each list's points form one block, multiplied in one GEMM
against all the points that probe it, and a compiled running top-k
(`kssc.neighbors._topk.join_rows`) keeps the best k of every row exactly among its
candidates. Each row's own list is joined first
(its threshold is then high and later lists seldom enter). The lists are orderings of the
rows, never a copy of the data; every buffer is sized in bytes (`_JOIN_BYTES` per worker
thread for the gathered queries, as much for the list's points and for their
similarities), whatever n_features.
"""

from threading import Lock

import numpy as np

from ._centroids import _similarities
from ._exact import _n_workers, run_threads
from ._topk import empty_top_k, join_rows

# Gathered candidate vectors, and their similarities, per worker thread (bytes each).
_JOIN_BYTES = 32 * 2**20
# A worker's rows are joined in chunks whose (row, probed list) pairs, sorted by list, take
# about this many bytes (16 per pair): without chunks they grow as n * nprobe (at 10^7 points
# and nprobe 32, 5 GiB per worker), with them the join's memory is fixed beyond its output.
_JOIN_SLOT_BYTES = 64 * 2**20


class InvertedLists:
    """The lists as orderings of the rows, no copy of the data: `order` (the rows sorted by
    list), `position` (row -> place in `order`) and `bounds` (list l holds the rows
    order[bounds[l]:bounds[l + 1]])."""

    def __init__(self, lists, n_lists):
        self.order = np.argsort(lists, kind="stable")
        self.position = np.empty_like(self.order)
        self.position[self.order] = np.arange(self.order.size)
        self.bounds = np.searchsorted(lists[self.order], np.arange(n_lists + 1))


def _gather(X, rows, out):
    """X[rows] into the float32 buffer `out` (X may be float64 or a memory map)."""
    out = out[:rows.size]
    if type(X) is np.ndarray and X.dtype == np.float32 and X.flags.c_contiguous:
        return np.take(X, rows, axis=0, out=out)
    out[...] = X[rows]
    return out


def join_buffer_bytes(n_features):
    """Bytes of one worker thread's buffers in `join`: queries and points gathered as
    float32 blocks of at most `_JOIN_BYTES` each, and their similarities."""
    per_block = max(1, _JOIN_BYTES // (4 * n_features))
    return 2 * 4 * per_block * n_features + _JOIN_BYTES


def join(X, index, rows, probes, k, metric, progress=None):
    """Float32 top-k (unordered) of the rows `rows` of X among the points of their lists
    `probes` (m, n_probe), never the point itself: (m, k) row indices, -1 where a row had
    fewer than k candidates. Each list's points are gathered once per pass (and chunk of
    rows) into one block of a GEMM against the queries that probe it; the queries are split
    between the worker threads, so no two threads update the same row. `progress(done,
    total)` is called as lists finish."""
    bounds = index.bounds
    n_lists, dim = bounds.size - 1, X.shape[1]
    m = rows.size
    scores, indices = empty_top_k(m, k)
    workers = _n_workers(m)
    done, lock = [0], Lock()
    per_block = max(1, _JOIN_BYTES // (4 * dim))
    # Each worker's rows in chunks of bounded (row, list) pairs; a row's lists are visited in
    # the same order whatever the chunks (its own first, then by list id), so the result is.
    per_chunk = max(1, _JOIN_SLOT_BYTES // (16 * max(1, probes.shape[1] - 1)))
    edges = np.linspace(0, m, workers + 1).astype(np.int64)
    chunks = [[(lo, min(lo + per_chunk, edges[w + 1]))
               for lo in range(edges[w], edges[w + 1], per_chunk)] for w in range(workers)]
    total = 2 * n_lists * sum(len(mine) for mine in chunks)

    def block(lst, mine, buffers):
        """Every query `mine` (slots) against the points of list `lst`, in byte-sized blocks."""
        gathered, points_buffer, similarities = buffers
        members = index.order[bounds[lst]:bounds[lst + 1]]
        n_cols = min(members.size, per_block, max(1, similarities.size // min(mine.size,
                                                                              per_block)))
        n_rows = min(mine.size, per_block, similarities.size // n_cols)
        for c in range(0, members.size, n_cols):
            ids = members[c:c + n_cols]
            points = _gather(X, ids, points_buffer)
            for r in range(0, mine.size, n_rows):
                at = mine[r:r + n_rows]
                queries = _gather(X, rows[at], gathered)
                S = _similarities(queries, points, metric,
                                  out=similarities[:at.size * ids.size].reshape(at.size, ids.size))
                join_rows(S, ids, scores, indices, at, skip=rows[at])

    def by_list(lo, hi, first, last):
        """The slots lo..hi-1 repeated over their probes first..last-1, sorted by list (int32,
        stable), and where each list's run starts."""
        wanted = probes[lo:hi, first:last].ravel()
        # Lists fit 16 bits (up to 2 sqrt(n) of them: n up to 10^9), where numpy's stable
        # sort is a radix sort: about half the time of sorting int32.
        order = np.argsort(wanted.astype(np.uint16) if n_lists <= 2**16 else wanted,
                           kind="stable")
        starts = np.concatenate(([0], np.cumsum(np.bincount(wanted, minlength=n_lists))))
        del wanted
        slots = (order // (last - first)).astype(np.int32)
        slots += np.int32(lo)
        return slots, starts

    def search(worker):
        buffers = (np.empty((per_block, dim), dtype=np.float32),
                   np.empty((per_block, dim), dtype=np.float32),
                   np.empty(_JOIN_BYTES // 4, dtype=np.float32))
        for lo, hi in chunks[worker]:
            # Each row's most similar list first: its threshold is then high, and the other
            # lists' points seldom enter (each entry costs a scan of the row's k).
            for first, last in ((0, 1), (1, probes.shape[1])):
                slots, starts = by_list(lo, hi, first, last)
                for lst in range(n_lists):
                    if starts[lst + 1] > starts[lst] and bounds[lst + 1] > bounds[lst]:
                        block(lst, slots[starts[lst]:starts[lst + 1]], buffers)
                    if progress is not None:
                        with lock:
                            done[0] += 1
                            progress(done[0], total)

    run_threads([lambda w=w: search(w) for w in range(workers)], workers)
    return indices
