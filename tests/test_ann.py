import numpy as np
import pytest

pytest.importorskip("faiss", reason="the approximate backend needs faiss-cpu")

from kssc._ann import approximate_neighbours
from kssc.neighbours import nearest_neighbours


def _clustered(n=3000, dim=32, n_subspaces=6, sub_dim=4, seed=0):
    rng = np.random.default_rng(seed)
    blocks = []
    for _ in range(n_subspaces):
        basis = np.linalg.qr(rng.standard_normal((dim, sub_dim)))[0]
        blocks.append(rng.standard_normal((n // n_subspaces, sub_dim)) @ basis.T)
    X = np.vstack(blocks)
    X += 0.01 * rng.standard_normal(X.shape)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _recall(found, exact):
    return np.mean([np.intersect1d(f, e).size / e.size for f, e in zip(found, exact, strict=True)])


@pytest.mark.parametrize("metric", ["euclidean", "abs_cosine"])
def test_recall_against_exact_search(metric):
    X = _clustered()
    k = 10
    indices, sims = approximate_neighbours(X, k, metric, random_state=0)[:2]
    exact, _ = nearest_neighbours(X, k, metric=metric, algorithm="exact")
    sample = np.random.default_rng(1).choice(len(X), 500, replace=False)
    assert indices.shape == sims.shape == (len(X), k) and indices.dtype == np.int64
    assert _recall(indices[sample], exact[sample]) >= 0.9
    assert not (indices == np.arange(len(X))[:, None]).any()
    assert (np.diff(sims, axis=1) <= 1e-12).all()
    expected = np.einsum("id,ikd->ik", X, X[indices])
    np.testing.assert_allclose(sims, np.abs(expected) if metric == "abs_cosine" else expected,
                               atol=1e-10)


def test_abs_cosine_finds_antipodal_points():
    X = _clustered(n=1200, seed=2)
    X[600:] = -X[:600]
    indices, sims = approximate_neighbours(X, 5, "abs_cosine", random_state=0)[:2]
    assert (indices[:600, 0] == np.arange(600, 1200)).mean() >= 0.99
    np.testing.assert_allclose(sims[:, 0], 1.0, atol=1e-12)
    signed, _ = approximate_neighbours(X, 5, "euclidean", random_state=0)[:2]
    assert not (signed[:600] == np.arange(600, 1200)[:, None]).any()


def test_duplicates_never_return_self():
    X = _clustered(n=1002, seed=3)
    X[:400] = X[0]  # 400 copies of one point: more than k + 1 of them tie
    for metric in ("euclidean", "abs_cosine"):
        indices, _ = approximate_neighbours(X, 8, metric, random_state=0)[:2]
        assert not (indices == np.arange(len(X))[:, None]).any()
        assert all(np.unique(row).size == 8 for row in indices)


def test_deterministic_given_random_state():
    X = _clustered(n=2000, seed=4)
    first = approximate_neighbours(X, 10, "euclidean", random_state=7)[:2]
    second = approximate_neighbours(X, 10, "euclidean", random_state=7)[:2]
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])


def test_tiny_data_falls_back_to_exact_rows():
    X = _clustered(n=60, dim=8, n_subspaces=2, sub_dim=3, seed=5)
    indices, sims = approximate_neighbours(X, 59, "euclidean", random_state=0)[:2]
    for i in range(60):
        assert sorted(indices[i]) == [j for j in range(60) if j != i]


def test_missing_faiss_names_the_pip_package(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_faiss(name, *args, **kwargs):
        if name == "faiss":
            raise ImportError("No module named 'faiss'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_faiss)
    with pytest.raises(ImportError, match="pip install faiss-cpu"):
        approximate_neighbours(_clustered(n=100), 5)
