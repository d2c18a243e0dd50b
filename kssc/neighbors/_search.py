"""k nearest neighbour filtering: for every point, its k most similar *other* points.

`nearest_neighbors` validates and dispatches: the exact blocked search (`kssc.neighbors._exact`) or
the approximate IVF self-join (`kssc.neighbors._ann`).
"""

import warnings

import numpy as np
import scipy.sparse as sp

from ..utils._validation import check_array_2d, check_n_neighbors, normalize_rows
from ._ann import IVF, approximate_search
from ._ann import memory_bytes as approximate_memory
from ._exact import exact_search
from ._exact import memory_bytes as exact_memory
from ._memory import check_memory, gib

METRICS = ("euclidean", "abs_cosine", "l2")


def search_neighbors(X, n_neighbors, metric="euclidean", algorithm="exact", block_size=None,
                     random_state=None, progress=None):
    """`nearest_neighbors` on validated rows (unit-norm for the cosine metrics), with what
    the search reports: (indices, similarities, info), info a dict with at least "algorithm"
    and "recall" (1.0 for the exact search; measured on a sample for an index). Checks the
    memory the search needs first (`NeighborMemoryError`); `progress(done, total)` is
    called as its blocks finish."""
    if algorithm == "approximate":
        algorithm = IVF()
    if algorithm != "exact" and not isinstance(algorithm, IVF):
        raise ValueError("algorithm must be 'exact', 'approximate' or a kssc.IVF; "
                         f"got {algorithm!r}.")
    if algorithm != "exact" and metric == "l2":
        raise ValueError("metric='l2' has an exact search only: pass algorithm='exact'.")
    if algorithm != "exact":
        algorithm.validate()
    check_search_memory(X.shape, X.dtype, n_neighbors, metric, algorithm)
    if algorithm == "exact":
        indices, sims = exact_search(X, n_neighbors, metric, block_size, progress=progress)
        return indices, sims, {"algorithm": "exact", "recall": 1.0}
    return approximate_search(X, n_neighbors, metric, algorithm, random_state=random_state,
                              progress=progress)


def check_search_memory(shape, dtype, n_neighbors, metric="euclidean", algorithm="exact"):
    """Raise `NeighborMemoryError` when the search would need more memory than is available:
    what it needs, what is available and what would lower it."""
    n, d = shape
    exact = exact_memory(n, d, n_neighbors, metric, dtype)
    approximate = approximate_memory(n, d, n_neighbors,
                                     algorithm if isinstance(algorithm, IVF) else None, dtype)
    needed = exact if algorithm == "exact" else approximate
    advice = []
    if dtype != np.float32:
        advice.append(f"pass float32 data (no float32 copy: {gib(4 * n * d)} less)")
    if algorithm == "exact" and metric != "l2" and approximate < exact:
        advice.append(f"use the approximate search (neighbor_algorithm='approximate': about "
                      f"{gib(approximate)})")
    advice.append(f"lower n_neighbors (each neighbour costs {gib(60 * n)})")
    advice.append("or fit on a larger machine (kssc.distributed.fit splits the rows over a "
                  "dask cluster)")
    name = "exact" if algorithm == "exact" else "approximate"
    check_memory(needed, f"the {name} neighbour search of {n} x {d} {np.dtype(dtype).name} "
                 f"points (n_neighbors={n_neighbors})", "; ".join(advice) + ".")


def nearest_neighbors(X, n_neighbors, *, metric="euclidean", algorithm="exact", block_size=None,
                      normalize=True, random_state=None):
    """The `n_neighbors` most similar other points of every row of `X`.

    A point is never its own neighbour, also when the data holds exact duplicates.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Points as rows, at least two (float32 data, also a memory map, is searched as is).
    n_neighbors : int
        Neighbours per point; must be < n_samples.
    metric : {"euclidean", "abs_cosine", "l2"}, default="euclidean"
        Euclidean distance between unit-normalised points (signed cosine), absolute cosine,
        or Euclidean distance between the points as given (exact search only).
    algorithm : {"exact", "approximate"} or IVF, default="exact"
        Exact blocked search on all cores, or an approximate index (the IVF self-join) for
        large data: "approximate" is ``IVF()``, whose recall is measured on a sample of points
        (a `NeighborRecallWarning` when it is low).
    block_size : int or None, default=None
        Rows per block of the exact search (None: about 128 MiB of similarities in all).
    normalize : bool, default=True
        Normalise rows to unit norm first (the cosine metrics are defined on unit vectors);
        pass False when the rows already have unit norm. Ignored by "l2".
    random_state : int, RandomState instance or None, default=None
        Seeds the approximate index and its recall sample; unused by the exact search.

    Returns
    -------
    indices : ndarray of shape (n_samples, n_neighbors)
        Row indices of every point's neighbours, most similar first.
    similarities : ndarray of shape (n_samples, n_neighbors)
        Their cosine similarities (absolute values for "abs_cosine"; Euclidean distances,
        ascending, for "l2"), in float64.

    See Also
    --------
    KSSC : Codes every point over the neighbours this function finds.
    IVF : The approximate index and its recall check.
    sklearn.neighbors.NearestNeighbors : General neighbour search.

    Examples
    --------
    >>> import numpy as np
    >>> from kssc import nearest_neighbors
    >>> X = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [-0.1, 0.9], [-1.0, 0.05]])
    >>> indices, similarities = nearest_neighbors(X, 1)
    >>> indices[:, 0]
    array([1, 0, 3, 2, 3])
    >>> nearest_neighbors(X, 1, metric="abs_cosine")[0][:, 0]
    array([4, 0, 3, 2, 0])
    >>> nearest_neighbors(X, 1, metric="l2")[0][:, 0]
    array([1, 0, 3, 2, 3])
    """
    X = check_array_2d(X, min_samples=2)
    k = check_n_neighbors(n_neighbors, X.shape[0])
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}; got {metric!r}.")
    if normalize and metric != "l2":
        X, _ = normalize_rows(X)
    return search_neighbors(X, k, metric, algorithm, block_size, random_state)[:2]


