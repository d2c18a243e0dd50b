"""Synthetic generators: shapes, labels, subspace structure, determinism, argument checks."""

import time

import numpy as np
import pytest
from scipy.linalg import subspace_angles

from kssc.datasets import (
    dependent_coefficients,
    make_dvsn_data,
    make_intersection_data,
    make_mv_data,
    make_runtime_data,
    make_subspaces,
    make_tir,
    make_tir_large,
    random_orthonormal,
)


def cluster_rank(X, y, label, tol=1e-8):
    block = X[y == label]
    s = np.linalg.svd(block, compute_uv=False)
    return int((s > tol * s[0]).sum())


def cluster_basis(X, y, label, dim):
    return np.linalg.svd(X[y == label].T, full_matrices=False)[0][:, :dim]


def n_shared_directions(X, y, a, b, dim):
    angles = subspace_angles(cluster_basis(X, y, a, dim), cluster_basis(X, y, b, dim))
    return int((angles < 1e-6).sum())


def test_make_subspaces_shapes_labels_rank():
    X, y, X_clean = make_subspaces(4, 3, 25, 20, random_state=0)
    assert X.shape == X_clean.shape == (100, 20)
    assert X.dtype == np.float64
    np.testing.assert_array_equal(np.bincount(y), [25] * 4)
    np.testing.assert_array_equal(y, np.sort(y))
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    np.testing.assert_array_equal(X, X_clean)
    assert [cluster_rank(X, y, k) for k in range(4)] == [3] * 4
    assert np.linalg.matrix_rank(X) == 12


def test_make_subspaces_shared_block_is_shared():
    X, y, _ = make_subspaces(3, 5, 30, 40, shared_dim=2, random_state=1)
    for a, b in [(0, 1), (0, 2), (1, 2)]:
        assert n_shared_directions(X, y, a, b, 5) == 2
    assert np.linalg.matrix_rank(X, tol=1e-8) == 2 + 3 * 3


def test_make_subspaces_coefficients():
    _, _, X = make_subspaces(1, 4, 20000, 4, coefficients="gaussian", coef_mean=0.5, coef_var=2.0,
                             normalize=False, random_state=2)
    basis = np.linalg.svd(X.T, full_matrices=False)[0]
    coef = X @ basis  # rotation of the coefficients keeps the sum of variances
    assert np.trace(np.cov(coef.T)) == pytest.approx(4 * 2.0, rel=0.05)
    # |B @ (0.5 * 1)| = 1
    assert np.linalg.norm(X.mean(axis=0)) == pytest.approx(0.5 * 2.0, rel=0.05)
    _, _, U = make_subspaces(1, 3, 5000, 3, coefficients="uniform", normalize=False, random_state=3)
    assert np.abs(U).max() <= np.sqrt(3) * 0.5 + 1e-12


def test_make_subspaces_noise_after_normalisation():
    X, y, X_clean = make_subspaces(2, 3, 500, 50, noise=0.1, random_state=4)
    np.testing.assert_allclose(np.linalg.norm(X_clean, axis=1), 1.0)
    assert np.std(X - X_clean) == pytest.approx(0.1, rel=0.05)


def test_generators_are_deterministic():
    calls = [
        lambda rs: make_subspaces(3, 2, 10, 8, noise=0.1, shared_dim=1, random_state=rs),
        lambda rs: make_dvsn_data(30, 6, 15, random_state=rs),
        lambda rs: make_mv_data(0.5, 1.0, 0.05, random_state=rs),
        lambda rs: make_intersection_data(3, ambient_dim=30, n_per_subspace=20, random_state=rs),
        lambda rs: make_runtime_data(20, random_state=rs),
        lambda rs: make_tir(np.eye(10), n_per_subspace=7, noise=0.1, random_state=rs),
    ]
    for call in calls:
        first, again, other = call(7), call(7), call(8)
        for a, b in zip(first, again, strict=True):
            np.testing.assert_array_equal(a, b)
        assert not np.array_equal(first[0], other[0])
    a = make_dvsn_data(30, 6, 15, random_state=np.random.RandomState(0))[0]
    b = make_dvsn_data(30, 6, 15, random_state=np.random.RandomState(0))[0]
    np.testing.assert_array_equal(a, b)


def test_make_dvsn_data():
    X, y = make_dvsn_data(50, 9, 30, random_state=5)
    assert X.shape == (150, 50)
    np.testing.assert_array_equal(np.bincount(y), [30] * 5)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    assert [cluster_rank(X, y, k) for k in range(5)] == [9] * 5
    assert n_shared_directions(X, y, 0, 4, 9) == 3  # the d/3 block shared by all


def test_make_mv_data():
    X, y, B = make_mv_data(0.3, 1.5, 0.05, random_state=6)
    assert X.shape == B.shape == (100, 50)
    np.testing.assert_allclose(np.linalg.norm(B, axis=1), 1.0)
    assert [cluster_rank(B, y, k) for k in range(5)] == [10] * 5
    assert np.std(X - B) == pytest.approx(0.05, rel=0.15)
    X0, _, B0 = make_mv_data(0.3, 1.5, 0.0, random_state=6)
    np.testing.assert_array_equal(X0, B0)


