"""Every solver on 1 and 2 cores, with the thread counts each stage actually ran on.

The runtime_cores setting (`conf/experiment/runtime_cores.yaml`): N = 1,000 (--n-per-subspace
200, 5 subspaces of dimension 4 in D = 500), k = 6; k-SSC with its three solvers, SSC with
two, and the other baselines (GFS/OMP, TSC, SSSC, GSC) with their defaults. "c cores" is
what the experiment sets: BLAS and numba limited to c threads and n_jobs = c for estimators
that take it. Each method is first fitted once, untimed, on a slice; then `--repeats` timed
fits per number of cores, in turns (1, 2, then 2, 1, ...: a drift of the machine's speed
falls on both alike), the median and the fastest kept. Probes wrapped around the kernels
record, during one more fit, the BLAS threads (threadpoolctl), numba's threads, and the
processes and threads joblib ran the coefficient chunks on (k-SSC and SSC only); the
eigensolver's BLAS threads in the spectral step.

Run: python -m benchmarks.bench_cores [--n-per-subspace 200] [--repeats 21]
Prints one row per (solver, cores) and writes them to results/bench_cores.csv (--output;
sidecar: versions, load average); asserts nothing. Timings on a loaded machine are noisy:
the load average is recorded.
"""

import argparse
import os
import threading
import time
import warnings
from contextlib import ExitStack
from pathlib import Path
from unittest import mock

import numba
import numpy as np
import pandas as pd
from threadpoolctl import threadpool_info, threadpool_limits

from experiments import _io, _produce
from experiments._checkout import REPO_ROOT as REPO
from kssc import ADMM, KSSC, clustering_error
from kssc.baselines import GFS, GSC, SSC, SSSC, TSC, _ssc_solvers
from kssc.coding import representation
from kssc.coding.representation import numba_threads
from kssc.datasets import make_runtime_data
from kssc.spectral import _clustering as spectral

_KSSC = {"n_neighbors": 6, "neighbor_pcs": 0, "n_random": 0, "lam": 0.1, "lam_mode": "absolute",
         "normalize": True, "affinity": "symmetric", "metric": "euclidean", "tol": 1e-6,
         "max_iter": 200}
_SSC = {"lam": 0.1, "lam_mode": "absolute", "positive": True, "normalize": True,
        "affinity": "symmetric", "column_wise": True, "tol": 1e-6, "max_iter": 200}
METHODS = {
    "kssc_relaxed": lambda c: KSSC(5, solver="relaxed", positive=True, n_jobs=c, **_KSSC),
    "kssc_exact": lambda c: KSSC(5, solver="exact", positive=False, n_jobs=c, **_KSSC),
    "kssc_admm": lambda c: KSSC(5, solver=ADMM(), positive=False, n_jobs=c, **_KSSC),
    "ssc_relaxed_par": lambda c: SSC(5, solver="relaxed", **_SSC),
    "ssc_exact_par": lambda c: SSC(5, solver="exact", **_SSC),
    "gfs_omp": lambda c: GFS(5, random_state=0),
    "tsc": lambda c: TSC(5, random_state=0),
    "sssc": lambda c: SSSC(5, random_state=0),
    "gsc": lambda c: GSC(5, random_state=0),
}
# Where the probes go: the functions each stage calls with its thread limits in force.
_COEFFICIENT_KERNELS = [(representation, "_solve_chunk"), (representation, "_admm_each"),
                        (representation, "_admm_advance"), (_ssc_solvers, "_ssc_fista"),
                        (_ssc_solvers, "_ssc_ladmpsap")]
_EIGENSOLVERS = [(spectral, "eigh"), (spectral, "eigsh")]


def _blas_threads():
    return max((p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"),
               default=0)


def _probe(module, name, log):
    original = getattr(module, name)

    def probed(*args, **kwargs):
        log.append({"pid": os.getpid(), "thread": threading.get_ident(),
                    "blas": _blas_threads(), "numba": numba.get_num_threads()})
        return original(*args, **kwargs)

    return mock.patch.object(module, name, probed)


def _fit(name, cores, X, probed=False):
    """(seconds, model, coefficient probe log, eigensolver probe log) of one fit on `cores`."""
    coefficients, eigen = [], []
    with (threadpool_limits(limits=cores), numba_threads(cores), ExitStack() as stack,
          warnings.catch_warnings()):
        warnings.simplefilter("ignore")
        if probed:
            for module, kernel in _COEFFICIENT_KERNELS:
                stack.enter_context(_probe(module, kernel, coefficients))
            for module, kernel in _EIGENSOLVERS:
                stack.enter_context(_probe(module, kernel, eigen))
        start = time.perf_counter()
        model = METHODS[name](cores).fit(X)
        return time.perf_counter() - start, model, coefficients, eigen


def measure(name, cores_list, X, y, repeats=1):
    """One row per number of cores: the median of `repeats` timed fits, taken in turns (the
    order of the cores alternates between repeats, so a drift of the machine's speed falls
    on all of them alike), then one probed fit for the thread counts."""
    for cores in cores_list:
        _fit(name, cores, X[::16])  # the kernels loaded, untimed
    times = {cores: [] for cores in cores_list}
    for repeat in range(repeats):
        for cores in (cores_list if repeat % 2 == 0 else cores_list[::-1]):
            times[cores].append(_fit(name, cores, X)[0])
    rows = []
    for cores in cores_list:
        _, model, coefficients, eigen = _fit(name, cores, X, probed=True)
        timings = getattr(model, "timings_", {}) or {}
        rows.append({
            "method": name, "cores": cores, "time_fit_s": float(np.median(times[cores])),
            "time_fit_min_s": float(np.min(times[cores])), "repeats": repeats,
            "time_coefficients_s": timings.get("coefficients", timings.get("representation")),
            "time_spectral_s": timings.get("spectral"),
            "error_pct": clustering_error(y, model.labels_),
            "coef_calls": len(coefficients),
            "coef_processes": len({c["pid"] for c in coefficients}),
            "coef_threads": len({c["thread"] for c in coefficients}),
            "coef_blas_threads": max((c["blas"] for c in coefficients), default=None),
            "coef_numba_threads": max((c["numba"] for c in coefficients), default=None),
            "eigen_blas_threads": max((c["blas"] for c in eigen), default=None)})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-per-subspace", type=int, default=200)
    parser.add_argument("--cores", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--repeats", type=int, default=21,
                        help="timed fits per (solver, cores); the median and fastest are kept")
    parser.add_argument("--output", type=Path, default=REPO / "results" / "bench_cores.csv")
    args = parser.parse_args(argv)
    started, begin = _io.now(), time.perf_counter()
    X, y = make_runtime_data(args.n_per_subspace, ambient_dim=500, subspace_dim=4,
                             n_subspaces=5, mean=0.25, var=0.001, noise=0.05,
                             random_state=0)[:2]
    print(f"N = {len(y):,}, D = 500; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores")
    rows = [row for name in args.methods for row in measure(name, args.cores, X, y, args.repeats)]
    frame = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_columns", None):
        print(frame.to_string(index=False, float_format="{:.3f}".format))
    _produce.write_benchmark(frame, args.output, "bench_cores",
                             {"n_per_subspace": args.n_per_subspace, "cores": args.cores,
                              "methods": args.methods, "repeats": args.repeats},
                             started=started, clock=begin)
    return frame


if __name__ == "__main__":
    _produce.traced_main(main)
