"""KSSC.predict: new points coded over their nearest training points, labelled by residual."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from kssc import ADMM, KSSC, clustering_error
from kssc._predict import query_neighbours, residual_labels
from kssc.neighbors import nearest_neighbours


def union(n_subspaces=4, dim=3, n_per=60, ambient=30, seed=0):
    rng = np.random.default_rng(seed)
    bases = [np.linalg.qr(rng.standard_normal((ambient, dim)))[0] for _ in range(n_subspaces)]
    X = np.vstack([rng.standard_normal((n_per, dim)) @ B.T for B in bases])
    y = np.repeat(np.arange(n_subspaces), n_per)
    order = rng.permutation(len(y))
    return X[order], y[order]


def matched_error(model, y_train, y_new, predicted):
    """Error of fit and prediction together, under one matching of labels to classes."""
    return clustering_error(np.concatenate([y_train, y_new]),
                            np.concatenate([model.labels_, predicted]))


@pytest.mark.parametrize("params", [
    {},
    {"n_neighbors": 10, "lam": 0.1, "lam_mode": "absolute", "positive": True,
     "affinity": "symmetric", "metric": "euclidean", "max_iter": 2000},
    {"n_neighbors": [5, 5], "neighbor_pcs": [0, 1], "n_random": 3, "metric": "l2",
     "lam": 0.05, "solver": ADMM(max_iter=1000)},
    {"n_neighbors": 10, "n_random": 5, "neighbor_pcs": 2, "lam": 0.05, "normalize": False,
     "solver": ADMM(outlier=True, max_iter=1000), "assign_labels": "njw"},
])
def test_held_out_points_get_their_subspace(params):
    X, y = union()
    model = KSSC(4, random_state=0, **params).fit(X[:180])
    assert clustering_error(y[:180], model.labels_) == 0.0
    predicted = model.predict(X[180:])
    assert matched_error(model, y[:180], y[180:], predicted) == 0.0


def test_training_points_keep_their_labels():
    X, y = union()
    model = KSSC(4, n_neighbors=10, random_state=0).fit(X)
    np.testing.assert_array_equal(model.predict(X), model.labels_)


def test_float32_new_points_agree_with_float64():
    X, y = union()
    model = KSSC(4, random_state=0).fit(X[:180].astype(np.float32))
    predicted = model.predict(X[180:].astype(np.float32))
    assert predicted.dtype == np.int64
    np.testing.assert_array_equal(predicted, model.predict(X[180:]))
    assert matched_error(model, y[:180], y[180:], predicted) == 0.0


def test_labels_do_not_depend_on_the_batch():
    X, _ = union()
    model = KSSC(4, n_neighbors=10, lam=0.05, solver=ADMM(max_iter=1000), random_state=0)
    model.fit(X[:180])
    together = model.predict(X[180:])
    one_by_one = np.concatenate([model.predict(X[i:i + 1]) for i in range(180, 240)])
    np.testing.assert_array_equal(together, one_by_one)


def test_unfitted_and_wrong_width_are_refused():
    X, _ = union()
    with pytest.raises(NotFittedError):
        KSSC(4).predict(X)
    model = KSSC(4, random_state=0).fit(X)
    with pytest.raises(ValueError, match="X has 29 features, but KSSC is expecting 30"):
        model.predict(X[:, :29])


def test_zero_new_point_is_named():
    X, _ = union()
    model = KSSC(4, random_state=0).fit(X)
    new = np.vstack([X[:3], np.zeros((1, X.shape[1]))])
    with pytest.warns(UserWarning, match=r"1 new point\(s\) have zero norm \(rows \[3\]\)"):
        labels = model.predict(new)
    assert labels[3] == np.bincount(model.labels_).argmax()


@pytest.mark.parametrize("metric", ["euclidean", "abs_cosine", "l2"])
def test_query_neighbours_match_the_search_of_the_fit(metric):
    # A new point's neighbours among training points = its neighbours in the union,
    # found by kssc.neighbors, once the other new points are dropped.
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 8))
    if metric != "l2":
        X /= np.linalg.norm(X, axis=1, keepdims=True)
    train, new = X[:250], X[250:]
    found = query_neighbours(new, train, 7, metric)
    full = nearest_neighbours(X, 60, metric=metric, normalize=False)[0][250:]
    expected = np.array([[j for j in row if j < 250][:7] for row in full])
    np.testing.assert_array_equal(found, expected)


def test_residual_rule_by_hand():
    # Point (1, 1, 0); candidates e1 (cluster 0), e2 (cluster 1), (1, 1, 0)/2 (cluster 1).
    train = np.array([[1.0, 0, 0], [0, 1.0, 0], [0.5, 0.5, 0]])
    labels = np.array([0, 1, 1])
    new = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    indices = np.array([[0, 1, 2], [0, 1, 2]])
    # Cluster 0 rebuilds e1 (residual 1), cluster 1 rebuilds 0.4 e2 + 0.5 (1, 1)/2 ...
    coef = np.array([[1.0, 0.4, 1.0], [0.0, 0.0, 0.0]])
    # ... = (0.5, 0.9, 0): residual sqrt(0.25 + 0.01) < 1. The all-zero code: nearest (0).
    np.testing.assert_array_equal(residual_labels(new, train, indices, coef, labels), [1, 0])
