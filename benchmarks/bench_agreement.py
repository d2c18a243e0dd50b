"""Fast and exact paths above the switch: the labels' agreement (ARI) and the accuracies.

Run: `KSSC_DATA_DIR=... python -m benchmarks.bench_agreement [--data tir scale] [--n 60000]
[--seeds 0 1 2] [--target-recall R]`; the held-out check (`make heldout` runs it):
`python -m benchmarks.bench_agreement --data fashion --output results/heldout_agreement.csv`.
Above 50,000 points `KSSC`'s defaults take the fast paths: the IVF self-join (`kssc.IVF()`)
and the multilevel spectral step. This fits, with the same settings, at every seed of
`--seeds` (`random_state`): the default path; the exact path (exact neighbours, ARPACK); and
each fast part alone, "ivf_arpack" (the IVF self-join, ARPACK) and "exact_multilevel" (exact
neighbours, the multilevel step), whatever N. It prints each fit's accuracy (100 -
Hungarian-matched error) and the adjusted Rand index of its labels against the exact path's
at the first seed (the exact path at the other seeds: how much the seed alone moves the
labels); one row per (data, path, seed) goes to bench_agreement.csv in results/ (sidecar:
versions, load average); asserts nothing. `--target-recall R`: the IVF of the default path
(above the switch) and of "ivf_arpack" aims at recall R (`IVF(target_recall=R)`); each row
of a path that runs the IVF names its target (the IVF searches exactly when the target
would probe more than 1/8 of the lists). Data (never
Fashion-MNIST or MNIST, kept as the held-out check): "tir", the paper's large-scale TIR data
(`make_tir_large`: 5 subspaces of 3 real library spectra, D = 321); "scale", the scale
experiment's union (10 subspaces of dimension 5-10 in D = 64, noise 0.01). "fashion" is the
held-out check, never used to choose a setting: all 70,000 Fashion-MNIST images (training and
test; `--heldout-dir`, as bench_heldout reads them; `--n` does not apply) projected on their
100 leading principal directions, with 10 clusters. The spectral route is forced by setting
`kssc.spectral._clustering._MULTILEVEL_FROM` for the fit: above N (ARPACK) or 0 (multilevel).
"""

import argparse
import os
import time
import warnings
from pathlib import Path
from unittest import mock

import pandas as pd
from sklearn.decomposition import PCA
from sklearn.metrics import adjusted_rand_score

from benchmarks.bench_heldout import PACKAGE_DIR, load_every_image
from experiments._checkout import REPO_ROOT as REPO
from kssc import IVF, KSSC, clustering_error
from kssc.datasets import make_union_of_subspaces
from kssc.datasets.tir import load_tir_library, make_tir_large
from kssc.estimator import APPROXIMATE_FROM
from kssc.spectral import _clustering as spectral


