"""The experiment suite: configs compose, every experiment runs at profile=smoke, the CSVs
have the shared schema, an interrupted run resumes, a bad parameter stops a run, a results
folder is locked, figures and the report are drawn from CSVs only, byte for byte the same
when redrawn."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

from experiments import _config, _fingerprint, _io, _runner, _trial, plot, report
from experiments._checkout import REPO_ROOT
from experiments.publish import feeds
from experiments.run import run
from kssc.datasets import get_data_dir

DATA_DIR = get_data_dir()
EXPERIMENTS = _config.experiment_names()
TRIAL_EXPERIMENTS = [name for name in EXPERIMENTS if _runner.load(name).compute is None]


def data_available():
    """With KSSC_DATA_DIR set (as in CI) missing data must fail the runs, not skip them."""
    return "KSSC_DATA_DIR" in os.environ or (DATA_DIR / "tir" / "TIRlib.mat").exists()


@pytest.mark.parametrize("name", EXPERIMENTS)
@pytest.mark.parametrize("profile", ["paper", "default", "smoke"])
def test_every_config_composes(name, profile, compose_config):
    cfg = _config.check_config(compose_config(f"experiment={name}", f"profile={profile}"))
    assert cfg.experiment.name == name


OWN_TEST_FILE = ("scale", "hopkins155", "yale_subjects", "hopkins155_cv", "yale_grouped", "yale38",
                 "generic_selection", "panel")


@pytest.mark.e2e
@pytest.mark.parametrize("name", [n for n in EXPERIMENTS if n not in OWN_TEST_FILE])
def test_smoke_run(name, tmp_path, monkeypatch, compose_config):
    # These have their own test files (test_experiments_scale.py, ..._validation.py, ...).
    # digits and predict run on bundled data (predict's smoke profile: digits only).
    if name not in ("digits", "predict") and not data_available():
        pytest.skip("data folder not available")
    cfg = compose_config(f"experiment={name}", "profile=smoke", "n_jobs=1",
                         results_dir=tmp_path / "results")
    frame = run(cfg)
    results = tmp_path / "results"
    assert (results / f"{name}.csv").exists()
    meta = json.loads((results / f"{name}.meta.json").read_text())
    assert meta["config"]["experiment"]["name"] == name
    assert {"packages", "git_revision", "cpu_count", "machine", "wall_time_s", "started",
            "finished"} <= set(meta)
    # The processor and the BLAS that computed the timings (numpy's BLAS is loaded).
    assert meta["machine"]["cpu"] is None or meta["machine"]["cpu"].strip()
    assert any(lib["user_api"] == "blas" and lib["num_threads"] >= 1
               for lib in meta["machine"]["blas"])
    assert meta["fingerprint"] == _fingerprint.fingerprint(cfg)
    assert (results / f"{name}_table.csv").exists() == (_runner.load(name).summary is not None)
    assert not (results / ".partial" / f"{name}.jsonl").exists()
    assert not list(results.glob(".*.tmp"))
    assert len(frame) > 0
    if name in TRIAL_EXPERIMENTS:
        check_schema(pd.read_csv(results / f"{name}.csv"))
        assert set(frame["method"]) == set(cfg.methods)
        assert (~frame["failed"]).any()


def check_schema(frame):
    required = {"experiment": object, "method": object, "trial": np.integer, "seed": np.integer,
                "error_pct": np.floating, "failed": np.bool_, "time_representation_s": np.floating,
                "time_fit_s": np.floating}
    for column, kind in required.items():
        assert column in frame, column
        if kind is not object:
            assert np.issubdtype(frame[column].dtype, kind), (column, frame[column].dtype)
    assert frame.loc[frame["failed"], "error_pct"].isna().all()
    ok = frame.loc[~frame["failed"], "error_pct"]
    assert ok.between(0, 100).all()
    assert all(column == column.lower() and " " not in column for column in frame.columns)


def test_resume_after_kill(tmp_path, toy_config, run_toy):
    cfg = toy_config(tmp_path)

    def kill_after_two(done):
        if done == 2:
            raise KeyboardInterrupt("simulated kill")

    with pytest.raises(KeyboardInterrupt):
        run_toy(cfg, on_trial=kill_after_two)
    partial = tmp_path / "results" / ".partial" / "synthetic_intersection.jsonl"
    assert partial.exists()
    assert not (tmp_path / "results" / "synthetic_intersection.csv").exists()

    ran = []
    frame = run_toy(cfg, on_trial=ran.append)
    assert len(ran) == 6 - 2  # only the unfinished tasks ran
    assert len(frame) == 6 and not partial.exists()
    assert sorted(frame["cell_value"]) == [0, 0, 2, 2, 4, 4]
    check_schema(frame)
    meta = json.loads((tmp_path / "results" / "synthetic_intersection.meta.json").read_text())
    assert meta["n_tasks_resumed"] == 2


def test_changed_config_or_restart_starts_over(tmp_path, toy_config, run_toy):
    cfg = toy_config(tmp_path)

    def kill(done):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_toy(cfg, on_trial=kill)
    ran = []
    run_toy(toy_config(tmp_path, "seed=7"), on_trial=ran.append)
    assert len(ran) == 6
    with pytest.raises(KeyboardInterrupt):
        run_toy(cfg, on_trial=kill)
    ran = []
    run_toy(toy_config(tmp_path, "restart=true"), on_trial=ran.append)
    assert len(ran) == 6


def test_changed_code_starts_over(tmp_path, monkeypatch, toy_config, run_toy):
    """A checkpoint written by other code (another code digest) is discarded."""
    cfg = toy_config(tmp_path)

    def kill_after_two(done):
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_toy(cfg, on_trial=kill_after_two)
    monkeypatch.setattr(_fingerprint, "code_digest", lambda name: "other-code")
    ran = []
    run_toy(cfg, on_trial=ran.append)
    assert len(ran) == 6


@pytest.mark.e2e  # a pool of worker processes
def test_deterministic_and_parallel_equal_serial(tmp_path, toy_config, run_toy):
    serial = run_toy(toy_config(tmp_path / "a"))
    parallel = run_toy(toy_config(tmp_path / "b", "n_jobs=2"))
    cols = ["method", "trial", "seed", "error_pct", "cell_value"]
    pd.testing.assert_frame_equal(serial[cols], parallel[cols])


def test_trial_seeds_depend_on_cell_and_trial():
    a = _trial.trial_seed(1, {"noise": 0.1}, 0)
    assert a == _trial.trial_seed(1, {"noise": 0.1}, 0)
    assert len({a, _trial.trial_seed(1, {"noise": 0.2}, 0),
                _trial.trial_seed(1, {"noise": 0.1}, 1),
                _trial.trial_seed(2, {"noise": 0.1}, 0)}) == 4


def test_failed_fit_is_nan_and_counted(toy):
    row = _trial.fit_method("broken", {"_target_": toy.STAND_IN}, np.zeros((4, 2)),
                             np.array([0, 0, 1, 1]), n_clusters=5, random_state=0)
    assert row["failed"] and np.isnan(row["error_pct"]) and "n_samples" in row["failure"]


@pytest.mark.parametrize("override, message", [
    ("experiment.name=nope", "Unknown experiment"),
    ("experiment.trials=-1", "trials must be a positive integer"),
    ("+methods.foo._target_=nowhere.Nothing", "Unknown method 'foo'"),
    ("+methods.kssc.bogus=1", "has no parameter"),
    ("n_jobs=0", "n_jobs"),
    ("methods.kssc.lam=-1", "'lam' parameter of KSSC"),
    ("methods.ssc.lam=zero", "'lam' parameter of SSC"),
])
def test_bad_config_values_raise_clear_errors(override, message, compose_config):
    cfg = compose_config("experiment=tir", override)
    with pytest.raises(ValueError, match=message):
        _config.check_config(cfg)


def test_invalid_parameter_in_a_trial_stops_the_run(tmp_path, compose_config, run_toy, toy):
    # Issue 13.4: a parameter set per trial (synthetic_dvsn's k per cell) that the estimator
    # refuses used to become NaN rows and exit 0; now the run stops with the estimator's message.
    def bad_trial(context, cell, trial, seed):
        X = np.random.default_rng(0).standard_normal((20, 3))
        return _trial.fit_methods(context, X, np.repeat([0, 1], 10), seed,
                                   params={"kssc": {"n_neighbors": -3}})

    cfg = compose_config("experiment=synthetic_intersection", "profile=smoke", "n_jobs=1",
                         "~methods.ssc", results_dir=tmp_path / "results")
    with pytest.raises(ValueError, match="'n_neighbors' parameter of KSSC"):
        run_toy(cfg, declared=_trial.Experiment(tasks=toy.toy_tasks, trial=bad_trial))
    assert not (tmp_path / "results" / "synthetic_intersection.csv").exists()


@pytest.mark.e2e
def test_command_line_with_a_bad_parameter_exits_with_the_message(tmp_path):
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "experiments" / "run.py"),
         "experiment=synthetic_intersection",
         "profile=smoke", "methods.kssc.lam=-1", f"results_dir={tmp_path}"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode != 0
    assert "'lam' parameter of KSSC" in result.stderr
    assert not (tmp_path / "synthetic_intersection.csv").exists()


def test_unknown_experiment_in_cli_group(compose_config):
    from hydra.errors import MissingConfigException

    with pytest.raises(MissingConfigException):
        compose_config("experiment=nope")


def test_a_second_run_into_the_same_folder_is_refused(tmp_path, toy_config, run_toy):
    cfg = toy_config(tmp_path)
    results = tmp_path / "results"
    with _io.results_lock(results, "synthetic_intersection"):
        with pytest.raises(_io.ResultsLocked,
                           match="Another run of experiment 'synthetic_intersection'"):
            run_toy(cfg)
        assert not (results / ".partial" / "synthetic_intersection.jsonl").exists()
    assert len(run_toy(cfg)) == 6  # the lock is released with its holder


def test_a_killed_runs_temporary_files_are_removed_at_the_next_start(tmp_path, toy_config,
                                                                     run_toy):
    results = tmp_path / "results"
    results.mkdir()
    stale = [results / ".synthetic_intersection.csv.abc123.tmp",
             results / ".synthetic_intersection.meta.json.x.tmp",
             results / ".synthetic_intersection_table.csv.y.tmp"]
    other = results / ".tir.csv.abc.tmp"  # another experiment's, maybe still being written
    for path in [*stale, other]:
        path.write_text("half")
    run_toy(toy_config(tmp_path))
    assert not any(path.exists() for path in stale) and other.exists()


@pytest.mark.e2e
def test_killing_a_parallel_run_leaves_no_workers(tmp_path, toy_config, toy):
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    cfg = toy_config(tmp_path, "n_jobs=2", f"methods.standin._target_={toy.SLOW_STAND_IN}")
    OmegaConf.save(cfg, tmp_path / "toy.yaml")
    # The composed config, run with the toy experiment in a process of its own.
    paths = [str(REPO_ROOT), str(Path(toy.__file__).parent)]
    script = (f"import sys; sys.path[:0] = {paths!r}\n"
              "from omegaconf import OmegaConf\n"
              "from toy_experiment import run_toy\n"
              f"run_toy(OmegaConf.load({str(tmp_path / 'toy.yaml')!r}))\n")
    env = {**os.environ, "KSSC_TEST_PID_DIR": str(pid_dir)}
    run = subprocess.Popen([sys.executable, "-c", script], env=env, cwd=tmp_path,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import time

    deadline = time.monotonic() + 180  # worker start-up: seconds, more on a loaded machine
    while len(list(pid_dir.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(list(pid_dir.iterdir())) >= 2
    run.kill()
    run.wait()
    # Listed after the kill: a second worker (or the pre-flight's process) may have recorded
    # its pid a moment after the first two; every fit process must be gone.
    workers = [int(p.name) for p in pid_dir.iterdir()]
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    alive = [pid for pid in workers if Path(f"/proc/{pid}").exists()
             and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]]
    assert not alive


def fixture_results(results):
    """Small hand-made CSVs in the shape the experiments write: trial rows, the summary
    table the experiment's declaration derives from them, and a sidecar."""
    results.mkdir(parents=True)
    rng = np.random.default_rng(0)

    def write(name, frame):
        frame.to_csv(results / f"{name}.csv", index=False)
        summary = _runner.load(name).summary
        summary(frame, None).to_csv(results / f"{name}_table.csv", index=False)
        _io.write_meta({"experiment": {"name": name, "trials": 3}, "profile": {"name": "test"}},
                       results / f"{name}.meta.json", fingerprint="test", started="then",
                       wall_time=1.0)

    rows = []
    for noise, psnr_code in ((0.0, 99.0), (0.2, 32.2)):
        for method in ("ssc", "gfs", "gsc", "tsc", "sssc", "kssc"):
            for trial in range(3):
                rows.append({"experiment": "tir", "method": method, "trial": trial, "seed": trial,
                             "error_pct": rng.uniform(0, 60), "failed": False,
                             "time_representation_s": 0.1, "time_fit_s": 0.2, "failure": "",
                             "noise": noise, "psnr_code": psnr_code, "psnr_db": psnr_code / 2,
                             "n_samples": 100})
    tir = pd.DataFrame(rows)
    write("tir", tir)
    write("hopkins", tir.assign(experiment="hopkins", sequence="1R2RC"))
    rows = [{"experiment": "synthetic_intersection", "method": m, "trial": 0, "seed": 0,
             "error_pct": float(t), "failed": False, "time_representation_s": 0.1,
             "time_fit_s": 0.1, "failure": "", "intersection_dim": t}
            for m in ("ssc", "kssc") for t in range(11)]
    write("synthetic_intersection", pd.DataFrame(rows))
    rows = [{"experiment": "tir_large", "method": m, "trial": 0, "seed": 0, "error_pct": 1.0,
             "failed": False, "time_representation_s": n / 1000, "time_fit_s": n / 500,
             "failure": "", "n_per_subspace": n}
            for m in ("kssc", "tsc", "sssc") for n in (100, 200, 1100)]
    write("tir_large", pd.DataFrame(rows))
    rows = [{"experiment": "yale", "method": m, "trial": t, "seed": t, "error_pct": e + t,
             "failed": False, "time_representation_s": 1.0, "time_fit_s": 2.0, "failure": "",
             "variant": v} for v in ("faithful", "clean")
            for m, e in (("ssc", 30.0), ("kssc", 20.0)) for t in range(3)]
    write("yale", pd.DataFrame(rows))


