"""kssc.ADMM (Elhamifar and Vidal's model and ADMM) against independent references."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import ElasticNet, Lasso

from kssc import ADMM, KSSC, clustering_error
from kssc.baselines import SSC
from kssc.coding.representation import kssc_coefficients

TIGHT = ADMM(stopping="each", tol=1e-13, max_iter=100_000)


def _problem(n=40, d=6, k=7, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    indices = np.array([rng.permutation(np.delete(np.arange(n), i))[:k] for i in range(n)])
    return X, indices


def _reference(model, X, indices):
    return np.array([model.fit(X[indices[i]].T, X[i]).coef_ for i in range(len(X))])


@pytest.mark.parametrize("positive", [False, True])
def test_lasso_matches_sklearn(positive):
    # min lam ||z||_1 + 1/2 ||x - A^T z||^2 is scikit-learn's Lasso with alpha = lam / d.
    X, indices = _problem()
    lam = 0.3
    coef, _, converged = kssc_coefficients(X, indices, lam, solver=TIGHT, positive=positive)
    ref = _reference(Lasso(alpha=lam / X.shape[1], fit_intercept=False, positive=positive,
                           tol=1e-13, max_iter=1_000_000), X, indices)
    assert converged.all()
    np.testing.assert_allclose(coef, ref, atol=1e-8)


def _elastic_net_objective(X, indices, coef, lam, ratio):
    A = X[indices]
    residual = X - np.einsum("nkd,nk->nd", A, coef)
    return (lam * (ratio * np.abs(coef).sum(axis=1) + (1 - ratio) / 2 * (coef**2).sum(axis=1))
            + 0.5 * (residual**2).sum(axis=1))


@pytest.mark.parametrize("solver", [TIGHT, "relaxed"])
def test_elastic_net_matches_sklearn(solver):
    # lam (r ||z||_1 + (1 - r)/2 ||z||^2) + 1/2 ||x - A^T z||^2: ElasticNet(alpha = lam / d, r).
    X, indices = _problem(seed=1)
    lam, ratio = 0.4, 0.6
    coef, _, _ = kssc_coefficients(X, indices, lam, solver=solver, positive=False,
                                   l1_ratio=ratio, tol=1e-15, max_iter=100_000)
    ref = _reference(ElasticNet(alpha=lam / X.shape[1], l1_ratio=ratio, fit_intercept=False,
                                tol=1e-13, max_iter=1_000_000), X, indices)
    # FISTA stops on the change of the objective, so its objective is what is accurate.
    np.testing.assert_allclose(_elastic_net_objective(X, indices, coef, lam, ratio),
                               _elastic_net_objective(X, indices, ref, lam, ratio), atol=1e-8)
    if solver is TIGHT:
        np.testing.assert_allclose(coef, ref, atol=1e-8)


def test_affine_lasso_meets_its_optimality_conditions():
    # KKT of min lam ||z||_1 + 1/2 ||x - A^T z||^2 s.t. 1^T z = 1: with r = x - A^T z there is
    # one nu with A r - nu 1 = lam sign(z) on the support and |A r - nu| <= lam off it.
    X, indices = _problem(seed=2)
    lam = 0.2
    solver = ADMM(affine=True, stopping="each", tol=1e-13, max_iter=100_000)
    coef, _, converged = kssc_coefficients(X, indices, lam, solver=solver, positive=False)
    assert converged.all()
    np.testing.assert_allclose(coef.sum(axis=1), 1.0, atol=1e-10)
    for i in range(len(X)):
        A = X[indices[i]]
        g = A @ (X[i] - A.T @ coef[i])
        on = np.abs(coef[i]) > 1e-10
        nu = np.mean(g[on] - lam * np.sign(coef[i, on]))
        np.testing.assert_allclose(g[on] - nu, lam * np.sign(coef[i, on]), atol=1e-8)
        assert np.all(np.abs(g[~on] - nu) <= lam + 1e-8)


def test_outlier_term_is_a_lasso_over_an_identity_dictionary():
    # min ||z||_1 + ||e||_1 + mu1/2 ||x - A^T z - e / gamma||^2 is a lasso on [A^T, I / gamma],
    # gamma = 1 / (lam max_j ||x_j||_1), with lam = 1 / mu1 (absolute penalty).
    X, indices = _problem(n=12, d=5, k=6, seed=4)
    lam = 0.25
    solver = ADMM(outlier=True, stopping="each", tol=1e-13, max_iter=200_000)
    coef, _, _ = kssc_coefficients(X, indices, lam, solver=solver, positive=False)
    gamma = 1.0 / (lam * np.abs(X).sum(axis=1).max())
    d = X.shape[1]
    lasso = Lasso(alpha=lam / d, fit_intercept=False, tol=1e-13, max_iter=1_000_000)
    for i in range(len(X)):
        B = np.hstack([X[indices[i]].T, np.eye(d) / gamma])
        np.testing.assert_allclose(coef[i], lasso.fit(B, X[i]).coef_[:6], atol=1e-8)


@pytest.mark.parametrize("outlier", [False, True])
def test_their_stopping_rule_is_the_same_over_any_chunking(outlier):
    # "all": every point stops at the first iteration where the largest change of all
    # points is <= tol, however the points are split into chunks.
    X, indices = _problem(n=50, seed=5)
    solver = ADMM(outlier=outlier, tol=1e-5, max_iter=500)
    whole = kssc_coefficients(X, indices, 0.5, solver=solver, positive=False, lam_mode="global")
    for chunk_size in (7, 16):
        parts = kssc_coefficients(X, indices, 0.5, solver=solver, positive=False,
                                  lam_mode="global", chunk_size=chunk_size)
        np.testing.assert_array_equal(parts[0], whole[0])
        np.testing.assert_array_equal(parts[1], whole[1])
    assert len(set(whole[1])) == 1 and whole[1][0] < 500 and whole[2].all()


def _lock_step_lasso(X, indices, mu1, mu2, tol, max_iter):
    """Every point's lasso ADMM of kssc.coding.admm (no affine or outlier term), all points one
    iteration at a time, stopped at the first iteration where every change is <= tol."""
    A = X[indices]  # (n, k, D)
    n, k = indices.shape
    inverse = np.linalg.inv(mu1[:, None, None] * A @ A.transpose(0, 2, 1) + mu2 * np.eye(k))
    rhs = mu1[:, None] * np.einsum("nkd,nd->nk", A, X)
    c, dual = np.zeros((n, k)), np.zeros((n, k))
    it = 0
    while it < max_iter:
        it += 1
        u = np.einsum("nkm,nm->nk", inverse, rhs + mu2 * c - dual)
        shifted = u + dual / mu2
        c_new = np.sign(shifted) * np.maximum(np.abs(shifted) - 1 / mu2, 0)
        dual += mu2 * (u - c_new)
        gap = max(np.abs(u - c_new).max(), np.abs(u - c).max())
        c = c_new
        if gap <= tol:
            break
    return c, it


def test_their_stopping_rule_stops_inside_a_stretch_as_in_lock_step():
    # The kernel runs every point through stretches of iterations in turn; where the chunks'
    # common stop falls inside a stretch, it must end there as the lock step does.
    from kssc.coding.representation import _ADMM_SEGMENT

    X, indices = _problem(n=60, seed=8)
    lam, lam_rows = 0.5, np.linspace(0.2, 0.6, 60)
    solver = ADMM(tol=1e-6, max_iter=1000)
    ref, stop = _lock_step_lasso(X, indices, 1 / lam_rows, 1 / lam, solver.tol, solver.max_iter)
    assert stop < solver.max_iter and stop % _ADMM_SEGMENT
    for chunk_size in (None, 9):
        coef, n_iter, converged = kssc_coefficients(X, indices, lam, solver=solver,
                                                    positive=False, lam_rows=lam_rows,
                                                    chunk_size=chunk_size)
        assert (n_iter == stop).all() and converged.all()
        np.testing.assert_allclose(coef, ref, atol=1e-10)


def test_each_point_stops_on_its_own_and_unconverged_points_are_flagged():
    X, indices = _problem(seed=6)
    _, n_iter, converged = kssc_coefficients(X, indices, 1.0, positive=False,
                                             solver=ADMM(stopping="each", tol=1e-5))
    assert converged.all() and len(set(n_iter)) > 1
    _, n_iter, converged = kssc_coefficients(X, indices, 0.1, positive=False,
                                             solver=ADMM(tol=0.0, max_iter=3))
    assert not converged.any() and (n_iter == 3).all()
    # Their "all" rule stops at the cap by design: no warning; "each" warns with advice
    # that works (the cap lives in the ADMM object).
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        KSSC(2, n_neighbors=7, solver=ADMM(tol=0.0, max_iter=3)).fit(X)
    with pytest.warns(ConvergenceWarning, match=r"ADMM.*solver=ADMM\(max_iter=6, \.\.\.\)"):
        KSSC(2, n_neighbors=7, solver=ADMM(tol=0.0, max_iter=3, stopping="each")).fit(X)


def _admm_lasso_mat_func(Y, affine, alpha, thr=2e-4, max_iter=200):
    """A line-by-line transcription of Elhamifar's admmLasso_mat_func.m (Y: D x N)."""
    N = Y.shape[1]
    T = np.abs(Y.T @ Y)
    T -= np.diag(np.diag(T))
    mu1, mu2 = alpha / T.max(axis=0).min(), alpha
    ones = np.ones((N, N)) if affine else np.zeros((N, N))
    A = np.linalg.inv(mu1 * Y.T @ Y + mu2 * np.eye(N) + mu2 * ones)
    C1, Lambda2, lambda3 = np.zeros((N, N)), np.zeros((N, N)), np.zeros((1, N))
    for _ in range(max_iter):
        Z = A @ (mu1 * Y.T @ Y + mu2 * (C1 - Lambda2 / mu2)
                 + (mu2 * np.ones((N, 1)) @ (np.ones((1, N)) - lambda3 / mu2) if affine else 0))
        Z = Z - np.diag(np.diag(Z))
        C2 = np.maximum(0, np.abs(Z + Lambda2 / mu2) - 1 / mu2) * np.sign(Z + Lambda2 / mu2)
        C2 = C2 - np.diag(np.diag(C2))
        Lambda2 = Lambda2 + mu2 * (Z - C2)
        errs = [np.abs(Z - C2).max(), np.abs(Z - C1).max()]
        if affine:
            lambda3 = lambda3 + mu2 * (np.ones((1, N)) @ Z - np.ones((1, N)))
            errs.append(np.abs(np.ones((1, N)) @ Z - 1).max())
        C1 = C2
        if max(errs) <= thr:
            break
    return C1


