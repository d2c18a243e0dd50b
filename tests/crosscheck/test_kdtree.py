"""crosscheck.kdtree: VLFeat's best-bin-first kd-tree, checked against brute force."""

import numpy as np
from sklearn.neighbors import NearestNeighbors

from crosscheck.kdtree import KDTree, exact_neighbours, their_neighbours


def unit_points(n=150, dims=10, seed=0):
    X = np.random.default_rng(seed).standard_normal((n, dims))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def test_unlimited_search_is_exact():
    X = unit_points()
    tree = KDTree(X)
    # Independent reference: scikit-learn's brute-force search (the point itself first).
    _, expected = NearestNeighbors(n_neighbors=8, algorithm="brute").fit(X).kneighbors(X)
    found = np.stack([tree.query(x, 8) for x in X])
    np.testing.assert_array_equal(found, expected)
    np.testing.assert_array_equal(exact_neighbours(X, 7), expected[:, 1:])


def test_a_comparison_budget_makes_it_approximate_but_finds_the_point_first():
    X = unit_points(n=400, dims=30, seed=1)
    tree = KDTree(X)
    found = [tree.query(x, 11, max_comparisons=40) for x in X]
    assert all(f[0] == i for i, f in enumerate(found))  # its own leaf is searched first
    distances = [np.sum((X[f] - X[i]) ** 2, axis=1) for i, f in enumerate(found)]
    assert all(np.all(np.diff(d) >= 0) for d in distances)  # nearest first
    exact = exact_neighbours(X, 10)
    recall = np.mean([len(np.intersect1d(f[1:], e)) / 10 for f, e in zip(found, exact,
                                                                        strict=True)])
    assert 0.2 < recall < 0.95


def test_their_neighbours_drop_the_point_itself():
    X = unit_points(n=60, dims=8, seed=2)
    table = their_neighbours(X, 5)
    assert table.shape == (60, 5)
    assert not np.any(table == np.arange(60)[:, None])


def test_data_digest_follows_the_arrays_not_the_files_creation_time(tmp_path):
    import time

    import scipy.io

    from crosscheck.kdtree import data_digest

    X = np.arange(12.0).reshape(3, 4)
    scipy.io.savemat(tmp_path / "trial_1.mat", {"X": X, "truth": np.array([1, 2, 1])})
    first = data_digest(tmp_path)
    time.sleep(1.1)  # the header's creation time moves by a second
    scipy.io.savemat(tmp_path / "trial_1.mat", {"X": X, "truth": np.array([1, 2, 1])})
    assert data_digest(tmp_path) == first
    scipy.io.savemat(tmp_path / "trial_1.mat", {"X": X + 1e-12, "truth": np.array([1, 2, 1])})
    assert data_digest(tmp_path) != first
