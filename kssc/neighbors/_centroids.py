"""The inverted lists' centroids: spherical k-means, in two levels for many lists, and every
row's most similar lists.

From `_TWO_LEVEL_FROM` lists on, about sqrt(n_lists) coarse centroids split the training
sample into groups, and each group is split by its own k-means into its share of the lists:
training then costs the sample about 2 sqrt(n_lists) similarities a row and iteration instead
of n_lists (at 10^6 points and 2,000 lists, 0.74 s instead of 1.46 s; the adapted nprobe came
out 12 instead of 13 there, on the edge of the recall target). The rows are still assigned to
the fine centroids flat: searching them in two levels (a row's lists among the fine centroids
of its 8-24 most similar coarse groups) was no faster at equal agreement with the flat top 16
on the scale union (0.93-0.98), nor was taking them among a list's nearest lists (0.79-0.98);
see docs/scaling.md.
"""

import numpy as np
import scipy.sparse as sp

from ._exact import _n_workers, run_threads
from ._topk import empty_top_k, join_rows

# Rows assigned to their nearest centroids at a time, per worker thread: about this many
# bytes of similarities (small enough to stay in cache between the GEMM and the selection).
_ASSIGN_BYTES = 8 * 2**20
# Rows of the k-means sample summed into the centroids at a time (float64 bytes).
_KMEANS_BYTES = 16 * 2**20
# Lists from which the centroids are trained in two levels.
_TWO_LEVEL_FROM = 1024


def _similarities(A, B, metric, out=None):
    S = np.matmul(A, B.T, out=out)
    if metric == "abs_cosine":
        np.abs(S, out=S)
    return S


def nearest_lists(X32, centroids, metric, n_probe):
    """The `n_probe` lists (most similar centroids) of every row of X32, the most similar
    first (int32, (n, n_probe)): chunks of rows of `_ASSIGN_BYTES` of similarities, one per
    worker thread at a time (a GEMM and a selection each, both cores busy)."""
    n, n_lists = X32.shape[0], centroids.shape[0]
    rows = max(1, _ASSIGN_BYTES // (4 * (n_lists + X32.shape[1])))
    # As many chunks for every worker thread (5 chunks on 2 threads would leave one idle
    # for the last): their number rounded up to a multiple of the threads.
    workers = _n_workers(-(-n // rows))
    rounds = -(-n // (rows * workers))
    rows = max(1, -(-n // (rounds * workers)))
    lists = np.empty((n, n_probe), dtype=np.int32)
    every = np.arange(n_lists)
    starts = range(0, n, rows)

    def assign(worker):
        for start in starts[worker::workers]:
            S = _similarities(np.asarray(X32[start:start + rows], dtype=np.float32),
                              centroids, metric)
            if n_probe == 1:
                lists[start:start + rows, 0] = S.argmax(axis=1)
                continue
            scores, top = empty_top_k(S.shape[0], n_probe)
            join_rows(S, every, scores, top, 0)
            order = np.lexsort((top, -scores), axis=1)
            lists[start:start + rows] = np.take_along_axis(top, order, 1)

    run_threads([lambda w=w: assign(w) for w in range(workers)], workers)
    return lists


def spherical_kmeans(X32, n_lists, metric, iterations, rng):
    """Unit centroids (n_lists, D) float32 of the rows of X32 (unit norm) by spherical
    k-means from `n_lists` random rows; for "abs_cosine" a row joins a centroid with the
    sign that makes it similar (x and -x are one line). An empty list keeps its centroid."""
    n = X32.shape[0]
    centroids = np.array(X32[np.sort(rng.choice(n, n_lists, replace=False))], dtype=np.float32)
    step = max(1, _KMEANS_BYTES // (8 * X32.shape[1]))
    for _ in range(iterations):
        lists = nearest_lists(X32, centroids, metric, 1)[:, 0]
        sums = np.zeros(centroids.shape)
        for start in range(0, n, step):
            chunk = np.asarray(X32[start:start + step], dtype=float)
            mine = lists[start:start + step]
            sign = np.ones(mine.size)
            if metric == "abs_cosine":
                sign[np.einsum("ij,ij->i", chunk, centroids[mine]) < 0] = -1.0
            members = sp.csr_matrix((sign, (mine, np.arange(mine.size))),
                                    shape=(n_lists, mine.size))
            sums += members @ chunk
        norms = np.linalg.norm(sums, axis=1)
        filled = norms > 0
        centroids[filled] = sums[filled] / norms[filled, None]
    return centroids


def _shares(sizes, n_lists):
    """n_lists split between groups in proportion to their sizes (largest remainders), at
    most a group's size each."""
    share = n_lists * sizes / sizes.sum()
    counts = np.floor(share).astype(np.int64)
    rest = int(n_lists - counts.sum())
    counts[np.argsort(counts - share, kind="stable")[:rest]] += 1
    return np.minimum(counts, sizes)


def fit_centroids(X32, n_lists, metric, iterations, rng):
    """Unit centroids (about n_lists, D) float32 of the lists from the training rows X32
    (unit norm): flat spherical k-means below `_TWO_LEVEL_FROM` lists, else in two levels
    (round(sqrt(n_lists)) coarse groups, each split by its own k-means into its share of the
    lists, in proportion to its rows; a group smaller than its share gets one list a row, so
    there may be fewer lists than asked). The fine centroids come grouped by coarse group."""
    if n_lists < _TWO_LEVEL_FROM:
        return spherical_kmeans(X32, n_lists, metric, iterations, rng)
    coarse = spherical_kmeans(X32, int(round(np.sqrt(n_lists))), metric, iterations, rng)
    own = nearest_lists(X32, coarse, metric, 1)[:, 0]
    order = np.argsort(own, kind="stable")
    sizes = np.bincount(own, minlength=coarse.shape[0])
    counts = _shares(sizes, n_lists)
    bounds = np.concatenate(([0], np.cumsum(sizes)))
    return np.concatenate([spherical_kmeans(X32[order[bounds[j]:bounds[j + 1]]],
                                            int(counts[j]), metric, iterations, rng)
                           for j in np.flatnonzero(counts)])
