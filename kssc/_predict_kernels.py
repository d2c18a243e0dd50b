"""Compiled (numba) kernels of `KSSC.predict` (`kssc._predict`): the search of new points in
the kept IVF lists, the float64 re-scoring and ordering of what a search found, and the
labels by the residual of each cluster's part of a code. Imported on first use, as the
coefficient kernels."""

import numpy as np
from numba import prange

from .coding._kernels import jit, parallel_jit
from .neighbors._topk import _offer, _worse


@jit
def residual_label_range(lo, hi, points, X, indices, coef, candidate_labels, out):
    """out[i], i in [lo, hi): the label c minimising ||points[i] - sum over m with
    candidate_labels[i, m] == c of coef[i, m] X[indices[i, m]]|| among the labels holding a
    non-zero coefficient (ties: the smaller label); candidate_labels[i, 0] when none does."""
    k, D = indices.shape[1], X.shape[1]
    rest = np.empty(D)
    for i in range(lo, hi):
        best, best_label = np.inf, -1
        for m in range(k):
            c = candidate_labels[i, m]
            if coef[i, m] == 0.0:
                continue
            seen = False
            for p in range(m):
                if coef[i, p] != 0.0 and candidate_labels[i, p] == c:
                    seen = True
                    break
            if seen:
                continue
            for d in range(D):
                rest[d] = points[i, d]
            for p in range(m, k):
                z = coef[i, p]
                if z != 0.0 and candidate_labels[i, p] == c:
                    a = X[indices[i, p]]
                    for d in range(D):
                        rest[d] -= z * a[d]
            s = 0.0
            for d in range(D):
                s += rest[d] * rest[d]
            if s < best or (s == best and c < best_label):
                best, best_label = s, c
        out[i] = best_label if best_label >= 0 else candidate_labels[i, 0]


@parallel_jit
def residual_label_blocks(bounds, points, X, indices, coef, candidate_labels, out):
    """`residual_label_range` over the blocks [bounds[b], bounds[b + 1]), in parallel."""
    for b in prange(bounds.size - 1):
        residual_label_range(bounds[b], bounds[b + 1], points, X, indices, coef,
                             candidate_labels, out)


def transposed_lists(X32, order, bounds):
    """The rows of X32 grouped by list as one flat float32 array: list l's rows
    order[bounds[l]:bounds[l + 1]] as a (D, size) block from D * bounds[l] on (a query's
    similarities to a list are then a sum of D contiguous slices, no reduction per row)."""
    D = X32.shape[1]
    out = np.empty(D * order.size, dtype=np.float32)
    for lst in range(bounds.size - 1):
        a, e = bounds[lst], bounds[lst + 1]
        out[D * a:D * e] = np.ascontiguousarray(X32[order[a:e]].T, dtype=np.float32).ravel()
    return out


@jit
def ivf_top_k_range(lo, hi, rank, queries, lists, bounds, probes, absolute, scores, indices):
    """Queries rank[lo..hi-1] (rows of `queries`) join their running top-k (`kssc.neighbors._topk`)
    with the points of every list l they probe (`probes`), by float32 inner product
    (absolute: its absolute value); `lists` as `transposed_lists` makes it, a point named
    by its place p in the lists (list l: places bounds[l] .. bounds[l + 1] - 1)."""
    D = queries.shape[1]
    largest = 0
    for lst in range(bounds.size - 1):
        largest = max(largest, bounds[lst + 1] - bounds[lst])
    sims = np.empty(largest, dtype=np.float32)
    for t in range(lo, hi):
        i = rank[t]
        x = queries[i]
        for p in range(probes.shape[1]):
            lst = probes[i, p]
            a, size = bounds[lst], bounds[lst + 1] - bounds[lst]
            block = lists[D * a:D * (a + size)]
            out = sims[:size]
            out[:] = 0.0
            d = 0
            while d + 4 <= D:
                x0, x1, x2, x3 = x[d], x[d + 1], x[d + 2], x[d + 3]
                c0 = block[d * size:(d + 1) * size]
                c1 = block[(d + 1) * size:(d + 2) * size]
                c2 = block[(d + 2) * size:(d + 3) * size]
                c3 = block[(d + 3) * size:(d + 4) * size]
                for j in range(size):
                    out[j] += x0 * c0[j] + x1 * c1[j] + x2 * c2[j] + x3 * c3[j]
                d += 4
            while d < D:
                c0 = block[d * size:(d + 1) * size]
                for j in range(size):
                    out[j] += x[d] * c0[j]
                d += 1
            top = -np.inf
            for j in range(size):
                if absolute:
                    out[j] = abs(out[j])
                top = max(top, out[j])
            # Only a score >= the worst kept may enter: after the query's own list, most
            # lists hold none (this maximum skips them, and their scan's branches).
            threshold = scores[i, 0]
            if top < threshold:
                continue
            for j in range(size):
                if out[j] >= threshold and _worse(scores[i, 0], indices[i, 0], out[j], a + j,
                                                  i):
                    _offer(scores, indices, i, out[j], a + j)
                    threshold = scores[i, 0]