def test_figures_from_fixture_csv(tmp_path):
    fixture_results(tmp_path / "results")
    drawn = plot.plot_all(tmp_path / "results", tmp_path / "figures")
    assert set(drawn) == {"tir_results", "tir_results2", "tir_motion_time",
                          "synthetic_intersection", "large_results"}
    for figure in drawn:
        assert (tmp_path / "figures" / f"{figure}.png").stat().st_size > 0
        assert (tmp_path / "figures" / f"{figure}.pdf").exists()


@pytest.mark.e2e  # every figure drawn twice
def test_redrawn_figures_and_report_are_byte_identical(tmp_path):
    # Issue 14.6: PDFs used to carry their creation date and REPORT.md its generation time.
    fixture_results(tmp_path / "results")
    first = {}
    for round_ in range(2):
        plot.plot_all(tmp_path / "results", tmp_path / "figures", only=["synthetic_intersection"])
        report.write_report(tmp_path / "results")
        files = [*(tmp_path / "figures").iterdir(), tmp_path / "results" / "REPORT.md"]
        contents = {path.name: path.read_bytes() for path in files}
        if round_ == 0:
            first = contents
            import time

            time.sleep(1.1)  # a date with seconds would differ
    assert contents == first
    assert b"CreationDate" not in contents["synthetic_intersection.pdf"]


