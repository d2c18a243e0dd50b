"""Command line: ``kssc cluster FILE -k 5`` (or ``python -m kssc cluster FILE -k 5``).

Reads a table of points (rows are samples) from a .npy, .csv or .parquet file, clusters it
with k-SSC or a baseline, and writes the labels as CSV, optionally Z (.npz) and the timings
(JSON).
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from . import __version__
from .estimator import KSSC

METHODS = ("kssc", "ssc", "gfs", "gsc", "sssc", "tsc")
READERS = (".npy", ".csv", ".parquet")

# Command-line option -> estimator parameter; an option is passed on only when given, and
# only to a method that has the parameter.
ESTIMATOR_OPTIONS = {
    "n_neighbors": "--n-neighbors",
    "lam": "--lam",
    "solver": "--solver",
    "positive": "--positive",
    "metric": "--metric",
    "n_in_sample": "--n-in-sample",
    "assign_labels": "--assign-labels",
}


class CommandError(ValueError):
    """A file or option the command cannot use; the message names it and the problem."""


def _estimator_class(method):
    if method == "kssc":
        return KSSC
    from . import baselines

    return getattr(baselines, method.upper())


def _read_csv(path):
    with open(path) as handle:
        first = handle.readline()
    try:
        [float(field) for field in first.split(",")]
        header = 0
    except ValueError:
        header = 1
    try:
        return np.loadtxt(path, delimiter=",", skiprows=header, ndmin=2)
    except ValueError as error:
        raise CommandError(f"{path}: not a numeric table ({error})") from error


def _read_parquet(path):
    try:
        import pandas as pd

        frame = pd.read_parquet(path)
    except ImportError as error:
        raise CommandError(
            f"{path}: reading .parquet needs pandas and pyarrow "
            f"(pip install 'kssc[parquet]'); or save the table as .npy or .csv. ({error})"
        ) from error
    text = [name for name, dtype in frame.dtypes.items() if not np.issubdtype(dtype, np.number)]
    if text:
        raise CommandError(f"{path}: column(s) {text[:5]} are not numeric.")
    return frame.to_numpy(dtype=float)


def read_points(path):
    """The (n_samples, n_features) float array in `path` (.npy, .csv or .parquet).

    Raises CommandError, naming the file, when it is missing, has another extension, or does
    not hold a 2-D table of finite numbers.
    """
    path = Path(path)
    if not path.is_file():
        raise CommandError(f"{path}: no such file.")
    suffix = path.suffix.lower()
    if suffix not in READERS:
        raise CommandError(f"{path}: unsupported extension {suffix!r}; use one of {READERS}.")
    if suffix == ".npy":
        try:
            X = np.load(path, allow_pickle=False)
        except ValueError as error:
            raise CommandError(f"{path}: not a numeric .npy array ({error})") from error
    elif suffix == ".csv":
        X = _read_csv(path)
    else:
        X = _read_parquet(path)
    if not any(np.issubdtype(X.dtype, kind) for kind in (np.integer, np.floating, np.bool_)):
        raise CommandError(f"{path}: holds {X.dtype} values, not numbers.")
    if X.ndim != 2:
        raise CommandError(f"{path}: holds an array of shape {X.shape}; expected a 2-D table "
                         "(n_samples, n_features), one point per row.")
    X = X.astype(np.float64, copy=False)
    bad = np.flatnonzero(~np.isfinite(X).all(axis=1))
    if bad.size:
        raise CommandError(f"{path}: {bad.size} row(s) hold NaN or infinite values "
                         f"(rows {bad[:5].tolist()}).")
    return X


def _parser():
    parser = argparse.ArgumentParser(
        prog="kssc", description="Sparse subspace clustering by nearest neighbour filtering.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    cluster = commands.add_parser(
        "cluster", help="cluster the rows of a .npy, .csv or .parquet file",
        description="Cluster the rows of FILE and write one label per row.")
    cluster.add_argument("file", type=Path, metavar="FILE",
                         help=".npy, .csv (optional header row) or .parquet; one point per row")
    cluster.add_argument("-k", "--n-clusters", type=int, default=None, metavar="N",
                         help="number of clusters (default: estimated from the eigen-gap)")
    cluster.add_argument("--method", choices=METHODS, default="kssc",
                         help="k-SSC or a baseline (default: kssc)")
    cluster.add_argument("--n-neighbors", type=int, metavar="K",
                         help="neighbours per point (kssc, gsc, tsc)")
    cluster.add_argument("--lam", type=float, help="l1 weight lambda (kssc, ssc, sssc)")
    cluster.add_argument("--solver", choices=("relaxed", "exact", "admm"),
                         help="coefficient solver: FISTA (kssc's default), LADMPSAP or ADMM")
    cluster.add_argument("--positive", action=argparse.BooleanOptionalAction, default=None,
                         help="non-negative coefficients (kssc, ssc; default: the method's)")
    cluster.add_argument("--metric", choices=("euclidean", "abs_cosine"),
                         help="neighbour metric (kssc)")
    cluster.add_argument("--n-in-sample", type=int, metavar="M", help="in-sample points (sssc)")
    cluster.add_argument("--assign-labels", choices=("discretize", "kmeans", "njw"),
                         help="labels from the spectral embedding")
    cluster.add_argument("--random-state", type=int, default=0, metavar="SEED",
                         help="seed (default: 0)")
    cluster.add_argument("-o", "--output", type=Path, metavar="PATH.csv",
                         help="labels CSV (default: FILE with suffix .labels.csv)")
    cluster.add_argument("--save-z", type=Path, metavar="PATH.npz",
                         help="also save the representation matrix Z (scipy sparse .npz)")
    cluster.add_argument("--timings", type=Path, metavar="PATH.json",
                         help="also save the seconds per stage as JSON")
    cluster.add_argument("-v", "--verbose", action="store_true",
                         help="report each stage of the fit on stderr")
    return parser


def _estimator(args):
    estimator_class = _estimator_class(args.method)
    accepted = estimator_class().get_params()
    params = {"n_clusters": args.n_clusters, "random_state": args.random_state,
              "verbose": int(args.verbose)}
    for name, option in ESTIMATOR_OPTIONS.items():
        value = getattr(args, name)
        if value is None:
            continue
        if name not in accepted:
            raise CommandError(f"{option} does not apply to --method {args.method}.")
        params[name] = value
    return estimator_class(**{k: v for k, v in params.items() if k in accepted})


def _cluster(args):
    if args.save_z is not None and args.method == "sssc":
        raise CommandError("--save-z: sssc builds no representation matrix over all points.")
    model = _estimator(args)
    X = read_points(args.file)
    try:
        model.fit(X)
    except ValueError as error:
        raise CommandError(f"{args.file}: {error}") from error
    output = args.output or args.file.with_suffix(".labels.csv")
    np.savetxt(output, np.column_stack([np.arange(len(X)), model.labels_]), fmt="%d",
               delimiter=",", header="row,label", comments="")
    if args.save_z is not None:
        sp.save_npz(args.save_z, model.representation_matrix_.tocsr())
    if args.timings is not None:
        record = {"method": args.method, "n_samples": X.shape[0], "n_features": X.shape[1],
                  "n_clusters": model.n_clusters_, "seconds": model.timings_}
        args.timings.write_text(json.dumps(record, indent=2) + "\n")
    print(f"{args.method}: {X.shape[0]} points -> {model.n_clusters_} clusters in "
          f"{model.timings_['total']:.2f} s; labels in {output}", file=sys.stderr)


def main(argv=None):
    """Entry point of the ``kssc`` command; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        _cluster(args)
    except CommandError as error:
        parser.exit(2, f"kssc {args.command}: error: {error}\n")
    return 0
