"""Candidate sets (kssc.neighbors.candidates) and the thrC / max-normalisation post-processing."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors

from kssc import KSSC
from kssc.neighbors import candidates as cand
from kssc.neighbors import nearest_neighbors
from kssc.spectral.affinity import max_normalize_rows, threshold_rows


def l2_neighbours(X, k):
    return nearest_neighbors(X, k, metric="l2")[0]


@pytest.mark.parametrize("block_size", [None, 7])
@pytest.mark.parametrize("offset", [0.0, 1e4])
def test_l2_neighbours_match_sklearn(block_size, offset):
    # Far from the origin (offset) the float32 search would lose the distances to
    # cancellation in ||y||^2 - 2 x.y without its centring.
    X = np.random.default_rng(0).standard_normal((60, 5)) * [1, 2, 3, 4, 5] + offset
    found, distances = nearest_neighbors(X, 6, metric="l2", block_size=block_size)
    ref_distances, ref = NearestNeighbors(n_neighbors=7, algorithm="brute").fit(X).kneighbors(X)
    np.testing.assert_array_equal(found, ref[:, 1:])
    np.testing.assert_allclose(distances, np.linalg.norm(X[:, None] - X[found], axis=2),
                               rtol=1e-12)
    np.testing.assert_allclose(distances, ref_distances[:, 1:], rtol=1e-6)


def test_l2_neighbours_never_include_the_point_itself_with_duplicates():
    X = np.repeat(np.random.default_rng(1).standard_normal((10, 3)), 3, axis=0)
    found = l2_neighbours(X, 2)
    assert not (found == np.arange(30)[:, None]).any()
    # Each point's two nearest are its two copies.
    np.testing.assert_array_equal(np.sort(found, axis=1) // 3, np.arange(30)[:, None] // 3 * [1, 1])


@pytest.mark.parametrize("shape", [(20, 8), (6, 12)])
def test_remove_top_components_leaves_the_orthogonal_complement(shape):
    X = np.random.default_rng(6).standard_normal(shape)
    top = np.linalg.svd(X)[2][:3]
    Q = cand.remove_top_components(X, 3)
    np.testing.assert_allclose(Q @ top.T, 0.0, atol=1e-12)
    np.testing.assert_allclose(X - Q, (X @ top.T) @ top, atol=1e-12)
    assert cand.remove_top_components(X, 0) is X


def test_merge_candidates_adds_the_first_new_points_in_order():
    first = np.array([[1, 2], [0, 3]])
    more = np.array([[2, 5, 1, 4, 3], [4, 0, 3, 2, 1]])
    np.testing.assert_array_equal(cand.merge_candidates(first, more, 2),
                                  [[1, 2, 5, 4], [0, 3, 4, 2]])


@pytest.mark.parametrize("keys_up_to", [10**9, 0], ids=["keys", "rejection"])
def test_random_candidates_are_distinct_new_other_points_seeded_and_uniform(keys_up_to,
                                                                             monkeypatch):
    monkeypatch.setattr(cand, "_KEYS_UP_TO", keys_up_to)
    n, k1, m = 40, 5, 9
    first = l2_neighbours(np.random.default_rng(1).standard_normal((n, 6)), k1)
    draw = cand.random_candidates(first, m, np.random.RandomState(0))
    assert draw.shape == (n, k1 + m)
    np.testing.assert_array_equal(draw[:, :k1], first)
    assert all(len(set(row)) == k1 + m and i not in row for i, row in enumerate(draw.tolist()))
    np.testing.assert_array_equal(draw, cand.random_candidates(first, m, np.random.RandomState(0)))
    # Every allowed point of row 0 is drawn about equally often (34 allowed, 9 picked).
    rng = np.random.RandomState(1)
    counts = np.zeros(n)
    for _ in range(400):
        np.add.at(counts, cand.random_candidates(first, m, rng)[0, k1:], 1)
    allowed = np.setdiff1d(np.arange(1, n), first[0])
    expected = 400 * m / allowed.size
    assert counts[first[0]].sum() == counts[0] == 0
    assert np.all(np.abs(counts[allowed] - expected) < 5 * np.sqrt(expected))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_neighbour_views_add_distinct_neighbours_of_each_view():
    X = np.random.default_rng(2).standard_normal((40, 8))
    model = KSSC(2, n_neighbors=[4, 3], neighbor_pcs=[0, 2], n_random=5, metric="l2",
                 normalize=False, random_state=0).fit(X)
    indices = model.neighbors_
    assert indices.shape == (40, 12)
    np.testing.assert_array_equal(indices[:, :4], l2_neighbours(X, 4))
    second = l2_neighbours(cand.remove_top_components(X, 2), 7)
    for i in range(40):
        assert len(set(indices[i])) == 12 and i not in indices[i]
        assert list(indices[i, 4:7]) == [j for j in second[i] if j not in indices[i, :4]][:3]


def test_random_candidates_are_capped_by_the_points_left():
    X = np.random.default_rng(3).standard_normal((12, 4))
    indices = cand.candidate_sets(X, 5, n_random=50, random_state=np.random.RandomState(0))[0]
    assert indices.shape == (12, 11)


@pytest.mark.parametrize("params, message", [
    ({"n_neighbors": [5, 3], "neighbor_pcs": [1, 2, 3]}, "same length"),
    ({"n_neighbors": [5, 0], "neighbor_pcs": [1, 2]}, "n_neighbors must be an integer >= 1"),
    ({"n_neighbors": 5, "neighbor_pcs": [-1]}, "neighbor_pcs must be an integer >= 0"),
    ({"n_neighbors": [], "neighbor_pcs": []}, "non-empty list"),
    ({"n_neighbors": [20, 10]}, "n_neighbors=30 must be < n_samples=30"),
])
def test_bad_neighbour_views_are_refused(params, message):
    X = np.random.default_rng(0).standard_normal((30, 5))
    with pytest.raises(ValueError, match=message):
        KSSC(2, **params).fit(X)


def test_threshold_rows_keeps_the_largest_entries_up_to_rho_of_the_l1_mass():
    coef = np.array([[0.5, -0.3, 0.1, 0.1], [0.0, 0.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(threshold_rows(coef, 0.7),
                                  [[0.5, -0.3, 0.0, 0.0], [0.0] * 4, [-1.0, 0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(threshold_rows(coef, 1.0), coef)


def test_max_normalize_rows_scales_each_row_to_a_largest_entry_of_one():
    Z = sp.csr_matrix(np.array([[0.0, -2.0, 1.0], [0.0, 0.0, 0.0], [0.5, 0.0, 0.25]]))
    np.testing.assert_array_equal(max_normalize_rows(Z).toarray(),
                                  [[0.0, -1.0, 0.5], [0.0, 0.0, 0.0], [1.0, 0.0, 0.5]])
