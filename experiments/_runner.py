"""The trial loop: runs the experiment a config names and writes its results.

`run` checks the config (`_config.check_config`) and the experiment's own values, locks
the results folder for this experiment, resumes an interrupted run from its checkpoint,
runs the tasks the experiment module declares (`_trial.Experiment`) serially or in parallel
with joblib, and writes the CSV, the summary table and the sidecar (with the fingerprint
`suite.py` compares) atomically. This module imports the experiment modules; they import
only `_trial` (and the small modules it uses), never this one.
"""

import importlib
import json
import os
import sys
import time

import pandas as pd
from joblib import Parallel, delayed, effective_n_jobs
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from kssc.coding.representation import numba_threads

from . import _executed, _io
from ._checkout import REPO_ROOT
from ._config import check_config, config_as_dict, data_dir, results_dir_of
from ._fingerprint import fingerprint
from ._trial import exit_with_parent, preflight, trial_seed

COMMITTED_RESULTS = REPO_ROOT / "results"
# Columns every trial row carries, in this order (the experiment adds its own fields).
ROW_COLUMNS = {
    "experiment": "string", "method": "string", "trial": "int64", "seed": "int64",
    "error_pct": "float64", "failed": "bool", "time_representation_s": "float64",
    "time_fit_s": "float64", "failure": "string", "warnings": "string",
}


def load(name):
    """The declaration of experiment `name` (its module's EXPERIMENT)."""
    return importlib.import_module(f"experiments.{name}").EXPERIMENT


def _task_key(cell, trial):
    return json.dumps([cell, trial], sort_keys=True, default=str)


def _run_task(trial_fn, context, cell, trial, blas_threads, parent_pid):
    exit_with_parent(parent_pid)
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


def _run_traced_task(*args):
    """`_run_task` under the tracer (also in a joblib worker): (key, rows, execution record)."""
    with _executed.tracing() as trace:
        key, rows = _run_task(*args)
    return key, rows, _executed.record(trace)


def experiment_context(conf, folder):
    """What a trial function needs, as plain (picklable) Python objects."""
    return {
        "experiment": conf["experiment"],
        "methods": conf.get("methods") or {},
        "seed": conf["seed"],
        "data_dir": folder,
    }


def run(cfg, *, on_trial=None):
    """Run the experiment a composed config names; write its CSV, table and sidecar.

    on_trial: optional callable (n_done) called after each finished task (tests use it to
    simulate a kill). Returns the trial rows as a DataFrame.
    """
    conf = config_as_dict(check_config(cfg))
    return run_experiment(conf, load(conf["experiment"]["name"]), on_trial=on_trial)


def run_experiment(conf, declared, *, on_trial=None, committed=False):
    """`run` for a config `check_config` passed and a declaration: checks the experiment's
    own values (`declared.check`), then runs it. The fingerprint and the data folder are
    computed once here and handed down. committed: the suite's flag that lets a run write
    into the committed results/ (any other run is refused there)."""
    conf = config_as_dict(conf)
    name = conf["experiment"]["name"]
    results = results_dir_of(conf)
    if not committed and results.resolve() == COMMITTED_RESULTS.resolve():
        raise ValueError(f"{name}: results_dir {str(results)!r} is the committed results/ "
                         "folder, which only the suite writes (python -m experiments.suite "
                         "--only NAME [--force]); give this run another results_dir= (or "
                         "hydra.run.dir=).")
    if declared.check is not None:
        declared.check(conf["experiment"])
    columns = conf.get("columns") or {}
    _refuse_clashes(columns, ROW_COLUMNS)
    current = fingerprint(conf)
    folder = str(data_dir(conf.get("data_dir")))
    with _io.results_lock(results, name):
        _io.remove_stale_temporaries(results, name)
        started, clock = _io.now(), time.perf_counter()
        extra = {}
        if declared.compute is not None:
            with _executed.tracing() as trace:
                frame = declared.compute(conf["experiment"], folder)
            extra = {"executed": _executed.record(trace)}
            frame.insert(0, "experiment", name)
        else:
            tasks = declared.tasks(conf["experiment"], folder)
            _refuse_clashes(columns, {key for cell, _ in tasks for key in cell})
            frame, extra = _run_trials(conf, tasks, declared, on_trial,
                                       fingerprint=current, folder=folder)
        _refuse_clashes(columns, frame.columns)
        for column, value in columns.items():
            frame[column] = value if not isinstance(value, (list, dict)) else json.dumps(value)
        _io.write_csv(frame, results / f"{name}.csv")
        if declared.summary is not None:
            with _executed.tracing() as trace:
                table = declared.summary(frame, conf["experiment"])
            _io.write_csv(table, results / f"{name}_table.csv")
            extra["summary_executed"] = _executed.record(trace)
        _io.write_meta(conf, results / f"{name}.meta.json", fingerprint=current,
                       started=started, wall_time=time.perf_counter() - clock,
                       extra={"n_rows": len(frame), **extra})
        (results / ".partial" / f"{name}.jsonl").unlink(missing_ok=True)
    return frame


def discard_message(discarded, fingerprint):
    """Why an interrupted run's checkpoint was discarded: restart=true, or which part of the
    fingerprint (`<config hash>-<code hash>`, `_fingerprint.fingerprint`) changed."""
    lost = (f"discarded the checkpoint of an interrupted run ({discarded['n_tasks']} finished "
            "task(s))")
    if discarded["hash"] is None:
        return f"{lost}: restart=true."
    before, now = discarded["hash"].split("-", 1), fingerprint.split("-", 1)
    changed = [part for part, old, new in zip(("config", "code"), before, now, strict=False)
               if old != new] if len(before) == len(now) == 2 else []
    what = " and ".join(changed) or "fingerprint"
    return (f"{lost}: the {what} changed since it was written (fingerprint {discarded['hash']} "
            f"-> {fingerprint}); the run starts over.")


