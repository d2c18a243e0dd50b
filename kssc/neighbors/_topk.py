"""Compiled running top-k: the k best (score, index) pairs of every row, updated block by block.

The order is total: a higher score is better and, between equal scores, a fixed
pseudo-random order of the indices per row (`_key`),
so the result does not depend on the order in which blocks arrive (a multi-threaded search
is deterministic). Each row's k pairs are a binary min-heap in that order: the worst kept
pair, at position 0, is the threshold a new entry must beat (after a few blocks almost none
does, so an update is one compare per entry, at memory speed), and an entry that does
replaces it in log k steps.
Imported on first use (numba's import is heavy). No fastmath: -inf marks excluded entries.
"""

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from ..coding._kernels import fill_cache

jit = numba.njit(cache=True, nogil=True)
# `_join_rows` asks for the top-k of the row this many rows ahead while it scans the current
# one: the rows of a join's block are scattered over all points, so each row's top-k is a
# cache miss that the scan then overlaps.
_PREFETCH_AHEAD = 4


@jit
def _key(row, index):
    """Tie order of candidate `index` in row `row`: a fixed pseudo-random permutation per
    row (multiplicative hashing), so tied candidates are spread over the tied points
    rather than all taken from the lowest indices; -1 (an empty slot) sorts last."""
    if index < 0:
        return np.int64(2**62)
    return ((index * 2654435761) ^ (row * 2246822519)) & 0xFFFFFFFF


@jit
def _worse(s, i, t, j, row):
    """Whether pair (s, i) is worse than (t, j) in `row`'s order (the key only on a tie)."""
    return s < t or (s == t and _key(row, i) > _key(row, j))


@jit
def _offer(scores, indices, g, v, i):
    """Put (v, i) in place of row g's worst pair (the heap's root) and restore the heap."""
    k = scores.shape[1]
    p = 0
    while True:
        c = 2 * p + 1
        if c >= k:
            break
        if c + 1 < k and _worse(scores[g, c + 1], indices[g, c + 1], scores[g, c],
                                indices[g, c], g):
            c += 1
        if not _worse(scores[g, c], indices[g, c], v, i, g):
            break
        scores[g, p] = scores[g, c]
        indices[g, p] = indices[g, c]
        p = c
    scores[g, p] = v
    indices[g, p] = i


@jit
def _update_rows(S, n_groups, col_ids, slots, skip, scores, indices):
    """Row r of S joins the top-k of row slots[r], except the entry of index skip[r].

    A row's group maxima (group q: columns q, q + n_groups, ...) are taken first, by an
    elementwise maximum of contiguous slabs that also notes where each maximum lies; a group
    is read only when its maximum reaches the row's threshold. When more groups than k
    reach it (a row whose top-k is empty or weak for this block), those maxima are offered
    first: the threshold is then at least the k-th largest group maximum, and the groups'
    other entries seldom enter (an entry that enters costs log k steps). The columns past
    the last whole group are always read."""
    k = scores.shape[1]
    group = S.shape[1] // n_groups
    maxima = np.empty(n_groups, dtype=S.dtype)
    where = np.zeros(n_groups, dtype=np.int64)
    for r in range(S.shape[0]):
        g = slots[r]
        for q in range(n_groups):
            maxima[q] = S[r, q]
            where[q] = q
        for t in range(1, group):
            slab = S[r, n_groups * t:n_groups * (t + 1)]
            for q in range(n_groups):
                if slab[q] > maxima[q]:  # this form vectorises (max() did not: 5x slower)
                    maxima[q] = slab[q]
                    where[q] = n_groups * t + q
        passing = 0
        for q in range(n_groups):
            passing += maxima[q] >= scores[g, 0]
        seeded = passing > k
        if seeded:
            for q in range(n_groups):
                c = where[q]
                if _worse(scores[g, 0], indices[g, 0], S[r, c], col_ids[c], g) \
                        and col_ids[c] != skip[r]:
                    _offer(scores, indices, g, S[r, c], col_ids[c])
        for q in range(n_groups):
            if maxima[q] >= scores[g, 0]:
                for t in range(group):
                    c = q + n_groups * t
                    if seeded and c == where[q]:
                        continue  # offered above
                    if _worse(scores[g, 0], indices[g, 0], S[r, c], col_ids[c], g) \
                            and col_ids[c] != skip[r]:
                        _offer(scores, indices, g, S[r, c], col_ids[c])
        for c in range(n_groups * group, S.shape[1]):
            if _worse(scores[g, 0], indices[g, 0], S[r, c], col_ids[c], g) \
                    and col_ids[c] != skip[r]:
                _offer(scores, indices, g, S[r, c], col_ids[c])