@parallel_jit
def ivf_top_k_blocks(blocks, rank, queries, lists, bounds, probes, absolute, scores, indices):
    """`ivf_top_k_range` over the blocks [blocks[b], blocks[b + 1]) of `rank`, in
    parallel."""
    for b in prange(blocks.size - 1):
        ivf_top_k_range(blocks[b], blocks[b + 1], rank, queries, lists, bounds, probes,
                        absolute, scores, indices)


@jit
def rescore_sort_range(lo, hi, rows, found, metric, out):
    """out[i] (i in [lo, hi)): the candidates found[i] of row i of `rows` (rows of `rows`
    too) sorted by their float64 score, best first (ties: the smaller index): the inner
    product (metric 0), its absolute value (1) or minus the squared Euclidean distance (2)."""
    k, D = found.shape[1], rows.shape[1]
    scores = np.empty(k)
    ids = np.empty(k, dtype=np.int64)
    for i in range(lo, hi):
        x = rows[i]
        for m in range(k):
            j = found[i, m]
            a = rows[j]
            t = 0.0
            if metric == 2:
                for d in range(D):
                    diff = np.float64(x[d]) - np.float64(a[d])
                    t -= diff * diff
            else:
                for d in range(D):
                    t += np.float64(x[d]) * np.float64(a[d])
                if metric == 1:
                    t = abs(t)
            # Insertion into the sorted prefix: (score descending, index ascending).
            p = m
            while p > 0 and (scores[p - 1] < t or (scores[p - 1] == t and ids[p - 1] > j)):
                scores[p] = scores[p - 1]
                ids[p] = ids[p - 1]
                p -= 1
            scores[p] = t
            ids[p] = j
        for m in range(k):
            out[i, m] = ids[m]


@parallel_jit
def rescore_sort_blocks(bounds, rows, found, metric, out):
    """`rescore_sort_range` over the blocks [bounds[b], bounds[b + 1]), in parallel."""
    for b in prange(bounds.size - 1):
        rescore_sort_range(bounds[b], bounds[b + 1], rows, found, metric, out)


@jit
def lambda_max_range(lo, hi, X, indices, positive, out):
    """out[i] (i in [lo, hi)): the largest inner product (positive: signed, else absolute)
    of row i of X with the rows indices[i] (`kssc.coding.representation.penalty`'s lambda_max
    without the outlier term), read in place."""
    k, D = indices.shape[1], X.shape[1]
    for i in range(lo, hi):
        x = X[i]
        best = -np.inf
        for m in range(k):
            a = X[indices[i, m]]
            t = 0.0
            for d in range(D):
                t += np.float64(x[d]) * np.float64(a[d])
            best = max(best, t if positive else abs(t))
        out[i] = best


@parallel_jit
def lambda_max_blocks(bounds, X, indices, positive, out):
    """`lambda_max_range` over the blocks [bounds[b], bounds[b + 1]), in parallel."""
    for b in prange(bounds.size - 1):
        lambda_max_range(bounds[b], bounds[b + 1], X, indices, positive, out)
