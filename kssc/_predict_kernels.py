"""Compiled (numba) kernels of `KSSC.predict` (`kssc._predict`): the search of new points in
the kept IVF lists, the float64 re-scoring and ordering of what a search found, and the
labels by the residual of each cluster's part of a code. Imported on first use, as the
coefficient kernels."""

import numpy as np
from numba import prange

from .coding._kernels import fill_cache, jit, parallel_jit
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
def _four_similarities(x0, x1, x2, x3, block, size, out):
    """out[r, j] = <x_r, point j> for the four queries x0..x3 and the `size` points of one
    list (`block`, (D, size) flat as `transposed_lists` keeps it): four dimensions a pass,
    each point's four entries loaded once for 16 multiply-adds, the list staying in cache
    for all the queries that probe it."""
    D = x0.size
    o0, o1, o2, o3 = out[0], out[1], out[2], out[3]
    for j in range(size):
        o0[j] = 0.0
        o1[j] = 0.0
        o2[j] = 0.0
        o3[j] = 0.0
    d = 0
    while d + 4 <= D:
        c0 = block[d * size:(d + 1) * size]
        c1 = block[(d + 1) * size:(d + 2) * size]
        c2 = block[(d + 2) * size:(d + 3) * size]
        c3 = block[(d + 3) * size:(d + 4) * size]
        a0, a1, a2, a3 = x0[d], x0[d + 1], x0[d + 2], x0[d + 3]
        b0, b1, b2, b3 = x1[d], x1[d + 1], x1[d + 2], x1[d + 3]
        e0, e1, e2, e3 = x2[d], x2[d + 1], x2[d + 2], x2[d + 3]
        f0, f1, f2, f3 = x3[d], x3[d + 1], x3[d + 2], x3[d + 3]
        for j in range(size):
            v0, v1, v2, v3 = c0[j], c1[j], c2[j], c3[j]
            o0[j] += a0 * v0 + a1 * v1 + a2 * v2 + a3 * v3
            o1[j] += b0 * v0 + b1 * v1 + b2 * v2 + b3 * v3
            o2[j] += e0 * v0 + e1 * v1 + e2 * v2 + e3 * v3
            o3[j] += f0 * v0 + f1 * v1 + f2 * v2 + f3 * v3
        d += 4
    while d < D:
        c0 = block[d * size:(d + 1) * size]
        for j in range(size):
            o0[j] += x0[d] * c0[j]
            o1[j] += x1[d] * c0[j]
            o2[j] += x2[d] * c0[j]
            o3[j] += x3[d] * c0[j]
        d += 1


@jit
def _offer_list(i, sims, size, first, absolute, scores, indices):
    """Query i's running top-k joins the `size` similarities `sims` of the points at places
    first.. (absolute: their absolute values). A count that vectorises skips a list none of
    whose points reaches the worst kept score (after the query's own list, most)."""
    threshold = scores[i, 0]
    passing = 0
    for j in range(size):
        if absolute:
            sims[j] = abs(sims[j])
        passing += sims[j] >= threshold
    if passing == 0:
        return
    for j in range(size):
        if sims[j] >= threshold and _worse(scores[i, 0], indices[i, 0], sims[j], first + j, i):
            _offer(scores, indices, i, sims[j], first + j)
            threshold = scores[i, 0]


@jit
def _join_probes(lo, hi, first, last, queries, lists, bounds, probes, absolute, scores, indices,
                 starts, members, sims):
    """Queries lo..hi-1 join their probes first..last-1, list by list: the queries probing a
    list (counting sort into `members`, list l's from starts[l] on) in fours against it."""
    n_lists = bounds.size - 1
    starts[:] = 0
    for i in range(lo, hi):
        for p in range(first, last):
            starts[probes[i, p] + 1] += 1
    for lst in range(n_lists):
        starts[lst + 1] += starts[lst]
    cursor = starts[:n_lists].copy()
    for i in range(lo, hi):
        for p in range(first, last):
            lst = probes[i, p]
            members[cursor[lst]] = i
            cursor[lst] += 1
    D = queries.shape[1]
    for lst in range(n_lists):
        s, e = starts[lst], starts[lst + 1]
        a, size = bounds[lst], bounds[lst + 1] - bounds[lst]
        if s == e or size == 0:
            continue
        block = lists[D * a:D * (a + size)]
        for g in range(s, e, 4):  # a last group of fewer than four repeats its last query
            _four_similarities(queries[members[g]], queries[members[min(g + 1, e - 1)]],
                               queries[members[min(g + 2, e - 1)]],
                               queries[members[min(g + 3, e - 1)]], block, size, sims)
            for r in range(min(4, e - g)):
                _offer_list(members[g + r], sims[r], size, a, absolute, scores, indices)


@jit
def ivf_top_k_range(lo, hi, queries, lists, bounds, probes, absolute, scores, indices):
    """Queries lo..hi-1 (rows of `queries`) join their running top-k (`kssc.neighbors._topk`)
    with the points of every list they probe (`probes`), by float32 inner product
    (absolute: its absolute value); `lists` as `transposed_lists` makes it, a point named
    by its place p in the lists (list l: places bounds[l] .. bounds[l + 1] - 1). List by
    list, as the fit's self-join: every query's own list (probes[:, 0]) first, so that its
    threshold is high when the other lists come, whose points then seldom enter. The top-k
    does not depend on the order (its tie order is total)."""
    n_lists, n_probe = bounds.size - 1, probes.shape[1]
    largest = 0
    for lst in range(n_lists):
        largest = max(largest, bounds[lst + 1] - bounds[lst])
    sims = np.empty((4, largest), dtype=np.float32)
    starts = np.empty(n_lists + 1, dtype=np.int64)
    members = np.empty((hi - lo) * max(1, n_probe - 1), dtype=np.int64)
    _join_probes(lo, hi, 0, 1, queries, lists, bounds, probes, absolute, scores, indices, starts,
                 members, sims)
    if n_probe > 1:
        _join_probes(lo, hi, 1, n_probe, queries, lists, bounds, probes, absolute, scores,
                     indices, starts, members, sims)


@parallel_jit
def ivf_top_k_blocks(blocks, queries, lists, bounds, probes, absolute, scores, indices):
    """`ivf_top_k_range` over the blocks of queries [blocks[b], blocks[b + 1]), in parallel
    (no two update the same query)."""
    for b in prange(blocks.size - 1):
        ivf_top_k_range(blocks[b], blocks[b + 1], queries, lists, bounds, probes, absolute,
                        scores, indices)


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


fill_cache(__name__)  # run from the on-disk cache, never from an in-process compile