@pytest.mark.parametrize("t", [0, 1, 4, 9, 10])
def test_make_intersection_data_dimension(t):
    X, y = make_intersection_data(t, ambient_dim=60, n_per_subspace=40, random_state=t)
    assert X.shape == (80, 60)
    np.testing.assert_array_equal(np.bincount(y), [40, 40])
    assert [cluster_rank(X, y, k) for k in range(2)] == [10, 10]
    assert n_shared_directions(X, y, 0, 1, 10) == t
    assert np.linalg.matrix_rank(X, tol=1e-8) == 20 - t


def test_make_intersection_data_positive_cone():
    X, _ = make_intersection_data(0, ambient_dim=200, n_per_subspace=200, random_state=0)
    assert X.shape == (400, 200)
    first = X[:200]
    basis = np.linalg.svd(first.T, full_matrices=False)[0][:, :10]
    assert np.abs(first - first @ basis @ basis.T).max() < 1e-10


def test_make_runtime_data():
    X, y, A = make_runtime_data(40, random_state=7)
    assert X.shape == A.shape == (200, 500)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    assert [cluster_rank(A, y, k) for k in range(5)] == [4] * 5
    # un-normalised A: coefficients N(0.25, 0.001) give norms near 0.25 * 2 = 0.5
    assert np.median(np.linalg.norm(A, axis=1)) == pytest.approx(0.5, rel=0.1)


def test_dependent_coefficients_covariance():
    C = dependent_coefficients(0.1, 0.001, 40000, 5, random_state=8)
    assert C.shape == (40000, 5)
    cov = np.cov(C.T)
    np.testing.assert_allclose(C.mean(axis=0), 0.1, atol=1e-3)
    np.testing.assert_allclose(np.diag(cov), 0.001, rtol=0.05)
    np.testing.assert_allclose(np.diag(cov, 1), 0.0005, rtol=0.08)
    np.testing.assert_allclose(np.diag(cov, 2), 0.0, atol=5e-5)


def test_dependent_coefficients_large_is_fast():
    start = time.perf_counter()
    C = dependent_coefficients(0.1, 0.001, 3, 200_000, random_state=9)
    assert time.perf_counter() - start < 2.0
    assert C.shape == (3, 200_000) and np.isfinite(C).all()
    lag1 = np.mean((C[:, 1:] - 0.1) * (C[:, :-1] - 0.1))
    assert lag1 == pytest.approx(0.0005, rel=0.05)


def test_make_tir_on_a_toy_library():
    rng = np.random.default_rng(0)
    library = rng.uniform(size=(30, 40))
    X, y, X_clean = make_tir(library, n_subspaces=4, n_spectra=3, n_per_subspace=50, noise=0.2,
                             random_state=1)
    assert X.shape == X_clean.shape == (200, 40)
    np.testing.assert_array_equal(np.bincount(y), [50] * 4)
    assert all(cluster_rank(X_clean, y, k) <= 3 for k in range(4))
    assert np.std(X - X_clean) == pytest.approx(0.2, rel=0.05)
    Xl, yl = make_tir_large(library, 1000, random_state=2)
    assert Xl.shape == (5000, 40) and np.bincount(yl).tolist() == [1000] * 5


def test_make_tir_draws_spectra_with_replacement():
    # with a 2-spectrum library and 5 draws, every subspace repeats a spectrum
    library = np.eye(2, 6)
    X, y, _ = make_tir(library, n_subspaces=3, n_spectra=5, n_per_subspace=10, random_state=3)
    assert all(cluster_rank(X, y, k) <= 2 for k in range(3))


def test_random_orthonormal():
    Q = random_orthonormal(7, 3, random_state=0)
    np.testing.assert_allclose(Q.T @ Q, np.eye(3), atol=1e-12)
    assert random_orthonormal(7, 0).shape == (7, 0)


@pytest.mark.parametrize(
    ("call", "names"),
    [
        (lambda: make_subspaces(0, 2, 5, 4), ["n_subspaces", "0"]),
        (lambda: make_subspaces(2, 2, -1, 4), ["n_per_subspace", "-1"]),
        (lambda: make_subspaces(2, 5, 5, 4), ["subspace_dim=5", "ambient_dim=4"]),
        (lambda: make_subspaces(2, 2, 5, 4, shared_dim=3), ["shared_dim=3", "subspace_dim=2"]),
        (lambda: make_subspaces(2, 2, 5, 4, noise=-0.1), ["noise", "-0.1"]),
        (lambda: make_subspaces(2, 2, 5, 4, coefficients="laplace"), ["coefficients", "laplace"]),
        (lambda: make_subspaces(2, 2.5, 5, 4), ["subspace_dim", "2.5"]),
        (lambda: make_dvsn_data(30, 4, 10), ["subspace_dim=4", "multiple of 3"]),
        (lambda: make_intersection_data(11), ["t=11", "subspace_dim=10"]),
        (lambda: make_intersection_data(-1), ["t", "-1"]),
        (lambda: make_mv_data(0.1, -1.0, 0.0), ["coef_var", "-1.0"]),
        (lambda: dependent_coefficients(0.1, 0.001, 0, 5), ["n_rows", "0"]),
        (lambda: make_tir(np.ones(5), n_spectra=2), ["library", "(5,)"]),
    ],
)
def test_bad_arguments_name_the_values(call, names):
    with pytest.raises(ValueError) as info:
        call()
    for name in names:
        assert name in str(info.value)
