"""What an experiment module imports: its declaration (`Experiment`), the seeds of a trial,
fitting every configured method on one data set, and the usual summary table.

An experiment is a config `conf/experiment/<name>.yaml` and a module `experiments/<name>.py`
whose `EXPERIMENT` declares what it computes:

- `tasks(exp, data_dir) -> [(cell, trial), ...]` and a module-level
  `trial(context, cell, trial, seed) -> [row, ...]` that draws the data once and fits every
  method on it (`fit_methods`); or, for an experiment without trials,
  `compute(exp, data_dir) -> DataFrame`;
- `summary(frame, exp) -> DataFrame`: the rows of `<name>_table.csv` (`summarise_by` gives
  the usual one: error and time statistics per grid cell and method);
- `check(exp)`: optional checks of its own config values (ValueError naming the value);
- `preflight`: False when its trials fit outside this process (the runner's pre-flight,
  which runs every cell's data with fits recorded, not run, would run them).

The figures and claims an experiment feeds are data in its config (`feeds:`). The loop that
runs the tasks is `_runner.py`, which imports the experiment modules; they never import it.
"""

import contextvars
import dataclasses
import hashlib
import inspect
import json
import os
import threading
import time
import warnings
from collections.abc import Callable
from contextlib import contextmanager

import numpy as np
from hydra.utils import get_object, instantiate
from sklearn.utils._param_validation import InvalidParameterError

from kssc.metrics import clustering_error

from ._bootstrap import interval_columns
from .conventions import paper_time

STAGES = ("neighbours", "coefficients", "spectral")


@dataclasses.dataclass(frozen=True)
class Experiment:
    """What an experiment module declares (see the module docstring)."""

    tasks: Callable | None = None
    trial: Callable | None = None
    compute: Callable | None = None
    summary: Callable | None = None
    check: Callable | None = None
    preflight: bool = True

    def __post_init__(self):
        if (self.compute is None) == (self.tasks is None or self.trial is None):
            raise TypeError("An experiment declares either tasks and trial, or compute.")



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
    The warnings the fit raised are the row's `warnings` (`warning_summary`).
    scorers: optional {column: function(y_true, labels)} scored besides `error_pct`.

    In the runner's pre-flight (`preflight`) the fit is either not run but recorded
    (probing), or a ValueError or TypeError the estimator raises stops the run (strict).
    """
    mode = _PREFLIGHT.get()
    if isinstance(mode, list):
        mode.append((name, len(X)))
        return _empty_row(name, scorers)
    return _fit(name, method_cfg, X, y, n_clusters=n_clusters, random_state=random_state,
                scorers=scorers, strict=mode is not None, **params)


def _empty_row(name, scorers):
    row = {"method": name, "error_pct": np.nan, "failed": False, "failure": "",
           "time_representation_s": np.nan, "time_fit_s": np.nan, "warnings": ""}
    row.update(dict.fromkeys(scorers or {}, np.nan))
    return row


def _fit(name, method_cfg, X, y, *, n_clusters, random_state, scorers=None, strict=False,
         **params):
    conf = dict(method_cfg)
    conf.update(params)
    if accepts(conf, "random_state"):
        conf["random_state"] = random_state
    if accepts(conf, "n_clusters"):
        conf["n_clusters"] = n_clusters
    row = _empty_row(name, scorers)
    caught = []
    start = time.perf_counter()
    try:
        estimator = instantiate(conf, _convert_="all")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
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
        if strict and isinstance(exc, (ValueError, TypeError)) and not isinstance(
                exc, np.linalg.LinAlgError):
            raise ValueError(f"Method {name!r} refused its parameters on {len(X)} points "
                             f"{params or ''}: {type(exc).__name__}: {exc}") from exc
        row["time_fit_s"] = time.perf_counter() - start
        row["failed"] = True
        row["failure"] = f"{type(exc).__name__}: {exc}"[:300]
    row["warnings"] = warning_summary(caught)
    return row


def warning_summary(caught):
    """The warnings a fit raised, one `Category: first line` each, duplicates dropped, joined
    by " | " ("" for none): so a degenerate or unconverged fit is visible in the CSV."""
    seen = dict.fromkeys(f"{w.category.__name__}: {str(w.message).splitlines()[0][:200]}"
                         for w in caught if str(w.message))
    return " | ".join(seen)[:1000]


# None outside the pre-flight; the probe's record list, or "strict" (see `preflight`).
_PREFLIGHT = contextvars.ContextVar("preflight", default=None)


@contextmanager
def preflight(*, probe=False):
    """The runner's check of a config before its first trial. With probe=True, no method is
    fitted: each `fit_method` call appends (method, n_samples) to the yielded list (the
    trial draws its data, fits nothing); else fits are real but a ValueError or TypeError
    from an estimator stops the run instead of becoming a failed row."""
    record = [] if probe else None
    token = _PREFLIGHT.set("strict" if record is None else record)
    try:
        yield record
    finally:
        _PREFLIGHT.reset(token)


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
    if isinstance(_PREFLIGHT.get(), list):  # probing: nothing is fitted
        return
    take = slice(0, len(y), max(1, len(y) // WARM_UP_POINTS))
    _fit(name, method_cfg, X[take], y[take], n_clusters=len(set(y[take])), random_state=0,
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


_watched_parent = None


def exit_with_parent(parent_pid):
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


