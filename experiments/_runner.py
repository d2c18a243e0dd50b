"""The machinery every experiment shares: declarations, config checks, seeding, the trial loop,
fitting, the summary table and the sidecar with its fingerprint.

An experiment is a config `conf/experiment/<name>.yaml` and a module `experiments/<name>.py`
whose `EXPERIMENT` declares what it computes:

- `tasks(exp, data_dir) -> [(cell, trial), ...]` and a module-level
  `trial(context, cell, trial, seed) -> [row, ...]` that draws the data once and fits every
  method on it (`fit_methods`); or, for an experiment without trials,
  `compute(exp, data_dir) -> DataFrame`;
- `summary(frame, exp) -> DataFrame`: the rows of `<name>_table.csv` (`summarise_by` gives
  the usual one: error and time statistics per grid cell and method);
- `check(exp)`: optional checks of its own config values (ValueError naming the value).

The figures and claims an experiment feeds are data in its config (`feeds:`), read by
`plot.py` and `report.py` without importing any experiment module. `run` does the rest: it
validates the config and every method's parameters before the first trial, locks the
results folder for this experiment, resumes an interrupted run from its checkpoint, runs
the trials serially or in parallel with joblib, and writes the CSV, the summary table and
the sidecar (with the fingerprint `suite.py` compares) atomically.
"""

import dataclasses
import hashlib
import importlib
import inspect
import json
import os
import threading
import time
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
from hydra.utils import get_object, instantiate
from joblib import Parallel, delayed, effective_n_jobs
from omegaconf import DictConfig, OmegaConf
from sklearn.utils._param_validation import InvalidParameterError
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from kssc.metrics import clustering_error

from . import _io
from ._bootstrap import interval_columns
from ._fingerprint import fingerprint
from .conventions import paper_time

CONF_DIR = _io.REPO_ROOT / "conf"
# Columns every trial row carries, in this order (the experiment adds its own fields).
ROW_COLUMNS = {
    "experiment": "string", "method": "string", "trial": "int64", "seed": "int64",
    "error_pct": "float64", "failed": "bool", "time_representation_s": "float64",
    "time_fit_s": "float64", "failure": "string",
}
STAGES = ("neighbours", "coefficients", "spectral")


@dataclasses.dataclass(frozen=True)
class Experiment:
    """What an experiment module declares (see the module docstring)."""

    tasks: Callable | None = None
    trial: Callable | None = None
    compute: Callable | None = None
    summary: Callable | None = None
    check: Callable | None = None

    def __post_init__(self):
        if (self.compute is None) == (self.tasks is None or self.trial is None):
            raise TypeError("An experiment declares either tasks and trial, or compute.")


def experiment_names():
    """Every experiment: the configs in conf/experiment/."""
    return sorted(path.stem for path in (CONF_DIR / "experiment").glob("*.yaml"))


def load(name):
    """The declaration of experiment `name` (its module's EXPERIMENT)."""
    return importlib.import_module(f"experiments.{name}").EXPERIMENT


# --------------------------------------------------------------------------- config checks

def check_config(cfg):
    """Check a composed config; raise ValueError naming the offending value.

    Catches an unknown experiment, a bad trial count or n_jobs, a method whose `_target_`
    cannot be imported, that is given parameters its estimator lacks, or whose values the
    estimator's own parameter validation refuses.
    """
    name = OmegaConf.select(cfg, "experiment.name")
    names = experiment_names()
    if name is None:
        raise ValueError(f"No experiment chosen: pass experiment=NAME with NAME one of {names}.")
    if name not in names:
        raise ValueError(f"Unknown experiment {name!r}; choose one of {names}.")
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
        raise ValueError(
            f"Unknown method {name!r}: cannot import _target_={target!r} ({exc}).") from exc
    accepted = inspect.signature(cls).parameters
    unknown = [key for key in node if not key.startswith("_") and key not in accepted]
    if unknown:
        raise ValueError(f"Method {name!r} ({target}) has no parameter(s) {unknown}.")
    estimator = instantiate(node, _convert_="all")
    if hasattr(estimator, "_validate_params"):
        try:
            estimator._validate_params()
        except InvalidParameterError as exc:
            raise ValueError(f"Method {name!r} ({target}): {exc}") from exc