def nearest_neighbours(*args, **kwargs):
    """Deprecated alias of `nearest_neighbors` (removed in 0.3): the public names are
    spelt as scikit-learn's."""
    warnings.warn("kssc.nearest_neighbours is deprecated and will be removed in 0.3: use "
                  "kssc.nearest_neighbors.", FutureWarning, stacklevel=2)
    return nearest_neighbors(*args, **kwargs)


def precomputed_neighbors(neighbors, n_samples, n_neighbors):
    """The (n_samples, n_neighbors) neighbour indices of user-given neighbours, checked.

    `neighbors` is an index array (n_samples, k), most similar first (as
    `nearest_neighbors` or scikit-learn's ``NearestNeighbors().kneighbors()`` give), a pair
    (indices, distances) of such arrays (each row is then ranked by distance, ties in the
    given order), or a sparse (n_samples, n_samples) kNN graph whose stored values are
    distances (scikit-learn's ``kneighbors_graph(mode="distance")`` or
    ``KNeighborsTransformer``; entries on the diagonal, the point itself, are dropped). The
    first `n_neighbors` of each row are kept. Raises a ValueError naming the problem: shape,
    too few neighbours, an index out of range, a point among its own neighbours, a repeated
    neighbour.
    """
    if sp.issparse(neighbors):
        indices = _graph_neighbors(neighbors, n_samples, n_neighbors)
    else:
        indices, distances = (neighbors if isinstance(neighbors, tuple) and len(neighbors) == 2
                              else (neighbors, None))
        indices = np.asarray(indices)
        if indices.ndim != 2 or indices.shape[0] != n_samples:
            raise ValueError(f"precomputed neighbours must have shape (n_samples={n_samples}, "
                             f"k); got {indices.shape}.")
        if indices.size and not np.issubdtype(indices.dtype, np.integer):
            raise ValueError(f"precomputed neighbour indices must be integers; got dtype "
                             f"{indices.dtype}.")
        if indices.shape[1] < n_neighbors:
            raise ValueError(f"the precomputed neighbours have {indices.shape[1]} columns for "
                             f"n_neighbors={n_neighbors}: give at least n_neighbors "
                             "neighbours per point or lower n_neighbors.")
        if distances is not None:
            distances = np.asarray(distances, dtype=float)
            if distances.shape != indices.shape or not np.isfinite(distances).all():
                raise ValueError(f"precomputed distances must be finite with the indices' "
                                 f"shape {indices.shape}; got {distances.shape}.")
            indices = np.take_along_axis(indices, np.argsort(distances, axis=1,
                                                             kind="stable"), axis=1)
        indices = indices.astype(np.int64)
    indices = np.ascontiguousarray(indices[:, :n_neighbors])
    bad = np.flatnonzero(((indices < 0) | (indices >= n_samples)).any(axis=1))
    if bad.size:
        raise ValueError(f"precomputed neighbour indices must be in [0, {n_samples}); rows "
                         f"{bad[:5].tolist()} hold {indices[bad[0]].tolist()}...")
    own = np.flatnonzero((indices == np.arange(n_samples)[:, None]).any(axis=1))
    if own.size:
        raise ValueError(f"{own.size} point(s) are among their own neighbours (rows "
                         f"{own[:5].tolist()}): a point is coded over other points. "
                         "scikit-learn's kneighbors(X) returns the point itself first: call "
                         "kneighbors() without X, or drop the first column.")
    ranked = np.sort(indices, axis=1)
    repeated = np.flatnonzero((ranked[:, 1:] == ranked[:, :-1]).any(axis=1))
    if repeated.size:
        raise ValueError(f"{repeated.size} row(s) of the precomputed neighbours repeat a "
                         f"neighbour (rows {repeated[:5].tolist()}).")
    return indices


def _graph_neighbors(graph, n_samples, n_neighbors):
    """The `n_neighbors` nearest of every row of a sparse distance graph, self dropped."""
    if graph.shape != (n_samples, n_samples):
        raise ValueError(f"a precomputed kNN graph must have shape (n_samples, n_samples) = "
                         f"({n_samples}, {n_samples}); got {graph.shape}.")
    graph = sp.csr_matrix(graph)
    distances = np.asarray(graph.data, dtype=float)
    if not (np.isfinite(distances).all() and (distances >= 0).all()):
        raise ValueError("a precomputed kNN graph must hold finite non-negative distances.")
    rows = np.repeat(np.arange(n_samples), np.diff(graph.indptr))
    other = graph.indices != rows
    rows, columns, distances = rows[other], graph.indices[other], distances[other]
    counts = np.bincount(rows, minlength=n_samples)
    short = np.flatnonzero(counts < n_neighbors)
    if short.size:
        raise ValueError(f"{short.size} row(s) of the precomputed kNN graph have fewer than "
                         f"n_neighbors={n_neighbors} other points (rows {short[:5].tolist()} "
                         f"have {counts[short[:5]].tolist()}): give at least n_neighbors "
                         "neighbours per point or lower n_neighbors.")
    order = np.lexsort((distances, rows))  # stable: ties keep the stored order
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return columns[order][starts[:, None] + np.arange(n_neighbors)].astype(np.int64)
