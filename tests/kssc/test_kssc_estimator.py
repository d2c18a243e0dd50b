import pickle
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from kssc import ADMM, KSSC, clustering_error
from kssc.estimator import PAPER_SETTING


def union_of_subspaces(n_subspaces=4, dim=3, n_per=40, ambient=30, seed=0):
    rng = np.random.default_rng(seed)
    X = np.vstack([
        rng.standard_normal((n_per, dim)) @ np.linalg.qr(rng.standard_normal((ambient, dim)))[0].T
        for _ in range(n_subspaces)
    ])
    return X, np.repeat(np.arange(n_subspaces), n_per)


# The default k = 20 needs at least 21 samples; these checks fit on 10-20 samples, so with
# the default they can only meet our "n_neighbors must be < n_samples" error.
_TOO_FEW_SAMPLES_FOR_K20 = dict.fromkeys(
    [
        "check_dont_overwrite_parameters", "check_n_features_in_after_fitting",
        "check_estimators_dtypes", "check_estimators_nan_inf", "check_f_contiguous_array_estimator",
        "check_methods_sample_order_invariance", "check_methods_subset_invariance",
        "check_fit2d_1feature", "check_dict_unchanged", "check_fit2d_predict1d",
    ],
    "fits on <= 20 samples, fewer than the default n_neighbors=20 allows",
)


@parametrize_with_checks(
    [KSSC(n_neighbors=5), KSSC(), KSSC(n_neighbors=5, solver="exact", positive=False),
     # Elhamifar and Vidal's model on candidate sets (the tuned configurations' options).
     KSSC(n_neighbors=3, n_random=3, neighbor_pcs=1, lam=0.05, lam_mode="global",
          solver=ADMM(), positive=False, threshold=0.7, affinity="max_normalized",
          assign_labels="njw"),
     KSSC(n_neighbors=[2, 2], neighbor_pcs=[0, 1], metric="l2", normalize=False,
          lam=0.05, lam_mode="global", solver=ADMM(affine=True, stopping="each"),
          positive=False),
     KSSC(n_neighbors=4, lam=0.05, lam_mode="global", solver=ADMM(outlier=True),
          positive=False),
     KSSC(n_neighbors=5, l1_ratio=0.5), KSSC(n_neighbors=5, l1_ratio=0.5, solver=ADMM())],
    expected_failed_checks=lambda est: (_TOO_FEW_SAMPLES_FOR_K20
                                        if np.ndim(est.n_neighbors) == 0 and est.n_neighbors == 20
                                        else {}),
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"positive": True},
        {"solver": "exact"},
        {"solver": "admm", "threshold": 0.7},
        {"assign_labels": "kmeans"},
        PAPER_SETTING,
        {**PAPER_SETTING, "positive": False},
        {**PAPER_SETTING, "metric": "abs_cosine", "positive": False, "lam_mode": "relative",
         "lam": 0.05},
    ],
)
def test_noise_free_subspaces_clustered_exactly(params):
    X, y = union_of_subspaces()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = KSSC(4, n_neighbors=10, random_state=0, **params).fit(X)
    assert clustering_error(y, model.labels_) == 0.0
    Z = model.representation_matrix_.tocoo()
    assert Z.nnz > 0
    # The codes join points of the same subspace: with the paper's lambda = 0.1 exactly; with
    # the defaults' small global lambda and no thrC, FISTA's stopping rule leaves a few tiny
    # entries across subspaces (measured: 1 of 1598 non-zeros, 5e-6 of the mass).
    cross = y[Z.row] != y[Z.col]
    if params.get("lam") == PAPER_SETTING["lam"]:
        assert not cross.any()
    assert np.abs(Z.data[cross]).sum() <= 1e-4 * np.abs(Z.data).sum()
    assert (Z.row != Z.col).all()
    assert np.bincount(Z.row, minlength=len(y)).max() <= 10
    W = model.affinity_matrix_
    assert abs(W - W.T).max() == 0
    assert set(model.timings_) >= {"neighbours", "representation", "spectral"}


