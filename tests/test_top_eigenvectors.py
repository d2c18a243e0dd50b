import numpy as np
import scipy.sparse as sp

from kssc.spectral import _normalized_affinity, top_eigenvectors


def _block_graph(n_blocks=4, size=150, seed=0):
    rng = np.random.default_rng(seed)
    n = n_blocks * size
    rows = rng.integers(0, size, 8 * n) + np.repeat(np.arange(n_blocks) * size, 8 * size)
    cols = rng.integers(0, size, 8 * n) + np.repeat(np.arange(n_blocks) * size, 8 * size)
    noise = rng.integers(0, n, (2, n // 10))
    rows, cols = np.concatenate([rows, noise[0]]), np.concatenate([cols, noise[1]])
    W = sp.csr_matrix((rng.uniform(0.1, 1.0, rows.size), (rows, cols)), shape=(n, n))
    W = W + W.T
    W.setdiag(0)
    W.eliminate_zeros()
    return W


def test_sparse_path_agrees_with_dense_solver():
    P, _ = _normalized_affinity(_block_graph())
    dense_values, dense_vectors = top_eigenvectors(P, 6, random_state=0)
    values, vectors = top_eigenvectors(P, 6, random_state=0, dense_limit=10)
    np.testing.assert_allclose(values, dense_values, atol=1e-10)
    assert (np.diff(values) <= 0).all()
    # Same invariant subspace (the vectors of a repeated eigenvalue may rotate).
    cosines = np.linalg.svd(dense_vectors.T @ vectors, compute_uv=False)
    np.testing.assert_allclose(cosines, 1.0, atol=1e-8)


def test_sparse_path_is_deterministic_given_random_state():
    P, _ = _normalized_affinity(_block_graph(seed=1))
    first = top_eigenvectors(P, 5, random_state=3, dense_limit=10)
    second = top_eigenvectors(P, 5, random_state=3, dense_limit=10)
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