def config_as_dict(cfg):
    """A composed config as plain Python (resolved); a dict is returned as it is."""
    return cfg if isinstance(cfg, dict) else OmegaConf.to_container(cfg, resolve=True)


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


def round_half_up(x):
    """MATLAB's round (half away from zero) for non-negative x; Python's round is banker's."""
    return int(np.floor(x + 0.5))


# --------------------------------------------------------------------------- fitting

def accepts(method_cfg, parameter):
    """Whether the estimator named by a method config takes `parameter` in __init__."""
    return parameter in inspect.signature(get_object(method_cfg["_target_"])).parameters


def fit_method(name, method_cfg, X, y, *, n_clusters, random_state, scorers=None, **params):
    """Fit one method on X and score it against y.

    A fit that fails is a row with `failed` set and NaN scores (never 0 or 100 %), except
    an invalid parameter, which is a configuration error: it stops the run with the message.
    scorers: optional {column: function(y_true, labels)} scored besides `error_pct`.
    """
    conf = dict(method_cfg)
    conf.update(params)
    if accepts(conf, "random_state"):
        conf["random_state"] = random_state
    if accepts(conf, "n_clusters"):
        conf["n_clusters"] = n_clusters
    row = {"method": name, "error_pct": np.nan, "failed": False, "failure": "",
           "time_representation_s": np.nan, "time_fit_s": np.nan}
    row.update(dict.fromkeys(scorers or {}, np.nan))
    start = time.perf_counter()
    try:
        estimator = instantiate(conf, _convert_="all")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            estimator.fit(X)
        row["time_fit_s"] = time.perf_counter() - start
        labels = estimator.labels_
        if labels is None or np.any(np.asarray(labels) < 0):
            raise RuntimeError("no labels (or noise labels) returned")
        row["error_pct"] = clustering_error(y, labels)
        for column, score in (scorers or {}).items():
            row[column] = float(score(y, labels))
        timings = getattr(estimator, "timings_", {}) or {}
        row["time_representation_s"] = timings.get("representation", np.nan)
        for stage in STAGES:
            row[f"time_{stage}_s"] = timings.get(stage, np.nan)
    except InvalidParameterError as exc:
        raise ValueError(f"Method {name!r} refused its parameters {params or ''}: {exc}") from exc
    except Exception as exc:  # a failed run is data: counted, reported
        row["time_fit_s"] = time.perf_counter() - start
        row["failed"] = True
        row["failure"] = f"{type(exc).__name__}: {exc}"[:300]
    return row


def fit_methods(context, X, y, seed, *, params=None, skip=(), scorers=None):
    """Fit every configured method (in config order) on the same data.

    params: {method: {parameter: value}} set for this trial only (e.g. a cell's k);
    skip: methods not run on this trial; scorers: as in `fit_method`.
    """
    n_clusters = len(np.unique(y))
    rows = []
    for name, method_cfg in context["methods"].items():
        if name in skip:
            continue
        extra = (params or {}).get(name, {})
        rows.append(fit_method(name, method_cfg, X, y, n_clusters=n_clusters,
                               random_state=method_seed(seed), scorers=scorers, **extra))
    return rows


WARM_UP_POINTS = 60


