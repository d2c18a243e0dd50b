"""The machinery every experiment shares: config checks, seeding, the trial loop, fitting.

An experiment module lists its tasks (a cell of its grid plus a trial number) and a
top-level function `trial(context, cell, trial, seed) -> list of rows` that draws the data once
and fits every method on it. `run_experiment` does the rest: it skips tasks finished in an
earlier, interrupted run (checkpoint), runs the others serially or in parallel with
joblib, shows a progress bar, and writes the tidy CSV and its sidecar atomically.
"""

import hashlib
import inspect
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from hydra.utils import get_object, instantiate
from joblib import Parallel, delayed, effective_n_jobs
from omegaconf import DictConfig, OmegaConf
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from kssc.metrics import clustering_error

from . import _io

EXPERIMENTS = (
    "complexity", "yale_observation", "hopkins_observation", "runtime_n", "runtime_cores",
    "synthetic_dvsn", "synthetic_mv", "synthetic_intersection", "tir", "tir_large",
    "hopkins", "yale", "scale", "hopkins155", "yale_subjects",
)
# Columns every trial row carries (the experiment adds its own cell fields).
ROW_COLUMNS = {
    "experiment": "string", "method": "string", "trial": "int64", "seed": "int64",
    "error": "float64", "failed": "bool", "time_representation": "float64",
    "time_fit": "float64", "failure": "string",
}
# Keys that change how fast a run goes but not what it computes: left out of the
# checkpoint hash, so a resumed run may use another n_jobs.
_NON_RESULT_KEYS = ("n_jobs", "restart", "results_dir", "figures_dir")


def check_config(cfg):
    """Check a composed config; raise ValueError naming the offending value.

    Catches an unknown experiment, a bad trial count or n_jobs, and a method whose
    `_target_` cannot be imported or that is given parameters its estimator lacks.
    """
    name = OmegaConf.select(cfg, "experiment.name")
    if name is None:
        raise ValueError(f"No experiment chosen: pass experiment=NAME with NAME one of {EXPERIMENTS}.")
    if name not in EXPERIMENTS:
        raise ValueError(f"Unknown experiment {name!r}; choose one of {EXPERIMENTS}.")
    trials = OmegaConf.select(cfg, "experiment.trials")
    if trials is not None and (not isinstance(trials, int) or trials < 1):
        raise ValueError(f"experiment.trials must be a positive integer; got {trials!r}.")
    n_jobs = OmegaConf.select(cfg, "n_jobs")
    if not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"n_jobs must be a positive integer or -1 (all cores); got {n_jobs!r}.")
    for method, node in (OmegaConf.select(cfg, "methods") or {}).items():
        _check_method(method, node)
    return cfg


def _check_method(name, node):
    target = node.get("_target_") if isinstance(node, (dict, DictConfig)) else None
    if not target:
        raise ValueError(f"Unknown method {name!r}: its config has no _target_ ({node!r}).")
    try:
        cls = get_object(target)
    except Exception as exc:
        raise ValueError(f"Unknown method {name!r}: cannot import _target_={target!r} ({exc}).") from exc
    accepted = inspect.signature(cls).parameters
    unknown = [key for key in node if not key.startswith("_") and key not in accepted]
    if unknown:
        raise ValueError(f"Method {name!r} ({target}) has no parameter(s) {unknown}.")


def config_as_dict(cfg):
    return OmegaConf.to_container(cfg, resolve=True)


# --------------------------------------------------------------------------- seeding

def trial_seed(seed, cell, trial):
    """The seed of one trial: SeedSequence over (experiment seed, cell, trial).

    The cell enters through a hash of its parameter values, so a cell keeps its seeds when
    a profile shrinks or reorders the grid.
    """
    blob = json.dumps(cell, sort_keys=True, default=str).encode()
    cell_key = int.from_bytes(hashlib.sha256(blob).digest()[:8], "little")
    return int(np.random.SeedSequence([int(seed), cell_key, int(trial)]).generate_state(1)[0])


def data_seed(seed):
    """Seed for the data generator of a trial (independent of the estimators' seed)."""
    return int(np.random.SeedSequence([seed, 0]).generate_state(1)[0])


