"""A toy experiment for the runner's tests: a fast stand-in estimator and a declaration of six
small trials.

Not a test module and not a fixture: the runner imports these by name (a method's Hydra
`_target_`, the trial function a worker process unpickles, a subprocess's script), so they
live in an importable module. Tests take them through the fixtures of `conftest.py`
(`toy`, `toy_config`, `run_toy`); only the subprocess script imports this module.
"""

import os
import time
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans

from experiments import _config, _runner, _trial


class KMeansStandIn:
    """A fast stand-in estimator with the shared fit/labels_/timings_ contract."""

    def __init__(self, n_clusters=None, *, random_state=None):
        self.n_clusters = n_clusters
        self.random_state = random_state

    def fit(self, X):
        self.labels_ = KMeans(self.n_clusters, n_init=1,
                              random_state=self.random_state).fit_predict(X)
        self.timings_ = {"representation": 0.0, "spectral": 0.0}
        return self


class SlowStandIn(KMeansStandIn):
    """Records its process id in $KSSC_TEST_PID_DIR, then sleeps: a fit that outlives a
    killed run."""

    def fit(self, X):
        Path(os.environ["KSSC_TEST_PID_DIR"], str(os.getpid())).touch()
        time.sleep(60)
        return super().fit(X)


STAND_IN = f"{__name__}.KMeansStandIn"
SLOW_STAND_IN = f"{__name__}.SlowStandIn"
TOY_OVERRIDES = ("experiment=synthetic_intersection", "profile=smoke", "n_jobs=1",
                 "~methods.ssc", "~methods.kssc", f"+methods.standin._target_={STAND_IN}")
"""The Hydra overrides of the toy runs: synthetic_intersection's config, the stand-in only."""


def toy_trial(context, cell, trial, seed):
    rng = np.random.default_rng(_trial.data_seed(seed))
    y = np.repeat([0, 1], 10)
    X = rng.standard_normal((20, 3)) + 10 * y[:, None]
    rows = _trial.fit_methods(context, X, y, seed)
    for row in rows:
        row["cell_value"] = cell["value"] * 2
    return rows


def toy_tasks(exp=None, data_dir=None, n_cells=3, trials=2):
    return [({"value": v}, t) for t in range(trials) for v in range(n_cells)]


TOY = _trial.Experiment(tasks=toy_tasks, trial=toy_trial)


def run_toy(cfg, on_trial=None, declared=TOY):
    """Run the config `cfg` with the experiment `declared` (default: the toy) in place of its
    own: its rows."""
    return _runner.run_experiment(_config.check_config(cfg), declared, on_trial=on_trial)
