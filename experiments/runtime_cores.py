"""Figure:runtime_wrt_cores (docs/protocol.md 3.11): time of the column-parallel solvers vs cores.

N = 1000 (N_i = 200), D = 500; the same data set for every core count. "c cores" means
BLAS and numba's compiled kernels limited to c threads and, for estimators with an `n_jobs`
parameter, n_jobs = c (the MATLAB code varied its parfor pool size). Each method is first
fitted once, untimed, on a small slice, so worker start-up is not timed (MATLAB's pool was
opened before its tic). Each (method, cores) is then fitted `repeats` times (config; 1 if
absent) and the row of the fit with the median time to build Z is kept: a single fit of
k-SSC takes tens of milliseconds here, where one fit's scheduling noise is as large as the
difference between core counts.
"""

import os

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from kssc.coding.representation import numba_threads
from kssc.datasets import make_runtime_data

from ._trial import (
    Experiment,
    accepts,
    data_seed,
    fit_method,
    method_seed,
    summarise_by,
    trial_seed,
    warm_up,
)
from .conventions import paper_time


def core_counts(exp):
    if exp.get("cores") is not None:
        return list(exp["cores"])
    return list(range(1, (os.cpu_count() or 1) + 1))


def tasks(exp, data_dir=None):
    return [({"cores": c}, t) for t in range(exp["trials"]) for c in core_counts(exp)]


def trial(context, cell, trial, seed):
    exp = context["experiment"]
    # One data set per trial, shared by every core count.
    shared = trial_seed(context["seed"], {"n_per_subspace": exp["n_per_subspace"]}, trial)
    X, y = make_runtime_data(exp["n_per_subspace"], ambient_dim=exp["ambient_dim"],
                             subspace_dim=exp["subspace_dim"], n_subspaces=exp["n_subspaces"],
                             mean=exp["mean"], var=exp["var"], noise=exp["noise"],
                             random_state=data_seed(shared))[:2]
    cores = cell["cores"]
    rows = []
    with threadpool_limits(limits=cores), numba_threads(cores):
        for name, method_cfg in context["methods"].items():
            params = {"n_jobs": cores} if accepts(method_cfg, "n_jobs") else {}
            warm_up(name, method_cfg, X, y, **params)
            fits = [fit_method(name, method_cfg, X, y, n_clusters=len(set(y)),
                               random_state=method_seed(shared), **params)
                    for _ in range(exp.get("repeats", 1))]
            rows.append(median_fit(fits))
    for row in rows:
        row.update(n_samples=len(y), ambient_dim=exp["ambient_dim"], data_seed=shared)
    return rows


def median_fit(fits):
    """The row of the fit with the median time to build Z (`paper_time`; the lower middle
    one of an even number; a failed fit, without a time, sorts last)."""
    times = paper_time(pd.DataFrame(fits)).fillna(np.inf).to_numpy()
    return fits[np.argsort(times, kind="stable")[(len(fits) - 1) // 2]]


EXPERIMENT = Experiment(tasks=tasks, trial=trial, summary=summarise_by("cores", "n_samples"))