def method_seed(seed):
    """random_state handed to every estimator of a trial."""
    return int(np.random.SeedSequence([seed, 1]).generate_state(1)[0])


# --------------------------------------------------------------------------- fitting

def fit_method(name, method_cfg, X, y, *, n_clusters, random_state, **params):
    """Fit one method on X and score it against y. Failures become NaN rows, not 0 or 100%."""
    conf = dict(method_cfg)
    conf.update(params)
    if accepts(conf, "random_state"):
        conf["random_state"] = random_state
    if accepts(conf, "n_clusters"):
        conf["n_clusters"] = n_clusters
    row = {"method": name, "error": np.nan, "failed": False, "failure": "",
           "time_representation": np.nan, "time_fit": np.nan}
    start = time.perf_counter()
    try:
        estimator = instantiate(conf, _convert_="all")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            estimator.fit(X)
        row["time_fit"] = time.perf_counter() - start
        labels = estimator.labels_
        if labels is None or np.any(np.asarray(labels) < 0):
            raise RuntimeError("no labels (or noise labels) returned")
        row["error"] = clustering_error(y, labels)
        timings = getattr(estimator, "timings_", {}) or {}
        row["time_representation"] = timings.get("representation", np.nan)
        for stage in ("neighbours", "coefficients", "spectral"):
            row[f"time_{stage}"] = timings.get(stage, np.nan)
    except Exception as exc:  # a failed run is data: counted explicitly, reported by the report
        row["time_fit"] = time.perf_counter() - start
        row["failed"] = True
        row["failure"] = f"{type(exc).__name__}: {exc}"[:300]
    return row


def fit_methods(context, X, y, seed, *, params=None, skip=()):
    """Fit every configured method (in config order) on the same data.

    params: {method: {parameter: value}} set for this trial only (e.g. a cell's k);
    skip: methods not run on this trial.
    """
    n_clusters = len(np.unique(y))
    rows = []
    for name, method_cfg in context["methods"].items():
        if name in skip:
            continue
        extra = (params or {}).get(name, {})
        rows.append(fit_method(name, method_cfg, X, y, n_clusters=n_clusters,
                               random_state=method_seed(seed), **extra))
    return rows


# --------------------------------------------------------------------------- the loop

def round_half_up(x):
    """MATLAB's round (half away from zero) for non-negative x; Python's round is banker's."""
    return int(np.floor(x + 0.5))


def accepts(method_cfg, parameter):
    """Whether the estimator named by a method config takes `parameter` in __init__."""
    return parameter in inspect.signature(get_object(method_cfg["_target_"])).parameters


def _task_key(cell, trial):
    return json.dumps([cell, trial], sort_keys=True, default=str)


def _run_task(trial_fn, context, cell, trial, blas_threads):
    seed = trial_seed(context["seed"], cell, trial)
    if blas_threads is None:
        rows = trial_fn(context, cell, trial, seed)
    else:
        with threadpool_limits(limits=blas_threads):
            rows = trial_fn(context, cell, trial, seed)
    out = []
    for row in rows:
        full = {"experiment": context["experiment"]["name"], **cell, "trial": trial, "seed": seed}
        full.update(row)
        out.append(full)
    return _task_key(cell, trial), out


def _hash_config(conf):
    kept = {key: value for key, value in conf.items()
            if key not in _NON_RESULT_KEYS and key not in ("hydra", "profile")}
    kept["experiment"] = {k: v for k, v in conf["experiment"].items() if k not in _NON_RESULT_KEYS}
    return _io.config_hash(kept)


def experiment_context(cfg):
    """What a trial function needs, as plain (picklable) Python objects."""
    conf = config_as_dict(cfg)
    return {
        "experiment": conf["experiment"],
        "methods": conf.get("methods") or {},
        "seed": conf["seed"],
        "data_dir": str(data_dir(conf.get("data_dir"))),
    }


def data_dir(path=None):
    """The data folder: the argument, else $KSSC_DATA_DIR, else data/ at the repository root."""
    try:
        from kssc.datasets import get_data_dir
    except ImportError:
        return Path(path or os.environ.get("KSSC_DATA_DIR") or _io.REPO_ROOT / "data")
    return get_data_dir(path)


