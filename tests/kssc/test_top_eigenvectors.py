import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from kssc import clustering_error
from kssc.spectral._clustering import (
    _lobpcg_top,
    _normalized_affinity,
    discretize,
    top_eigenvectors,
)


@pytest.fixture
def blocks(block_graph):
    """`blocks(n_blocks=4, size=150, seed=0)`: a block graph with 8 edges per row."""
    return lambda n_blocks=4, size=150, seed=0: block_graph(n_blocks, size, seed=seed,
                                                            per_row=8)[0]


def test_sparse_path_agrees_with_dense_solver(blocks):
    P, _ = _normalized_affinity(blocks())
    dense_values, dense_vectors = top_eigenvectors(P, 6, random_state=0)
    values, vectors = top_eigenvectors(P, 6, random_state=0, dense_limit=10)
    np.testing.assert_allclose(values, dense_values, atol=1e-10)
    assert (np.diff(values) <= 0).all()
    # Same invariant subspace (the vectors of a repeated eigenvalue may rotate).
    cosines = np.linalg.svd(dense_vectors.T @ vectors, compute_uv=False)
    np.testing.assert_allclose(cosines, 1.0, atol=1e-8)


def test_sparse_path_is_deterministic_given_random_state(blocks):
    P, _ = _normalized_affinity(blocks(seed=1))
    first = top_eigenvectors(P, 5, random_state=3, dense_limit=10)
    second = top_eigenvectors(P, 5, random_state=3, dense_limit=10)
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])


def test_lobpcg_path_agrees_with_arpack_in_values_and_labels(blocks):
    W = blocks(seed=2)
    P, degrees = _normalized_affinity(W)
    arpack = top_eigenvectors(P, 4, random_state=0, dense_limit=10)
    lobpcg = top_eigenvectors(P, 4, random_state=0, dense_limit=10, solver="lobpcg", tol=1e-8)
    np.testing.assert_allclose(lobpcg[0], arpack[0], atol=1e-6)
    cosines = np.linalg.svd(arpack[1].T @ lobpcg[1], compute_uv=False)
    np.testing.assert_allclose(cosines, 1.0, atol=1e-6)
    labels = [discretize(vectors / np.sqrt(degrees)[:, None], 0) for _, vectors in (arpack, lobpcg)]
    truth = np.repeat(np.arange(4), 150)
    assert clustering_error(truth, labels[0]) == clustering_error(truth, labels[1]) == 0


def test_lobpcg_path_warns_when_it_stops_short_of_its_tolerance(blocks):
    P, _ = _normalized_affinity(blocks(seed=4))
    with pytest.warns(ConvergenceWarning, match="LOBPCG stopped at residual"):
        _lobpcg_top(P, 4, np.random.RandomState(0), tol=1e-8, max_iter=1)


def test_lobpcg_path_is_deterministic_given_random_state(blocks):
    P, _ = _normalized_affinity(blocks(seed=3))
    first = top_eigenvectors(P, 4, random_state=5, dense_limit=10, solver="lobpcg")
    second = top_eigenvectors(P, 4, random_state=5, dense_limit=10, solver="lobpcg")
    # Threaded BLAS may change the last bits between runs, not the vectors or their signs.
    np.testing.assert_allclose(first[1], second[1], atol=1e-7)
    np.testing.assert_array_equal(discretize(first[1], 0), discretize(second[1], 0))


def test_unknown_solver_is_named_in_the_error(blocks):
    P, _ = _normalized_affinity(blocks())
    with pytest.raises(ValueError, match="solver must be one of"):
        top_eigenvectors(P, 3, solver="amg")