def test_plot_and_report_import_no_experiment_module():
    code = ("import sys; import experiments.plot, experiments.report; "
            "print(sorted(m for m in sys.modules if m.startswith('experiments.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=REPO_ROOT).stdout
    # experiments._executed is the execution record (stdlib only): _io reads package versions
    # through it; it runs no experiment.
    allowed = {"experiments._io", "experiments._checkout", "experiments.claims",
               "experiments._format", "experiments._executed",
               "experiments.conventions", "experiments._bootstrap", "experiments.plot",
               "experiments.report",
               "experiments.publish", "experiments.publish.feeds",
               "experiments.publish.markdown", "experiments.publish.tables",
               "experiments.publish.crosscheck_section", "experiments.publish.faces",
               "experiments.publish.reconcile"}
    assert set(eval(out)) <= allowed, out


def test_every_declared_figure_and_claim_names_a_known_kind_and_rule():
    from experiments import claims

    figures = feeds.figures()
    assert {"requirements", "tir_results", "tir_motion_time", "scale"} <= set(figures)
    assert [p["experiment"] for p in figures["tir_motion_time"]] == ["tir", "hopkins"]
    for panels in figures.values():
        assert all(panel["kind"] in plot.KINDS for panel in panels)
    for _, declared in feeds.declared():
        assert all(claim["rule"] in claims.RULES for claim in declared.get("claims", []))


def test_report_from_fixture_csv(tmp_path):
    fixture_results(tmp_path / "results")
    text = report.write_report(tmp_path / "results")
    assert (tmp_path / "results" / "REPORT.md").read_text() == text
    assert "kSSC" in text and "TIR" in text
    tir = text.split("## Figure:tir_results (TIR)")[1].split("\n## ")[0]
    assert tir.count("- Claim:") == 2 and "Not run." not in tir
    faces = text.split("## Table:face_results")[1].split("\n## ")[0]
    assert "### variant `faithful`" in faces and "### variant `clean`" in faces
    assert "| kSSC | 3 | 0 | 21 | 22.30 |" in faces  # ours beside the paper's
    # Three draws per variant: fewer than claims.MIN_UNITS, so no verdict, saying why.
    assert faces.count("only 3 independent trial(s)") == 2
    assert faces.count("-> **inconclusive**") == 2
    synthetic = text.split("## Figure:synthetic_dvsn")[1].split("\n## ")[0]
    assert synthetic.strip().endswith("Not run.")


@pytest.mark.e2e
def test_command_line_writes_into_the_hydra_run_folder(tmp_path):
    # Issue 14.1: a run by hand used to overwrite the committed results/.
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "experiments" / "run.py"), "experiment=complexity",
         "profile=smoke", "experiment.bytes_per_float=4"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    [run_dir] = (tmp_path / "outputs" / "hydra").iterdir()
    assert {p.name for p in tmp_path.iterdir()} == {"outputs"}
    frame = pd.read_csv(run_dir / "complexity.csv")
    assert (run_dir / "complexity_table.csv").exists()
    assert (frame["experiment_bytes_per_float"] == 4).all()  # an override is a column


@pytest.mark.e2e
def test_every_multirun_job_has_its_own_folder_and_column(tmp_path):
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "experiments" / "run.py"), "-m", "experiment=complexity",
         "profile=smoke", "experiment.ambient_dim=100,200"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    frames = [pd.read_csv(path)
              for path in sorted(tmp_path.glob("outputs/hydra/multirun/*/*/complexity.csv"))]
    assert [sorted(set(f["experiment_ambient_dim"])) for f in frames] == [[100], [200]]
    assert [sorted(set(f["ambient_dim"])) for f in frames] == [[100], [200]]