def run_experiment(cfg, tasks, trial_fn, *, aggregate=None, on_trial=None):
    """Run every (cell, trial) task not yet in the checkpoint; write the CSV and sidecar.

    tasks: list of (cell dict, trial index). trial_fn: a module-level function
    (context, cell, trial, seed) -> list of row dicts (one per method). aggregate: optional
    function (frame, cfg) -> {file name: DataFrame} of summary tables. on_trial: optional
    callable (n_done) called after each finished task (tests use it to simulate a kill).
    """
    cfg = check_config(cfg)
    conf = config_as_dict(cfg)
    name = conf["experiment"]["name"]
    results_dir = Path(conf["results_dir"])
    started, clock = _io.now(), time.perf_counter()
    context = experiment_context(cfg)
    checkpoint = _io.Checkpoint(results_dir / ".partial" / f"{name}.jsonl", _hash_config(conf),
                                restart=bool(conf.get("restart")))
    keys = [_task_key(cell, trial) for cell, trial in tasks]
    if len(set(keys)) != len(keys):
        raise ValueError(f"{name}: duplicate (cell, trial) tasks in the grid.")
    todo = [(cell, trial) for (cell, trial), key in zip(tasks, keys) if key not in checkpoint.done]
    n_jobs = conf["experiment"].get("n_jobs", conf["n_jobs"])
    n_workers = min(effective_n_jobs(n_jobs), max(len(todo), 1))
    blas_threads = None if n_workers == 1 else max(1, (os.cpu_count() or 1) // n_workers)
    resumed = len(tasks) - len(todo)
    try:
        with tqdm(total=len(tasks), initial=resumed, desc=name, unit="trial",
                  dynamic_ncols=True) as bar:
            if n_workers == 1:
                results = (_run_task(trial_fn, context, cell, trial, None) for cell, trial in todo)
            else:
                results = Parallel(n_jobs=n_workers, return_as="generator_unordered")(
                    delayed(_run_task)(trial_fn, context, cell, trial, blas_threads)
                    for cell, trial in todo)
            for done, (key, rows) in enumerate(results, start=1):
                checkpoint.add(key, rows)
                bar.update(1)
                if on_trial is not None:
                    on_trial(done)
    except BaseException:
        checkpoint.close()
        raise
    frame = tidy_frame([row for key in keys for row in checkpoint.done[key]])
    _io.write_csv(frame, results_dir / f"{name}.csv")
    for file_name, table in (aggregate(frame, cfg) if aggregate else {}).items():
        _io.write_csv(table, results_dir / file_name)
    _io.write_meta(conf, results_dir / f"{name}.meta.json", started=started,
                   wall_time=time.perf_counter() - clock,
                   extra={"n_tasks": len(tasks), "n_tasks_resumed": resumed, "n_jobs": n_workers})
    checkpoint.remove()
    return frame


def tidy_frame(rows):
    """DataFrame of trial rows with the shared columns first and fixed dtypes."""
    frame = pd.DataFrame(rows)
    for column, dtype in ROW_COLUMNS.items():
        if column not in frame:
            frame[column] = pd.Series(dtype=dtype)
    frame["failure"] = frame["failure"].fillna("")
    frame = frame.astype({"trial": "int64", "seed": "int64", "error": "float64",
                          "failed": "bool", "time_representation": "float64",
                          "time_fit": "float64"})
    first = [c for c in ROW_COLUMNS if c in frame]
    return frame[first + [c for c in frame.columns if c not in first]]


def write_simple(cfg, frame, tables=None, *, started, clock):
    """Write the CSV, summary tables and sidecar of an experiment without a trial loop.

    started/clock: `_io.now()` and `time.perf_counter()` taken when the computation began.
    """
    conf = config_as_dict(cfg)
    results_dir = Path(conf["results_dir"])
    name = conf["experiment"]["name"]
    _io.write_csv(frame, results_dir / f"{name}.csv")
    for file_name, table in (tables or {}).items():
        _io.write_csv(table, results_dir / file_name)
    _io.write_meta(conf, results_dir / f"{name}.meta.json", started=started,
                   wall_time=time.perf_counter() - clock)
    return frame
