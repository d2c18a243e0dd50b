"""The tuned accuracy experiments (hopkins155, yale_subjects) run at profile=smoke, write
the shared CSV schema and their summary tables; the tuned estimators behave."""

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

from experiments import _runner
from sklearn.linear_model import Lasso

from experiments._tuned import (TunedKSSC, TunedSSC, candidate_products, global_lam, l2_neighbours,
                                lasso_admm, merge_candidates, remove_top_components, outlier_lasso_admm, outlier_scales,
                                random_candidates, ssc_admm,
                                threshold_rows)
from kssc.datasets import get_data_dir

ROOT = Path(__file__).resolve().parent.parent
CONF = str(ROOT / "conf")
DATA_DIR = get_data_dir()
TUNED = ("hopkins155", "yale_subjects")
TABLE_COLUMNS = {"method", "error_pct_mean", "error_pct_median", "n_failed", "time_fit_s_mean"}


def make_config(*overrides, tmp_path):
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        cfg = compose("config", overrides=list(overrides))
    cfg.results_dir = str(tmp_path / "results")
    return cfg


@pytest.mark.parametrize("name", TUNED)
@pytest.mark.parametrize("profile", ["paper", "default", "smoke"])
def test_config_composes(name, profile, tmp_path):
    cfg = _runner.check_config(make_config(f"experiment={name}", f"profile={profile}",
                                           tmp_path=tmp_path))
    assert set(cfg.methods) == {"ssc_tuned", "kssc_tuned"}


@pytest.mark.parametrize("name, table, group", [("hopkins155", "hopkins155_table.csv", "group"),
                                                ("yale_subjects", "yale_subjects_table.csv", "n_subjects")])
def test_smoke_run(name, table, group, tmp_path, monkeypatch):
    if "KSSC_DATA_DIR" not in os.environ and not (DATA_DIR / "hopkins155").exists():
        pytest.skip("no data folder: set KSSC_DATA_DIR or run make data")
    from experiments.run import run

    frame = run(make_config(f"experiment={name}", "profile=smoke", "n_jobs=1", tmp_path=tmp_path))
    results = tmp_path / "results"
    rows = pd.read_csv(results / f"{name}.csv")
    assert len(rows) == len(frame) > 0
    assert set(rows["method"]) == {"ssc_tuned", "kssc_tuned"}
    assert not rows["failed"].any(), rows["failure"].tolist()
    assert rows["error_pct"].between(0, 100).all()
    assert (rows["time_fit_s"] > 0).all()
    summary = pd.read_csv(results / table)
    assert TABLE_COLUMNS | {group} <= set(summary.columns)
    from experiments.report import declared_sections, section

    feeds = dict(declared_sections())[name]
    text = "\n".join(section(results, name, feeds))
    assert text.count("- Claim:") == len(feeds["claims"])  # a verdict (or "not run") per target
    assert "holds" in text
    if name == "hopkins155":
        assert set(rows["n_motions"]) == {2, 3}
        assert set(summary["group"]) == {"2 motions", "3 motions", "all"}
        assert (summary.loc[summary["group"] == "all", "n_sequences"] == 3).all()
    else:
        assert set(summary["n_subjects"]) == {2, 3}
        assert not rows["subjects"].str.split("-").map(lambda s: len(s) != len(set(s))).any()


def _problems(n=5, k=8, d=6, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, k, d))
    x = rng.standard_normal((n, d))
    return A, x, A @ A.transpose(0, 2, 1), np.einsum("nkd,nd->nk", A, x)


def test_lasso_admm_matches_sklearn_lasso():
    # min ||z||_1 + mu1/2 ||x - A^T z||^2 is sklearn's Lasso with alpha = 1 / (mu1 d).
    A, x, gram, corr = _problems()
    mu1 = 3.0
    z, _ = lasso_admm(gram, corr, mu1, 1.0, affine=False, tol=1e-10, max_iter=50_000)
    for i in range(len(x)):
        ref = Lasso(alpha=1.0 / (mu1 * x.shape[1]), fit_intercept=False, tol=1e-12,
                    max_iter=100_000).fit(A[i].T, x[i]).coef_
        np.testing.assert_allclose(z[i], ref, atol=1e-6)