def _admm_outlier_mat_func(Y, alpha, thr=2e-4, max_iter=200):
    """A transcription of Elhamifar's admmOutlier_mat_func.m, non-affine (Y: D x N)."""
    D, N = Y.shape
    gamma = alpha / np.abs(Y).sum(axis=0).max()
    P = np.hstack([Y, np.eye(D) / gamma])
    T = np.abs(P.T @ Y)
    T[:N] -= np.diag(np.diag(T[:N]))
    mu1, mu2 = alpha / T.max(axis=0).min(), alpha
    A = np.linalg.inv(mu1 * P.T @ P + mu2 * np.eye(N + D))
    C1, Lambda2 = np.zeros((N + D, N)), np.zeros((N + D, N))
    for _ in range(max_iter):
        Z = A @ (mu1 * P.T @ Y + mu2 * (C1 - Lambda2 / mu2))
        Z[:N] -= np.diag(np.diag(Z[:N]))
        C2 = np.maximum(0, np.abs(Z + Lambda2 / mu2) - 1 / mu2) * np.sign(Z + Lambda2 / mu2)
        C2[:N] -= np.diag(np.diag(C2[:N]))
        Lambda2 = Lambda2 + mu2 * (Z - C2)
        errs = [np.abs(Z - C2).max(), np.abs(Z - C1).max()]
        C1 = C2
        if max(errs) <= thr:
            break
    return C1[:N]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # as theirs
