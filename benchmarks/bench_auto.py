"""AutoKSSC(n_clusters) against one KSSC(n_clusters) fit (issue 39, part 1).

Run: `nice python -m benchmarks.bench_auto [--repeats 3] [--sets digits union_1000
union_20000]`. Data: scikit-learn's digits (1,797 points, 8 x 8, 10 classes) and unions of 5
random linear subspaces of dimension 5 in R^321 (bench_kssc's data: TIR's band count,
Gaussian coefficients, no noise; `kssc.datasets.make_subspaces`) of 1,000 and 20,000 points.
Prints, per data set and repeat, the wall time of `KSSC(n_clusters)` and of
`AutoKSSC(n_clusters)` (no other argument; both with random_state=0), measured alternately in
the same process, then the medians over the repeats, their ratio (the target: at most 2 at
20,000 points, AutoKSSC under 1 s at 1,000), the load average, AutoKSSC's chosen candidate,
its per-candidate seconds (a candidate skipped on the subsample: its subsample fit) and both
clustering errors. Asserts nothing. A first small AutoKSSC fit compiles numba's kernels
before the timing. Timings on a shared machine are inflated: the load average is printed
before and after every data set. With PYTHONPATH pointing at another checkout it measures
that checkout's kssc (how the issue's before/after were taken).
"""

import argparse
import os
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits

from kssc import KSSC, AutoKSSC, clustering_error
from kssc.datasets import make_subspaces

SETS = ("digits", "union_1000", "union_20000")


def data(name):
    if name == "digits":
        return load_digits(return_X_y=True)
    n = int(name.rsplit("_", 1)[1])
    X, y, _ = make_subspaces(5, 5, n // 5, 321, coefficients="gaussian", random_state=0)
    return X, y


def load():
    return os.getloadavg()[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    warm, _ = data("union_1000")
    AutoKSSC(5, random_state=0).fit(warm[::4])
    import kssc

    print(f"kssc from {os.path.dirname(kssc.__file__)}")
    for name in args.sets:
        X, y = data(name)
        k = len(np.unique(y))
        print(f"{name}: {X.shape[0]} x {X.shape[1]}, {k} clusters; load average {load():.2f}")
        fits, autos = [], []
        for repeat in range(args.repeats):
            start = time.perf_counter()
            model = KSSC(k, random_state=0).fit(X)
            fits.append(time.perf_counter() - start)
            start = time.perf_counter()
            auto = AutoKSSC(k, random_state=0).fit(X)
            autos.append(time.perf_counter() - start)
            candidates = ", ".join(
                f"{key} {entry['time_s']:.2f} s" + (" (skipped)" if entry.get("skipped") else "")
                for key, entry in auto.selection_.items())
            print(f"  repeat {repeat}: KSSC {fits[-1]:.2f} s, AutoKSSC {autos[-1]:.2f} s "
                  f"(ratio {autos[-1] / fits[-1]:.2f}; candidates: {candidates}); load "
                  f"average {load():.2f}")
        fit, chosen = np.median(fits), np.median(autos)
        print(f"  median over {args.repeats}: KSSC {fit:.2f} s, AutoKSSC {chosen:.2f} s, "
              f"ratio {chosen / fit:.2f}; chosen {auto.best_candidate_!r}; error KSSC "
              f"{clustering_error(y, model.labels_):.2f} %, AutoKSSC "
              f"{clustering_error(y, auto.labels_):.2f} %; load average {load():.2f}")


if __name__ == "__main__":
    main()
