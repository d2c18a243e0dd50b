"""The tuned accuracy experiments (hopkins155, yale_subjects) run at profile=smoke, write
the shared CSV schema and their summary tables; the tuned estimators behave."""

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

from experiments import _runner
from experiments._tuned import (TunedKSSC, TunedSSC, l2_neighbours, lasso_admm, threshold_rows,
                                union_neighbours)
from kssc.datasets import get_data_dir

ROOT = Path(__file__).resolve().parent.parent
CONF = str(ROOT / "conf")
DATA_DIR = get_data_dir()
TUNED = ("hopkins155", "yale_subjects")
TABLE_COLUMNS = {"method", "mean", "median", "failed", "time_fit_mean", "published_ssc_mean"}


def make_config(*overrides, tmp_path):
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        cfg = compose("config", overrides=list(overrides))
    cfg.results_dir = str(tmp_path / "results")
    cfg.figures_dir = str(tmp_path / "figures")
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
    assert rows["error"].between(0, 100).all()
    assert (rows["time_fit"] > 0).all()
    summary = pd.read_csv(results / table)
    assert TABLE_COLUMNS | {group} <= set(summary.columns)
    if name == "hopkins155":
        assert set(rows["n_motions"]) == {2, 3}
        assert set(summary["group"]) == {"2 motions", "3 motions", "all"}
        assert (summary.loc[summary["group"] == "all", "sequences"] == 3).all()
    else:
        assert set(summary["n_subjects"]) == {2, 3}
        assert not rows["subjects"].str.split("-").map(lambda s: len(s) != len(set(s))).any()


def test_affine_lasso_meets_constraint():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((5, 8, 6))
    x = rng.standard_normal((5, 6))
    gram = A @ A.transpose(0, 2, 1)
    corr = np.einsum("nkd,nd->nk", A, x)
    z, _ = lasso_admm(gram, corr, np.full(5, 0.01), np.ones(5), affine=True, tol=1e-10,
                      max_iter=5000)
    np.testing.assert_allclose(z.sum(axis=1), 1.0, atol=1e-6)


@pytest.mark.parametrize("estimator", [TunedKSSC(2, n_neighbors=10, lam=0.01, random_state=0),
                                       TunedSSC(2, lam=0.01, random_state=0),
                                       TunedKSSC(2, n_neighbors=10, lam=0.001, affine=True,
                                                 normalize=False, metric="l2", random_state=0),
                                       TunedKSSC(2, n_neighbors=12, lam=0.001, affine=True,
                                                 normalize=False, metric="l2",
                                                 union_metric="centred_abs_cosine",
                                                 threshold=0.7, random_state=0)])
def test_tuned_estimators_separate_two_subspaces(estimator):
    from kssc.datasets.synthetic import make_subspaces
    from kssc.metrics import clustering_error

    X, y = make_subspaces(2, 3, 30, 20, random_state=0)[:2]
    assert clustering_error(y, estimator.fit(X).labels_) == 0.0


def test_threshold_rows_keeps_the_largest_entries_up_to_rho_of_the_l1_mass():
    coef = np.array([[0.5, -0.3, 0.1, 0.1], [0.0, 0.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(threshold_rows(coef, 0.7),
                                  [[0.5, -0.3, 0.0, 0.0], [0.0] * 4, [-1.0, 0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(threshold_rows(coef, 1.0), coef)


@pytest.mark.parametrize("metric", ["centred_abs_cosine", "abs_cosine", "euclidean"])
def test_union_neighbours_adds_distinct_other_points(metric):
    X = np.random.default_rng(1).standard_normal((40, 6))
    first = l2_neighbours(X, 5)
    indices = union_neighbours(X, first, 7, metric)
    assert indices.shape == (40, 12)
    np.testing.assert_array_equal(indices[:, :5], first)
    assert all(len(set(row)) == 12 and i not in row for i, row in enumerate(indices.tolist()))


def test_union_fraction_one_takes_all_neighbours_by_the_union_metric():
    X = np.random.default_rng(2).standard_normal((30, 5))
    est = TunedKSSC(2, n_neighbors=8, union_metric="abs_cosine", union_fraction=1.0,
                    random_state=0).fit(X)
    assert est.neighbors_.shape == (30, 8)
