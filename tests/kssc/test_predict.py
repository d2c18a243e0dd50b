"""KSSC.predict: new points coded over their nearest training points, labelled by residual."""

import pickle

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from kssc import ADMM, IVF, KSSC, _predict, clustering_error, nearest_neighbors
from kssc._predict import (
    build_index,
    global_weight,
    query_candidates,
    query_index,
    residual_labels,
)
from kssc.coding.representation import penalty


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
def test_query_candidates_match_the_search_of_the_fit(metric):
    # A new point's neighbours among training points = its neighbours in the union,
    # found by kssc.neighbors, once the other new points are dropped.
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 8))
    if metric != "l2":
        X /= np.linalg.norm(X, axis=1, keepdims=True)
    train, new = X[:250], X[250:]
    model = KSSC(2, n_neighbors=7, metric=metric, normalize=metric != "l2",
                 random_state=0).fit(train)
    found = query_candidates(build_index(model), new, metric)
    full = nearest_neighbors(X, 60, metric=metric, normalize=False)[0][250:]
    expected = np.array([[j for j in row if j < 250][:7] for row in full])
    np.testing.assert_array_equal(found, expected)


@pytest.mark.parametrize("metric", ["euclidean", "abs_cosine"])
def test_index_probing_every_list_is_the_exact_search(metric):
    # The fit's IVF lists kept for predict: probing all of them finds the exact neighbours,
    # probing few of them finds fewer.
    rng = np.random.default_rng(2)
    X = rng.standard_normal((2400, 8))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    train, new = X[:2000], X[2000:]
    full = nearest_neighbors(X, 60, metric=metric, normalize=False)[0][2000:]
    expected = np.array([[j for j in row if j < 2000][:7] for row in full])
    for nprobe, recall in ((20, 1.0), (1, 0.9)):
        model = KSSC(2, n_neighbors=7, metric=metric, random_state=0,
                     neighbor_algorithm=IVF(nlist=20, nprobe=nprobe, min_recall=0)).fit(train)
        assert model.neighbor_search_["algorithm"] == "ivf"
        found = query_candidates(build_index(model), new, metric)
        share = np.mean([np.isin(f, e).mean() for f, e in zip(found, expected, strict=True)])
        assert share == 1.0 if recall == 1.0 else share < recall


def test_rows_whose_lists_hold_too_few_points_are_searched_exactly():
    # 150 neighbours from one probed list of about 40 points: every row is short and falls
    # back to the search over all training points.
    rng = np.random.default_rng(3)
    X = rng.standard_normal((2100, 8))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    train, new = X[:2000], X[2000:]
    model = KSSC(2, n_neighbors=150, random_state=0,
                 neighbor_algorithm=IVF(nlist=50, nprobe=1, min_recall=0)).fit(train)
    assert np.diff(build_index(model).views[0].bounds).max() < 150
    found = query_candidates(build_index(model), new, "abs_cosine")
    full = nearest_neighbors(X, 300, metric="abs_cosine", normalize=False)[0][2000:]
    expected = np.array([[j for j in row if j < 2000][:150] for row in full])
    np.testing.assert_array_equal(found, expected)



@pytest.mark.parametrize(("dim", "absolute"), [(10, True), (8, False)])
def test_ivf_kernel_keeps_the_best_of_the_probed_lists(dim, absolute):
    # The compiled list-by-list search against a brute force over each query's probed
    # lists: the same k places (D = 10 leaves a remainder after the four-dimension passes;
    # two blocks of 20 and 17 queries leave a last group of fewer than four in most lists).
    from kssc._predict_kernels import ivf_top_k_blocks, transposed_lists
    from kssc.neighbors._topk import empty_top_k

    rng = np.random.default_rng(7)
    points = rng.standard_normal((300, dim)).astype(np.float32)
    queries = rng.standard_normal((37, dim)).astype(np.float32)
    assignment = rng.integers(0, 12, 300)
    order = np.argsort(assignment, kind="stable")
    bounds = np.searchsorted(assignment[order], np.arange(13))
    probes = np.array([rng.choice(12, 4, replace=False) for _ in range(37)], dtype=np.int32)
    scores, found = empty_top_k(37, 6)
    lists = transposed_lists(points, order, bounds)
    ivf_top_k_blocks(np.array([0, 20, 37]), queries, lists, bounds, probes, absolute, scores,
                     found)
    similarity = queries.astype(float) @ points[order].T.astype(float)
    if absolute:
        similarity = np.abs(similarity)
    for q in range(37):
        places = np.concatenate([np.arange(bounds[lst], bounds[lst + 1]) for lst in probes[q]])
        best = places[np.argsort(-similarity[q, places])[:6]]
        assert set(found[q]) == set(best)


