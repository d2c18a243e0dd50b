"""k nearest neighbour filtering: for every point, its k most similar *other* points."""

import numpy as np

from ._validation import check_array_2d, check_n_neighbors, normalize_rows

METRICS = ("euclidean", "abs_cosine")
_BLOCK_BYTES = 128 * 2**20
# Neighbour vectors gathered at a time to re-score the chosen candidates: with the similarity
# block above, the search's working memory stays near 256 MiB whatever n_features.
_RESCORE_BYTES = 128 * 2**20


def _similarity(block, X, metric):
    S = block @ X.T
    return np.abs(S, out=S) if metric == "abs_cosine" else S


def _top_k(S, k, group):
    """Column indices of the k largest entries of every row of S (unordered).

    Exact two-stage selection: the k largest entries lie in the k column groups (of
    `group` adjacent columns) with the largest maxima, so a partition of the group maxima
    and then of k * group candidates replaces a partition of every row (a few times faster).
    """
    rows, width = S.shape
    n_groups = width // group
    if n_groups <= k:
        return np.argpartition(S, width - k, axis=1)[:, width - k:]
    maxima = S.reshape(rows, n_groups, group).max(axis=2)
    top_groups = np.argpartition(maxima, n_groups - k, axis=1)[:, n_groups - k:]
    candidates = (top_groups[:, :, None] * group + np.arange(group)).reshape(rows, -1)
    values = np.take_along_axis(S, candidates, 1)
    chosen = np.argpartition(values, values.shape[1] - k, axis=1)[:, values.shape[1] - k:]
    return np.take_along_axis(candidates, chosen, 1)


def rescore(points, X_unit, found):
    """Inner products of every row of `points` (b, D) with its candidates X_unit[found] (b, k).

    Gathers at most `_RESCORE_BYTES` of neighbour vectors at a time (chunks of rows, and of
    the k columns when one row's k neighbours exceed it), each chunk by the same
    contraction, so the values do not depend on the chunking.
    """
    b, k = found.shape
    per_gather = max(1, _RESCORE_BYTES // (X_unit.shape[1] * X_unit.itemsize))
    n_rows, n_cols = max(1, per_gather // k), min(k, per_gather)
    sims = np.empty((b, k), dtype=X_unit.dtype)
    for r in range(0, b, n_rows):
        for c in range(0, k, n_cols):
            chosen = found[r:r + n_rows, c:c + n_cols]
            sims[r:r + n_rows, c:c + n_cols] = np.einsum("ij,ikj->ik", points[r:r + n_rows],
                                                         X_unit[chosen])
    return sims


def exact_neighbours(X_unit, n_neighbors, metric="euclidean", block_size=None):
    """Exact k nearest neighbours of unit-norm rows, by blocked matrix products.

    "euclidean" ranks by signed inner product (Euclidean distance between unit vectors, what
    the paper's code did); "abs_cosine" by its absolute value (x and -x span the same line).
    A point is never its own neighbour, also when the data holds exact duplicates: the
    exclusion is by index. Memory: a float32 copy of the data, one block of `block_size` x
    n_samples similarities and at most `_RESCORE_BYTES` of gathered neighbours, whatever
    n_features.

    Returns (indices, similarities), each (n_samples, n_neighbors), most similar first.
    """
    n = X_unit.shape[0]
    k = n_neighbors
    group = int(np.clip(np.sqrt(n / k), 1, 128))
    width = -(-n // group) * group
    if block_size is None:
        block_size = int(max(1, min(n, _BLOCK_BYTES // (4 * width))))
    # The search runs in float32 (twice the BLAS speed); the chosen similarities are
    # recomputed in the input precision and re-sorted. Zero rows pad the database to whole
    # groups and are masked out.
    database = np.zeros((width, X_unit.shape[1]), dtype=np.float32)
    database[:n] = X_unit
    indices = np.empty((n, k), dtype=np.int64)
    sims = np.empty((n, k), dtype=X_unit.dtype)
    for start in range(0, n, block_size):
        stop = min(start + block_size, n)
        S = _similarity(database[start:stop], database, metric)
        S[:, n:] = -np.inf
        rows = np.arange(stop - start)
        S[rows, rows + start] = -np.inf
        found = _top_k(S, k, group)
        indices[start:stop] = found
        sims[start:stop] = rescore(X_unit[start:stop], X_unit, found)
    if metric == "abs_cosine":
        sims = np.abs(sims)
    order = np.argsort(-sims, axis=1, kind="stable")
    return np.take_along_axis(indices, order, 1), np.take_along_axis(sims, order, 1)


def nearest_neighbours(X, n_neighbors, *, metric="euclidean", algorithm="exact", block_size=None,
                       normalize=True, random_state=None):
    """The `n_neighbors` most similar other points of every row of `X`.

    A point is never its own neighbour, also when the data holds exact duplicates.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Points as rows, at least two.
    n_neighbors : int
        Neighbours per point; must be < n_samples.
    metric : {"euclidean", "abs_cosine"}, default="euclidean"
        Euclidean distance between unit-normalised points (signed cosine) or absolute cosine.
    algorithm : {"exact", "approximate"}, default="exact"
        Exact blocked search, or an approximate index (faiss IVF) for large data.
    block_size : int or None, default=None
        Rows per block of the exact search (None: about 128 MiB of similarities a block).
    normalize : bool, default=True
        Normalise rows to unit norm first (the metrics are defined on unit vectors); pass
        False when the rows already have unit norm.
    random_state : int, RandomState instance or None, default=None
        Seeds the approximate index; unused by the exact search.

    Returns
    -------
    indices : ndarray of shape (n_samples, n_neighbors)
        Row indices of every point's neighbours, most similar first.
    similarities : ndarray of shape (n_samples, n_neighbors)
        Their cosine similarities (absolute values for "abs_cosine").

    See Also
    --------
    KSSC : Codes every point over the neighbours this function finds.
    sklearn.neighbors.NearestNeighbors : General neighbour search.

    Examples
    --------
    >>> import numpy as np
    >>> from kssc import nearest_neighbours
    >>> X = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [-0.1, 0.9], [-1.0, 0.05]])
    >>> indices, similarities = nearest_neighbours(X, 1)
    >>> indices[:, 0]
    array([1, 0, 3, 2, 3])
    >>> nearest_neighbours(X, 1, metric="abs_cosine")[0][:, 0]
    array([4, 0, 3, 2, 0])
    """
    X = check_array_2d(X, min_samples=2)
    k = check_n_neighbors(n_neighbors, X.shape[0])
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}; got {metric!r}.")
    if normalize:
        X, _ = normalize_rows(X)
    if algorithm == "exact":
        return exact_neighbours(X, k, metric, block_size)
    if algorithm == "approximate":
        from ._ann import approximate_neighbours

        return approximate_neighbours(X, k, metric, random_state=random_state)
    raise ValueError(f"algorithm must be 'exact' or 'approximate'; got {algorithm!r}.")
