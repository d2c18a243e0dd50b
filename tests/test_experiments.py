"""The experiment suite: configs compose, every experiment runs at profile=smoke, the CSVs
have the shared schema, an interrupted run resumes, figures are drawn from CSV only."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir
from sklearn.cluster import KMeans

from experiments import _runner, plot, report
from experiments.run import run
from kssc.datasets import get_data_dir

ROOT = Path(__file__).resolve().parent.parent
CONF = str(ROOT / "conf")
DATA_DIR = get_data_dir()
TRIAL_EXPERIMENTS = [name for name in _runner.EXPERIMENTS
                     if name not in ("complexity", "yale_observation", "hopkins_observation")]


class KMeansStandIn:
    """A fast stand-in estimator with the shared fit/labels_/timings_ contract."""

    def __init__(self, n_clusters=None, *, random_state=None):
        self.n_clusters = n_clusters
        self.random_state = random_state

    def fit(self, X):
        self.labels_ = KMeans(self.n_clusters, n_init=1, random_state=self.random_state).fit_predict(X)
        self.timings_ = {"representation": 0.0, "spectral": 0.0}
        return self


STAND_IN = f"{__name__}.KMeansStandIn"


def make_config(*overrides, tmp_path=None):
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        cfg = compose("config", overrides=list(overrides))
    if tmp_path is not None:
        cfg.results_dir = str(tmp_path / "results")
        cfg.figures_dir = str(tmp_path / "figures")
    return cfg


def data_available():
    """With KSSC_DATA_DIR set (as in CI) missing data must fail the runs, not skip them."""
    return "KSSC_DATA_DIR" in os.environ or (DATA_DIR / "tir" / "TIRlib.mat").exists()


@pytest.mark.parametrize("name", _runner.EXPERIMENTS)
@pytest.mark.parametrize("profile", ["paper", "default", "smoke"])
def test_every_config_composes(name, profile):
    cfg = _runner.check_config(make_config(f"experiment={name}", f"profile={profile}"))
    assert cfg.experiment.name == name


@pytest.mark.parametrize("name", _runner.EXPERIMENTS)
def test_smoke_run(name, tmp_path, monkeypatch):
    if not data_available():
        pytest.skip("data folder not available")
    cfg = make_config(f"experiment={name}", "profile=smoke", "n_jobs=1", tmp_path=tmp_path)
    frame = run(cfg)
    results = tmp_path / "results"
    assert (results / f"{name}.csv").exists()
    meta = json.loads((results / f"{name}.meta.json").read_text())
    assert meta["config"]["experiment"]["name"] == name
    assert {"packages", "git_revision", "cpu_count", "wall_time_s", "started", "finished"} <= set(meta)
    assert not (results / ".partial" / f"{name}.jsonl").exists()
    assert not list(results.glob(".*.tmp"))
    assert len(frame) > 0
    if name in TRIAL_EXPERIMENTS:
        check_schema(pd.read_csv(results / f"{name}.csv"))
        assert set(frame["method"]) == set(cfg.methods)
        assert (~frame["failed"]).any()


def check_schema(frame):
    required = {"experiment": object, "method": object, "trial": np.integer, "seed": np.integer,
                "error": np.floating, "failed": np.bool_, "time_representation": np.floating,
                "time_fit": np.floating}
    for column, kind in required.items():
        assert column in frame, column
        if kind is not object:
            assert np.issubdtype(frame[column].dtype, kind), (column, frame[column].dtype)
    assert frame.loc[frame["failed"], "error"].isna().all()
    ok = frame.loc[~frame["failed"], "error"]
    assert ok.between(0, 100).all()


def toy_trial(context, cell, trial, seed):
    rng = np.random.default_rng(_runner.data_seed(seed))
    y = np.repeat([0, 1], 10)
    X = rng.standard_normal((20, 3)) + 10 * y[:, None]
    rows = _runner.fit_methods(context, X, y, seed)
    for row in rows:
        row["cell_value"] = cell["value"] * 2
    return rows


def toy_config(tmp_path, *overrides):
    cfg = make_config("experiment=synthetic_intersection", "profile=smoke", "n_jobs=1",
                      "~methods.ssc", "~methods.kssc", f"+methods.standin._target_={STAND_IN}",
                      *overrides, tmp_path=tmp_path)
    return cfg


def toy_tasks(n_cells=3, trials=2):
    return [({"value": v}, t) for t in range(trials) for v in range(n_cells)]


def test_resume_after_kill(tmp_path):
    cfg = toy_config(tmp_path)

    def kill_after_two(done):
        if done == 2:
            raise KeyboardInterrupt("simulated kill")

    with pytest.raises(KeyboardInterrupt):
        _runner.run_experiment(cfg, toy_tasks(), toy_trial, on_trial=kill_after_two)
    partial = tmp_path / "results" / ".partial" / "synthetic_intersection.jsonl"
    assert partial.exists()
    assert not (tmp_path / "results" / "synthetic_intersection.csv").exists()

    ran = []
    frame = _runner.run_experiment(cfg, toy_tasks(), toy_trial, on_trial=ran.append)
    assert len(ran) == 6 - 2  # only the unfinished tasks ran
    assert len(frame) == 6 and not partial.exists()
    assert sorted(frame["cell_value"]) == [0, 0, 2, 2, 4, 4]
    check_schema(frame)
    meta = json.loads((tmp_path / "results" / "synthetic_intersection.meta.json").read_text())
    assert meta["n_tasks_resumed"] == 2


def test_changed_config_or_restart_starts_over(tmp_path):
    cfg = toy_config(tmp_path)

    def kill(done):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _runner.run_experiment(cfg, toy_tasks(), toy_trial, on_trial=kill)
    ran = []
    _runner.run_experiment(toy_config(tmp_path, "seed=7"), toy_tasks(), toy_trial, on_trial=ran.append)
    assert len(ran) == 6
    with pytest.raises(KeyboardInterrupt):
        _runner.run_experiment(cfg, toy_tasks(), toy_trial, on_trial=kill)
    ran = []
    _runner.run_experiment(toy_config(tmp_path, "restart=true"), toy_tasks(), toy_trial,
                           on_trial=ran.append)
    assert len(ran) == 6


def test_deterministic_and_parallel_equal_serial(tmp_path):
    serial = _runner.run_experiment(toy_config(tmp_path / "a"), toy_tasks(), toy_trial)
    parallel = _runner.run_experiment(toy_config(tmp_path / "b", "n_jobs=2"), toy_tasks(), toy_trial)
    cols = ["method", "trial", "seed", "error", "cell_value"]
    pd.testing.assert_frame_equal(serial[cols], parallel[cols])


def test_trial_seeds_depend_on_cell_and_trial():
    a = _runner.trial_seed(1, {"noise": 0.1}, 0)
    assert a == _runner.trial_seed(1, {"noise": 0.1}, 0)
    assert len({a, _runner.trial_seed(1, {"noise": 0.2}, 0), _runner.trial_seed(1, {"noise": 0.1}, 1),
                _runner.trial_seed(2, {"noise": 0.1}, 0)}) == 4


def test_failed_fit_is_nan_and_counted():
    row = _runner.fit_method("broken", {"_target_": f"{__name__}.KMeansStandIn"}, np.zeros((4, 2)),
                             np.array([0, 0, 1, 1]), n_clusters=5, random_state=0)
    assert row["failed"] and np.isnan(row["error"]) and "n_samples" in row["failure"]


@pytest.mark.parametrize("override, message", [
    ("experiment.name=nope", "Unknown experiment"),
    ("experiment.trials=-1", "trials must be a positive integer"),
    ("+methods.foo._target_=nowhere.Nothing", "Unknown method 'foo'"),
    ("+methods.kssc.bogus=1", "has no parameter"),
    ("n_jobs=0", "n_jobs"),
])
def test_bad_config_values_raise_clear_errors(override, message):
    cfg = make_config("experiment=tir", override)
    with pytest.raises(ValueError, match=message):
        _runner.check_config(cfg)


def test_unknown_experiment_in_cli_group():
    from hydra.errors import MissingConfigException

    with pytest.raises(MissingConfigException):
        make_config("experiment=nope")


def fixture_results(results):
    """Small hand-made CSVs in the shape every experiment writes."""
    results.mkdir(parents=True)
    rng = np.random.default_rng(0)
    rows = []
    for noise, psnr_code in ((0.0, 99.0), (0.2, 32.2)):
        for method in ("ssc", "gfs", "gsc", "tsc", "sssc", "kssc"):
            for trial in range(3):
                rows.append({"experiment": "tir", "method": method, "trial": trial, "seed": trial,
                             "error": rng.uniform(0, 60), "failed": False, "time_representation": 0.1,
                             "time_fit": 0.2, "failure": "", "noise": noise, "psnr_code": psnr_code,
                             "psnr_db": psnr_code / 2, "N": 100})
    tir = pd.DataFrame(rows)
    tir.to_csv(results / "tir.csv", index=False)
    tir.assign(experiment="hopkins", sequence="1R2RC").to_csv(results / "hopkins.csv", index=False)
    rows = [{"experiment": "synthetic_intersection", "method": m, "trial": 0, "seed": 0,
             "error": float(t), "failed": False, "time_representation": 0.1, "time_fit": 0.1,
             "failure": "", "intersection_dim": t} for m in ("ssc", "kssc") for t in range(11)]
    pd.DataFrame(rows).to_csv(results / "synthetic_intersection.csv", index=False)
    rows = [{"experiment": "tir_large", "method": m, "trial": 0, "seed": 0, "error": 1.0,
             "failed": False, "time_representation": n / 1000, "time_fit": n / 500, "failure": "",
             "n_per_subspace": n} for m in ("kssc", "tsc", "sssc") for n in (100, 200, 1100)]
    pd.DataFrame(rows).to_csv(results / "tir_large.csv", index=False)


def test_figures_from_fixture_csv(tmp_path):
    fixture_results(tmp_path / "results")
    drawn = plot.plot_all(tmp_path / "results", tmp_path / "figures")
    assert {"tir_results", "tir_results2", "tir_motion_time", "synthetic_intersection",
            "large_results"} <= set(drawn)
    for figure in drawn:
        assert (tmp_path / "figures" / f"{figure}.png").stat().st_size > 0
        assert (tmp_path / "figures" / f"{figure}.pdf").exists()


def test_report_from_fixture_csv(tmp_path):
    fixture_results(tmp_path / "results")
    text = report.write_report(tmp_path / "results")
    assert (tmp_path / "results" / "REPORT.md").read_text() == text
    assert "kSSC" in text and "TIR" in text


def test_command_line_entry_point(tmp_path):
    result = subprocess.run(
        [sys.executable, str(ROOT / "experiments" / "run.py"), "experiment=complexity", "profile=smoke",
         f"results_dir={tmp_path / 'results'}"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "results" / "complexity.csv").exists()
    assert (tmp_path / "results" / "complexity_table.csv").exists()
    assert {p.name for p in tmp_path.iterdir()} <= {"results", "outputs"}  # no Hydra clutter
