"""k nearest neighbour filtering: for every point, its k most similar *other* points.

`nearest_neighbors` validates and dispatches: the exact blocked search (`kssc._exact`) or
the approximate IVF self-join (`kssc._ann`).
"""

import warnings

from ._ann import IVF, approximate_search
from ._exact import exact_search
from ._validation import check_array_2d, check_n_neighbors, normalize_rows

METRICS = ("euclidean", "abs_cosine", "l2")


def search_neighbors(X, n_neighbors, metric="euclidean", algorithm="exact", block_size=None,
                     random_state=None):
    """`nearest_neighbors` on validated rows (unit-norm for the cosine metrics), with what
    the search reports: (indices, similarities, info), info a dict with at least "algorithm"
    and "recall" (1.0 for the exact search; measured on a sample for an index)."""
    if algorithm == "exact":
        indices, sims = exact_search(X, n_neighbors, metric, block_size)
        return indices, sims, {"algorithm": "exact", "recall": 1.0}
    if algorithm == "approximate":
        algorithm = IVF()
    if not isinstance(algorithm, IVF):
        raise ValueError("algorithm must be 'exact', 'approximate' or a kssc.IVF; "
                         f"got {algorithm!r}.")
    if metric == "l2":
        raise ValueError("metric='l2' has an exact search only: pass algorithm='exact'.")
    algorithm.validate()
    return approximate_search(X, n_neighbors, metric, algorithm, random_state=random_state)


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
        Exact blocked search on all cores, or an approximate index (faiss IVF) for large
        data: "approximate" is ``IVF()``, whose recall is measured on a sample of points
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
