"""The homotopy lasso (`kssc.coding.homotopy`) against scikit-learn's coordinate descent and
its own optimality conditions, and its fallback to FISTA."""

import numpy as np
import pytest
from sklearn.linear_model import ElasticNet

from kssc.coding._kernels import blocks
from kssc.coding.homotopy import homotopy_blocks, homotopy_point


def _union_problem(n=60, D=30, k=12, seed=0):
    """Rows near 3 subspaces of dimension 4 (the Gram blocks are ill conditioned, as on
    real neighbourhoods), each coded over k others of its own subspace."""
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % 3
    bases = rng.standard_normal((3, D, 4))
    X = np.einsum("ndr,nr->nd", bases[labels], rng.standard_normal((n, 4)))
    X += 0.01 * rng.standard_normal((n, D))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    indices = np.array([rng.permutation(np.flatnonzero((labels == labels[i])
                                                       & (np.arange(n) != i)))[:k]
                        for i in range(n)])
    return X, indices


def _solve(X, indices, lam, positive, ratio=1.0, max_steps=100):
    n, k = indices.shape
    coef, n_iter, converged = np.zeros((n, k)), np.zeros(n, dtype=np.int64), np.zeros(n, bool)
    lam_rows = np.full(n, lam)
    homotopy_blocks(blocks(n, 2), X, np.arange(n), indices, lam_rows * ratio,
                    lam_rows * (1 - ratio), positive, max_steps, 1e-14, 100_000, coef, n_iter,
                    converged)
    return coef, n_iter, converged


def _objective(X, indices, coef, lam, ratio=1.0, points=None):
    """Objective of each row of X coded over the rows `indices` of `points` (default: X)."""
    points = X if points is None else points
    residual = X - np.einsum("nkd,nk->nd", points[indices], coef)
    return (lam * (ratio * np.abs(coef).sum(axis=1) + (1 - ratio) / 2 * (coef**2).sum(axis=1))
            + 0.5 * (residual**2).sum(axis=1))


@pytest.mark.parametrize("positive", [True, False])
@pytest.mark.parametrize("ratio", [1.0, 0.5])
@pytest.mark.parametrize("lam", [1e-3, 0.05, 0.3])
def test_homotopy_reaches_sklearn_objective(positive, ratio, lam):
    # lam (r ||z||_1 + (1 - r)/2 ||z||^2) + 1/2 ||x - A^T z||^2 is ElasticNet(alpha = lam / D, r).
    X, indices = _union_problem()
    coef, _, converged = _solve(X, indices, lam, positive, ratio)
    model = ElasticNet(alpha=lam / X.shape[1], l1_ratio=ratio, fit_intercept=False,
                       positive=positive, tol=1e-14, max_iter=1_000_000)
    ref = np.array([model.fit(X[idx].T, x).coef_ for x, idx in zip(X, indices, strict=True)])
    assert converged.all()
    ours, best = _objective(X, indices, coef, lam, ratio), _objective(X, indices, ref, lam, ratio)
    np.testing.assert_array_less(ours - best, 1e-10)
    assert not positive or (coef >= 0).all()


@pytest.mark.parametrize("positive", [True, False])
def test_homotopy_meets_the_optimality_conditions(positive):
    # The lasso's KKT conditions: c = b - G z equals lam sign(z) on the support, |c| <= lam
    # (c <= lam when positive) off it.
    X, indices = _union_problem(seed=1)
    lam = 0.01
    k = indices.shape[1]
    work, active = np.empty((5, k)), np.empty(k, dtype=np.int64)
    member, L, z = np.empty(k, dtype=bool), np.empty((k, k)), np.empty(k)
    for x, idx in zip(X, indices, strict=True):
        A = X[idx]
        G, b = A @ A.T, A @ x
        _, solved = homotopy_point(G, b, lam, positive, 8 * k, z, work, active, member, L)
        assert solved
        c = b - G @ z
        on = z != 0
        np.testing.assert_allclose(c[on], lam * np.sign(z[on]), atol=1e-9)
        off = c[~on] if positive else np.abs(c[~on])
        assert (off <= lam + 1e-9).all()


def test_a_large_weight_gives_the_zero_code():
    X, indices = _union_problem()
    coef, n_iter, converged = _solve(X, indices, 2.0, False)
    assert converged.all() and (coef == 0).all() and (n_iter == 0).all()


def test_duplicate_neighbours_reach_the_optimum():
    # Every neighbour twice (a singular Gram matrix): one copy of each joins, the other's
    # correlation stays its twin's; the objective is the single copies' optimum.
    X, indices = _union_problem(n=30, k=6)
    doubled = np.concatenate([X, X])
    twice = np.ascontiguousarray(np.concatenate([indices, indices + X.shape[0]], axis=1))
    lam = 1e-3
    coef, _, converged = _solve(doubled, twice, lam, False)
    single, _, _ = _solve(X, indices, lam, False)
    assert converged.all()
    np.testing.assert_allclose(_objective(X, twice, coef, lam, points=doubled),
                               _objective(X, indices, single, lam), atol=1e-12)


def test_a_path_beyond_max_steps_falls_back_to_fista():
    # With one piece allowed, every point whose path has more is solved by FISTA (the fit's
    # solver), to its tolerance.
    X, indices = _union_problem()
    lam = 1e-3
    coef, n_iter, converged = _solve(X, indices, lam, False, max_steps=1)
    exact, pieces, _ = _solve(X, indices, lam, False)
    assert (pieces > 1).all() and converged.all()
    assert (n_iter > pieces).any()  # FISTA's iterations, not the pieces
    np.testing.assert_allclose(_objective(X, indices, coef, lam),
                               _objective(X, indices, exact, lam), atol=1e-8)
