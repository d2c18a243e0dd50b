import numpy as np
import pytest
from sklearn.linear_model import Lasso

from kssc.baselines._batch import ProblemBatch
from kssc.coding.fista import solve_lasso_fista
from kssc.coding.ladmpsap import solve_exact_ladmpsap


def _problems(n=12, k=15, d=40, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, k, d))
    A /= np.linalg.norm(A, axis=2, keepdims=True)
    x = rng.standard_normal((n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    gram = A @ A.transpose(0, 2, 1)
    corr = np.einsum("nkd,nd->nk", A, x)
    return A, x, gram, corr, np.einsum("nd,nd->n", x, x)


def _objective(A_i, x_i, z, lam):
    return lam * np.abs(z).sum() + 0.5 * np.sum((x_i - A_i.T @ z) ** 2)


def _reference(A_i, x_i, lam, positive):
    # scikit-learn's Lasso minimises 1/(2 n) ||y - A c||^2 + alpha ||c||_1 with n = D rows.
    model = Lasso(alpha=lam / len(x_i), fit_intercept=False, positive=positive, tol=1e-12,
                  max_iter=100_000)
    return model.fit(A_i.T, x_i).coef_


@pytest.mark.parametrize("positive", [True, False])
@pytest.mark.parametrize("solver", ["fista", "ladmpsap"])
def test_solvers_match_sklearn_lasso(solver, positive):
    lam = 0.1
    A, x, gram, corr, sq = _problems()
    if solver == "fista":
        coef, n_iter, converged = solve_lasso_fista(gram, corr, sq, lam, positive=positive)
    else:
        coef, n_iter, converged = solve_exact_ladmpsap(gram, corr, sq, lam, positive=positive,
                                                       tol_primal=1e-7, tol_change=1e-7,
                                                       max_iter=5000)
    assert converged.all()
    for i in range(len(x)):
        ref = _reference(A[i], x[i], lam, positive)
        ours = _objective(A[i], x[i], coef[i], lam)
        best = _objective(A[i], x[i], ref, lam)
        assert abs(ours - best) / best < 1e-4
        if positive:
            assert (coef[i] >= 0).all()


def test_exact_solver_default_tolerances_close_to_optimum():
    A, x, gram, corr, sq = _problems(seed=1)
    coef, _, converged = solve_exact_ladmpsap(gram, corr, sq, 0.1)
    assert converged.all()
    for i in range(len(x)):
        best = _objective(A[i], x[i], _reference(A[i], x[i], 0.1, False), 0.1)
        assert abs(_objective(A[i], x[i], coef[i], 0.1) - best) / best < 1e-2


def test_per_problem_lambda_and_iteration_counts():
    A, x, gram, corr, sq = _problems()
    lam = np.full(len(x), 0.1)
    lam[0] = 10.0  # above lambda_max: the solution is zero
    coef, n_iter, converged = solve_lasso_fista(gram, corr, sq, lam, positive=False)
    assert np.all(coef[0] == 0)
    assert n_iter.shape == (len(x),) and (n_iter >= 1).all()


def test_max_iter_reported_as_not_converged():
    A, x, gram, corr, sq = _problems()
    _, n_iter, converged = solve_lasso_fista(gram, corr, sq, 0.01, tol=0.0, max_iter=3)
    assert not converged.any() and (n_iter == 3).all()


def test_problem_batch_keeps_finished_results_and_fills_in_the_rest():
    values = np.arange(8.0).reshape(4, 2)
    batch = ProblemBatch(4, 2, max_iter=9)
    batch.finish(np.array([False, True, False, False]), values, 3)
    assert not batch.drop(np.array([True, False, True, True]))
    np.testing.assert_array_equal(batch.index, [0, 2, 3])
    coef, n_iter, converged = batch.result(values[[0, 2, 3]] + 100.0)
    np.testing.assert_array_equal(coef, [[100, 101], [2, 3], [104, 105], [106, 107]])
    np.testing.assert_array_equal(n_iter, [9, 3, 9, 9])
    np.testing.assert_array_equal(converged, [False, True, False, False])

    masked = ProblemBatch(3, 1, max_iter=5)
    coef, _, _ = masked.result(np.array([[1.0], [2.0], [3.0]]), live=np.array([True, False, True]))
    np.testing.assert_array_equal(coef, [[1.0], [0.0], [3.0]])
    assert masked.drop(np.zeros(3, dtype=bool))