def test_affine_lasso_meets_constraint():
    _, _, gram, corr = _problems()
    z, _ = lasso_admm(gram, corr, 10.0, 1.0, affine=True, tol=1e-10, max_iter=50_000)
    np.testing.assert_allclose(z.sum(axis=1), 1.0, atol=1e-6)


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


@pytest.mark.parametrize("affine", [False, True])
def test_ssc_admm_follows_elhamifars_admm(affine):
    X = np.random.default_rng(3).standard_normal((15, 6))
    C, _ = ssc_admm(X, 50.0, affine=affine)
    np.testing.assert_allclose(C, _admm_lasso_mat_func(X.T, affine, 50.0).T, atol=1e-10)
    assert np.all(np.diag(C) == 0)


def test_outlier_admm_matches_the_lasso_with_an_identity_dictionary():
    # min ||z||_1 + ||e||_1 + mu1/2 ||x - A^T z - e / gamma||^2 is a lasso on [A^T, I / gamma].
    rng = np.random.default_rng(4)
    X = rng.standard_normal((9, 5))
    indices = np.array([rng.permutation(np.delete(np.arange(9), i))[:6] for i in range(9)])
    gram, corr = candidate_products(X, indices)
    mu1, gamma = 4.0, 2.0
    z, _ = outlier_lasso_admm(X, indices, gram, corr, mu1, 1.0, gamma, tol=1e-11,
                              max_iter=50_000)
    d = X.shape[1]
    for i in range(len(X)):
        B = np.hstack([X[indices[i]].T, np.eye(d) / gamma])
        ref = Lasso(alpha=1.0 / (mu1 * d), fit_intercept=False, tol=1e-12,
                    max_iter=100_000).fit(B, X[i]).coef_[:6]
        np.testing.assert_allclose(z[i], ref, atol=1e-6)


def test_candidate_products_match_the_stacked_dictionaries():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((7, 4))
    indices = np.array([[1, 2, 3], [0, 6, 5], [4, 0, 1], [2, 5, 6], [3, 1, 0], [6, 4, 2],
                        [5, 3, 4]])
    gram, corr = candidate_products(X, indices)
    A = X[indices]
    np.testing.assert_allclose(gram, A @ A.transpose(0, 2, 1))
    np.testing.assert_allclose(corr, np.einsum("nkd,nd->nk", A, X))


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


def test_ssc_admm_with_outliers_follows_elhamifars_admm():
    X = np.random.default_rng(5).standard_normal((12, 7))
    C, _ = ssc_admm(X, 20.0, affine=False, outlier=True)
    np.testing.assert_allclose(C, _admm_outlier_mat_func(X.T, 20.0).T, atol=1e-9)


