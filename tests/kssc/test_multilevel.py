"""The multilevel eigensolver route (issue 25, item 2) against dense eigh and ARPACK."""

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.linalg import eigh
from scipy.sparse.linalg import eigsh

from kssc import clustering_error
from kssc.spectral import _clustering as spectral
from kssc.spectral import _multilevel, _products
from kssc.spectral._clustering import _normalized_affinity, discretize, top_eigenvectors


def _cosines(a, b):
    return np.linalg.svd(a.T @ b, compute_uv=False)


def test_aggregation_partitions_the_points_and_keeps_enough_aggregates(block_graph):
    W, _ = block_graph(4, 300)
    P, _ = _normalized_affinity(W)
    members, n_coarse = _multilevel.aggregation(P, 2, coarse_size=50)
    assert members.shape == (P.shape[0],) and n_coarse < P.shape[0]
    # Every aggregate has a point, points without edges (pyamg leaves them out) included.
    assert (np.diff(W.indptr) == 0).any()
    np.testing.assert_array_equal(np.unique(members), np.arange(n_coarse))
    assert n_coarse >= 20 * 2


def test_aggregates_of_a_graph_are_its_connected_pieces_and_ignore_the_diagonal():
    # Two triangles and an isolated point (with only its diagonal): pyamg's root-and-
    # neighbours rule makes each triangle one aggregate; the point gets its own, last.
    edges = [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5)]
    rows, cols = np.array(edges).T
    graph = sp.csr_matrix((np.ones(12), (np.r_[rows, cols], np.r_[cols, rows])), shape=(7, 7))
    with_diagonal = graph + sp.identity(7, format="csr")
    for g in (graph, with_diagonal):
        members, n_coarse = _multilevel.aggregate(g)
        np.testing.assert_array_equal(members, [0, 0, 0, 1, 1, 1, 2])
        assert n_coarse == 3


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_restrict_equals_the_galerkin_product_whatever_the_threads(threads, weighted,
                                                                  block_graph):
    W, _ = block_graph(3, 200, seed=5)
    P, degrees = _normalized_affinity(W)
    members, n_coarse = _multilevel.aggregation(P, 1, coarse_size=40)
    q = np.random.default_rng(0).random(P.shape[0]) if weighted else None
    Q = sp.csr_matrix((np.ones(P.shape[0]) if q is None else q,
                       (np.arange(P.shape[0]), members)), shape=(P.shape[0], n_coarse))
    reference = (Q.T @ P @ Q).toarray()
    previous = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        coarse = _multilevel.restrict(P, members, n_coarse, q)
    finally:
        numba.set_num_threads(previous)
    assert coarse.has_canonical_format
    np.testing.assert_allclose(coarse.toarray(), reference, rtol=1e-12, atol=1e-15)


def test_restrict_of_row_blocks_with_renumbered_columns_sums_to_the_whole(block_graph):
    """A row block whose columns are renumbered to the points it touches (the distributed
    fit's blocks) restricts, with its columns' members and weights, to its share of Q^T P Q."""
    W, _ = block_graph(3, 200, seed=6)
    P, _ = _normalized_affinity(W)
    members, n_coarse = _multilevel.aggregation(P, 1, coarse_size=40)
    q = np.random.default_rng(1).random(P.shape[0])
    total = np.zeros((n_coarse, n_coarse))
    for start, stop in [(0, 250), (250, 600)]:
        block = P[start:stop]
        touched = np.unique(block.indices)
        renumbered = sp.csr_matrix((block.data, np.searchsorted(touched, block.indices),
                                    block.indptr), shape=(stop - start, touched.size))
        total += _multilevel.restrict(renumbered, members[start:stop], n_coarse,
                                      q[start:stop], columns=(members[touched], q[touched]))
    np.testing.assert_allclose(total, _multilevel.restrict(P, members, n_coarse, q).toarray(),
                               rtol=1e-12, atol=1e-15)


def test_coarse_start_is_orthonormal_and_near_the_eigenvectors(block_graph):
    W, _ = block_graph(4, 300, seed=1)
    P, degrees = _normalized_affinity(W)
    start = _multilevel.coarse_start(P, degrees, 4,
                                     lambda M, m: eigsh(M, k=m, which="LA"), coarse_size=100)
    np.testing.assert_allclose(start.T @ start, np.eye(4), atol=1e-10)
    reference = eigh(P.toarray(), subset_by_index=[P.shape[0] - 4, P.shape[0] - 1])[1]
    assert _cosines(reference, start).min() > 0.9
    _, refined, _ = _multilevel.refine(P, start, tol=1e-8, max_iter=200)
    np.testing.assert_allclose(_cosines(reference, refined), 1.0, atol=1e-8)


def test_multilevel_agrees_with_scipy_eigsh_and_arpack_labels(monkeypatch, block_graph):
    monkeypatch.setattr(_multilevel, "COARSE_SIZE", 1000)
    W, truth = block_graph(10, 600, seed=2)
    P, degrees = _normalized_affinity(W)
    assert _multilevel.aggregation(P, 10)[1] < P.shape[0] / 2  # the route is taken
    ref_values, ref_vectors = eigsh(P, k=10, which="LA", tol=1e-12)
    values, vectors = top_eigenvectors(P, 10, random_state=0, solver="multilevel", tol=1e-6)
    np.testing.assert_allclose(values, np.sort(ref_values)[::-1], atol=1e-9)
    np.testing.assert_allclose(_cosines(ref_vectors, vectors), 1.0, atol=1e-6)
    arpack = top_eigenvectors(P, 10, random_state=0, solver="arpack")[1]
    # Points without edges have near-zero rows, labelled by rounding: spectral_clustering
    # leaves them out, so does the comparison.
    linked = np.diff(W.indptr) > 0
    labels = [discretize(v[linked] / np.sqrt(degrees[linked])[:, None], 0)
              for v in (arpack, vectors)]
    assert clustering_error(labels[0], labels[1]) == 0
    assert clustering_error(truth[linked], labels[1]) < 1