def _refuse_clashes(columns, result_columns):
    """ValueError when a constant column (`columns`: the command line's overrides) would
    overwrite a result column (a trial's seed, a cell's value, ...)."""
    clash = sorted(set(columns) & set(result_columns))
    if clash:
        raise ValueError(f"columns {clash} would overwrite the result column(s) of the same "
                         "name; give them other names (run.py names an override that collides "
                         "`config_<name>`).")


def _run_trials(conf, tasks, declared, on_trial, *, fingerprint, folder):
    """Every (cell, trial) task not yet in the checkpoint, then all rows in task order; the
    pre-flight's tasks (`_preflight_tasks`) first, serially, stopping on a refused
    parameter."""
    trial_fn = declared.trial
    name = conf["experiment"]["name"]
    results = results_dir_of(conf)
    context = experiment_context(conf, folder)
    # Keyed by the fingerprint, config and code: trials computed by other code never mix in.
    checkpoint = _io.Checkpoint(results / ".partial" / f"{name}.jsonl", fingerprint,
                                restart=bool(conf.get("restart")))
    if checkpoint.discarded is not None:
        print(f"{name}: {discard_message(checkpoint.discarded, fingerprint)}", file=sys.stderr,
              flush=True)
    keys = [_task_key(cell, trial) for cell, trial in tasks]
    if len(set(keys)) != len(keys):
        raise ValueError(f"{name}: duplicate (cell, trial) tasks in the grid.")
    todo = [(cell, trial) for (cell, trial), key in zip(tasks, keys, strict=True)
            if key not in checkpoint.done]
    n_jobs = conf["experiment"].get("n_jobs", conf["n_jobs"])
    n_workers = min(effective_n_jobs(n_jobs), max(len(todo), 1))
    blas_threads = None if n_workers == 1 else max(1, (os.cpu_count() or 1) // n_workers)
    resumed = len(tasks) - len(todo)
    first = _preflight_tasks(trial_fn, context, todo) if declared.preflight else []
    try:
        for done, (cell, trial) in enumerate(first, start=1):
            try:
                with preflight():
                    key, rows, record = _run_traced_task(trial_fn, context, cell, trial,
                                                         blas_threads, os.getpid())
            except ValueError as exc:
                raise ValueError(f"{name}: {exc} (cell {cell}, trial {trial}: the smallest "
                                 "data set this method gets); the run stops here.") from exc
            checkpoint.add(key, rows, record)
            if on_trial is not None:
                on_trial(done)
        todo = [task for task in todo if task not in first]
        with tqdm(total=len(tasks), initial=resumed, desc=name, unit="trial",
                  dynamic_ncols=True) as bar:
            if n_workers == 1:
                done_tasks = (_run_traced_task(trial_fn, context, cell, trial, None, os.getpid())
                              for cell, trial in todo)
            else:
                done_tasks = Parallel(n_jobs=n_workers, return_as="generator_unordered")(
                    delayed(_run_traced_task)(trial_fn, context, cell, trial, blas_threads,
                                              os.getpid())
                    for cell, trial in todo)
            bar.update(len(first))
            for done, (key, rows, record) in enumerate(done_tasks, start=len(first) + 1):
                checkpoint.add(key, rows, record)
                bar.update(1)
                if on_trial is not None:
                    on_trial(done)
    finally:
        checkpoint.close()
    frame = tidy_frame([row for key in keys for row in checkpoint.done[key]])
    executed = _executed.merge(*(checkpoint.executed.get(key) for key in keys))
    return frame, {"n_tasks": len(tasks), "n_tasks_resumed": resumed, "n_jobs": n_workers,
                   "executed": executed}


def _preflight_tasks(trial_fn, context, todo):
    """For each method, the task giving it the fewest points: each cell's first task run with
    fits recorded, not run (`_trial.preflight`; the data are drawn, nothing is fitted).
    Running these tasks first, with estimator errors stopping the run, checks every
    parameter value (those only `fit` refuses, e.g. n_neighbors >= n_samples, included)
    before any other trial."""
    smallest, cells = {}, set()
    for cell, trial in todo:
        cell_key = json.dumps(cell, sort_keys=True, default=str)
        if cell_key in cells:
            continue
        cells.add(cell_key)
        with preflight(probe=True) as record:
            trial_fn(context, cell, trial, trial_seed(context["seed"], cell, trial))
        for method, n_samples in record:
            if method not in smallest or n_samples < smallest[method][0]:
                smallest[method] = (n_samples, cell, trial)
    return list({_task_key(cell, trial): (cell, trial)
                 for _, cell, trial in smallest.values()}.values())


def tidy_frame(rows):
    """DataFrame of trial rows with the shared columns first and fixed dtypes."""
    frame = pd.DataFrame(rows)
    for column, dtype in ROW_COLUMNS.items():
        if column not in frame:
            frame[column] = pd.Series(dtype=dtype)
    frame[["failure", "warnings"]] = frame[["failure", "warnings"]].fillna("")
    frame = frame.astype({"trial": "int64", "seed": "int64", "error_pct": "float64",
                          "failed": "bool", "time_representation_s": "float64",
                          "time_fit_s": "float64"})
    first = [c for c in ROW_COLUMNS if c in frame]
    return frame[first + [c for c in frame.columns if c not in first]]