@intrinsic
def _prefetch(typingctx, array, row):
    """Hint the CPU to load the start of row `row` of a C-contiguous 2D array (for
    writing, into every cache level): llvm.prefetch, which never faults."""
    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        data = context.make_array(array_type)(context, builder, args[0])
        zero = context.get_constant(types.intp, 0)
        pointer = cgutils.get_item_pointer(context, builder, array_type, data, [args[1], zero],
                                           wraparound=False)
        byte_pointer, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        hint = builder.module.declare_intrinsic(
            "llvm.prefetch", fnty=ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32]))
        builder.call(hint, [builder.bitcast(pointer, byte_pointer), ir.Constant(i32, 1),
                            ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(array, types.intp), codegen


@jit
def _reached_by(values, count):
    """A value that at least `count` of `values` reach, close below the count-th largest:
    bisection between their extremes (a branch-free count a step, no reordering)."""
    low, high = values.min(), values.max()
    for _ in range(12):
        middle = low + (high - low) * 0.5
        if middle <= low or middle >= high:
            break
        reaching = 0
        for value in values:
            reaching += value >= middle
        if reaching >= count:
            low = middle
        else:
            high = middle
    return low


@jit
def _join_rows(S, n_groups, col_ids, slots, skip, scores, indices):
    """`_update_rows` for rows scattered over many points, and rows whose top-k is empty or
    weak (the IVF join's blocks, the assignment to lists): the same result.

    A row's group maxima are taken as there. When more than k + 1 groups reach the row's
    threshold, the threshold is raised to a value that k + 1 group maxima reach (so that k
    entries other than skip[r] do: nothing below it can enter), found by bisection; only the
    entries of the groups that reach it are read, and only those that reach it are offered
    (about k, not one a group). The next rows' top-k are prefetched."""
    k = scores.shape[1]
    width, n_rows = S.shape[1], S.shape[0]
    group = width // n_groups
    maxima = np.empty(n_groups, dtype=S.dtype)
    for r in range(n_rows):
        if r + _PREFETCH_AHEAD < n_rows:
            _prefetch(scores, slots[r + _PREFETCH_AHEAD])
            _prefetch(indices, slots[r + _PREFETCH_AHEAD])
        g = slots[r]
        for q in range(n_groups):
            maxima[q] = S[r, q]
        for t in range(1, group):
            slab = S[r, n_groups * t:n_groups * (t + 1)]
            for q in range(n_groups):
                if slab[q] > maxima[q]:
                    maxima[q] = slab[q]
        cut = scores[g, 0]
        passing = 0
        for q in range(n_groups):
            passing += maxima[q] >= cut
        if passing > k + 1:
            cut = max(cut, _reached_by(maxima, k + 1))
        for q in range(n_groups):
            if maxima[q] >= cut:
                for t in range(group):
                    c = q + n_groups * t
                    if S[r, c] >= cut and col_ids[c] != skip[r] \
                            and _worse(scores[g, 0], indices[g, 0], S[r, c], col_ids[c], g):
                        _offer(scores, indices, g, S[r, c], col_ids[c])
        for c in range(n_groups * group, width):
            if col_ids[c] != skip[r] \
                    and _worse(scores[g, 0], indices[g, 0], S[r, c], col_ids[c], g):
                _offer(scores, indices, g, S[r, c], col_ids[c])


@jit
def _update_columns(S, maxima, floor, row_ids, scores, indices, col_start):
    """Column c of S joins the top-k of row col_start + c, read row by row (no transpose);
    row group q (rows q, q + n_groups, ...) of column c is read only when its maximum
    maxima[q, c] reaches the threshold and floor[c] (as `_update_rows`)."""
    n_groups, n_cols = maxima.shape
    group = S.shape[0] // n_groups
    gate = np.empty(n_cols, dtype=S.dtype)
    for c in range(n_cols):
        gate[c] = max(scores[col_start + c, 0], floor[c])
    for q in range(n_groups):
        for c in range(n_cols):
            if maxima[q, c] >= gate[c]:
                g = col_start + c
                for t in range(group):
                    r = q + n_groups * t
                    if _worse(scores[g, 0], indices[g, 0], S[r, c], row_ids[r], g):
                        _offer(scores, indices, g, S[r, c], row_ids[r])
                gate[c] = max(scores[g, 0], floor[c])
    for r in range(n_groups * group, S.shape[0]):
        for c in range(n_cols):
            g = col_start + c
            if _worse(scores[g, 0], indices[g, 0], S[r, c], row_ids[r], g):
                _offer(scores, indices, g, S[r, c], row_ids[r])


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

    The compiled scan reads only the column groups whose maximum can still enter."""
    rows, width = S.shape
    k = scores.shape[1]
    if np.ndim(slots) == 0:
        slots = np.arange(slots, slots + rows)
    if skip is None:
        skip = np.full(rows, -1, dtype=np.int64)
    _update_rows(S, width // _group(width, k), col_ids, slots, skip, scores, indices)


def join_rows(S, col_ids, scores, indices, slots, skip=None):
    """`update_rows` by `_join_rows`: for blocks whose rows' top-k lie scattered over many
    points, or are empty or weak (the IVF join, the assignment to lists); the same result."""
    rows, width = S.shape
    if np.ndim(slots) == 0:
        slots = np.arange(slots, slots + rows)
    if skip is None:
        skip = np.full(rows, -1, dtype=np.int64)
    _join_rows(S, width // _group(width, scores.shape[1]), col_ids, slots, skip, scores,
               indices)


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


fill_cache(__name__)  # run from the on-disk cache, never from an in-process compile
