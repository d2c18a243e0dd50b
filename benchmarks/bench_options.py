"""Every option of KSSC's accurate model at scale: fit time per stage and peak memory.

Run: make bench (or `python -m benchmarks.bench_options [--n 100000] [--only NAME ...]`).
Prints a table and writes it to results/bench_options.csv (sidecar: versions, load
average); asserts nothing. Each option is fitted in its own process, so its peak RSS is its
own. Data: 10 random subspaces of dimension 5 in R^50 (Gaussian coefficients, noise 0.01),
k = 20 neighbours unless the option says otherwise. An option whose fit fails is recorded
with its error message and no timings.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from experiments._checkout import REPO_ROOT as REPO

OPTIONS = {
    "default": {},
    "n_random=20": {"n_random": 20},
    "views [10, 10], pcs [0, 2]": {"n_neighbors": [10, 10], "neighbor_pcs": [0, 2]},
    "metric=l2, normalize=False": {"metric": "l2", "normalize": False},
    "lam_mode=global": {"lam": 0.01, "lam_mode": "global", "positive": False},
    "l1_ratio=0.5": {"l1_ratio": 0.5},
    "threshold=0.7, max_normalized": {"threshold": 0.7, "affinity": "max_normalized"},
    "ADMM (stopping all)": {"solver": {}, "lam": 0.01, "lam_mode": "global", "positive": False},
    "ADMM (stopping each)": {"solver": {"stopping": "each"}, "lam": 0.01, "lam_mode": "global",
                             "positive": False},
    "ADMM affine": {"solver": {"affine": True}, "lam": 0.01, "lam_mode": "global",
                    "positive": False},
    "ADMM outlier": {"solver": {"outlier": True}, "lam": 0.05, "lam_mode": "global",
                     "positive": False},
    "ADMM elastic net": {"solver": {}, "lam": 0.01, "lam_mode": "global", "l1_ratio": 0.5,
                         "positive": False},
}


def data(n, ambient=50, n_subspaces=10, dim=5, seed=0):
    from kssc.datasets.synthetic import make_subspaces

    return make_subspaces(n_subspaces, dim, n // n_subspaces, ambient, coefficients="gaussian",
                          noise=0.01, random_state=seed)[:2]


def fit_one(name, n):
    from sklearn.exceptions import ConvergenceWarning

    from kssc import ADMM, KSSC, clustering_error

    warnings.simplefilter("ignore", ConvergenceWarning)
    X, y = data(n)
    params = dict(OPTIONS[name])
    if "solver" in params:
        params["solver"] = ADMM(**params["solver"])
    start = time.perf_counter()
    model = KSSC(10, random_state=0, **params).fit(X)
    total = time.perf_counter() - start
    return {**{stage: model.timings_.get(stage, np.nan)
               for stage in ("neighbours", "coefficients", "spectral")},
            "total": total, "error": clustering_error(y, model.labels_),
            "peak_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--only", nargs="+", choices=list(OPTIONS), default=list(OPTIONS))
    parser.add_argument("--output", type=Path, default=REPO / "results" / "bench_options.csv")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(fit_one(args.child, args.n)))
        return
    from experiments import _io, _produce

    started, begin = _io.now(), time.perf_counter()
    print(f"KSSC options, N = {args.n:,}, 10 subspaces of dim 5 in R^50, noise 0.01")
    print(f"{'option':32s} {'neighbours':>10s} {'coef':>8s} {'spectral':>8s} {'total':>8s} "
          f"{'peak GiB':>8s} {'error %':>8s}")
    rows = []
    for name in args.only:
        load = os.getloadavg()[0]
        out = subprocess.run([sys.executable, "-m", "benchmarks.bench_options", "--n",
                              str(args.n), "--child", name], cwd=REPO,
                             capture_output=True, text=True)
        row = {"option": name, "n_samples": args.n, "parameters": json.dumps(OPTIONS[name]),
               "load_average": round(load, 2)}
        if out.returncode:
            message = (out.stderr.strip().splitlines() or ["no output"])[-1]
            print(f"{name:32s} failed: {message}")
            rows.append({**row, "failed": message})
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{name:32s} {r['neighbours']:10.1f} {r['coefficients']:8.1f} {r['spectral']:8.1f} "
              f"{r['total']:8.1f} {r['peak_gib']:8.2f} {r['error']:8.2f}", flush=True)
        rows.append({**row, "time_neighbours_s": r["neighbours"],
                     "time_coefficients_s": r["coefficients"], "time_spectral_s": r["spectral"],
                     "time_fit_s": r["total"], "rss_peak_gib": r["peak_gib"],
                     "error_pct": r["error"], "failed": ""})
    _produce.write_benchmark(pd.DataFrame(rows), args.output, "bench_options",
                             {"n": args.n, "options": args.only}, started=started, clock=begin)


if __name__ == "__main__":
    from experiments import _produce

    _produce.traced_main(main)
