"""Compiled running top-k: the k best (score, index) pairs of every row, updated block by block.

The order is total: a higher score is better and, between equal scores, a fixed
pseudo-random order of the indices per row (`_key`),
so the result does not depend on the order in which blocks arrive (a multi-threaded search
is deterministic). A row's worst kept pair is the threshold a new entry must beat: after a
few blocks almost none does, so an update is one compare per entry, at memory speed.
Imported on first use (numba's import is heavy). No fastmath: -inf marks excluded entries.
"""

import numba
import numpy as np

jit = numba.njit(cache=True, nogil=True)


@jit
def _key(row, index):
    """Tie order of candidate `index` in row `row`: a fixed pseudo-random permutation per
    row (multiplicative hashing), so tied candidates are spread over the tied points
    rather than all taken from the lowest indices; -1 (an empty slot) sorts last."""
    if index < 0:
        return np.int64(2**62)
    return ((index * 2654435761) ^ (row * 2246822519)) & 0xFFFFFFFF


@jit
def _worst(scores, indices, row):
    """Position of the worst kept pair of `row`."""
    w = 0
    for p in range(1, scores.shape[1]):
        s, ws = scores[row, p], scores[row, w]
        if s < ws or (s == ws and _key(row, indices[row, p]) > _key(row, indices[row, w])):
            w = p
    return w


@jit
def _kth_largest(values, rank, top):
    """The `rank`-th largest of `values` (-inf when there are at most `rank`), by a small
    insertion buffer `top`."""
    if values.size <= rank:
        return -np.inf
    for p in range(rank):
        top[p] = -np.inf
    low = 0
    for v in values:
        if v > top[low]:
            top[low] = v
            for p in range(rank):
                if top[p] < top[low]:
                    low = p
    return top[low]


@jit
def _offer(scores, indices, g, v, i, w):
    """Put (v, i) in place of row g's worst pair w; return the new worst position."""
    scores[g, w] = v
    indices[g, w] = i
    return _worst(scores, indices, g)


@jit
def _update_rows(S, maxima, floor_rank, col_ids, slots, skip, scores, indices):
    """Row r of S joins the top-k of row slots[r], except the entry of index skip[r]. Column
    group q (columns q, q + n_groups, ...) is read only when its maximum maxima[r, q]
    reaches both the row's threshold and its floor (the `floor_rank`-th largest group
    maximum: that many entries of the block are at least that, so nothing below it can be
    among the best k);
    the columns past the last whole group are always read."""
    n_groups = maxima.shape[1]
    group = S.shape[1] // n_groups
    top = np.empty(max(floor_rank, 1), dtype=maxima.dtype)
    for r in range(S.shape[0]):
        g = slots[r]
        w = _worst(scores, indices, g)
        ws, wk = scores[g, w], _key(g, indices[g, w])
        passing = 0
        for q in range(n_groups):
            passing += maxima[r, q] >= ws
        # The floor prunes only when more groups than its rank reach the threshold.
        floor = _kth_largest(maxima[r], floor_rank, top) if passing > floor_rank else -np.inf
        for q in range(n_groups):
            m = maxima[r, q]
            if m >= ws and m >= floor:
                for t in range(group):
                    c = q + n_groups * t
                    v = S[r, c]
                    if (v > ws or (v == ws and _key(g, col_ids[c]) < wk)) \
                            and col_ids[c] != skip[r]:
                        w = _offer(scores, indices, g, v, col_ids[c], w)
                        ws, wk = scores[g, w], _key(g, indices[g, w])
        for c in range(n_groups * group, S.shape[1]):
            v = S[r, c]
            if (v > ws or (v == ws and _key(g, col_ids[c]) < wk)) and col_ids[c] != skip[r]:
                w = _offer(scores, indices, g, v, col_ids[c], w)
                ws, wk = scores[g, w], _key(g, indices[g, w])


@jit
def _update_columns(S, maxima, floor, row_ids, scores, indices, col_start):
    """Column c of S joins the top-k of row col_start + c, read row by row (no transpose);
    row group q (rows q, q + n_groups, ...) of column c is read only when its maximum
    maxima[q, c] reaches the threshold and floor[c] (as `_update_rows`)."""
    n_groups, n_cols = maxima.shape
    group = S.shape[0] // n_groups
    worst = np.empty(n_cols, dtype=np.int64)
    gate = np.empty(n_cols, dtype=S.dtype)
    for c in range(n_cols):
        worst[c] = _worst(scores, indices, col_start + c)
        gate[c] = max(scores[col_start + c, worst[c]], floor[c])
    for q in range(n_groups):
        for c in range(n_cols):
            if maxima[q, c] >= gate[c]:
                g = col_start + c
                for t in range(group):
                    r = q + n_groups * t
                    v, ws = S[r, c], scores[g, worst[c]]
                    if v > ws or (v == ws and _key(g, row_ids[r]) < _key(g, indices[g, worst[c]])):
                        worst[c] = _offer(scores, indices, g, v, row_ids[r], worst[c])
                gate[c] = max(scores[g, worst[c]], floor[c])
    for r in range(n_groups * group, S.shape[0]):
        for c in range(n_cols):
            g = col_start + c
            v, ws = S[r, c], scores[g, worst[c]]
            if v > ws or (v == ws and _key(g, row_ids[r]) < _key(g, indices[g, worst[c]])):
                worst[c] = _offer(scores, indices, g, v, row_ids[r], worst[c])


def _group(length, k):
    return int(np.clip(np.sqrt(length / k), 1, 128))


def _floor(maxima, k, axis):
    """The k-th largest group maximum along `axis` (-inf when there are at most k groups)."""
    n_groups = maxima.shape[axis]
    if n_groups <= k:
        return np.full(maxima.shape[1 - axis], -np.inf, dtype=maxima.dtype)
    return np.take(np.partition(maxima, n_groups - k, axis=axis), n_groups - k, axis=axis)


def update_rows(S, col_ids, scores, indices, slots, skip=None):
    """Row r of S (entry c has index col_ids[c]) joins the top-k of row slots[r] (an int
    array, or an int: slots[r] = slots + r), except the entry of index skip[r] (None: none).

    Group maxima first (an elementwise maximum of contiguous slabs, at memory speed), so
    the compiled scan reads only the groups that can still enter."""
    rows, width = S.shape
    k = scores.shape[1]
    if np.ndim(slots) == 0:
        slots = np.arange(slots, slots + rows)
    # A skipped entry may be one of the k largest group maxima: then only the k + 1st
    # bounds the k best others from below.
    floor_rank = k if skip is None else k + 1
    if skip is None:
        skip = np.full(rows, -1, dtype=np.int64)
    n_groups = width // _group(width, k)
    maxima = S[:, :n_groups * (width // n_groups)].reshape(rows, -1, n_groups).max(axis=1)
    _update_rows(S, maxima, floor_rank, col_ids, slots, skip, scores, indices)


def update_columns(S, row_ids, scores, indices, col_start):
    """Column c of S (entry r has index row_ids[r]) joins the top-k of row col_start + c."""
    height, cols = S.shape
    k = scores.shape[1]
    n_groups = height // _group(height, k)
    maxima = S[:n_groups * (height // n_groups)].reshape(-1, n_groups, cols).max(axis=0)
    _update_columns(S, maxima, _floor(maxima, k, 0), row_ids, scores, indices, col_start)


def empty_top_k(n, k):
    """Running top-k arrays of n rows: scores -inf (float32), indices -1."""
    return np.full((n, k), -np.inf, dtype=np.float32), np.full((n, k), -1, dtype=np.int64)