@pytest.mark.parametrize("affine", [False, True])
def test_ssc_admm_follows_their_code(affine):
    X = np.random.default_rng(3).standard_normal((15, 6))
    model = SSC(2, lam=1 / 50, lam_mode="global", solver=ADMM(affine=affine), positive=False,
                normalize=False).fit(X)
    C = model.representation_matrix_.toarray()
    np.testing.assert_allclose(C, _admm_lasso_mat_func(X.T, affine, 50.0).T, atol=1e-10)
    assert np.all(np.diag(C) == 0)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # as theirs
def test_ssc_admm_with_outliers_follows_their_code():
    X = np.random.default_rng(5).standard_normal((12, 7))
    model = SSC(2, lam=1 / 20, lam_mode="global", solver=ADMM(outlier=True), positive=False,
                normalize=False).fit(X)
    np.testing.assert_allclose(model.representation_matrix_.toarray(),
                               _admm_outlier_mat_func(X.T, 20.0).T, atol=1e-9)


@pytest.mark.parametrize("params", [
    {"affine": True, "outlier": True},
    {"stopping": "first"},
    {"max_iter": 0},
])
def test_bad_admm_settings_are_refused(params):
    X = np.random.default_rng(0).standard_normal((30, 5))
    with pytest.raises(ValueError, match="ADMM"):
        KSSC(2, n_neighbors=5, solver=ADMM(**params)).fit(X)