def load(name, n, heldout_dir=None):
    """(X, y, n_clusters) of the data set `name` with about n points (fashion: all 70,000)."""
    if name == "fashion":
        X, y = load_every_image(heldout_dir)
        return PCA(100, random_state=0).fit_transform(X), y, 10
    if name == "tir":
        X, y = make_tir_large(load_tir_library()[0], n_per_subspace=n // 5, random_state=0)
        return X, y, 5
    X, y = make_union_of_subspaces(n, ambient_dim=64, n_subspaces=10,
                                   subspace_dims=[5, 6, 7, 8, 9, 10], noise=0.01,
                                   random_state=0)
    return X, y, 10


# path -> (neighbor_algorithm, spectral route: "arpack", "multilevel" or None for the
# default switch); `KSSC`'s defaults otherwise.
PATHS = {"default": ("auto", None), "exact": ("exact", "arpack"),
         "ivf_arpack": (IVF(), "arpack"), "exact_multilevel": ("exact", "multilevel")}


def neighbours(path, n, target_recall=None):
    """`path`'s neighbor_algorithm on n points and the recall its IVF aims at (None when it
    searches exactly): with `target_recall`, the IVF of "ivf_arpack" and of the default
    path above the switch aim at it."""
    algorithm = PATHS[path][0]
    if path == "default" and n < APPROXIMATE_FROM:
        return algorithm, None  # below the switch the default path searches exactly
    if target_recall is not None and path in ("default", "ivf_arpack"):
        algorithm = IVF(target_recall=target_recall)
    if algorithm == "exact":
        return algorithm, None
    return algorithm, (IVF() if algorithm == "auto" else algorithm).target_recall


def fit(X, n_clusters, path, seed=0, target_recall=None):
    """The fitted model and seconds of KSSC's defaults by `path` (`PATHS`) at `seed`, its
    neighbours as `neighbours` gives them."""
    algorithm = neighbours(path, X.shape[0], target_recall)[0]
    route = PATHS[path][1]
    switch = {None: spectral._MULTILEVEL_FROM, "arpack": X.shape[0] + 1, "multilevel": 0}[route]
    model = KSSC(n_clusters, random_state=seed, neighbor_algorithm=algorithm)
    with warnings.catch_warnings(), mock.patch.object(spectral, "_MULTILEVEL_FROM", switch):
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        model.fit(X)
    return model, time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=["tir", "scale"],
                        choices=["tir", "scale", "fashion"])
    parser.add_argument("--n", type=int, default=60_000, help="points (above the 50,000 switch)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2],
                        help="random_state of every path's fits (the first: the reference)")
    parser.add_argument("--target-recall", type=float, default=None,
                        help="the IVF's target_recall (default: IVF()'s)")
    parser.add_argument("--heldout-dir", type=Path,
                        default=Path(os.environ.get("KSSC_HELDOUT_DIR") or PACKAGE_DIR),
                        help="Fashion-MNIST's folder (bench_heldout's --data)")
    parser.add_argument("--output", type=Path, default=REPO / "results" / "bench_agreement.csv")
    args = parser.parse_args(argv)
    from experiments import _io, _produce

    started, start = _io.now(), time.perf_counter()
    rows = []
    for name in args.data:
        X, y, n_clusters = load(name, args.n, args.heldout_dir)
        reference = None
        for path in ("exact", "default", "ivf_arpack", "exact_multilevel"):
            for seed in args.seeds:
                load_average = os.getloadavg()[0]
                model, seconds = fit(X, n_clusters, path, seed, args.target_recall)
                if reference is None:  # the exact path at the first seed
                    reference = model.labels_
                search = model.neighbor_search_
                accuracy = 100.0 - clustering_error(y, model.labels_)
                ari = adjusted_rand_score(reference, model.labels_)
                print(f"{name} ({X.shape[0]:,} x {X.shape[1]}) {path:16s} seed {seed}: accuracy "
                      f"{accuracy:6.2f} %, ARI vs exact {ari:.4f}, {seconds:7.1f} s (neighbours "
                      f"{search['algorithm']}, recall {search['recall']:.3f}, nprobe "
                      f"{search.get('nprobe')})")
                rows.append({"data": name, "n_samples": X.shape[0], "ambient_dim": X.shape[1],
                             "path": path, "seed": seed, "accuracy_pct": accuracy,
                             "ari_vs_exact": ari, "time_fit_s": seconds,
                             "neighbours": search["algorithm"], "recall": search["recall"],
                             "nprobe": search.get("nprobe"), "target_recall": neighbours(
                                 path, X.shape[0], args.target_recall)[1],
                             "load_average": round(load_average, 2)})
    _produce.write_benchmark(pd.DataFrame(rows), args.output, args.output.stem,
                             {"data": args.data, "n": args.n, "seeds": args.seeds,
                              "target_recall": args.target_recall,
                              "setting": "KSSC defaults; reference: the exact path at the "
                                         "first seed"},
                             started=started, clock=start)


if __name__ == "__main__":
    from experiments import _produce

    _produce.traced_main(main)