def test_auto_is_arpack_up_to_the_threshold_and_multilevel_above(monkeypatch, block_graph):
    W, _ = block_graph(3, 400, seed=3)
    P, _ = _normalized_affinity(W)
    for solver in ("arpack", "multilevel"):
        monkeypatch.setattr(spectral, "_MULTILEVEL_FROM",
                            P.shape[0] if solver == "arpack" else P.shape[0] - 1)
        auto = top_eigenvectors(P, 3, random_state=0, dense_limit=10)
        chosen = top_eigenvectors(P, 3, random_state=0, dense_limit=10, solver=solver)
        np.testing.assert_array_equal(auto[1], chosen[1])


def test_refinement_reports_the_residual_it_stopped_at(block_graph):
    W, _ = block_graph(3, 300, seed=4)
    P, _ = _normalized_affinity(W)
    start = np.random.default_rng(0).standard_normal((P.shape[0], 3))
    values, vectors, residual = _multilevel.refine(P, start, tol=1e-12, max_iter=1)
    assert residual == pytest.approx(np.linalg.norm(P @ vectors - vectors * values, axis=0).max(),
                                     rel=1e-6)
    assert residual > 1e-6


def test_the_multilevel_route_gives_way_to_arpack_where_lobpcg_stops_short(block_graph):
    """LOBPCG held to a tolerance it cannot reach in one product: the eigenpairs are ARPACK's
    from the vector the "arpack" route draws (its start's, the same seed)."""
    W, _ = block_graph(4, 300, seed=5)
    P, _ = _normalized_affinity(W)
    values, vectors = spectral._multilevel_top(P, 4, 0, tol=1e-12, max_iter=1)
    reference = top_eigenvectors(P, 4, random_state=0, dense_limit=10, solver="arpack")
    np.testing.assert_allclose(np.sort(values), np.sort(reference[0]), rtol=1e-10)
    overlap = np.linalg.svd(vectors.T @ reference[1], compute_uv=False)
    np.testing.assert_allclose(overlap, 1.0, atol=1e-8)


def test_refinement_at_a_loose_tolerance_iterates_in_float32_and_keeps_the_labels(
        monkeypatch, block_graph):
    W, truth = block_graph(6, 400, seed=6)
    P, degrees = _normalized_affinity(W)
    reference = eigh(P.toarray(), subset_by_index=[P.shape[0] - 6, P.shape[0] - 1])[1]
    start = _multilevel.coarse_start(P, degrees, 6,
                                     lambda M, m: eigsh(M, k=m, which="LA"), coarse_size=100)
    seen = []
    monkeypatch.setattr(_products, "csr_product",
                        lambda A, X: seen.append((A.dtype, X.dtype)) or A @ X)
    values, vectors, residual = _multilevel.refine(P, start, tol=1e-3, max_iter=200)
    assert residual <= 1e-3
    assert seen and set(seen) == {(np.dtype(np.float32), np.dtype(np.float32))}
    assert vectors.dtype == values.dtype == np.float64
    residual = np.linalg.norm(P @ vectors - vectors * values, axis=0)
    assert residual.max() <= 1e-3 and _cosines(reference, vectors).min() > 1 - 1e-5
    linked = np.diff(W.indptr) > 0
    labels = [discretize(v[linked] / np.sqrt(degrees[linked])[:, None], 0)
              for v in (reference, vectors)]
    assert clustering_error(labels[0], labels[1]) == 0


def test_ncut_embedding_hands_the_multilevel_route_float32_values_and_keeps_the_labels(
        monkeypatch, block_graph):
    W, truth = block_graph(5, 500, seed=7)
    reference = spectral.ncut_embedding(W, 5, random_state=0)  # ARPACK, float64
    monkeypatch.setattr(spectral, "_MULTILEVEL_FROM", 100)
    monkeypatch.setattr(_multilevel, "COARSE_SIZE", 200)
    seen = []
    solve = spectral.top_eigenvectors
    monkeypatch.setattr(spectral, "top_eigenvectors",
                        lambda P, *a, **kw: seen.append(P.dtype) or solve(P, *a, **kw))
    vectors = spectral.ncut_embedding(W, 5, random_state=0)
    assert seen[0] == np.float32 and vectors.dtype == np.float64  # then the coarse solve
    linked = np.diff(W.indptr) > 0
    labels = [discretize(v[linked], 0) for v in (reference, vectors)]
    assert clustering_error(labels[0], labels[1]) == 0
    assert clustering_error(truth[linked], labels[1]) < 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_block_products_are_scipys_to_the_bit(dtype, block_graph):
    from kssc.spectral._products import csr_product

    P = _normalized_affinity(block_graph(5, 200, seed=3)[0])[0].astype(dtype)
    X = np.random.default_rng(0).standard_normal((P.shape[0], 7)).astype(dtype)
    np.testing.assert_array_equal(csr_product(P, X), P @ X)
    np.testing.assert_array_equal(csr_product(P, X[:, 2]), P @ X[:, 2])
    np.testing.assert_array_equal(csr_product(P, X.astype(np.float64)), P @ X.astype(np.float64))
    assert csr_product(P, X).dtype == (P @ X).dtype