def warm_up(name, method_cfg, X, y, **params):
    """One untimed fit on a small slice: imports, caches and worker pools get started."""
    take = slice(0, len(y), max(1, len(y) // WARM_UP_POINTS))
    fit_method(name, method_cfg, X[take], y[take], n_clusters=len(set(y[take])), random_state=0,
               **params)


# --------------------------------------------------------------------------- summary

def summarise_by(*cells, scores=()):
    """A `summary` giving, per grid cell and method: trials, failures, error statistics (std
    with N - 1, as MATLAB), mean and median times (`time_paper_s`: the paper's convention,
    `conventions.paper_time`), the mean PSNR of a cell, and mean and std of `scores`; the
    error's and each score's 95 % bootstrap interval over the cell's tasks (one seed each: a
    trial, or a sequence and trial) and the paired difference to SSC on the same tasks
    (`_bootstrap.interval_columns`)."""

    def summary(frame, exp=None):
        frame = frame.assign(time_paper_s=paper_time(frame))
        keys = [*cells, "method"]
        grouped = frame.groupby(keys, sort=False)
        table = grouped.agg(n_trials=("trial", "size"), n_failed=("failed", "sum"),
                            error_pct_mean=("error_pct", "mean"),
                            error_pct_median=("error_pct", "median"),
                            error_pct_min=("error_pct", "min"), error_pct_max=("error_pct", "max"),
                            error_pct_std=("error_pct", lambda e: e.std(ddof=1)))
        for column in ("time_paper_s", "time_fit_s", "time_representation_s"):
            table[f"{column}_mean"] = grouped[column].mean()
            table[f"{column}_median"] = grouped[column].median()
        for column in [c for c in frame.columns if c.startswith("psnr_")]:
            table[f"{column}_mean"] = grouped[column].mean()
        for column in scores:
            table[f"{column}_mean"] = grouped[column].mean()
            table[f"{column}_std"] = grouped[column].std(ddof=1)
        table["n_failed"] = table["n_failed"].astype(int)
        for column in ("error_pct", *scores):
            intervals = interval_columns(frame, keys, column, unit="seed")
            if column != "error_pct":
                intervals = intervals.drop(columns="paired_with")
            table = table.join(intervals)
        return table.reset_index()

    return summary


# --------------------------------------------------------------------------- the loop

def _task_key(cell, trial):
    return json.dumps([cell, trial], sort_keys=True, default=str)


_watched_parent = None


def _exit_with_parent(parent_pid):
    """In a worker process: exit as soon as the run that started it is gone (even killed
    with SIGKILL, which gives joblib no chance to stop its workers)."""
    global _watched_parent
    if os.getpid() == parent_pid or _watched_parent == parent_pid:
        return
    _watched_parent = parent_pid

    def watch():
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


@contextmanager
def numba_threads(n_threads):
    """At most `n_threads` threads for numba's compiled kernels (the coefficient step) in this
    thread: threadpoolctl limits BLAS only, and trial workers in parallel must not each
    start one thread per core."""
    import numba

    previous = numba.get_num_threads()
    numba.set_num_threads(min(n_threads, numba.config.NUMBA_NUM_THREADS))
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def _run_task(trial_fn, context, cell, trial, blas_threads, parent_pid):
    _exit_with_parent(parent_pid)
    seed = trial_seed(context["seed"], cell, trial)
    if blas_threads is None:
        rows = trial_fn(context, cell, trial, seed)
    else:
        with threadpool_limits(limits=blas_threads), numba_threads(blas_threads):
            rows = trial_fn(context, cell, trial, seed)
    out = []
    for row in rows:
        full = {"experiment": context["experiment"]["name"], **cell, "trial": trial, "seed": seed}
        full.update(row)
        out.append(full)
    return _task_key(cell, trial), out


def experiment_context(conf):
    """What a trial function needs, as plain (picklable) Python objects."""
    return {
        "experiment": conf["experiment"],
        "methods": conf.get("methods") or {},
        "seed": conf["seed"],
        "data_dir": str(data_dir(conf.get("data_dir"))),
    }


def data_dir(path=None):
    """The data folder: the argument, else $KSSC_DATA_DIR, else data/ at the repository root."""
    from kssc.datasets import get_data_dir

    return get_data_dir(path)


def results_dir_of(conf):
    """The results folder a config names; a run always names one (run.py gives Hydra's run
    folder when the command line does not), so that nothing writes into results/ by default."""
    folder = conf.get("results_dir")
    if not folder:
        raise ValueError("results_dir is not set: pass results_dir=FOLDER "
                         "(python experiments/run.py sets it to Hydra's run folder).")
    return Path(folder)


def run(cfg, *, on_trial=None):
    """Run the experiment a composed config names; write its CSV, table and sidecar.

    on_trial: optional callable (n_done) called after each finished task (tests use it to
    simulate a kill). Returns the trial rows as a DataFrame.
    """
    cfg = check_config(cfg)
    conf = config_as_dict(cfg)
    declared = load(conf["experiment"]["name"])
    if declared.check is not None:
        declared.check(conf["experiment"])
    return run_experiment(conf, declared, on_trial=on_trial)


def run_experiment(conf, declared, *, on_trial=None):
    """`run` for an already checked config (a dict) and a declaration."""
    conf = config_as_dict(conf)
    name = conf["experiment"]["name"]
    results = results_dir_of(conf)
    current = fingerprint(conf)
    with _io.results_lock(results, name):
        _io.remove_stale_temporaries(results, name)
        started, clock = _io.now(), time.perf_counter()
        folder = str(data_dir(conf.get("data_dir")))
        extra = {}
        if declared.compute is not None:
            frame = declared.compute(conf["experiment"], folder)
            frame.insert(0, "experiment", name)
        else:
            tasks = declared.tasks(conf["experiment"], folder)
            frame, extra = _run_trials(conf, tasks, declared.trial, on_trial)
        for column, value in (conf.get("columns") or {}).items():
            frame[column] = value if not isinstance(value, (list, dict)) else json.dumps(value)
        _io.write_csv(frame, results / f"{name}.csv")
        if declared.summary is not None:
            _io.write_csv(declared.summary(frame, conf["experiment"]),
                          results / f"{name}_table.csv")
        _io.write_meta(conf, results / f"{name}.meta.json", fingerprint=current,
                       started=started, wall_time=time.perf_counter() - clock,
                       extra={"n_rows": len(frame), **extra})
        (results / ".partial" / f"{name}.jsonl").unlink(missing_ok=True)
    return frame


def _run_trials(conf, tasks, trial_fn, on_trial):
    """Every (cell, trial) task not yet in the checkpoint, then all rows in task order."""
    name = conf["experiment"]["name"]
    results = results_dir_of(conf)
    context = experiment_context(conf)
    # Keyed by the fingerprint, config and code: trials computed by other code never mix in.
    checkpoint = _io.Checkpoint(results / ".partial" / f"{name}.jsonl", fingerprint(conf),
                                restart=bool(conf.get("restart")))
    keys = [_task_key(cell, trial) for cell, trial in tasks]
    if len(set(keys)) != len(keys):
        raise ValueError(f"{name}: duplicate (cell, trial) tasks in the grid.")
    todo = [(cell, trial) for (cell, trial), key in zip(tasks, keys, strict=True)
            if key not in checkpoint.done]
    n_jobs = conf["experiment"].get("n_jobs", conf["n_jobs"])
    n_workers = min(effective_n_jobs(n_jobs), max(len(todo), 1))
    blas_threads = None if n_workers == 1 else max(1, (os.cpu_count() or 1) // n_workers)
    resumed = len(tasks) - len(todo)
    try:
        with tqdm(total=len(tasks), initial=resumed, desc=name, unit="trial",
                  dynamic_ncols=True) as bar:
            if n_workers == 1:
                done_tasks = (_run_task(trial_fn, context, cell, trial, None, os.getpid())
                              for cell, trial in todo)
            else:
                done_tasks = Parallel(n_jobs=n_workers, return_as="generator_unordered")(
                    delayed(_run_task)(trial_fn, context, cell, trial, blas_threads, os.getpid())
                    for cell, trial in todo)
            for done, (key, rows) in enumerate(done_tasks, start=1):
                checkpoint.add(key, rows)
                bar.update(1)
                if on_trial is not None:
                    on_trial(done)
    finally:
        checkpoint.close()
    frame = tidy_frame([row for key in keys for row in checkpoint.done[key]])
    return frame, {"n_tasks": len(tasks), "n_tasks_resumed": resumed, "n_jobs": n_workers}


def tidy_frame(rows):
    """DataFrame of trial rows with the shared columns first and fixed dtypes."""
    frame = pd.DataFrame(rows)
    for column, dtype in ROW_COLUMNS.items():
        if column not in frame:
            frame[column] = pd.Series(dtype=dtype)
    frame["failure"] = frame["failure"].fillna("")
    frame = frame.astype({"trial": "int64", "seed": "int64", "error_pct": "float64",
                          "failed": "bool", "time_representation_s": "float64",
                          "time_fit_s": "float64"})
    first = [c for c in ROW_COLUMNS if c in frame]
    return frame[first + [c for c in frame.columns if c not in first]]
