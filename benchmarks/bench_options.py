"""Every option of KSSC's accurate model at scale: fit time per stage and peak memory.

Run: python benchmarks/bench_options.py [--n 100000] [--only NAME ...]. Prints a table;
asserts nothing. Each option is fitted in its own process, so its peak RSS is its own.
Data: 10 random subspaces of dimension 5 in R^50 (Gaussian coefficients, noise 0.01),
k = 20 neighbours unless the option says otherwise.
"""

import argparse
import json
import resource
import subprocess
import sys
import time
import warnings

import numpy as np

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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--only", nargs="*", default=list(OPTIONS))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(fit_one(args.child, args.n)))
        return
    print(f"KSSC options, N = {args.n:,}, 10 subspaces of dim 5 in R^50, noise 0.01")
    print(f"{'option':32s} {'neighbours':>10s} {'coef':>8s} {'spectral':>8s} {'total':>8s} "
          f"{'peak GiB':>8s} {'error %':>8s}")
    for name in args.only:
        out = subprocess.run([sys.executable, __file__, "--n", str(args.n), "--child", name],
                             capture_output=True, text=True)
        if out.returncode:
            print(f"{name:32s} failed: {out.stderr.strip().splitlines()[-1]}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{name:32s} {r['neighbours']:10.1f} {r['coefficients']:8.1f} {r['spectral']:8.1f} "
              f"{r['total']:8.1f} {r['peak_gib']:8.2f} {r['error']:8.2f}", flush=True)


if __name__ == "__main__":
    main()
