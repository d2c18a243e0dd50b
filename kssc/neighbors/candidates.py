"""Candidate sets: the points each point may be coded over, beyond its plain neighbours.

A candidate set joins one or more neighbour views, each searched after removing the
data's top principal directions (on faces mostly illumination, on motion trajectories the
camera's motion, docs/tuned_accuracy.md), and extra random other points. The random ones keep
each subspace's graph connected: with local neighbours only, a large subspace's graph can
be a chain that N-Cut cuts in the middle. Every function here runs in O(n k) memory
(plus one block of rows at a time).
"""

import numpy as np

from ..utils._validation import check_n_neighbors, normalize_rows
from ._search import precomputed_neighbors, search_neighbors

_BLOCK_BYTES = 64 * 2**20
# Up to this many points the random candidates come from random keys over all points (the
# draws behind the committed tuned results, O(n^2) time); above, from rejection sampling.
_KEYS_UP_TO = 20_000


def _block_rows(n, width):
    return int(max(1, min(n, _BLOCK_BYTES // (8 * max(width, 1)))))


def top_components(X, n_components):
    """X's top `n_components` right singular vectors (uncentred), as rows."""
    n, d = X.shape
    if n >= d:
        # From the d x d Gram matrix: O(d^2) memory however many points.
        return np.linalg.eigh(X.T @ X)[1][:, ::-1][:, :n_components].T
    return np.linalg.svd(X, full_matrices=False)[2][:n_components]


def remove_top_components(X, n_components):
    """X minus its projection on its top `n_components` right singular vectors (uncentred)."""
    if n_components <= 0:
        return X
    top = top_components(X, n_components)
    return X - (X @ top.T) @ top


def merge_candidates(first, more, n_new):
    """Append to each row of `first` (n, k1) the first `n_new` entries of the same row of
    `more` (n, >= k1 + n_new, distinct per row) that are not in it."""
    taken = (more[:, :, None] == first[:, None, :]).any(axis=2)
    order = np.argsort(taken, axis=1, kind="stable")[:, :n_new]
    return np.hstack([first, np.take_along_axis(more, order, axis=1)])


def _random_by_keys(first, n_random, random_state):
    """Uniform keys over all points, a block of rows at a time (the same stream as one
    (n, n) draw); the smallest keys outside `first` and the point itself win."""
    n = first.shape[0]
    block = _block_rows(n, n)
    picks = np.empty((n, n_random), dtype=np.int64)
    for start in range(0, n, block):
        stop = min(start + block, n)
        keys = random_state.random_sample((stop - start, n))
        rows = np.arange(stop - start)[:, None]
        keys[rows, first[start:stop]] = np.inf
        keys[rows[:, 0], rows[:, 0] + start] = np.inf
        picks[start:stop] = np.argpartition(keys, n_random - 1, axis=1)[:, :n_random]
    return picks


def _random_by_rejection(first, n_random, random_state):
    """Draw uniform integers per row and keep the first `n_random` that are new in the row,
    not in `first` and not the point itself; rows left short draw again."""
    n, k1 = first.shape
    picks = np.empty((n, n_random), dtype=np.int64)
    todo = np.arange(n)
    width = 2 * (n_random + k1 + 1)
    while todo.size:
        draws = random_state.randint(0, n, size=(todo.size, width))
        bad = (draws == todo[:, None]) | (draws[:, :, None] == first[todo][:, None, :]).any(axis=2)
        order = np.argsort(draws, axis=1, kind="stable")
        ranked = np.take_along_axis(draws, order, 1)
        repeat = np.zeros(draws.shape, dtype=bool)
        repeat[:, 1:] = ranked[:, 1:] == ranked[:, :-1]
        np.put_along_axis(bad, order, np.take_along_axis(bad, order, 1) | repeat, 1)
        good = ~bad
        full = good.sum(axis=1) >= n_random
        rows = np.flatnonzero(full)
        slots = np.argsort(bad[rows], axis=1, kind="stable")[:, :n_random]
        picks[todo[rows]] = np.take_along_axis(draws[rows], slots, 1)
        todo = todo[~full]
    return picks


def random_candidates(first, n_random, random_state):
    """Append to each row of `first` (n, k1) `n_random` distinct other points not in it,
    drawn uniformly at random with `random_state` (a numpy RandomState)."""
    if n_random <= 0:
        return first
    draw = _random_by_keys if first.shape[0] <= _KEYS_UP_TO else _random_by_rejection
    return np.hstack([first, draw(first, n_random, random_state)])


def _check_views(n_neighbors, neighbor_pcs):
    counts = np.atleast_1d(np.asarray(n_neighbors))
    pcs = np.atleast_1d(np.asarray(neighbor_pcs))
    for name, values, low in (("n_neighbors", counts, 1), ("neighbor_pcs", pcs, 0)):
        if (values.ndim != 1 or values.size == 0 or not np.issubdtype(values.dtype, np.integer)
                or values.min() < low):
            raise ValueError(f"{name} must be an integer >= {low} or a non-empty list of them; "
                             f"got {n_neighbors if name == 'n_neighbors' else neighbor_pcs!r}.")
    if pcs.size == 1 and counts.size > 1:
        pcs = np.repeat(pcs, counts.size)
    if counts.size != pcs.size:
        raise ValueError(f"n_neighbors ({n_neighbors!r}) and neighbor_pcs ({neighbor_pcs!r}) "
                         "must have the same length.")
    return counts.tolist(), pcs.tolist()


def _view_progress(progress, view, n_views, steps=1000):
    """`progress` of view `view` of `n_views`, mapped on one scale of n_views * steps."""
    if progress is None or n_views == 1:
        return progress
    return lambda done, total: progress(view * steps + done * steps // total, n_views * steps)


def candidate_sets(X, n_neighbors, *, neighbor_pcs=0, n_random=0, metric="euclidean",
                   algorithm="exact", unit_rows=False, random_state=None, progress=None):
    """The candidates (n, k) of every row of X: neighbour views, then random other points.

    Parameters
    ----------
    X : array (n_samples, n_features)
    n_neighbors : int or list of int
        Neighbours per view; their sum must be < n_samples. View j adds the
        ``n_neighbors[j]`` nearest points not added by earlier views.
    neighbor_pcs : int or list of int, default=0
        Top principal directions removed before each view's search (one value for all
        views, or one per view; at most min(X.shape) - 1 are removed).
    n_random : int, default=0
        Extra distinct random other points per row (at most as many as are left).
    metric : {"euclidean", "abs_cosine", "l2"}
        "euclidean" and "abs_cosine" on unit vectors; "l2" the Euclidean distance of the
        points as given (`kssc.neighbors._search.search_neighbors`, exact for "l2").
    algorithm : {"exact", "approximate"} or IVF
        Search of the unit-vector metrics.
    unit_rows : bool, default=False
        X's rows already have unit norm (skips renormalising a view with no direction removed).
    random_state : numpy RandomState
        Draws the random candidates (and seeds an approximate search).
    progress : callable or None
        ``progress(done, total)`` as the searches advance (all views on one scale).

    Returns (indices (n, k), search): `search` is the last view's search report
    (`kssc.neighbors._search.search_neighbors`) with "recall" the lowest over the views (1.0 when
    all are exact; NaN when an index did not measure it).
    """
    n = X.shape[0]
    counts, pcs = _check_views(n_neighbors, neighbor_pcs)
    check_n_neighbors(int(sum(counts)), n)
    indices = np.empty((n, 0), dtype=np.int64)
    recall = 1.0
    for view, (count, removed) in enumerate(zip(counts, pcs, strict=True)):
        Q = remove_top_components(X, min(removed, min(X.shape) - 1))
        wanted = indices.shape[1] + count
        if metric != "l2" and not (unit_rows and Q is X):
            Q = normalize_rows(Q)[0]
        found, _, search = search_neighbors(Q, wanted, metric,
                                             "exact" if metric == "l2" else algorithm,
                                             random_state=random_state,
                                             progress=_view_progress(progress, view, len(counts)))
        recall = float(np.minimum(recall, search["recall"]))
        indices = merge_candidates(indices, found, count) if indices.shape[1] else found
    n_random = min(n_random, n - 1 - indices.shape[1])
    return random_candidates(indices, n_random, random_state), {**search, "recall": recall}


def precomputed_candidates(neighbors, n_samples, n_neighbors, *, n_random=0,
                           random_state=None):
    """`candidate_sets` from user-given neighbours (`kssc.neighbors._search.precomputed_neighbors`
    checks and ranks them): their first `n_neighbors` per row, then `n_random` random other
    points drawn as `candidate_sets` draws them (the same candidates for the same
    neighbours and generator). Returns (indices (n, k), search report)."""
    indices = precomputed_neighbors(neighbors, n_samples, check_n_neighbors(n_neighbors,
                                                                           n_samples))
    n_random = min(n_random, n_samples - 1 - indices.shape[1])
    return (random_candidates(indices, n_random, random_state),
            {"algorithm": "precomputed", "recall": float("nan")})
