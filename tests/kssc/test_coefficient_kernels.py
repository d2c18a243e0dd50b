"""The compiled coefficient kernels against independent references (scikit-learn, scipy)."""

import numpy as np
import pytest
from joblib import parallel_config
from scipy.optimize import minimize
from sklearn.linear_model import ElasticNet, Lasso

from kssc import ADMM
from kssc.coding.ladmpsap import solve_exact_ladmpsap
from kssc.coding.representation import code_residuals, kssc_coefficients


def _problem(n=30, d=12, k=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    indices = np.array([rng.permutation(np.delete(np.arange(n), i))[:k] for i in range(n)])
    return X, indices


def _objective(X, indices, coef, lam, ratio=1.0):
    residual = X - np.einsum("nkd,nk->nd", X[indices], coef)
    return (lam * (ratio * np.abs(coef).sum(axis=1) + (1 - ratio) / 2 * (coef**2).sum(axis=1))
            + 0.5 * (residual**2).sum(axis=1))


@pytest.mark.parametrize("positive", [True, False])
@pytest.mark.parametrize("ratio", [1.0, 0.5])
def test_relaxed_kernel_reaches_sklearn_objective(positive, ratio):
    # lam (r ||z||_1 + (1 - r)/2 ||z||^2) + 1/2 ||x - A^T z||^2 is ElasticNet(alpha = lam / d, r).
    X, indices = _problem()
    lam = 0.05
    coef, _, converged = kssc_coefficients(X, indices, lam, positive=positive, l1_ratio=ratio,
                                           tol=1e-15, max_iter=100_000)
    model = ElasticNet(alpha=lam / X.shape[1], l1_ratio=ratio, fit_intercept=False,
                       positive=positive, tol=1e-14, max_iter=1_000_000)
    ref = np.array([model.fit(X[idx].T, x).coef_ for x, idx in zip(X, indices, strict=True)])
    ours, best = _objective(X, indices, coef, lam, ratio), _objective(X, indices, ref, lam, ratio)
    assert converged.all()
    np.testing.assert_allclose(ours, best, rtol=0, atol=1e-8)
    assert not positive or (coef >= 0).all()


def _smooth_lasso(A, x, lam, positive, constraints=()):
    """min lam ||z||_1 + 1/2 ||x - A^T z||^2 as a smooth problem in z = p - m, p, m >= 0
    (m = 0 when positive), solved by SLSQP."""
    k = A.shape[0]
    parts = 1 if positive else 2

    def split(w):
        return w[:k] - (w[k:] if parts == 2 else 0.0)

    def fun(w):
        r = x - A.T @ split(w)
        return lam * w.sum() + 0.5 * r @ r

    def jac(w):
        g = -A @ (x - A.T @ split(w))
        return lam + (np.concatenate([g, -g]) if parts == 2 else g)

    cons = [{"type": "eq", "fun": lambda w, c=c: c(split(w))} for c in constraints]
    res = minimize(fun, np.full(parts * k, 0.01), jac=jac, bounds=[(0, None)] * (parts * k),
                   constraints=cons, method="SLSQP", options={"ftol": 1e-15, "maxiter": 10_000})
    return split(res.x), res.fun


@pytest.mark.parametrize("positive", [True, False])
def test_exact_kernel_reaches_the_convex_optimum(positive):
    X, indices = _problem(n=12, seed=1)
    lam = 0.05
    A = X[indices]
    coef, _, converged = solve_exact_ladmpsap(
        np.matmul(A, A.transpose(0, 2, 1)), np.einsum("nkd,nd->nk", A, X),
        np.einsum("nd,nd->n", X, X), lam, positive=positive, tol_primal=1e-10, tol_change=1e-10,
        max_iter=100_000)
    assert converged.all()
    best = np.array([_smooth_lasso(A[i], X[i], lam, positive)[1] for i in range(len(X))])
    np.testing.assert_allclose(_objective(X, indices, coef, lam), best, rtol=0, atol=1e-8)


def test_affine_admm_reaches_the_convex_optimum():
    X, indices = _problem(n=12, seed=2)
    lam = 0.05
    coef, _, converged = kssc_coefficients(
        X, indices, lam, solver=ADMM(affine=True, stopping="each", tol=1e-12, max_iter=200_000),
        positive=False)
    assert converged.all()
    np.testing.assert_allclose(coef.sum(axis=1), 1.0, atol=1e-9)
    best = np.array([_smooth_lasso(X[idx], x, lam, False, [lambda z: z.sum() - 1.0])[1]
                     for x, idx in zip(X, indices, strict=True)])
    np.testing.assert_allclose(_objective(X, indices, coef, lam), best, rtol=0, atol=1e-8)


def test_exact_path_forms_the_gram_matrices_in_the_kernel():
    # The estimator's "exact" path forms every Gram matrix inside the kernel.
    X, indices = _problem(seed=3)
    lam = 0.2
    coef, n_iter, _ = kssc_coefficients(X, indices, lam, solver="exact", positive=False)
    A = X[indices]
    ref, ref_iter, _ = solve_exact_ladmpsap(np.matmul(A, A.transpose(0, 2, 1)),
                                            np.einsum("nkd,nd->nk", A, X),
                                            np.einsum("nd,nd->n", X, X), lam)
    np.testing.assert_allclose(coef, ref, atol=1e-12)
    np.testing.assert_array_equal(n_iter, ref_iter)
    lasso = Lasso(alpha=lam / X.shape[1], fit_intercept=False, tol=1e-14, max_iter=1_000_000)
    best = np.array([lasso.fit(X[idx].T, x).coef_ for x, idx in zip(X, indices, strict=True)])
    # Their default tolerances stop early: near, not at, the optimum.
    assert np.all(_objective(X, indices, coef, lam) - _objective(X, indices, best, lam) < 1e-2)


@pytest.mark.parametrize("solver", ["relaxed", "exact", ADMM(),
                                    ADMM(outlier=True, stopping="each")])
def test_joblib_chunks_give_the_threaded_result(solver):
    X, indices = _problem(n=60, seed=4)
    threaded = kssc_coefficients(X, indices, 0.1, solver=solver, positive=False)
    with parallel_config(backend="threading"):
        chunked = kssc_coefficients(X, indices, 0.1, solver=solver, positive=False,
                                    chunk_size=7, n_jobs=2)
    for ours, theirs in zip(chunked, threaded, strict=True):
        np.testing.assert_allclose(ours, theirs, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_code_residuals_match_numpy_on_gathered_rows(dtype):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 17)).astype(dtype)
    indices = rng.integers(0, 300, size=(300, 6))
    indices[::7, -1] = -1  # absent candidates carry a zero coefficient
    coef = rng.standard_normal((300, 6)) * (rng.random((300, 6)) < 0.7)
    coef[indices < 0] = 0.0
    rebuilt = np.einsum("nk,nkd->nd", coef, X.astype(float)[np.where(indices < 0, 0, indices)])
    expected = np.linalg.norm(X.astype(float) - rebuilt, axis=1)
    np.testing.assert_allclose(code_residuals(X, X, indices, coef), expected, rtol=1e-12)


@pytest.mark.parametrize("solver", ["relaxed", "exact"])
def test_coding_order_changes_no_code(solver):
    # The order the points are coded in (the IVF's lists, for the cache) is not what they
    # get: the same codes, iterations and flags to the bit, in chunks and in one.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((500, 12))
    indices = np.stack([rng.choice(np.delete(np.arange(500), i), 8, replace=False)
                        for i in range(500)])
    order = rng.permutation(500)
    for chunk_size in (None, 37):
        expected = kssc_coefficients(X, indices, 0.05, solver=solver, chunk_size=chunk_size)
        got = kssc_coefficients(X, indices, 0.05, solver=solver, chunk_size=chunk_size,
                                order=order)
        for a, b in zip(got, expected, strict=True):
            np.testing.assert_array_equal(a, b)


def test_coding_order_must_be_a_permutation():
    X = np.random.default_rng(1).standard_normal((20, 4))
    indices = np.tile(np.arange(1, 4), (20, 1))
    for order in (np.arange(19), np.r_[np.arange(19), 0]):
        with pytest.raises(ValueError, match="order must be a permutation of the 20 rows"):
            kssc_coefficients(X, indices, 0.1, order=order)