def test_ssc_refuses_per_point_stopping_and_elastic_net_without_admm():
    X = np.random.default_rng(0).standard_normal((30, 5))
    with pytest.raises(ValueError, match="stopping='all'"):
        SSC(2, solver=ADMM(stopping="each")).fit(X)
    with pytest.raises(ValueError, match="l1_ratio"):
        SSC(2, l1_ratio=0.5).fit(X)
    with pytest.raises(ValueError, match="l1_ratio"):
        KSSC(2, n_neighbors=5, solver="exact", l1_ratio=0.5).fit(X)


@pytest.mark.parametrize("estimator", [
    KSSC(2, n_neighbors=10, lam=0.05, lam_mode="global", solver=ADMM(), positive=False,
         affinity="max_normalized", random_state=0),
    KSSC(2, n_neighbors=[4, 4], neighbor_pcs=[0, 2], n_random=8, lam=1 / 800, lam_mode="global",
         solver=ADMM(affine=True), positive=False, normalize=False, metric="l2", threshold=0.7,
         affinity="max_normalized", assign_labels="njw", random_state=0),
    KSSC(2, n_neighbors=10, n_random=5, lam=0.05, lam_mode="global", solver=ADMM(outlier=True),
         positive=False, affinity="max_normalized", random_state=0),
    KSSC(2, n_neighbors=10, l1_ratio=0.5, lam=0.05, solver=ADMM(stopping="each"),
         random_state=0),
    KSSC(2, n_neighbors=10, l1_ratio=0.5, random_state=0),
    SSC(2, lam=0.05, lam_mode="global", solver=ADMM(), positive=False, random_state=0),
    SSC(2, lam=1 / 800, lam_mode="global", solver=ADMM(affine=True), positive=False,
        normalize=False, threshold=0.7, affinity="max_normalized", random_state=0),
    SSC(2, lam=0.05, lam_mode="global", solver=ADMM(outlier=True), positive=False,
        random_state=0),
    SSC(2, lam=0.05, l1_ratio=0.5, solver=ADMM(), random_state=0),
], ids=repr)
def test_options_separate_two_subspaces(estimator):
    from kssc.datasets.synthetic import make_subspaces

    X, y = make_subspaces(2, 3, 30, 20, random_state=0)[:2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        assert clustering_error(y, estimator.fit(X).labels_) == 0.0
