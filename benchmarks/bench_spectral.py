"""The spectral step's eigensolvers side by side on one k-SSC affinity.

Run: `python -m benchmarks.bench_spectral [--n 20000] [--solvers arpack multilevel-1e-3]`,
or with `--scale N`, or with `--affinity W.npz --labels y.npy`; `--steps` instead times the
spectral step as the estimators run it (`spectral_labels`, from W on), step by step.
Without `--affinity` or `--scale` it fits KSSC(5) on bench_kssc's data (N points, D = 321, 5
subspaces of dimension 5) and uses its `affinity_matrix_`; `--scale N` builds the affinity of
the scale experiment's data (N points, D = 64, 10 subspaces; the paper's setting,
conf/method/kssc.yaml) by a full fit (about 60 s at 10^6 on the idle machine); `--affinity`
loads a saved CSR affinity (`scipy.sparse.save_npz`). For ARPACK,
for the multilevel route (coarse start and LOBPCG, at two tolerances) and for LOBPCG from a
random start (AMG-preconditioned, at two tolerances) it prints the wall and CPU time of the
n_clusters largest eigenpairs of the N-Cut matrix, the mat-vecs counted (ARPACK only), the
largest eigenvalue difference to ARPACK's, and the clustering error of the N-Cut labels
(Yu and Shi's discretisation, seed 0) against the truth and against ARPACK's labels.
Timings on a loaded machine are inflated (CPU time less so): the load average is printed.
With `--steps` it prints, for each of STEPS as it returns (nested steps indented, above their
caller), its wall time and the resident set size (RSS, psutil, sampled every 20 ms) it
started at and peaked at.
"""

import argparse
import contextlib
import functools
import importlib
import os
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator

from benchmarks.bench_kssc import REPO, tir_scale_data
from kssc import KSSC, clustering_error
from kssc.spectral._clustering import _normalized_affinity, discretize, top_eigenvectors

SOLVERS = {"arpack": {"solver": "arpack"},
           "multilevel-1e-3": {"solver": "multilevel", "tol": 1e-3},
           "multilevel-1e-4": {"solver": "multilevel", "tol": 1e-4},
           "lobpcg-1e-3": {"solver": "lobpcg", "tol": 1e-3},
           "lobpcg-1e-5": {"solver": "lobpcg", "tol": 1e-5}}


# The steps `--steps` times: (module, function) as `spectral_labels` reaches them.
STEPS = (("kssc.spectral._clustering", "linked_points"),
         ("kssc.spectral._clustering", "_check_graph"),
         ("kssc.spectral._clustering", "_normalized_affinity"),
         ("kssc.spectral._multilevel", "with_values"),
         ("kssc.spectral._clustering", "top_eigenvectors"),
         ("kssc.spectral._multilevel", "aggregation"),
         ("kssc.spectral._multilevel", "restrict"),
         ("kssc.spectral._clustering", "coarse_top"),
         ("kssc.spectral._multilevel", "refine"),
         ("kssc.spectral._clustering", "discretize"))


@contextlib.contextmanager
def timed_steps(sampler):
    """Yields a list to which, within it, each of STEPS appends (depth, name, wall s, RSS at
    entry, peak RSS) when it returns; the functions are restored on exit."""
    import psutil

    process = psutil.Process()
    depth = [0]
    originals = []
    report = []

    def wrap(function):
        @functools.wraps(function)
        def step(*args, **kwargs):
            start, entry = time.perf_counter(), process.memory_info().rss
            depth[0] += 1
            try:
                return function(*args, **kwargs)
            finally:
                depth[0] -= 1
                stop = time.perf_counter()
                peak = max(entry, sampler.peak(start, stop), process.memory_info().rss)
                report.append((depth[0], function.__name__, stop - start, entry, peak))
        return step

    try:
        for module_name, name in STEPS:
            module = importlib.import_module(module_name)
            originals.append((module, name, getattr(module, name)))
            setattr(module, name, wrap(getattr(module, name)))
        yield report
    finally:
        for module, name, function in reversed(originals):
            setattr(module, name, function)


def profile_steps(W, n_clusters, interval=0.02):
    """The labels `spectral_labels` gives W (seed 0) and its steps' report (`timed_steps`,
    in the order they returned)."""
    from experiments.scale import RSSSampler
    from kssc.spectral._clustering import spectral_labels

    sampler = RSSSampler(interval)
    sampler.start()
    try:
        with timed_steps(sampler) as report:
            labels = spectral_labels(W, n_clusters, "discretize", np.random.RandomState(0))
    finally:
        sampler.stop()
    return labels, report