def test_representation_rebuilds_points():
    X, _ = union_of_subspaces(seed=1)
    # The paper's relaxed lasso with a small lam: Z rebuilds each point (no thrC, no scaling).
    model = KSSC(4, n_neighbors=10, **{**PAPER_SETTING, "lam": 1e-3, "positive": False,
                                         "max_iter": 2000}, random_state=0).fit(X)
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    residual = np.linalg.norm(U - model.representation_matrix_ @ U, axis=1)
    assert np.median(residual) < 0.05


def test_n_clusters_estimated_when_not_given():
    X, y = union_of_subspaces(n_subspaces=3, seed=2)
    model = KSSC(n_neighbors=10, random_state=0).fit(X)
    assert model.n_clusters_ == 3
    assert clustering_error(y, model.labels_) == 0.0


def test_permutation_float32_and_pickle():
    X, y = union_of_subspaces(seed=3)
    perm = np.random.default_rng(0).permutation(len(y))
    a = KSSC(4, n_neighbors=10, random_state=0).fit(X)
    b = KSSC(4, n_neighbors=10, random_state=0).fit(X[perm])
    c = KSSC(4, n_neighbors=10, random_state=0).fit(X.astype(np.float32))
    assert clustering_error(y[perm], b.labels_) == clustering_error(y, a.labels_) == 0.0
    assert clustering_error(y, c.labels_) == 0.0
    restored = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(restored.labels_, a.labels_)


def test_convergence_warning_when_max_iter_hit():
    X, _ = union_of_subspaces()
    with pytest.warns(ConvergenceWarning, match="reached max_iter=2"):
        KSSC(4, n_neighbors=10, max_iter=2, tol=0.0).fit(X)


@pytest.mark.parametrize("params", [PAPER_SETTING, {"assign_labels": "njw"}, {}])
def test_zero_norm_point_is_documented_not_fatal(params):
    # The zero-norm point is isolated (a degree-0 node): left in, it would add a unit
    # eigenvalue to the N-Cut matrix whose eigenvector can displace a cluster's (with the
    # defaults it left a label empty, 25 % error on the rest).
    X, y = union_of_subspaces()
    X[5] = 0.0
    with pytest.warns(UserWarning, match=r"1 point\(s\) have zero norm \(rows \[5\]\)"):
        model = KSSC(4, n_neighbors=10, random_state=0, **params).fit(X)
    assert model.representation_matrix_[5].nnz == 0
    keep = np.arange(len(y)) != 5
    assert clustering_error(y[keep], model.labels_[keep]) == 0.0
    assert model.labels_[5] == np.bincount(model.labels_[keep]).argmax()


@pytest.mark.parametrize(
    "X, params, message",
    [
        (np.full((10, 3), np.nan), {}, "NaN"),
        (np.array([[1.0, np.inf], [0.0, 1.0], [1.0, 1.0]]), {"n_neighbors": 1}, "infinity"),
        (np.arange(10.0), {}, "Expected 2D array"),
        (np.empty((0, 3)), {}, "0 sample"),
        (np.ones((8, 3)), {"n_neighbors": 8}, "n_neighbors=8 must be < n_samples=8"),
        (np.ones((8, 3)), {"n_neighbors": 2, "n_clusters": 9},
         "n_clusters=9 must be <= n_samples=8"),
        (np.ones((8, 3)), {"lam": 0.0}, "'lam' parameter"),
        (np.ones((8, 3)), {"lam": -1.0}, "'lam' parameter"),
        (np.ones((8, 3)), {"solver": "fista"}, "'solver' parameter"),
    ],
)
def test_bad_input_raises_clear_error(X, params, message):
    with pytest.raises(ValueError, match=message):
        KSSC(**params).fit(X)
