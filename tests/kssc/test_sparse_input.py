"""KSSC on scipy.sparse rows: the dense fit's neighbours, codes and labels without a dense
copy of X, and clear errors for the settings that need dense rows."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from kssc import ADMM, KSSC, DegenerateFitWarning, clustering_error


def sparse_subspaces(n_subspaces=3, dim=3, n_per=40, ambient=200, support=12, seed=0):
    """A union of subspaces whose bases live on a few coordinates each: sparse rows."""
    rng = np.random.default_rng(seed)
    blocks = []
    for _ in range(n_subspaces):
        basis = np.zeros((dim, ambient))
        basis[:, rng.choice(ambient, support, replace=False)] = rng.standard_normal((dim, support))
        blocks.append(rng.standard_normal((n_per, dim)) @ basis)
    return sp.csr_matrix(np.vstack(blocks)), np.repeat(np.arange(n_subspaces), n_per)


@pytest.mark.parametrize("params", [
    {},
    {"metric": "euclidean", "n_random": 3, "lam_mode": "relative", "lam": 0.05},
    # Several chunks (the global penalty's first pass), views and an ADMM stopping each point.
    {"chunk_size": 16, "n_neighbors": [4, 4], "solver": ADMM(stopping="each"), "lam": 0.01,
     "threshold": 0.9},
    {"normalize": False, "lam_mode": "absolute", "lam": 0.01, "solver": "exact"},
    {"solver": ADMM(outlier=True, stopping="each"), "lam": 0.05, "chunk_size": 30},
])
def test_sparse_fit_equals_dense_fit(params):
    X, y = sparse_subspaces()
    params = {"n_clusters": 3, "n_neighbors": 8, "random_state": 0, **params}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dense = KSSC(**params).fit(X.toarray())
        sparse = KSSC(**params).fit(X)
    np.testing.assert_array_equal(sparse.neighbors_, dense.neighbors_)
    np.testing.assert_array_equal(sparse.labels_, dense.labels_)
    np.testing.assert_allclose(sparse.representation_matrix_.toarray(),
                               dense.representation_matrix_.toarray(), atol=1e-10)
    np.testing.assert_allclose(sparse.residuals_, dense.residuals_, atol=1e-10)
    np.testing.assert_array_equal(sparse.n_iter_, dense.n_iter_)


def test_sparse_fit_clusters_and_names_zero_rows():
    X, y = sparse_subspaces()
    assert clustering_error(y, KSSC(3, n_neighbors=8, random_state=0).fit(X).labels_) == 0.0
    X = X.tolil()
    X[5] = 0
    with pytest.warns(DegenerateFitWarning, match=r"1 point\(s\) have zero norm \(rows \[5\]\)"):
        KSSC(3, n_neighbors=8, random_state=0).fit(sp.csr_matrix(X))


@pytest.mark.parametrize("params, message", [
    ({"metric": "l2"}, "metric='l2'"),
    ({"neighbor_pcs": 1}, "neighbor_pcs=1 \\(removing principal directions"),
    ({"neighbor_algorithm": "approximate"}, "neighbor_algorithm='approximate'"),
    ({"solver": "admm"}, "an ADMM with stopping='all'"),
])
def test_settings_that_need_dense_rows_are_named(params, message):
    X, _ = sparse_subspaces()
    with pytest.raises(ValueError, match=message):
        KSSC(3, n_neighbors=8, **params).fit(X)


def test_predict_after_sparse_fit_is_refused():
    X, _ = sparse_subspaces()
    model = KSSC(3, n_neighbors=8, random_state=0).fit(X)
    with pytest.raises(TypeError, match="fitted on sparse rows"):
        model.predict(X[:3].toarray())
