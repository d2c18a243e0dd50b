"""KSSC.fit with precomputed neighbours: the labels of the internal search given the same
neighbours, and clear errors for neighbours that cannot be used."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.neighbors import KNeighborsTransformer, NearestNeighbors, kneighbors_graph

from kssc import KSSC, nearest_neighbors
from kssc.datasets import make_subspaces


@pytest.fixture(scope="module")
def data():
    X, y, _ = make_subspaces(3, 3, 40, 20, noise=0.01, random_state=0)
    return X, y


def assert_same_fit(a, b):
    np.testing.assert_array_equal(a.neighbors_, b.neighbors_)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert abs(a.representation_matrix_ - b.representation_matrix_).max() == 0.0


@pytest.mark.parametrize("metric", ["abs_cosine", "euclidean"])
def test_indices_give_the_internal_search_labels(data, metric):
    X, _ = data
    params = {"n_clusters": 3, "n_neighbors": 8, "n_random": 3, "metric": metric, "random_state": 0}
    searched = KSSC(**params).fit(X)
    indices, similarities = nearest_neighbors(X, 12, metric=metric)
    given = KSSC(**params).fit(X, neighbors=indices)
    assert_same_fit(searched, given)
    assert given.neighbor_search_["algorithm"] == "precomputed"
    assert np.isnan(given.neighbor_recall_)
    # A pair (indices, distances) is ranked by distance: shuffled columns come back in order.
    shuffle = np.random.default_rng(0).permutation(12)
    pair = (indices[:, shuffle], 1.0 - similarities[:, shuffle])
    assert_same_fit(searched, KSSC(**params).fit(X, neighbors=pair))


@pytest.mark.parametrize("graph", ["transformer", "kneighbors_graph"])
def test_sklearn_knn_graph_gives_the_internal_search_labels(data, graph):
    # KSSC's "euclidean" metric is the Euclidean distance of unit rows: scikit-learn's
    # graph of the unit rows ranks the same neighbours (the transformer includes each
    # point itself, which is dropped).
    X, _ = data
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    G = (KNeighborsTransformer(n_neighbors=10, mode="distance").fit_transform(U)
         if graph == "transformer" else kneighbors_graph(U, 10, mode="distance"))
    params = {"n_clusters": 3, "n_neighbors": 8, "metric": "euclidean", "random_state": 0}
    assert_same_fit(KSSC(**params).fit(X), KSSC(**params).fit(X, neighbors=G))


def test_neighbours_reused_across_fits(data):
    X, _ = data
    wide = KSSC(3, n_neighbors=12, random_state=0).fit(X)
    params = {"n_clusters": 3, "n_neighbors": 6, "random_state": 0}
    assert_same_fit(KSSC(**params).fit(X), KSSC(**params).fit(X, neighbors=wide.neighbors_))


def _bad_neighbours(X):
    n = X.shape[0]
    indices = nearest_neighbors(X, 8)[0]
    with_self = NearestNeighbors(n_neighbors=8).fit(X).kneighbors(X)[1]
    repeated = indices.copy()
    repeated[3, 1] = repeated[3, 0]
    out_of_range = indices.copy()
    out_of_range[2, 4] = n
    short_graph = kneighbors_graph(X, 8, mode="distance").tolil()
    short_graph[7, short_graph.rows[7][0]] = 0
    short_graph = sp.csr_matrix(short_graph)
    short_graph.eliminate_zeros()
    return [
        (indices[:-1], "must have shape \\(n_samples=120, k\\)"),
        (indices[:, :4], "have 4 columns for n_neighbors=5"),
        (indices.astype(float), "must be integers"),
        (out_of_range, "must be in \\[0, 120\\); rows \\[2\\]"),
        (with_self, "120 point\\(s\\) are among their own neighbours"),
        (repeated, "1 row\\(s\\) of the precomputed neighbours repeat a neighbour \\(rows \\[3\\]"),
        ((indices, np.ones((n, 3))), "distances must be finite with the indices' shape"),
        (kneighbors_graph(X[:-1], 8, mode="distance"), "must have shape \\(n_samples, "
                                                       "n_samples\\) = \\(120, 120\\)"),
        (short_graph, "1 row\\(s\\) of the precomputed kNN graph have fewer than n_neighbors=8"),
        (-kneighbors_graph(X, 8, mode="distance"), "finite non-negative distances"),
    ]


@pytest.mark.parametrize("case", range(10))
def test_bad_neighbours_raise_clear_error(data, case):
    X, _ = data
    neighbors, message = _bad_neighbours(X)[case]
    n_neighbors = 8 if "kNN graph have fewer" in message else 5
    with pytest.raises(ValueError, match=message):
        KSSC(3, n_neighbors=n_neighbors).fit(X, neighbors=neighbors)


@pytest.mark.parametrize("params", [{"n_neighbors": [4, 4]}, {"neighbor_pcs": 1}])
def test_views_refused_with_precomputed_neighbours(data, params):
    X, _ = data
    with pytest.raises(ValueError, match="precomputed neighbours take one n_neighbors"):
        KSSC(3, **params).fit(X, neighbors=nearest_neighbors(X, 8)[0])