@pytest.mark.parametrize("algorithm", ["exact", "ivf"])
def test_unordered_candidates_are_the_ordered_sets(algorithm):
    # predict skips the float64 re-sort of a single view's candidates: the same candidates
    # in each row, and the re-sort is what orders them (most similar first).
    rng = np.random.default_rng(5)
    X = rng.standard_normal((2200, 8))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    search = "exact" if algorithm == "exact" else IVF(nlist=20, nprobe=4, min_recall=0)
    model = KSSC(2, n_neighbors=9, random_state=0, neighbor_algorithm=search).fit(X[:2000])
    index = build_index(model)
    ordered = query_candidates(index, X[2000:], "abs_cosine")
    unordered = query_candidates(index, X[2000:], "abs_cosine", ordered=False)
    np.testing.assert_array_equal(np.sort(unordered, axis=1), np.sort(ordered, axis=1))
    scores = np.abs(np.einsum("ij,ikj->ik", X[2000:], X[ordered]))
    assert (np.diff(scores, axis=1) <= 0).all()
    assert not (np.diff(np.abs(np.einsum("ij,ikj->ik", X[2000:], X[unordered])), axis=1)
                <= 0).all()

def ivf_union(n=6000, seed=0):
    """A union large enough for an IVF index of a few dozen lists."""
    X, y = union(n_subspaces=4, dim=4, n_per=n // 4, ambient=24, seed=seed)
    return X + 0.01 * np.random.default_rng(seed).standard_normal(X.shape), y


@pytest.fixture(scope="module")
def ivf_model():
    X, y = ivf_union()
    model = KSSC(4, random_state=0, neighbor_algorithm=IVF(recall_sample=300)).fit(X[:5000])
    assert model.neighbor_search_["algorithm"] == "ivf"
    assert clustering_error(y[:5000], model.labels_) < 1.0
    return model, X, y


def test_index_repredicts_the_fitted_labels(ivf_model):
    model, X, y = ivf_model
    assert np.mean(model.predict(X[:5000]) == model.labels_) >= 0.99
    predicted = model.predict(X[5000:])
    assert matched_error(model, y[:5000], y[5000:], predicted) < 1.0


def test_batches_do_not_change_the_labels(ivf_model, monkeypatch):
    model, X, _ = ivf_model
    whole = model.predict(X[5000:])
    # A fresh index whose batches hold 100 points (about 100 x 24 float64 rows).
    monkeypatch.setattr(_predict, "_BATCH_BYTES", 100 * 8 * X.shape[1])
    del _predict._INDEXES[model]
    assert query_index(model).batch == 100
    np.testing.assert_array_equal(model.predict(X[5000:]), whole)
    np.testing.assert_array_equal(
        np.concatenate([model.predict(X[i:i + 137]) for i in range(5000, 6000, 137)]), whole)


def test_float32_points_and_a_refit_on_the_index(ivf_model):
    model, X, _ = ivf_model
    np.testing.assert_array_equal(model.predict(X[5000:].astype(np.float32)),
                                  model.predict(X[5000:]))
    with pytest.raises(ValueError, match="X has 23 features, but KSSC is expecting 24"):
        model.predict(X[5000:, :23])
    # A refit (other points) must not label with the index kept from the last fit.
    refit = KSSC(4, random_state=0, neighbor_algorithm=IVF(recall_sample=300))
    refit.fit(X[1000:])
    index = query_index(refit)
    refit.fit(X[:5000])
    np.testing.assert_array_equal(refit.predict(X[5000:]), model.predict(X[5000:]))
    assert query_index(refit) is not index


@pytest.mark.parametrize("positive", [False, True])
@pytest.mark.parametrize("gamma", [None, 3.0])
def test_global_weight_is_the_fit_penalty(positive, gamma):
    rng = np.random.default_rng(4)
    P = rng.standard_normal((500, 12))
    P /= np.linalg.norm(P, axis=1, keepdims=True)
    indices = rng.integers(0, 500, (500, 9))
    expected = penalty(P, indices, 0.1, "global", positive=positive, outlier_gamma=gamma,
                       chunk_size=128)[0]
    assert global_weight(P, indices, 0.1, positive, gamma) == pytest.approx(expected, rel=1e-12)


def test_a_model_that_predicted_pickles_without_its_index(ivf_model):
    model, X, _ = ivf_model
    labels = model.predict(X[5000:5100])
    assert model in _predict._INDEXES
    copy = pickle.loads(pickle.dumps(model))
    assert copy not in _predict._INDEXES
    np.testing.assert_array_equal(copy.predict(X[5000:5100]), labels)


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
