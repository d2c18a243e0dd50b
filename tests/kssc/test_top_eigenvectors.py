import numpy as np
import pytest
import scipy.sparse as sp
from _graphs import loose_clusters_ncut
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import eigsh
from sklearn.exceptions import ConvergenceWarning

from kssc import clustering_error
from kssc.spectral._clustering import (
    _lobpcg_top,
    _normalized_affinity,
    arpack_top,
    coarse_top,
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


def _component(size, per_row, seed):
    """A random graph of `size` points (connected for these sizes and seeds)."""
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(size), per_row)
    cols = rng.integers(0, size, size * per_row)
    W = sp.csr_matrix((rng.random(rows.size), (rows, cols)), shape=(size, size))
    W = W + W.T
    W.setdiag(0)
    W.eliminate_zeros()
    return W


@pytest.mark.parametrize("seed", range(10))
def test_arpack_finds_every_copy_of_a_repeated_component(seed):
    # Eight identical components: the top eigenvalue is one value 8 times. One Lanczos solve
    # from one start vector returned it fewer times at 4 of these 10 seeds (before the
    # per-component solve); each copy's vector lies on its own component.
    block = _component(300, 6, 0)
    assert connected_components(block)[0] == 1
    single = top_eigenvectors(_normalized_affinity(block)[0], 1)[0][0]
    P, _ = _normalized_affinity(sp.block_diag([block] * 8).tocsr())
    values, vectors = top_eigenvectors(P, 8, random_state=seed)
    np.testing.assert_allclose(values, single, rtol=0, atol=1e-10)
    owners = np.abs(vectors).reshape(8, 300, 8).sum(axis=1) > 1e-8
    assert (owners.sum(axis=0) == 1).all() and (owners.sum(axis=1) == 1).all()


def test_arpack_on_arpack_dense_and_lone_components_agrees_with_dense_eigh():
    # Components ARPACK solves (above the dense limit), one LAPACK solves, three lone points
    # and a pair: the values and the invariant subspace of dense eigh on the whole matrix.
    parts = [_component(1500, 6, 1), _component(1200, 5, 2), _component(400, 4, 3),
             sp.csr_matrix((3, 3)), _component(2, 1, 4)]
    P, _ = _normalized_affinity(sp.block_diag(parts).tocsr())
    assert connected_components(P)[0] == 7
    values, vectors = top_eigenvectors(P, 9, random_state=0)
    dense_values, dense_vectors = np.linalg.eigh(P.toarray())
    np.testing.assert_allclose(values, dense_values[::-1][:9], atol=1e-10)
    cosines = np.linalg.svd(dense_vectors[:, ::-1][:, :9].T @ vectors, compute_uv=False)
    np.testing.assert_allclose(cosines, 1.0, atol=1e-8)
    np.testing.assert_allclose(vectors.T @ vectors, np.eye(9), atol=1e-10)


def test_arpack_on_a_connected_matrix_is_the_single_solve(blocks):
    # A connected affinity: the same eigsh call, from the same start vector, as always.
    P, _ = _normalized_affinity(blocks(seed=5))
    assert connected_components(P)[0] == 1
    v0 = np.random.RandomState(7).uniform(-1.0, 1.0, P.shape[0])
    expected = eigsh(P, k=4, which="LA", v0=v0)
    got = arpack_top(P, 4, v0)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])


def test_arpack_starts_a_component_where_the_start_vanishes_from_the_fallback():
    parts = [_component(1100, 6, 1), _component(1100, 6, 2)]
    P, _ = _normalized_affinity(sp.block_diag(parts).tocsr())
    start = np.r_[np.random.RandomState(0).uniform(-1, 1, 1100), np.zeros(1100)]
    fallback = np.random.RandomState(1).uniform(-1, 1, 2200)
    values, vectors = arpack_top(P, 2, start, fallback=fallback)
    dense_values = np.linalg.eigh(P.toarray())[0]
    np.testing.assert_allclose(np.sort(values), dense_values[-2:], atol=1e-10)


def test_coarse_top_to_a_loose_tolerance_spans_the_exact_top_subspace():
    P = loose_clusters_ncut()
    basis = eigsh(P, k=3, which="LA")[1]
    for tol in (0.0, 1e-6, 1e-3):
        values, vectors = coarse_top(P, 7, 0, tol)
        assert (np.diff(values) <= 0).all()
        np.testing.assert_allclose(vectors.T @ vectors, np.eye(7), atol=1e-8)
        assert np.linalg.svd(basis.T @ vectors[:, :3], compute_uv=False).min() > 0.999
    # Small coarse graphs: top_eigenvectors' dense answer, whatever the tolerance.
    small = P[:500, :500]
    np.testing.assert_allclose(np.abs(coarse_top(small, 4, 0, 1e-3)[1]),
                               np.abs(top_eigenvectors(small, 4, 0)[1]), atol=1e-10)