def print_steps(W, y, n_clusters):
    """Print `profile_steps`' report in the order the steps returned: a nested step indented,
    above the line of the step that called it."""
    gib = 2.0**30
    start = time.perf_counter()
    labels, report = profile_steps(W, n_clusters)
    total = time.perf_counter() - start
    print(f"N = {W.shape[0]:,}, W {W.nnz:,} entries ({W.data.nbytes + W.indices.nbytes:,} "
          f"bytes); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("  step                        wall (s)  RSS at entry (GiB)  peak (GiB)")
    for depth, name, wall, entry, peak in report:
        print(f"  {'  ' * depth}{name:{26 - 2 * depth}s} {wall:9.2f} {entry / gib:19.2f} "
              f"{peak / gib:11.2f}")
    print(f"  total {total:.2f} s; error {clustering_error(y, labels):.3f} %")


def counted(P):
    """P as a LinearOperator that counts the vectors it multiplies."""
    count = [0]

    def product(x):
        count[0] += x.shape[1] if x.ndim == 2 else 1
        return P @ x

    return LinearOperator(P.shape, matvec=product, matmat=product, dtype=P.dtype), count


def ncut_labels(vectors, degrees):
    """N-Cut labels of the eigenvectors, as `kssc.spectral.ncut_embedding` scales them."""
    vectors = vectors / np.sqrt(degrees)[:, None]
    vectors *= np.sqrt(len(degrees)) / np.linalg.norm(vectors, axis=0)
    return discretize(vectors * np.where(vectors[0] > 0, -1.0, 1.0), 0)


def compare(W, y, n_clusters, solvers=tuple(SOLVERS)):
    """Print one line per eigensolver (module docstring)."""
    P, degrees = _normalized_affinity(W)
    print(f"N = {P.shape[0]:,}, {P.nnz / P.shape[0]:.1f} non-zeros per row, "
          f"{n_clusters} eigenpairs; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")
    print("  solver            wall (s)  CPU (s)  mat-vecs  max |dl|  error (%)  vs ARPACK (%)")
    reference = None
    for name in solvers:
        options = SOLVERS[name]
        # LOBPCG and the multilevel route need P itself for their aggregation; ARPACK goes
        # through the counter.
        operator, count = counted(P)
        start, cpu = time.perf_counter(), time.process_time()
        values, vectors = top_eigenvectors(operator if options["solver"] == "arpack" else P,
                                           n_clusters, random_state=0, dense_limit=0, **options)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        labels = ncut_labels(vectors, degrees)
        if reference is None:
            reference = values, labels
        matvecs = count[0] if options["solver"] == "arpack" else float("nan")
        print(f"  {name:16s} {wall:9.2f} {cpu:8.2f} {matvecs:9.0f} "
              f"{np.abs(values - reference[0]).max():9.1e} {clustering_error(y, labels):10.3f} "
              f"{clustering_error(reference[1], labels):14.3f}", flush=True)


def scale_affinity(n):
    """W = |Z| + |Z|^T of the scale experiment's data (conf/experiment/scale.yaml, data seed
    0) under the paper's setting, and the labels (from a full fit: its affinity_matrix_)."""
    import yaml

    from kssc.datasets import make_union_of_subspaces

    params = yaml.safe_load((REPO / "conf" / "method" / "kssc.yaml").read_text())
    params.pop("_target_")
    X, y = make_union_of_subspaces(n, ambient_dim=64, n_subspaces=10,
                                   subspace_dims=[5, 6, 7, 8, 9, 10], noise=0.01,
                                   random_state=0)[:2]
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        W = KSSC(10, **params, random_state=0).fit(X).affinity_matrix_
    print(f"scale data: N = {n:,}, fit {time.perf_counter() - start:.1f} s")
    return W, y


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--scale", type=int, default=None,
                        help="the scale experiment's data of this many points")
    parser.add_argument("--affinity", type=Path, help="a saved CSR affinity (.npz)")
    parser.add_argument("--labels", type=Path, help="its true labels (.npy)")
    parser.add_argument("--n-clusters", type=int, default=None)
    parser.add_argument("--steps", action="store_true",
                        help="time the estimators' spectral step step by step instead")
    parser.add_argument("--solvers", nargs="+", choices=tuple(SOLVERS), default=tuple(SOLVERS),
                        help="the first is the reference of the comparison")
    args = parser.parse_args(argv)
    if args.affinity is not None:
        W, y = sp.load_npz(args.affinity).tocsr(), np.load(args.labels)
    elif args.scale is not None:
        W, y = scale_affinity(args.scale)
    else:
        X, y = tir_scale_data(args.n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            W = KSSC(5, random_state=0).fit(X).affinity_matrix_
    n_clusters = args.n_clusters or int(np.unique(y).size)
    if args.steps:
        print_steps(W, y, n_clusters)
    else:
        compare(W, y, n_clusters, args.solvers)


if __name__ == "__main__":
    main()
