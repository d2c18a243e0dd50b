import tracemalloc

import numpy as np
import pytest
from sklearn.neighbors import NearestNeighbors

from kssc import _exact
from kssc.neighbours import nearest_neighbors


def _brute_force(X, k, metric):
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    S = U @ U.T
    if metric == "abs_cosine":
        S = np.abs(S)
    np.fill_diagonal(S, -np.inf)
    return -np.sort(-S, axis=1)[:, :k]


@pytest.mark.parametrize("metric", ["euclidean", "abs_cosine"])
@pytest.mark.parametrize("block_size", [None, 37])
def test_exact_search_matches_brute_force(metric, block_size):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((700, 12))
    indices, sims = nearest_neighbors(X, 9, metric=metric, block_size=block_size)
    assert indices.shape == sims.shape == (700, 9)
    np.testing.assert_allclose(sims, _brute_force(X, 9, metric), atol=1e-6)
    assert not (indices == np.arange(700)[:, None]).any()
    assert (np.diff(sims, axis=1) <= 1e-12).all()


def test_duplicates_are_neighbours_but_never_self():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((50, 5))
    X[10] = X[20]
    X[30] = -X[40]
    indices, sims = nearest_neighbors(X, 3)
    assert indices[10, 0] == 20 and indices[20, 0] == 10
    assert not (indices == np.arange(50)[:, None]).any()
    abs_indices, _ = nearest_neighbors(X, 3, metric="abs_cosine")
    assert abs_indices[30, 0] == 40 and abs_indices[40, 0] == 30


def test_k_equal_n_minus_one_returns_every_other_point():
    X = np.random.default_rng(2).standard_normal((6, 3))
    indices, _ = nearest_neighbors(X, 5)
    for i in range(6):
        assert sorted(indices[i]) == [j for j in range(6) if j != i]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"n_neighbors": 10}, "n_neighbors=10 must be < n_samples=10"),
        ({"n_neighbors": 0}, "positive integer"),
        ({"n_neighbors": 3, "metric": "manhattan"}, "metric must be one of"),
        ({"n_neighbors": 3, "algorithm": "magic"}, "algorithm must be"),
    ],
)
def test_bad_arguments(kwargs, message):
    X = np.random.default_rng(3).standard_normal((10, 4))
    with pytest.raises(ValueError, match=message):
        nearest_neighbors(X, **kwargs)


def test_non_finite_input_named():
    X = np.ones((5, 3))
    X[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"NaN or infinity in 1 row\(s\), first at row\(s\) \[2\]"):
        nearest_neighbors(X, 2)


def test_exact_search_memory_does_not_grow_with_n_features_times_k():
    # Issue 13.2: re-scoring the candidates gathered a float64 (n, k, D) array, 2.6 GB here
    # for 0.13 GB of data. tracemalloc sees numpy's allocations.
    X = np.random.default_rng(0).standard_normal((800, 20_000))
    tracemalloc.start()
    try:
        indices, _ = nearest_neighbors(X, 20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * X.nbytes, \
        f"peak {peak / 2**20:.0f} MiB for {X.nbytes / 2**20:.0f} MiB of data"
    assert indices.shape == (800, 20)


@pytest.mark.parametrize("budget", [1, 3 * 5_000 * 8, 10**9])
def test_chunked_rescoring_matches_scikit_learn(monkeypatch, budget):
    # Whatever the gathering budget (one vector, part of a row's neighbours, everything at
    # once), the neighbours and their order are scikit-learn's brute-force ones.
    monkeypatch.setattr(_exact, "_RESCORE_BYTES", budget)
    rng = np.random.default_rng(2)
    X = rng.standard_normal((120, 5_000))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    indices, sims = nearest_neighbors(X, 7)
    reference = NearestNeighbors(n_neighbors=8, algorithm="brute").fit(X).kneighbors(X)[1][:, 1:]
    np.testing.assert_array_equal(indices, reference)
    np.testing.assert_allclose(sims, np.einsum("ij,ikj->ik", X, X[indices]), rtol=1e-12)


def test_british_spelling_is_a_deprecated_alias():
    # Public names are spelt as scikit-learn's; the old name works for one release.
    import kssc

    X = np.random.default_rng(3).standard_normal((30, 4))
    with pytest.warns(FutureWarning, match="nearest_neighbors"):
        old = kssc.nearest_neighbours(X, 3, metric="abs_cosine")
    new = kssc.nearest_neighbors(X, 3, metric="abs_cosine")
    np.testing.assert_array_equal(old[0], new[0])
    np.testing.assert_array_equal(old[1], new[1])
    assert "nearest_neighbors" in kssc.__all__ and "nearest_neighbours" not in kssc.__all__


@pytest.mark.parametrize("metric", ["euclidean", "abs_cosine", "l2"])
@pytest.mark.parametrize("block_size", [None, 1, 37, 200])
def test_symmetric_blocks_give_the_row_by_row_neighbours(metric, block_size):
    # The all-rows search computes each block pair of X X^T once and selects by rows and by
    # columns; the search of given rows runs row blocks against all. With exact duplicates
    # (ties), both keep the smaller index, so they agree entry for entry.
    rng = np.random.default_rng(4)
    X = rng.standard_normal((301, 9))
    X[150:170] = X[:20]
    if metric != "l2":
        X /= np.linalg.norm(X, axis=1, keepdims=True)
    whole = _exact.exact_search(X, 8, metric, block_size=block_size)
    by_rows = _exact.exact_search(X, 8, metric, rows=np.arange(301))
    np.testing.assert_array_equal(whole[0], by_rows[0])
    np.testing.assert_array_equal(whole[1], by_rows[1])
    assert not (whole[0] == np.arange(301)[:, None]).any()
    if metric != "abs_cosine":
        distances = NearestNeighbors(n_neighbors=9, algorithm="brute").fit(X).kneighbors(X)[0]
        found = np.linalg.norm(X[whole[0]] - X[:, None], axis=2)
        np.testing.assert_allclose(found, distances[:, 1:], atol=1e-9)