def test_outlier_scales_count_the_identity_atoms():
    X = np.array([[3.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    mu1, gamma = outlier_scales(X, 10.0, np.array([0.1, 0.1, 0.1]))
    assert gamma == pytest.approx(10.0 / 3.0)        # alpha / max row l1 norm
    # lam_i = max(lam_max_i, ||x_i||_inf / gamma) = (0.9, 0.3, 0.3); lam0 = 0.3.
    assert mu1 == pytest.approx(10.0 / 0.3)
def test_random_candidates_are_distinct_new_other_points_and_seeded():
    X = np.random.default_rng(1).standard_normal((40, 6))
    first = l2_neighbours(X, 5)
    draw = random_candidates(first, 9, np.random.RandomState(0))
    assert draw.shape == (40, 14)
    np.testing.assert_array_equal(draw[:, :5], first)
    assert all(len(set(row)) == 14 and i not in row for i, row in enumerate(draw.tolist()))
    np.testing.assert_array_equal(draw, random_candidates(first, 9, np.random.RandomState(0)))
    assert not np.array_equal(draw, random_candidates(first, 9, np.random.RandomState(1)))


def test_merge_candidates_adds_the_first_new_points_in_order():
    first = np.array([[1, 2], [0, 3]])
    more = np.array([[2, 5, 1, 4, 3], [4, 0, 3, 2, 1]])
    np.testing.assert_array_equal(merge_candidates(first, more, 2), [[1, 2, 5, 4], [0, 3, 4, 2]])


def test_two_neighbour_views_add_distinct_neighbours_of_each_view():
    X = np.random.default_rng(2).standard_normal((40, 8))
    model = TunedKSSC(2, n_neighbors=[4, 3], neighbour_pcs=[0, 2], n_random=5, metric="l2",
                      normalize=False, random_state=0).fit(X)
    indices = model.neighbors_
    assert indices.shape == (40, 12)
    np.testing.assert_array_equal(indices[:, :4], l2_neighbours(X, 4))
    second = l2_neighbours(remove_top_components(X, 2), 7)
    for i in range(40):
        assert len(set(indices[i])) == 12 and i not in indices[i]
        assert list(indices[i, 4:7]) == [j for j in second[i] if j not in indices[i, :4]][:3]


@pytest.mark.parametrize("params, message", [
    ({"n_neighbors": [5, 3], "neighbour_pcs": 1}, "same length"),
    ({"n_neighbors": [5, 0], "neighbour_pcs": [1, 2]}, "n_neighbors must be an integer >= 1"),
    ({"n_neighbors": 5, "neighbour_pcs": [-1]}, "neighbour_pcs must be an integer >= 0"),
    ({"n_neighbors": [], "neighbour_pcs": []}, "non-empty list")])
def test_bad_neighbour_views_are_refused(params, message):
    X = np.random.default_rng(0).standard_normal((30, 5))
    with pytest.raises(ValueError, match=message):
        TunedKSSC(2, **params).fit(X)


def test_remove_top_components_leaves_the_orthogonal_complement():
    X = np.random.default_rng(6).standard_normal((20, 8))
    top = np.linalg.svd(X)[2][:3]
    Q = remove_top_components(X, 3)
    np.testing.assert_allclose(Q @ top.T, 0.0, atol=1e-12)
    np.testing.assert_allclose(X - Q, (X @ top.T) @ top, atol=1e-12)
    assert remove_top_components(X, 0) is X


@pytest.mark.parametrize("estimator", [
    TunedKSSC(2, n_neighbors=10, alpha=20.0, random_state=0),
    TunedKSSC(2, n_neighbors=8, n_random=8, alpha=800.0, affine=True, normalize=False,
              metric="l2", threshold=0.7, random_state=0),
    TunedKSSC(2, n_neighbors=10, n_random=5, alpha=20.0, outlier=True, random_state=0),
    TunedKSSC(2, n_neighbors=10, n_random=5, neighbour_pcs=2, alpha=20.0, outlier=True,
              normalize=False, random_state=0),
    TunedSSC(2, alpha=20.0, random_state=0),
    TunedSSC(2, alpha=800.0, affine=True, normalize=False, threshold=0.7, random_state=0),
    TunedSSC(2, alpha=20.0, outlier=True, random_state=0)])
def test_tuned_estimators_separate_two_subspaces(estimator):
    from kssc.datasets.synthetic import make_subspaces
    from kssc.metrics import clustering_error

    X, y = make_subspaces(2, 3, 30, 20, random_state=0)[:2]
    assert clustering_error(y, estimator.fit(X).labels_) == 0.0


@pytest.mark.parametrize("estimator", [TunedKSSC(2, affine=True, outlier=True),
                                       TunedSSC(2, affine=True, outlier=True)])
def test_affine_with_outlier_is_refused(estimator):
    X = np.random.default_rng(0).standard_normal((30, 5))
    with pytest.raises(ValueError, match="affine=True with outlier=True"):
        estimator.fit(X)


def test_threshold_rows_keeps_the_largest_entries_up_to_rho_of_the_l1_mass():
    coef = np.array([[0.5, -0.3, 0.1, 0.1], [0.0, 0.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(threshold_rows(coef, 0.7),
                                  [[0.5, -0.3, 0.0, 0.0], [0.0] * 4, [-1.0, 0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(threshold_rows(coef, 1.0), coef)
