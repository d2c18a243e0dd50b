import numpy as np
import pytest

from kssc.neighbours import nearest_neighbours


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
    indices, sims = nearest_neighbours(X, 9, metric=metric, block_size=block_size)
    assert indices.shape == sims.shape == (700, 9)
    np.testing.assert_allclose(sims, _brute_force(X, 9, metric), atol=1e-6)
    assert not (indices == np.arange(700)[:, None]).any()
    assert (np.diff(sims, axis=1) <= 1e-12).all()


def test_duplicates_are_neighbours_but_never_self():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((50, 5))
    X[10] = X[20]
    X[30] = -X[40]
    indices, sims = nearest_neighbours(X, 3)
    assert indices[10, 0] == 20 and indices[20, 0] == 10
    assert not (indices == np.arange(50)[:, None]).any()
    abs_indices, _ = nearest_neighbours(X, 3, metric="abs_cosine")
    assert abs_indices[30, 0] == 40 and abs_indices[40, 0] == 30


def test_k_equal_n_minus_one_returns_every_other_point():
    X = np.random.default_rng(2).standard_normal((6, 3))
    indices, _ = nearest_neighbours(X, 5)
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
        nearest_neighbours(X, **kwargs)


def test_non_finite_input_named():
    X = np.ones((5, 3))
    X[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"NaN or infinity in 1 row\(s\), first at row\(s\) \[2\]"):
        nearest_neighbours(X, 2)
