"""A path of settings from one neighbour search against one fit (issue 38, part 5).

Run: `nice python -m benchmarks.bench_path [--n 20000] [--repeats 3] [--counts 4 5 6]`.
Data: a union of 5 random subspaces of dimension 5 in R^50 (Gaussian coefficients, noise
0.01). Prints, per repeat, the wall time of one `KSSC` fit (n_clusters=5, the default lam),
of one with the path's largest count, and of `kssc_path` over 5 penalties x the cluster
counts, the ratio of the path to the first fit, and the medians over the repeats (the
target: a ratio of at most 3; asking more clusters than the data hold slows ARPACK, in a fit
as in the path, hence the second fit); then whether the path's labels for the
fit's setting equal the fit's (and give the same partition), and the clustering error of
each setting. Asserts nothing. A first small fit and path compile numba's kernels before
the timing. Timings on a shared machine are inflated: the load average is printed.
"""

import argparse
import os
import time
import warnings

import numpy as np

from kssc import KSSC, clustering_error, kssc_path
from kssc.datasets import make_subspaces

LAMS = [0.0005, 0.00125, 0.0025, 0.005, 0.01]
COUNTS = [4, 5, 6]
FIT = {"n_clusters": 5, "lam": 0.00125}


def data(n, ambient=50, n_subspaces=5, dim=5, seed=0):
    return make_subspaces(n_subspaces, dim, n // n_subspaces, ambient, coefficients="gaussian",
                          noise=0.01, random_state=seed)[:2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--counts", type=int, nargs="+", default=COUNTS,
                        help="cluster counts of the path (must include 5, the fit's)")
    args = parser.parse_args()
    counts = args.counts
    warnings.simplefilter("ignore")
    small, _ = data(500)
    KSSC(random_state=0, **FIT).fit(small)
    kssc_path(small, LAMS[:1], counts[:1], random_state=0)
    X, y = data(args.n)
    print(f"{X.shape[0]} points in R^{X.shape[1]}; path: {len(LAMS)} penalties {LAMS} x "
          f"{len(counts)} cluster counts {counts}; load average {os.getloadavg()[0]:.2f}")
    fits, paths, largest = [], [], []
    for repeat in range(args.repeats):
        start = time.perf_counter()
        model = KSSC(random_state=0, **FIT).fit(X)
        fits.append(time.perf_counter() - start)
        start = time.perf_counter()
        KSSC(random_state=0, **{**FIT, "n_clusters": max(counts)}).fit(X)
        largest.append(time.perf_counter() - start)
        start = time.perf_counter()
        labels = kssc_path(X, LAMS, counts, random_state=0)
        paths.append(time.perf_counter() - start)
        stages = ", ".join(f"{name} {seconds:.2f}" for name, seconds in model.timings_.items())
        print(f"repeat {repeat}: fit {fits[-1]:.2f} s ({stages}); fit with n_clusters="
              f"{max(counts)} {largest[-1]:.2f} s; path {paths[-1]:.2f} s; ratio "
              f"{paths[-1] / fits[-1]:.2f}")
    fit, path = np.median(fits), np.median(paths)
    print(f"median over {args.repeats}: fit {fit:.2f} s, path {path:.2f} s, ratio "
          f"{path / fit:.2f} (separate fits: {len(LAMS) * len(counts)} x {fit:.2f} s = "
          f"{len(LAMS) * len(counts) * fit:.1f} s); against the fit with n_clusters="
          f"{max(counts)} ({np.median(largest):.2f} s): ratio {path / np.median(largest):.2f}; "
          f"load average {os.getloadavg()[0]:.2f}")
    got = labels[LAMS.index(FIT["lam"]), counts.index(FIT["n_clusters"])]
    pairs = np.unique(np.stack([got, model.labels_]), axis=1).shape[1]
    same = pairs == np.unique(got).size == np.unique(model.labels_).size
    print(f"path labels of the fit's setting: equal to the fit's "
          f"{np.array_equal(got, model.labels_)}, the same partition {same}")
    for i, lam in enumerate(LAMS):
        errors = ", ".join(f"c={c}: {clustering_error(y, labels[i, j]):.2f} %"
                           for j, c in enumerate(counts))
        print(f"lam={lam:g}: clustering error {errors}")


if __name__ == "__main__":
    main()
